import AuthKit
import AuthKitOAuth1

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// OAuth 1.0a (RFC 5849): temporary credentials (§2.1), the authorization
/// page (§2.2), token credentials (§2.3), and signature checks (§3.2) on
/// every signed request, Twitter's `invalidate_token` included.
extension Emulator {
    enum OAuth1TokenKind { case none, request, access }

    struct VerifiedRequest {
        var parameters: [String: String]
        var token: String?
        var account: String?
    }

    /// The longest `oauth_nonce` taken. RFC 5849 §3.3 sets no length; signers
    /// send 32 to 43 characters (oauthlib 30 digits), and every nonce of the
    /// last five minutes is kept.
    static let maxNonceBytes = 128

    /// Checks the `Authorization: OAuth …` header: each protocol parameter
    /// once and only there, `oauth_version` 1.0 if given, consumer key,
    /// timestamp (a positive integer) within five minutes, a nonce not seen
    /// before with that timestamp, the token of the right kind, and the
    /// signature over the request as it arrived. The nonce is recorded only
    /// once the signature verifies: anyone can send a request with a nonce,
    /// only the client can sign one, and unsigned ones filled the ledger.
    func verifyOAuth1(_ request: SandboxRequest, tokenKind: OAuth1TokenKind) -> Result<VerifiedRequest, Refusal> {
        guard let header = request.header("authorization"), Self.isOAuthScheme(header) else {
            return .failure(Refusal("invalid_request", "no OAuth Authorization header (RFC 5849 §3.5.1)", status: 401))
        }
        guard let fields = Self.oauthHeaderFields(header) else {
            return .failure(
                Refusal(
                    "invalid_request",
                    "the OAuth Authorization header is not name=\"value\" pairs separated by commas, each value a quoted string (RFC 5849 §3.5.1)",
                    status: 400))
        }
        var protocolParameters = [(String, String)]()
        var values = [String: String]()
        for (name, value) in fields where name.lowercased() != "realm" {
            // RFC 5849 §3.1: each parameter "MUST NOT appear more than once
            // per request"; §3.2 answers a duplicated one with 400. The last
            // one was taken, as no peer agrees on which.
            guard values.updateValue(value, forKey: name) == nil else {
                return .failure(
                    Refusal(
                        "invalid_request",
                        "\(DisplayText.sanitized(name, limit: 60)) is in the Authorization header twice; RFC 5849 §3.1 allows each parameter once",
                        status: 400))
            }
            if name != "oauth_signature" { protocolParameters.append((name, value)) }
        }
        if let refusal = Self.oauthParameterOutsideTheHeader(request) { return .failure(refusal) }
        if let refusal = Self.escapeSignersReadDifferently(request) { return .failure(refusal) }
        // §3.1: "oauth_version … If present, MUST be set to '1.0'".
        if let version = values["oauth_version"], version != "1.0" {
            return .failure(
                Refusal(
                    "invalid_request",
                    "oauth_version is '\(DisplayText.sanitized(version, limit: 20))'; it must be 1.0 when given (RFC 5849 §3.1), or left out",
                    status: 400))
        }
        if let timestamp = values["oauth_timestamp"], !Self.isTimestamp(timestamp) {
            return .failure(
                Refusal(
                    "invalid_request",
                    "oauth_timestamp '\(DisplayText.sanitized(timestamp, limit: 20))' is not a positive integer written in digits, such as 1318622958 (RFC 5849 §3.3): no sign, fraction, exponent or leading zero",
                    status: 400))
        }
        guard ExactText.same(values["oauth_consumer_key"] ?? "", options.clientID), values["oauth_consumer_key"] != nil
        else { return .failure(Refusal("invalid_consumer", "unknown oauth_consumer_key", status: 401)) }
        guard let method = values["oauth_signature_method"].flatMap(OAuth1SignatureMethod.init(rawValue:)),
            method.rawValue == descriptor.oauth1!.signatureMethod
        else {
            return .failure(
                Refusal(
                    "invalid_request", "oauth_signature_method must be \(descriptor.oauth1!.signatureMethod)",
                    status: 400))
        }
        guard let signature = values["oauth_signature"] else {
            return .failure(Refusal("invalid_request", "oauth_signature is missing", status: 400))
        }
        var nonceUse: (nonce: String, timestamp: Int64)?
        if method != .plaintext {
            guard let timestamp = values["oauth_timestamp"].flatMap(Int64.init),
                let nonce = values["oauth_nonce"], !nonce.isEmpty
            else {
                return .failure(
                    Refusal(
                        "invalid_request", "oauth_timestamp and oauth_nonce are required (RFC 5849 §3.3)", status: 400))
            }
            guard nonce.utf8.count <= Self.maxNonceBytes else {
                return .failure(
                    Refusal(
                        "invalid_request",
                        "oauth_nonce is \(nonce.utf8.count) bytes; the sandbox takes at most \(Self.maxNonceBytes) (a random string of 32 or so characters is usual)",
                        status: 400))
            }
            guard abs(now.timeIntervalSince1970 - TimeInterval(timestamp)) <= 300 else {
                return .failure(
                    Refusal(
                        "timestamp_refused", "oauth_timestamp is more than five minutes from the server's clock",
                        status: 401))
            }
            guard !ledger.hasSeen(nonce: nonce, timestamp: timestamp) else {
                return .failure(
                    Refusal(
                        "nonce_used", "this oauth_nonce was already used with this timestamp (RFC 5849 §3.3)",
                        status: 401))
            }
            nonceUse = (nonce, timestamp)
        }
        let token = values["oauth_token"]
        var tokenSecret: String?
        var account: String?
        switch tokenKind {
        case .none:
            break
        case .request, .access:
            guard let token, let record = ledger.oauth1Tokens[token], record.isAccessToken == (tokenKind == .access),
                !record.used
            else {
                return .failure(
                    Refusal("invalid_token", "oauth_token is unknown, used or of the wrong kind", status: 401))
            }
            tokenSecret = record.secret
            account = record.account
        }
        let signer = OAuth1Signer(
            consumerKey: options.clientID, consumerSecret: options.clientSecret ?? "", signatureMethod: method)
        guard let url = request.url,
            let expected = try? signer.signature(
                method: request.method, url: url, contentType: request.header("content-type"),
                body: request.body, protocolParameters: protocolParameters, tokenSecret: tokenSecret),
            ConstantTime.equals(expected, signature)
        else {
            return .failure(
                Refusal("invalid_signature", "the signature does not match the request (RFC 5849 §3.4)", status: 401))
        }
        // Checked above and recorded in the same turn of the lock: no other
        // request comes between.
        if let nonceUse, !ledger.record(nonce: nonceUse.nonce, timestamp: nonceUse.timestamp, now: now) {
            return .failure(
                Refusal(
                    "temporarily_unavailable",
                    "the sandbox holds as many nonces of the last five minutes as it keeps (\(GrantLedger.limit)); try again later",
                    status: 503))
        }
        return .success(VerifiedRequest(parameters: values, token: token, account: account))
    }

