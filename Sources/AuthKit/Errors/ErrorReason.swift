extension AuthKitError {
    /// What happened, as the package throws and switches on it: each case
    /// with its typed reason. Callers outside the package see ``Code`` and
    /// the fields of ``AuthKitError``; the cases here may change with the
    /// wording, the codes do not.
    package enum Reason: Sendable, Hashable, CustomStringConvertible {
        /// One or more problems in a provider descriptor or configuration file.
        case invalidFile([FileIssue])
        /// No descriptor with that id; `suggestions` are the nearest known ids.
        case unknownProvider(id: String, suggestions: [String])
        /// A required setting (client id, client secret, a host placeholder) has no value.
        case missingSetting(providerID: String, Setting)
        /// A setting's value cannot be used: a host placeholder whose value would
        /// not make a host (`me@gitlab.example.com`), or would end the host early
        /// and send the client's credentials to another one (`evil.example/` in
        /// `https://{team}.qiita.com`), where `problem` shows the value, which
        /// names a server and is no secret; a private key file that cannot be
        /// used (its path and why); a client secret too short for
        /// `client_secret_jwt` or given for another host (never shown).
        case invalidSetting(providerID: String, Setting, problem: String)
        /// The redirect URL did not answer this attempt.
        case redirect(RedirectError)
        /// The redirect URI cannot be used for this sign-in: the provider refuses its
        /// scheme, or the user agent cannot receive it (a loopback listener needs
        /// `http://127.0.0.1`). `uri` is shown without query or fragment.
        case unusableRedirectURI(uri: String, reason: String)
        /// The provider redirected back with `error` (RFC 6749 §4.1.2.1); `access_denied` means the user declined.
        case authorizationFailed(ProviderErrorResponse)
        /// An endpoint answered with an error (RFC 6749 §5.2, or a provider's own error body).
        case providerError(step: FlowStep, ProviderErrorResponse)
        /// An endpoint answered something that is neither a valid result nor a recognisable error.
        case invalidResponse(step: FlowStep, reason: ResponseProblem)
        /// The request did not complete (connection refused, timeout, TLS failure).
        case network(url: String, reason: NetworkFailure)
        /// The server answered with a redirect that was not followed: a
        /// token-endpoint call never follows one (it carries the client's
        /// credentials), and no request follows one from https to http.
        /// `location` is the target's origin only.
        case redirectNotFollowed(step: FlowStep, status: Int, location: String)
        /// The answer was larger than the request allows; reading stopped at the cap.
        case responseTooLarge(url: String, limit: Int)
        /// The request would carry a credential over plain http to a host that is
        /// not this machine (RFC 6749 §2.3.1, RFC 6750 §5.3 require TLS).
        case insecureTransport(url: String)
        /// The request would carry the credential outside the provider's API:
        /// to an origin its descriptor's `api.origins` does not list (a URL from
        /// an API answer, a mistyped host), or, for an origin with a placeholder,
        /// to one the credential was not issued at. `url` is the request's origin;
        /// `origins` are those the credential may go to.
        case outsideProviderAPI(url: String, providerID: String, origins: [String])
        /// A credential store could not be read or written; `path` says which file.
        case store(path: String, reason: StoreProblem)
        /// The credential can no longer be renewed: the user must sign in again.
        case signInRequired(CredentialKey, reason: SignInReason)
        /// The provider (as its descriptor describes it) offers no way to do this.
        case notSupported(providerID: String, Capability)
        /// The calling code used the API in a way it does not allow.
        case misuse(Misuse)
        /// The provider's ID token was refused (OpenID Connect Core §3.1.3.7):
        /// nothing was stored. `reason` says which check failed.
        case idTokenRejected(providerID: String, reason: IDTokenProblem)
        /// The user or the caller cancelled.
        case cancelled
        /// A loopback listener (AuthKitLoopback) could not bring back the provider's answer.
        case loopback(LoopbackProblem)
        /// A sandbox (AuthKitSandbox) could not start.
        case sandbox(SandboxProblem)
        /// A web sign-in request (AuthKitServer) was refused.
        case webSignIn(WebSignInProblem)
        /// Stored tokens cannot be sealed or opened (AuthKitPostgres).
        case encryption(EncryptionProblem)
    }

    /// A setting that ``missingSetting(providerID:_:)`` reports as absent.
    package enum Setting: Sendable, Hashable {
        /// ``ClientSettings/clientID`` (an OAuth 1.0a consumer key).
        case clientID
        /// ``ClientSettings/clientSecret`` (an OAuth 1.0a consumer secret).
        case clientSecret
        /// A host placeholder such as `{team}`, and the descriptor field using it.
        case placeholder(name: String, usedIn: String)
        /// ``ClientSettings/privateKeyFile``: the key `private_key_jwt` signs with.
        case privateKey
    }

    /// Why a credential cannot be renewed.
    package enum SignInReason: Sendable, Hashable {
        /// Nothing is stored under the key: there is no credential to use.
        case noCredential
        /// The provider issued no refresh token, and the descriptor names no other way to refresh.
        case noRefreshToken
        /// The provider refused the refresh (`invalid_grant`: revoked, expired or already used).
        case refreshRefused(ProviderErrorResponse)
        /// The protocol has no refresh (OAuth 1.0a tokens do not expire; one that stopped working was revoked).
        case protocolHasNoRefresh
        /// The descriptor now sends the credential to `origin`, where it was
        /// not issued (``Credential/endpointOrigins``): a changed or replaced descriptor.
        case endpointChanged(origin: String)
        /// The credential holds no verified identity (the sign-in did not ask
        /// for `openid`, or the descriptor had no `openid` part then), and the
        /// call needs one: UserInfo's answer is checked against it.
        case noVerifiedIdentity
    }

    /// Something a provider may not offer.
    package enum Capability: String, Sendable, Hashable {
        /// Revoking a token at the provider (RFC 7009, or the descriptor's own call).
        case revocation
        /// The device authorization grant (RFC 8628).
        case deviceGrant
        /// The authorization code grant (RFC 6749 §4.1): a device-only
        /// provider has no authorization endpoint to send a browser to.
        case authorizationCodeGrant
        /// OpenID Connect's UserInfo endpoint (Core §5.3).
        case userInfo
        /// Ending the user's session at the provider (OpenID Connect
        /// RP-Initiated Logout 1.0).
        case endSession
        /// Token introspection (RFC 7662).
        case introspection
        /// A token for the client itself (RFC 6749 §4.4), which OAuth 1.0a has no counterpart of.
        case clientCredentialsGrant
    }

    /// A programming error in the code calling AuthKit.
    package enum Misuse: Sendable, Hashable {
        /// The descriptor speaks another protocol than this client runs.
        case wrongProtocol(providerID: String, protocol: ProtocolKind, client: ProtocolKind)
        /// The credential was issued by another provider than this client's.
        case credentialOfAnotherProvider(credential: CredentialKey, providerID: String)
        /// The credential was issued under another protocol (no OAuth 1.0a token secret, or one where none belongs).
        case credentialOfAnotherProtocol(credential: CredentialKey, protocol: ProtocolKind)
        /// The pending attempt was started by another provider's client.
        case attemptOfAnotherProvider(attempt: String, providerID: String)
        /// The pending attempt was started by another client of the same
        /// provider: another client id, or another token endpoint (a
        /// placeholder such as `{host}` given another value).
        case attemptOfAnotherClient(providerID: String)
        /// A parameter AuthKit sets itself (`state`, `client_id`, `oauth_token`…) was passed as an extra.
        case reservedParameter(String)
        /// An authorization parameter AuthKit reads (`max_age`) has a value it cannot use.
        case invalidParameter(name: String, String)
        /// An option given in code (a struct's field) has a value it cannot take.
        case invalidOption(name: String, String)
        /// An issuer identifier given to discovery is not one (RFC 8414 §2:
        /// an https URL with no query or fragment; no user name or password).
        case invalidIssuer(String)
        /// A scope that is not one RFC 6749 §3.3 scope token: empty, holding a
        /// space (`"openid profile"`: pass each scope as an element of its
        /// own), or a control, non-ASCII, `"` or `\` character.
        case invalidScope(String)
        /// The user agent returned without building the authorization URL, or with a kind of answer the protocol does not use.
        case userAgentBrokeProtocol(String)
        /// The credential's token type is not one AuthKit can send (RFC 6750 defines `Bearer`).
        case unsupportedTokenType(String)
        /// A request AuthKit cannot authorize as given (no URL, a form body as a stream).
        case unsignableRequest(String)
    }
}

