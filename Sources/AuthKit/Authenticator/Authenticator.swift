import HTTPTypes

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// One provider's sign-in, whatever its protocol.
///
/// ``OAuth2Client`` (OAuth 2.0) and the `AuthKitOAuth1` module's client
/// (OAuth 1.0a) both conform, so a caller signs in to Qiita and to Twitter with
/// the same calls and stores both results in the same ``CredentialStore``.
/// What the two protocols share — the default redirect URI, the redirect
/// scheme a provider accepts, running a ``UserAgent`` — lives once, in this
/// protocol's extension.
public protocol Authenticator: Sendable {
    /// The provider this authenticator talks to.
    var descriptor: ProviderDescriptor { get }
    /// The client registration it uses (client id and secret, redirect URI, placeholders).
    var settings: ClientSettings { get }

    /// Runs the whole authorization: builds the request, lets `userAgent` get
    /// the user's approval, checks the answer and exchanges it for a credential.
    /// - Throws: ``AuthKitError/Code/notSupported`` (`.authorizationCodeGrant`)
    ///   for a device-only provider (``ProviderDescriptor/isDeviceOnly``),
    ///   before the user agent is started.
    func authorize(using userAgent: some UserAgent, options: AuthorizationOptions) async throws -> Credential

    /// Returns `request` carrying `credential`: an `Authorization: Bearer` header
    /// for OAuth 2.0 (RFC 6750 §2.1; never a token in the query), an
    /// `Authorization: OAuth` signature for OAuth 1.0a (RFC 5849 §3.5.1).
    ///
    /// An OAuth 1.0a signature covers the method, the URL and, when
    /// `Content-Type` is `application/x-www-form-urlencoded`, `body`
    /// (§3.4.1.3.1): pass the body the request will carry, and change neither
    /// afterwards. For a `URLRequest`, `authorize(_:with:)` does the same
    /// (on Linux it is in `AuthKitFoundationNetworking`, as `URLRequest` itself
    /// is in FoundationNetworking there).
    /// - Throws: ``AuthKitError/Code/insecureTransport`` when the credential
    ///   would cross plain http to another machine: a Bearer token (RFC 6750
    ///   §5.3), or an OAuth 1.0a PLAINTEXT signature, which is the secrets
    ///   themselves (RFC 5849 §3.4.4). An HMAC signature reveals no secret and
    ///   signs any URL, as RFC 5849 intends.
    func authorize(_ request: HTTPRequest, body: Data?, with credential: Credential) throws -> HTTPRequest

    /// Returns a fresh credential for an expired one.
    /// - Throws: ``AuthKitError/Code/signInRequired`` when it cannot be renewed.
    func refresh(_ credential: Credential) async throws -> Credential

    /// Invalidates `credential` at the provider.
    /// - Throws: ``AuthKitError/Code/notSupported`` when the descriptor names no way to.
    func revoke(_ credential: Credential) async throws

    /// Signs in with the device authorization grant (RFC 8628), for machines
    /// where no browser can reach a redirect (SSH, containers, TVs): `show` is
    /// called once with the code and the address to enter it at; this returns
    /// when the user has approved on another device. Cancelled while a poll
    /// is under way, it lets that poll finish and returns the credential if
    /// the poll brought one: the provider has issued it by then.
    /// - Throws: ``AuthKitError/Code/notSupported`` (`.deviceGrant`)
    ///   when the provider offers no device grant (see
    ///   ``ProviderDescriptor/supportsDeviceGrant``).
    func authorizeWithDeviceCode(
        options: AuthorizationOptions, show: @escaping @Sendable (DeviceAuthorization) async -> Void
    ) async throws -> Credential

    /// Throws, before anyone is asked to approve anything, the error a
    /// sign-in would end with for a missing setting: `browser` for
    /// ``authorize(using:options:)``, otherwise for whichever way in the
    /// descriptor offers (a provider without public clients needs the
    /// client secret for every one; GitHub's code grant needs it, its device
    /// grant does not). A caller that can offer another way in asks first.
    /// - Throws: ``AuthKitError/Code/missingSetting``.
    func checkSettingsForSignIn(browser: Bool) throws

