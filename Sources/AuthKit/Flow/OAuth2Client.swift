import HTTPTypes
import Logging

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The OAuth 2.0 authorization code flow (RFC 6749 §4.1) for any provider a
/// ``ProviderDescriptor`` describes.
///
/// Two ways to use it:
/// - All in one: ``authorize(using:options:)`` with a ``UserAgent`` (CLI, desktop app).
/// - In two requests, for a web backend: ``startAuthorization(redirectURI:scopes:additionalParameters:)``
///   gives the URL to redirect to and a ``PendingAuthorization`` to keep in the
///   session store; when the browser returns, ``exchange(redirect:pending:label:)``
///   checks the answer and returns the ``Credential``.
///
/// Everything provider-specific comes from the descriptor; nothing here names a
/// provider. The token-endpoint requests themselves are built in `TokenEndpointCalls`.
public struct OAuth2Client: Authenticator {
    public var descriptor: ProviderDescriptor { client.descriptor }
    public var settings: ClientSettings { client.settings }
    public var clientID: String { client.clientID }
    /// The descriptor and settings, and what follows from them, resolved once.
    let client: ResolvedClient
    let calls: TokenEndpointCalls
    private let now: @Sendable () -> Date
    /// How the device grant waits between polls; tests replace it to check
    /// the timing rules without waiting.
    package var deviceSleep: @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }

    /// `httpClient` sends every request; `nil` is the platform's default
    /// (``CurlHTTPClient`` on Linux, ``URLSessionHTTPClient`` elsewhere).
    /// - Throws: ``AuthKitError/Code/missingSetting`` when the client
    ///   id or a placeholder value is missing;
    ///   ``AuthKitError/Code/invalidSetting`` for a
    ///   placeholder value that would not make a host, or a client secret
    ///   too short to sign the `client_secret_jwt` assertions the descriptor
    ///   asks for (RFC 7518 §3.2: at least 32 bytes);
    ///   ``AuthKitError/Code/unusableRedirectURI`` for a configured
    ///   redirect URI that cannot be one; ``AuthKitError/Code/misuse``
    ///   for a descriptor that is not OAuth 2.0.
    public init(
        descriptor: ProviderDescriptor,
        settings: ClientSettings,
        httpClient: (any HTTPClient)? = nil,
        logger: Logger = Logger(label: "authkit.oauth2"),
        now: @escaping @Sendable () -> Date = { Date() }
    ) throws {
        let client = try ResolvedClient(descriptor: descriptor, settings: settings)
        self.client = client
        self.now = now
        self.calls = TokenEndpointCalls(
            client: client, transport: FlowTransport(http: httpClient ?? defaultHTTPClient(), logger: logger), now: now)
    }

    // MARK: - Step 1: the authorization request

    /// Parameters AuthKit sets itself; callers cannot override them.
    static let reservedParameters: Set<String> = [
        "response_type", "client_id", "redirect_uri", "scope", "state", "code_challenge", "code_challenge_method",
        "client_secret", "nonce", "request_uri", "dpop_jkt",
        // A signed request object (RFC 9101 §6.3): a server that takes it
        // uses only its values, `state`, `redirect_uri` and the PKCE
        // challenge among them, so it would replace all of the above.
        "request",
    ]

    /// What is wrong with asking for `mode` as the `response_mode`: AuthKit
    /// reads the code from the redirect's query (RFC 6749 §4.1.2), where
    /// `fragment` or `form_post` (OAuth 2.0 Multiple Response Types §2.1,
    /// Form Post Response Mode §2) do not put it.
    static func responseModeProblem(_ mode: String) -> String {
        "is '\(DisplayText.sanitized(mode, limit: 40))', which returns the code where AuthKit does not read it (it reads the redirect's query, RFC 6749 §4.1.2)"
    }

    /// Builds the authorization URL (RFC 6749 §4.1.1) and the attempt to keep until the redirect.
    ///
    /// A fresh 256-bit `state` and, where the descriptor allows, a PKCE S256
    /// challenge (RFC 7636 §4.3) are generated per call. Values are
    /// percent-encoded so `+`, `&`, `=`, spaces and non-ASCII survive any form
    /// decoder. The client secret is never part of the URL.
    ///
    /// Where the descriptor names a pushed authorization request endpoint
    /// (RFC 9126), the parameters are posted there first (the client
    /// authenticating as at the token endpoint), and the URL carries only
    /// `client_id` and the `request_uri` the server answered: nothing the
    /// browser, its history or an extension could read or change. Where it
    /// binds tokens to a key (DPoP, RFC 9449), the attempt's key is made here
    /// and named by `dpop_jkt` (§10), binding the code to it.
    /// - Throws: ``AuthKitError/Code/notSupported`` for a device-only
    ///   provider (no `authorization` endpoint);
    ///   ``AuthKitError/Code/misuse`` for a scope that is not one
    ///   scope token (``checkScopes(_:)``).
    ///
    /// A client without the secret may start a sign-in that a provider
    /// without public clients (`token.requiresClientSecret`) finishes only
    /// with it: an app whose backend, holding the secret, exchanges the code.
    /// ``exchange(code:pending:label:)`` and ``authorize(using:options:)``
    /// are what refuse to go on without it.
    /// Whether a sign-in with `scopes` (the configured ones when `nil`)
    /// binds its authorization code to its attempt, as
    /// ``startAuthorization(redirectURI:scopes:additionalParameters:)``
    /// decides: PKCE, or an OpenID Connect nonce (RFC 9700 §2.1.1, §4.5).
    /// Known before any request (a pushed authorization request's too).
    package func bindsCode(scopes: [String]? = nil) -> Bool {
        if descriptor.pkce.isEnabled || !client.isConfidential { return true }
        return asksForIDToken(scopes: scopes ?? settings.scopes ?? descriptor.scopes.default)
    }

    /// Whether a sign-in with `scopes` asks for an ID token, with a nonce
    /// (OpenID Connect Core §3.1.2.1): the descriptor says how to verify
    /// one, and `openid` is among the scopes. One rule for the nonce
    /// ``startAuthorization(redirectURI:scopes:additionalParameters:)``
    /// sends and for what ``bindsCode(scopes:)`` and
    /// ``saysWhoSignsIn(scopes:)`` know before it.
    private func asksForIDToken(scopes: [String]) -> Bool {
        client.openID != nil && scopes.contains("openid")
    }

    /// Whether a sign-in with `scopes` (the configured ones by default)
    /// says who signed in: an ID token asked for (OpenID Connect, the
    /// `openid` scope), or the descriptor's `whoAmI` call. A web sign-in
    /// needs one, and knows before it sends the user to the provider.
    package func saysWhoSignsIn(scopes: [String]? = nil) -> Bool {
        descriptor.whoAmI != nil || asksForIDToken(scopes: scopes ?? settings.scopes ?? descriptor.scopes.default)
    }

    public func startAuthorization(
        redirectURI: URL? = nil, scopes: [String]? = nil, additionalParameters: [String: String] = [:]
    ) async throws -> (url: URL, pending: PendingAuthorization) {
        let (authorization, authorizationPrefix) = try authorizationEndpoint()
        for name in additionalParameters.keys
        where Self.reservedParameters.contains(name) || name == authorization.scopeParameter {
            throw AuthKitError.misuse(.reservedParameter(name))
        }
        if let mode = additionalParameters["response_mode"], mode != "query" {
            throw AuthKitError.misuse(
                .invalidParameter(
                    name: "response_mode", Self.responseModeProblem(mode) + "; leave it out, or pass 'query'"))
        }
        let redirect = redirectURI ?? client.standardRedirect
        try checkRedirectScheme(redirect)
        try calls.checkExchangeAuthentication()
        let redirectURI = redirect.absoluteString
        let scopes = try Self.checkScopes(scopes ?? settings.scopes ?? descriptor.scopes.default)
        let state = SecureRandom.token()
        // A public client (no secret) always uses PKCE: nothing else binds the
        // code to it (RFC 8252 §8.1, RFC 9700 §2.1.1).
        let pkce = descriptor.pkce.isEnabled || !client.isConfidential ? PKCE() : nil
        let proofKey = descriptor.dpop == .on ? ProofKey() : nil
        // OpenID Connect Core §3.1.2.1: a nonce binds the ID token to this
        // attempt, when the provider's descriptor says how to verify one.
        let nonce = asksForIDToken(scopes: scopes) ? SecureRandom.token() : nil
        // §3.1.2.1: max_age asks the provider to make the user sign in again
        // if their session is older; the ID token's auth_time shows it did.
        // The descriptor's own `max_age` counts as the caller's does: sent,
        // it was never checked against `auth_time` (Core §3.1.3.7 step 13).
        var maxAge: Int?
        if let text = additionalParameters["max_age"] ?? authorization.parameters["max_age"] {
            guard let seconds = Int(text), seconds >= 0, String(seconds) == text else {
                throw AuthKitError.misuse(
                    .invalidParameter(
                        name: "max_age", "is '\(DisplayText.sanitized(text, limit: 40))', not a number of seconds"))
            }
            maxAge = nonce == nil ? nil : seconds
        }

        var pairs = [(String, String)]()
        if authorization.sendResponseType { pairs.append(("response_type", "code")) }
        pairs.append(("client_id", clientID))
        if authorization.sendRedirectURI { pairs.append(("redirect_uri", redirectURI)) }
        if !scopes.isEmpty {
            pairs.append((authorization.scopeParameter, scopes.joined(separator: descriptor.scopes.separator)))
        }
        pairs.append(("state", state))
        if let nonce { pairs.append(("nonce", nonce)) }
        if let pkce {
            pairs.append(("code_challenge", pkce.challenge))
            pairs.append(("code_challenge_method", pkce.method))
        }
        if let proofKey { pairs.append(("dpop_jkt", proofKey.thumbprint)) }
        // A parameter the caller gives replaces the descriptor's: both were
        // sent, and the provider honoured one that may not be the one checked.
        for (name, value) in authorization.parameters.sorted(by: { $0.key < $1.key })
        where !Self.reservedParameters.contains(name) && name != authorization.scopeParameter
            && additionalParameters[name] == nil
        {
            pairs.append((name, value))
        }
        for (name, value) in additionalParameters.sorted(by: { $0.key < $1.key }) {
            pairs.append((name, value))
        }
        if let pushedRequestURL = client.pushedRequestURL {
            let requestURI = try await calls.pushAuthorizationRequest(pairs, to: pushedRequestURL)
            pairs = [("client_id", clientID), ("request_uri", requestURI)]
        }
        guard let url = URL(string: authorizationPrefix + FormURLEncoding.encode(pairs)) else {
            throw AuthKitError.invalidFile([
                FileIssue(
                    file: descriptor.source, field: "authorization.url",
                    problem: "is not a URL a query can be added to.")
            ])
        }
        let pending = PendingAuthorization(
            providerID: descriptor.id, state: state, codeVerifier: pkce?.verifier, redirectURI: redirectURI,
            expectedIssuer: client.redirectIssuer,
            // An "any tenant" endpoint's `iss` is required as an exact one's
            // is (RFC 9207 §2.4): compared to its pattern, not to be left out.
            issuerRequired: (client.redirectIssuer != nil || client.redirectIssuerPattern != nil)
                && descriptor.issuer?.includedInResponse == true,
            scopes: scopes, createdAt: now(), nonce: nonce, maxAge: maxAge)
        var attempt = pending
        attempt.proofKey = proofKey
        (attempt.clientID, attempt.tokenEndpoint) = (client.clientID, client.tokenURL)
        (attempt.issuerPrefix, attempt.issuerSuffix) = (
            client.redirectIssuerPattern?.prefix, client.redirectIssuerPattern?.suffix
        )
        return (url, attempt)
    }

    /// Refuses an attempt another client started: another provider's, or
    /// another client id or token endpoint of this one's (compared byte for
    /// byte), before the redirect is read or the code sent anywhere.
    private func checkAttempt(_ pending: PendingAuthorization) throws {
        try checkAttempt(
            startedBy: pending.providerID, clientID: pending.clientID, tokenEndpoint: pending.tokenEndpoint)
    }

    /// The check of an attempt's recorded provider, client id and token
    /// endpoint, shared by the redirect and the device grant. An attempt
    /// kept by an older version records no client: only its provider is
    /// compared.
    private func checkAttempt(startedBy providerID: String, clientID: String?, tokenEndpoint: String?) throws {
        try checkAttempt(startedBy: providerID)
        let sameClient = clientID.map { ExactText.same($0, client.clientID) } ?? true
        let sameEndpoint = tokenEndpoint.map { ExactText.same($0, client.tokenURL) } ?? true
        guard sameClient, sameEndpoint else {
            throw AuthKitError.misuse(.attemptOfAnotherClient(providerID: descriptor.id))
        }
    }

    /// Each scope must be one scope token (RFC 6749 §3.3), as AuthKit joins
    /// them with the descriptor's separator: `"openid profile"` as one element
    /// is two scopes to a provider that separates with spaces but one unknown
    /// scope to one that separates with commas, and a control character (a
    /// line break read from a file) is refused by the provider only after
    /// the user has approved. Caught here, before the browser opens.
    private static func checkScopes(_ scopes: [String]) throws -> [String] {
        if let bad = scopes.first(where: { ScopeToken.problem($0) != nil }) {
            throw AuthKitError.misuse(.invalidScope(bad))
        }
        return scopes
    }

    /// The authorization endpoint, or the error that names the device grant
    /// as this provider's way in.
    private func authorizationEndpoint() throws -> (endpoint: AuthorizationEndpoint, prefix: String) {
        guard let authorization = client.authorization else {
            throw AuthKitError.notSupported(providerID: descriptor.id, .authorizationCodeGrant)
        }
        return authorization
    }

    // MARK: - Step 2: the redirect and the token request

    /// Checks `redirect` against `pending` and returns the authorization code.
    /// See `RedirectParser` for the checks and their order.
    public func authorizationCode(from redirect: URL, pending: PendingAuthorization) throws -> String {
        try redirectAnswer(redirect, pending: pending).code
    }

    /// The redirect's code and parameters, once `RedirectParser` has checked it against `pending`.
    private func redirectAnswer(_ redirect: URL, pending: PendingAuthorization) throws -> (
        code: String, parameters: [String: String]
    ) {
        try checkAttempt(pending)
        // The provider's error_description may repeat the client secret (a
        // debug page echoing its configuration): masked, as the token
        // endpoint's errors are.
        do {
            return try RedirectParser(appendedFragment: descriptor.redirect.appendedFragment).answer(
                from: redirect.absoluteString, for: pending)
        } catch let error as AuthKitError {
            throw SecretMask([client.clientSecret ?? ""]).apply(error)
        }
    }

    /// Checks the redirect, then exchanges its code for a credential. Where
    /// the provider names the scopes the user granted in the redirect, not
    /// in its token answer (`authorization.grantedScopesParameter`,
    /// Strava's), the credential records those rather than the requested ones.
    public func exchange(redirect: URL, pending: PendingAuthorization, label: String? = nil) async throws -> Credential
    {
        let (code, parameters) = try redirectAnswer(redirect, pending: pending)
        let granted = descriptor.authorization?.grantedScopesParameter.flatMap { parameters[$0] }.flatMap(grantedScopes)
        return try await exchange(code: code, pending: pending, label: label, grantedScopes: granted)
    }

    /// The scopes a redirect says were granted, split as token answers are
    /// (spaces, commas, the descriptor's separator); nil when any of them is
    /// not a scope token (RFC 6749 §3.3), as the redirect passed through the browser.
    func grantedScopes(_ text: String) -> [String]? {
        let separators = Set(descriptor.scopes.separator + " ,")
        let scopes = text.split(whereSeparator: { separators.contains($0) }).map(String.init)
        return scopes.isEmpty || scopes.contains(where: { ScopeToken.problem($0) != nil }) ? nil : scopes
    }

    /// Exchanges an authorization code (RFC 6749 §4.1.3) and runs the
    /// descriptor's follow-up exchange, if any.
    /// - Throws: ``AuthKitError/Code/missingSetting`` (`.clientSecret`)
    ///   before sending, when the provider has no public clients
    ///   (`token.requiresClientSecret`) and the settings hold no secret.
    public func exchange(code: String, pending: PendingAuthorization, label: String? = nil) async throws -> Credential {
        try await exchange(code: code, pending: pending, label: label, grantedScopes: nil)
    }

    private func exchange(code: String, pending: PendingAuthorization, label: String?, grantedScopes: [String]?)
        async throws -> Credential
    {
        try checkAttempt(pending)
        try checkClientSecret(requiredBy: client.token.requiresClientSecret)
        return try await calls.exchange(code: code, pending: pending, label: label, grantedScopes: grantedScopes)
    }

    // MARK: - Refresh and revocation

    /// Refreshes `credential` (RFC 6749 §6), or runs the descriptor's own
    /// refresh call. Concurrent calls for one credential share one request,
    /// across every client of the process for the same token endpoint and
    /// client id (``RefreshCoordinator``).
    /// Save the result before using it (a rotated refresh token that is not
    /// saved is lost): ``CredentialSource`` does, and shares the refresh
    /// across processes too.
    /// - Throws: ``AuthKitError/Code/signInRequired`` when there is no
    ///   refresh token, or the provider refuses it (`invalid_grant`).
    public func refresh(_ credential: Credential) async throws -> Credential {
        try checkCredential(credential)
        if descriptor.refresh == nil { try checkClientSecret(requiredBy: client.token.refreshRequiresClientSecret) }
        let refreshed: Credential
        do {
            refreshed = try await RefreshCoordinator.shared.refresh(
                credential, tokenEndpoint: client.tokenURL, clientID: client.clientID
            ) { [calls] in
                var refreshed: Credential
                if credential.grantType == "client_credentials", credential.refreshToken == nil {
                    // RFC 6749 §4.4.3: no refresh token; the client asks again.
                    let parameters = (credential.grantParameters ?? []).compactMap { pair in
                        pair.count == 2 ? (pair[0], pair[1]) : nil
                    }
                    return try await calls.clientCredentials(
                        scopes: credential.scopes, parameters: parameters, label: credential.label,
                        previous: credential)
                } else if let template = client.descriptor.refresh {
                    refreshed = try await calls.run(template, step: .refresh, for: credential)
                } else {
                    guard let refreshToken = credential.refreshToken else {
                        throw AuthKitError.signInRequired(credential.key, reason: .noRefreshToken)
                    }
                    refreshed = try await calls.refreshAtTokenEndpoint(credential, refreshToken: refreshToken)
                }
                calls.warnIfUnusable(refreshed, refreshedFrom: credential)
                // A credential with no identity yet (a device sign-in whose
                // answer had no ID token) has a refresh's new one verified
                // too: it was stored unchecked, later sent as id_token_hint.
                if credential.identity != nil || client.openID != nil {
                    refreshed.identity = try await calls.refreshedIdentity(
                        of: &refreshed, previous: credential.identity, before: credential)
                }
                return refreshed
            }
        } catch let error as AuthKitError {
            guard case .providerError(.refresh, let response) = error.reason,
                client.token.refreshRefusedErrors.contains(where: { ExactText.same($0, response.code) })
            else { throw error }
            // RFC 6749 §5.2: the refresh token is invalid, expired or revoked
            // (`invalid_grant`, or the descriptor's own code for it).
            throw AuthKitError.signInRequired(credential.key, reason: .refreshRefused(response))
        }
        return refreshed
    }

    /// Revokes the credential, per the descriptor's `revocation`.
    ///
    /// By default (RFC 7009 §2.1), the refresh token first, when there is
    /// one, then the access token. Revoking the access token alone left the
    /// refresh token valid at the provider (a server answers 200 for a token
    /// it no longer knows, such as an expired access token), so a "signed
    /// out" credential could still be renewed by whoever held a copy.
    ///
    /// Once the refresh token is revoked, the grant's access tokens end with
    /// it where the server can revoke them (§2.1), so a refusal of the second
    /// call (a server that answers an error for the now dead access token)
    /// is logged, not thrown. A refused first call still lets the second
    /// try, then throws the first call's error: the refresh token stands.
    /// A descriptor whose `revocation` names its own parameters gets exactly that call.
    /// - Throws: ``AuthKitError/Code/notSupported`` when the descriptor names no revocation.
    public func revoke(_ credential: Credential) async throws {
        try checkCredential(credential)
        guard let template = descriptor.revocation else {
            throw AuthKitError.notSupported(providerID: descriptor.id, .revocation)
        }
        // A late caller with the refresh token this one replaced gets the
        // provider's answer, not the revoked credential.
        RefreshCoordinator.shared.forgetAnswers(holding: credential)
        guard template.isRFC7009Revocation, credential.refreshToken != nil else {
            return try await calls.revoke(credential, using: template)
        }
        var refreshRefusal: (any Error)?
        do {
            try await calls.revoke(credential, using: template.revokingRefreshToken)
        } catch AuthKitError.Code.cancelled {
            throw AuthKitError.cancelled
        } catch {
            refreshRefusal = error
        }
        do {
            try await calls.revoke(credential, using: template)
        } catch let error as AuthKitError where refreshRefusal == nil && error.isProvidersAnswer(to: .revocation) {
            calls.transport.logger.warning(
                "\(descriptor.name) revoked the refresh token, then refused the access token's revocation (\(error)); the grant's access tokens end with its refresh token (RFC 7009 §2.1)."
            )
        }
        if let refreshRefusal { throw refreshRefusal }
    }

    // MARK: - Using the credential

    /// Adds `Authorization: Bearer …` (RFC 6750 §2.1). The token is never put in
    /// the query (RFC 6750 §2.3 is "NOT RECOMMENDED"; RFC 9700 §2.4 forbids it).
    /// The body is not read: a bearer token does not cover it.
    public func authorize(_ request: HTTPRequest, body: Data?, with credential: Credential) throws -> HTTPRequest {
        try Self.bearerAuthorized(request, with: credential, descriptor: descriptor)
    }

    /// `request` with `credential` attached: a Bearer header (RFC 6750
    /// §2.1), or for a DPoP-bound credential (RFC 9449 §7.1) `Authorization:
    /// DPoP …` and a fresh proof for this method and URL, with the latest
    /// nonce its server handed out. Send it at once: a proof is good for one
    /// request (servers refuse one they have seen, and an old `iat`).
    /// ``CredentialSource/send(_:body:followRedirects:maximumBodySize:deadline:)``
    /// does this, and answers a server's `use_dpop_nonce`.
    /// - Parameter dpopNonce: the `DPoP-Nonce` a resource server sent with its
    ///   `use_dpop_nonce` (RFC 9449 §9), for a caller that sends the request
    ///   itself: it goes in this proof and, for its origin, in later ones of
    ///   this process. Ignored for a Bearer credential.
    /// - Throws: ``AuthKitError/Code/misuse`` for a nonce that is not one (§8.1:
    ///   printable ASCII without `"` or `\`, here at most 1,024 bytes).
    public func authorize(
        _ request: HTTPRequest, with credential: Credential, dpopNonce: String? = nil
    ) async throws -> HTTPRequest {
        guard let key = credential.proofKey else {
            return try Self.bearerAuthorized(request, with: credential, descriptor: descriptor)
        }
        guard let url = request.url else {
            throw AuthKitError.misuse(.unsignableRequest("it has no absolute URL."))
        }
        if let dpopNonce {
            guard DPoPNonces.isNonce(dpopNonce) else {
                throw AuthKitError.misuse(
                    .unsignableRequest(
                        "its DPoP nonce is not one (RFC 9449 §8.1: printable ASCII without spaces, quotes or backslashes)."
                    ))
            }
            var fields = HTTPFields()
            fields[DPoPProof.nonceHeaderName] = dpopNonce
            DPoPNonces.shared.remember(fields, for: url.origin, from: .resource)
        }
        return try await DPoPProof.authorized(request, url: url, token: credential, key: key, descriptor: descriptor)
    }

    /// `request` with `credential`'s Bearer header (RFC 6750 §2.1), which
    /// needs no client setting: a caller that cannot build the client (no
    /// client id configured) can still send a stored token.
    package static func bearerAuthorized(
        _ request: HTTPRequest, with credential: Credential, descriptor: ProviderDescriptor
    ) throws -> HTTPRequest {
        try checkCredential(credential, providerID: descriptor.id)
        // RFC 6750 §5.3: a bearer token travels only over TLS (or to this
        // machine); a header made for plain http would send it in the clear.
        // https needs no URL built (swift-http-types rebuilds it at each read).
        if request.scheme?.lowercased() != "https", let url = request.url, !url.allowsCredentials {
            throw AuthKitError.insecureTransport(url: url.redactedForLogs)
        }
        if credential.proofKey != nil {
            throw AuthKitError.misuse(
                .unsignableRequest(
                    "\(credential.key) is DPoP-bound (RFC 9449): each request needs a proof of its own. Send it with CredentialSource.send, or attach it to an HTTPRequest with the async OAuth2Client.authorize(_:with:dpopNonce:) (a URLRequest cannot carry one)."
                ))
        }
        guard credential.isBearer else {
            throw AuthKitError.misuse(.unsupportedTokenType(credential.tokenType))
        }

        // A sign-in refuses such a token (TokenResponseParser); one that
        // reached the credential otherwise (a store edited by hand, a
        // credential made in code) had its NUL, CR and LF turned into spaces
        // by the header field, and was sent as another token.
        guard TokenResponseParser.isSendableAsBearer(credential.accessToken) else {
            throw AuthKitError.misuse(
                .unsignableRequest(
                    """
                    the access token of \(credential.key) is empty or holds a character a Bearer header cannot carry (a control or non-ASCII \
                    character, a space, '"', ',' or '\\'; RFC 6750 §2.1), so it was not sent. Sign in again to replace it.
                    """))
        }
        var request = request
        request.headerFields[.authorization] = "Bearer \(credential.accessToken)"
        return request
    }

    /// A provider without public clients (the descriptor's
    /// `requiresClientSecret`) refuses the grant without the secret; it is
    /// refused here first, before the user approves in vain or a device code
    /// is shown.
    private func checkClientSecret(requiredBy required: Bool) throws {
        if required && !client.isConfidential {
            throw AuthKitError.missingSetting(providerID: descriptor.id, .clientSecret)
        }
    }

    // MARK: - Grants for machines

    /// The access token type of RFC 8693 §3, the usual `subjectTokenType`.
    public static let accessTokenType = "urn:ietf:params:oauth:token-type:access_token"

    /// Trades a token for another (RFC 8693, token exchange): a service
    /// that received a user's token asks for one for the next service
    /// (`audience`, `resources`) or with fewer `scopes`. The client
    /// authenticates as at the token endpoint.
    /// - Parameters:
    ///   - subjectToken: the token to trade, usually a credential's ``Credential/accessToken``.
    ///   - actorToken: the token of the party acting for the subject (§2.1), with its type.
    public func exchangeToken(
        _ subjectToken: String, subjectTokenType: String = accessTokenType, audience: [String] = [],
        resources: [String] = [], scopes: [String] = [], actorToken: (token: String, type: String)? = nil,
        requestedTokenType: String? = nil, label: String? = nil
    ) async throws -> Credential {
        try await exchangeToken(
            subjectToken, subjectTokenType: subjectTokenType, audience: audience, resources: resources, scopes: scopes,
            actorToken: actorToken, requestedTokenType: requestedTokenType, label: label, stored: nil)
    }

    /// ``exchangeToken(_:subjectTokenType:audience:resources:scopes:actorToken:requestedTokenType:label:)``
    /// with a stored credential's access token as the subject: sent, like a
    /// refresh, only to a token endpoint at an origin that issued it (a
    /// descriptor changed since, or another `{tenant}`, is refused with
    /// ``AuthKitError/Code/signInRequired``).
    package func exchangeToken(
        _ subject: Credential, audience: [String] = [], resources: [String] = [], scopes: [String] = [],
        label: String? = nil
    ) async throws -> Credential {
        try await exchangeToken(
            subject.accessToken, subjectTokenType: Self.accessTokenType, audience: audience, resources: resources,
            scopes: scopes, actorToken: nil, requestedTokenType: nil, label: label, stored: subject)
    }

    private func exchangeToken(
        _ subjectToken: String, subjectTokenType: String, audience: [String], resources: [String], scopes: [String],
        actorToken: (token: String, type: String)?, requestedTokenType: String?, label: String?, stored: Credential?
    ) async throws -> Credential {
        var parameters = audience.map { ("audience", $0) } + resources.map { ("resource", $0) }
        if let actorToken { parameters += [("actor_token", actorToken.token), ("actor_token_type", actorToken.type)] }
        if let requestedTokenType { parameters.append(("requested_token_type", requestedTokenType)) }
        return try await calls.exchangeToken(
            subjectToken: subjectToken, subjectTokenType: subjectTokenType, parameters: parameters,
            scopes: try Self.checkScopes(scopes), label: label, stored: stored)
    }

    /// Asks the authorization server whether `token` is active, and what it
    /// allows (RFC 7662, token introspection), the client authenticating as
    /// at the token endpoint.
    /// - Parameter hint: `access_token` or `refresh_token` (§2.1), to speed the server's search.
    /// - Throws: ``AuthKitError/Code/notSupported`` (`.introspection`)
    ///   when the descriptor names no introspection endpoint.
    public func introspect(_ token: String, hint: String? = nil) async throws -> TokenIntrospection {
        guard let url = client.introspectionURL else {
            throw AuthKitError.notSupported(providerID: descriptor.id, .introspection)
        }
        return try await calls.introspect(token, hint: hint, at: url)
    }

    /// ``introspect(_:hint:)`` of a stored credential's access token: sent,
    /// like a refresh, only to an origin that issued it.
    package func introspect(_ credential: Credential) async throws -> TokenIntrospection {
        guard let url = client.introspectionURL else {
            throw AuthKitError.notSupported(providerID: descriptor.id, .introspection)
        }
        return try await calls.introspect(credential.accessToken, hint: "access_token", at: url, stored: credential)
    }

    /// A token for the client itself (RFC 6749 §4.4, the client credentials
    /// grant): no user, no browser; the client authenticates with its secret
    /// or its private key (`private_key_jwt`). The credential is renewed by
    /// asking again, as §4.4.3 issues no refresh token: ``refresh(_:)`` and
    /// ``CredentialSource`` do so when it is due.
    /// - Throws: ``AuthKitError/Code/missingSetting`` (`.clientSecret`)
    ///   for a client with neither a secret nor a private key.
    public func clientCredentials(
        scopes: [String]? = nil, additionalParameters: [String: String] = [:], label: String? = nil
    ) async throws -> Credential {
        try checkClientSecret(requiredBy: true)
        for name in additionalParameters.keys
        where ["grant_type", "client_id", "client_secret", "scope"].contains(name) {
            throw AuthKitError.misuse(.reservedParameter(name))
        }
        return try await calls.clientCredentials(
            scopes: try Self.checkScopes(scopes ?? settings.scopes ?? descriptor.scopes.default),
            parameters: additionalParameters.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }, label: label,
            previous: nil)
    }

    /// With `browser`, what ``authorize(using:options:)`` would throw for a
    /// missing secret the code grant needs; otherwise, a throw only when no
    /// grant the descriptor offers works without it.
    public func checkSettingsForSignIn(browser: Bool) throws {
        if browser {
            try checkClientSecret(requiredBy: client.token.requiresClientSecret)
        } else {
            try checkClientSecret(
                requiredBy: !descriptor.codeGrantTakesPublicClients && !descriptor.deviceGrantTakesPublicClients)
        }
    }

    func checkCredential(_ credential: Credential) throws {
        // The id alone: `descriptor` hands out a copy of the whole
        // descriptor (1,128 bytes, a retain for each of its members).
        try Self.checkCredential(credential, providerID: client.descriptor.id)
    }

    private static func checkCredential(_ credential: Credential, providerID: String) throws {
        guard credential.kind == .oauth2 else {
            throw AuthKitError.misuse(.credentialOfAnotherProtocol(credential: credential.key, protocol: .oauth2))
        }
        guard credential.providerID == providerID else {
            throw AuthKitError.misuse(.credentialOfAnotherProvider(credential: credential.key, providerID: providerID))
        }
    }

    // MARK: - The device authorization grant (RFC 8628)

    /// Asks the provider for a device code and a user code (RFC 8628 §3.1–3.2).
    /// Show the user ``DeviceAuthorization/userCode`` and
    /// ``DeviceAuthorization/verificationURI``, then call ``pollDeviceAuthorization(_:label:)``.
    /// - Throws: ``AuthKitError/Code/notSupported`` when the descriptor has no `device` section;
    ///   ``AuthKitError/Code/misuse`` for a scope that is not one scope token.
    public func startDeviceAuthorization(scopes: [String]? = nil, additionalParameters: [String: String] = [:])
        async throws -> DeviceAuthorization
    {
        guard let device = descriptor.device else {
            throw AuthKitError.notSupported(providerID: descriptor.id, .deviceGrant)
        }
        for name in additionalParameters.keys
        where ["client_id", "client_secret", "scope", device.scopeParameter].contains(name) {
            throw AuthKitError.misuse(.reservedParameter(name))
        }
        return try await calls.startDeviceAuthorization(
            device: device, scopes: try Self.checkScopes(scopes ?? settings.scopes ?? descriptor.scopes.default),
            parameters: additionalParameters.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })
    }

    /// Polls the token endpoint until the user approves (RFC 8628 §3.4–3.5):
    /// every `interval` seconds, 5 more after each `slow_down`, until the
    /// codes expire. Cancelling the task stops it; a poll already sent is
    /// seen through first, and if its answer brings the tokens, they are
    /// returned rather than dropped (the device code is spent by then).
    ///
    /// The codes' lifetime is the provider's `expires_in`, accepted up to
    /// 10¹¹ s: a server that answers `authorization_pending` for ever keeps
    /// this polling as long as it says. Bound it with your own deadline
    /// (cancel the task); `authkit authorize --device` stops after an hour
    /// unless `--timeout` says otherwise.
    /// - Throws: ``AuthKitError/Code/authorizationFailed`` (`access_denied`)
    ///   when the user declines; ``AuthKitError/Code/providerError`` with
    ///   `expired_token` when the codes expire first; ``AuthKitError/Code/cancelled``;
    ///   ``AuthKitError/Code/missingSetting`` (`.clientSecret`)
    ///   before the first poll, when `device.requiresClientSecret` and the
    ///   settings hold no secret.
    public func pollDeviceAuthorization(_ authorization: DeviceAuthorization, label: String? = nil) async throws
        -> Credential
    {
        guard let device = descriptor.device else {
            throw AuthKitError.notSupported(providerID: descriptor.id, .deviceGrant)
        }
        try checkClientSecret(requiredBy: device.requiresClientSecret)
        // Another client's device code is not sent here.
        try checkAttempt(
            startedBy: authorization.providerID, clientID: authorization.clientID,
            tokenEndpoint: authorization.tokenEndpoint)
        return try await DevicePoller(calls: calls, device: device, now: now, sleep: deviceSleep).poll(
            authorization, label: label)
    }

    public func authorizeWithDeviceCode(
        options: AuthorizationOptions, show: @escaping @Sendable (DeviceAuthorization) async -> Void
    ) async throws -> Credential {
        // Before the code is shown: the polls would be refused without the secret.
        if let device = descriptor.device { try checkClientSecret(requiredBy: device.requiresClientSecret) }
        let authorization = try await startDeviceAuthorization(
            scopes: options.scopes, additionalParameters: options.additionalParameters)
        await show(authorization)
        return try await pollDeviceAuthorization(authorization, label: options.label)
    }

    // MARK: - The whole flow

    /// - Throws: ``AuthKitError/Code/notSupported`` for a device-only
    ///   provider, and ``AuthKitError/Code/missingSetting`` for a
    ///   missing secret the provider requires, before the user agent is started.
    public func authorize(using userAgent: some UserAgent, options: AuthorizationOptions) async throws -> Credential {
        _ = try authorizationEndpoint()
        try checkClientSecret(requiredBy: client.token.requiresClientSecret)
        let requested = options.redirectURI ?? client.standardRedirect
        let parser = RedirectParser(appendedFragment: descriptor.redirect.appendedFragment)
        let (result, pending) = try await runUserAgent(
            userAgent, redirectURI: requested, portIsFlexible: options.redirectURI == nil && redirectPortIsFlexible,
            start: { [self] redirect in
                try await startAuthorization(
                    redirectURI: redirect ?? requested, scopes: options.scopes,
                    additionalParameters: options.additionalParameters)
            },
            validate: { text, pending in _ = try parser.code(from: text, for: pending) })
        guard case .redirect(let url) = result else {
            throw AuthKitError.misuse(
                .userAgentBrokeProtocol("OAuth 2.0 answers with a redirect URL, not a typed code."))
        }
        return try await exchange(redirect: url, pending: pending, label: options.label)
    }
}

/// A client prints as its provider and settings, secret masked: its
/// resolved values (the secret among them) are not reflected by `dump`.
extension OAuth2Client: CustomStringConvertible, CustomReflectable {
    public var description: String { "OAuth2Client(provider: \(descriptor.id), \(settings))" }
    public var customMirror: Mirror { Mirror(self, children: ["description": description]) }
}
