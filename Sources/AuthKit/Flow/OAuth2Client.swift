import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Logging

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
/// Everything provider-specific comes from the descriptor; nothing here names a provider.
public struct OAuth2Client: Authenticator {
    public let descriptor: ProviderDescriptor
    public let settings: ClientSettings
    public let clientID: String
    private let authorizationURL: String
    private let tokenURL: String
    private let placeholderValues: [String: String]
    private let http: any HTTPClient
    private let logger: Logger
    private let now: @Sendable () -> Date
    private let coordinator = RefreshCoordinator()
    /// Called with every refreshed credential, so it can be persisted at once
    /// (a rotated refresh token that is not saved is lost).
    public var onRefresh: (@Sendable (Credential) async -> Void)?

    /// - Throws: ``AuthKitError/missingSetting(providerID:setting:hint:)`` when the
    ///   client id or a placeholder value is missing; ``AuthKitError/unsupported(_:)``
    ///   for a descriptor that is not OAuth 2.0.
    public init(
        descriptor: ProviderDescriptor,
        settings: ClientSettings,
        httpClient: any HTTPClient = URLSessionHTTPClient(),
        logger: Logger = Logger(label: "authkit.oauth2"),
        now: @escaping @Sendable () -> Date = { Date() }
    ) throws {
        guard descriptor.protocol == .oauth2, let authorization = descriptor.authorization, let token = descriptor.token else {
            throw AuthKitError.unsupported("\(descriptor.displayName) is an \(descriptor.protocol.rawValue) provider; OAuth2Client runs OAuth 2.0 providers only.")
        }
        guard let clientID = settings.clientID, !clientID.isEmpty else {
            throw AuthKitError.missingSetting(
                providerID: descriptor.id, setting: "client id",
                hint: ClientSettings.hint(providerID: descriptor.id, field: "clientID", flag: "--client-id", environmentSuffix: "CLIENT_ID"))
        }
        var placeholderValues = [String: String]()
        for (name, spec) in descriptor.placeholders ?? [:] {
            if let value = settings.placeholders?[name] ?? spec.default { placeholderValues[name] = value }
        }
        self.descriptor = descriptor
        self.settings = settings
        self.clientID = clientID
        self.placeholderValues = placeholderValues
        self.http = httpClient
        self.logger = logger
        self.now = now
        let variables = TemplateVariables(values: placeholderValues)
        self.authorizationURL = try variables.render(authorization.url, inURL: true, field: "authorization.url", providerID: descriptor.id)
        self.tokenURL = try variables.render(token.url, inURL: true, field: "token.url", providerID: descriptor.id)
    }

    // MARK: - Redirect

    /// The redirect URI used when the caller gives none: the configured one,
    /// else the descriptor's loopback default (`http://127.0.0.1/callback`, with
    /// its fixed port if it has one).
    public var defaultRedirectURI: URL {
        if let configured = settings.redirectURI, let url = URL(string: configured) { return url }
        return (descriptor.redirect ?? RedirectSettings()).uri
    }

    /// True when a loopback listener may choose the port (RFC 8252 §7.3).
    public var redirectPortIsFlexible: Bool {
        settings.redirectURI == nil && (descriptor.redirect ?? RedirectSettings()).portIsFlexible
    }

    private var redirectParser: RedirectParser {
        RedirectParser(appendedFragment: descriptor.redirect?.appendedFragment)
    }

    // MARK: - Step 1: the authorization request

    /// Parameters AuthKit sets itself; callers cannot override them.
    static let reservedParameters: Set<String> = [
        "response_type", "client_id", "redirect_uri", "scope", "state", "code_challenge", "code_challenge_method", "client_secret",
    ]

