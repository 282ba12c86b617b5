import Foundation
import Testing

/// README.md and the guides in docs/ show the example programs verbatim, so
/// the documented code is the code that compiles (the `…SignInExample`
/// targets) and the test that runs.
@Suite struct ReadmeTests {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..").standardized

    /// The examples and where their code lives: three programs, and the sandbox test that `swift test` runs.
    static let examples = [
        "QiitaSignIn": "Examples/QiitaSignIn/main.swift",
        "TwitterSignIn": "Examples/TwitterSignIn/main.swift",
        "GoogleSignIn": "Examples/GoogleSignIn/main.swift",
        "SandboxTest": "Tests/AuthKitSandboxTests/ReadmeExampleTests.swift",
        "iOSQiitaSignIn": "Examples/iOS/QiitaSignIn.swift",
    ]

    @Test(arguments: ["QiitaSignIn", "TwitterSignIn", "GoogleSignIn", "SandboxTest", "iOSQiitaSignIn"])
    func readmeShowsTheCompiledExample(name: String) throws {
        let example = try String(
            contentsOf: root.appendingPathComponent(try #require(Self.examples[name])), encoding: .utf8)
        let marker = "<!-- example:\(name) -->\n```swift\n"
        let shown = try documents().filter { $0.text.contains(marker) }
        #expect(shown.count == 1, "example \(name) is shown in \(shown.map(\.name)), once expected")
        let text = try #require(shown.first?.text)
        let start = try #require(text.range(of: marker))
        let end = try #require(text.range(of: "```\n<!-- /example -->", range: start.upperBound..<text.endIndex))
        #expect(String(text[start.upperBound..<end.lowerBound]) == example)
    }

    /// README.md, then every guide in docs/, each with its path for messages.
    func documents() throws -> [(name: String, text: String)] {
        let docs = root.appendingPathComponent("docs")
        let guides =
            (try? FileManager.default.contentsOfDirectory(atPath: docs.path))?.filter { $0.hasSuffix(".md") }.sorted()
            ?? []
        return try (["README.md"] + guides.map { "docs/\($0)" }).map { name in
            (name, try String(contentsOf: root.appendingPathComponent(name), encoding: .utf8))
        }
    }

    /// The other Swift blocks are fragments: each paragraph of one
    /// (lines between blank lines) must appear line for line, indentation
    /// aside, in a test source, where it is compiled and run (most in
    /// `AuthKitSandboxTests/ReadmeFragmentTests.swift`); a paragraph of
    /// `import` lines must name products. The block marked
    /// `<!-- manifest -->` is a user's Package.swift: the products it names
    /// must exist, and its package requirements must be this package's own.
    @Test func everyOtherSwiftBlockIsCompiledInATest() throws {
        let manifest = try String(contentsOf: root.appendingPathComponent("Package.swift"), encoding: .utf8)
        let products = Set(manifest.matches(of: /\.library\(name: "(\w+)"/).map { String($0.1) })
        let sources = try testSources().map { $0.split(separator: "\n", omittingEmptySubsequences: false).map(trimmed) }
        var fragments = 0
        let blocks = try documents().flatMap { document in
            Self.swiftBlocks(in: document.text).map { (document.name, $0) }
        }
        for (document, block) in blocks where !block.marker.hasPrefix("<!-- example:") {
            if block.marker == "<!-- manifest -->" {
                for line in block.lines.map(trimmed) {
                    if let product = line.firstMatch(of: /\.product\(name: "(\w+)", package: "authkit"\)/) {
                        #expect(
                            products.contains(String(product.1)),
                            "\(document) line \(block.line): no product \(product.1)")
                    } else if line.hasPrefix(".package(url:"), !line.contains("your-org") {
                        let required = manifest.contains(line)
                        #expect(required, "\(document) line \(block.line): Package.swift has no \(line)")
                    }
                }
                continue
            }
            fragments += 1
            for paragraph in block.lines.split(whereSeparator: { trimmed($0).isEmpty }).map({ $0.map(trimmed) }) {
                if paragraph.allSatisfy({ $0.hasPrefix("import ") }) {
                    for module in paragraph.map({ $0.dropFirst("import ".count) }) {
                        #expect(
                            products.contains(String(module)),
                            "\(document) line \(block.line): no product \(module) to import")
                    }
                    continue
                }
                let found = sources.contains { source in
                    source.indices.contains { source[$0...].starts(with: paragraph) }
                }
                #expect(
                    found,
                    "\(document) line \(block.line): no test source holds these lines:\n\(paragraph.joined(separator: "\n"))"
                )
            }
        }
        #expect(fragments >= 5)
    }

    /// A document's ```swift blocks: the line before each (a marker comment
    /// or prose), the line number of its first line, and its lines.
    static func swiftBlocks(in readme: String) -> [(marker: String, line: Int, lines: [Substring])] {
        let lines = readme.split(separator: "\n", omittingEmptySubsequences: false)
        var blocks: [(marker: String, line: Int, lines: [Substring])] = []
        var index = 0
        while index < lines.count {
            guard lines[index] == "```swift" else {
                index += 1
                continue
            }
            let body = lines[(index + 1)...].prefix { $0 != "```" }
            blocks.append((index > 0 ? String(lines[index - 1]) : "", index + 2, Array(body)))
            index += body.count + 2
        }
        return blocks
    }

    /// Every Swift file under Tests/ but this one.
    func testSources() throws -> [String] {
        let tests = root.appendingPathComponent("Tests")
        let files =
            FileManager.default.enumerator(at: tests, includingPropertiesForKeys: nil)?.compactMap { $0 as? URL } ?? []
        return try files.filter { $0.pathExtension == "swift" && $0.lastPathComponent != "ReadmeTests.swift" }
            .map { try String(contentsOf: $0, encoding: .utf8) }
    }

    private func trimmed(_ line: Substring) -> String { line.trimmingCharacters(in: .whitespaces) }
}
