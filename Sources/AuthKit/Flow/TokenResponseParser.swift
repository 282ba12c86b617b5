#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Turns a token endpoint's HTTP response into a ``Credential`` or a typed error
/// (RFC 6749 §5.1, §5.2), following the descriptor's ``TokenResponseMapping``.
///
/// - Bodies may be JSON or `application/x-www-form-urlencoded` (GitHub without
///   `Accept: application/json`); anything else is an "unusable response" error
///   that says what arrived (an HTML error page, say) without echoing it.
/// - An error member (default `error`) makes the response an error **whatever
///   the status**, because GitHub and Slack report errors with HTTP 200.
/// - `expires_in` may be a number, a numeric string or null; other types are
///   errors, and `0` is taken as absent (no lifetime said).
/// - Every member is kept in ``Credential/rawFields``, within bounds
///   (``KeptMembers``): one nested too deep or too large is left out and
///   named in ``Fields/notKept``.
package struct TokenResponseParser: Sendable {
    package var mapping: TokenResponseMapping
    package var successStatus: [Int]
    package var scopeSeparator: String
    package var step: FlowStep

    package init(
        mapping: TokenResponseMapping = .standard, successStatus: [Int] = [200],
        scopeSeparator: String = " ", step: FlowStep = .tokenExchange
    ) {
        self.mapping = mapping
        self.successStatus = successStatus
        self.scopeSeparator = scopeSeparator
        self.step = step
    }

    /// The fields of a successful answer; ``Credential`` is assembled by the caller,
    /// which knows the provider, label and previous token.
    package struct Fields: Sendable, Hashable {
        package var accessToken: String
        package var tokenType: String?
        package var expiresIn: TimeInterval?
        package var refreshToken: String?
        package var refreshTokenExpiresIn: TimeInterval?
        package var scopes: [String]?
        /// Why a refresh answer's side field was left out instead of refusing
        /// the answer (``parse(_:)``), secrets masked; empty otherwise.
        package var dropped: [String] = []
        /// A refresh answer's `expires_in` was there but unusable (and is in
        /// ``dropped``): the token's lifetime is not unknown, only unread.
        package var expiresInUnusable = false
        package var raw: [String: JSONValue]
        /// The members of the answer left out of ``raw`` (``KeptMembers``),
        /// each named (sanitized, secrets masked) with why; never a value.
        package var notKept: [String] = []
    }

    /// The members of an answer AuthKit reads once stored: kept before any
    /// other when an answer's members are more than ``KeptMembers`` keeps.
    package static let membersRead: Set<String> = ["id_token", "issued_token_type", "user_id", "screen_name"]

    /// - Throws: an ``AuthKitError`` in which any provider text it quotes has
    ///   the request's secrets masked (``IncomingResponse/secrets``).
    package func parse(_ response: IncomingResponse) throws -> Fields {
        do {
            return try parseUnmasked(response)
        } catch let error as AuthKitError {
            throw SecretMask(response.secrets).apply(error)
        }
    }

    /// The members of a successful answer that carries no token (RFC 8628
    /// §3.2's device authorization response), errors reported as for a token.
    package func members(of response: IncomingResponse) throws -> [String: JSONValue] {
        do {
            return try successfulAnswer(response)
        } catch let error as AuthKitError {
            throw SecretMask(response.secrets).apply(error)
        }
    }

    /// The members of an answer with a success status and no error in its
    /// body; otherwise the error it is: the body's OAuth error (RFC 6749
    /// §5.2, whatever the status), the client's refusal a 401 challenge
    /// says (``clientRefusal(_:)``), or an unexpected status or body.
    /// Shared by token answers (``parse(_:)``) and the others (``members(of:)``:
    /// device authorization, PAR, introspection), which read a 401 alike.
    private func successfulAnswer(_ response: IncomingResponse) throws -> [String: JSONValue] {
        let object: [String: JSONValue]
        do {
            object = try decodeBody(response)
        } catch {
            if let refusal = clientRefusal(response) { throw refusal }
            throw error
        }
        if let error = providerError(in: object, status: response.status) {
            throw AuthKitError.providerError(step: step, error)
        }
        guard successStatus.contains(response.status) else {
            if let refusal = clientRefusal(response) { throw refusal }
            throw AuthKitError.invalidResponse(
                step: step,
                reason: .init(
                    .unexpectedStatus(response.status),
                    "HTTP \(response.status) (expected \(successStatus.map(String.init).joined(separator: " or "))) without an OAuth error in the body"
                ))
        }
        return object
    }

    /// RFC 6749 §5.2: a server may refuse the client's authentication with
    /// HTTP 401 and a `WWW-Authenticate` challenge. When the body does not
    /// say otherwise (none, an empty or HTML one, JSON without `error`), that
    /// is the answer: `invalid_client`, or the error the challenge names.
    /// Before, only a 401 without a body was read so, and one with
    /// `Content-Type: application/json` and no body was "malformed".
    /// Masked with the rest (``parse(_:)``, ``members(of:)``).
    /// A challenge of the token schemes alone (`Bearer`, `DPoP`: a call a
    /// token authorizes, as Instagram's refresh) refuses the token, not the
    /// client: `invalid_token` (RFC 6750 §3.1), not "the client credentials".
    private func clientRefusal(_ response: IncomingResponse) -> AuthKitError? {
        guard response.status == 401, !successStatus.contains(401) else { return nil }
        let challenges = response.headers[values: .wwwAuthenticate]
        guard !challenges.isEmpty else { return nil }
        let tokenSchemesOnly = challenges.allSatisfy { challenge in
            let text = challenge.drop { $0 == " " || $0 == "\t" }.lowercased()
            return (text.hasPrefix("bearer") || text.hasPrefix("dpop")) && !text.contains("basic")
        }
        return AuthKitError.providerError(
            step: step,
            ProviderErrorResponse(
                status: 401,
                code: BearerChallenge.error(inAnyChallengeOf: challenges)
                    ?? (tokenSchemesOnly ? "invalid_token" : "invalid_client"),
                description: tokenSchemesOnly
                    ? "the server refused the token it was sent" : "the server rejected the client credentials"))
    }

    /// Throws when an answer with a success status still names an error in
    /// its body (Slack answers `{"ok": false, "error": …}` with HTTP 200). A
    /// body that is neither JSON nor form data is no error here: RFC 7009
    /// §2.2 gives a successful revocation no body format.
    package func rejectReportedError(in response: IncomingResponse) throws {
        guard let object = try? decodeBody(response), let error = providerError(in: object, status: response.status)
        else { return }
        throw SecretMask(response.secrets).apply(AuthKitError.providerError(step: step, error))
    }

    private func parseUnmasked(_ response: IncomingResponse) throws -> Fields {
        let object = try successfulAnswer(response)

        guard let (accessPath, accessValue) = mapping.accessToken.firstValue(in: object) else {
            throw AuthKitError.invalidResponse(
                step: step,
                reason: .init(
                    .missingField(mapping.accessToken.alternatives),
                    "no access token at '\(mapping.accessToken.alternatives)'"))
        }
        guard case .string(let accessToken) = accessValue, !accessToken.isEmpty else {
            throw AuthKitError.invalidResponse(
                step: step,
                reason: .init(
                    .invalidField(accessPath.description),
                    "'\(accessPath)' must be a non-empty string, got \(accessValue == .string("") ? "an empty one" : accessValue.typeName)"
                ))
        }

        try checkHeaderSafe(accessToken, at: accessPath, rule: "A.12")
        // RFC 6750 §2.1 sends it as `Bearer <b64token>`: a space, a quote, a
        // comma or a backslash would make that header say something else
        // (`Bearer AT with space`); real tokens never hold them (a '|', as
        // Login with Amazon's `Atza|…`, is kept: it changes nothing there).
        if !Self.isSendableAsBearer(accessToken) {
            throw AuthKitError.invalidResponse(
                step: step,
                reason: .init(
                    .invalidField(accessPath.description),
                    """
                    '\(accessPath)' holds a space, '"', ',' or '\\', which would change the Authorization header it is sent in \
                    (RFC 6750 §2.1); it is not repeated here
                    """))
        }
        let refreshToken = try string(mapping.refreshToken, in: object)
        if let (refreshPath, refreshToken) = refreshToken {
            try checkHeaderSafe(refreshToken, at: refreshPath, rule: "A.17")
        }

        // A refresh answer with a usable token is kept even when a side field
        // is not: refusing it would throw away the rotated refresh token it
        // carries (RFC 9700 §4.14.2), and the grant with it. The field is
        // left out (an unknown lifetime; the scopes as before; the token
        // type as before, except for a DPoP-bound credential, whose answer
        // must say DPoP) and said so.
        var dropped = [String]()
        func side<Value>(_ read: () throws -> Value?) throws -> Value? {
            guard step == .refresh else { return try read() }
            do {
                return try read()
            } catch let error as AuthKitError {
                guard case .invalidResponse(_, let reason) = error.reason else { throw error }
                dropped.append(SecretMask(response.secrets).apply(reason.detail))
                return nil
            }
        }
        let tokenType = try side { () throws -> String? in
            let tokenType = try string(mapping.tokenType, in: object)?.text
            if tokenType == nil, mapping.requireTokenType {
                throw AuthKitError.invalidResponse(
                    step: step,
                    reason: .init(
                        .missingField(mapping.tokenType.alternatives),
                        "no '\(mapping.tokenType.alternatives)' (RFC 6749 §5.1 requires it; a descriptor can set token.response.requireTokenType to false)"
                    ))
            }
            if let tokenType, !Self.isTokenType(tokenType), let (path, _) = mapping.tokenType.firstValue(in: object) {
                // Not repeated: a server could put what it was sent there, to be
                // stored and printed by every later command.
                throw AuthKitError.invalidResponse(
                    step: step,
                    reason: .init(
                        .invalidField(path.description),
                        """
                        '\(path)' is not a token type (RFC 6749 §7.1, Appendix A.13: a name of letters, digits, '-', '.' \
                        and '_', or a URI); it is not repeated here
                        """))
            }
            return tokenType
        }
        // Dropped, the member is not kept either: the answer is stored whole
        // (`token show --field`), and a type that repeats what the request
        // carried would be stored and shown there.
        var kept = object
        if tokenType == nil, step == .refresh, let (path, _) = mapping.tokenType.firstValue(in: object),
            path.components.count == 1, case .member(let name) = path.components[0]
        {
            kept[name] = nil
        }
        // Kept within bounds, or one answer could make the store unreadable
        // (``KeptMembers``). A name is shown masked: a server could name a
        // member after a secret it was sent, or the token it issues.
        let bounded = KeptMembers.bounded(kept, preferring: Self.membersRead, level: 4)
        var notKept: [String] = []
        if !bounded.dropped.isEmpty {
            // Made only here: building the mask (a set of the secrets, sorted)
            // for every answer was a few per cent of a code exchange's work.
            let mask = SecretMask(
                response.secrets + [accessToken, refreshToken?.text, object["id_token"]?.scalarText].compactMap { $0 })
            notKept = bounded.dropped.map { member in
                "its member '\(mask.apply(DisplayText.sanitized(member.name, limit: 60)))' was not kept: \(member.reason)"
            }
        }
        let droppedBefore = dropped.count
        let expiresIn = try side { try seconds(mapping.expiresIn, in: object) }
        let expiresInUnusable = dropped.count > droppedBefore
        return Fields(
            accessToken: accessToken,
            tokenType: tokenType,
            expiresIn: expiresIn,
            refreshToken: refreshToken?.text,
            refreshTokenExpiresIn: try side { try seconds(mapping.refreshTokenExpiresIn, in: object) },
            scopes: try side { try scopes(in: object, secrets: response.secrets) },
            dropped: dropped,
            expiresInUnusable: expiresInUnusable,
            raw: bounded.kept,
            notKept: notKept)
    }

    /// `body` without a leading UTF-8 byte-order mark, which RFC 8259 §8.1
    /// lets a reader ignore.
    static func withoutByteOrderMark(_ body: Data) -> Data {
        // Three subscripts: `starts(with:)` made an array and walked `Data`
        // through its generic iterator (1.7% of a refresh's library work).
        let start = body.startIndex
        guard body.count >= 3, body[start] == 0xEF, body[start + 1] == 0xBB, body[start + 2] == 0xBF else {
            return body
        }
        return body.dropFirst(3)
    }

    /// RFC 6749 Appendix A.13: `token-type = type-name / URI-reference`, so
    /// only the characters of a URI (RFC 3986 §2), and not too long to show.
    static func isTokenType(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.count <= 256
            && text.allUTF8 { byte in
                switch byte {
                case UInt8(ascii: "\""), UInt8(ascii: "<"), UInt8(ascii: ">"), UInt8(ascii: "\\"), UInt8(ascii: "^"),
                    UInt8(ascii: "`"), UInt8(ascii: "{"), UInt8(ascii: "|"), UInt8(ascii: "}"):
                    false
                default: (0x21...0x7E).contains(byte)
                }
            }
    }

    /// RFC 6749 Appendix A.12 and A.17: a token is visible ASCII (VSCHAR,
    /// 0x20–0x7E). A CR or LF would be turned into spaces by the header it is
    /// sent in (the token silently changed), or split the header where a
    /// script pastes `authkit token header`; so such an answer is refused,
    /// without repeating the token.
    /// Whether `token` can be sent as `Bearer <token>` and mean itself
    /// (RFC 6750 §2.1's b64token, loosely: printable ASCII but a space, `"`,
    /// `,` and `\`, which would change what the header says). Checked at the
    /// sign-in and again whenever a credential is sent (``OAuth2Client``).
    package static func isSendableAsBearer(_ token: String) -> Bool {
        !token.isEmpty
            && token.allUTF8 {
                (0x21...0x7E).contains($0) && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: ",")
                    && $0 != UInt8(ascii: "\\")
            }
    }

    private func checkHeaderSafe(_ token: String, at path: FieldPath, rule: String) throws {
        guard token.allUTF8({ (0x20...0x7E).contains($0) }) else {
            throw AuthKitError.invalidResponse(
                step: step,
                reason: .init(
                    .invalidField(path.description),
                    "'\(path)' holds a control or non-ASCII character, which RFC 6749 §\(rule) does not allow in a token and no header can carry"
                ))
        }
    }

    // MARK: - Body

    private func decodeBody(_ response: IncomingResponse) throws -> [String: JSONValue] {
        // A byte-order mark before the JSON, which RFC 8259 §8.1 lets a
        // reader ignore: refused, it lost a code already spent (or a
        // refresh's rotated token) for three bytes some servers' frameworks add.
        let body = Self.withoutByteOrderMark(response.body)
        let mediaType = response.mediaType ?? ""
        // Looked for only when the type does not settle it (reading `Data`
        // byte by byte is slow on Linux, and most answers say they are JSON).
        func firstByte() -> UInt8? { body.first { !JSONParser.isWhitespace($0) } }
        // Form-encoded answers (GitHub without `Accept: application/json`); some
        // servers label them text/plain, so accept that when it looks like a form.
        let looksLikeForm =
            mediaType == "text/plain" && body.contains(UInt8(ascii: "="))
            && !body.contains { $0 == 0x20 || $0 == 0x0A || $0 == UInt8(ascii: "<") || $0 == UInt8(ascii: "{") }
        if mediaType == "application/x-www-form-urlencoded" || looksLikeForm {
            guard let text = String(data: body, encoding: .utf8), let pairs = FormURLEncoding.decode(text) else {
                throw AuthKitError.invalidResponse(
                    step: step,
                    reason: .init(.unreadableBody, "the form-encoded body (HTTP \(response.status)) is not valid"))
            }
            var object = [String: JSONValue]()
            for (name, value) in pairs where object[name] == nil { object[name] = .string(value) }
            return object
        }
        if mediaType.hasSuffix("json") || [UInt8(ascii: "{"), UInt8(ascii: "[")].contains(firstByte()) {
            let value: JSONValue
            do {
                value = try JSONValue(parsing: body)
            } catch let failure as JSONParser.Failure where failure.reason == JSONParser.numberOutOfRange {
                // Valid JSON (RFC 8259 §6 sets no range), but no number here can be one such as 1e400.
                throw AuthKitError.invalidResponse(
                    step: step,
                    reason: .init(
                        .unreadableBody,
                        "the JSON body (HTTP \(response.status)) holds a number out of any range AuthKit reads, at byte \(failure.offset)"
                    ))
            } catch {
                throw AuthKitError.invalidResponse(
                    step: step,
                    reason: .init(.unreadableBody, "the JSON body (HTTP \(response.status)) is malformed or truncated"))
            }
            guard case .object(let object) = value else {
                throw AuthKitError.invalidResponse(
                    step: step,
                    reason: .init(
                        .unreadableBody, "the JSON body (HTTP \(response.status)) is \(value.typeName), not an object"))
            }
            return object
        }
        if body.isEmpty {
            // No body at all: a success status here still lacks a token.
            return [:]
        }
        let looksLikeHTML = mediaType.contains("html") || (mediaType.isEmpty && firstByte() == UInt8(ascii: "<"))
        let what =
            looksLikeHTML ? "an HTML page" : "a \(mediaType.isEmpty ? "body of unknown type" : "'\(mediaType)' body")"
        throw AuthKitError.invalidResponse(
            step: step,
            reason: .init(
                .unreadableBody, "the endpoint answered HTTP \(response.status) with \(what), not JSON or form data"))
    }

    // MARK: - Fields

    private func providerError(in object: [String: JSONValue], status: Int) -> ProviderErrorResponse? {
        // Only a string or number is an error code: an object at `error` may hold
        // the code deeper (`error.type`), and `"error": false` is no error.
        guard let code = mapping.errorCode.firstScalar(in: object), code != "false" else { return nil }
        // An error path that reaches the tokens (a descriptor's mistake, or
        // a server naming its token in `error`) would print a token just
        // issued: the answer's own tokens are masked in what is shown.
        let idToken: FieldPaths = "id_token"
        let issued = SecretMask(
            [mapping.accessToken, mapping.refreshToken, idToken].compactMap { $0.firstScalar(in: object) })
        return ProviderErrorResponse(
            status: status, code: issued.apply(code),
            description: mapping.errorDescription.firstScalar(in: object).map(issued.apply),
            uri: mapping.errorURI.firstScalar(in: object).map(issued.apply))
    }

    /// A non-empty string, with the path it was found at (for messages).
    private func string(_ paths: FieldPaths, in object: [String: JSONValue]) throws -> (path: FieldPath, text: String)?
    {
        guard let (path, value) = paths.firstValue(in: object) else { return nil }
        guard case .string(let text) = value else {
            throw AuthKitError.invalidResponse(
                step: step,
                reason: .init(.invalidField(path.description), "'\(path)' must be a string, got \(value.typeName)"))
        }
        return text.isEmpty ? nil : (path, text)
    }

    /// `seconds` when it can be a lifetime: finite, not negative, and below
    /// 1e11 (three thousand years), so that no date or wait computed from it
    /// overflows (a hostile `1e300` or `inf`). Device answers use it too.
    package static func lifetime(_ seconds: Double?) -> Double? {
        seconds.flatMap { $0.isFinite && $0 >= 0 && $0 < 1e11 ? $0 : nil }
    }

    /// A numeric string as JSON writes a number (digits, a point, an
    /// exponent): `Double.init` also reads `0x10` (16), `inf` and `nan`,
    /// which no server means as a number of seconds.
    package static func decimal(_ text: String) -> Double? {
        guard let first = text.utf8.first, first != UInt8(ascii: "e"), first != UInt8(ascii: "E"),
            text.allUTF8({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || "+-.eE".utf8.contains($0) })
        else { return nil }
        return Double(text)
    }

    /// A lifetime in seconds (`expires_in`, `refresh_token_expires_in`).
    ///
    /// `0` says nothing of the lifetime, as an absent member does (so
    /// golang.org/x/oauth2 reads `expires_in`): no server issues a token
    /// already expired. In a refresh answer, as an absent or unreadable
    /// one, the earlier token's lifetime stands in for it
    /// (``TokenEndpointCalls``). Read as "expired when issued",
    /// every use of the token refreshed it, each refresh spending a
    /// rotating refresh token.
    private func seconds(_ paths: FieldPaths, in object: [String: JSONValue]) throws -> TimeInterval? {
        guard let (path, value) = paths.firstValue(in: object) else { return nil }
        let seconds: Double?
        switch value {
        case .integer(let number): seconds = Double(number)
        case .number(let number): seconds = number
        case .string(let text): seconds = Self.decimal(String(text.trimmingSpaces()))
        default: seconds = nil
        }
        guard let lifetime = Self.lifetime(seconds) else {
            // A number out of range is named by its value: "got a number" did not say what was wrong with it.
            let got =
                seconds != nil
                ? "\(DisplayText.sanitized(value.scalarText ?? "", limit: 24)), which is not 0 to 1e11 seconds"
                : value.typeName == "a string"
                    ? "the string '\(DisplayText.sanitized(value.scalarText ?? "", limit: 20))'" : value.typeName
            throw AuthKitError.invalidResponse(
                step: step,
                reason: .init(
                    .invalidField(path.description),
                    "'\(path)' must be a number of seconds (a number or numeric string), got \(got)"))
        }
        return lifetime == 0 ? nil : lifetime
    }

    /// The granted scopes (RFC 6749 §5.1). A scope that repeats a secret
    /// the request carried (the code, the verifier, the client secret, the
    /// refresh token) is refused without being repeated, as a token type
    /// is: scopes are stored and shown by `token list`, which would print
    /// the secret wherever its output goes. Real scopes never hold one.
    private func scopes(in object: [String: JSONValue], secrets: [String]) throws -> [String]? {
        guard let (path, value) = mapping.scope.firstValue(in: object) else { return nil }
        let scopes = try scopes(value, at: path)
        if SecretMask.anyRepeated(secrets, in: scopes) {
            throw AuthKitError.invalidResponse(
                step: step,
                reason: .init(
                    .invalidField(path.description),
                    """
                    '\(path)' repeats a secret the request carried (a code, verifier, client secret or token), \
                    so it is neither stored nor shown
                    """))
        }
        return scopes
    }

    private func scopes(_ value: JSONValue, at path: FieldPath) throws -> [String] {
        switch value {
        case .string(let text):
            // RFC 6749 §3.3 says spaces, but answers often use commas even where
            // requests take spaces (GitHub): split on both, and the descriptor's own.
            // On bytes: every separator is ASCII in practice, and a multi-byte
            // one still splits correctly on its own bytes' boundaries below.
            // The separator's bytes read in place: copied into an array, they
            // cost an allocation at every answer.
            let separator = scopeSeparator.utf8
            if separator.count <= 1 {
                let extra = separator.first ?? UInt8(ascii: " ")
                var text = text
                return text.withUTF8 { bytes in
                    // One pass over contiguous bytes; a scope is a short
                    // (small, unallocated) string made from its slice, and
                    // the list is made once for a handful (grown from one
                    // element, it was allocated twice for two scopes).
                    var scopes = [String]()
                    scopes.reserveCapacity(8)
                    var start = 0
                    for index in 0...bytes.count
                    where index == bytes.count || bytes[index] == 0x20
                        || bytes[index] == UInt8(ascii: ",") || bytes[index] == extra
                    {
                        if index > start {
                            scopes.append(
                                String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self))
                        }
                        start = index + 1
                    }
                    return scopes
                }
            }
            let separators = Set(scopeSeparator + " ,")
            return text.split(whereSeparator: { separators.contains($0) }).map(String.init)
        case .array(let elements):
            return try elements.map { element in
                guard case .string(let scope) = element else {
                    throw AuthKitError.invalidResponse(
                        step: step,
                        reason: .init(
                            .invalidField(path.description), "'\(path)' must list strings, found \(element.typeName)"))
                }
                return scope
            }
        default:
            throw AuthKitError.invalidResponse(
                step: step,
                reason: .init(
                    .invalidField(path.description),
                    "'\(path)' must be a string or an array of strings, got \(value.typeName)"))
        }
    }
}
