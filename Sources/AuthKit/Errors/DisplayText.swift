/// Text from the network made safe to put in an error message: control
/// characters (C0, DEL, C1 — a terminal reads ESC sequences from them) are
/// written as `\u{1B}` escapes, and the text is cut at `limit` characters.
///
/// Error messages reach terminals and logs; what a provider sends in
/// `error_description` or `expires_in` must not move the cursor, rewrite the
/// line or flood the screen. RFC 6749 §5.2 allows only printable ASCII there,
/// but other printable characters are kept (providers translate messages).
package enum DisplayText {
    package static func sanitized(_ text: String, limit: Int = 300) -> String {
        var output = ""
        var count = 0
        for scalar in text.unicodeScalars {
            guard count < limit else {
                output += "…"
                break
            }
            if scalar.value < 0x20 || (0x7F..<0xA0).contains(scalar.value) {
                output += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
            } else {
                output.unicodeScalars.append(scalar)
            }
            count += 1
        }
        return output
    }
}

extension Unicode.Scalar {
    /// `U+001B`: how messages name a character a person cannot see.
    package var codePoint: String {
        let digits = String(value, radix: 16, uppercase: true)
        return "U+" + String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}
