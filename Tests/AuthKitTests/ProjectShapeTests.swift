import Foundation
import Testing

/// The bounds issue 45 set on the project's shape, so that they hold after it:
/// the entry-point documents stay short (details go to docs/), and the root
/// manifest lists what users depend on, not the side programs.
@Suite struct ProjectShapeTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    static func text(_ path: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
    }

    /// Issue 45's bounds, in thousands of bytes (the stricter reading of "KB").
    @Test(arguments: [("README.md", 15), ("SECURITY.md", 8), ("Benchmarks/README.md", 12)])
    func entryDocumentsStayShort(path: String, kilobytes: Int) throws {
        let size = try Self.text(path).utf8.count
        #expect(
            size <= kilobytes * 1000, "\(path) is \(size) bytes; at most \(kilobytes) KB, the rest belongs in docs/")
    }

    /// Examples, benchmarks and fuzzers are packages of their own
    /// (Examples/, Benchmarks/, Fuzz/), depending on the root by path; the
    /// core's test target holds the tests of the transports, AuthKitApple's
    /// portable logic and the stores across processes (issue 45's bound, 20,
    /// held again after the web-backend products added four).
    @Test func theRootManifestListsAtMostTwentyTargets() throws {
        let manifest = try Self.text("Package.swift")
        // A declaration, not a dependency on one (`.target(name: "CAuthKitLinux", condition: …)`).
        let targets = manifest.matches(
            of: /\.(?:target|executableTarget|testTarget|systemLibrary)\(\s*name:\s*"\w+"(?!,\s*condition:)/
        )
        .count
        #expect(targets > 0 && targets <= 20, "Package.swift declares \(targets) targets; the bound is 20")
        for nested in ["Examples", "Benchmarks", "Fuzz"] {
            let side = try Self.text("\(nested)/Package.swift")
            #expect(
                side.contains(#".package(name: "AuthKit", path: "..")"#),
                "\(nested)/Package.swift does not depend on the root by path")
        }
    }

    /// `.ci/run` lints with this configuration; the line length is the one
    /// async-http-client uses.
    @Test func theFormatterIsConfiguredAndRunInCI() throws {
        let configuration =
            try JSONSerialization.jsonObject(with: Data(try Self.text(".swift-format").utf8)) as? [String: Any]
        #expect(configuration?["lineLength"] as? Int == 120)
        #expect(try Self.text(".ci/run").contains("swift format lint --strict"))
    }
}
