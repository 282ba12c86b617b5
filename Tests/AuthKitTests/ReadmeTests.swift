import Foundation
import Testing

/// README.md shows the example programs verbatim, so the documented code is
/// the code that compiles (the `…SignInExample` targets).
@Suite struct ReadmeTests {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..").standardized

    @Test(arguments: ["QiitaSignIn", "TwitterSignIn"])
    func readmeShowsTheCompiledExample(name: String) throws {
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let example = try String(contentsOf: root.appendingPathComponent("Sources/Examples/\(name)/main.swift"), encoding: .utf8)
        let start = try #require(readme.range(of: "<!-- example:\(name) -->\n```swift\n"))
        let end = try #require(readme.range(of: "```\n<!-- /example -->", range: start.upperBound..<readme.endIndex))
        #expect(String(readme[start.upperBound..<end.lowerBound]) == example)
    }
}
