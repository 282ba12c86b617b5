import Foundation
import Testing

/// docs/security.md (the requirement → test matrix), and every other page
/// of the docs, cites tests by `Suite.test` (or `…test` after one in the
/// same row, for the same suite); every one must exist in that suite, so
/// no page can point at a test that was renamed, removed or is another
/// suite's.
@Suite struct SecurityChecklistTests {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..").standardized

    /// The type each `func` of `source` is declared in: the nearest type
    /// declaration above it, indented less.
    static func enclosingTypes(in source: String) -> [(type: String, function: String)] {
        var open: [(indent: Int, name: String)] = []
        var found: [(String, String)] = []
        for line in source.split(separator: "\n", omittingEmptySubsequences: false) {
            let indent = line.prefix { $0 == " " }.count
            var words = Self.withoutAttributes(line.dropFirst(indent)).split(separator: " ")
            while let first = words.first, ["public", "package", "private", "fileprivate", "final"].contains(first) {
                words.removeFirst()
            }
            guard words.count >= 2 else { continue }
            let name = String(words[1].prefix { $0.isLetter || $0.isNumber || $0 == "_" })
            if ["struct", "extension", "class", "enum", "actor"].contains(words[0]) {
                open.removeAll { $0.indent >= indent }
                open.append((indent, name))
            } else if words[0] == "func", let type = open.last(where: { $0.indent < indent }) {
                found.append((type.name, name))
            }
        }
        return found
    }

    /// `text` after its leading attributes (`@Test(.timeLimit(.minutes(1)))`, `@MainActor`).
    static func withoutAttributes(_ text: Substring) -> Substring {
        var rest = text
        while rest.first == "@" {
            rest = rest.dropFirst().drop { $0.isLetter || $0.isNumber || $0 == "_" }
            if rest.first == "(" {
                var depth = 0
                rest = rest.drop { character in
                    if character == "(" { depth += 1 } else if character == ")" { depth -= 1 }
                    return depth > 0
                }.dropFirst()
            }
            rest = rest.drop { $0 == " " }
        }
        return rest
    }

    @Test func everyCitedTestExists() throws {
        let citation = try NSRegularExpression(pattern: #"`(?:([A-Z][A-Za-z0-9]*Tests)\.|…)([a-z][A-Za-z0-9_]*)`"#)

        var declared = Set<String>()
        let enumerator = FileManager.default.enumerator(
            at: root.appendingPathComponent("Tests"), includingPropertiesForKeys: nil)
        while let url = enumerator?.nextObject() as? URL {
            guard url.pathExtension == "swift" else { continue }
            for (type, function) in Self.enclosingTypes(in: try String(contentsOf: url, encoding: .utf8)) {
                declared.insert("\(type).\(function)")
            }
        }
        // docs/security.md and every other page that cites a test as evidence
        // (docs/web.md cited one under its file's name, not its suite's).
        let docs = root.appendingPathComponent("docs")
        let pages =
            try FileManager.default.contentsOfDirectory(atPath: docs.path).filter { $0.hasSuffix(".md") }.sorted()
            .map { "docs/\($0)" } + ["README.md", "SECURITY.md", "Benchmarks/README.md"]
        #expect(pages.contains("docs/security.md"))
        var cited = 0
        for page in pages {
            cited += try citations(
                in: String(contentsOf: root.appendingPathComponent(page), encoding: .utf8), page: page,
                pattern: citation, declared: declared)
        }
        #expect(cited > 200)
    }

    /// Checks the citations of one page; returns how many it has.
    private func citations(in text: String, page: String, pattern citation: NSRegularExpression, declared: Set<String>)
        -> Int
    {
        var cited = 0
        for row in text.split(separator: "\n").map(String.init) {
            var suite: String?
            for match in citation.matches(in: row, range: NSRange(row.startIndex..., in: row)) {
                if let named = Range(match.range(at: 1), in: row) { suite = String(row[named]) }
                guard let suite else { continue } // a `…name` with no suite before it: not a citation
                let test = String(row[Range(match.range(at: 2), in: row)!])
                cited += 1
                let exists = declared.contains("\(suite).\(test)")
                #expect(exists, "\(page) cites \(suite).\(test), which is no test of \(suite)")
            }
        }
        return cited
    }
}