extension AuthKitError.Reason {
    /// True for `access_denied`: the user declined consent (and for
    /// `authorization_declined`, Microsoft's device flow's word for it).
    package var isAccessDenied: Bool {
        if case .authorizationFailed(let response) = self {
            return response.code == "access_denied" || response.code == "authorization_declined"
        }
        return false
    }

    /// Whether this is the provider's own answer to `step` (an error it
    /// reported, or an answer that is not one), not a failure to reach it.
    package func isProvidersAnswer(to step: FlowStep) -> Bool {
        switch self {
        case .providerError(let answered, _), .invalidResponse(let answered, _): return answered == step
        default: return false
        }
    }

    public var description: String {
        switch self {
        case .invalidFile(let issues):
            return issues.map(\.description).joined(separator: "\n")
        case .unknownProvider(let id, let suggestions):
            let tail =
                suggestions.isEmpty ? "" : " Did you mean \(suggestions.map { "'\($0)'" }.joined(separator: " or "))?"
            return "No provider named '\(DisplayText.sanitized(id, limit: 100))'.\(tail)"
        case .missingSetting(let providerID, let setting):
            return "\(providerID): no \(setting.name) is configured. \(setting.hint(providerID: providerID))"
        case .invalidSetting(let providerID, let setting, let problem):
            return "\(providerID): the \(setting.name) cannot be used: \(problem)"
        case .redirect(let error):
            return error.description
        case .unusableRedirectURI(let uri, let reason):
            return "The redirect URI \(DisplayText.sanitized(uri)) cannot be used: \(reason)"
        case .authorizationFailed(let response):
            if response.code == "access_denied" {
                return "Authorization was denied at the provider (\(response.summary)). Nothing was stored."
            }
            return "The provider refused the authorization request: \(response.summary)"
        case .providerError(let step, let response):
            // No status: no provider answered; AuthKit ended the step the
            // way the provider would have (a device code's lifetime, timed here).
            guard response.status != nil else { return "The \(step.rawValue) ended: \(response.summary)" }
            return "The \(step.rawValue) failed at the provider: \(response.summary)"
        case .invalidResponse(let step, let reason):
            return "The \(step.rawValue) returned an unusable response: \(reason)"
        case .network(let url, let reason):
            return "The request to \(url) failed: \(reason)"
        case .redirectNotFollowed(let step, let status, let location):
            let why =
                switch step {
                case .apiRequest:
                    "a redirect is followed with the credential only to an http or https URL, never from https to http, and not past the limit of redirects."
                case .discovery:
                    "server metadata is read at the issuer's own well-known URL (RFC 8414 §3), not where it redirects. Give the issuer as the server names itself (the \"issuer\" of its metadata)."
                default:
                    "AuthKit never resends client credentials, codes or tokens to where a redirect points. Check the endpoint URL in the provider's descriptor."
                }
            return
                "The \(step.rawValue) answered HTTP \(status), a redirect to \(DisplayText.sanitized(location, limit: 200)), which was not followed: "
                + why
        case .responseTooLarge(let url, let limit):
            return "The answer from \(url) is larger than the \(limit) bytes allowed; reading stopped there."
        case .insecureTransport(let url):
            return
                "\(url) is plain http on a host that is not this machine; a credential is sent only over https (RFC 6750 §5.3; RFC 5849 §3.4.4 for PLAINTEXT), or over http to a loopback address (127.0.0.1 or any of 127.0.0.0/8, [::1]) or localhost."
        case .outsideProviderAPI(let url, let providerID, let origins) where origins.isEmpty:
            return
                "\(DisplayText.sanitized(url, limit: 200)) is not where \(providerID)'s API lives for this credential: its API origins depend on where a "
                + "credential was issued, and this one records no such origin (one stored by an AuthKit that did not record them records none), so it is not sent there. "
                + "Sign in again to use it."
        case .outsideProviderAPI(let url, let providerID, let origins):
            return
                "\(DisplayText.sanitized(url, limit: 200)) is not where \(providerID)'s API lives for this credential "
                + "(\(origins.map { DisplayText.sanitized($0, limit: 200) }.joined(separator: ", "))), so it is not sent there. "
                + "Check the URL, and any placeholder value given (an origin with one is allowed where the credential was issued); "
                + "if the API is there too, list that origin in the descriptor's api.origins."
        case .store(let path, let reason):
            return "Credential store \(path): \(reason)"
        case .signInRequired(_, let reason):
            return summary + (reason == .noCredential ? " Sign in first." : " Sign in again.")
        case .notSupported(let providerID, let capability):
            switch capability {
            case .revocation:
                return
                    "The \(providerID) descriptor names no way to revoke a token; delete the credential locally, and revoke the app's access in the provider's settings."
            case .deviceGrant:
                return summary + " Sign in through a browser, or paste the redirect (manualUserAgent())."
            case .authorizationCodeGrant:
                return summary + " Use the device grant (authorizeWithDeviceCode)."
            case .userInfo, .endSession:
                return summary + " Add it to the descriptor's openid part if the provider has one."
            case .introspection:
                return summary + " Add it to the descriptor (introspection) if the provider has one."
            case .clientCredentialsGrant:
                return summary
            }
        case .misuse(let misuse):
            return misuse.description
        case .idTokenRejected:
            return summary + " Nothing was stored. If the provider's keys or issuer changed, check its descriptor."
        case .cancelled:
            return "Cancelled."
        case .loopback(let problem): return problem.description
        case .sandbox(let problem): return problem.description
        case .webSignIn(let problem): return problem.description
        case .encryption(let problem): return problem.description
        }
    }
}

