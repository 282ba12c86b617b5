import AuthKit
import AuthKitSandbox
import AuthKitTestSupport
import Foundation
import Testing

/// `authkit request` speaks a little more curl (-i, -o, -f, -s) and takes a
/// path against the provider's API, as `gh api /user` does.
@Suite struct RequestCurlFlagsTests {
    @Test func includeOutputFailSilentAndPaths() async throws {
        let home = try CLIProcess.home("authkit-request-curl")
        let sandbox = try await Sandbox.start(
            emulating: try ProviderCatalog(includeBundled: true, directories: []).descriptor(id: "github"),
            options: SandboxOptions(approves: true))
        defer { Task { await sandbox.stop() } }
        let environment = ["AUTHKIT_HOME": home.path, "AUTHKIT_SANDBOX": sandbox.baseURL.absoluteString]
        func run(_ arguments: [String]) async throws -> CLIResult {
            try await CLIProcess.run(arguments, environment: environment, timeout: 60)
        }
        #expect(try await run(["authorize", "--provider", "github", "--scripted-browser"]).status == 0)

        // A path goes to the provider's API: here, the sandbox's.
        let path = try await run(["request", "--provider", "github", "/whoami"])
        #expect(path.status == 0 && path.stdout.contains(#""account":"alice""#), "\(path.stderr)")
        // -s: nothing on standard error (the sandbox's note included).
        let silent = try await run(["request", "-s", "--provider", "github", "/whoami"])
        #expect(silent.status == 0 && silent.stderr.isEmpty, "\(silent.stderr)")
        // -i: the status line and headers, then the body.
        let include = try await run(["request", "-i", "--provider", "github", "/whoami"])
        #expect(include.stdout.hasPrefix("HTTP/1.1 200"), "\(include.stdout)")
        #expect(include.stdout.contains("Content-Type: application/json\r\n"), "\(include.stdout)")
        #expect(include.stdout.contains("\r\n\r\n{\"account\""), "\(include.stdout)")
        // -o: the body to a file, nothing on standard output.
        let file = home.appendingPathComponent("me.json").path
        let output = try await run(["request", "--provider", "github", "-o", file, "/whoami"])
        #expect(output.status == 0 && output.stdout.isEmpty)
        #expect(try String(contentsOfFile: file, encoding: .utf8).contains(#""account":"alice""#))
        // -i -o: the head goes into the file before the body, as curl's does; none to standard output.
        let both = try await run(["request", "-i", "--provider", "github", "-o", file, "/whoami"])
        #expect(both.status == 0 && both.stdout.isEmpty, "\(both.stdout)")
        let saved = try String(contentsOfFile: file, encoding: .utf8)
        #expect(saved.hasPrefix("HTTP/1.1 200") && saved.contains("\r\n\r\n{\"account\":\"alice\""), "\(saved)")
        // -f: no body for a 404, and the exit status says it failed.
        let failed = try await run(["request", "-f", "--provider", "github", "/nosuch"])
        #expect(failed.status == 3 && failed.stdout.isEmpty, "\(failed.stdout)")
        let shown = try await run(["request", "--provider", "github", "/nosuch"])
        #expect(shown.status == 3 && shown.stdout.contains("not_found"), "\(shown.stdout)")
        // -H twice with one name sends both values, as curl does (the
        // second replaced the first); Accept, sent with every request, once.
        let twice = try await run([
            "request", "--provider", "github", "-H", "X-Tag: a", "-H", "X-Tag: b", "-H", "Accept: text/x-one",
            "-H", "Accept: text/x-two", "/echo",
        ])
        #expect(twice.status == 0, "\(twice.stderr)")
        #expect(
            twice.stdout.contains(#"["x-tag","a"]"#) && twice.stdout.contains(#"["x-tag","b"]"#)
                && twice.stdout.contains(#"["accept","text/x-two"]"#) && !twice.stdout.contains("text/x-one"),
            "\(twice.stdout)")
    }

    @Test func aPathWithoutAnAPIOriginNamesTheFix() async throws {
        let home = try CLIProcess.home("authkit-request-path")
        try FileManager.default.createDirectory(
            at: home.appendingPathComponent("providers"), withIntermediateDirectories: true)
        try Data(
            #"{"id": "bare", "protocol": "oauth2", "authorization": {"url": "https://bare.example/a"}, "token": {"url": "https://bare.example/t"}}"#
                .utf8
        ).write(to: home.appendingPathComponent("providers/bare.json"))
        let result = try await CLIProcess.run(
            ["request", "--provider", "bare", "/user"], environment: ["AUTHKIT_HOME": home.path])
        #expect(result.status == 64 && result.stderr.contains("api.origins"), "\(result.stderr)")
    }

    /// What would not be sent is refused, not dropped: a HEAD request's body
    /// (an OAuth 1.0a signature covered its fields), and the removal of a
    /// header every request carries (docs said `-H 'Name:'` removed it).
    @Test func aBodyForHEADAndTheRemovalOfAHeaderAlwaysSentAreRefused() async throws {
        let home = try CLIProcess.home("authkit-request-refused")
        let head = try await CLIProcess.run(
            ["request", "--provider", "github", "-X", "HEAD", "-d", "a=b", "https://api.github.com/user"],
            environment: ["AUTHKIT_HOME": home.path])
        #expect(head.status == 64 && head.stderr.contains("-X HEAD sends no body"), "\(head.stderr)")
        for name in ["User-Agent", "Accept", "accept-encoding"] {
            let removed = try await CLIProcess.run(
                ["request", "--provider", "github", "-H", "\(name):", "https://api.github.com/user"],
                environment: ["AUTHKIT_HOME": home.path])
            #expect(
                removed.status == 64 && removed.stderr.contains("authkit always sends \(name)"), "\(removed.stderr)")
        }
    }

    @Test func anotherCurlOptionIsPointedAtTokenHeader() async throws {
        let result = try await CLIProcess.run(
            ["request", "--insecure", "--provider", "github", "https://api.github.com/user"], environment: [:])
        #expect(result.status == 64 && result.stderr.hasPrefix("authkit: error: Unknown option '--insecure'"))
        #expect(result.stderr.contains("authkit token header --provider ID URL"), "\(result.stderr)")
    }
}
