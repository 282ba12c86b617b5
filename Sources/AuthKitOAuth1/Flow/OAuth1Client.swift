import AuthKit
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Logging

/// The OAuth 1.0a three-legged flow (RFC 5849 §2) for any provider a
/// ``ProviderDescriptor`` with `"protocol": "oauth1"` describes.
///
/// The three steps, each a signed request (RFC 5849 §3):
/// 1. **Request token** (§2.1): `POST requestTokenURL` with `oauth_callback`
///    (a loopback URL, a custom scheme, or `oob` for the PIN flow), signed with
///    the key `enc(consumer_secret)&`. The reply must confirm the callback.
/// 2. **Authorization** (§2.2): the user opens `authorizeURL?oauth_token=…`
///    (or `authenticateURL`, see ``authorizationPage``) and comes back to the
///    callback with `oauth_token` and `oauth_verifier`, or reads a PIN.
/// 3. **Access token** (§2.3): `POST accessTokenURL` with `oauth_token` and
///    `oauth_verifier`, signed with `enc(consumer_secret)&enc(request_token_secret)`.
///
/// Like ``OAuth2Client`` it runs all in one (``authorize(using:options:)``) or
/// in two requests for a web backend (``startAuthorization(callback:page:additionalParameters:)``,
/// then ``exchange(callback:pending:label:)``). Everything provider-specific
/// comes from the descriptor; nothing here names a provider.
public struct OAuth1Client: Authenticator {
    /// The `oauth_callback` value for the out-of-band (PIN) flow (RFC 5849 §2.1).
    public static let outOfBand = "oob"

    public let descriptor: ProviderDescriptor
    public let settings: ClientSettings
    /// Signs every request with the consumer key and secret; ``OAuth1Signer/description`` hides the secret.
    public let signer: OAuth1Signer
    /// Which page step 2 opens. The caller chooses per client rather than per
    /// attempt: ``AuthorizationOptions`` is shared with OAuth 2.0, and its
    /// `additionalParameters` are passed to the provider as they are (Twitter's
    /// `force_login`, `screen_name`), so a reserved key there would be a trap.
    public var authorizationPage: OAuth1AuthorizationPage = .authorize
    private let endpoints: OAuth1Endpoints
    private let http: any HTTPClient
    private let logger: Logger
    private let now: @Sendable () -> Date

    /// - Throws: ``AuthKitError/missingSetting(providerID:setting:hint:)`` when the
    ///   consumer key (client id) or secret is missing; ``AuthKitError/unsupported(_:)``
    ///   for a descriptor that is not OAuth 1.0a or names an unknown signature method.
    public init(
        descriptor: ProviderDescriptor,
        settings: ClientSettings,
        httpClient: any HTTPClient = URLSessionHTTPClient(),
        logger: Logger = Logger(label: "authkit.oauth1"),
        nonceAndTimestamp: NonceAndTimestamp = .live,
        now: @escaping @Sendable () -> Date = { Date() }
    ) throws {
        guard descriptor.protocol == .oauth1, let endpoints = descriptor.oauth1 else {
            throw AuthKitError.unsupported("\(descriptor.displayName) is an \(descriptor.protocol.rawValue) provider; OAuth1Client runs OAuth 1.0a providers only.")
        }
        guard let consumerKey = settings.clientID, !consumerKey.isEmpty else {
            throw AuthKitError.missingSetting(
                providerID: descriptor.id, setting: "consumer key (client id)",
                hint: ClientSettings.hint(providerID: descriptor.id, field: "clientID", flag: "--client-id", environmentSuffix: "CLIENT_ID"))
        }
        guard let consumerSecret = settings.clientSecret, !consumerSecret.isEmpty else {
            throw AuthKitError.missingSetting(
                providerID: descriptor.id, setting: "consumer secret (client secret)",
                hint: ClientSettings.hint(providerID: descriptor.id, field: "clientSecret", flag: "--client-secret", environmentSuffix: "CLIENT_SECRET"))
        }
        let methodName = endpoints.signatureMethod ?? OAuth1SignatureMethod.hmacSHA1.rawValue
        guard let method = OAuth1SignatureMethod(rawValue: methodName) else {
            throw AuthKitError.unsupported("\(descriptor.id): signature method '\(methodName)' is not supported; use HMAC-SHA1, HMAC-SHA256 or PLAINTEXT.")
        }
        for (field, url) in [("requestTokenURL", endpoints.requestTokenURL), ("authorizeURL", endpoints.authorizeURL),
                             ("accessTokenURL", endpoints.accessTokenURL)] where URL(string: url)?.host == nil || url.contains("{") {
            throw AuthKitError.invalidFile([FileIssue(
                file: descriptor.id, field: "oauth1.\(field)",
                problem: "'\(url)' is not an absolute URL without placeholders, which OAuth 1.0a endpoints must be.")])
        }
        self.descriptor = descriptor
        self.settings = settings
        self.endpoints = endpoints
        self.signer = OAuth1Signer(consumerKey: consumerKey, consumerSecret: consumerSecret, signatureMethod: method,
                                   nonceAndTimestamp: nonceAndTimestamp)
        self.http = httpClient
        self.logger = logger
        self.now = now
    }

