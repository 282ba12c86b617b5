import Foundation
import Testing

/// Each product's public surface is what docs/library.md's "The public API"
/// lists for it: a new public type must be added there on purpose. `AuthKit`
/// stays at or under 26 types, all products together at or under 45 (issue
/// 45's aim; docs/library.md says what each removed type became). No public declaration
/// takes or returns a raw pointer. `@_spi` declarations are not API (a
/// caller must ask for them by name) and are not counted.
@Suite struct PublicAPITests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The library products and their source folders. The product
    /// `AuthKitFoundationNetworking` is not listed: its two files are links
    /// to AuthKit's (compiled there on Linux instead), so its public types
    /// are AuthKit's, counted once.
    static let products = [
        "AuthKit", "AuthKitOAuth1", "AuthKitLoopback", "AuthKitSandbox", "AuthKitAsyncHTTPClient", "AuthKitApple",
        "AuthKitServer", "AuthKitPostgres", "AuthKitHummingbird",
    ]

    static func sources(of product: String = "AuthKit") throws -> [(name: String, text: String)] {
        let directory = root.appendingPathComponent("Sources/\(product)")
        let files =
            FileManager.default.enumerator(at: directory, includingPropertiesForKeys: nil)?
            .compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" } ?? []
        return try files.map { ($0.lastPathComponent, try String(contentsOf: $0, encoding: .utf8)) }
    }

    static func publicTypes(of product: String = "AuthKit") throws -> Set<String> {
        let pattern = try NSRegularExpression(
            pattern: #"^\s*(?:public|open)\s+(?:final\s+)?(?:struct|class|enum|protocol|actor|typealias)\s+(\w+)"#,
            options: .anchorsMatchLines)
        var names = Set<String>()
        for (_, text) in try sources(of: product) {
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
        let listed = Set(
            section.split(separator: "`").enumerated().filter { $0.offset % 2 == 1 }.map { String($0.element) })
        let declared = try Self.publicTypes()
        #expect(
            declared.subtracting(listed).isEmpty,
            "public but not in docs/library.md: \(declared.subtracting(listed).sorted())")
        #expect(
            listed.subtracting(declared).isEmpty,
            "in docs/library.md but not public: \(listed.subtracting(declared).sorted())")
        #expect(declared.count <= 26, "\(declared.count) public types; the target is 26 or fewer")
    }

    /// Every other product's list, and the count over all of them.
    @Test func theDocsListEveryProductsPublicTypes() throws {
        let docs = try String(contentsOf: Self.root.appendingPathComponent("docs/library.md"), encoding: .utf8)
        var total = 0
        for product in Self.products.dropFirst() {
            let start = try #require(
                docs.range(of: "<!-- public-api \(product) -->"), "docs/library.md lists nothing for \(product)")
            let end = try #require(docs[start.upperBound...].range(of: "<!-- /public-api -->"))
            let listed = Set(
                docs[start.upperBound..<end.lowerBound].split(separator: "`").enumerated().filter { $0.offset % 2 == 1 }
                    .map { String($0.element) })
            let declared = try Self.publicTypes(of: product)
            #expect(
                declared.subtracting(listed).isEmpty,
                "\(product): public but not in docs/library.md: \(declared.subtracting(listed).sorted())")
            #expect(
                listed.subtracting(declared).isEmpty,
                "\(product): in docs/library.md but not public: \(listed.subtracting(declared).sorted())")
            total += declared.count
        }
        total += try Self.publicTypes().count
        #expect(total <= 45, "\(total) public types across the products; the bound is 45 (issue 45)")
    }

    @Test func noPublicDeclarationUsesRawPointers() throws {
        let sources = try Self.products.flatMap { try Self.sources(of: $0) }
        #expect(sources.count > 50, "the products' sources were not found")
        for (name, text) in sources {
            for line in text.split(separator: "\n") where line.contains("public ") && line.contains("Unsafe") {
                Issue.record("\(name): \(line.trimmingCharacters(in: .whitespaces))")
            }
        }
    }
}