extension AuthKitError {
    /// Whether `error` is a cancellation, Swift's or AuthKit's: the
    /// transports throw ``cancelled`` for a cancelled task, and code that
    /// lets a cancelled caller go must recognise both.
    package static func isCancellation(_ error: any Error) -> Bool {
        if error is CancellationError { return true }
        if case .cancelled? = error.authKitReason { return true }
        return false
    }
}

extension AuthKitError.Reason {

    /// What went wrong, without the closing advice that ``description``
    /// words in the library's terms: a front end adds its own (the command
    /// line names the command that signs in, or its flags). The same as
    /// ``description`` for the cases that carry no such advice.
    package var summary: String {
        switch self {
        case .signInRequired(let key, let reason):
            switch reason {
            case .noCredential:
                return "No stored credential for \(key)."
            case .noRefreshToken:
                return "\(key) cannot be refreshed: the provider issued no refresh token."
            case .refreshRefused(let response):
                return "\(key) cannot be refreshed: the provider refused (\(response.summary))."
            case .protocolHasNoRefresh:
                return
                    "\(key) uses OAuth 1.0a, whose tokens do not expire and cannot be refreshed; if it stopped working, it was revoked."
            case .noVerifiedIdentity:
                return
                    "\(key) holds no verified identity: its sign-in did not ask for the openid scope (or the provider's descriptor had no openid part then)."
            case .endpointChanged(let origin):
                return
                    "\(key) was not issued by \(DisplayText.sanitized(origin, limit: 200)), where the provider's descriptor now sends it (a changed or replaced descriptor; or a sandbox other than the one that issued it, as each run of one keeps its grants in memory only), so it was not sent."
            }
        case .notSupported(let providerID, let capability):
            switch capability {
            case .revocation:
                return description
            case .deviceGrant:
                return
                    "The \(providerID) descriptor names no device authorization endpoint (RFC 8628), so there is no sign-in by code."
            case .authorizationCodeGrant:
                return
                    "The \(providerID) descriptor names no authorization endpoint: it signs in only with the device grant (RFC 8628)."
            case .userInfo:
                return "The \(providerID) descriptor names no UserInfo endpoint (openid.userInfo)."
            case .endSession:
                return "The \(providerID) descriptor names no end-session endpoint (openid.endSession)."
            case .introspection:
                return "The \(providerID) descriptor names no token introspection endpoint (introspection, RFC 7662)."
            case .clientCredentialsGrant:
                return "\(providerID) speaks OAuth 1.0a, which has no client credentials grant (RFC 6749 §4.4)."
            }
        case .idTokenRejected(let providerID, let reason):
            return "The \(providerID) ID token was refused: \(reason)."
        default:
            return description
        }
    }
}