    // MARK: - The callback

    /// The callback used when the caller gives none: the configured redirect
    /// URI (`oob` there selects the PIN flow, giving `nil`), else the
    /// descriptor's loopback default `http://127.0.0.1/callback`.
    public var defaultCallbackURI: URL? {
        if let configured = settings.redirectURI {
            return configured == Self.outOfBand ? nil : URL(string: configured)
        }
        return (descriptor.redirect ?? RedirectSettings()).uri
    }

    /// True when a loopback listener may choose the port (RFC 8252 §7.3).
    public var redirectPortIsFlexible: Bool {
        settings.redirectURI == nil && (descriptor.redirect ?? RedirectSettings()).portIsFlexible
    }

    // MARK: - Steps 1 and 2: request token and authorization URL

    /// Gets a request token for `callback` (RFC 5849 §2.1) and builds the URL
    /// the user opens (§2.2).
    ///
    /// - Parameters:
    ///   - callback: where the provider sends the user back; `nil` for the
    ///     out-of-band flow, in which the provider shows a PIN.
    ///   - page: overrides ``authorizationPage`` for this attempt.
    ///   - additionalParameters: added to the authorization URL's query
    ///     (e.g. `force_login=true`); `oauth_token` is reserved.
    public func startAuthorization(
        callback: URL?, page: OAuth1AuthorizationPage? = nil, additionalParameters: [String: String] = [:]
    ) async throws -> (url: URL, pending: OAuth1PendingAuthorization) {
        if additionalParameters["oauth_token"] != nil {
            throw AuthKitError.unsupported("The authorization parameter 'oauth_token' is set by AuthKit and cannot be overridden.")
        }
        let callbackValue = callback?.absoluteString ?? Self.outOfBand
        var url = try Self.url(endpoints.requestTokenURL, field: "requestTokenURL", descriptor: descriptor)
        let extra = (endpoints.requestTokenParameters ?? [:]).sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        if !extra.isEmpty { url = try Self.appendingQuery(extra, to: url) }

        let header = try signer.authorizationHeader(
            method: "POST", url: url, protocolParameters: [("oauth_callback", callbackValue)])
        let request = HTTPRequest(method: "POST", url: url, headers: [("Authorization", header)])
        let fields = try ReplyParser(step: .requestToken, secrets: knownSecrets()).fields(
            of: try await send(request, step: .requestToken), required: ["oauth_token", "oauth_token_secret"])
        let values = Dictionary(fields, uniquingKeysWith: { first, _ in first })

        // RFC 5849 §2.1: "oauth_callback_confirmed: MUST be present and set to
        // 'true'". Its absence means an OAuth 1.0 server, open to session fixation.
        if endpoints.requireCallbackConfirmed ?? true, values["oauth_callback_confirmed"] != "true" {
            throw AuthKitError.invalidResponse(
                step: .requestToken,
                reason: "the reply lacks oauth_callback_confirmed=true, which RFC 5849 §2.1 requires (it shows the callback was registered). For a server that only speaks OAuth 1.0, set \"requireCallbackConfirmed\": false under \"oauth1\" in the provider file.")
        }
        let pending = OAuth1PendingAuthorization(
            providerID: descriptor.id, requestToken: values["oauth_token"] ?? "",
            requestTokenSecret: values["oauth_token_secret"] ?? "", callback: callbackValue, createdAt: now())

        let pageURL: String
        switch page ?? authorizationPage {
        case .authenticate: pageURL = endpoints.authenticateURL ?? endpoints.authorizeURL
        case .authorize: pageURL = endpoints.authorizeURL
        }
        let query = [("oauth_token", pending.requestToken)]
            + additionalParameters.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        let authorizationURL = try Self.appendingQuery(query, to: try Self.url(pageURL, field: "authorizeURL", descriptor: descriptor))
        return (authorizationURL, pending)
    }

