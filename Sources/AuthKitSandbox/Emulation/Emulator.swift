import AuthKit

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The provider emulation behind a ``Sandbox``: routes each request to the
/// step of the descriptor it belongs to and answers as that provider would.
///
/// Every request is handled whole under one lock, so two clients racing (two
/// refreshes of one token) see the ledger change atomically, as they would
/// at a real server with a transactional store.
package final class Emulator: @unchecked Sendable {
    /// The descriptor as the provider publishes it (real URLs), for routes and quirks.
    let descriptor: ProviderDescriptor
    let address: SandboxAddress
    let options: SandboxOptions
    let issuer: String
    let registeredRedirects: [String]
    /// The keys ID tokens are signed with, for a descriptor with an `openid`
    /// part, the newest last: made on first use (an RSA key takes a while
    /// to make, and most emulations never sign one). A rotation adds one and
    /// keeps the one before, as providers publish both for a while. Guarded
    /// by `lock`, as every request is.
    lazy var signingKeys: [IDTokenSigner] =
        descriptor.openID.flatMap {
            IDTokenSigner(algorithms: $0.algorithms)
        }.map { [$0] } ?? []
    private let routes: [Route]
    private let lock = ThreadLock()
    /// Guarded by `lock`.
    var ledger: GrantLedger
    /// The latest events, at most ``eventsKept``, in a ring: `eventLog` is
    /// written from `eventStart` on once full. Guarded by `lock`.
    private var eventLog: [SandboxEvent] = []
    private var eventStart = 0
    /// How many events ``events`` keeps: the latest. Each is a few hundred
    /// bytes (its texts are cut short), and a long-running `authkit sandbox`
    /// (or a client in a loop) kept every one, some 650 bytes a request.
    static let eventsKept = 10_000
    private let onEvent: (@Sendable (SandboxEvent) -> Void)?

    /// What a descriptor URL is for.
    enum Role: Sendable {
        case authorize, token, device
        case followUp(RequestTemplate)
        case refresh(RequestTemplate)
        case revocation(RequestTemplate)
        case requestToken, oauth1Authorize, accessToken, invalidateToken
        case keySet, userInfo, endSession, whoAmI
        case pushedAuthorization, introspection
    }

    struct Route: Sendable {
        var role: Role
        var path: TemplatePattern
    }

    package init(
        descriptor: ProviderDescriptor, address: SandboxAddress, options: SandboxOptions,
        onEvent: (@Sendable (SandboxEvent) -> Void)?
    ) {
        self.descriptor = descriptor
        self.address = address
        self.options = options
        self.onEvent = onEvent
        self.issuer = address.issuer(for: descriptor)
        self.registeredRedirects = options.redirectURIs ?? [descriptor.redirect.uri.absoluteString]
        self.ledger = GrantLedger(deterministic: options.deterministic)
        var routes = [Route]()
        func add(_ role: Role, _ url: String?) {
            if let url { routes.append(Route(role: role, path: address.pathTemplate(of: url))) }
        }
        // Templates first: a provider's refresh may share the token URL and
        // differ only in its fixed parameters (checked in `claims`).
        if let template = descriptor.followUp { add(.followUp(template), template.url) }
        if let template = descriptor.refresh { add(.refresh(template), template.url) }
        if let template = descriptor.revocation {
            add(.revocation(template), template.url)
            // RFC 7009's revocation takes a refresh token too (token_type_hint=refresh_token),
            // and a token with no hint or another one (§2.1: the hint is
            // optional, and the server searches every kind it has): AuthKit
            // always sends one, a client found by discovery need not.
            if template.isRFC7009Revocation { add(.revocation(template.revokingRefreshToken), template.url) }
        }
        add(.device, descriptor.device?.url)
        add(.token, descriptor.token?.url)
        add(.authorize, descriptor.authorization?.url)
        add(.pushedAuthorization, descriptor.authorization?.pushedRequestURL)
        add(.introspection, descriptor.introspectionURL)
        add(.requestToken, descriptor.oauth1?.requestTokenURL)
        add(.oauth1Authorize, descriptor.oauth1?.authorizeURL)
        add(.oauth1Authorize, descriptor.oauth1?.authenticateURL)
        add(.accessToken, descriptor.oauth1?.accessTokenURL)
        add(.invalidateToken, descriptor.oauth1?.invalidateTokenURL)
        add(.keySet, descriptor.openID?.keySetURL)
        add(.userInfo, descriptor.openID?.userInfoURL)
        add(.endSession, descriptor.openID?.endSessionURL)
        add(.whoAmI, descriptor.whoAmI?.url)
        // Last: with no fixed parameter it takes any POST to its URL, and a
        // descriptor whose revocation URL is also its token (or
        // introspection) URL had every code exchange answered as a revocation.
        if let template = descriptor.revocation, template.isRFC7009Revocation {
            add(.revocation(template.revokingUnhintedToken), template.url)
        }
        self.routes = routes
    }

    /// The latest ``eventsKept`` events, oldest first.
    var events: [SandboxEvent] { lock.withLock { Array(eventLog[eventStart...] + eventLog[..<eventStart]) } }

    /// Keeps `event`, dropping the oldest when ``eventsKept`` are kept. Under `lock`.
    private func keep(_ event: SandboxEvent) {
        if eventLog.count < Self.eventsKept {
            eventLog.append(event)
        } else {
            eventLog[eventStart] = event
            eventStart = (eventStart + 1) % Self.eventsKept
        }
    }

    /// Runs `body` with the ledger, under the lock (for tests that count what is held).
    func withLedger<Result>(_ body: (GrantLedger) -> Result) -> Result { lock.withLock { body(ledger) } }

    /// Answers `request`. A DPoP proof's or a client assertion's signature
    /// is checked first, by jwt-kit, outside the lock (``verifySignatures(of:)``);
    /// the rest of the request is handled under it.
    package func respond(_ request: SandboxRequest) async -> SandboxResponse {
        respondNow(await verifySignatures(of: request))
    }

    /// The answer to a request that carries no signature to check (no DPoP
    /// proof, no client assertion), given at once on the caller's thread;
    /// `nil` for one that does, to be answered by ``respond(_:)``. Most
    /// requests are answered this way, on the server's event loop, so the
    /// sandbox does not wait for Swift's cooperative threads, which a busy
    /// test process can hold for a long time.
    ///
    /// A proof or assertion refused before any signature is checked (not a
    /// JWS, another `typ` or `alg`, no key to check it with) is refused here
    /// too: only one that jwt-kit has to verify waits for its turn.
    package func respondWithoutSignatures(_ request: SandboxRequest) -> SandboxResponse? {
        var request = request
        if let proof = request.header("dpop") {
            guard let problem = Self.proofProblem(proof) else { return nil }
            request.proof = .refused(problem)
        }
        if let assertion = request.clientAssertion {
            guard let problem = assertionProblem(assertion) else { return nil }
            request.assertion = .refused(problem)
        }
        return respondNow(request)
    }

    private func respondNow(_ request: SandboxRequest) -> SandboxResponse {
        let (response, event) = lock.withLock { () -> (SandboxResponse, SandboxEvent) in
            // Read before routing: a revocation ends the token it names.
            let line = tokensMasked(in: request.line)
            let response = route(request)
            ledger.prune(now: now)
            // Logged under the lock that routed it, so the log keeps the order requests were handled in.
            let event = Self.event(
                step: response.step, request: line, status: response.status, summary: response.summary)
            keep(event)
            return (response, event)
        }
        onEvent?(event)
        return response
    }

    /// Logs a request the HTTP server answered itself (413, 400), which no
    /// route saw: kept for ``events`` and told to `onEvent`, as answered ones are.
    /// Its path's tokens are masked too: a revocation that names one in its
    /// path, refused before routing (a body too large, no `Host`), is shown.
    func record(step: String, request line: String, status: Int, summary: String) {
        let event = lock.withLock { () -> SandboxEvent in
            let event = Self.event(step: step, request: tokensMasked(in: line), status: status, summary: summary)
            keep(event)
            return event
        }
        onEvent?(event)
    }

    /// A summary quotes what a client sent (the consent form's account name,
    /// which any local process can post), and so does the path: both are
    /// written out and cut short, so neither can drive the operator's
    /// terminal, forge a log line or fill a screen.
    private static func event(step: String, request line: String, status: Int, summary: String) -> SandboxEvent {
        SandboxEvent(
            step: step, request: DisplayText.sanitized(line, limit: 200), status: status,
            summary: DisplayText.sanitized(summary, limit: 300))
    }

    /// `line` with each path segment that is a token this sandbox issued
    /// masked: a descriptor may put one in a path (Qiita revokes with
    /// `DELETE /api/v2/access_tokens/{access_token}`), and events reach
    /// terminals and CI logs. Called with `lock` held.
    private func tokensMasked(in line: String) -> String {
        guard line.contains("/") else { return line }
        return line.split(separator: "/", omittingEmptySubsequences: false).map { segment in
            let text = String(segment)
            return ledger.accessTokens[text] != nil || ledger.refreshTokens[text] != nil ? "••••" : text
        }.joined(separator: "/")
    }

    // MARK: - Routing

    private func route(_ request: SandboxRequest) -> SandboxResponse {
        if let refusal = misaddressedRefusal(request) { return refusal }
        if let refusal = repeatedCredentialRefusal(request) { return refusal }
        switch (request.method, request.path) {
        case ("GET", "/"): return index()
        case ("POST", "/consent"): return consent(request)
        case ("GET", "/device"), ("POST", "/device"): return deviceVerification(request)
        case (_, "/whoami"), (_, "/echo"): return resource(request)
        // Not from another site's page: a POST any page can send made an
        // RSA key on the event loop at every call, stalling every sign-in.
        case ("POST", "/rotate-keys"): return crossSiteRefusal(request, step: "rotate-keys") ?? rotateKeys()
        case ("GET", let path) where path.hasPrefix("/.well-known/oauth-authorization-server"):
            return metadata(path: path)
        default: break
        }
        var allowed: [String] = []
        for route in routes {
            guard let captures = route.path.match(request.path, decodingPercent: true) else { continue }
            let methods = acceptedMethods(route.role)
            allowed += methods.filter { !allowed.contains($0) }
            guard methods.contains(request.method) else { continue }
            if let response = handle(route.role, request, pathCaptures: captures) { return response }
        }
        if !allowed.isEmpty {
            // RFC 9110 §15.5.6: a 405 "MUST generate an Allow header field"
            // listing the methods the resource takes.
            return .json(
                .object([
                    "error": .string("invalid_request"),
                    "error_description": .string("\(request.method) is not what \(descriptor.name) takes here"),
                ]),
                status: 405, step: "unknown", summary: "method not allowed",
                headers: [("Allow", allowed.joined(separator: ", "))])
        }
        return .json(
            .object([
                "error": .string("not_found"),
                "error_description": .string("the sandbox emulates \(descriptor.name); GET / lists its endpoints"),
            ]),
            status: 404, step: "unknown", summary: "no such endpoint")
    }

    /// A request with two `DPoP` fields (RFC 9449 §4.3: "not more than one")
    /// or two `Authorization` fields (one credential; which of two a server
    /// reads is its own choice): refused, not answered by the first.
    private func repeatedCredentialRefusal(_ request: SandboxRequest) -> SandboxResponse? {
        for (name, code) in [("dpop", "invalid_dpop_proof"), ("authorization", "invalid_request")]
        where request.headers.lazy.filter({ $0.name == name }).count > 1 {
            return .json(
                .object([
                    "error": .string(code),
                    "error_description": .string(
                        "the request carries more than one \(name == "dpop" ? "DPoP" : "Authorization") field"),
                ]),
                status: 400, step: "request", summary: "\(name == "dpop" ? "DPoP" : "Authorization") field repeated")
        }
        return nil
    }

    /// The response for `role`, or `nil` when the request is not this route's
    /// (another method, or a template whose fixed parameters differ).
    /// The methods each endpoint takes: what the descriptor's templates and
    /// OAuth 1.0a steps name, and what RFC 6749, RFC 8628, RFC 9126, RFC 7662
    /// and OpenID Connect prescribe for the rest.
    private func acceptedMethods(_ role: Role) -> [String] {
        switch role {
        case .authorize, .oauth1Authorize, .keySet, .whoAmI: ["GET"]
        case .token, .device, .invalidateToken, .pushedAuthorization, .introspection: ["POST"]
        case .followUp(let template), .refresh(let template), .revocation(let template): [template.method.uppercased()]
        case .requestToken: [descriptor.oauth1?.requestTokenMethod].compactMap { $0 }
        case .accessToken: [descriptor.oauth1?.accessTokenMethod].compactMap { $0 }
        case .userInfo, .endSession: ["GET", "POST"]
        }
    }

    /// The answer of the endpoint `role` for a request whose method it
    /// takes (``acceptedMethods(_:)``); `nil` when a template's fixed
    /// parameters are not the request's.
    private func handle(_ role: Role, _ request: SandboxRequest, pathCaptures: [String: String]) -> SandboxResponse? {
        switch role {
        case .authorize: return authorize(request, captures: pathCaptures)
        case .token: return token(request, captures: pathCaptures)
        case .device: return deviceAuthorization(request)
        case .followUp(let template), .refresh(let template), .revocation(let template):
            guard let call = TemplateCall(template: template, request: request, pathCaptures: pathCaptures) else {
                return nil
            }
            return templateStep(role, call)
        case .requestToken: return oauth1RequestToken(request)
        case .oauth1Authorize: return oauth1Authorize(request)
        case .accessToken: return oauth1AccessToken(request)
        case .invalidateToken: return oauth1Invalidate(request)
        case .keySet: return keySet(request)
        case .userInfo: return userInfo(request)
        case .endSession: return endSession(request)
        case .whoAmI: return whoAmI(request)
        case .pushedAuthorization: return pushAuthorization(request)
        case .introspection: return introspect(request)
        }
    }

    private func index() -> SandboxResponse {
        let urls = [
            descriptor.authorization?.url, descriptor.token?.url, descriptor.device?.url, descriptor.followUp?.url,
            descriptor.refresh?.url, descriptor.revocation?.url, descriptor.oauth1?.requestTokenURL,
            descriptor.oauth1?.authorizeURL, descriptor.oauth1?.accessTokenURL, descriptor.openID?.keySetURL,
            descriptor.openID?.userInfoURL, descriptor.openID?.endSessionURL,
        ].compactMap { $0 }
        let items = urls.map { "<li><code>\(ConsentPage.escape(address.rewrite($0)))</code></li>" }.joined()
        return .html(
            ConsentPage.page(
                title: "\(descriptor.name) sandbox",
                body: """
                    <p>Emulating \(ConsentPage.escape(descriptor.name)) from <code>\(ConsentPage.escape(descriptor.source))</code>.
                    Client id <code>\(ConsentPage.escape(options.clientID))</code>.</p>
                    <ul>\(items)<li><code>/whoami</code>, <code>/echo</code> (protected resource)</li></ul>
                    """), step: "index", summary: "index page")
    }

    // MARK: - Shared checks

    var now: Date { options.now() }

    /// RFC 6749 §2.3: the client authenticates one way only, the way the
    /// descriptor says (a client without a secret: as its public clients
    /// do, `client_id` alone unless `token.publicClientAuthentication` says
    /// otherwise). Where the descriptor says this grant takes no public
    /// client (`requiresClientSecret` and its kin), a client without a secret
    /// is refused, as the provider refuses it.
    /// - Returns: the client id that authenticated.
    func authenticateClient(
        _ request: SandboxRequest, _ parameters: Parameters, as expected: ClientAuthentication?,
        secretRequired: Bool = false
    ) throws -> String? {
        guard let expected else { return nil }
        // RFC 7523 §2.2: a client with a key (or one the descriptor has use
        // client_secret_jwt) authenticates with an assertion instead.
        if parameters.has("client_assertion") || parameters.has("client_assertion_type") {
            return try authenticateByAssertion(request, parameters, as: expected)
        }
        let basic = try Self.basicCredentials(in: request)
        let bodySecret = parameters["client_secret"]
        if basic != nil, bodySecret != nil {
            throw Refusal.invalidRequest("the client authenticated in more than one way (RFC 6749 §2.3)")
        }
        guard let secret = options.clientSecret else {
            // A client registered with a key and no secret is confidential:
            // its key is how it authenticates, and an id alone is not enough
            // (a client that stopped sending its assertion must be refused).
            if options.clientKey != nil {
                throw Refusal.invalidClient(
                    "this client authenticates with its key: send client_assertion (RFC 7523 §2.2)")
            }
            if secretRequired {
                throw Refusal.invalidClient(
                    "\(descriptor.name) has no public clients for this grant (the descriptor's requiresClientSecret): a client without a secret is refused"
                )
            }
            if expected != .none, descriptor.token?.publicClientAuthentication == .basic {
                // The provider's own way for public clients: HTTP Basic with
                // the id and an empty password (Reddit's installed apps).
                guard let (id, sent) = basic else {
                    throw Refusal.invalidClient(
                        "expected HTTP Basic with the client id and an empty password (the descriptor's publicClientAuthentication is basic)"
                    )
                }
                guard sent.isEmpty, bodySecret == nil else {
                    throw Refusal.invalidClient("this client is public (it has no secret) but sent one")
                }
                guard ExactText.same(id, options.clientID) else { throw Refusal.invalidClient("unknown client_id") }
                return id
            }
            // A public client: an id, and nothing that looks like a secret.
            guard basic == nil, bodySecret == nil else {
                throw Refusal.invalidClient("this client is public (it has no secret) but sent one")
            }
            guard let id = parameters["client_id"] else { throw Refusal.invalidRequest("client_id is missing") }
            guard ExactText.same(id, options.clientID) else { throw Refusal.invalidClient("unknown client_id") }
            return id
        }
        switch expected {
        case .basic:
            guard let (id, sent) = basic else {
                throw Refusal.invalidClient(
                    "expected HTTP Basic client authentication (the descriptor's clientAuthentication is basic)")
            }
            guard ExactText.same(id, options.clientID), ConstantTime.equals(sent, secret) else {
                throw Refusal.invalidClient("wrong client id or secret")
            }
            // A body naming another client than the one authenticated: which
            // of the two a server goes by is its own choice.
            if let named = parameters["client_id"], !ExactText.same(named, id) {
                throw Refusal.invalidRequest("client_id in the body is not the client HTTP Basic authenticated")
            }
            return id
        case .post:
            guard basic == nil else {
                throw Refusal.invalidClient(
                    "expected client_id and client_secret in the body (clientAuthentication post), got HTTP Basic")
            }
            guard let id = parameters["client_id"], let sent = bodySecret else {
                throw Refusal.invalidClient(
                    "client_id and client_secret are required in the body (clientAuthentication post)")
            }
            guard ExactText.same(id, options.clientID), ConstantTime.equals(sent, secret) else {
                throw Refusal.invalidClient("wrong client id or secret")
            }
            return id
        case .none:
            guard let id = parameters["client_id"] else { throw Refusal.invalidRequest("client_id is missing") }
            guard ExactText.same(id, options.clientID) else { throw Refusal.invalidClient("unknown client_id") }
            // The step takes no secret (GitHub's device grant), but one sent
            // is still checked: a wrong one passed unnoticed here, to be
            // refused by the step that needs it.
            if let (basicID, sent) = basic {
                guard ExactText.same(basicID, id), ConstantTime.equals(sent, secret) else {
                    throw Refusal.invalidClient("wrong client id or secret")
                }
            } else if let sent = bodySecret, !ConstantTime.equals(sent, secret) {
                throw Refusal.invalidClient("wrong client id or secret")
            }
            return id
        case .clientSecretJWT, .privateKeyJWT:
            throw Refusal.invalidClient(
                "expected a client assertion (clientAuthentication \(expected.rawValue), RFC 7523 §2.2)")
        }
    }

    /// `Basic base64(urlencode(id):urlencode(secret))` (RFC 6749 §2.3.1),
    /// or `nil` when the request has no Basic `Authorization`. One that does
    /// not decode is refused, not taken for none: taken for none, a public
    /// client's secret or a second way of authenticating passed unseen,
    /// and a secret with a bare `%` was told "expected HTTP Basic".
    static func basicCredentials(in request: SandboxRequest) throws -> (String, String)? {
        guard let header = request.header("authorization"), header.lowercased().hasPrefix("basic ") else {
            return nil
        }
        guard let data = Data(base64Encoded: String(header.dropFirst(6)).trimmingSpaces()),
            let text = String(data: data, encoding: .utf8), let colon = text.firstIndex(of: ":"),
            let id = PercentEncoding.decode(String(text[..<colon]), plusAsSpace: true),
            let secret = PercentEncoding.decode(String(text[text.index(after: colon)...]), plusAsSpace: true)
        else {
            throw Refusal.invalidClient(
                "the Authorization header's Basic credentials do not decode: base64 of client_id:client_secret, each form-encoded (RFC 6749 §2.3.1)"
            )
        }
        return (id, secret)
    }

    /// A redirect URI the client registered; a loopback `http` one matches
    /// on any port (RFC 8252 §7.3) where the provider allows that: a
    /// descriptor whose redirect port is fixed (`redirect.port`: Discord,
    /// Qiita, whose documentation does not say varying ports work) says the
    /// user registers that one port, and another is refused, as the
    /// provider may refuse it.
    func isRegistered(_ uri: String) -> Bool {
        registeredRedirects.contains { registered in
            if ExactText.same(registered, uri) { return true }
            // Each one its own: the descriptor's default, listed beside the
            // ones `sandbox serve --redirect-uri` adds, keeps its fixed port.
            let given =
                options.redirectURIs != nil && !ExactText.same(registered, descriptor.redirect.uri.absoluteString)
            guard given || descriptor.redirect.portIsFlexible else { return false }
            guard let a = URLComponents(string: registered), let b = URLComponents(string: uri),
                a.scheme == "http", b.scheme == "http", let host = a.host, DescriptorValidator.isLoopback(host: host),
                ExactText.same(a.percentEncodedHost ?? "", b.percentEncodedHost ?? ""),
                a.percentEncodedPath == b.percentEncodedPath, a.percentEncodedQuery == b.percentEncodedQuery,
                b.fragment == nil, b.user == nil, b.password == nil
            else { return false }
            return true
        }
    }

    /// Parameters that carry a secret: never taken from a POST's URL (the
    /// token an introspection or revocation request names among them).
    static let secretParameters = [
        "client_secret", "code", "code_verifier", "refresh_token", "client_assertion", "device_code", "subject_token",
        "actor_token", "password", "token", "access_token",
    ]

    /// The parameters of `request` in `encoding`, or a refusal that says what was expected.
    func parameters(of request: SandboxRequest, _ encoding: BodyEncoding) throws -> Parameters {
        switch request.bodyParameters(encoding) {
        case .success(let pairs):
            var parameters = Parameters(pairs)
            if encoding != .query, let query = request.query, !query.isEmpty {
                // A descriptor's URL may carry fixed parameters; a secret may
                // not ride there (RFC 6749 §2.3.1: client credentials "MUST
                // NOT be included in the request URI"; a code or token in a
                // URL ends up in logs), which a strict server refuses.
                let inQuery = Parameters(query)
                if let secret = Self.secretParameters.first(where: { inQuery.has($0) }) {
                    throw Refusal.invalidRequest(
                        "'\(secret)' is in the URL's query; it goes in the body (RFC 6749 §2.3.1, RFC 9700 §2.4)")
                }
                parameters.merge(inQuery)
            }
            if let repeated = parameters.repeated {
                throw Refusal.invalidRequest("'\(repeated)' is sent more than once (RFC 6749 §3.2)")
            }
            return parameters
        case .failure(let problem):
            throw Refusal.invalidRequest(problem.text)
        }
    }

    func shaped(_ refusal: Refusal, mapping: TokenResponseMapping, step: String) -> SandboxResponse {
        var headers = [(String, String)]()
        if refusal.status == 401, refusal.code == "invalid_client" {
            headers.append(("WWW-Authenticate", "Basic realm=\"sandbox\""))
        }
        headers += refusal.headers
        return .json(
            ProviderShape(mapping: mapping).error(refusal), status: refusal.status, step: step,
            summary: "\(refusal.code): \(refusal.description)", headers: headers)
    }

    func scopeText(_ scopes: [String]) -> String { scopes.joined(separator: descriptor.scopes.separator) }
}
