import Foundation

/// The repository's own Swift files, for tests that hold the sources to a
/// rule a compiler cannot (every variable AuthKit reads is reserved, every
/// Apple availability check names visionOS).
public enum SourceFiles {
    /// The repository's root (this file is `Tests/AuthKitTestSupport/SourceFiles.swift`).
    public static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// Each `.swift` file under `folders` (relative to ``root``), with its text.
    public static func swift(under folders: [String]) throws -> [(url: URL, text: String)] {
        try folders.flatMap { folder in
            let files =
                FileManager.default.enumerator(
                    at: root.appendingPathComponent(folder), includingPropertiesForKeys: nil)?
                .compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" } ?? []
            return try files.map { ($0, try String(contentsOf: $0, encoding: .utf8)) }
        }
    }

    /// The first capture group of each match of `pattern` in `text`.
    public static func captures(of pattern: NSRegularExpression, in text: String) -> [String] {
        pattern.matches(in: text, range: NSRange(text.startIndex..., in: text)).map {
            String(text[Range($0.range(at: 1), in: text)!])
        }
    }
}