    /// Builds the authorization URL (RFC 6749 §4.1.1) and the attempt to keep until the redirect.
    ///
    /// A fresh 256-bit `state` and, where the descriptor allows, a PKCE S256
    /// challenge (RFC 7636 §4.3) are generated per call. Values are encoded
    /// with ``PercentEncoding`` so `+`, `&`, `=`, spaces and non-ASCII survive
    /// any form decoder. The client secret is never part of the URL.
    public func startAuthorization(
        redirectURI: URL? = nil, scopes: [String]? = nil, additionalParameters: [String: String] = [:]
    ) throws -> (url: URL, pending: PendingAuthorization) {
        for name in additionalParameters.keys where Self.reservedParameters.contains(name) {
            throw AuthKitError.unsupported("The authorization parameter '\(name)' is set by AuthKit and cannot be overridden.")
        }
        let authorization = descriptor.authorization ?? AuthorizationEndpoint(url: authorizationURL)
        let redirect = redirectURI ?? defaultRedirectURI
        if let required = descriptor.redirect?.scheme?.lowercased(), redirect.scheme?.lowercased() != required {
            // A redirect the provider is documented to refuse would fail only
            // after the user has logged in; say so now.
            throw AuthKitError.unsupported(
                "\(descriptor.displayName) only accepts \(required) redirect URIs; \(redirect.absoluteString) would be refused. Register and pass an \(required) URI (e.g. \(defaultRedirectURI.absoluteString)).")
        }
        let redirectURI = redirect.absoluteString
        let scopes = scopes ?? settings.scopes ?? descriptor.scopes?.default ?? []
        let state = SecureRandom.token()
        let pkce = descriptor.pkceMode.isEnabled ? PKCE() : nil

        var pairs = [(String, String)]()
        if authorization.sendResponseType ?? true { pairs.append(("response_type", "code")) }
        pairs.append(("client_id", clientID))
        if authorization.sendRedirectURI ?? true { pairs.append(("redirect_uri", redirectURI)) }
        if !scopes.isEmpty { pairs.append(("scope", scopes.joined(separator: descriptor.scopeSeparator))) }
        pairs.append(("state", state))
        if let pkce {
            pairs.append(("code_challenge", pkce.challenge))
            pairs.append(("code_challenge_method", pkce.method))
        }
        for (name, value) in (authorization.parameters ?? [:]).sorted(by: { $0.key < $1.key }) where !Self.reservedParameters.contains(name) {
            pairs.append((name, value))
        }
        for (name, value) in additionalParameters.sorted(by: { $0.key < $1.key }) {
            pairs.append((name, value))
        }

        guard var components = URLComponents(string: authorizationURL) else {
            throw AuthKitError.invalidFile([FileIssue(file: descriptor.id, field: "authorization.url", problem: "is not a URL")])
        }
        // RFC 6749 §3.1: the endpoint's own query component MUST be retained.
        let existing = components.percentEncodedQuery.map { $0.isEmpty ? "" : $0 + "&" } ?? ""
        components.percentEncodedQuery = existing + FormURLEncoding.encode(pairs)
        guard let url = components.url else {
            throw AuthKitError.unsupported("Could not build an authorization URL from \(authorizationURL).")
        }
        let pending = PendingAuthorization(
            providerID: descriptor.id, state: state, codeVerifier: pkce?.verifier, redirectURI: redirectURI,
            expectedIssuer: descriptor.issuer?.identifier, issuerRequired: descriptor.issuer?.includedInResponse ?? false,
            scopes: scopes, createdAt: now())
        return (url, pending)
    }

    // MARK: - Step 2: the redirect and the token request

    /// Checks `redirect` against `pending` and returns the authorization code.
    /// See ``RedirectParser`` for the checks and their order.
    public func authorizationCode(from redirect: URL, pending: PendingAuthorization) throws -> String {
        guard pending.providerID == descriptor.id else {
            throw AuthKitError.unsupported("This attempt was started with '\(pending.providerID)', not '\(descriptor.id)'.")
        }
        return try redirectParser.code(from: redirect, for: pending)
    }

    /// Checks the redirect, then exchanges its code for a credential.
    public func exchange(redirect: URL, pending: PendingAuthorization, label: String? = nil) async throws -> Credential {
        let code = try authorizationCode(from: redirect, pending: pending)
        return try await exchange(code: code, pending: pending, label: label)
    }

