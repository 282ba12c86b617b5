import AuthKit
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Where `authkit` writes. Results go to standard output, everything else
/// (prompts, progress, warnings, errors) to standard error, so
/// `authkit … --json | jq` always reads clean JSON.
enum Console {
    static func out(_ text: String) {
        write(Data((text + "\n").utf8), to: STDOUT_FILENO)
    }

    static func err(_ text: String) {
        write(Data((text + "\n").utf8), to: STDERR_FILENO)
    }

    /// Writes all of `data`, or as much as the reader takes: a closed pipe
    /// must not crash a sign-in that can still store its credential
    /// (``FileSystem/writeAll(_:_:)``). Returns false when the reader is gone.
    @discardableResult
    static func write(_ data: Data, to descriptor: Int32) -> Bool {
        data.withUnsafeBytes { FileSystem.writeAll(descriptor, $0) }
    }

    /// Pretty, key-sorted JSON of `value` on standard output.
    static func json<T: Encodable>(_ value: T) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        out(String(decoding: try encoder.encode(value), as: UTF8.self))
    }

    static var stderrIsTerminal: Bool { isatty(STDERR_FILENO) != 0 }
}

/// Whether a browser can be opened on this machine, and if not, why.
enum BrowserAvailability {
    /// `nil` when one can (a `$BROWSER`, a display, a Mac's own session); else
    /// what is missing, for the message.
    static func missing(_ environment: [String: String]) -> String? {
        if let browser = environment["BROWSER"], !browser.trimmingSpaces().isEmpty { return nil }
        let overSSH = environment["SSH_CONNECTION"] != nil || environment["SSH_TTY"] != nil
        #if os(macOS)
        return overSSH ? "an SSH session: the browser would open on the remote Mac's screen" : nil
        #else
        let display = [environment["DISPLAY"], environment["WAYLAND_DISPLAY"]].contains { !($0 ?? "").isEmpty }
        if display { return nil }
        return overSSH ? "an SSH session without a display" : "no display ($DISPLAY and $WAYLAND_DISPLAY are unset) and no $BROWSER"
        #endif
    }
}

extension String {
    /// This text cut or padded with spaces to `width` terminal columns: a
    /// column of a table (`padding(toLength:withPad:startingAt:)` is
    /// Foundation's, which authkit does not link on Linux, and counts
    /// characters, not columns).
    func padded(to width: Int) -> String {
        var kept = "", used = 0
        for character in self {
            let columns = character.terminalColumns
            if used + columns > width { break }
            kept.append(character)
            used += columns
        }
        return kept + String(repeating: " ", count: width - used)
    }

    /// How many columns a terminal gives this text: two for each wide
    /// character (CJK, Hangul, fullwidth forms, most emoji; Unicode's East
    /// Asian Width W and F), one for any other. A label such as 仕事 would
    /// otherwise push the columns after it out of line.
    var terminalColumns: Int { reduce(0) { $0 + $1.terminalColumns } }
}

extension Character {
    var terminalColumns: Int {
        guard let first = unicodeScalars.first else { return 0 }
        switch first.value {
        case 0x1100...0x115F, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF, 0xA000...0xA4CF,
             0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE30...0xFE4F, 0xFF00...0xFF60, 0xFFE0...0xFFE6,
             0x1F300...0x1F64F, 0x1F900...0x1F9FF, 0x20000...0x3FFFD:
            return 2
        default:
            return 1
        }
    }
}
