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
    /// character (CJK, Hangul, fullwidth forms, emoji; Unicode's East Asian
    /// Width W and F), none for a lone combining mark or format character,
    /// one for any other. A label such as 仕事 would otherwise push the
    /// columns after it out of line. Ambiguous-width characters (A) count as
    /// one, as terminals outside East Asian locales show them.
    var terminalColumns: Int { reduce(0) { $0 + $1.terminalColumns } }
}

extension Character {
    var terminalColumns: Int {
        guard let first = unicodeScalars.first else { return 0 }
        if WideCharacters.contains(first.value) { return 2 }
        // U+FE0F asks for the emoji form, two columns wide: ❤️ (U+2764 U+FE0F).
        if unicodeScalars.contains("\u{FE0F}") { return 2 }
        switch first.properties.generalCategory {
        case .nonspacingMark, .enclosingMark, .format: return 0
        default: return 1
        }
    }
}