    /// Exchanges an authorization code (RFC 6749 §4.1.3) and runs the
    /// descriptor's follow-up exchange, if any.
    public func exchange(code: String, pending: PendingAuthorization, label: String? = nil) async throws -> Credential {
        let token = descriptor.token ?? TokenEndpoint(url: tokenURL)
        var parameters = [(String, String)]()
        if token.sendGrantType ?? true { parameters.append(("grant_type", "authorization_code")) }
        parameters.append(("code", code))
        if token.sendRedirectURI ?? descriptor.authorization?.sendRedirectURI ?? true {
            parameters.append(("redirect_uri", pending.redirectURI))
        }
        if let verifier = pending.codeVerifier { parameters.append(("code_verifier", verifier)) }

        let request = try makeRequest(
            method: "POST", url: tokenURL, displayURL: tokenURL, encoding: token.encoding ?? .form,
            parameters: parameters, headers: token.headers ?? [:],
            clientAuthentication: tokenClientAuthentication, variables: variables())
        let parser = TokenResponseParser(
            mapping: token.response ?? TokenResponseMapping(), successStatus: token.successStatus ?? [200],
            scopeSeparator: descriptor.scopeSeparator, step: .tokenExchange)
        let receivedAt = now()
        let fields = try parser.parse(try await send(request, step: .tokenExchange))
        var credential = makeCredential(fields, receivedAt: receivedAt, previous: nil, requestedScopes: pending.scopes, label: label)

        if let followUp = descriptor.followUp {
            credential = try await runTokenTemplate(followUp, step: .followUpExchange, for: credential)
        }
        return credential
    }

    /// Client authentication for the token endpoint: the descriptor's choice,
    /// else `basic` when there is a secret (RFC 6749 §2.3.1: servers MUST support
    /// it) and `none` for a public client.
    private var tokenClientAuthentication: ClientAuthentication {
        if settings.clientSecret == nil { return .none }
        return descriptor.token?.clientAuthentication ?? .basic
    }

    // MARK: - Refresh and revocation

    /// Refreshes `credential` (RFC 6749 §6), or runs the descriptor's own
    /// refresh call. Concurrent calls for one credential share one request.
    /// The old refresh token is kept when the response has none (RFC 6749 §6:
    /// the server MAY issue a new one). ``onRefresh`` is called with the result.
    public func refresh(_ credential: Credential) async throws -> Credential {
        guard descriptor.refresh != nil || credential.refreshToken != nil else {
            throw AuthKitError.unsupported(
                "\(descriptor.displayName) issued no refresh token for \(credential.key) and its descriptor names no refresh call; sign in again.")
        }
        let refreshed = try await coordinator.refresh(credential) { [self] in
            if let template = descriptor.refresh {
                return try await runTokenTemplate(template, step: .refresh, for: credential)
            }
            let token = descriptor.token ?? TokenEndpoint(url: tokenURL)
            let request = try makeRequest(
                method: "POST", url: tokenURL, displayURL: tokenURL, encoding: token.encoding ?? .form,
                parameters: [("grant_type", "refresh_token"), ("refresh_token", credential.refreshToken ?? "")],
                headers: token.headers ?? [:], clientAuthentication: tokenClientAuthentication, variables: variables(for: credential))
            let parser = TokenResponseParser(
                mapping: token.response ?? TokenResponseMapping(), successStatus: token.successStatus ?? [200],
                scopeSeparator: descriptor.scopeSeparator, step: .refresh)
            let receivedAt = now()
            let fields = try parser.parse(try await send(request, step: .refresh))
            return makeCredential(fields, receivedAt: receivedAt, previous: credential, requestedScopes: credential.scopes, label: credential.label)
        }
        await onRefresh?(refreshed)
        return refreshed
    }

    /// Revokes the access token, per the descriptor's `revocation`
    /// (RFC 7009 §2.1 by default). A 200 for an unknown token is success
    /// (RFC 7009 §2.2); 503 is reported as `temporarily_unavailable`, to retry later.
    public func revoke(_ credential: Credential) async throws {
        guard let template = descriptor.revocation else {
            throw AuthKitError.unsupported("The \(descriptor.displayName) descriptor names no revocation endpoint; delete the credential locally, and revoke the app's access in the provider's settings.")
        }
        let isRFC7009 = template.parameters == nil && template.clientAuthentication == nil
        let parameters = template.parameters.map { $0.sorted { $0.key < $1.key }.map { ($0.key, $0.value) } }
            ?? [("token", "{access_token}"), ("token_type_hint", "access_token")]
        let request = try makeRequest(
            method: template.resolvedMethod, url: template.url, displayURL: template.url, encoding: template.resolvedEncoding,
            parameters: parameters, headers: template.headers ?? [:],
            clientAuthentication: isRFC7009 ? tokenClientAuthentication : template.clientAuthentication,
            variables: variables(for: credential), renderURL: true)
        let response = try await send(request, step: .revocation)
        let success = template.successStatus ?? [200]
        if success.contains(response.status) { return }
        if response.status == 503 {
            throw AuthKitError.providerError(step: .revocation, ProviderErrorResponse(
                status: 503, code: "temporarily_unavailable", description: "the server asks to try again later (RFC 7009 §2.2.1)"))
        }
        // Not a success: report the provider's error if the body has one.
        _ = try TokenResponseParser(mapping: template.response ?? descriptor.token?.response ?? TokenResponseMapping(),
                                    successStatus: success, step: .revocation).parse(response)
    }