    // MARK: - Step 3: the callback and the access token

    /// Checks `callback` against `pending` and returns `oauth_verifier`; see
    /// `CallbackParser` for the checks and their order.
    /// - Throws: ``AuthKitError/redirect(_:)`` for a URL that does not answer
    ///   this attempt; ``AuthKitError/authorizationFailed(_:)`` (`access_denied`)
    ///   when the user declined.
    public func verifier(from callback: URL, pending: OAuth1PendingAuthorization) throws -> String {
        guard pending.providerID == descriptor.id else {
            throw AuthKitError.unsupported("This attempt was started with '\(pending.providerID)', not '\(descriptor.id)'.")
        }
        return try CallbackParser().verifier(from: callback, for: pending)
    }

    /// Checks the callback, then exchanges its verifier for a credential.
    public func exchange(callback: URL, pending: OAuth1PendingAuthorization, label: String? = nil) async throws -> Credential {
        try await exchange(verifier: try verifier(from: callback, pending: pending), pending: pending, label: label)
    }

    /// Exchanges the request token and verifier (from the callback, or the PIN
    /// the user typed) for the access token (RFC 5849 §2.3).
    public func exchange(verifier: String, pending: OAuth1PendingAuthorization, label: String? = nil) async throws -> Credential {
        let verifier = verifier.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !verifier.isEmpty else { throw AuthKitError.redirect(.missingVerifier) }
        let url = try Self.url(endpoints.accessTokenURL, field: "accessTokenURL", descriptor: descriptor)
        let header = try signer.authorizationHeader(
            method: "POST", url: url, token: pending.requestToken, tokenSecret: pending.requestTokenSecret,
            protocolParameters: [("oauth_verifier", verifier)])
        let request = HTTPRequest(method: "POST", url: url, headers: [("Authorization", header)])
        let response = try await send(request, step: .accessToken)
        let receivedAt = now()
        let fields = try ReplyParser(step: .accessToken, secrets: knownSecrets(pending.requestTokenSecret))
            .fields(of: response, required: ["oauth_token", "oauth_token_secret"])
        return makeCredential(fields, receivedAt: receivedAt, label: label)
    }

    /// A ``Credential`` of kind `.oauth1`: `accessToken` is `oauth_token`,
    /// `tokenSecret` is `oauth_token_secret`, and the other fields of the reply
    /// (Twitter's `user_id`, `screen_name`) are kept in `rawFields`. The token
    /// and its secret are not repeated there, so they live in one place.
    private func makeCredential(_ fields: [(String, String)], receivedAt: Date, label: String?) -> Credential {
        var token = "", secret = ""
        var raw = [String: JSONValue]()
        for (name, value) in fields {
            switch name {
            case "oauth_token": if token.isEmpty { token = value }
            case "oauth_token_secret": if secret.isEmpty { secret = value }
            default: if raw[name] == nil { raw[name] = .string(value) }
            }
        }
        return Credential(
            providerID: descriptor.id, label: label, kind: .oauth1, accessToken: token, tokenType: "OAuth",
            tokenSecret: secret, obtainedAt: receivedAt, rawFields: raw)
    }

