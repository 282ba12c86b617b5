import Foundation

/// Where `authkit` writes. Results go to standard output, everything else
/// (prompts, progress, warnings, errors) to standard error, so
/// `authkit … --json | jq` always reads clean JSON.
enum Console {
    static func out(_ text: String) {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }

    static func err(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
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
