import Foundation
import Testing
@testable import authkit

/// What `authkit request` shows on a terminal: colours pass, every other
/// control character or escape sequence is written out, in whatever chunks
/// the body arrives.
@Suite struct TerminalFilterTests {
    /// The filter's output for `bytes` cut into chunks of `size`.
    func shown(_ bytes: [UInt8], chunks size: Int) -> String {
        var filter = TerminalFilter()
        var output = Data()
        var start = 0
        while start < bytes.count {
            output += filter.filter(bytes[start..<min(bytes.count, start + size)])
            start += size
        }
        output += filter.finish()
        return String(decoding: output, as: UTF8.self)
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
            ("\u{1B}[" + String(repeating: "1;", count: 40) + "m", "\\u{1B}[" + String(repeating: "1;", count: 40) + "m"),
        ]
        for (body, expected) in cases {
            let bytes = Array(body.utf8)
            for size in [1, 2, 3, 7, bytes.count] {
                #expect(shown(bytes, chunks: size) == expected, "\(body.debugDescription) in chunks of \(size)")
            }
        }
    }
}