extension AuthKitError.Setting {
    /// "client id", "value for {team} (used in token.url)".
    package var name: String {
        switch self {
        case .clientID: return "client id"
        case .clientSecret: return "client secret"
        case .placeholder(let name, let field): return "value for {\(name)} (used in \(field))"
        case .privateKey: return "private key file"
        }
    }

    /// Every way the library reads this setting: ``ClientSettings``, the
    /// environment variable, `config.json`.
    func hint(providerID: String) -> String {
        "Set it in ClientSettings, or \(environmentVariable(providerID: providerID)), or \(configEntry(providerID: providerID)) in config.json."
    }

    /// The environment variable that holds it: `AUTHKIT_QIITA_CLIENT_ID`.
    package func environmentVariable(providerID: String) -> String {
        switch self {
        case .clientID: return ClientSettings.environmentPrefix(for: providerID) + "_CLIENT_ID"
        case .clientSecret: return ClientSettings.environmentPrefix(for: providerID) + "_CLIENT_SECRET"
        case .placeholder(let name, _): return ClientSettings.placeholderVariable(providerID: providerID, name: name)
        case .privateKey: return ClientSettings.environmentPrefix(for: providerID) + "_PRIVATE_KEY_FILE"
        }
    }

    /// Where it goes in `config.json`: `"clientID" under "providers"."qiita"`.
    package func configEntry(providerID: String) -> String {
        let key: String
        switch self {
        case .clientID: key = #""clientID""#
        case .clientSecret: key = #""clientSecret""#
        case .placeholder(let name, _): key = #""placeholders": {""# + name + #"": "…"}"#
        case .privateKey: key = #""privateKeyFile""#
        }
        return key + #" under "providers".""# + providerID + #"""#
    }
}