    // MARK: - Using the credential

    /// Adds `Authorization: Bearer …` (RFC 6750 §2.1). The token is never put in
    /// the query (RFC 6750 §2.3 is "NOT RECOMMENDED"; RFC 9700 §2.4 forbids it).
    public func authorize(_ request: URLRequest, with credential: Credential) throws -> URLRequest {
        guard credential.kind == .oauth2 else {
            throw AuthKitError.unsupported("\(credential.key) is an OAuth 1.0a credential; sign requests with the OAuth 1.0a authenticator.")
        }
        guard credential.tokenType.caseInsensitiveCompare("bearer") == .orderedSame else {
            throw AuthKitError.unsupported("Token type '\(credential.tokenType)' is not supported; AuthKit sends Bearer tokens (RFC 6750).")
        }
        var request = request
        request.setValue("Bearer \(credential.accessToken)", forHTTPHeaderField: "Authorization")
        return request
    }

    // MARK: - The whole flow

    public func authorize(using userAgent: some UserAgent, options: AuthorizationOptions) async throws -> Credential {
        let requested = options.redirectURI ?? defaultRedirectURI
        let attempt = LockedValue<PendingAuthorization?>(nil)
        let parser = redirectParser
        let session = AuthorizationSession(
            providerName: descriptor.displayName,
            redirectURI: requested,
            redirectPortIsFlexible: options.redirectURI == nil && redirectPortIsFlexible,
            makeAuthorizationURL: { [self] redirect in
                let (url, pending) = try startAuthorization(
                    redirectURI: redirect ?? requested, scopes: options.scopes,
                    additionalParameters: options.additionalParameters)
                attempt.withLock { $0 = pending }
                return url
            },
            validateRedirect: { url in
                guard let pending = attempt.current else { throw AuthKitError.redirect(.missingState) }
                do {
                    _ = try parser.code(from: url, for: pending)
                } catch AuthKitError.authorizationFailed {
                    return // a genuine answer, with the provider's error
                }
            })
        let result = try await userAgent.run(session)
        guard case .redirect(let url, _) = result else {
            throw AuthKitError.unsupported("\(descriptor.displayName) uses OAuth 2.0, which answers with a redirect URL, not a typed code.")
        }
        guard let pending = attempt.current else {
            throw AuthKitError.unsupported("The user agent returned without asking for the authorization URL.")
        }
        return try await exchange(redirect: url, pending: pending, label: options.label)
    }

    // MARK: - Requests

    private func variables(for credential: Credential? = nil) -> TemplateVariables {
        var values = placeholderValues
        values["client_id"] = clientID
        if let secret = settings.clientSecret { values["client_secret"] = secret }
        if let credential {
            values["access_token"] = credential.accessToken
            if let refreshToken = credential.refreshToken { values["refresh_token"] = refreshToken }
        }
        return TemplateVariables(values: values)
    }

    /// Runs a follow-up or refresh ``RequestTemplate`` and merges its answer into `previous`.
    private func runTokenTemplate(_ template: RequestTemplate, step: FlowStep, for previous: Credential) async throws -> Credential {
        let request = try makeRequest(
            method: template.resolvedMethod, url: template.url, displayURL: template.url, encoding: template.resolvedEncoding,
            parameters: (template.parameters ?? [:]).sorted { $0.key < $1.key }.map { ($0.key, $0.value) },
            headers: template.headers ?? [:], clientAuthentication: template.clientAuthentication,
            variables: variables(for: previous), renderURL: true)
        let parser = TokenResponseParser(
            mapping: template.response ?? TokenResponseMapping(), successStatus: template.successStatus ?? [200],
            scopeSeparator: descriptor.scopeSeparator, step: step)
        let receivedAt = now()
        let fields = try parser.parse(try await send(request, step: step))
        return makeCredential(fields, receivedAt: receivedAt, previous: previous, requestedScopes: previous.scopes, label: previous.label)
    }

