import AuthKitTestSupport
import Foundation
import Testing

/// The Apple-only files cannot be compiled without an Apple SDK; on Linux
/// they must at least parse (`swiftc -parse`), so a syntax error is caught in
/// CI rather than by the first person building for iOS.
@Suite struct AppleSourcesParseTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..")
        .standardized

    static var swiftc: URL? {
        for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":") {
            let candidate = URL(fileURLWithPath: String(directory)).appendingPathComponent("swiftc")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        return nil
    }

    /// The Apple-only sources, and the iOS example docs/library.md shows.
    @Test func appleOnlyFilesParse() async throws {
        let directory = Self.root.appendingPathComponent("Sources/AuthKitApple/Apple")
        let files =
            try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".swift") }
            .sorted()
            .map { directory.appendingPathComponent($0) } + [
                Self.root.appendingPathComponent("Examples/iOS/QiitaSignIn.swift")
            ]
        #expect(files.count >= 4)
        let swiftc = try #require(Self.swiftc, "swiftc is not on PATH")
        for file in files {
            let parsed = try await ChildProcess.run(swiftc.path, ["-parse", file.path])
            #expect(parsed.exit.status == 0, "\(file.lastPathComponent): \(parsed.standardError)")
        }
    }

    /// Every Apple-only file is guarded, so Linux builds of the target compile the portable part only.
    @Test func appleOnlyFilesAreGuarded() throws {
        let directory = Self.root.appendingPathComponent("Sources/AuthKitApple/Apple")
        for file in try FileManager.default.contentsOfDirectory(atPath: directory.path) where file.hasSuffix(".swift") {
            let text = try String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8)
            #expect(text.hasPrefix("#if canImport("), "\(file) must start with #if canImport(…)")
            #expect(text.trimmingCharacters(in: .whitespacesAndNewlines).hasSuffix("#endif"), "\(file)")
        }
    }
}