extension AuthKitError.Misuse: CustomStringConvertible {
    public var description: String {
        switch self {
        case .wrongProtocol(let providerID, let kind, let client):
            return "\(providerID) is an \(kind.rawValue) provider; this client runs \(client.rawValue) providers only."
        case .credentialOfAnotherProvider(let credential, let providerID):
            return "The credential \(credential) belongs to another provider; it cannot be used with \(providerID)."
        case .credentialOfAnotherProtocol(let credential, let kind):
            return
                "The credential \(credential) was not issued by \(kind.rawValue); use the authenticator that issued it."
        case .attemptOfAnotherProvider(let attempt, let providerID):
            return "This attempt was started with '\(attempt)', not '\(providerID)'."
        case .attemptOfAnotherClient(let providerID):
            return
                "This attempt was started by another client of '\(providerID)' (another client id or consumer key, or another server or token endpoint); finish it with the client that started it."
        case .reservedParameter(let name):
            return
                "The authorization parameter '\(DisplayText.sanitized(name, limit: 100))' is set by AuthKit and cannot be overridden."
        case .invalidParameter(let name, let problem):
            return "The authorization parameter '\(name)' \(problem)."
        case .invalidOption(let name, let problem):
            return "\(name) \(problem)."
        case .invalidIssuer(let problem):
            return "The issuer \(problem)."
        case .invalidScope(let scope):
            return ScopeToken.problem(scope).map { "The scope list " + ScopeToken.describe($0, scope) }
                ?? "'\(DisplayText.sanitized(scope, limit: 80))' is not a scope."
        case .userAgentBrokeProtocol(let detail):
            return "The user agent did not follow the protocol: \(detail)"
        case .unsupportedTokenType(let type):
            return
                "Token type '\(DisplayText.sanitized(type, limit: 100))' is not supported; AuthKit sends Bearer tokens (RFC 6750). "
                + "If the provider's tokens are used as Bearer tokens whatever their type says, set token.response.assumeBearer "
                + "to true in its descriptor and sign in again."
        case .unsignableRequest(let detail):
            return "The request cannot be authorized: \(detail)"
        }
    }
}

/// The step of an authorization flow an error came from, so a message can say
/// "the token exchange failed" rather than just "failed".
package enum FlowStep: String, Sendable, Hashable, Codable {
    case authorization = "authorization"
    case tokenExchange = "token exchange"
    case followUpExchange = "follow-up token exchange"
    case refresh = "token refresh"
    case revocation = "token revocation"
    case requestToken = "request token"
    case accessToken = "access token"
    case apiRequest = "API request"
    /// RFC 8628 §3.1: asking for a device code.
    case deviceAuthorization = "device authorization"
    /// RFC 8628 §3.4: polling for the token.
    case devicePolling = "device token request"
    /// RFC 8414 §3: reading an authorization server's metadata.
    case discovery = "server metadata request"
    /// RFC 7517 §5, OpenID Connect Core §10.1: reading the provider's signing keys.
    case keySet = "signing key set request"
    /// OpenID Connect Core §5.3: asking the provider about the signed-in user.
    case userInfo = "UserInfo request"
    /// RFC 9126 §2: posting the authorization request's parameters first.
    case pushedAuthorization = "pushed authorization request"
    /// RFC 6749 §4.4: a token for the client itself.
    case clientCredentials = "client credentials grant"
    /// RFC 8693 §2: trading one token for another.
    case securityTokenExchange = "security token exchange"
    /// RFC 7662 §2: asking whether a token is active.
    case introspection = "token introspection"
}
