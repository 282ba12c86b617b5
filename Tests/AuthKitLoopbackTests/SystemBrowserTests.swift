import AuthKitTestSupport
import Foundation
import Testing

@testable import AuthKitLoopback

/// `$BROWSER` and the platform fallback, with real processes.
@Suite struct SystemBrowserTests {
    let url = URL(
        string: "https://as.example/authorize?client_id=c&state=a%20b&redirect_uri=http%3A%2F%2F127.0.0.1%3A1%2Fcb")!

    /// A directory with a shell script `name` whose body is `script`, and the
    /// command that runs it. The command is `/bin/sh <path>` rather than the
    /// path itself: executing a file just written can fail with ETXTBSY while a
    /// parallel test forks (the child briefly holds the write descriptor).
    func makeScript(_ name: String, _ script: String) throws -> (directory: URL, command: String) {
        let directory = TemporaryDirectory.url("authkit-browser")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent(name).path
        try Data("#!/bin/sh\n\(script)\n".utf8).write(to: URL(fileURLWithPath: path))
        return (directory, "/bin/sh \(path)")
    }

    @Test func commandsFollowTheBrowserConvention() {
        let text = url.absoluteString
        #expect(SystemBrowser(environment: ["BROWSER": "firefox"]).commands(for: url) == [["firefox", text]])
        #expect(
            SystemBrowser(environment: ["BROWSER": "firefox --new-window"]).commands(for: url) == [
                ["firefox", "--new-window", text]
            ])
        #expect(
            SystemBrowser(environment: ["BROWSER": "w3m %s -no-mouse"]).commands(for: url) == [
                ["w3m", text, "-no-mouse"]
            ])
        #expect(
            SystemBrowser(environment: ["BROWSER": "chromium --app=%s"]).commands(for: url) == [
                ["chromium", "--app=\(text)"]
            ])
        #expect(
            SystemBrowser(environment: ["BROWSER": "nope:lynx"]).commands(for: url) == [
                ["nope", text], ["lynx", text],
            ])
        #expect(SystemBrowser(environment: ["BROWSER": "  "]).commands(for: url) == [["xdg-open", text]])
        #expect(SystemBrowser(environment: [:]).commands(for: url) == [["xdg-open", text]])
    }

    @Test func browserVariableGetsTheURLAsOneArgument() async throws {
        let (directory, script) = try makeScript(
            "record-browser", #"for a in "$@"; do printf '%s\n' "$a"; done > "$(dirname "$0")/args""#)
        defer { try? FileManager.default.removeItem(at: directory) }
        try await SystemBrowser(environment: ["BROWSER": "\(script) --new-tab"], failureWindow: .seconds(20)).open(url)
        let recorded = try String(contentsOfFile: directory.appendingPathComponent("args").path, encoding: .utf8)
        #expect(recorded == "--new-tab\n\(url.absoluteString)\n")
    }

    /// Only web pages are opened: a `file:` or scheme-handler URL starts no program.
    @Test func onlyHTTPAndHTTPSAreOpened() async throws {
        let (directory, script) = try makeScript("never-browser", #"touch "$(dirname "$0")/ran""#)
        defer { try? FileManager.default.removeItem(at: directory) }
        for text in ["file:///etc/passwd", "ms-settings:network", "javascript:alert(1)"] {
            await #expect(throws: SystemBrowser.LaunchError.self) {
                try await SystemBrowser(environment: ["BROWSER": script]).open(URL(string: text)!)
            }
        }
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("ran").path))
    }

    /// The child starts with no blocked and no ignored signals (a Foundation
    /// `Process` child on Linux inherits a blocked mask: a wrapper that waits
    /// for its own child then ignores `kill`), and without AuthKit's variables.
    @Test func theBrowserStartsWithDefaultSignalsAndNoSecrets() async throws {
        let (directory, script) = try makeScript(
            "inspect-browser",
            #"""
            # Read with builtins: a shell waiting for a child (grep) blocks every
            # signal while it waits, which grep would then see in /proc/$$/status.
            while IFS= read -r line; do case $line in SigBlk:*|SigIgn:*) printf '%s\n' "$line";; esac; done < /proc/$$/status > "$(dirname "$0")/signals"
            env > "$(dirname "$0")/environment"
            """#)
        defer { try? FileManager.default.removeItem(at: directory) }
        let environment = [
            "BROWSER": script, "PATH": "/usr/bin:/bin", "AUTHKIT_QIITA_CLIENT_SECRET": "top-secret",
            "AUTHKIT_HOME": "/tmp/x", "LANG": "C.UTF-8",
            // Other tools' credentials (the web example asks for PGPASSWORD in the same shell).
            "PGPASSWORD": "pg-secret", "GITHUB_TOKEN": "gh-secret", "DATABASE_URL": "postgres://u:db-secret@h/d",
            "AWS_SECRET_ACCESS_KEY": "aws-secret", "authkit_github_client_secret": "lower-secret",
            "SSH_AUTH_SOCK": "/tmp/agent", "XDG_RUNTIME_DIR": "/run/user/1",
            // Named otherwise, or only the value saying so.
            "DB_PASS": "pass-secret", "MYSQL_PWD": "pwd-secret", "GITHUB_PAT": "pat-secret",
            "FOO_APIKEY": "apikey-secret", "REDIS_URL": "redis://:redis-secret@cache:6379/0",
            "HOMEPAGE": "https://user@example.com/x",
        ]
        // Waits for the script to finish (a loaded machine may take longer than the default window).
        try await SystemBrowser(environment: environment, failureWindow: .seconds(20)).open(url)
        let signalsData = try Data(contentsOf: directory.appendingPathComponent("signals"))
        let signals = String(decoding: signalsData, as: UTF8.self)
        let masks = Dictionary(
            uniqueKeysWithValues: signals.split(separator: "\n").map {
                let parts = $0.split(separator: ":").map { $0.trimmingCharacters(in: .whitespaces) }
                return (parts[0], UInt64(parts[1], radix: 16) ?? .max)
            })
        #expect(masks["SigBlk"] == 0, "blocked signals in the browser: \(signals)")
        // Signals 1–31 at their default action (32 and 33 are glibc's own, outside any set POSIX spawn resets).
        #expect(masks["SigIgn"].map { $0 & 0x7FFF_FFFF } == 0, "ignored signals in the browser: \(signals)")
        let childEnvironment = String(
            decoding: try Data(contentsOf: directory.appendingPathComponent("environment")), as: UTF8.self)
        #expect(!childEnvironment.contains("AUTHKIT_") && !childEnvironment.contains("top-secret"))
        for secret in [
            "pg-secret", "gh-secret", "db-secret", "aws-secret", "lower-secret", "pass-secret", "pwd-secret",
            "pat-secret", "apikey-secret", "redis-secret",
        ] {
            #expect(!childEnvironment.contains(secret), "\(secret) reached the browser")
        }
        // What a browser needs stays.
        #expect(
            childEnvironment.contains("LANG=C.UTF-8") && childEnvironment.contains("SSH_AUTH_SOCK=/tmp/agent")
                && childEnvironment.contains("XDG_RUNTIME_DIR=/run/user/1")
                && childEnvironment.contains("HOMEPAGE=https://user@example.com/x"))
    }

    /// Every variable the browser receives is the one meant, byte for byte,
    /// over many launches (issue 44, item 1): unterminated raw entries were
    /// read past their end, and 93 of 400 values arrived with heap bytes
    /// appended. The script copies the environment it was started with
    /// (`/proc/$$/environ`, NUL-separated, as execve received it).
    @Test func theBrowserReceivesEachVariableByteForByte() async throws {
        let (directory, script) = try makeScript(
            "environ-browser", #"cat /proc/$$/environ > "$(dirname "$0")/environ-$ROUND_NAME""#)
        defer { try? FileManager.default.removeItem(at: directory) }
        var environment = [
            "BROWSER": script, "PATH": "/usr/bin:/bin", "EMPTY": "", "EQUALS": "a=b=c", "SPACES": "  two  words ",
            "UNICODE": "café ☕ 日本", "AUTHKIT_CLIENT_SECRET": "never-passed",
        ]
        for index in 0..<33 {
            // Lengths around allocation sizes, where reading past an end shows most.
            environment["VARIABLE_\(index)"] = String(repeating: "v", count: index * 7 + 1) + "/end"
        }
        for round in 0..<12 {
            environment["ROUND_NAME"] = "r\(round)" // names the file the script writes
            let browser = SystemBrowser(environment: environment, failureWindow: .seconds(20))
            try await browser.open(url)
            let file = directory.appendingPathComponent("environ-r\(round)")
            var received = Data()
            for _ in 0..<400 {
                received = (try? Data(contentsOf: file)) ?? Data()
                if received.last == 0 { break }
                try await Task.sleep(for: .milliseconds(25))
            }
            let entries = received.split(separator: 0, omittingEmptySubsequences: false).dropLast().map { Array($0) }
            let expected = browser.childEnvironment.map { Array("\($0.key)=\($0.value)".utf8) }
            #expect(expected.count == 40)
            let counts = (received: entries.count, meant: expected.count)
            #expect(counts.received == counts.meant, "round \(round)")
            let differing = Set(entries).symmetricDifference(Set(expected)).map {
                String(decoding: $0, as: UTF8.self).debugDescription
            }
            #expect(differing.isEmpty, "round \(round): \(differing.sorted().prefix(5))")
            #expect(!entries.contains { String(decoding: $0, as: UTF8.self).hasPrefix("AUTHKIT_CLIENT_SECRET") })
        }
    }

    /// What POSIX cannot pass is left out, not a failed launch.
    @Test func namesNoEnvironmentCanHoldAreLeftOut() {
        let browser = SystemBrowser(environment: ["GOOD": "1", "1BAD": "x", "A=B": "x", "": "x", "NUL": "a\u{0}b"])
        #expect(browser.childEnvironmentVariables.map(\.key.rawValue) == ["GOOD"])
    }

    @Test func aMissingProgramIsReported() async throws {
        let browser = SystemBrowser(
            environment: ["BROWSER": "/nonexistent/authkit-browser"], failureWindow: .seconds(20))
        await #expect {
            try await browser.open(url)
        } throws: { error in
            (error as? SystemBrowser.LaunchError)?.command == "/nonexistent/authkit-browser"
        }
    }

    @Test func aFailingProgramIsReportedAndTheNextOneIsTried() async throws {
        let (directory, failing) = try makeScript("failing-browser", "exit 3")
        defer { try? FileManager.default.removeItem(at: directory) }
        await #expect(throws: SystemBrowser.LaunchError(command: "/bin/sh", reason: "it exited with status 3")) {
            // A generous window: the exit is awaited, not raced, on a loaded machine.
            try await SystemBrowser(environment: ["BROWSER": failing], failureWindow: .seconds(20)).open(url)
        }
        let (recorder, recording) = try makeScript("record-browser", #"printf '%s' "$1" > "$(dirname "$0")/args""#)
        defer { try? FileManager.default.removeItem(at: recorder) }
        try await SystemBrowser(environment: ["BROWSER": "\(failing):\(recording)"], failureWindow: .seconds(20)).open(
            url)
        #expect(
            try String(contentsOfFile: recorder.appendingPathComponent("args").path, encoding: .utf8)
                == url.absoluteString)
    }

    @Test func aBrowserThatKeepsRunningDoesNotBlock() async throws {
        // The "browser" runs for three minutes; `open` must return long before
        // it exits. The bound is loose on purpose: this checks that launching
        // does not wait for the browser, not how fast it is. A 2-core CI
        // machine running every suite at once took 31 s to get here once
        // (its cooperative threads busy with hundreds of other tests), so the
        // bound is half the browser's life, not a number near that.
        // It closes its output and records its pid, so the test can end it:
        // a child holding `swift test`'s pipe open keeps the run waiting for it.
        let (directory, script) = try makeScript(
            "slow-browser", #"echo $$ > "$(dirname "$0")/pid"; exec sleep 180 >/dev/null 2>&1"#)
        defer { try? FileManager.default.removeItem(at: directory) }
        let started = ContinuousClock.now
        try await SystemBrowser(environment: ["BROWSER": script], failureWindow: .milliseconds(300)).open(url)
        #expect(ContinuousClock.now - started < .seconds(90))
        if let pid = Int32(
            (try? String(contentsOfFile: directory.appendingPathComponent("pid").path, encoding: .utf8))?
                .trimmingCharacters(in: .whitespacesAndNewlines) ?? "")
        {
            kill(pid, SIGTERM)
        }
    }

    @Test func theLoopbackAgentUsesBrowserFromTheEnvironment() async throws {
        // The script plays a browser: it records the URL; the test then follows the redirect.
        let (directory, script) = try makeScript("record-browser", #"printf '%s' "$1" > "$(dirname "$0")/args""#)
        defer { try? FileManager.default.removeItem(at: directory) }
        let argsFile = directory.appendingPathComponent("args").path
        let attempt = TestAttempt()
        let system = SystemBrowser(environment: ["BROWSER": script])
        let agent = LoopbackUserAgent(timeout: .seconds(30), browser: { try await system.open($0) })
        let task = Task { try await agent.run(attempt.session) }
        var opened: String?
        for _ in 0..<200 where opened == nil {
            try await Task.sleep(for: .milliseconds(25))
            // The shell creates the file before printf fills it: wait for content.
            opened = (try? String(contentsOfFile: argsFile, encoding: .utf8)).flatMap { $0.isEmpty ? nil : $0 }
        }
        let authorizationURL = try #require(opened)
        #expect(authorizationURL.contains("state=\(attempt.state)"))
        _ = try await RawHTTP.request(attempt.target("code=abc"), port: attempt.port)
        _ = try await task.value
    }
}
