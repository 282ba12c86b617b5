import AuthKit
import AuthKitTestSupport
import Foundation
import Testing

@testable import authkit

#if canImport(Glibc)
    import Glibc
#endif

/// The command line at its boundaries: what `authkit` refuses before the user
/// is asked anything, what `request` does with redirects and plain http, and
/// what it says about a provider file someone else placed.
@Suite(.serialized) struct CLIBoundaryTests {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..").standardized

    func home() throws -> URL {
        let home = try CLIProcess.home("authkit-cli-boundary")
        return home
    }

    /// A user override of qiita.json whose endpoints are `server`'s.
    func overrideQiita(in home: URL, at server: TestHTTPServer) throws {
        let bundled = try String(contentsOf: root.appendingPathComponent("providers/qiita.json"), encoding: .utf8)
        try bundled.replacingOccurrences(of: "https://qiita.com", with: server.baseURL)
            .write(to: home.appendingPathComponent("providers/qiita.json"), atomically: true, encoding: .utf8)
    }

    /// A `$BROWSER` that records that it ran.
    func recordingBrowser(in home: URL) throws -> (command: String, marker: URL) {
        let script = home.appendingPathComponent("browser.sh")
        let marker = home.appendingPathComponent("browser-ran")
        try Data("#!/bin/sh\ntouch '\(marker.path)'\n".utf8).write(to: script)
        return ("/bin/sh \(script.path)", marker)
    }

    /// A stored Qiita credential (no expiry, so nothing is refreshed).
    static let storedQiita =
        #"{"version":1,"credentials":[{"providerID":"qiita","kind":"oauth2","accessToken":"the-qiita-token","tokenType":"Bearer","scopes":[],"obtainedAt":"2026-01-01T00:00:00Z","rawFields":{}}]}"#

    func environment(_ home: URL, _ extra: [String: String] = [:]) -> [String: String] {
        ["AUTHKIT_HOME": home.path, "AUTHKIT_QIITA_CLIENT_ID": "id", "AUTHKIT_QIITA_CLIENT_SECRET": "secret"]
            .merging(extra) { _, new in new }
    }