    // MARK: - The whole flow

    /// Runs the three steps with `userAgent`.
    ///
    /// The session's redirect URI is `options.redirectURI`, else
    /// ``defaultCallbackURI``; `nil` asks for the PIN flow. The agent may answer
    /// with the callback URL (`.redirect`) or the PIN the user typed
    /// (`.verificationCode`). `options.additionalParameters` go to the
    /// authorization URL; `options.scopes` has no meaning in OAuth 1.0a (a
    /// provider's access level is a descriptor `requestTokenParameters` entry,
    /// such as Twitter's `x_auth_access_type`).
    public func authorize(using userAgent: some UserAgent, options: AuthorizationOptions) async throws -> Credential {
        let requested = options.redirectURI ?? defaultCallbackURI
        let attempt = AttemptState()
        let page = authorizationPage
        let session = AuthorizationSession(
            providerName: descriptor.displayName,
            redirectURI: requested,
            redirectPortIsFlexible: options.redirectURI == nil && requested != nil && redirectPortIsFlexible,
            makeAuthorizationURL: { [self] redirect in
                let (url, pending) = try await startAuthorization(
                    callback: redirect, page: page, additionalParameters: options.additionalParameters)
                attempt.set(pending)
                return url
            },
            validateRedirect: { [self] url in
                guard let pending = attempt.current else { throw AuthKitError.redirect(.missingRequestToken) }
                do {
                    _ = try verifier(from: url, pending: pending)
                } catch AuthKitError.authorizationFailed {
                    return // a genuine answer: the user declined
                }
            })
        let result = try await userAgent.run(session)
        guard let pending = attempt.current else {
            throw AuthKitError.unsupported("The user agent returned without asking for the authorization URL.")
        }
        switch result {
        case .redirect(let url, _):
            return try await exchange(callback: url, pending: pending, label: options.label)
        case .verificationCode(let code):
            return try await exchange(verifier: code, pending: pending, label: options.label)
        }
    }

    // MARK: - Using the credential

    /// Adds `Authorization: OAuth …` (RFC 5849 §3.5.1) signed with `credential`.
    ///
    /// The URL's query parameters are signed, and so is the body when
    /// `Content-Type` is `application/x-www-form-urlencoded` (§3.4.1.3.1); set
    /// the body before calling this, and do not change the request afterwards.
    public func authorize(_ request: URLRequest, with credential: Credential) throws -> URLRequest {
        guard let url = request.url else { throw AuthKitError.unsupported("The request has no URL to sign.") }
        let contentType = request.value(forHTTPHeaderField: "Content-Type")
        if request.httpBodyStream != nil, SignatureBaseString.isFormEncoded(contentType) {
            throw AuthKitError.unsupported("A form-encoded body must be signed, so it must be set as httpBody, not as a stream.")
        }
        var request = request
        request.setValue(try header(method: request.httpMethod ?? "GET", url: url, contentType: contentType,
                                    body: request.httpBody, credential: credential),
                         forHTTPHeaderField: "Authorization")
        return request
    }

    /// ``authorize(_:with:)-(URLRequest,_)`` for AuthKit's own ``HTTPRequest``.
    public func authorize(_ request: HTTPRequest, with credential: Credential) throws -> HTTPRequest {
        var request = request
        request.setHeader("Authorization", try header(method: request.method, url: request.url,
                                                      contentType: request.header("Content-Type"),
                                                      body: request.body, credential: credential))
        return request
    }

