import AuthKit
import HTTPTypes
import Logging

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The OAuth 1.0a three-legged flow (RFC 5849 §2) for any provider a
/// ``ProviderDescriptor`` with `"protocol": "oauth1"` describes.
///
/// The three steps, each a signed request (RFC 5849 §3):
/// 1. **Request token** (§2.1): `POST requestTokenURL` (or the descriptor's
///    `requestTokenMethod`; likewise in step 3) with `oauth_callback`
///    (a loopback URL, a custom scheme, or `oob` for the PIN flow), signed with
///    the key `enc(consumer_secret)&`. The reply must confirm the callback.
/// 2. **Authorization** (§2.2): the user opens `authorizeURL?oauth_token=…`
///    (or `authenticateURL`, see ``usesAuthenticatePage``) and comes back to the
///    callback with `oauth_token` and `oauth_verifier`, or reads a PIN.
/// 3. **Access token** (§2.3): `POST accessTokenURL` with `oauth_token` and
///    `oauth_verifier`, signed with `enc(consumer_secret)&enc(request_token_secret)`.
///
/// Like ``OAuth2Client`` it runs all in one (``authorize(using:options:)``) or
/// in two requests for a web backend (``startAuthorization(redirectURI:authenticating:additionalParameters:)``,
/// then ``exchange(redirect:pending:label:)``). Everything provider-specific
/// comes from the descriptor; nothing here names a provider.
public struct OAuth1Client: Authenticator {
    /// The `oauth_callback` value for the out-of-band (PIN) flow (RFC 5849 §2.1).
    public static let outOfBand = "oob"

    public let descriptor: ProviderDescriptor
    public let settings: ClientSettings
    /// Signs every request with the consumer key and secret; ``OAuth1Signer/description`` hides the secret.
    public let signer: OAuth1Signer
    /// Whether step 2 opens the descriptor's `authenticateURL` ("Sign in
    /// with …": a user who has approved the app before is sent straight
    /// back) rather than its `authorizeURL` (the provider always asks);
    /// `authorizeURL` where the descriptor names no `authenticateURL`. The
    /// caller chooses per client rather than per attempt:
    /// ``AuthorizationOptions`` is shared with OAuth 2.0, and its
    /// `additionalParameters` are passed to the provider as they are
    /// (Twitter's `force_login`, `screen_name`), so a reserved key there
    /// would be a trap.
    public var usesAuthenticatePage = false
    private let endpoints: OAuth1Endpoints
    private let transport: FlowTransport
    private let now: @Sendable () -> Date

    /// - Throws: ``AuthKit/AuthKitError/Code/missingSetting`` when the
    ///   consumer key (client id) or secret is missing;
    ///   ``AuthKit/AuthKitError/Code/unusableRedirectURI`` for a
    ///   configured redirect URI that cannot be one; ``AuthKit/AuthKitError/Code/misuse``
    ///   for a descriptor that is not OAuth 1.0a.
    public init(
        descriptor: ProviderDescriptor,
        settings: ClientSettings,
        httpClient: (any HTTPClient)? = nil,
        logger: Logger = Logger(label: "authkit.oauth1"),
        now: @escaping @Sendable () -> Date = { Date() }
    ) throws {
        try self.init(
            descriptor: descriptor, settings: settings, httpClient: httpClient, logger: logger,
            nonceAndTimestamp: .live, now: now)
    }

