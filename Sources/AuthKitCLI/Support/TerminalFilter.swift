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
/// in one character — as does a lone byte 0x80–0x9F, not part of a UTF-8
/// character, on a terminal that reads 8-bit controls. A carriage return
/// not followed by a line feed moves the cursor back over the line, so
/// `safe\rEVIL` reads "EVIL"; the bidirectional formatting characters make
/// text display in another order than it holds (``Unicode/Scalar/isHiddenFormatting``).
/// Select Graphic Rendition (`ESC [ … m`: colours, bold), which APIs meant
/// for terminals send, is passed on, as are tabs and line breaks (`\n`,
/// `\r\n`). A file or a pipe gets every byte unchanged; this is only for a
/// terminal, as curl refuses binary output only there.
///
/// The body arrives in chunks, and a sequence may be split between two:
/// what could still become a colour sequence is held until the next chunk.
struct TerminalFilter {
    /// The bytes held back from the last chunk: an unfinished `ESC [ 1;31`,
    /// an unfinished UTF-8 character (which may be a control), or a `\r`
    /// whose next byte decides whether it ends a line.
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
                guard end < bytes.count else {
                    pending = Array(bytes[index...])
                    return output
                }
                if bytes[end] == UInt8(ascii: "[") {
                    end += 1
                    while end < bytes.count, end - index < Self.longestSequence,
                        (UInt8(ascii: "0")...UInt8(ascii: ";")).contains(bytes[end])
                    { // 0-9, ':' and ';' in ASCII
                        end += 1
                    }
                    if end == bytes.count, end - index < Self.longestSequence {
                        pending = Array(bytes[index...])
                        return output
                    }
                    if end < bytes.count, bytes[end] == UInt8(ascii: "m") {
                        output.append(contentsOf: bytes[index...end])
                        index = end + 1
                        continue
                    }
                }
                Self.appendEscaped(0x1B, to: &output)
                index += 1
            case 0x0D:
                // Part of a line break only with the line feed after it.
                guard index + 1 < bytes.count else {
                    pending = [byte]
                    return output
                }
                if bytes[index + 1] == 0x0A { output.append(byte) } else { Self.appendEscaped(0x0D, to: &output) }
                index += 1
            case 0xC2...0xF4:
                switch Self.character(in: bytes, at: index) {
                case .incomplete:
                    pending = Array(bytes[index...])
                    return output
                case .scalar(let scalar, let length):
                    // U+0080–U+009F, the C1 controls, are C2 80–C2 9F in UTF-8.
                    if scalar.isTerminalControl || scalar.isHiddenFormatting {
                        Self.appendEscaped(scalar.value, to: &output)
                    } else {
                        output.append(contentsOf: bytes[index..<index + length])
                    }
                    index += length
                case .invalid:
                    output.append(byte)
                    index += 1
                }
            case 0x80...0x9F:
                // Not part of a character: an 8-bit terminal reads it as C1 (0x9B is CSI).
                Self.appendEscapedByte(byte, to: &output)
                index += 1
            case 0x09, 0x0A:
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
            switch byte {
            case 0x1B, 0x0D: Self.appendEscaped(UInt32(byte), to: &output)
            case 0x80...0x9F: Self.appendEscapedByte(byte, to: &output)
            default: output.append(byte)
            }
        }
        pending = []
        return output
    }

    enum Character: Equatable {
        case scalar(Unicode.Scalar, length: Int)
        /// The bytes so far could begin a character: wait for the next chunk.
        case incomplete
        /// Not a character: the lead byte is shown on its own.
        case invalid
    }

    /// The UTF-8 character that starts with the lead byte at `index`
    /// (0xC2–0xF4), with its continuation bytes checked as RFC 3629 §4
    /// gives them (no overlong form, no surrogate, nothing past U+10FFFF).
    static func character(in bytes: [UInt8], at index: Int) -> Character {
        let lead = bytes[index]
        let length = lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4
        let secondRange: ClosedRange<UInt8> =
            switch lead {
            case 0xE0: 0xA0...0xBF
            case 0xED: 0x80...0x9F
            case 0xF0: 0x90...0xBF
            case 0xF4: 0x80...0x8F
            default: 0x80...0xBF
            }
        var value = UInt32(lead) & (length == 2 ? 0x1F : length == 3 ? 0x0F : 0x07)
        for offset in 1..<length {
            guard index + offset < bytes.count else { return .incomplete }
            let next = bytes[index + offset]
            guard (offset == 1 ? secondRange : 0x80...0xBF).contains(next) else { return .invalid }
            value = value << 6 | UInt32(next & 0x3F)
        }
        return Unicode.Scalar(value).map { .scalar($0, length: length) } ?? .invalid
    }

    /// `\x9B`: a byte that is not part of a character.
    private static func appendEscapedByte(_ byte: UInt8, to output: inout Data) {
        output.append(contentsOf: Array("\\x\(String(byte, radix: 16, uppercase: true))".utf8))
    }

    private static func appendEscaped(_ value: UInt32, to output: inout Data) {
        output.append(contentsOf: Array("\\u{\(String(value, radix: 16, uppercase: true))}".utf8))
    }
}
