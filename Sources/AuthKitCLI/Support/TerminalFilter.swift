#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What `authkit request` writes to a terminal: the server's bytes, with
/// every control character and escape sequence shown as text (`\u{1B}]52;…`)
/// rather than obeyed, colours aside.
///
/// A response body is the server's bytes, and a terminal acts on some of
/// them: OSC 52 writes the clipboard (a command for the user to paste),
/// OSC 0 retitles the window, CSI sequences clear the screen or move the
/// cursor over what was printed, and C1 controls (U+0080–U+009F) do the same
/// in one character. Select Graphic Rendition (`ESC [ … m`: colours, bold),
/// which APIs meant for terminals send, is passed on, as are tabs and line
/// breaks. A file or a pipe gets every byte unchanged; this is only for a
/// terminal, as curl refuses binary output only there.
///
/// The body arrives in chunks, and a sequence may be split between two:
/// what could still become a colour sequence is held until the next chunk.
struct TerminalFilter {
    /// The bytes held back from the last chunk: an unfinished `ESC [ 1;31`,
    /// or the first byte of a two-byte character that may be a C1 control.
    private var pending: [UInt8] = []
    /// No colour sequence is longer (`ESC [ 38;2;255;255;255;48;2;255;255;255 m`
    /// is 38 bytes); a longer one is shown as text.
    private static let longestSequence = 64

    mutating func filter(_ chunk: some Collection<UInt8>) -> Data {
        let bytes = pending + Array(chunk)
        pending = []
        var output = Data(capacity: bytes.count)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case 0x1B:
                // ESC [ (digits, ; and :)* m: a colour, kept. The colon
                // separates sub-parameters (ITU-T T.416): `ESC[38:2::255:0:0m`
                // for a true colour, `ESC[4:3m` for a curly underline.
                var end = index + 1
                guard end < bytes.count else { pending = Array(bytes[index...]); return output }
                if bytes[end] == UInt8(ascii: "[") {
                    end += 1
                    while end < bytes.count, end - index < Self.longestSequence,
                          (UInt8(ascii: "0")...UInt8(ascii: ";")).contains(bytes[end]) { // 0-9, ':' and ';' in ASCII
                        end += 1
                    }
                    if end == bytes.count, end - index < Self.longestSequence { pending = Array(bytes[index...]); return output }
                    if end < bytes.count, bytes[end] == UInt8(ascii: "m") {
                        output.append(contentsOf: bytes[index...end])
                        index = end + 1
                        continue
                    }
                }
                Self.appendEscaped(0x1B, to: &output)
                index += 1
            case 0xC2:
                // U+0080–U+009F, the C1 controls, are C2 80–C2 9F in UTF-8.
                guard index + 1 < bytes.count else { pending = [byte]; return output }
                if (0x80...0x9F).contains(bytes[index + 1]) {
                    Self.appendEscaped(UInt32(bytes[index + 1]), to: &output)
                    index += 2
                } else {
                    output.append(byte)
                    index += 1
                }
            case 0x09, 0x0A, 0x0D:
                output.append(byte)
                index += 1
            case 0..<0x20, 0x7F:
                Self.appendEscaped(UInt32(byte), to: &output)
                index += 1
            default:
                output.append(byte)
                index += 1
            }
        }
        return output
    }

    /// What was held back when the body ends, shown as text.
    mutating func finish() -> Data {
        guard !pending.isEmpty else { return Data() }
        var output = Data()
        for byte in pending {
            if byte == 0x1B { Self.appendEscaped(0x1B, to: &output) } else { output.append(byte) }
        }
        pending = []
        return output
    }

    private static func appendEscaped(_ value: UInt32, to output: inout Data) {
        output.append(contentsOf: Array("\\u{\(String(value, radix: 16, uppercase: true))}".utf8))
    }
}