    /// A token for the client itself (RFC 6749 §4.4, the client credentials
    /// grant): no user, no browser. `scopes` `nil` is the settings' or the
    /// descriptor's default.
    /// - Throws: ``AuthKitError/Code/notSupported``
    ///   (`.clientCredentialsGrant`) for a protocol without it (OAuth 1.0a).
    func clientCredentials(scopes: [String]?, additionalParameters: [String: String], label: String?) async throws
        -> Credential
}

extension Authenticator {
    /// Nothing to check beyond what the initializer checked.
    public func checkSettingsForSignIn(browser: Bool) throws {}

    /// The protocol has no client credentials grant unless the authenticator provides one.
    public func clientCredentials(scopes: [String]?, additionalParameters: [String: String], label: String?)
        async throws -> Credential
    {
        throw AuthKitError.notSupported(providerID: descriptor.id, .clientCredentialsGrant)
    }

    /// The protocol has no device grant unless the authenticator provides one.

    public func authorizeWithDeviceCode(
        options: AuthorizationOptions, show: @escaping @Sendable (DeviceAuthorization) async -> Void
    ) async throws -> Credential {
        throw AuthKitError.notSupported(providerID: descriptor.id, .deviceGrant)
    }

    /// Authorizes with default options.
    public func authorize(using userAgent: some UserAgent) async throws -> Credential {
        try await authorize(using: userAgent, options: AuthorizationOptions())
    }

    /// The redirect URI used when the caller gives none: the configured one,
    /// else the descriptor's default (`http://127.0.0.1/callback`, with its
    /// fixed port if it has one). `nil` when the configured value is `oob`, the
    /// out-of-band flow of protocols that have one (RFC 5849 §2.1).
    public var defaultRedirectURI: URL? {
        Self.defaultRedirectURI(settings: settings, descriptor: descriptor)
    }

    /// ``defaultRedirectURI`` from its inputs, for an initializer that keeps it.
    package static func defaultRedirectURI(settings: ClientSettings, descriptor: ProviderDescriptor) -> URL? {
        // (A configured value that does not parse was refused by ``checkConfiguredRedirectURI(_:descriptor:)``.)
        if let configured = settings.redirectURI {
            return configured == "oob" ? nil : URL(string: configured)
        }
        return descriptor.redirect.uri
    }

    /// Refuses a configured redirect URI (``ClientSettings/redirectURI``:
    /// the caller's, `AUTHKIT_<ID>_REDIRECT_URI` or `config.json`'s) that
    /// ``RedirectURIRules`` finds unusable, when the client is made: one
    /// that did not parse used to leave the descriptor's default in its
    /// place without a word. `oob` is OAuth 1.0a's "no redirect" (RFC 5849 §2.1).
    package static func checkConfiguredRedirectURI(_ settings: ClientSettings, descriptor: ProviderDescriptor) throws {
        guard let configured = settings.redirectURI, !(descriptor.protocol == .oauth1 && configured == "oob"),
            let problem = RedirectURIRules.problem(configured)
        else { return }
        let providerID = descriptor.id
        let shown = configured.split(separator: "?", maxSplits: 1).first.map(String.init) ?? configured
        throw AuthKitError.unusableRedirectURI(
            uri: shown,
            reason:
                "the configured redirect URI (ClientSettings.redirectURI, \(ClientSettings.environmentPrefix(for: providerID))_REDIRECT_URI or config.json) \(problem)."
        )
    }

    /// True when a loopback listener may choose the port (RFC 8252 §7.3): no
    /// configured redirect URI, a descriptor default without a fixed port,
    /// and an authorization request that names its redirect URI (one that
    /// does not, Qiita's shape, is redirected to the registered URI, on
    /// whatever port that has).
    public var redirectPortIsFlexible: Bool {
        settings.redirectURI == nil && descriptor.redirectPortIsFlexible
    }

    /// Refuses a redirect URI the provider is documented to refuse (Instagram
    /// takes only `https`): it would fail only after the user has logged in.
    package func checkRedirectScheme(_ uri: URL) throws {
        let redirect = descriptor.redirect
        guard redirect.schemeIsRequired, uri.scheme?.lowercased() != redirect.scheme else { return }
        throw AuthKitError.unusableRedirectURI(
            uri: uri.redactedForLogs,
            reason:
                "\(descriptor.name) only accepts \(redirect.scheme) redirect URIs. Register one and pass it (for example \(redirect.uri.absoluteString))."
        )
    }