    /// With a fixed nonce and timestamp, for tests that compare signatures.
    @_spi(Reproducible) public init(
        descriptor: ProviderDescriptor,
        settings: ClientSettings,
        httpClient: (any HTTPClient)? = nil,
        logger: Logger = Logger(label: "authkit.oauth1"),
        nonceAndTimestamp: NonceAndTimestamp,
        now: @escaping @Sendable () -> Date = { Date() }
    ) throws {
        guard descriptor.protocol == .oauth1, let endpoints = descriptor.oauth1 else {
            throw AuthKitError.misuse(
                .wrongProtocol(providerID: descriptor.id, protocol: descriptor.protocol, client: .oauth1))
        }
        guard let consumerKey = settings.clientID, !consumerKey.isEmpty else {
            throw AuthKitError.missingSetting(providerID: descriptor.id, .clientID)
        }
        guard let consumerSecret = settings.clientSecret, !consumerSecret.isEmpty else {
            throw AuthKitError.missingSetting(providerID: descriptor.id, .clientSecret)
        }
        try Self.checkConfiguredRedirectURI(settings, descriptor: descriptor)
        guard let method = OAuth1SignatureMethod(rawValue: endpoints.signatureMethod) else {
            throw AuthKitError.invalidFile([
                FileIssue(
                    file: descriptor.source, field: "oauth1.signatureMethod",
                    problem: "'\(endpoints.signatureMethod)' is not supported; use HMAC-SHA1, HMAC-SHA256 or PLAINTEXT."
                )
            ])
        }
        for (field, method) in [
            ("requestTokenMethod", endpoints.requestTokenMethod), ("accessTokenMethod", endpoints.accessTokenMethod),
        ] {
            if let problem = OAuth1Endpoints.tokenCallMethodProblem(method) {
                throw AuthKitError.invalidFile([
                    FileIssue(file: descriptor.source, field: "oauth1.\(field)", problem: problem)
                ])
            }
        }
        for (field, url) in [
            ("requestTokenURL", endpoints.requestTokenURL), ("authorizeURL", endpoints.authorizeURL),
            ("accessTokenURL", endpoints.accessTokenURL),
        ] where URL(string: url)?.host == nil || url.contains("{") {
            throw AuthKitError.invalidFile([
                FileIssue(
                    file: descriptor.source, field: "oauth1.\(field)",
                    problem: "'\(url)' is not an absolute URL without placeholders, which OAuth 1.0a endpoints must be."
                )
            ])
        }
        self.descriptor = descriptor
        self.settings = settings
        self.endpoints = endpoints
        self.signer = OAuth1Signer(
            consumerKey: consumerKey, consumerSecret: consumerSecret, signatureMethod: method,
            nonceAndTimestamp: nonceAndTimestamp)
        self.transport = FlowTransport(http: httpClient ?? defaultHTTPClient(), logger: logger)
        self.now = now
    }

    // MARK: - Steps 1 and 2: request token and authorization URL

    /// Gets a request token for `callback` (RFC 5849 §2.1) and builds the URL
    /// the user opens (§2.2).
    ///
    /// - Parameters:
    ///   - callback: where the provider sends the user back; `nil` for the
    ///     out-of-band flow, in which the provider shows a PIN.
    ///   - authenticating: overrides ``usesAuthenticatePage`` for this attempt.
    ///   - additionalParameters: added to the authorization URL's query
    ///     (e.g. `force_login=true`); `oauth_token` is reserved.
    public func startAuthorization(
        redirectURI: URL?, authenticating: Bool? = nil, additionalParameters: [String: String] = [:]
    ) async throws -> (url: URL, pending: PendingAuthorization) {
        if additionalParameters["oauth_token"] != nil {
            throw AuthKitError.misuse(.reservedParameter("oauth_token"))
        }
        if let redirectURI { try checkRedirectScheme(redirectURI) }
        let callbackValue = redirectURI?.absoluteString ?? Self.outOfBand
        var url = try Self.url(endpoints.requestTokenURL, field: "requestTokenURL", descriptor: descriptor)
        let extra = endpoints.requestTokenParameters.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        url = try appendingQuery(extra, to: url)

        let header = try signer.authorizationHeader(
            method: endpoints.requestTokenMethod, url: url, protocolParameters: [("oauth_callback", callbackValue)])
        var request = OutgoingRequest(method: HTTPRequest.Method(endpoints.requestTokenMethod) ?? .post, url: url)
        request.setHeader("Authorization", header)
        // Masked in the transport's own errors too (a redirect's target):
        // PLAINTEXT's signature is the consumer secret itself (§3.4.4).
        request.secrets = knownSecrets()
        let fields = try ReplyParser(step: .requestToken, secrets: knownSecrets()).fields(
            of: try await transport.send(request, step: .requestToken), required: ["oauth_token", "oauth_token_secret"])
        let values = Dictionary(fields, uniquingKeysWith: { first, _ in first })

        // RFC 5849 §2.1: "oauth_callback_confirmed: MUST be present and set to
        // 'true'". Its absence means an OAuth 1.0 server, open to session fixation.
        if endpoints.requireCallbackConfirmed, values["oauth_callback_confirmed"] != "true" {
            throw AuthKitError.invalidResponse(
                step: .requestToken,
                reason: .init(
                    .missingField("oauth_callback_confirmed"),
                    "the reply lacks oauth_callback_confirmed=true, which RFC 5849 §2.1 requires (it shows the callback was registered). A server that omits it but sends oauth_verifier with its callback can be let through with \"requireCallbackConfirmed\": false under \"oauth1\" in the provider file (giving up that check); one that speaks only OAuth 1.0, with no verifier, is not supported."
                ))
        }
        let pending = PendingAuthorization(
            providerID: descriptor.id, requestToken: values["oauth_token"] ?? "",
            requestTokenSecret: values["oauth_token_secret"] ?? "", redirectURI: callbackValue, createdAt: now(),
            consumerKey: signer.consumerKey, accessTokenURL: endpoints.accessTokenURL)

        let pageURL =
            (authenticating ?? usesAuthenticatePage)
            ? endpoints.authenticateURL ?? endpoints.authorizeURL : endpoints.authorizeURL
        let query =
            [("oauth_token", pending.requestToken)]
            + additionalParameters.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        let authorizationURL = try appendingQuery(
            query, to: try Self.url(pageURL, field: "authorizeURL", descriptor: descriptor))
        return (authorizationURL, pending)
    }

