import Foundation
import Testing

/// README.md shows the example programs verbatim, so the documented code is
/// the code that compiles (the `…SignInExample` targets) and the test that runs.
@Suite struct ReadmeTests {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..").standardized

    /// The examples and where their code lives: two programs, and the sandbox test that `swift test` runs.
    static let examples = [
        "QiitaSignIn": "Sources/Examples/QiitaSignIn/main.swift",
        "TwitterSignIn": "Sources/Examples/TwitterSignIn/main.swift",
        "SandboxTest": "Tests/AuthKitSandboxTests/ReadmeExampleTests.swift",
        "iOSQiitaSignIn": "Examples/iOS/QiitaSignIn.swift",
    ]

    @Test(arguments: ["QiitaSignIn", "TwitterSignIn", "SandboxTest", "iOSQiitaSignIn"])
    func readmeShowsTheCompiledExample(name: String) throws {
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let example = try String(contentsOf: root.appendingPathComponent(try #require(Self.examples[name])), encoding: .utf8)
        let start = try #require(readme.range(of: "<!-- example:\(name) -->\n```swift\n"))
        let end = try #require(readme.range(of: "```\n<!-- /example -->", range: start.upperBound..<readme.endIndex))
        #expect(String(readme[start.upperBound..<end.lowerBound]) == example)
    }
}