    /// Builds a request: parameters rendered and encoded per `encoding`, client
    /// authentication applied (RFC 6749 §2.3.1 for `basic`: id and secret are
    /// form-urlencoded *before* base64), `Accept: application/json` unless the
    /// descriptor says otherwise.
    private func makeRequest(
        method: String, url: String, displayURL: String, encoding: BodyEncoding, parameters: [(String, String)],
        headers: [String: String], clientAuthentication: ClientAuthentication?, variables: TemplateVariables,
        renderURL: Bool = false
    ) throws -> HTTPRequest {
        var parameters = try parameters.map { name, value in
            (name, try variables.render(value, inURL: false, field: "parameter \(name)", providerID: descriptor.id))
        }
        var request = HTTPRequest(method: method, url: URL(string: "http://placeholder.invalid")!, displayURL: displayURL)
        switch clientAuthentication {
        case .basic?:
            let secret = settings.clientSecret ?? ""
            let pair = PercentEncoding.encode(clientID) + ":" + PercentEncoding.encode(secret)
            request.setHeader("Authorization", "Basic " + Data(pair.utf8).base64EncodedString())
        case .post?:
            parameters.append(("client_id", clientID))
            if let secret = settings.clientSecret { parameters.append(("client_secret", secret)) }
        case .none?:
            parameters.append(("client_id", clientID))
        case nil:
            break
        }
        let renderedURL = renderURL
            ? try variables.render(url, inURL: true, field: "URL", providerID: descriptor.id)
            : url
        guard var components = URLComponents(string: renderedURL) else {
            throw AuthKitError.unsupported("'\(displayURL)' is not a valid URL.")
        }
        switch encoding {
        case .form where parameters.isEmpty, .json where parameters.isEmpty:
            break // no body at all (Qiita's DELETE revocation)
        case .form:
            request.setHeader("Content-Type", "application/x-www-form-urlencoded")
            request.body = Data(FormURLEncoding.encode(parameters).utf8)
        case .json:
            request.setHeader("Content-Type", "application/json")
            var object = [String: String]()
            for (name, value) in parameters { object[name] = value }
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            request.body = try encoder.encode(object)
        case .query:
            if !parameters.isEmpty {
                let existing = components.percentEncodedQuery.map { $0.isEmpty ? "" : $0 + "&" } ?? ""
                components.percentEncodedQuery = existing + FormURLEncoding.encode(parameters)
            }
        }
        guard let finalURL = components.url else { throw AuthKitError.unsupported("'\(displayURL)' is not a valid URL.") }
        request.url = finalURL
        request.setHeader("Accept", "application/json")
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) {
            request.setHeader(name, try variables.render(value, inURL: false, field: "header \(name)", providerID: descriptor.id))
        }
        return request
    }

    private func send(_ request: HTTPRequest, step: FlowStep) async throws -> HTTPResponse {
        logger.debug("\(step.rawValue): \(request.method) \(request.displayURL)")
        let response = try await http.send(request)
        logger.debug("\(step.rawValue): HTTP \(response.status), \(response.body.count) bytes")
        return response
    }

    private func makeCredential(
        _ fields: TokenResponseParser.Fields, receivedAt: Date, previous: Credential?, requestedScopes: [String], label: String?
    ) -> Credential {
        Credential(
            providerID: descriptor.id,
            label: label,
            kind: .oauth2,
            accessToken: fields.accessToken,
            tokenType: fields.tokenType ?? previous?.tokenType ?? "Bearer",
            refreshToken: fields.refreshToken ?? previous?.refreshToken,
            expiresAt: fields.expiresIn.map { receivedAt.addingTimeInterval($0) }
                ?? (fields.raw.isEmpty ? previous?.expiresAt : nil),
            scopes: fields.scopes ?? previous?.scopes ?? requestedScopes,
            obtainedAt: receivedAt,
            rawFields: (previous?.rawFields ?? [:]).merging(fields.raw) { _, new in new })
    }
}
