import Foundation
import Testing

@testable import authkit

/// What `authkit request` shows on a terminal: colours pass, every other
/// control character or escape sequence is written out, in whatever chunks
/// the body arrives.
@Suite struct TerminalFilterTests {
    /// The filter's output for `bytes` cut into chunks of `size`.
    func filtered(_ bytes: [UInt8], chunks size: Int) -> [UInt8] {
        var filter = TerminalFilter()
        var output = Data()
        var start = 0
        while start < bytes.count {
            output += filter.filter(bytes[start..<min(bytes.count, start + size)])
            start += size
        }
        output += filter.finish()
        return Array(output)
    }

    func shown(_ bytes: [UInt8], chunks size: Int) -> String {
        String(decoding: filtered(bytes, chunks: size), as: UTF8.self)
    }

    @Test func coloursPassAndEverythingElseIsShown() {
        let cases: [(String, String)] = [
            ("plain text, tabs\tand lines\r\n", "plain text, tabs\tand lines\r\n"),
            ("\u{1B}[1;31mred\u{1B}[0m ok", "\u{1B}[1;31mred\u{1B}[0m ok"),
            ("\u{1B}[38:2::255:0:0mtrue\u{1B}[4:3m", "\u{1B}[38:2::255:0:0mtrue\u{1B}[4:3m"), // sub-parameters (T.416)
            ("\u{1B}[1:2H", "\\u{1B}[1:2H"), // not a colour, colon or not
            ("\u{1B}]52;c;cm0gLXJmIH4=\u{07}", "\\u{1B}]52;c;cm0gLXJmIH4=\\u{7}"), // OSC 52: the clipboard
            ("\u{1B}]0;pwned\u{07}title", "\\u{1B}]0;pwned\\u{7}title"),
            ("\u{1B}[2J\u{1B}[H", "\\u{1B}[2J\\u{1B}[H"), // clear screen, cursor home
            ("a\u{9B}2Jb", "a\\u{9B}2Jb"), // C1 CSI
            ("\u{7F}\u{08}", "\\u{7F}\\u{8}"),
            ("日本語 é", "日本語 é"),
            ("ends in ESC \u{1B}", "ends in ESC \\u{1B}"),
            ("ends in \u{1B}[12", "ends in \\u{1B}[12"),
            (
                "\u{1B}[" + String(repeating: "1;", count: 40) + "m",
                "\\u{1B}[" + String(repeating: "1;", count: 40) + "m"
            ),
            // A carriage return that ends no line moves the cursor back over it: "safe" read "EVIL".
            ("safe line\rEVIL\r\nnext\r", "safe line\\u{D}EVIL\r\nnext\\u{D}"),
            // Trojan Source (CVE-2021-42574): text displayed in another order than it holds.
            ("abc\u{202E}fed\u{2066}x\u{2069} \u{200F}", "abc\\u{202E}fed\\u{2066}x\\u{2069} \\u{200F}"),
            ("€ 𝄞 \u{10FFFF} \u{A0}", "€ 𝄞 \u{10FFFF} \u{A0}"),
        ]
        for (body, expected) in cases {
            let bytes = Array(body.utf8)
            for size in [1, 2, 3, 7, bytes.count] {
                #expect(shown(bytes, chunks: size) == expected, "\(body.debugDescription) in chunks of \(size)")
            }
        }
    }

    /// Bytes that are not UTF-8: one in 0x80–0x9F on its own is a C1 control
    /// to a terminal that reads 8-bit controls (0x9B is CSI), and is shown;
    /// the other invalid bytes, which a terminal shows as a replacement
    /// character, pass. A character split between chunks is held, not broken.
    @Test func bytesThatAreNotCharactersAreShownWhereATerminalCouldObeyThem() {
        func text(_ string: String) -> [UInt8] { Array(string.utf8) }
        let cases: [([UInt8], [UInt8])] = [
            ([0x61, 0x9B, 0x32, 0x4A], text("a\\x9B2J")), // raw CSI
            ([0xC3, 0xA9, 0x85], text("é\\x85")), // a stray continuation byte (NEL)
            ([0xE2, 0x82], [0xE2] + text("\\x82")), // cut off at the end
            ([0xC0, 0xAF, 0xFF], [0xC0, 0xAF, 0xFF]), // overlong, invalid: the terminal's replacement
            ([0xED, 0xA0, 0x80], [0xED, 0xA0] + text("\\x80")), // a surrogate is no character
            ([0xC2, 0x9B], text("\\u{9B}")), // U+009B as UTF-8
            ([0xF0, 0x9D, 0x84, 0x9E], [0xF0, 0x9D, 0x84, 0x9E]), // 𝄞, whose bytes include 0x9D and 0x9E
        ]
        for (bytes, expected) in cases {
            for size in [1, 2, bytes.count] {
                let output = filtered(bytes, chunks: size)
                #expect(output == expected, "\(bytes) in chunks of \(size): \(output)")
            }
        }
    }
    /// `--json` on a terminal: what JSONEncoder leaves raw and a terminal
    /// obeys or hides (C1 CSI/OSC, DEL, a bidirectional override, a line
    /// separator) is written as `\uXXXX`; a parser reads the same value.
    @Test func jsonOutputEscapesWhatATerminalWouldObey() throws {
        let raw = "{\"claim\":\"a\u{9B}2J\u{9D}52;c;x\u{7F}\u{202E}b\u{2028}é\"}"
        let escaped = Console.escapingInvisibles(raw)
        #expect(escaped == #"{"claim":"a\u009b2J\u009d52;c;x\u007f\u202eb\u2028é"}"#)
        #expect(!escaped.unicodeScalars.contains { (0x7F...0x9F).contains($0.value) || $0.value == 0x202E })
        let parsed = try JSONSerialization.jsonObject(with: Data(escaped.utf8)) as? [String: String]
        let original = try JSONSerialization.jsonObject(with: Data(raw.utf8)) as? [String: String]
        #expect(parsed == original && parsed != nil)
        #expect(Console.escapingInvisibles(#"{"plain":"text"}"#) == #"{"plain":"text"}"#)
    }
}