    /// §2.1: temporary credentials, bound to the callback.
    func oauth1RequestToken(_ request: SandboxRequest) -> SandboxResponse {
        switch verifyOAuth1(request, tokenKind: .none) {
        case .failure(let refusal): return oauth1Refusal(refusal, step: "request-token")
        case .success(let verified):
            guard let callback = verified.parameters["oauth_callback"], callback == "oob" || isRegistered(callback)
            else {
                return oauth1Refusal(
                    Refusal(
                        "invalid_request",
                        "oauth_callback is missing or not a registered callback (use 'oob' for a PIN)", status: 401),
                    step: "request-token")
            }
            let token = ledger.mint("request")
            let secret = ledger.mint("request-secret")
            ledger.oauth1Tokens[token] = GrantLedger.OAuth1Token(
                secret: secret, callback: callback, isAccessToken: false)
            return .form(
                [("oauth_token", token), ("oauth_token_secret", secret), ("oauth_callback_confirmed", "true")],
                step: "request-token", summary: "temporary credentials issued")
        }
    }

    /// §2.2: the consent page for a request token.
    func oauth1Authorize(_ request: SandboxRequest) -> SandboxResponse {
        let parameters = request.query.map { Parameters($0) }
        if let repeated = parameters?.repeated {
            return errorPage("\(repeated) is given more than once.", step: "authorize")
        }
        guard let token = parameters?["oauth_token"],
            let record = ledger.oauth1Tokens[token],
            !record.isAccessToken, !record.used, record.verifier == nil
        else {
            return errorPage("oauth_token is missing, unknown or already authorized.", step: "authorize")
        }
        switch options.consent {
        case .approve: return oauth1Decide(requestToken: token, approve: true, account: options.defaultAccount)
        case .deny: return oauth1Decide(requestToken: token, approve: false, account: options.defaultAccount)
        case .ask:
            let id = ledger.mint("consent")
            let consent = GrantLedger.PendingConsent(
                redirectURI: record.callback, sentRedirectURI: true, scopes: [], state: nil, challenge: nil,
                challengeMethod: nil,
                expiresAt: now.addingTimeInterval(600), requestToken: token)
            ledger.consents[id] = consent
            return .html(
                ConsentPage.consent(
                    provider: descriptor.name, client: options.clientID, scopes: [], request: id,
                    approval: consent.approval, account: options.defaultAccount),
                step: "authorize", summary: "consent page", redirectsTo: record.callback)
        }
    }

