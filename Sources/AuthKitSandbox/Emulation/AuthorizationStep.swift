import AuthKit
import Crypto

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What an authorization request's parameters come to (RFC 6749 §4.1.2.1):
/// accepted, refused on an error page (the client or its redirect URI is
/// in doubt, so nothing may go there), or refused by a redirect to it.
enum AuthorizationCheck {
    case accepted(GrantLedger.PendingConsent)
    case page(String)
    case redirect(code: String, text: String, to: String, state: String?)
}

/// The authorization endpoint (RFC 6749 §4.1.1–4.1.2) and the consent page.
extension Emulator {
    /// The longest `state`, `nonce` and scope list taken: each is kept with
    /// the request until consent (and `nonce` in the code and ID token), ten
    /// thousand of each at most (``GrantLedger/limit``), so each is bounded
    /// too. RFC 6749 sets no length; AuthKit's `state` is 43 characters.
    static let maxValueBytes = 1024
    /// The longest account name the consent and device pages take: it is
    /// kept with every grant, and is in every `sub` and ID token, which
    /// OpenID Connect Core §2 bounds at 255 ASCII characters: 255 less
    /// ``subjectPrefix``. (It was 256 bytes of anything: a longer or
    /// non-ASCII name made a `sub` AuthKit's own verifier refuses.)
    static let maxAccountBytes = 255 - subjectPrefix.utf8.count
    /// What a user's `sub` is made of before the account name.
    static let subjectPrefix = "sandbox-user-"

