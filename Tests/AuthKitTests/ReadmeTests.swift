import Foundation
import Testing

/// README.md shows the Qiita example verbatim, so the documented code is the
/// code that compiles (the `QiitaSignInExample` target).
@Suite struct ReadmeTests {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..").standardized

    @Test func readmeShowsTheCompiledExample() throws {
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let example = try String(contentsOf: root.appendingPathComponent("Sources/Examples/QiitaSignIn/main.swift"), encoding: .utf8)
        let start = try #require(readme.range(of: "<!-- example:QiitaSignIn -->\n```swift\n"))
        let end = try #require(readme.range(of: "```\n<!-- /example -->", range: start.upperBound..<readme.endIndex))
        #expect(String(readme[start.upperBound..<end.lowerBound]) == example)
    }
}
