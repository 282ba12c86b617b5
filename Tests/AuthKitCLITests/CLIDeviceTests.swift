import AuthKit
import AuthKitTestSupport
import Foundation
import Testing

@testable import authkit

/// `authkit authorize` with the device grant: asked for with --device, or
/// chosen because no browser can be opened here.
@Suite(.serialized) struct CLIDeviceTests {
    /// A provider `tv` with a device endpoint; the token is granted on the second poll.
    func setUp(_ server: TestHTTPServer, expiresIn: Int = 120) throws -> URL {
        server.route("POST", "/device") { _ in
            .json(
                #"{"device_code":"dev-code","user_code":"WDJB-MJHT","verification_uri":"\#(server.baseURL)/activate","expires_in":\#(expiresIn),"interval":1}"#
            )
        }
        let polls = Recorder<Int>()
        server.route("POST", "/token") { _ in
            polls.append(1)
            return polls.all.count < 2
                ? .json(#"{"error":"authorization_pending"}"#, status: 400)
                : .json(#"{"access_token":"tv-token","token_type":"Bearer","expires_in":3600}"#)
        }
        server.route("GET", "/me") { _ in .json(#"{"id": 7, "login": "tv-user"}"#) }
        let home = try CLIProcess.home("authkit-device")
        let descriptor =
            #"{"id": "tv", "name": "TV", "protocol": "oauth2", "authorization": {"url": "\#(server.baseURL)/authorize"}, "token": {"url": "\#(server.baseURL)/token"}, "device": {"url": "\#(server.baseURL)/device"}, "whoAmI": {"url": "\#(server.baseURL)/me", "subject": "id", "name": "login"}}"#
        try Data(descriptor.utf8).write(to: home.appendingPathComponent("providers/tv.json"))
        return home
    }

    /// No $BROWSER, no $DISPLAY: the environment of an SSH session or a container.
    func headless(_ home: URL) -> [String: String] {
        ["AUTHKIT_HOME": home.path, "AUTHKIT_TV_CLIENT_ID": "tv-app", "SSH_CONNECTION": "10.0.0.1 50000 10.0.0.2 22"]
    }

    @Test func deviceSignsInWithTheCodeShown() async throws {
        try await withServer { server in
            let home = try setUp(server)
            let result = try await CLIProcess.run(
                ["authorize", "--provider", "tv", "--device", "--timeout", "30"], environment: headless(home))
            #expect(result.status == 0, "\(result.stderr)")
            #expect(
                result.stderr.contains("Open \(server.baseURL)/activate and enter the code WDJB-MJHT to sign in to TV"),
                "\(result.stderr)")
            // 120 s, asked for a moment ago: 2 min (cut, not rounded, it said 1).
            #expect(result.stderr.contains("the code expires in 2 min… Ctrl-C cancels"), "\(result.stderr)")
            #expect(result.stdout.contains("Signed in to TV"))
            let list = try await CLIProcess.run(["token", "list", "--json"], environment: headless(home))
            #expect(list.stdout.contains(#""providerID" : "tv""#), "\(list.stdout)")
            // Whose it is, asked as a browser sign-in asks.
            #expect(list.stdout.contains("tv-user (7)"), "\(list.stdout)")
        }
    }

    /// Without --timeout, the device grant waits as long as its code lives
    /// (GitHub's 15 minutes), not the browser's 300 s: a code said to
    /// expire in 15 minutes was given up at 5.
    @Test func withoutATimeoutTheDeviceGrantWaitsForItsCode() throws {
        let plain = try Authorize.parse(["--provider", "github"])
        #expect(plain.seconds(for: .device) >= 1800 && plain.seconds(for: .loopback) == 300)
        let given = try Authorize.parse(["--provider", "github", "--timeout", "50"])
        #expect(given.seconds(for: .device) == 50 && given.seconds(for: .manual) == 50)
    }

    /// A code that lives less than a minute is said to, in seconds: before,
    /// one of 5 s was said to expire "in 1 min".
    @Test func aShortLivedCodeIsGivenInSeconds() async throws {
        try await withServer { server in
            let home = try setUp(server, expiresIn: 5)
            let result = try await CLIProcess.run(
                ["authorize", "--provider", "tv", "--device", "--timeout", "30"], environment: headless(home))
            #expect(result.status == 0, "\(result.stderr)")
            #expect(
                result.stderr.contains("the code expires in 4 s…")
                    || result.stderr.contains("the code expires in 5 s…"), "\(result.stderr)")
        }
    }

    /// A code that expires unapproved is a wait that ran out (exit 5), as
    /// the docs say, not consent denied (exit 3), whose status it had:
    /// by the provider's `expired_token` and by this computer's clock.
    @Test(arguments: [true, false]) func anExpiredCodeIsATimeout(providerSaysSo: Bool) async throws {
        try await withServer { server in
            let home = try setUp(server, expiresIn: providerSaysSo ? 60 : 2)
            server.route("POST", "/token") { _ in
                .json(#"{"error":"\#(providerSaysSo ? "expired_token" : "authorization_pending")"}"#, status: 400)
            }
            let result = try await CLIProcess.run(
                ["authorize", "--provider", "tv", "--device", "--timeout", "30"], environment: headless(home))
            #expect(result.status == 5, "\(result.stderr)")
            #expect(result.stderr.contains("The code expired before the sign-in was approved"), "\(result.stderr)")
        }
    }

    /// One command and no flags over SSH: the device grant is chosen, and said.
    @Test func noBrowserHereChoosesTheDeviceGrant() async throws {
        try await withServer { server in
            let home = try setUp(server)
            let result = try await CLIProcess.run(
                ["authorize", "--provider", "tv", "--timeout", "30"], environment: headless(home))
            #expect(result.status == 0, "\(result.stderr)")
            #expect(
                result.stderr.contains(
                    "No browser can be opened here (an SSH session without a display); signing in to TV with a device code instead (--device)"
                ), "\(result.stderr)")
        }
    }

    /// A provider without the grant: told that --manual is the way, and how.
    @Test func noBrowserAndNoDeviceGrantPointsToManual() async throws {
        let home = TemporaryDirectory.url("authkit-device-none")
        let result = try await CLIProcess.run(
            ["authorize", "--provider", "qiita", "--client-id", "c"],
            environment: ["AUTHKIT_HOME": home.path, "SSH_TTY": "/dev/pts/3", "AUTHKIT_QIITA_CLIENT_SECRET": "s"])
        #expect(result.status == 64, "\(result.stderr)")
        #expect(result.stderr.contains("offers no device grant. Use --manual"), "\(result.stderr)")
        let asked = try await CLIProcess.run(
            ["authorize", "--provider", "qiita", "--client-id", "c", "--device"],
            environment: ["AUTHKIT_HOME": home.path])
        #expect(
            asked.status == 64 && asked.stderr.contains("no device authorization endpoint")
                && asked.stderr.contains("--manual"), "\(asked.stderr)")
    }

    /// A device-only provider: `tv` with its `authorization` section taken out.
    func deviceOnly(_ server: TestHTTPServer) throws -> URL {
        let home = try setUp(server)
        let descriptor =
            #"{"id": "tv", "name": "TV", "protocol": "oauth2", "token": {"url": "\#(server.baseURL)/token"}, "device": {"url": "\#(server.baseURL)/device"}}"#
        try Data(descriptor.utf8).write(to: home.appendingPathComponent("providers/tv.json"))
        return home
    }

    /// With a browser at hand and no flag, a device-only provider still signs
    /// in with a code (the browser opens the verification page, not an
    /// authorization URL); a flag for a redirect is refused, naming the file.
    @Test func aDeviceOnlyProviderSignsInWithACodeWithoutTheFlag() async throws {
        try await withServer { server in
            let home = try deviceOnly(server)
            let opened = home.appendingPathComponent("opened")
            try Data("#!/bin/sh\necho \"$1\" >> '\(opened.path)'\n".utf8).write(
                to: home.appendingPathComponent("browser.sh"))
            let desktop = [
                "AUTHKIT_HOME": home.path, "AUTHKIT_TV_CLIENT_ID": "tv-app", "DISPLAY": ":0",
                "BROWSER": "/bin/sh \(home.path)/browser.sh",
            ]
            let result = try await CLIProcess.run(
                ["authorize", "--provider", "tv", "--timeout", "30"], environment: desktop)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stderr.contains("enter the code WDJB-MJHT to sign in to TV"), "\(result.stderr)")
            #expect(try String(contentsOf: opened, encoding: .utf8) == "\(server.baseURL)/activate\n")
            #expect(server.requests(to: "/authorize").isEmpty)

            let manual = try await CLIProcess.run(
                ["authorize", "--provider", "tv", "--manual", "--port", "9000"], environment: desktop)
            #expect(manual.status == 64, "\(manual.stderr)")
            #expect(
                manual.stderr.contains("TV signs in only with a device code")
                    && manual.stderr.contains("providers/tv.json")
                    && manual.stderr.contains("Drop --manual, --port."), "\(manual.stderr)")

            let show = try await CLIProcess.run(["providers", "show", "tv"], environment: desktop)
            #expect(
                show.status == 0 && show.stdout.contains("authorize:     none: signs in only with the device grant"),
                "\(show.stdout)")
            #expect(!show.stdout.contains("redirect:"), "a device-only provider has no redirect to register")
        }
    }

    /// `sandbox try` on a device-only provider runs the device grant, which
    /// the sandbox approves, and calls the API with the credential.
    @Test func sandboxTryRunsTheDeviceGrantForADeviceOnlyProvider() async throws {
        try await withServer { server in
            let home = try deviceOnly(server)
            let result = try await CLIProcess.run(
                ["sandbox", "try", "--provider", "tv", "--timeout", "30"], environment: headless(home))
            #expect(result.status == 0, "\(result.stderr)")
            #expect(
                result.stdout.contains("Sign in with a device code (TV has no authorization endpoint)"),
                "\(result.stdout)")
            #expect(
                result.stdout.contains("device code exchanged for account alice") && result.stdout.contains("→ 200:"),
                "\(result.stdout)")
            #expect(server.requests.isEmpty, "the sandbox, not the real endpoints, answered")
        }
    }

    /// `sandbox serve` tells where a device-only provider's users enter
    /// their code, not a redirect to register.
    @Test func sandboxServeNamesTheDevicePageForADeviceOnlyProvider() async throws {
        try await withServer { server in
            let home = try deviceOnly(server)
            // Ctrl-C once the banner is out: a fixed 3 s could come before it
            // when a loaded CI run (24 tests on 2 cores) started the process late.
            let result = try await CLIProcess.run(
                ["sandbox", "serve", "--provider", "tv", "--port", "0"], environment: headless(home), timeout: 30,
                interruptWhenOutput: { $0.contains("Ctrl-C stops it.") })
            #expect(
                result.stdout.contains("secret sandbox-secret; device codes entered at http://127.0.0.1:"),
                "\(result.stdout)")
            #expect(!result.stdout.contains("redirect"), "\(result.stdout)")
        }
    }

    /// Ctrl-C while waiting for the user stops at once (by SIGINT, as a
    /// shell expects), storing nothing.
    @Test func ctrlCCancelsThePolling() async throws {
        try await withServer { server in
            let home = try setUp(server)
            server.route("POST", "/token") { _ in .json(#"{"error":"authorization_pending"}"#, status: 400) }
            let interrupted = Recorder<Date>()
            let result = try await CLIProcess.run(
                ["authorize", "--provider", "tv", "--device", "--timeout", "30"], environment: headless(home),
                interruptWhen: { interrupted.firstTime($0.contains("enter the code")) })
            #expect(
                result.signal == SIGINT && result.stderr.contains("Cancelled; nothing was stored."),
                "status \(result.status): \(result.stderr)")
            #expect(interrupted.sinceFirst < 10, "polled on after Ctrl-C (the wait is 30 s)")
            #expect(!FileManager.default.fileExists(atPath: home.appendingPathComponent("credentials.json").path))
        }
    }

    /// Answers every poll with the tokens, `seconds` after it came: a poll
    /// under way for a signal to find. Returns the polls, as they arrive.
    func grantSlowly(_ server: TestHTTPServer, after seconds: TimeInterval) -> Recorder<Int> {
        let polls = Recorder<Int>()
        server.route("POST", "/token") { _ in
            polls.append(1)
            Thread.sleep(forTimeInterval: seconds)
            return .json(#"{"access_token":"tv-token","token_type":"Bearer","expires_in":3600}"#)
        }
        return polls
    }

    /// Ctrl-C while a poll is under way: its answer brings the tokens (and
    /// spends the device code), so the poll is seen through and the sign-in
    /// stored before the process stops. Before, the poll was cancelled and
    /// the grant left at the provider with nothing holding it.
    @Test func ctrlCDuringAPollStoresWhatItBrings() async throws {
        try await withServer { server in
            let home = try setUp(server)
            let polls = grantSlowly(server, after: 1.5)
            let result = try await CLIProcess.run(
                ["authorize", "--provider", "tv", "--device", "--timeout", "30"], environment: headless(home),
                signalWhen: { !polls.all.isEmpty })
            #expect(
                result.signal == SIGINT
                    && result.stderr.contains("A poll of the provider under way, if any, is finished first")
                    && result.stderr.contains("the sign-in is stored"), "status \(result.status): \(result.stderr)")
            let stored = try await FileCredentialStore(file: home.appendingPathComponent("credentials.json"))
                .allCredentials()
            #expect(stored.map(\.accessToken) == ["tv-token"] && polls.all.count == 1)
        }
    }

    /// --timeout during a poll sees it through as Ctrl-C does: the user
    /// approved just in time, and the device code is spent once the poll
    /// answers. Before, the process ended mid-poll: exit 5, "nothing was
    /// stored", and the grant left at the provider. With no poll under way,
    /// --timeout still ends the wait at once.
    @Test func theTimeoutSeesAPollUnderWayThrough() async throws {
        try await withServer { server in
            let home = try setUp(server)
            // The first poll is sent after the 1 s interval, and must be under
            // way when --timeout passes: 4 s leaves a loaded CI run (24 tests
            // on 2 cores) 3 s to send it, where 2 s left 1. A poll of 3.5 s
            // still outlasts the timeout however soon it is sent.
            let polls = grantSlowly(server, after: 3.5)
            let result = try await CLIProcess.run(
                ["authorize", "--provider", "tv", "--device", "--timeout", "4"], environment: headless(home))
            #expect(
                result.status == 0 && result.stdout.contains("Signed in to TV"),
                "status \(result.status): \(result.stderr)")
            let stored = try await FileCredentialStore(file: home.appendingPathComponent("credentials.json"))
                .allCredentials()
            #expect(stored.map(\.accessToken) == ["tv-token"] && polls.all.count == 1)
        }
        try await withServer { server in
            let home = try setUp(server)
            server.route("POST", "/token") { _ in .json(#"{"error":"authorization_pending"}"#, status: 400) }
            let started = Date()
            let result = try await CLIProcess.run(
                ["authorize", "--provider", "tv", "--device", "--timeout", "2"], environment: headless(home))
            #expect(
                result.status == 5
                    && result.stderr.contains(
                        "Timed out after 2 s waiting for the sign-in to finish; nothing was stored."),
                "status \(result.status): \(result.stderr)")
            // The codes live 900 s: a wait past --timeout would be minutes
            // (the margin is for starting a process on a loaded machine).
            #expect(Date().timeIntervalSince(started) < 20, "the wait outlived --timeout")
            #expect(!FileManager.default.fileExists(atPath: home.appendingPathComponent("credentials.json").path))
        }
    }

    /// A second Ctrl-C during the poll seen through does not wait for it,
    /// as the first one's message says: authkit ends at once, storing nothing.
    @Test func aSecondCtrlCDuringAPollStopsAtOnce() async throws {
        try await withServer { server in
            let home = try setUp(server)
            let polls = grantSlowly(server, after: 5)
            let arrived = Recorder<Date>()
            let result = try await CLIProcess.run(
                ["authorize", "--provider", "tv", "--device", "--timeout", "30"], environment: headless(home),
                signalWhen: { arrived.firstTime(!polls.all.isEmpty) }, signals: [SIGINT, SIGINT])
            #expect(
                result.signal == SIGINT && result.stderr.contains("A second Ctrl-C stops now."),
                "status \(result.status): \(result.stderr)")
            #expect(arrived.sinceFirst < 4.5, "waited for the 5-second poll")
            #expect(!FileManager.default.fileExists(atPath: home.appendingPathComponent("credentials.json").path))
        }
    }
}