    private func header(method: String, url: URL, contentType: String?, body: Data?, credential: Credential) throws -> String {
        guard credential.kind == .oauth1, let tokenSecret = credential.tokenSecret else {
            throw AuthKitError.unsupported("\(credential.key) is not an OAuth 1.0a credential (it has no token secret); use the authenticator that issued it.")
        }
        guard credential.providerID == descriptor.id else {
            throw AuthKitError.unsupported("\(credential.key) belongs to '\(credential.providerID)'; it cannot be signed with \(descriptor.displayName)'s consumer key.")
        }
        return try signer.authorizationHeader(method: method, url: url, contentType: contentType, body: body,
                                              token: credential.accessToken, tokenSecret: tokenSecret)
    }

    // MARK: - Refresh and revocation

    /// OAuth 1.0a access tokens do not expire and RFC 5849 has no refresh:
    /// always throws ``AuthKitError/unsupported(_:)``.
    public func refresh(_ credential: Credential) async throws -> Credential {
        throw AuthKitError.unsupported(
            "\(descriptor.displayName) uses OAuth 1.0a, whose access tokens do not expire and cannot be refreshed; if the token stopped working, sign in again.")
    }

    /// Invalidates the token at the descriptor's `oauth1.invalidateTokenURL`
    /// (a `POST` signed with the token itself; Twitter's `oauth/invalidate_token`).
    /// RFC 5849 defines no revocation, so without that field this throws
    /// ``AuthKitError/unsupported(_:)``.
    public func revoke(_ credential: Credential) async throws {
        guard let invalidate = endpoints.invalidateTokenURL else {
            throw AuthKitError.unsupported("The \(descriptor.displayName) descriptor names no token invalidation endpoint; delete the credential locally, and revoke the app's access in the provider's settings.")
        }
        let url = try Self.url(invalidate, field: "invalidateTokenURL", descriptor: descriptor)
        let request = try authorize(HTTPRequest(method: "POST", url: url), with: credential)
        let response = try await send(request, step: .revocation)
        if (200...299).contains(response.status) { return }
        _ = try ReplyParser(step: .revocation, secrets: knownSecrets(credential.tokenSecret ?? "")).fields(of: response, required: [])
        throw AuthKitError.invalidResponse(step: .revocation, reason: "HTTP \(response.status)")
    }

    // MARK: - Requests

    /// What error messages must never show: the consumer secret and the token secret in use.
    private func knownSecrets(_ tokenSecret: String = "") -> [String] {
        [settings.clientSecret ?? "", tokenSecret].filter { !$0.isEmpty }
    }

    private func send(_ request: HTTPRequest, step: FlowStep) async throws -> HTTPResponse {
        logger.debug("\(step.rawValue): \(request.method) \(request.displayURL)")
        let response = try await http.send(request)
        logger.debug("\(step.rawValue): HTTP \(response.status), \(response.body.count) bytes")
        return response
    }

    private static func url(_ text: String, field: String, descriptor: ProviderDescriptor) throws -> URL {
        guard let url = URL(string: text), url.host != nil else {
            throw AuthKitError.invalidFile([FileIssue(file: descriptor.id, field: "oauth1.\(field)", problem: "'\(text)' is not an absolute URL.")])
        }
        return url
    }

    /// Appends `pairs` to `url`'s query, keeping the query it has (RFC 5849 §2.2
    /// authorize URLs, like RFC 6749 §3.1's, may carry their own).
    private static func appendingQuery(_ pairs: [(String, String)], to url: URL) throws -> URL {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else {
            throw AuthKitError.unsupported("Could not add parameters to \(url.redactedForLogs).")
        }
        let existing = components.percentEncodedQuery.map { $0.isEmpty ? "" : $0 + "&" } ?? ""
        components.percentEncodedQuery = existing + FormURLEncoding.encode(pairs)
        guard let result = components.url else { throw AuthKitError.unsupported("Could not add parameters to \(url.redactedForLogs).") }
        return result
    }
}