    /// What is wrong with an account name typed on a page, or `nil`.
    static func accountProblem(_ account: String) -> String? {
        if account.utf8.count > maxAccountBytes {
            return "The account name is \(account.utf8.count) bytes; the sandbox takes at most \(maxAccountBytes)."
        }
        if !account.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) {
            return
                "The account name is in every ID token's sub, which is ASCII (OpenID Connect Core §2): "
                + "use letters, digits and punctuation, no spaces."
        }
        return nil
    }

    /// Checks the request as a strict server does, then asks for consent (or
    /// decides at once, per ``SandboxOptions/consent``). A bad `client_id` or
    /// redirect URI gets an error page and no redirect (§4.1.2.1); other
    /// problems are redirected as `error=…`.
    /// - Parameter captures: the placeholders of the endpoint's path as the
    ///   request filled them in: the `iss` of the response names them.
    func authorize(_ request: SandboxRequest, captures: [String: String] = [:]) -> SandboxResponse {
        // Routed only when the descriptor has the endpoint (a device-only one has none).
        guard let endpoint = descriptor.authorization else {
            return errorPage("This provider signs in only with the device grant.", step: "authorize")
        }
        guard let sent = request.query else {
            return errorPage("The authorization request's query is not form-encoded.", step: "authorize")
        }
        // RFC 9126 §4: a request_uri stands for the parameters pushed before.
        let query: [(String, String)]
        switch authorizationParameters(sent) {
        case .pairs(let pairs): query = pairs
        case .refused(let problem): return errorPage(problem, step: "authorize")
        }
        let parameters = Parameters(query)
        if let repeated = parameters.repeated {
            return errorPage("'\(repeated)' is sent more than once (RFC 6749 §3.1).", step: "authorize")
        }
        // What the browser carries is seen by its history, extensions and
        // logs: a client's secret (RFC 6749 §2.3.1: "MUST NOT be included in
        // the request URI") or its PKCE verifier there is no longer a secret.
        if let secret = ["client_secret", "client_assertion", "code_verifier"].first(where: { parameters.has($0) }) {
            return errorPage(
                "'\(secret)' is sent in the authorization request, which the browser carries: it is sent to the token endpoint only.",
                step: "authorize")
        }
        let consent: GrantLedger.PendingConsent
        switch checkAuthorization(parameters, endpoint: endpoint, issuer: responseIssuer(captures: captures)) {
        case .accepted(let accepted): consent = accepted
        case .page(let problem): return errorPage(problem, step: "authorize")
        case .redirect(let code, let text, let redirectURI, let state):
            return redirectResponse(
                to: redirectURI, [("error", code), ("error_description", text)], state: state,
                issuer: responseIssuer(captures: captures), step: "authorize", summary: "\(code): \(text)")
        }
        // OpenID Connect Core §3.1.2.1: prompt=none shows no page. The
        // sandbox keeps no sign-in between requests, so where it would ask
        // (consent ask) the person is not signed in (login_required,
        // §3.1.2.6); where it denies, consent is what is missing.
        let decision: SandboxOptions.Consent
        if Self.prompts(parameters).contains("none") {
            switch options.consent {
            case .approve:
                decision = .approve
            case .ask, .deny:
                let (code, text) =
                    options.consent == .ask
                    ? (
                        "login_required",
                        "prompt=none, and the sandbox keeps no sign-in: it would have to show its page"
                    )
                    : ("consent_required", "prompt=none, and the sandbox's consent is deny")
                return redirectResponse(
                    to: consent.redirectURI, [("error", code), ("error_description", text)], state: consent.state,
                    issuer: consent.issuer, step: "authorize", summary: "\(code): \(text)")
            }
        } else {
            decision = options.consent
        }
        switch decision {
        case .approve:
            return decide(consent, approve: true, account: options.defaultAccount)
        case .deny:
            return decide(consent, approve: false, account: options.defaultAccount)
        case .ask:
            let id = ledger.mint("consent")
            ledger.consents[id] = consent
            return .html(
                ConsentPage.consent(
                    provider: descriptor.name, client: options.clientID, scopes: consent.scopes, request: id,
                    approval: consent.approval, account: options.defaultAccount),
                step: "authorize",
                summary:
                    "consent page for \(scopeText(consent.scopes).isEmpty ? "no scopes" : scopeText(consent.scopes))",
                redirectsTo: consent.redirectURI)
        }
    }

    /// The values of `prompt` (OpenID Connect Core §3.1.2.1: space-separated).
    static func prompts(_ parameters: Parameters) -> [String] {
        (parameters.values["prompt"] ?? "").split(separator: " ").map(String.init)
    }

    /// An authorization request's parameters checked as a strict server
    /// checks them, at the authorization endpoint and when they are pushed
    /// (RFC 9126 §2.1: the pushed endpoint "MUST validate the pushed
    /// request as it would an authorization request").
    func checkAuthorization(_ parameters: Parameters, endpoint: AuthorizationEndpoint, issuer: String?)
        -> AuthorizationCheck
    {
        guard let clientID = parameters["client_id"] else { return .page("client_id is missing.") }
        guard ExactText.same(clientID, options.clientID) else {
            return .page("Unknown client_id. The sandbox knows one client: \(options.clientID).")
        }
        // Echoed in the redirect: a page rather than a redirect carrying it.
        if let state = parameters.values["state"], state.utf8.count > Self.maxValueBytes {
            return .page("state is \(state.utf8.count) bytes; the sandbox takes at most \(Self.maxValueBytes).")
        }
        let scopeParameter = parameters[endpoint.scopeParameter]
        var scopes = scopeParameter.map { splitScopes($0) } ?? []
        if scopes.isEmpty { scopes = descriptor.scopes.default }
        let redirectURI: String
        if let sent = parameters["redirect_uri"] {
            guard isRegistered(sent) else {
                return .page(
                    "redirect_uri is not registered for this client (registered: \(registeredRedirects.joined(separator: ", ")))."
                )
            }
            redirectURI = sent
        } else {
            // OpenID Connect Core §3.1.2.1: redirect_uri is REQUIRED in an
            // OpenID request (one with the openid scope).
            if descriptor.openID != nil, scopes.contains("openid") {
                return .page("redirect_uri is missing; an OpenID Connect request must send it (Core §3.1.2.1).")
            }
            guard registeredRedirects.count == 1 || !endpoint.sendRedirectURI else {
                return .page("redirect_uri is missing and the client registered more than one.")
            }
            redirectURI = registeredRedirects[0]
        }
        let state = parameters.values["state"]
        func refuse(_ code: String, _ text: String) -> AuthorizationCheck {
            .redirect(code: code, text: text, to: redirectURI, state: state)
        }
        if endpoint.sendResponseType || parameters.has("response_type") {
            guard let type = parameters["response_type"] else {
                return refuse("invalid_request", "response_type is missing")
            }
            guard type == "code" else {
                return refuse("unsupported_response_type", "only response_type=code is supported")
            }
        }
        // Where the descriptor puts the scopes (Slack: user_scope): a client
        // sending them as `scope` instead would get the default scopes, or others.
        if endpoint.scopeParameter != "scope", parameters.has("scope") {
            return refuse(
                "invalid_scope",
                "this provider reads the requested scopes from '\(endpoint.scopeParameter)' (authorization.scopeParameter), not 'scope'"
            )
        }
        if let problem = scopeProblem(scopeParameter, scopes) { return refuse("invalid_scope", problem) }
        if let nonce = parameters.values["nonce"], nonce.utf8.count > Self.maxValueBytes {
            return refuse(
                "invalid_request", "nonce is \(nonce.utf8.count) bytes; at most \(Self.maxValueBytes) are taken")
        }
        let prompts = Self.prompts(parameters)
        if prompts.contains("none"), prompts.count > 1 {
            return refuse("invalid_request", "prompt=none with another value (OpenID Connect Core §3.1.2.1)")
        }
        var challenge: String?
        var method: String?
        if descriptor.pkce.isEnabled || options.isPublicClient {
            challenge = parameters["code_challenge"]
            method = challenge == nil ? nil : (parameters["code_challenge_method"] ?? "plain")
            // RFC 7636 §4.2 lets a server take plain; the sandbox publishes
            // S256 only (code_challenge_methods_supported), as no descriptor
            // says its provider takes plain, and RFC 9700 §2.1.1 has clients
            // use S256. A missing method means plain (RFC 7636 §4.3).
            if let method, method != "S256" {
                return refuse(
                    "invalid_request",
                    "code_challenge_method is \(method == "plain" ? "plain (also what a missing one means, RFC 7636 §4.3)" : "not S256"); this provider takes S256 only"
                )
            }
            if let challenge, !(43...128).contains(challenge.count) {
                return refuse("invalid_request", "code_challenge must be 43 to 128 characters (RFC 7636 §4.2)")
            }
            if challenge == nil, descriptor.pkce == .required || options.isPublicClient {
                return refuse("invalid_request", "code_challenge is required (PKCE, RFC 7636)")
            }
        }
        // RFC 9449 §10: the thumbprint of the key the code is to be bound to
        // (RFC 7638: base64url of a SHA-256, 43 characters). Ignored where the
        // descriptor's provider has no DPoP, as its proofs are (RFC 6749
        // §3.1: a parameter the server does not know is ignored): kept, it
        // bound the code to a key no exchange there is asked to prove.
        let dpopJKT = descriptor.dpop == .on ? parameters["dpop_jkt"] : nil
        if let dpopJKT, !Self.isThumbprint(dpopJKT) {
            return refuse("invalid_request", "dpop_jkt is not a JWK SHA-256 thumbprint (RFC 9449 §10, RFC 7638)")
        }
        return .accepted(
            GrantLedger.PendingConsent(
                redirectURI: redirectURI, sentRedirectURI: parameters.has("redirect_uri"), scopes: scopes,
                state: state, challenge: challenge, challengeMethod: method, expiresAt: now.addingTimeInterval(600),
                nonce: parameters.values["nonce"], issuer: issuer, dpopJKT: dpopJKT))
    }

    /// Why the scopes asked for (`sent`, split into `scopes`) are refused:
    /// a list longer than ``maxValueBytes``, or a scope the descriptor does
    /// not know, where it lists the ones it knows (`invalid_scope`, RFC 6749
    /// §4.1.2.1, §5.2). The same at every endpoint that takes scopes.
    func scopeProblem(_ sent: String?, _ scopes: [String]) -> String? {
        if let sent, sent.utf8.count > Self.maxValueBytes {
            return "the scopes asked for are \(sent.utf8.count) bytes; at most \(Self.maxValueBytes) are taken"
        }
        let known = Set(descriptor.scopes.known + descriptor.scopes.default)
        if !descriptor.scopes.known.isEmpty, let unknown = scopes.first(where: { !known.contains($0) }) {
            return "unknown scope '\(DisplayText.sanitized(unknown, limit: 80))'"
        }
        return nil
    }

    /// A base64url SHA-256 (RFC 7638's thumbprint as RFC 9449 writes it).
    static func isThumbprint(_ text: String) -> Bool {
        text.utf8.count == 43 && Base64URL.decode(Substring(text))?.count == 32
    }

    /// The consent page's answer: approve or deny, as which account.
    func consent(_ request: SandboxRequest) -> SandboxResponse {
        if let refusal = crossSiteRefusal(request, step: "consent") { return refusal }
        guard case .success(let pairs) = request.bodyParameters(.form) else {
            return errorPage("The consent form is not form-encoded.", step: "consent")
        }
        let form = Parameters(pairs)
        guard let id = form["request"], let shown = ledger.consents[id] else {
            return errorPage(
                "This consent request is unknown or already answered. Start the sign-in again.", step: "consent")
        }
        // Checked before the request is taken off the ledger: a forged
        // answer must not cancel the person's pending sign-in either.
        guard ConstantTime.equals(form["approval"] ?? "", shown.approval) else {
            return errorPage(
                "This answer did not come from the consent page the sandbox showed. Answer on that page.",
                step: "consent", status: 403)
        }
        guard let pending = ledger.consents.removeValue(forKey: id) else {
            return errorPage(
                "This consent request is unknown or already answered. Start the sign-in again.", step: "consent")
        }
        guard pending.expiresAt > now else {
            return errorPage("This consent request has expired. Start the sign-in again.", step: "consent")
        }
        let account = form["account"] ?? options.defaultAccount
        if let problem = Self.accountProblem(account) { return errorPage(problem, step: "consent") }
        if let requestToken = pending.requestToken {
            return oauth1Decide(requestToken: requestToken, approve: form["decision"] == "approve", account: account)
        }
        return decide(pending, approve: form["decision"] == "approve", account: account)
    }

    /// A request addressed to another name than the sandbox's own
    /// (`127.0.0.1`, `localhost` or `[::1]` with its port): a page on
    /// `evil.example` whose name an attacker points at 127.0.0.1 (DNS
    /// rebinding) is, to the browser, on the same origin as its own
    /// requests, so it could read the device page's form value and post it.
    /// Such a request names its own host, which is refused (421, RFC 9110
    /// §15.5.20). A request without `Host` (HTTP/1.0) is taken as addressed here.
    func misaddressedRefusal(_ request: SandboxRequest) -> SandboxResponse? {
        guard let host = request.header("host") else { return nil }
        let port = request.origin.split(separator: ":").last.map(String.init) ?? ""
        let names = ["127.0.0.1", "localhost", "[::1]"]
        let own = names.map { "\($0):\(port)" } + (port == "80" ? names : [])
        guard !own.contains(where: { ExactText.sameIgnoringASCIICase($0, host) }) else { return nil }
        return errorPage(
            "This sandbox answers requests addressed to 127.0.0.1:\(port) (or localhost); this one names "
                + "'\(DisplayText.sanitized(host, limit: 80))', as a page under another name would.", step: "request",
            status: 421)
    }

    /// A form answer that a browser says another site sent (a login CSRF,
    /// RFC 6749 §10.12, against the consent and device pages): `Sec-Fetch-Site`
    /// other than `same-origin` (or `none`, typed by the person), or an
    /// `Origin` that is not this server as the browser addressed it (`Host`).
    /// Tools that send neither header (curl, tests) pass here and still need
    /// the page's value.
    func crossSiteRefusal(_ request: SandboxRequest, step: String) -> SandboxResponse? {
        if let site = request.header("sec-fetch-site"), site != "same-origin", site != "none" {
            return errorPage(
                "This answer came from another site (Sec-Fetch-Site: \(DisplayText.sanitized(site, limit: 40))); only the sandbox's own page may send it.",
                step: step, status: 403)
        }
        if let origin = request.header("origin") {
            let host = request.header("host") ?? ""
            guard !host.isEmpty, ExactText.sameIgnoringASCIICase(origin, "http://" + host) else {
                return errorPage(
                    "This answer came from another site (Origin: \(DisplayText.sanitized(origin, limit: 100))); only the sandbox's own page may send it.",
                    step: step, status: 403)
            }
        }
        return nil
    }

    private func decide(_ pending: GrantLedger.PendingConsent, approve: Bool, account: String) -> SandboxResponse {
        guard approve else {
            return redirectResponse(
                to: pending.redirectURI,
                [("error", "access_denied"), ("error_description", "The user denied the request.")],
                state: pending.state, issuer: pending.issuer, step: "consent", summary: "denied by \(account)")
        }
        let grant = ledger.newGrant(account: account, scopes: pending.scopes, at: now)
        let code = ledger.mint("code")
        ledger.codes[code] = GrantLedger.Code(
            grant: grant, redirectURI: pending.redirectURI, sentRedirectURI: pending.sentRedirectURI,
            challenge: pending.challenge, challengeMethod: pending.challengeMethod,
            expiresAt: now.addingTimeInterval(options.codeLifetime), nonce: pending.nonce, dpopJKT: pending.dpopJKT)
        var pairs = [("code", code)]
        // Where the provider names the granted scopes in the redirect (Strava).
        if let name = descriptor.authorization?.grantedScopesParameter {
            pairs.append((name, pending.scopes.joined(separator: descriptor.scopes.separator)))
        }
        return redirectResponse(
            to: pending.redirectURI, pairs, state: pending.state, issuer: pending.issuer, step: "consent",
            summary: "approved by \(account); code issued")
    }

    /// `redirectURI` with `pairs`, `state` and (RFC 9207) `iss` added to its
    /// query, and the fragment the provider appends (Instagram's `#_`).
    func redirectResponse(
        to redirectURI: String, _ pairs: [(String, String)], state: String?, issuer: String?, step: String,
        summary: String
    ) -> SandboxResponse {
        var pairs = pairs
        if let state { pairs.append(("state", state)) }
        if let issuer { pairs.append(("iss", issuer)) }
        // A registered redirect URI parses (isRegistered compared it as a URL).
        var location = URL(string: redirectURI)?.appendingQuery(pairs)?.absoluteString ?? redirectURI
        if let fragment = descriptor.redirect.appendedFragment { location += "#" + fragment }
        return .redirect(location, step: step, summary: summary)
    }

    func errorPage(_ text: String, step: String, status: Int = 400) -> SandboxResponse {
        .html(
            ConsentPage.message(title: "\(descriptor.name) sandbox: request refused", text, isError: true),
            status: status, step: step, summary: text)
    }

    func splitScopes(_ text: String) -> [String] {
        let separators = Set(descriptor.scopes.separator + " ")
        return text.split { separators.contains($0) }.map(String.init)
    }

    /// RFC 7636 §4.6: `BASE64URL(SHA256(verifier))` for S256, the verifier itself for plain.
    static func verifies(verifier: String, challenge: String, method: String) -> Bool {
        guard (43...128).contains(verifier.count),
            verifier.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-._~".contains($0)) })
        else {
            return false
        }
        let expected: String
        if method == "S256" {
            expected = Data(SHA256.hash(data: Data(verifier.utf8))).base64EncodedString()
                .replacing("+", with: "-").replacing("/", with: "_").replacing("=", with: "")
        } else {
            expected = verifier
        }
        return ConstantTime.equals(expected, challenge)
    }
}
