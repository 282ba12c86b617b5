/// Why a resource server refused a Bearer token: the `Bearer` challenge of its
/// `WWW-Authenticate` header (RFC 6750 §3), such as
/// `Bearer error="insufficient_scope", scope="repo"`.
///
/// `error` is `invalid_request`, `invalid_token` (expired, revoked, malformed)
/// or `insufficient_scope` (§3.1); `scope` names what the request needs. The
/// header comes from the server and is read as untrusted text: at most 8 KiB
/// of it, quoted strings with their escapes (RFC 9110 §5.6.4), other schemes'
/// challenges in the same field skipped (§11.6.1). The values are raw; show
/// them through ``DisplayText``.
package struct BearerChallenge: Sendable, Equatable {
    package var error: String?
    package var errorDescription: String?
    package var scope: String?

    package init(error: String? = nil, errorDescription: String? = nil, scope: String? = nil) {
        self.error = error
        self.errorDescription = errorDescription
        self.scope = scope
    }

    /// The Bearer challenge among `fields` (each a `WWW-Authenticate` value),
    /// or nil when none is there.
    /// The first challenge of `scheme` (`bearer`, RFC 6750 §3; `dpop`, RFC
    /// 9449 §7.1, which has the same parameters), compared case-insensitively.
    package init?(fields: [String], scheme: String = "bearer") {
        for field in fields {
            if let challenge = Self.parse(Substring(field.prefix(8 << 10)), scheme: scheme) {
                self = challenge
                return
            }
        }
        return nil
    }

    /// The `error` parameter of the first challenge among `fields` that has
    /// one, whatever its scheme: a token endpoint answers a client it
    /// refuses with a challenge of the scheme the client authenticated with
    /// (RFC 6749 §5.2: `Basic` for a client secret sent so), and may name
    /// the error there. An auth-param is read by its name (RFC 9110 §11.2),
    /// so `x_error="…"` is not it, and a quoted value has its escapes undone.
    package static func error(inAnyChallengeOf fields: [String]) -> String? {
        for field in fields {
            if let error = parse(Substring(field.prefix(8 << 10)), scheme: nil)?.error { return error }
        }
        return nil
    }

    /// Reads `challenge *( "," challenge )`, where a challenge is a scheme
    /// followed by a token68 or by `name=value` parameters; returns the
    /// first of `scheme`, or, without one, the first that names an error
    /// (else the last read). Whatever cannot be read ends the reading.
    private static func parse(_ text: Substring, scheme: String?) -> BearerChallenge? {
        var rest = text
        var inBearer = false
        var found: BearerChallenge?
        while true {
            rest = rest.drop { $0 == " " || $0 == "\t" || $0 == "," }
            guard !rest.isEmpty else { return found }
            let name = token(&rest)
            guard !name.isEmpty else {
                // A token68 holding '/' (Basic's base64): not a token; skip it.
                let skipped = rest.prefix { $0.isASCII && ($0.isLetter || $0.isNumber || "-._~+/=".contains($0)) }
                guard !skipped.isEmpty else { return found }
                rest = rest[skipped.endIndex...]
                continue
            }
            let afterName = rest.drop { $0 == " " || $0 == "\t" }
            guard afterName.first == "=" else {
                // A scheme: the next challenge begins.
                if inBearer, scheme != nil || found?.error != nil { return found }
                inBearer = scheme.map { name.lowercased() == $0 } ?? true

                if inBearer { found = BearerChallenge() }
                continue
            }
            let afterEquals = afterName.dropFirst()
            let padding = afterEquals.drop { $0 == "=" }.drop { $0 == " " || $0 == "\t" }
            if afterEquals.first == "=" || padding.isEmpty || padding.first == "," {
                rest = padding // a token68 ending in '=' padding, not a parameter
                continue
            }
            rest = padding
            // An unclosed quoted string, or no token where a value must be
            // (`scope=\u{1B}…`), ends the reading.
            let value = rest.first == "\"" ? quoted(&rest) : token(&rest)
            guard let value, !value.isEmpty || rest.startIndex != padding.startIndex else { return found }
            guard inBearer, var challenge = found else { continue }
            // The first of a repeated parameter counts.
            switch name.lowercased() {
            case "error": challenge.error = challenge.error ?? value
            case "error_description": challenge.errorDescription = challenge.errorDescription ?? value
            case "scope": challenge.scope = challenge.scope ?? value
            default: break
            }
            found = challenge
        }
    }

    /// A token (RFC 9110 §5.6.2); empty when none starts here.
    private static func token(_ text: inout Substring) -> String {
        let end = text.firstIndex { !isTokenCharacter($0) } ?? text.endIndex
        defer { text = text[end...] }
        return String(text[..<end])
    }

    /// A quoted string, its `\` escapes undone; nil when it never closes.
    private static func quoted(_ text: inout Substring) -> String? {
        var value = ""
        var index = text.index(after: text.startIndex)
        while index < text.endIndex {
            let character = text[index]
            if character == "\"" {
                text = text[text.index(after: index)...]
                return value
            }
            if character == "\\" {
                index = text.index(after: index)
                guard index < text.endIndex else { return nil }
            }
            value.append(text[index])
            index = text.index(after: index)
        }
        return nil
    }

    private static func isTokenCharacter(_ character: Character) -> Bool {
        character.isASCII && (character.isLetter || character.isNumber || "!#$%&'*+-.^_`|~".contains(character))
    }
}