    /// ``authorize(_:with:)`` for a request the engines build: the same
    /// `Authorization` header, for OAuth 2.0 and OAuth 1.0a alike (a signature
    /// covers the method, URL and form body, so each redirect hop is signed anew).
    ///
    /// A DPoP-bound credential (RFC 9449 §7.1) goes as `Authorization: DPoP
    /// <token>` with a fresh proof for this request's method and URL, its
    /// `ath` the token's hash, and `nonce` (a refusal's, for its retry) or
    /// the resource server's latest nonce (§9).
    nonisolated(nonsending) package func authorize(
        _ request: OutgoingRequest, with credential: Credential, nonce: String? = nil
    ) async throws -> OutgoingRequest {
        var authorized = request
        if let key = credential.proofKey, credential.kind == .oauth2 {
            authorized.head = try await DPoPProof.authorized(
                request.head, url: request.url, token: credential, key: key, descriptor: descriptor, nonce: nonce)
        } else {
            authorized.head = try authorize(request.head, body: request.body, with: credential)
            // An authenticator of the caller's that moved the request (a token
            // in the query): its target follows, origin and all, so that what
            // is sent, and to where, is what the head now says.
            let head = authorized.head
            if head.scheme != request.head.scheme || head.authority != request.head.authority
                || head.path != request.head.path
            {
                guard let url = head.url else {
                    throw AuthKitError.misuse(
                        .unsignableRequest(
                            "\(Self.self).authorize(_:body:with:) returned a request with no absolute URL."))
                }
                authorized.retarget(url)
            }
        }
        authorized.secrets += [credential.accessToken, credential.tokenSecret, credential.refreshToken].compactMap {
            $0
        }
        return authorized
    }

    /// Refuses a pending attempt another provider's client started (ids
    /// compared byte for byte: Swift's `==` takes "é" and "e\u{301}" as one).
    package func checkAttempt(startedBy providerID: String) throws {
        guard ExactText.same(providerID, descriptor.id) else {
            throw AuthKitError.misuse(.attemptOfAnotherProvider(attempt: providerID, providerID: descriptor.id))
        }
    }

    /// Runs `userAgent` for one attempt: `start` builds the authorization URL
    /// (and the attempt to keep) for the redirect URI the agent chose;
    /// `validate` tells a genuine answer from one to ignore. Returns the
    /// agent's answer and the attempt it answers.
    package func runUserAgent<Attempt: Sendable>(
        _ userAgent: some UserAgent, redirectURI: URL?, portIsFlexible: Bool,
        start: @escaping @Sendable (URL?) async throws -> (URL, Attempt),
        validate: @escaping @Sendable (String, Attempt) throws -> Void
    ) async throws -> (UserAgentResult, Attempt) {
        if let redirectURI, let problem = RedirectURIRules.problem(redirectURI.absoluteString) {
            throw AuthKitError.unusableRedirectURI(uri: redirectURI.redactedForLogs, reason: "it \(problem).")
        }
        let attempt = LockedValue<Attempt?>(nil)
        let session = AuthorizationSession(
            providerName: descriptor.name,
            redirectURI: redirectURI,
            redirectPortIsFlexible: portIsFlexible,
            makeAuthorizationURL: { redirect in
                let (url, started) = try await start(redirect)
                attempt.withLock { $0 = started }
                return url
            },
            validateRedirect: { text in
                guard let started = attempt.current else { throw AuthKitError.redirect(.missingState) }
                do {
                    try validate(text, started)
                } catch let error as AuthKitError where [.accessDenied, .authorizationFailed].contains(error.code) {
                    return // a genuine answer, carrying the provider's error (access_denied)
                }
            })
        let result = try await userAgent.answer(to: session)
        guard let started = attempt.current else {
            throw AuthKitError.misuse(.userAgentBrokeProtocol("it returned without asking for the authorization URL."))
        }
        return (result, started)
    }
}