    // MARK: - Step 3: the redirect (RFC 5849 "callback") and the access token

    /// Checks `callback` against `pending` and returns `oauth_verifier`; see
    /// `CallbackParser` for the checks and their order.
    /// - Throws: ``AuthKit/AuthKitError/Code/redirectRejected`` for a URL that does not answer
    ///   this attempt; ``AuthKit/AuthKitError/Code/authorizationFailed`` (`access_denied`)
    ///   when the user declined.
    public func verifier(from redirect: URL, pending: PendingAuthorization) throws -> String {
        try checkAttempt(pending)
        // A refusal's oauth_problem_advice may repeat the consumer secret: masked, as reply errors are.
        do {
            return try CallbackParser().verifier(from: redirect.absoluteString, for: pending)
        } catch let error as AuthKitError {
            throw SecretMask(knownSecrets(pending.requestTokenSecret ?? "")).apply(error)
        }
    }

    /// Checks the callback, then exchanges its verifier for a credential.
    public func exchange(redirect: URL, pending: PendingAuthorization, label: String? = nil) async throws
        -> Credential
    {
        try await exchange(
            verifier: try verifier(from: redirect, pending: pending), typed: false, pending: pending, label: label)
    }

    /// Exchanges the request token and verifier (from the callback, or the PIN
    /// the user typed) for the access token (RFC 5849 §2.3). In the PIN flow
    /// the spaces and line breaks around the code are dropped; a callback's
    /// verifier is sent as given.
    public func exchange(verifier: String, pending: PendingAuthorization, label: String? = nil) async throws
        -> Credential
    {
        try await exchange(verifier: verifier, typed: pending.isOutOfBand, pending: pending, label: label)
    }

    /// A typed verifier (the PIN flow's code, or one a user agent says was
    /// typed) loses the spaces and line breaks around it; one read from the
    /// callback (by this client, or by the caller from
    /// ``verifier(from:pending:)``) is sent as the provider issued it (§2.3:
    /// it is opaque), or refused below.
    private func exchange(verifier: String, typed: Bool, pending: PendingAuthorization, label: String?)
        async throws -> Credential
    {
        // Before the request token and verifier go anywhere: an attempt
        // another provider's or another consumer's client started would
        // send them (and, with PLAINTEXT, the request token's secret as the
        // signature) to this client's endpoint.
        try checkAttempt(pending)
        let verifier = typed ? verifier.trimmingSpacesAndNewlines() : verifier
        guard !verifier.isEmpty else { throw AuthKitError.redirect(.missingVerifier) }
        // A PIN flow's answer is a short code. A callback URL pasted there
        // (as --manual asks for one in other flows) was sent whole as the
        // verifier, and a control character sent as typed: the provider
        // answered only "invalid verifier". What to do depends on where the
        // verifier comes from (RFC 5849 §2.2): typed from the provider's page
        // in the PIN flow, the callback's `oauth_verifier` otherwise.
        let advice =
            pending.isOutOfBand
            ? "enter the code (PIN) the provider shows once you approve"
            : "in this sign-in it is the callback's oauth_verifier, which a provider sends as it issued it: use the callback URL as the browser was sent to it, unchanged, or sign in again"
        if verifier.contains("://") {
            throw AuthKitError.redirect(
                .unusableVerifier(
                    pending.isOutOfBand
                        ? "is a URL: this sign-in uses the PIN flow (oauth_callback=oob), where the provider shows a code to type instead of redirecting; \(advice)"
                        : "is a URL, where the callback's oauth_verifier goes: pass the callback URL as the redirect (exchange(redirect:pending:)), and its oauth_verifier is read from it"
                ))
        }
        // Printable ASCII only: a verifier is a code to type or a URL
        // parameter (an ideographic or no-break space from a paste, too).
        if verifier.unicodeScalars.contains(where: { !(0x21...0x7E).contains($0.value) }) {
            throw AuthKitError.redirect(
                .unusableVerifier(
                    "holds a space, a control character or a character outside ASCII, which no provider's verifier has; \(advice)"
                ))
        }
        let url = try Self.url(endpoints.accessTokenURL, field: "accessTokenURL", descriptor: descriptor)
        let header = try signer.authorizationHeader(
            method: endpoints.accessTokenMethod, url: url, token: pending.requestToken,
            tokenSecret: pending.requestTokenSecret ?? "",
            protocolParameters: [("oauth_verifier", verifier)])
        var request = OutgoingRequest(method: HTTPRequest.Method(endpoints.accessTokenMethod) ?? .post, url: url)
        request.setHeader("Authorization", header)
        request.secrets = knownSecrets(pending.requestTokenSecret ?? "", pending.requestToken, verifier)
        let response = try await transport.send(request, step: .accessToken)
        let receivedAt = now()
        let fields = try ReplyParser(
            step: .accessToken, secrets: knownSecrets(pending.requestTokenSecret ?? "", pending.requestToken, verifier)
        )
        .fields(of: response, required: ["oauth_token", "oauth_token_secret"])
        return makeCredential(fields, receivedAt: receivedAt, label: label)
    }