    /// A request token is decided once: two consent pages opened for it
    /// (two tabs) cannot both approve, the second replacing the verifier
    /// and the account as no provider lets it.
    func oauth1Decide(requestToken: String, approve: Bool, account: String) -> SandboxResponse {
        guard let record = ledger.oauth1Tokens[requestToken] else {
            return errorPage("Unknown request token.", step: "consent")
        }
        guard !record.isAccessToken, !record.used, record.verifier == nil else {
            return errorPage("This request token was already authorized or denied.", step: "consent")
        }
        guard approve else {
            ledger.oauth1Tokens[requestToken]?.used = true
            if record.callback == "oob" {
                return .html(
                    ConsentPage.message(title: descriptor.name, "You denied the application."), step: "consent",
                    summary: "denied by \(account)")
            }
            return redirectOAuth1(record.callback, [("denied", requestToken)], summary: "denied by \(account)")
        }
        let verifier = ledger.mint("verifier")
        ledger.oauth1Tokens[requestToken]?.verifier = verifier
        ledger.oauth1Tokens[requestToken]?.account = account
        if record.callback == "oob" {
            return .html(
                ConsentPage.pin(provider: descriptor.name, verifier: verifier), step: "consent",
                summary: "approved by \(account); PIN shown")
        }
        return redirectOAuth1(
            record.callback, [("oauth_token", requestToken), ("oauth_verifier", verifier)],
            summary: "approved by \(account)")
    }

    private func redirectOAuth1(_ callback: String, _ pairs: [(String, String)], summary: String) -> SandboxResponse {
        .redirect(
            URL(string: callback)?.appendingQuery(pairs)?.absoluteString ?? callback, step: "consent", summary: summary)
    }

