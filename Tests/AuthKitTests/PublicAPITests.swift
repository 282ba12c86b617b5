import Foundation
import Testing

/// The `AuthKit` product's public surface is what docs/library.md's "The
/// public API" lists: a new public type must be added there on purpose, and
/// the count stays at or under 38 (35, and the three typed reasons of
/// `network`, `invalidResponse` and `store` errors a caller can switch on).
/// No public declaration takes or returns a raw pointer.
@Suite struct PublicAPITests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func sources() throws -> [(name: String, text: String)] {
        let directory = root.appendingPathComponent("Sources/AuthKit")
        let files = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: nil)?
            .compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" } ?? []
        return try files.map { ($0.lastPathComponent, try String(contentsOf: $0, encoding: .utf8)) }
    }

    static func publicTypes() throws -> Set<String> {
        let pattern = try NSRegularExpression(pattern: #"^\s*(?:public|open)\s+(?:final\s+)?(?:struct|class|enum|protocol|actor|typealias)\s+(\w+)"#,
                                              options: .anchorsMatchLines)
        var names = Set<String>()
        for (_, text) in try sources() {
            for match in pattern.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                names.insert(String(text[Range(match.range(at: 1), in: text)!]))
            }
        }
        return names
    }

    @Test func readmeListsExactlyThePublicTypes() throws {
        let readme = try String(contentsOf: Self.root.appendingPathComponent("docs/library.md"), encoding: .utf8)
        let start = try #require(readme.range(of: "<!-- public-api -->"))
        let end = try #require(readme.range(of: "<!-- /public-api -->"))
        let section = readme[start.upperBound..<end.lowerBound]
        let listed = Set(section.split(separator: "`").enumerated().filter { $0.offset % 2 == 1 }.map { String($0.element) })
        let declared = try Self.publicTypes()
        #expect(declared.subtracting(listed).isEmpty, "public but not in docs/library.md: \(declared.subtracting(listed).sorted())")
        #expect(listed.subtracting(declared).isEmpty, "in docs/library.md but not public: \(listed.subtracting(declared).sorted())")
        #expect(declared.count <= 38, "\(declared.count) public types; the target is 38 or fewer")
    }

    @Test func noPublicDeclarationUsesRawPointers() throws {
        for (name, text) in try Self.sources() {
            for line in text.split(separator: "\n") where line.contains("public ") && line.contains("Unsafe") {
                Issue.record("\(name): \(line.trimmingCharacters(in: .whitespaces))")
            }
        }
    }
}
