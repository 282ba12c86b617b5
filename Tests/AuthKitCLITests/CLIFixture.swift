import AuthKit
import AuthKitTestSupport
import Foundation
import Testing

@testable import authkit

/// What the command-line suites share: a fresh home, and one signed in to a
/// Qiita whose endpoints are a local test server.
protocol CLIFixture {}

extension CLIFixture {
    var root: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..").standardized
    }

    func home() throws -> URL {
        let home = try CLIProcess.home("authkit-cli")
        return home
    }

    /// A home whose qiita.json sends to `server`, with a Qiita credential stored.
    func signedInToQiita(at server: TestHTTPServer) throws -> URL {
        let home = try home()
        let bundled = try String(contentsOf: root.appendingPathComponent("providers/qiita.json"), encoding: .utf8)
        try bundled.replacingOccurrences(of: "https://qiita.com", with: server.baseURL)
            .write(to: home.appendingPathComponent("providers/qiita.json"), atomically: true, encoding: .utf8)
        try Data(CLIBoundaryTests.storedQiita.utf8).write(to: home.appendingPathComponent("credentials.json"))
        return home
    }

    /// A home signed in to Qiita at `server`, whose items endpoint answers
    /// `{}`; the environment `request` needs there; the endpoint's URL.
    func qiitaItems(at server: TestHTTPServer) throws -> (home: URL, environment: [String: String], url: String) {
        server.route("POST", "/api/v2/items") { _ in .json("{}") }
        let home = try signedInToQiita(at: server)
        return (
            home, ["AUTHKIT_HOME": home.path, "AUTHKIT_QIITA_CLIENT_ID": "c", "AUTHKIT_QIITA_CLIENT_SECRET": "s"],
            "\(server.baseURL)/api/v2/items"
        )
    }

    /// `authkit request` for `path` at `server`, with the Qiita credential
    /// ``signedInToQiita(at:)`` stores: once through a pipe, and once in a
    /// real terminal (`script` gives one; its output is both streams, as the
    /// terminal shows them).
    func requestPipedAndOnATerminal(_ path: String, at server: TestHTTPServer, options: [String] = []) async throws
        -> (piped: CLIResult, terminal: CLIResult)
    {
        let home = try signedInToQiita(at: server)
        let arguments = ["request", "--provider", "qiita"] + options + ["\(server.baseURL)\(path)"]
        let piped = try await CLIProcess.run(
            arguments, environment: ["AUTHKIT_HOME": home.path, "AUTHKIT_QIITA_CLIENT_ID": "c"])
        let command =
            (["env", "AUTHKIT_HOME=\(home.path)", "AUTHKIT_QIITA_CLIENT_ID=c", CLIProcess.binary.path] + arguments)
            .map { "'\($0)'" }.joined(separator: " ")
        let terminal = try await CLIProcess.run(
            ["-qec", command, "/dev/null"], environment: [:], launcher: ["/usr/bin/script"], bareLauncher: true)
        return (piped, terminal)
    }
}

extension Trait where Self == ConditionTrait {
    /// The tests that run a command at a terminal get one from script(1)
    /// (a pseudo-terminal), and are skipped, saying why, where it is missing.
    static var scriptGivesATerminal: Self {
        .enabled(
            if: FileManager.default.isExecutableFile(atPath: "/usr/bin/script"), "script(1) is not installed (bsdutils)"
        )
    }
}
