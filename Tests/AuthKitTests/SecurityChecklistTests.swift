import Foundation
import Testing

/// docs/security.md (the requirement → test matrix) cites tests by
/// `Suite.test`; every one must exist, so the checklist cannot point at a
/// test that was renamed or removed.
@Suite struct SecurityChecklistTests {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..").standardized

    @Test func everyCitedTestExists() throws {
        let checklist = try String(contentsOf: root.appendingPathComponent("docs/security.md"), encoding: .utf8)
        let citation = try NSRegularExpression(pattern: #"`([A-Z][A-Za-z0-9]*Tests)\.([a-z][A-Za-z0-9_]*)`"#)
        let matches = citation.matches(in: checklist, range: NSRange(checklist.startIndex..., in: checklist))
        #expect(matches.count > 80)

        var sources = [String: String]()
        let enumerator = FileManager.default.enumerator(
            at: root.appendingPathComponent("Tests"), includingPropertiesForKeys: nil)
        while let url = enumerator?.nextObject() as? URL {
            guard url.pathExtension == "swift" else { continue }
            sources[url.path] = try String(contentsOf: url, encoding: .utf8)
        }
        for match in matches {
            let suite = String(checklist[Range(match.range(at: 1), in: checklist)!])
            let test = String(checklist[Range(match.range(at: 2), in: checklist)!])
            let found = sources.values.contains { source in
                (source.contains("struct \(suite)") || source.contains("extension \(suite)"))
                    && source.contains("func \(test)(")
            }
            #expect(found, "docs/security.md cites \(suite).\(test), which does not exist")
        }
    }
}