    /// A ``Credential`` of kind `.oauth1`: `accessToken` is `oauth_token`,
    /// `tokenSecret` is `oauth_token_secret`, and the other fields of the reply
    /// (Twitter's `user_id`, `screen_name`) are kept in `rawFields`. The token
    /// and its secret are not repeated there, so they live in one place.
    private func makeCredential(_ fields: [(String, String)], receivedAt: Date, label: String?) -> Credential {
        var token = ""
        var secret = ""
        var raw = [String: JSONValue]()
        for (name, value) in fields {
            switch name {
            case "oauth_token": if token.isEmpty { token = value }
            case "oauth_token_secret": if secret.isEmpty { secret = value }
            default: if raw[name] == nil { raw[name] = .string(value) }
            }
        }
        let origins = [endpoints.accessTokenURL, endpoints.invalidateTokenURL].compactMap {
            $0.flatMap(URL.init(string:))?.origin
        }
        return Credential(
            providerID: descriptor.id, label: label, isOAuth1: true, accessToken: token, tokenType: "OAuth",
            tokenSecret: secret, obtainedAt: receivedAt, rawFields: raw, endpointOrigins: Array(Set(origins)).sorted())
    }

    // MARK: - The whole flow

    /// Runs the three steps with `userAgent`.
    ///
    /// The session's redirect URI is `options.redirectURI`, else
    /// ``AuthKit/Authenticator/defaultRedirectURI``; `nil` asks for the PIN flow. The agent may answer
    /// with the callback URL (`.redirect`) or the PIN the user typed
    /// (`.verificationCode`). `options.additionalParameters` go to the
    /// authorization URL; `options.scopes` has no meaning in OAuth 1.0a (a
    /// provider's access level is a descriptor `requestTokenParameters` entry,
    /// such as Twitter's `x_auth_access_type`).
    public func authorize(using userAgent: some UserAgent, options: AuthorizationOptions) async throws -> Credential {
        let requested = options.redirectURI ?? defaultRedirectURI
        let authenticating = usesAuthenticatePage
        let (result, pending) = try await runUserAgent(
            userAgent, redirectURI: requested,
            portIsFlexible: options.redirectURI == nil && requested != nil && redirectPortIsFlexible,
            start: { [self] redirect in
                try await startAuthorization(
                    redirectURI: redirect, authenticating: authenticating,
                    additionalParameters: options.additionalParameters)
            },
            validate: { [self] text, pending in
                try checkAttempt(pending)
                _ = try CallbackParser().verifier(from: text, for: pending)
            })
        switch result {
        case .redirect(let url):
            return try await exchange(redirect: url, pending: pending, label: options.label)
        case .verificationCode(let code):
            return try await exchange(verifier: code, typed: true, pending: pending, label: options.label)
        }
    }

    // MARK: - Using the credential

    /// Adds `Authorization: OAuth …` (RFC 5849 §3.5.1) signed with `credential`.
    ///
    /// The URL's query parameters are signed, and so is the body when
    /// `Content-Type` is `application/x-www-form-urlencoded` (§3.4.1.3.1); set
    /// the body before calling this, and do not change the request afterwards.
    public func authorize(_ request: HTTPRequest, body: Data?, with credential: Credential) throws -> HTTPRequest {
        guard let url = request.url else { throw AuthKitError.misuse(.unsignableRequest("it has no URL.")) }
        var request = request
        request.headerFields[.authorization] = try header(
            method: request.method.rawValue, url: url, contentType: request.headerFields[.contentType], body: body,
            credential: credential)
        return request
    }

