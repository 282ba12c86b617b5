/// One scope as RFC 6749 §3.3 defines it: `scope-token = 1*( %x21 / %x23-5B
/// / %x5D-7E )`, printable ASCII without a space, `"` or `\`.
///
/// Scopes are sent joined by the descriptor's separator, so a value holding
/// a space (`repo user`) is two scopes to a provider that separates with
/// spaces and one unknown scope to one that separates with commas; a
/// control character (a pasted line break) is sent as `%0A` and refused by
/// the provider only after the user has approved in the browser. Each place
/// that takes scopes (`--scope`, `config.json`, a descriptor) refuses such a
/// value in its own words.
package enum ScopeToken {
    package enum Problem: Equatable {
        case empty
        /// Scope names separated by spaces, each a valid token: give them one by one.
        case several([String])
        /// One valid token with spaces around it.
        case spacesAround(String)
        /// A control character, a non-ASCII character, `"` or `\`.
        case character
    }

    package static func problem(_ text: String) -> Problem? {
        if text.allSatisfy(\.isWhitespace) { return .empty }
        if text.unicodeScalars.allSatisfy(isTokenCharacter) { return nil }
        let words = text.split(separator: " ").map(String.init)
        if words.allSatisfy({ $0.unicodeScalars.allSatisfy(isTokenCharacter) }) {
            return words.count > 1 ? .several(words) : .spacesAround(words[0])
        }
        return .character
    }

    private static func isTokenCharacter(_ scalar: Unicode.Scalar) -> Bool {
        (0x21...0x7E).contains(scalar.value) && scalar != "\"" && scalar != "\\"
    }

    /// What is wrong with `scope`, in a file's list of scopes (`config.json`, a descriptor).
    package static func describe(_ problem: ScopeToken.Problem, _ scope: String) -> String {
        switch problem {
        case .empty:
            return "holds an empty scope; remove it."
        case .several(let names):
            return
                "'\(DisplayText.sanitized(scope, limit: 80))' is several scopes; list each on its own: \(names.map { "\"\($0)\"" }.joined(separator: ", "))."
        case .spacesAround(let name):
            return "'\(DisplayText.sanitized(scope, limit: 80))' begins or ends with a space; write \"\(name)\"."
        case .character:
            return
                "'\(DisplayText.sanitized(scope, limit: 80))' holds a control character, a non-ASCII one, '\"' or '\\', which no scope has (RFC 6749 §3.3)."
        }
    }
}