    @Test func anUnusableStoreFailsBeforeTheBrowserOpens() async throws {
        let home = try home()
        defer { try? FileManager.default.removeItem(at: home) }
        try Data("{ not json".utf8).write(to: home.appendingPathComponent("credentials.json"))
        let browser = try recordingBrowser(in: home)
        let result = try await CLIProcess.run(
            ["authorize", "--provider", "qiita", "--timeout", "20"],
            environment: environment(home, ["BROWSER": browser.command]))
        #expect(result.status == 65, "\(result.stderr)")
        #expect(result.stderr.contains("credentials.json") && result.stderr.contains("not a valid credentials file"))
        #expect(
            !FileManager.default.fileExists(atPath: browser.marker.path),
            "the browser opened before the store was checked")
    }

    /// The store can still fail after the consent (a disk that fills
    /// meanwhile): the error says the sign-in itself worked and its
    /// credential is lost, beside why the file could not be written.
    @Test func aSaveThatFailsAfterTheSignInSaysWhatWasLost() async throws {
        let home = try home()
        defer { try? FileManager.default.removeItem(at: home) }
        let blocker = home.appendingPathComponent("not-a-directory")
        try Data().write(to: blocker)
        let store = FileCredentialStore(file: blocker.appendingPathComponent("credentials.json"))
        await #expect {
            try await Authorize.keep(Credential(providerID: "qiita", accessToken: "at"), in: store)
        } throws: { error in
            guard case .store(let path, let reason)? = error.authKitReason else { return false }
            return path.hasSuffix("not-a-directory")
                && reason.detail.hasSuffix(
                    "The sign-in itself succeeded, but its credential was not kept: sign in again once the store can be written."
                )
        }
    }

    /// A store directory the system will not create (a read-only file
    /// system; here sysfs, which refuses even root) is a store that could not
    /// be written, exit 74 as the exit table says, not a bad file (65, as it was).
    @Test(.enabled(if: mkdir("/sys/authkit-probe", 0o700) != 0))
    func aStoreThatCannotBeCreatedIsAWriteFailure() async throws {
        let result = try await CLIProcess.run(
            ["authorize", "--provider", "qiita", "--no-browser", "--timeout", "5"],
            environment: [
                "AUTHKIT_HOME": "/sys/authkit-test", "AUTHKIT_QIITA_CLIENT_ID": "x", "AUTHKIT_QIITA_CLIENT_SECRET": "y",
            ])
        #expect(
            result.status == 74
                && result.stderr.contains("/sys/authkit-test: could not be saved: this directory cannot be created"),
            "exit \(result.status): \(result.stderr)")
        #expect(!result.stderr.contains("Open this URL"), "the sign-in started")
    }

    @Test func aSymlinkedStoreIsNotFollowed() async throws {
        let home = try home()
        defer { try? FileManager.default.removeItem(at: home) }
        let elsewhere = home.appendingPathComponent("elsewhere.json")
        try Data(#"{"version":1,"credentials":[]}"#.utf8).write(to: elsewhere)
        try FileManager.default.createSymbolicLink(
            atPath: home.appendingPathComponent("credentials.json").path, withDestinationPath: elsewhere.path)
        let result = try await CLIProcess.run(["token", "list"], environment: environment(home))
        #expect(result.status == 65 && result.stderr.contains("symbolic link"), "\(result.stderr)")
    }

    /// A store others can write (someone could have put their own account in
    /// it) is refused by every command that reads it, before any browser
    /// opens, and left as it was: it may hold the user's own credentials too.
    @Test func aStoreOthersCanWriteIsRefusedAndKept() async throws {
        let home = try home()
        defer { try? FileManager.default.removeItem(at: home) }
        let store = home.appendingPathComponent("credentials.json")
        let planted = Data(Self.storedQiita.utf8)
        try planted.write(to: store)
        try FileManager.default.setAttributes([.posixPermissions: 0o666], ofItemAtPath: store.path)
        let list = try await CLIProcess.run(["token", "list"], environment: environment(home))
        #expect(list.status == 65, "\(list.stderr)")
        #expect(
            list.stderr.contains(store.path) && list.stderr.contains("every user can write to it (mode 0666)")
                && list.stderr.contains("chmod go-w"), "\(list.stderr)")
        #expect(!list.stdout.contains("qiita") && !list.stderr.contains("the-qiita-token"))

        let browser = try recordingBrowser(in: home)
        let signIn = try await CLIProcess.run(
            ["authorize", "--provider", "qiita", "--timeout", "20"],
            environment: environment(home, ["BROWSER": browser.command]))
        #expect(signIn.status == 65 && signIn.stderr.contains("chmod go-w"), "\(signIn.stderr)")
        #expect(
            !FileManager.default.fileExists(atPath: browser.marker.path),
            "the browser opened before the store was checked")
        #expect(try Data(contentsOf: store) == planted, "the refused store was rewritten")

        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: store.path)
        let fixed = try await CLIProcess.run(["token", "list"], environment: environment(home))
        #expect(fixed.status == 0 && fixed.stdout.contains("qiita"), "\(fixed.stderr)")
    }

    /// `authorize --provider github` in a fresh home, its browser a shell
    /// script: `browser`, run with the authorization URL as `$1`, and a
    /// `query NAME` function that reads a parameter of it. `interruptWhen`
    /// is `CLIProcess.run`'s: Ctrl-C once standard error says enough.
    func signInToGitHub(
        timeout: Int, browser: String, interruptWhen: (@Sendable (String) -> Bool)? = nil
    ) async throws -> CLIResult {
        let home = try home()
        defer { try? FileManager.default.removeItem(at: home) }
        let script = home.appendingPathComponent("browser.sh")
        try Data(
            (#"""
            #!/bin/sh
            query() { printf '%s' "$1" | sed -n "s/.*[?&]$2=\([^&]*\).*/\1/p"; }

            """# + browser + "\n").utf8
        ).write(to: script)
        return try await CLIProcess.run(
            ["authorize", "--provider", "github", "--timeout", String(timeout)],
            environment: environment(
                home,
                [
                    "BROWSER": "/bin/sh \(script.path)", "AUTHKIT_GITHUB_CLIENT_ID": "id",
                    "AUTHKIT_GITHUB_CLIENT_SECRET": "secret",
                ]),
            interruptWhen: interruptWhen)
    }

    /// A sign-in suggested under `--sandbox` keeps the flag: without it,
    /// the command as written signed in to the real provider.
    @Test func aSuggestedSignInKeepsTheSandbox() {
        let spaced = ErrorReport.sandboxFlag(in: ["token", "header", "--sandbox", "http://127.0.0.1:5"])
        #expect(spaced.hasPrefix(" --sandbox ") && spaced.contains("http://127.0.0.1:5"), "\(spaced)")
        #expect(
            ErrorReport.sandboxFlag(in: ["token", "header", "--sandbox=http://127.0.0.1:5"]).hasPrefix(" --sandbox "))
        #expect(ErrorReport.sandboxFlag(in: ["token", "header", "--provider", "github"]).isEmpty)
        let key = CredentialKey(providerID: "github", label: nil)
        let message = ErrorReport.message(for: .signInRequired(key, reason: .noRefreshToken))
        #expect(message.contains("authkit authorize --provider github"), "\(message)")
    }

    /// The browser runs in a session of its own, so the terminal's Ctrl-C
    /// (which cancels the sign-in), Ctrl-Z and hang-up reach authkit, not a
    /// browser it started with every tab of the user's. (It shared
    /// authkit's process group: a `$BROWSER=firefox` was killed with it.)
    @Test func theBrowserRunsInASessionOfItsOwn() async throws {
        // Ended by Ctrl-C once the browser's line is whole, not by a 2 s
        // --timeout: a loaded CI run (24 tests on 2 cores) can start the
        // browser so late that authkit is gone before it reads /proc/$PPID
        // or writes its line. The timeout is only a backstop.
        let result = try await signInToGitHub(
            timeout: 30,
            browser: #"""
                echo "sessions: browser $(cut -d' ' -f6 /proc/$$/stat) authkit $(cut -d' ' -f6 /proc/$PPID/stat) groups: browser $(cut -d' ' -f5 /proc/$$/stat) authkit $(cut -d' ' -f5 /proc/$PPID/stat)" >&2
                """#,
            interruptWhen: { text in
                text.range(of: "sessions: ").map { text[$0.upperBound...].contains("\n") } ?? false
            })
        #expect(result.status == 130, "\(result.stderr)") // Ctrl-C's, as it ended
        let line = try #require(result.stderr.split(separator: "\n").first { $0.hasPrefix("sessions: ") })
        let words = line.split(separator: " ")
        // sessions: browser S authkit S groups: browser G authkit G
        try #require(words.count == 10, "\(line)")
        #expect(words[2] != words[4] && words[7] != words[9], "the browser shares authkit's session or group: \(line)")
    }

    /// `authorize --client-credentials` ends at `--timeout` (exit 5), as
    /// every other sign-in does: with no watchdog on that path, a token
    /// endpoint that answered after 10 s was waited for, `--timeout 2` or not.
    @Test func clientCredentialsEndAtTheTimeout() async throws {
        try await withServer { server in
            server.route("POST", "/token") { _ in
                StubResponse.json(#"{"access_token":"late-token","token_type":"Bearer","expires_in":3600}"#)
                    .delayed(by: .seconds(10))
            }
            let home = try home()
            defer { try? FileManager.default.removeItem(at: home) }
            let descriptor = """
                {"id": "machine", "name": "Machine", "protocol": "oauth2",
                 "authorization": {"url": "\(server.baseURL)/authorize"},
                 "token": {"url": "\(server.baseURL)/token", "clientAuthentication": "post"}}
                """
            try Data(descriptor.utf8).write(to: home.appendingPathComponent("providers/machine.json"))
            let environment = [
                "AUTHKIT_HOME": home.path, "AUTHKIT_MACHINE_CLIENT_ID": "id", "AUTHKIT_MACHINE_CLIENT_SECRET": "s",
            ]
            let result = try await CLIProcess.run(
                ["authorize", "--provider", "machine", "--client-credentials", "--timeout", "2"],
                environment: environment)
            #expect(
                result.status == 5 && result.stderr.contains("Timed out after 2 s waiting for the token endpoint")
                    && !result.stdout.contains("late-token"),
                "\(result.status): \(result.stderr)")
            #expect(server.requests(to: "/token").count == 1)
            let listed = try await CLIProcess.run(["token", "list"], environment: environment)
            #expect(!listed.stdout.contains("machine"), "nothing was stored: \(listed.stdout)")
        }
    }

    /// A client credentials account whose token the API refuses, and whose
    /// grant cannot be had again: the advice is to ask for it again with
    /// --client-credentials (it said "the provider gave no refresh token",
    /// and named a browser sign-in).
    @Test func aRefusedClientCredentialsTokenIsAdvisedItsOwnSignIn() async throws {
        try await withServer { server in
            let granted = LockedValue(0)
            server.route("POST", "/token") { _ in
                let count = granted.withLock { count in
                    count += 1
                    return count
                }
                return count == 1
                    ? .json(#"{"access_token":"machine-token","token_type":"Bearer","expires_in":3600}"#)
                    : .json(#"{"error":"invalid_client"}"#, status: 401)
            }
            server.route("GET", "/api/thing") { _ in
                .json("{}", status: 401, headers: [("WWW-Authenticate", #"Bearer error="invalid_token""#)])
            }
            let home = try home()
            defer { try? FileManager.default.removeItem(at: home) }
            let descriptor = """
                {"id": "machine", "name": "Machine", "protocol": "oauth2",
                 "authorization": {"url": "\(server.baseURL)/authorize"},
                 "token": {"url": "\(server.baseURL)/token", "clientAuthentication": "post"},
                 "api": {"origins": ["\(server.baseURL)"]}}
                """
            try Data(descriptor.utf8).write(to: home.appendingPathComponent("providers/machine.json"))
            let environment = [
                "AUTHKIT_HOME": home.path, "AUTHKIT_MACHINE_CLIENT_ID": "id", "AUTHKIT_MACHINE_CLIENT_SECRET": "s",
            ]
            let signedIn = try await CLIProcess.run(
                ["authorize", "--provider", "machine", "--client-credentials"], environment: environment)
            #expect(signedIn.status == 0, "\(signedIn.stderr)")
            let refused = try await CLIProcess.run(
                ["request", "--provider", "machine", "\(server.baseURL)/api/thing"], environment: environment)
            #expect(
                refused.status == 3
                    && refused.stderr.contains("authkit authorize --provider machine --client-credentials.")
                    && !refused.stderr.contains("gave no refresh token"),
                "\(refused.status): \(refused.stderr)")
        }
    }

    /// In a pipe (a CI log), the status line is printed, not redrawn: a
    /// port scanner's flood of stray requests printed a line each. At most
    /// eight in ten seconds now, the count kept on the ones that are printed.
    @Test func aFloodOfStrayRequestsPrintsFewStatusLines() async throws {
        // 6 s, not 4: a loaded CI run (24 tests on 2 cores) can start the
        // browser late, and at least one stray must come before the timeout.
        // No longer: past the 10 s window, eight more lines could be printed.
        let result = try await signInToGitHub(
            timeout: 6,
            browser: #"""
                redirect=$(query "$1" redirect_uri | sed 's/%3A/:/g; s/%2F/\//g')
                origin=${redirect%/callback}
                i=0
                while [ $i -lt 60 ]; do curl -s -o /dev/null "$origin/favicon-$i.ico"; i=$((i + 1)); done
                """#)
        #expect(result.status == 5, "\(result.stderr)")
        let lines = result.stderr.components(separatedBy: "Waiting for you to approve in the browser…").count - 1
        #expect((1...StatusLine.printedPerWindow).contains(lines), "\(lines) status lines: \(result.stderr)")
        #expect(result.stderr.contains("strays ignored"), "\(result.stderr)")
    }

    /// Answers at the redirect address that are refused (another state, a
    /// parameter twice) are said with their reason, once each, and the
    /// timeout names the last one: a malformed callback was counted as a
    /// stray request, and the wait ran out without a word of it.
    @Test func refusedAnswersAreSaidWithTheirReason() async throws {
        // A browser that answers twice wrongly, as a stale tab and a broken provider would.
        // 7 s, not 5: all three requests must come before the timeout, and a
        // loaded CI run (24 tests on 2 cores) can start the browser late.
        let result = try await signInToGitHub(
            timeout: 7,
            browser: #"""
                redirect=$(query "$1" redirect_uri | sed 's/%3A/:/g; s/%2F/\//g')
                state=$(query "$1" state)
                curl -s -o /dev/null "$redirect?code=abc&state=forged"
                curl -s -o /dev/null "$redirect?code=abc&state=forged"
                curl -s -o /dev/null "$redirect?code=a&code=b&state=$state"
                """#)
        #expect(result.status == 5, "\(result.stderr)")
        let said = result.stderr.components(separatedBy: "A request to the redirect address was refused: ")
        #expect(said.count == 3, "each reason once: \(result.stderr)")
        #expect(
            result.stderr.contains("was refused: The redirect URL's 'state' does not match this sign-in"),
            "\(result.stderr)")
        #expect(
            result.stderr.contains(
                "3 requests to the redirect address were refused, the last because: The redirect URL has the parameter 'code' more than once"
            ),
            "\(result.stderr)")
        #expect(!result.stderr.contains("stray"), "\(result.stderr)")
        // In a pipe, no blank line before the timeout's error (one was there for a terminal's cursor).
        #expect(result.stderr.contains("Ctrl-C cancels\nauthkit: error: Timed out after 7 s"), "\(result.stderr)")
        // The status line keeps its end within 80 columns, spinner included (it lost "Ctrl-C cancels").
        #expect(
            result.stderr.contains("Waiting for you to approve in the browser… (3 refused) Ctrl-C cancels"),
            "\(result.stderr)")
        // The URL is shown though a browser was started (one may start and show nothing).
        #expect(
            result.stderr.contains(
                "Opening a browser to sign in to GitHub; if none appears, open this URL:\n\n  https://github.com/login/oauth/authorize?"
            ),
            "\(result.stderr)")
    }

    /// Another sign-in for the same provider and label holds its lock: this
    /// one fails at once, before any browser, instead of overwriting the other.
    @Test func aSecondSignInForTheSameAccountFailsFast() async throws {
        let home = try home()
        defer { try? FileManager.default.removeItem(at: home) }
        let fd = open(home.appendingPathComponent(".signin-qiita.work.lock").path, O_RDWR | O_CREAT, 0o600)
        defer { close(fd) }
        #expect(flock(fd, LOCK_EX | LOCK_NB) == 0)
        let browser = try recordingBrowser(in: home)
        let started = Date()
        let result = try await CLIProcess.run(
            ["authorize", "--provider", "qiita", "--label", "work", "--timeout", "30"],
            environment: environment(home, ["BROWSER": browser.command]))
        #expect(
            result.status == 65 && result.stderr.contains("another sign-in to qiita (work) is in progress"),
            "\(result.stderr)")
        #expect(Date().timeIntervalSince(started) < 20)
        #expect(!FileManager.default.fileExists(atPath: browser.marker.path))
    }

    @Test func requestRefusesPlainHTTPToAnotherHost() async throws {
        let home = try home()
        defer { try? FileManager.default.removeItem(at: home) }
        try Data(Self.storedQiita.utf8).write(to: home.appendingPathComponent("credentials.json"))
        let result = try await CLIProcess.run(
            ["request", "--provider", "qiita", "http://api.example.com/user"], environment: environment(home))
        #expect(result.status == 64, "\(result.stderr)")
        #expect(result.stderr.contains("plain http") && result.stderr.contains("https"))
    }

    /// `request -L` follows a redirect to another origin without the token
    /// or a `-H` Cookie, and with the user's other `-H` headers (as curl,
    /// as its help says); without -L the 3xx is the answer.
    @Test func requestKeepsTheTokenToItsOrigin() async throws {
        try await withServer { server in
            let elsewhere = TestHTTPServer()
            try await elsewhere.start()
            defer { Task { await elsewhere.stop() } }
            server.route("GET", "/api/v2/items") { _ in .redirect(302, to: "\(elsewhere.baseURL)/items") }
            elsewhere.route("GET", "/items") { request in
                .json(
                    #"{"authorization":"\#(request.header("Authorization") ?? "none")","cookie":"\#(request.header("Cookie") ?? "none")","accept":"\#(request.header("Accept") ?? "none")"}"#
                )
            }
            let home = try home()
            defer { try? FileManager.default.removeItem(at: home) }
            try overrideQiita(in: home, at: server)
            try Data(Self.storedQiita.utf8).write(to: home.appendingPathComponent("credentials.json"))

            let followed = try await CLIProcess.run(
                [
                    "request", "--provider", "qiita", "-L", "-H", "Cookie: sid=1", "-H", "Accept: text/x-mine",
                    "\(server.baseURL)/api/v2/items",
                ],
                environment: environment(home))
            #expect(followed.status == 0, "\(followed.stderr)")
            #expect(followed.stdout == #"{"authorization":"none","cookie":"none","accept":"text/x-mine"}"#)
            let first = try #require(server.requests(to: "/api/v2/items").first)
            #expect(first.header("Authorization") == "Bearer the-qiita-token" && first.header("Cookie") == "sid=1")

            let unfollowed = try await CLIProcess.run(
                ["request", "--provider", "qiita", "\(server.baseURL)/api/v2/items"], environment: environment(home))
            #expect(
                unfollowed.status == 3 && unfollowed.stderr.contains("HTTP 302 (a redirect; -L follows it)"),
                "\(unfollowed.stderr)")
            #expect(elsewhere.requests.count == 1)
        }
    }

    /// An answer that breaks off before its `Content-Length` (or a chunked
    /// one before its last chunk) ends `request` with a failure, like curl's
    /// exit 18, never status 0 with part of a body on standard output.
    @Test(arguments: [
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"items\":[1,2",
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nc\r\n{\"items\":[1,\r\n",
    ])
    func aBodyCutShortIsAFailure(answer: String) async throws {
        try await expectRequestFails(
            on: answer, saying: "the server closed the connection before the end of its answer")
    }

    /// Bytes with no status line (HTTP/0.9), or a status that is not three
    /// digits, are refused in words, not libcurl's "Unsupported protocol".
    @Test(arguments: ["{\"items\":[]}\r\n", "HTTP/1.1 2000 OK\r\nContent-Length: 2\r\n\r\n{}"])
    func anAnswerThatIsNotHTTPIsAFailure(answer: String) async throws {
        try await expectRequestFails(on: answer, saying: "the server's answer is not HTTP AuthKit can read")
    }

    /// A body that drips, a chunk every 200 ms, ends at `--timeout`, and the
    /// error names that time: it named what was left of it when the last
    /// chunk came ("within 481 ms" for `--timeout 2`).
    @Test func aDrippingBodyEndsAtTheTimeoutItNames() async throws {
        let started = ContinuousClock.now
        try await expectRequestFails(
            on: .init(
                head: "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n",
                repeating: "2\r\nx\n\r\n", interval: .milliseconds(200)),
            arguments: ["--timeout", "2"], saying: "no complete answer within 2 s")
        #expect(ContinuousClock.now - started < .seconds(10))
    }

    /// `authkit request` to a server that answers `answer` (raw bytes) exits
    /// 4 with `reason`, naming the URL, showing no token.
    func expectRequestFails(on answer: String, saying reason: String) async throws {
        try await expectRequestFails(on: .init(head: answer), saying: reason)
    }

    /// The same for a server that follows `script`, with `arguments` added to the command.
    func expectRequestFails(on script: RawResponseServer.Script, arguments: [String] = [], saying reason: String)
        async throws
    {
        let server = RawResponseServer(script)
        try await server.start()
        defer { Task { await server.stop() } }
        let home = try home()
        defer { try? FileManager.default.removeItem(at: home) }
        let bundled = try String(contentsOf: root.appendingPathComponent("providers/qiita.json"), encoding: .utf8)
        try bundled.replacingOccurrences(of: "https://qiita.com", with: server.baseURL)
            .write(to: home.appendingPathComponent("providers/qiita.json"), atomically: true, encoding: .utf8)
        try Data(Self.storedQiita.utf8).write(to: home.appendingPathComponent("credentials.json"))

        let result = try await CLIProcess.run(
            ["request", "--provider", "qiita", "\(server.baseURL)/api/v2/items"] + arguments,
            environment: environment(home))
        #expect(result.status == 4, "exit \(result.status): \(result.stderr)")
        #expect(
            result.stderr.contains("The request to \(server.baseURL)/api/v2/items failed: \(reason)"),
            "\(result.stderr)")
        #expect(!result.stderr.contains("the-qiita-token"))
    }

    /// A file that replaces a bundled descriptor is marked in the list, and a
    /// command that uses it while it sends to other hosts says so.
    @Test func anOverrideIsVisible() async throws {
        try await withServer { server in
            let home = try home()
            defer { try? FileManager.default.removeItem(at: home) }
            try overrideQiita(in: home, at: server)
            let list = try await CLIProcess.run(["providers", "list"], environment: environment(home))
            let line = try #require(list.stdout.split(separator: "\n").first { $0.hasPrefix("qiita ") })
            #expect(line.contains("(override: \(home.path)/providers/qiita.json)"), "\(line)")
            try Data(Self.storedQiita.utf8).write(to: home.appendingPathComponent("credentials.json"))
            let request = try await CLIProcess.run(
                ["token", "header", "--provider", "qiita"], environment: environment(home))
            #expect(
                request.stderr.contains(
                    "note: 'qiita' comes from \(home.path)/providers/qiita.json, which replaces (bundled) providers/qiita.json and sends to 127.0.0.1:\(server.port)"
                ), "\(request.stderr)")
        }
    }

    /// An override that turns a protection off, or moves the token endpoint
    /// to another of the provider's own hosts (no new host, so no note), is
    /// announced too: a file someone else placed that drops PKCE and the
    /// issuer, and sends the client secret elsewhere, ran without a word.
    @Test func anOverrideThatWeakensASignInIsAnnounced() async throws {
        let home = try home()
        defer { try? FileManager.default.removeItem(at: home) }
        let bundled = try Data(contentsOf: root.appendingPathComponent("providers/google.json"))
        var object = try #require(try JSONSerialization.jsonObject(with: bundled) as? [String: Any])
        object["pkce"] = "none"
        object["issuer"] = nil
        object["openid"] = nil
        var token = try #require(object["token"] as? [String: Any])
        token["url"] = "https://accounts.google.com/token"
        object["token"] = token
        try JSONSerialization.data(withJSONObject: object).write(
            to: home.appendingPathComponent("providers/google.json"))
        let result = try await CLIProcess.run(
            ["token", "header", "--provider", "google"], environment: environment(home))
        let note = try #require(
            result.stderr.split(separator: "\n").first { $0.contains("note: 'google' comes from") }, "\(result.stderr)")
        for said in [
            "turns PKCE off", "names no issuer", "verifies no ID token",
            "sends the token requests to accounts.google.com instead of oauth2.googleapis.com",
        ] {
            #expect(note.contains(said), "\(note)")
        }
    }

    /// An override every user can write to is not read: `authorize` stops
    /// before any browser or request (exit 65, the file and the chmod that
    /// fixes it), `providers list` warns, and once fixed it works again.
    @Test func anOverrideOthersCanWriteIsNotRead() async throws {
        try await withServer { server in
            let home = try home()
            defer { try? FileManager.default.removeItem(at: home) }
            try overrideQiita(in: home, at: server)
            let file = home.appendingPathComponent("providers/qiita.json")
            try FileManager.default.setAttributes([.posixPermissions: 0o666], ofItemAtPath: file.path)
            let browser = try recordingBrowser(in: home)
            let result = try await CLIProcess.run(
                ["authorize", "--provider", "qiita", "--timeout", "5"],
                environment: environment(home, ["BROWSER": browser.command]))
            #expect(result.status == 65, "exit \(result.status): \(result.stderr)")
            #expect(
                result.stderr.contains("\(file.path): every user can write to it (mode 0666)")
                    && result.stderr.contains("Run: chmod go-w '\(file.path)'"), "\(result.stderr)")
            #expect(!FileManager.default.fileExists(atPath: browser.marker.path) && server.requests.isEmpty)
            let list = try await CLIProcess.run(["providers", "list"], environment: environment(home))
            #expect(
                list.stderr.contains("'qiita' could not be loaded") && list.stderr.contains("chmod go-w"),
                "\(list.stderr)")

            try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: file.path)
            let fixed = try await CLIProcess.run(["providers", "show", "qiita"], environment: environment(home))
            #expect(fixed.status == 0 && fixed.stdout.contains(server.baseURL), "\(fixed.stderr)")
        }
    }

    /// What stands in the providers directory, or at config.json, is read
    /// only if it is a regular file of at most 1 MiB: a named pipe would make
    /// every command wait for a writer (Foundation's read called it
    /// "Permission denied"), and a huge file would be read whole into memory.
    /// Each is that provider's problem, named with what it is; commands that
    /// do not need it go on, at once.
    @Test func onlyFilesOfADescriptorsSizeAreRead() async throws {
        let home = try home()
        defer { try? FileManager.default.removeItem(at: home) }
        let pipe = home.appendingPathComponent("providers/piped.json").path
        #expect(mkfifo(pipe, 0o600) == 0)
        let config = home.appendingPathComponent("config.json").path
        #expect(mkfifo(config, 0o600) == 0)
        let big = home.appendingPathComponent("providers/big.json")
        try Data(repeating: UInt8(ascii: " "), count: (1 << 20) + 1).write(to: big)
        let list = try await CLIProcess.run(["providers", "list"], environment: environment(home), timeout: 20)
        #expect(list.status == 0 && list.stdout.contains("qiita"), "exit \(list.status): \(list.stderr)")
        #expect(list.stderr.contains("\(pipe): is a named pipe, not a regular file; it is not read."), "\(list.stderr)")
        #expect(
            list.stderr.contains("\(big.path): is 1048577 bytes, more than the 1048576 allowed; it is not read."),
            "\(list.stderr)")
        #expect(
            list.stderr.contains("\(config): is a named pipe, not a regular file; it is not read."), "\(list.stderr)")
        let authorize = try await CLIProcess.run(
            ["authorize", "--provider", "piped"], environment: environment(home), timeout: 20)
        #expect(
            authorize.status == 65 && authorize.stderr.contains("is a named pipe"),
            "exit \(authorize.status): \(authorize.stderr)")
    }

    /// A redirect URI the listener could never receive is refused before
    /// anything starts: a port past 65535 crashed authkit (SwiftNIO traps on
    /// a port that does not fit 16 bits), and a fragment, which RFC 6749
    /// §3.1.2 forbids, went into the authorization request, as did a user
    /// name and password (`http://me:pw@127.0.0.1/cb`) and a pasted line break
    /// (sent as `%250A`, to match no registered URI after the user approved).
    /// The same rules hold, naming the source, for a redirect URI from the
    /// environment or config.json: one that did not parse
    /// (`:8765x`) was silently replaced by the descriptor's default, and a
    /// `%` beginning no escape was sent as `%25`.
    @Test func anImpossibleRedirectURIIsRefused() async throws {
        let home = try home()
        defer { try? FileManager.default.removeItem(at: home) }
        for (uri, expected) in [
            (
                "http://127.0.0.1:99999/cb",
                "--redirect-uri: the redirect URI names port 99999, which is not a TCP port (1–65535)"
            ),
            (
                "http://127.0.0.1/cb#frag",
                "--redirect-uri: the redirect URI has a fragment (#…), which a redirect URI must not have (RFC 6749 §3.1.2)"
            ),
            (
                "http://me:pw@127.0.0.1/cb",
                "--redirect-uri: the redirect URI carries a user name or password (user:password@), which a redirect URI has no use for"
            ),
            ("http://127.0.0.1:8765x/cb", "--redirect-uri: the redirect URI is not an absolute URI"),
            ("http://127.0.0.1/cb%zz", "--redirect-uri: the redirect URI holds '%zz', a '%' that begins no escape"),
            (
                "http://127.0.0.1/c\nb",
                "--redirect-uri: the redirect URI holds a line break or another control character"
            ),
        ] {
            let result = try await CLIProcess.run(
                ["authorize", "--provider", "qiita", "--no-browser", "--timeout", "5", "--redirect-uri", uri],
                environment: environment(home))
            #expect(
                result.status == 64 && result.stderr.contains(expected),
                "\(uri): exit \(result.status): \(result.stderr.suffix(300))")
            #expect(
                !result.stderr.contains("Open this URL") && !result.stderr.contains(":pw@"),
                "\(uri): the sign-in started")
        }
        for (uri, expected) in [
            ("http://127.0.0.1/cb ", "AUTHKIT_QIITA_REDIRECT_URI: the redirect URI begins or ends with a space"),
            ("http://127.0.0.1:8765x/callback", "AUTHKIT_QIITA_REDIRECT_URI: the redirect URI is not an absolute URI"),
            ("http://127.0.0.1/callback#x", "AUTHKIT_QIITA_REDIRECT_URI: the redirect URI has a fragment"),
            ("oob", "AUTHKIT_QIITA_REDIRECT_URI: the redirect URI is not an absolute URI"),
        ] {
            let result = try await CLIProcess.run(
                ["authorize", "--provider", "qiita", "--no-browser", "--timeout", "5"],
                environment: environment(home).merging(["AUTHKIT_QIITA_REDIRECT_URI": uri]) { $1 })
            #expect(
                result.status == 64 && result.stderr.contains(expected),
                "\(uri): exit \(result.status): \(result.stderr.suffix(300))")
            #expect(!result.stderr.contains("Open this URL"), "\(uri): the sign-in started")
        }
        let config = home.appendingPathComponent("config.json")
        try Data(#"{"providers": {"qiita": {"redirectURI": "http://127.0.0.1:-1/callback"}}}"#.utf8).write(to: config)
        chmod(config.path, 0o600)
        let fromFile = try await CLIProcess.run(
            ["authorize", "--provider", "qiita", "--no-browser", "--timeout", "5"], environment: environment(home))
        #expect(
            fromFile.status == 65 && fromFile.stderr.contains("providers.qiita.redirectURI")
                && fromFile.stderr.contains("is not an absolute URI") && !fromFile.stderr.contains("Open this URL"),
            "exit \(fromFile.status): \(fromFile.stderr)")
    }

    /// A provider file with two `token` sections: a reviewer, `jq` or Python
    /// reads the last (the provider's own endpoint), Foundation's decoder the
    /// first — which would have received the code and the client secret. The
    /// file is refused before the browser opens, naming the field and lines;
    /// so is a config.json naming one provider twice.
    @Test func aNameGivenTwiceInAFileIsRefused() async throws {
        try await withServer { server in
            let home = try home()
            defer { try? FileManager.default.removeItem(at: home) }
            try overrideQiita(in: home, at: server)
            let file = home.appendingPathComponent("providers/qiita.json")
            let genuine = try String(contentsOf: file, encoding: .utf8)
            let planted = genuine.replacingOccurrences(
                of: #""id": "qiita","#, with: #""id": "qiita", "token": {"url": "\#(server.baseURL)/collect"},"#)
            #expect(planted != genuine)
            try Data(planted.utf8).write(to: file)
            let browser = try recordingBrowser(in: home)
            let result = try await CLIProcess.run(
                ["authorize", "--provider", "qiita", "--timeout", "5"],
                environment: environment(home, ["BROWSER": browser.command]))
            // The genuine section's line (the planted one is on line 3, with the id).
            let line = planted.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
                .first { $0.offset > 2 && $0.element.contains(#""token": {"#) }.map { $0.offset + 1 }
            #expect(result.status == 65, "exit \(result.status): \(result.stderr)")
            #expect(
                result.stderr.contains("\(file.path): field 'token': is given twice (lines 3 and \(line ?? 0))")
                    && result.stderr.contains("keep one"),
                "\(result.stderr)")
            #expect(!FileManager.default.fileExists(atPath: browser.marker.path) && server.requests.isEmpty)
            let validate = try await CLIProcess.run(
                ["providers", "validate", file.path], environment: environment(home))
            #expect(
                validate.status == 65 && validate.stdout.contains("field 'token': is given twice"), "\(validate.stdout)"
            )

            try Data(genuine.utf8).write(to: file)
            let config = home.appendingPathComponent("config.json")
            try Data(
                "{\"providers\": {\n  \"qiita\": {\"clientID\": \"old\"},\n  \"qiita\": {\"clientID\": \"new\"}\n}}\n"
                    .utf8
            ).write(to: config)
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: config.path)
            let configured = try await CLIProcess.run(
                ["authorize", "--provider", "qiita", "--timeout", "5"],
                environment: ["AUTHKIT_HOME": home.path, "BROWSER": browser.command])
            #expect(
                configured.status == 65
                    && configured.stderr.contains(
                        "\(config.path): field 'providers.qiita': is given twice (lines 2 and 3)"),
                "exit \(configured.status): \(configured.stderr)")
            #expect(!FileManager.default.fileExists(atPath: browser.marker.path) && server.requests.isEmpty)
            let list = try await CLIProcess.run(["providers", "list"], environment: ["AUTHKIT_HOME": home.path])
            #expect(
                list.status == 0 && list.stderr.contains("config.json cannot be used")
                    && list.stderr.contains("'providers.qiita': is given twice"),
                "\(list.stderr)")
        }
    }

    /// What the user pastes reaches the strict parser as pasted: `%ZZ` or a raw
    /// `|` is refused (exit 65) and no token request is made.
    @Test(arguments: ["a%ZZ", "a|b"])
    func aPastedRedirectIsParsedAsPasted(code: String) async throws {
        try await withServer { server in
            let home = try home()
            defer { try? FileManager.default.removeItem(at: home) }
            try overrideQiita(in: home, at: server)
            let result = try await CLIProcess.run(
                ["authorize", "--provider", "qiita", "--manual"], environment: environment(home),
                respond: CLITests.pasteRedirect(code: code))
            #expect(result.status == 65, "\(result.stderr)")
            #expect(result.stderr.contains("malformed"), "\(result.stderr)")
            #expect(server.requests(to: "/api/v2/access_tokens").isEmpty)
        }
    }

    /// `--manual` with a provider that accepts any loopback port (Spotify,
    /// Strava, Zoom…): the redirect URI named a port nothing listens on, not
    /// the port-less default, which sent the browser, and the code in its
    /// address, to port 80, where a local web server may be listening.
    @Test func aPastedSignInOnAFlexiblePortNamesAPortNothingListensOn() async throws {
        let home = try home()
        defer { try? FileManager.default.removeItem(at: home) }
        let redirect = LockedValue<URLComponents?>(nil)
        let result = try await CLIProcess.run(
            ["authorize", "--provider", "spotify", "--manual", "--client-id", "c"], environment: environment(home),
            respond: { stderr in
                guard stderr.contains("paste"),
                    let line = stderr.split(separator: "\n").first(where: { $0.contains("redirect_uri=") }),
                    let url = URLComponents(string: line.trimmingCharacters(in: .whitespaces)),
                    let value = url.queryItems?.first(where: { $0.name == "redirect_uri" })?.value
                else { return nil }
                redirect.withLock { $0 = URLComponents(string: value) }
                return "" // an empty line ends it
            })
        #expect(result.status != 0, "\(result.stderr)")
        let named = try #require(redirect.withLock { $0 }, "no authorization URL with a redirect_uri: \(result.stderr)")
        #expect(named.host == "127.0.0.1" && named.path == "/callback", "\(named)")
        let port = try #require(named.port, "the redirect URI names no port: \(named)")
        #expect(port != 80 && port > 0)
    }

    /// `--manual --redirect-uri http://` to another machine: the browser takes
    /// the code there in clear, and RFC 6749 §3.1.2.1 asks for a warning
    /// before it does; a loopback one (RFC 8252 §8.3) and https get none.
    @Test(arguments: [
        ("http://app.example.com:8080/callback", true), ("http://127.0.0.1:9/callback", false),
        ("https://app.example.com/callback", false),
    ])
    func aPlainHTTPRedirectToAnotherMachineIsWarnedOf(redirect: String, warned: Bool) async throws {
        let home = try home()
        defer { try? FileManager.default.removeItem(at: home) }
        let result = try await CLIProcess.run(
            ["authorize", "--provider", "spotify", "--manual", "--client-id", "c", "--redirect-uri", redirect],
            environment: environment(home), respond: { $0.contains("Then paste") ? "" : nil })
        #expect(result.stderr.contains("Then paste"), "\(result.stderr)")
        let warning =
            "authkit: warning: the redirect URI http://app.example.com:8080/callback is plain http to another machine"
        #expect(result.stderr.contains(warning) == warned, "\(redirect): \(result.stderr)")
    }

    /// A provider file that is a link to a device (every user can write
    /// /dev/zero) is refused as a device: the advice was "Run: chmod go-w"
    /// on the link's path, which would have changed /dev/zero itself.
    @Test func aProviderFileLinkedToADeviceIsNamedADevice() async throws {
        let home = try home()
        defer { try? FileManager.default.removeItem(at: home) }
        let providers = home.appendingPathComponent("providers")
        try FileManager.default.createDirectory(at: providers, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(
            atPath: providers.appendingPathComponent("zero.json").path, withDestinationPath: "/dev/zero")
        for command in [
            ["providers", "show", "zero"],
            ["providers", "validate", providers.appendingPathComponent("zero.json").path],
        ] {
            let result = try await CLIProcess.run(command, environment: environment(home))
            let said = result.stdout + result.stderr
            #expect(
                result.status != 0 && said.contains("is a device") && !said.contains("chmod"), "\(command): \(said)")
        }
    }

    /// Waiting for a paste on a pipe that stays open, authkit still ends at
    /// SIGTERM (`timeout`'s, a supervisor's). The signal's clean-up flushed
    /// every stdio stream, standard input's too, whose lock the blocked
    /// `readLine` held: the process stayed until the pipe closed.
    @Test func aSignalEndsTheWaitForAPaste() async throws {
        let home = try home()
        defer { try? FileManager.default.removeItem(at: home) }
        let prompted = LockedValue(false)
        let result = try await CLIProcess.run(
            ["authorize", "--provider", "qiita", "--manual", "--client-id", "c", "--client-secret", "s"],
            environment: environment(home), timeout: 20,
            respond: { stderr in
                if stderr.contains("Then paste") { prompted.withLock { $0 = true } }
                return nil // the pipe stays open, as a script's would
            },
            signalWhen: { prompted.current }, signals: [SIGTERM])
        #expect(result.signal == SIGTERM, "status \(result.status): \(result.stderr)")
    }

    /// A paste of nothing in quotes or angle brackets (`""`, `<>`: what a
    /// script's empty variable gives) is "nothing pasted", exit 65, as an
    /// empty line is: it was "Cancelled.", exit 130, which scripts read as Ctrl-C.
    @Test func aQuotedEmptyPasteIsNothingPasted() async throws {
        let home = try home()
        defer { try? FileManager.default.removeItem(at: home) }
        for pasted in [#""""#, "''", "<>", " < > "] {
            let result = try await CLIProcess.run(
                ["authorize", "--provider", "qiita", "--manual", "--client-id", "c", "--client-secret", "s"],
                environment: environment(home), timeout: 20,
                respond: { $0.contains("Then paste") ? pasted : nil })
            #expect(result.status == 65 && result.stderr.contains("empty line"), "\(pasted): \(result.stderr)")
        }
    }

    /// A pasted line is read up to 64 KiB, not to its end: an endless line
    /// (the wrong program piped in) grew the process to gigabytes.
    @Test func aPasteLongerThanAnyRedirectIsRefusedUnread() async throws {
        let home = try home()
        defer { try? FileManager.default.removeItem(at: home) }
        let result = try await CLIProcess.run(
            ["authorize", "--provider", "qiita", "--manual", "--client-id", "c", "--client-secret", "s"],
            environment: environment(home), timeout: 20,
            respond: {
                $0.contains("Then paste")
                    ? "http://127.0.0.1/callback?code=" + String(repeating: "a", count: 100_000) : nil
            })
        #expect(result.status == 65, "\(result.stderr)")
        #expect(result.stderr.contains("longer than 64 KiB"), "\(result.stderr)")
    }

    /// Scopes, labels and raw fields come from a provider or a person: printed
    /// to a terminal, their control characters are escaped.
    @Test func providerTextCannotDriveTheTerminal() async throws {
        let home = try home()
        defer { try? FileManager.default.removeItem(at: home) }
        let store =
            #"{"version":1,"credentials":[{"providerID":"qiita","label":"w\u001b[2J","kind":"oauth2","accessToken":"the-qiita-token","tokenType":"Bearer\u001b[31m","scopes":["read\u001b]0;pwned\u0007"],"obtainedAt":"2026-01-01T00:00:00Z","rawFields":{"screen_name":"x\u001b[1A"}}]}"#
        try Data(store.utf8).write(to: home.appendingPathComponent("credentials.json"))
        for arguments in [
            ["token", "list"], ["token", "show", "--provider", "qiita", "--label", "w\u{1B}[2J"],
            ["token", "show", "--provider", "qiita", "--label", "w\u{1B}[2J", "--field", "screen_name"],
        ] {
            let result = try await CLIProcess.run(arguments, environment: environment(home))
            #expect(result.status == 0, "\(arguments): \(result.stderr)")
            #expect(
                !result.stdout.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x07 },
                "\(arguments) printed a control character")
            #expect(result.stdout.contains("\\u{1B}"), "\(arguments): \(result.stdout)")
        }
    }

    /// A wide label (two terminal columns per character) keeps the columns
    /// after it in line: padding counts columns, not characters.
    @Test func aWideLabelKeepsTheColumnsInLine() async throws {
        let home = try home()
        defer { try? FileManager.default.removeItem(at: home) }
        func stored(_ label: String, _ token: String) -> String {
            #"{"providerID":"qiita","label":"\#(label)","kind":"oauth2","accessToken":"\#(token)","tokenType":"Bearer","scopes":[],"obtainedAt":"2026-01-01T00:00:00Z","rawFields":{}}"#
        }
        let store =
            #"{"version":1,"credentials":[\#(stored("仕事", "0000000000000000aaaa")),\#(stored("personal", "0000000000000000bbbb"))]}"#
        try Data(store.utf8).write(to: home.appendingPathComponent("credentials.json"))
        let result = try await CLIProcess.run(["token", "list"], environment: environment(home))
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        // "qiita (仕事)" takes 12 columns, "qiita (personal)" 16: four spaces of
        // padding and the two between columns (six, counting characters).
        #expect(lines.contains { $0.hasPrefix("qiita (仕事)      ••••aaaa") }, "\(result.stdout)")
        #expect(lines.contains { $0.hasPrefix("qiita (personal)  ••••bbbb") }, "\(result.stdout)")
    }

    /// `authorize --provider instagram` at a terminal: Instagram redirects to
    /// https://localhost, which no listener receives, and the command said to
    /// run it again with --manual. With a person at the terminal (and no flag
    /// choosing otherwise) it now goes on as --manual does: the URL to open,
    /// then the prompt to paste where the browser ends. Without a terminal to
    /// paste at (a script), the error stays. So where no browser can open.
    @Test(.scriptGivesATerminal)
    func aRedirectNoListenerReceivesIsPastedAtATerminal() async throws {
        let home = try home()
        defer { try? FileManager.default.removeItem(at: home) }
        let command =
            "env AUTHKIT_HOME='\(home.path)' BROWSER=true AUTHKIT_INSTAGRAM_CLIENT_ID=c AUTHKIT_INSTAGRAM_CLIENT_SECRET=s '\(CLIProcess.binary.path)' authorize --provider instagram --timeout 20"
        let terminal = try await CLIProcess.run(
            ["-qec", command, "/dev/null"], environment: [:], timeout: 30, launcher: ["/usr/bin/script"],
            bareLauncher: true)
        #expect(
            terminal.stdout.contains(
                "Instagram redirects to https://localhost/callback, which no listener here can receive: you will paste the address your browser ends on (--manual)."
            ),
            "\(terminal.stdout)")
        #expect(
            terminal.stdout.contains("https://www.instagram.com/oauth/authorize?")
                && terminal.stdout.contains("Then paste the full URL the browser was sent to"),
            "\(terminal.stdout)")
        let script = try await CLIProcess.run(
            ["authorize", "--provider", "instagram", "--timeout", "20"],
            environment: environment(
                home, ["BROWSER": "true", "AUTHKIT_INSTAGRAM_CLIENT_ID": "c", "AUTHKIT_INSTAGRAM_CLIENT_SECRET": "s"]))
        #expect(
            script.status == 64 && script.stderr.contains("which the loopback listener cannot receive. Use --manual"),
            "\(script.stderr)")
        // The same where no browser can be opened (an SSH session) and the
        // provider has no device grant: the error told the person to rerun with --manual.
        let remote =
            "env -u DISPLAY -u WAYLAND_DISPLAY -u BROWSER AUTHKIT_HOME='\(home.path)' AUTHKIT_QIITA_CLIENT_ID=c AUTHKIT_QIITA_CLIENT_SECRET=s '\(CLIProcess.binary.path)' authorize --provider qiita --timeout 20"
        let ssh = try await CLIProcess.run(
            ["-qec", remote, "/dev/null"], environment: [:], timeout: 30, launcher: ["/usr/bin/script"],
            bareLauncher: true)
        #expect(
            ssh.stdout.contains(
                "and Qiita offers no device grant: open the URL below in a browser on any machine, then paste the address it ends on (--manual)."
            )
                && ssh.stdout.contains("Then paste the full URL"), "\(ssh.stdout)")
    }

    /// `--manual`'s URL and paste prompt at an 80-column terminal: wrapped
    /// as every message is, the URL alone left whole. The prompt was written
    /// as one line of 244 columns.
    @Test(.scriptGivesATerminal)
    func thePastePromptIsWrappedAt80Columns() async throws {
        let home = try home()
        defer { try? FileManager.default.removeItem(at: home) }
        let remote =
            "stty cols 80 rows 24; env -u DISPLAY -u WAYLAND_DISPLAY -u BROWSER AUTHKIT_HOME='\(home.path)' AUTHKIT_QIITA_CLIENT_ID=c AUTHKIT_QIITA_CLIENT_SECRET=s '\(CLIProcess.binary.path)' authorize --provider qiita --timeout 5"
        let ssh = try await CLIProcess.run(
            ["-qec", remote, "/dev/null"], environment: [:], timeout: 30, launcher: ["/usr/bin/script"],
            bareLauncher: true)
        let lines = ssh.stdout.replacingOccurrences(of: "\r", with: "").split(separator: "\n")
        #expect(lines.contains { $0.hasPrefix("Then paste the full URL") }, "\(ssh.stdout)")
        #expect(lines.contains { $0.hasPrefix("  https://qiita.com/") }, "the URL was cut: \(ssh.stdout)")
        for line in lines where !line.contains("://") {
            #expect(line.count <= 80, "\(line.count) columns: \(line)")
        }
    }

    /// With no browser to open, an OAuth 1.0a sign-in pastes as `--manual`
    /// does: the PIN flow (`oauth_callback="oob"`, RFC 5849 §2.1), not the
    /// descriptor's loopback callback, where nothing here listens.
    @Test(.scriptGivesATerminal)
    func anOAuth1SignInWithNoBrowserAsksForThePIN() async throws {
        try await withServer { server in
            server.route("POST", "/request_token") { _ in
                StubResponse(
                    status: 200, headers: [("Content-Type", "application/x-www-form-urlencoded")],
                    body: Data("oauth_token=rt&oauth_token_secret=rs&oauth_callback_confirmed=true".utf8))
            }
            let home = try home()
            defer { try? FileManager.default.removeItem(at: home) }
            try Data(
                """
                {"id": "twitter", "name": "X (local)", "protocol": "oauth1",
                 "redirect": {"host": "127.0.0.1", "port": 8765, "path": "/callback"},
                 "oauth1": {"requestTokenURL": "\(server.baseURL)/request_token",
                            "authorizeURL": "\(server.baseURL)/authorize", "accessTokenURL": "\(server.baseURL)/access_token"}}
                """.utf8
            ).write(to: home.appendingPathComponent("providers/twitter.json"))
            let command =
                "env -u DISPLAY -u WAYLAND_DISPLAY -u BROWSER AUTHKIT_HOME='\(home.path)' AUTHKIT_TWITTER_CLIENT_ID=ck AUTHKIT_TWITTER_CLIENT_SECRET=cs '\(CLIProcess.binary.path)' authorize --provider twitter --timeout 20"
            let ssh = try await CLIProcess.run(
                ["-qec", command, "/dev/null"], environment: [:], timeout: 30, launcher: ["/usr/bin/script"],
                bareLauncher: true)
            #expect(ssh.stdout.contains("(--manual)"), "\(ssh.stdout)")
            let signed = try #require(server.requests(to: "/request_token").first?.header("Authorization"))
            #expect(signed.contains(#"oauth_callback="oob""#), "\(signed)")
        }
    }

    /// On an 80-column terminal a row of `token list` does not wrap: the last
    /// column (scopes, often long URLs) is cut with `…`, and so is a label
    /// too long for the line (it took 200 columns, and every row wrapped).
    /// A pipe gets every scope and the whole label.
    @Test(.scriptGivesATerminal)
    func longScopesAreCutToTheTerminal() async throws {
        let home = try home()
        defer { try? FileManager.default.removeItem(at: home) }
        let scopes =
            #"["openid","https://www.googleapis.com/auth/userinfo.email","https://www.googleapis.com/auth/drive.readonly"]"#
        let long = String(repeating: "w", count: 120)
        let store =
            #"{"version":1,"credentials":[{"providerID":"qiita","label":"仕事","kind":"oauth2","accessToken":"0000000000000000aaaa","tokenType":"Bearer","scopes":\#(scopes),"obtainedAt":"2026-01-01T00:00:00Z","rawFields":{}},"#
            + #"{"providerID":"qiita","label":"\#(long)","kind":"oauth2","accessToken":"0000000000000000bbbb","tokenType":"Bearer","scopes":["read_qiita"],"obtainedAt":"2026-01-01T00:00:00Z","rawFields":{}}]}"#
        try Data(store.utf8).write(to: home.appendingPathComponent("credentials.json"))
        try FileManager.default.setAttributes(
            [.posixPermissions: 0o600], ofItemAtPath: home.appendingPathComponent("credentials.json").path)
        let command = "stty cols 80; env AUTHKIT_HOME='\(home.path)' '\(CLIProcess.binary.path)' token list"
        let terminal = try await CLIProcess.run(
            ["-qec", command, "/dev/null"], environment: [:], launcher: ["/usr/bin/script"], bareLauncher: true)
        let rows = terminal.stdout.split(whereSeparator: \.isNewline).map(String.init).filter { !$0.isEmpty }
        #expect(rows.count == 3 && rows.allSatisfy { $0.terminalColumns < 80 }, "\(terminal.stdout)")
        let work = rows.first { $0.hasPrefix("qiita (仕事)") }
        let wide = rows.first { $0.hasPrefix("qiita (ww") }
        // The label is cut in its middle (its end is kept: labels often differ there).
        #expect(
            work?.hasSuffix("…") == true && wide?.contains("w…w") == true && wide?.contains("w)  ••••bbbb") == true
                && wide?.hasSuffix("read_qiita") == true,
            "\(terminal.stdout)")
        let piped = try await CLIProcess.run(["token", "list"], environment: environment(home))
        #expect(
            piped.stdout.contains(
                "openid https://www.googleapis.com/auth/userinfo.email https://www.googleapis.com/auth/drive.readonly"),
            "\(piped.stdout)")
        #expect(piped.stdout.contains("qiita (\(long))"), "\(piped.stdout)")
    }

    /// One provider file of the user's own with a long id (51 characters)
    /// pushed every row of `providers list` past 80 columns: the id column
    /// grew to fit it. It now grows to 24 at most; the long id is shown whole,
    /// its row alone out of line.
    @Test(.scriptGivesATerminal)
    func oneLongProviderIdDoesNotWidenEveryRow() async throws {
        let home = try home()
        defer { try? FileManager.default.removeItem(at: home) }
        let id = "acme-internal-identity-provider-for-the-staging-env"
        let providers = home.appendingPathComponent("providers")
        try FileManager.default.createDirectory(at: providers, withIntermediateDirectories: true)
        try Data(
            #"{"id": "\#(id)", "name": "Acme staging", "protocol": "oauth2", "authorization": {"url": "https://e.example/a"}, "token": {"url": "https://e.example/t"}}"#
                .utf8
        )
        .write(to: providers.appendingPathComponent("\(id).json"))
        let command = "stty cols 80; env AUTHKIT_HOME='\(home.path)' '\(CLIProcess.binary.path)' providers list"
        let terminal = try await CLIProcess.run(
            ["-qec", command, "/dev/null"], environment: [:], launcher: ["/usr/bin/script"], bareLauncher: true)
        let rows = terminal.stdout.split(whereSeparator: \.isNewline).map(String.init).filter { !$0.isEmpty }
        #expect(rows.contains("\(id)  oauth2  Acme staging"), "\(terminal.stdout)")
        #expect(rows.contains { $0.hasPrefix("github                    oauth2  GitHub") }, "\(terminal.stdout)")
        #expect(rows.filter { !$0.hasPrefix(id) }.allSatisfy { $0.terminalColumns < 80 }, "\(terminal.stdout)")
    }

    /// The browser `authkit authorize` starts has no blocked signals and none
    /// of the caller's AUTHKIT_ variables (swift-subprocess; a Foundation
    /// `Process` child inherits a blocked mask on Linux).
    @Test func theBrowserAuthorizeStartsHasDefaultSignals() async throws {
        let home = try home()
        let script = home.appendingPathComponent("browser.sh")
        let out = home.appendingPathComponent("browser-status")
        // Written beside and renamed: the file is there only once whole.
        try Data(
            ("#!/bin/sh\n{ while IFS= read -r l; do case $l in SigBlk:*|SigIgn:*) echo \"$l\";; esac; done < /proc/$$/status; echo \"parent: $(tr '\\\\0' ' ' < /proc/$PPID/cmdline)\"; env; } > '\(out.path).part'"
                + " && mv '\(out.path).part' '\(out.path)'\n").utf8
        ).write(to: script)
        // No one approves: Ctrl-C ends it once the browser has written all it
        // saw. A 3 s --timeout ended it before: a loaded CI run (24 tests on
        // 2 cores) could start the browser after it, or read the file half
        // written. The timeout is only a backstop.
        let result = try await CLIProcess.run(
            ["authorize", "--provider", "github", "--client-id", "c", "--timeout", "30"],
            environment: [
                "AUTHKIT_HOME": home.path, "BROWSER": "/bin/sh \(script.path)",
                "AUTHKIT_GITHUB_CLIENT_SECRET": "browser-must-not-see-this",
            ],
            signalWhen: { FileManager.default.fileExists(atPath: out.path) })
        #expect(result.status == 130, "\(result.stderr)")
        let status = String(decoding: try Data(contentsOf: out), as: UTF8.self)
        #expect(status.contains("SigBlk:\t0000000000000000"), "\(status)")
        #expect(!status.contains("browser-must-not-see-this") && !status.contains("AUTHKIT_"))
    }
}