    private func header(method: String, url: URL, contentType: String?, body: Data?, credential: Credential) throws
        -> String
    {
        guard credential.kind == .oauth1, let tokenSecret = credential.tokenSecret else {
            throw AuthKitError.misuse(.credentialOfAnotherProtocol(credential: credential.key, protocol: .oauth1))
        }
        guard credential.providerID == descriptor.id else {
            throw AuthKitError.misuse(
                .credentialOfAnotherProvider(credential: credential.key, providerID: descriptor.id))
        }
        return try signer.authorizationHeader(
            method: method, url: url, contentType: contentType, body: body,
            token: credential.accessToken, tokenSecret: tokenSecret)
    }

    // MARK: - Refresh and revocation

    /// OAuth 1.0a access tokens do not expire and RFC 5849 has no refresh:
    /// always throws ``AuthKit/AuthKitError/Code/signInRequired``.
    public func refresh(_ credential: Credential) async throws -> Credential {
        throw AuthKitError.signInRequired(credential.key, reason: .protocolHasNoRefresh)
    }

    /// Invalidates the token at the descriptor's `oauth1.invalidateTokenURL`
    /// (a `POST` signed with the token itself; Twitter's `oauth/invalidate_token`).
    /// RFC 5849 defines no revocation, so without that field this throws
    /// ``AuthKit/AuthKitError/Code/notSupported``.
    public func revoke(_ credential: Credential) async throws {
        guard let invalidate = endpoints.invalidateTokenURL else {
            throw AuthKitError.notSupported(providerID: descriptor.id, .revocation)
        }
        let url = try Self.url(invalidate, field: "invalidateTokenURL", descriptor: descriptor)
        if let allowed = credential.endpointOrigins, !allowed.contains(url.origin) {
            throw AuthKitError.signInRequired(credential.key, reason: .endpointChanged(origin: url.origin))
        }
        let request = try await authorize(OutgoingRequest(method: .post, url: url), with: credential)
        let response = try await transport.send(request, step: .revocation)
        if (200...299).contains(response.status) { return }
        _ = try ReplyParser(
            step: .revocation, secrets: knownSecrets(credential.tokenSecret ?? "", credential.accessToken)
        ).fields(of: response, required: [])
        throw AuthKitError.invalidResponse(
            step: .revocation, reason: .init(.unexpectedStatus(response.status), "HTTP \(response.status)"))
    }

    // MARK: - Requests

    /// Refuses an attempt another client started: another provider's, or
    /// another consumer key's or access-token endpoint's of this one's
    /// (compared byte for byte). An attempt kept by an older version records
    /// neither: only its provider is compared.
    private func checkAttempt(_ pending: PendingAuthorization) throws {
        try checkAttempt(startedBy: pending.providerID)
        let sameConsumer = pending.consumerKey.map { ExactText.same($0, signer.consumerKey) } ?? true
        let sameEndpoint = pending.accessTokenURL.map { ExactText.same($0, endpoints.accessTokenURL) } ?? true
        guard sameConsumer, sameEndpoint else {
            throw AuthKitError.misuse(.attemptOfAnotherClient(providerID: descriptor.id))
        }
    }

    /// What error messages must never show: the consumer secret, and the
    /// token, secret and verifier of the step.
    private func knownSecrets(_ extra: String...) -> [String] {
        ([settings.clientSecret ?? ""] + extra).filter { !$0.isEmpty }
    }

    private static func url(_ text: String, field: String, descriptor: ProviderDescriptor) throws -> URL {
        guard let url = URL(string: text), url.host != nil else {
            throw AuthKitError.invalidFile([
                FileIssue(
                    file: descriptor.source, field: "oauth1.\(field)", problem: "'\(text)' is not an absolute URL.")
            ])
        }
        return url
    }

    private func appendingQuery(_ pairs: [(String, String)], to url: URL) throws -> URL {
        guard let result = url.appendingQuery(pairs) else {
            throw AuthKitError.invalidFile([
                FileIssue(
                    file: descriptor.source, field: "oauth1", problem: "\(url.redactedForLogs) cannot take a query.")
            ])
        }
        return result
    }
}

/// A client prints as its provider and settings, the consumer secret masked
/// (its signer, which holds the secret, is not reflected by `dump`).
extension OAuth1Client: CustomStringConvertible, CustomReflectable {
    public var description: String { "OAuth1Client(provider: \(descriptor.id), \(settings))" }
    public var customMirror: Mirror { Mirror(self, children: ["description": description]) }
}