    /// §2.3: token credentials for an authorized request token and its verifier (once).
    func oauth1AccessToken(_ request: SandboxRequest) -> SandboxResponse {
        switch verifyOAuth1(request, tokenKind: .request) {
        case .failure(let refusal): return oauth1Refusal(refusal, step: "access-token")
        case .success(let verified):
            let requestToken = verified.token!
            let record = ledger.oauth1Tokens[requestToken]!
            guard let expected = record.verifier, let sent = verified.parameters["oauth_verifier"],
                ConstantTime.equals(sent, expected)
            else {
                return oauth1Refusal(
                    Refusal("invalid_verifier", "oauth_verifier does not match", status: 401), step: "access-token")
            }
            ledger.oauth1Tokens[requestToken]?.used = true
            let token = ledger.mint("access")
            let secret = ledger.mint("access-secret")
            let account = record.account ?? options.defaultAccount
            ledger.oauth1Tokens[token] = GrantLedger.OAuth1Token(
                secret: secret, callback: "", account: account, isAccessToken: true)
            return .form(
                [("oauth_token", token), ("oauth_token_secret", secret), ("user_id", "1"), ("screen_name", account)],
                step: "access-token", summary: "token credentials issued for account \(account)")
        }
    }

    /// Twitter's `POST /1.1/oauth/invalidate_token`, signed with the token it ends.
    func oauth1Invalidate(_ request: SandboxRequest) -> SandboxResponse {
        switch verifyOAuth1(request, tokenKind: .access) {
        case .failure(let refusal): return oauth1Refusal(refusal, step: "revocation")
        case .success(let verified):
            ledger.oauth1Tokens[verified.token!]?.used = true
            return .json(
                .object(["access_token": .string("invalidated")]), step: "revocation", summary: "token invalidated")
        }
    }

    private func oauth1Refusal(_ refusal: Refusal, step: String) -> SandboxResponse {
        .json(
            .object([
                "errors": .array([.object(["code": .string(refusal.code), "message": .string(refusal.description)])])
            ]),
            status: refusal.status, step: step, summary: "\(refusal.code): \(refusal.description)")
    }

    /// Whether `header` is of the `OAuth` scheme (RFC 5849 §3.5.1; scheme
    /// names are case-insensitive, RFC 9110 §11.1).
    static func isOAuthScheme(_ header: String) -> Bool {
        let scheme = header.prefix { $0 != " " }
        return scheme.lowercased() == "oauth"
    }

