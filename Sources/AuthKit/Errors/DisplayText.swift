/// Text from the network made safe to put in an error message: control
/// characters (C0, DEL, C1 — a terminal reads ESC sequences from them) and
/// the invisible characters that change how text around them reads
/// (``Unicode/Scalar/isHiddenFormatting``) are written as `\u{1B}` escapes,
/// and the text is cut at `limit` characters.
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
            if scalar.isTerminalControl || scalar.isHiddenFormatting {
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
    /// C0, DEL and C1: what a terminal reads escape sequences and line
    /// movements from.
    package var isTerminalControl: Bool { value < 0x20 || (0x7F..<0xA0).contains(value) }

    /// An invisible character that changes how the text around it reads: the
    /// bidirectional formatting characters (U+061C, U+200E, U+200F,
    /// U+202A–U+202E, U+2066–U+2069), with which "Trojan Source"
    /// (CVE-2021-42574, Unicode UTS #55) makes text display in another order
    /// than it holds, and the line and paragraph separators (U+2028, U+2029),
    /// which some terminals break lines at. Readable text in any script has no
    /// need of them; shown, they could make one provider's name, a user code
    /// or an error read as something else.
    ///
    /// Also the characters that show as nothing at all: the zero-width space
    /// (U+200B), the word joiner (U+2060) and the byte-order mark (U+FEFF),
    /// with which `work` and `work\u{200B}` list as the same account. Not
    /// the zero-width joiner and non-joiner (U+200C, U+200D), which Persian,
    /// Indic scripts and emoji sequences need.
    package var isHiddenFormatting: Bool {
        switch value {
        case 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069, 0x2028, 0x2029, 0x200B, 0x2060, 0xFEFF: true
        default: false
        }
    }

    /// `U+001B`: how messages name a character a person cannot see.
    package var codePoint: String {
        let digits = String(value, radix: 16, uppercase: true)
        return "U+" + String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}