    /// `OAuth k="v", …` (RFC 5849 §3.5.1) as RFC 9110 §11.4 reads
    /// credentials: `#auth-param`, each `token BWS "=" BWS quoted-string`,
    /// read a character at a time. A quoted string may hold a comma
    /// (`realm="Photos, Inc"`, which splitting on `,` broke into two
    /// malformed parameters) and `\`-escapes. Protocol parameters' names and
    /// values are then percent-decoded (§3.6); `realm` is not: it is RFC
    /// 2617's quoted-string, written as is (`realm="100%"` is the text
    /// `100%`), as ``AuthorizationHeader`` writes it. `nil` when the header
    /// is not of that form.
    static func oauthHeaderFields(_ header: String) -> [(String, String)]? {
        let bytes = Array(header.utf8)
        var index = 0
        func skipWhitespace() {
            while index < bytes.count, bytes[index] == UInt8(ascii: " ") || bytes[index] == UInt8(ascii: "\t") {
                index += 1
            }
        }
        func token() -> ArraySlice<UInt8> {
            let start = index
            while index < bytes.count, isTokenCharacter(bytes[index]) { index += 1 }
            return bytes[start..<index]
        }
        guard String(decoding: token(), as: UTF8.self).lowercased() == "oauth",
            index == bytes.count || bytes[index] == UInt8(ascii: " ")
        else { return nil }
        var fields = [(String, String)]()
        while true {
            skipWhitespace()
            guard index < bytes.count else { return fields }
            // RFC 9110 §5.6.1: a list may hold empty elements.
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
                continue
            }
            let name = String(decoding: token(), as: UTF8.self)
            skipWhitespace()
            guard !name.isEmpty, index < bytes.count, bytes[index] == UInt8(ascii: "=") else { return nil }
            index += 1
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { return nil }
            index += 1
            var value = [UInt8]()
            var closed = false
            while index < bytes.count, !closed {
                let byte = bytes[index]
                index += 1
                switch byte {
                case UInt8(ascii: "\""): closed = true
                case UInt8(ascii: "\\"): // quoted-pair
                    guard index < bytes.count else { return nil }
                    value.append(bytes[index])
                    index += 1
                case 0x00..<0x09, 0x0A..<0x20, 0x7F: return nil // qdtext holds no control character
                default: value.append(byte)
                }
            }
            skipWhitespace()
            guard closed, index == bytes.count || bytes[index] == UInt8(ascii: ",") else { return nil }
            guard let text = ValidUTF8.string(value) else { return nil }
            if name.lowercased() == "realm" {
                fields.append((name, text))
            } else {
                guard let decodedName = PercentEncoding.decode(name), let decoded = PercentEncoding.decode(text)
                else { return nil }
                fields.append((decodedName, decoded))
            }
        }
    }

    /// RFC 9110 §5.6.2 `tchar`.
    private static func isTokenCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default: return "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }

    /// RFC 5849 §3.3: "The timestamp value MUST be a positive integer",
    /// seconds since 1970. Written in decimal digits only: `1796084727.5`,
    /// `1.7e+09` and `+1796084727` are other numbers or no integer (Python's
    /// `int()` takes the sign, `float` the rest), and a leading zero is
    /// refused too: it writes the same second in another text, which
    /// oauthlib refuses (it wants ten characters), and the nonce ledger
    /// would count apart.
    static func isTimestamp(_ text: String) -> Bool {
        guard let first = text.utf8.first, first != UInt8(ascii: "0"), text.utf8.count <= 18 else { return false }
        return text.utf8.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
    }

    /// RFC 5849 §3.5: protocol parameters, "as well as any other parameter
    /// using the `oauth_` prefix", go in "one and only one" place. With the
    /// header used, an `oauth_` name in the query or a form body is a second
    /// place (the query's and body's other parameters are the request's own,
    /// signed as they are, §3.4.1.3). Names are read pair by pair, so a value
    /// that does not decode elsewhere hides none.
    static func oauthParameterOutsideTheHeader(_ request: SandboxRequest) -> Refusal? {
        let body =
            FormURLEncoding.isFormContentType(request.header("content-type"))
            ? String(decoding: request.body, as: UTF8.self) : ""
        for (place, text) in [("the query", request.rawQuery ?? ""), ("the form body", body)] {
            for pair in text.split(separator: "&") {
                let written = String(pair.prefix { $0 != "=" })
                let name = PercentEncoding.decode(written, plusAsSpace: true) ?? written
                if name.hasPrefix("oauth_") {
                    return Refusal(
                        "invalid_request",
                        "\(DisplayText.sanitized(name, limit: 60)) is in \(place) while the Authorization header carries the protocol parameters; RFC 5849 §3.5 puts every oauth_ parameter in one place",
                        status: 400)
                }
            }
        }
        return nil
    }

    /// An escape in the query or a form body whose bytes are not UTF-8
    /// (`%FF`): RFC 5849 §3.6 signs UTF-8 text, and signers read other bytes
    /// differently (AuthKit signs the byte, oauthlib U+FFFD), so the request
    /// is refused saying so, not as a signature that does not match.
    static func escapeSignersReadDifferently(_ request: SandboxRequest) -> Refusal? {
        let body =
            FormURLEncoding.isFormContentType(request.header("content-type"))
            ? String(decoding: request.body, as: UTF8.self) : ""
        for (place, text) in [("the query", request.rawQuery ?? ""), ("the form body", body)] {
            if let escape = PercentEncoding.escapeNotUTF8(in: text) {
                return Refusal(
                    "invalid_request",
                    "\(place) has '\(DisplayText.sanitized(escape, limit: 12))', which is not UTF-8 once decoded; RFC 5849 §3.6 signs UTF-8 text, and signers read other bytes differently (the byte itself, or U+FFFD): encode the text's UTF-8 bytes (é is %C3%A9)",
                    status: 400)
            }
        }
        return nil
    }
}
