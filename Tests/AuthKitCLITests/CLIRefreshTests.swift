import AuthKitTestSupport
import Foundation
import Testing

/// The acceptance test of one refresh across processes: eight `authkit
/// request` at once on one expired credential, against a server that rotates
/// refresh tokens and revokes the grant when one is used twice.
@Suite(.serialized) struct CLIRefreshTests {
    @Test func eightRequestsAtOnceRefreshOnce() async throws {
        try await withServer { server in
            // The refresh is answered after 2 s: all eight processes have
            // read the expired credential by then, even on a loaded machine,
            // so they do compete for the lock (at 0.3 s, late starters could
            // read the renewal and never test it).
            let grant = RotatingGrant(on: server, delay: 2)
            let home = try CLIProcess.home("authkit-cli-refresh")
            defer { try? FileManager.default.removeItem(at: home) }
            try Data(RotatingGrant.descriptor(id: "rotating", server: server).utf8).write(
                to: home.appendingPathComponent("providers/rotating.json"))
            try Data(RotatingGrant.expiredCredential(id: "rotating").utf8).write(
                to: home.appendingPathComponent("credentials.json"))
            let environment = [
                "AUTHKIT_HOME": home.path, "AUTHKIT_ROTATING_CLIENT_ID": "app",
                "AUTHKIT_ROTATING_CLIENT_SECRET": "secret",
            ]
            let url = "\(server.baseURL)/resource"

            let results = try await withThrowingTaskGroup(of: CLIResult.self) { group in
                for _ in 0..<8 {
                    group.addTask {
                        try await CLIProcess.run(["request", "--provider", "rotating", url], environment: environment)
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            for result in results {
                #expect(result.status == 0, "\(result.stderr)")
                #expect(result.stdout == #"{"ok":"at-1"}"#)
            }
            #expect(grant.refreshCount == 1, "the refresh token was sent \(grant.refreshCount) times")
            #expect(!grant.isRevoked)
            // The stored credential works afterwards.
            let after = try await CLIProcess.run(["request", "--provider", "rotating", url], environment: environment)
            #expect(after.status == 0 && after.stdout == #"{"ok":"at-1"}"#, "\(after.stderr)")
        }
    }

    /// A refresh ahead of time that the provider answers after the command
    /// stopped waiting (10 s): the command prints the token that still
    /// works, then waits for the answer before it exits, and saves it. It
    /// exited with the request in flight: the provider had rotated the
    /// refresh token, and the stored one was spent (the next refresh asked
    /// the user to sign in again).
    @Test func aRefreshAheadOfTimeAnsweredLateIsSavedBeforeTheCommandExits() async throws {
        try await withServer { server in
            let grant = RotatingGrant(on: server, delay: 12)
            let home = try CLIProcess.home("authkit-cli-late-refresh")
            defer { try? FileManager.default.removeItem(at: home) }
            let descriptor = RotatingGrant.descriptor(id: "rotating", server: server)
            try Data((String(descriptor.dropLast()) + #", "refreshPolicy": {"aheadSeconds": 7200}}"#).utf8).write(
                to: home.appendingPathComponent("providers/rotating.json"))
            let format = ISO8601DateFormatter()
            let expiry = format.string(from: Date().addingTimeInterval(3600))
            let obtained = format.string(from: Date().addingTimeInterval(-3600))
            try Data(
                #"{"version":1,"credentials":[{"providerID":"rotating","kind":"oauth2","accessToken":"at-0","tokenType":"Bearer","refreshToken":"rt-0","expiresAt":"\#(expiry)","scopes":[],"obtainedAt":"\#(obtained)","rawFields":{}}]}"#
                    .utf8
            ).write(to: home.appendingPathComponent("credentials.json"))
            let environment = [
                "AUTHKIT_HOME": home.path, "AUTHKIT_ROTATING_CLIENT_ID": "app",
                "AUTHKIT_ROTATING_CLIENT_SECRET": "secret",
            ]
            let printed = try await CLIProcess.run(
                ["token", "print", "--provider", "rotating"], environment: environment)
            #expect(printed.status == 0, "\(printed.stderr)")
            #expect(printed.stdout == "at-0\n")
            #expect(printed.stderr.contains("Waiting for the refresh of rotating to end"), "\(printed.stderr)")
            #expect(grant.refreshCount == 1)
            let stored = try String(contentsOf: home.appendingPathComponent("credentials.json"), encoding: .utf8)
            #expect(
                stored.contains(#""refreshToken":"rt-1""#) || stored.contains(#""refreshToken" : "rt-1""#), "\(stored)")
        }
    }

    /// `token refresh --due`: the due credential is refreshed, the fresh one
    /// left alone, the one whose client is not configured reported; exit 1.
    @Test func refreshDueGoesThroughEveryCredential() async throws {
        try await withServer { server in
            server.route("POST", "/token") { _ in
                .json(
                    #"{"access_token":"renewed","token_type":"Bearer","expires_in":5184000,"refresh_token_expires_in":600}"#
                )
            }
            let home = try CLIProcess.home("authkit-cli-due")
            defer { try? FileManager.default.removeItem(at: home) }
            // Refreshed in the last 14 days of a token's life, once a day old (Instagram's rules).
            let policy = #", "refreshPolicy": {"aheadSeconds": 1209600, "minimumAgeSeconds": 86400}}"#
            for id in ["longlived", "unconfigured"] {
                let descriptor = RotatingGrant.descriptor(id: id, server: server)
                try Data((String(descriptor.dropLast()) + policy).utf8).write(
                    to: home.appendingPathComponent("providers/\(id).json"))
            }
            let now = Date()
            func credential(_ id: String, label: String, expiresIn days: Double) -> String {
                let format = ISO8601DateFormatter()
                return
                    #"{"providerID":"\#(id)","label":"\#(label)","kind":"oauth2","accessToken":"old-\#(label)","tokenType":"Bearer","refreshToken":"r","expiresAt":"\#(format.string(from: now.addingTimeInterval(days * 86400)))","scopes":[],"obtainedAt":"\#(format.string(from: now.addingTimeInterval(-40 * 86400)))","rawFields":{}}"#
            }
            let store =
                #"{"version":1,"credentials":["#
                + [
                    credential("longlived", label: "due", expiresIn: 5),
                    credential("longlived", label: "fresh", expiresIn: 40),
                    credential("unconfigured", label: "broken", expiresIn: 2),
                    credential("unconfigured", label: "fine", expiresIn: 40),
                    #"{"providerID":"twitter","kind":"oauth1","accessToken":"t","tokenType":"OAuth","tokenSecret":"ts","scopes":[],"obtainedAt":"2026-01-01T00:00:00Z","rawFields":{}}"#,
                ].joined(separator: ",") + "]}"
            try Data(store.utf8).write(to: home.appendingPathComponent("credentials.json"))
            let environment = [
                "AUTHKIT_HOME": home.path, "AUTHKIT_LONGLIVED_CLIENT_ID": "app", "AUTHKIT_LONGLIVED_CLIENT_SECRET": "s",
            ]

            let result = try await CLIProcess.run(["token", "refresh", "--due"], environment: environment)
            #expect(result.status == 1, "\(result.stderr)")
            #expect(result.stdout.contains("longlived (due): refreshed"), "\(result.stdout)")
            #expect(result.stdout.contains("longlived (fresh): not due"))
            #expect(result.stdout.contains("unconfigured (broken): failed: unconfigured: no client id is configured"))
            // Not due, it needs no client: it was reported failed, and its token could not be sent either.
            #expect(result.stdout.contains("unconfigured (fine): not due"), "\(result.stdout)")
            #expect(result.stdout.contains("1 of 5") || result.stderr.contains("1 of 5"), "\(result.stderr)")
            // Said as it is, not "expires unknown (the provider did not say)", and
            // not a failure for want of a consumer key it does not need.
            #expect(result.stdout.contains("twitter: not due: OAuth 1.0a tokens do not expire"), "\(result.stdout)")
            // One level of parentheses: the expiry's own "(in 59 min)".
            #expect(!result.stdout.contains("))"), "\(result.stdout)")
            let header = try await CLIProcess.run(
                ["token", "header", "--provider", "unconfigured", "--label", "fine"], environment: environment)
            #expect(header.status == 0 && header.stdout == "Authorization: Bearer old-fine\n", "\(header.stderr)")
            let request = try await CLIProcess.run(
                ["request", "--provider", "unconfigured", "--label", "fine", "\(server.baseURL)/resource"],
                environment: environment)
            #expect(
                server.requests(to: "/resource").last?.header("Authorization") == "Bearer old-fine", "\(request.stderr)"
            )
            #expect(server.requests(to: "/token").count == 1)

            // The refreshed one was saved, with when its refresh token dies.
            let shown = try await CLIProcess.run(
                ["token", "show", "--provider", "longlived", "--label", "due"], environment: environment)
            #expect(shown.stdout.contains("sign in again by:"), "\(shown.stdout)")
            #expect(shown.stderr.contains("warning: the refresh token of longlived (due) expires"), "\(shown.stderr)")
        }
    }

    /// `token refresh --due` is run by a timer whose job is the refresh: a
    /// due credential whose refresh fails is reported (exit 1), even while
    /// its token still works. It printed "refreshed", with the old expiry.
    @Test func aFailedRefreshOfADueCredentialIsReported() async throws {
        try await withServer { server in
            server.route("POST", "/token") { _ in
                .json(#"{"error":"invalid_grant","error_description":"revoked"}"#, status: 400)
            }
            let home = try CLIProcess.home("authkit-cli-due-failed")
            defer { try? FileManager.default.removeItem(at: home) }
            let descriptor = RotatingGrant.descriptor(id: "ahead", server: server)
            try Data((String(descriptor.dropLast()) + #", "refreshPolicy": {"aheadSeconds": 1209600}}"#).utf8)
                .write(to: home.appendingPathComponent("providers/ahead.json"))
            let format = ISO8601DateFormatter()
            let stored =
                #"{"version":1,"credentials":[{"providerID":"ahead","kind":"oauth2","accessToken":"still-works","tokenType":"Bearer","refreshToken":"r","expiresAt":"\#(format.string(from: Date().addingTimeInterval(5 * 86400)))","scopes":[],"obtainedAt":"\#(format.string(from: Date().addingTimeInterval(-86400)))","rawFields":{}}]}"#
            try Data(stored.utf8).write(to: home.appendingPathComponent("credentials.json"))
            let environment = [
                "AUTHKIT_HOME": home.path, "AUTHKIT_AHEAD_CLIENT_ID": "app", "AUTHKIT_AHEAD_CLIENT_SECRET": "s",
            ]
            let result = try await CLIProcess.run(["token", "refresh", "--due"], environment: environment)
            #expect(result.status == 1, "\(result.stdout) \(result.stderr)")
            #expect(
                result.stdout.contains("ahead: failed:") && !result.stdout.contains("ahead: refreshed"),
                "\(result.stdout)")
            #expect(server.requests(to: "/token").count == 1)
            // A missing client id is advised without --client-id, which --due does not take.
            var clientless = environment
            clientless["AUTHKIT_AHEAD_CLIENT_ID"] = nil
            let unconfigured = try await CLIProcess.run(["token", "refresh", "--due"], environment: clientless)
            #expect(
                unconfigured.status == 1
                    && unconfigured.stdout.contains(
                        "ahead: failed: ahead: no client id is configured. Set AUTHKIT_AHEAD_CLIENT_ID or add")
                    && !unconfigured.stdout.contains("--client-id"), "\(unconfigured.stdout)")
            // The token still works, and request uses it: only the refresh ahead of time failed.
            let request = try await CLIProcess.run(
                ["request", "--provider", "ahead", "\(server.baseURL)/resource"], environment: environment)
            #expect(
                server.requests(to: "/resource").last?.header("Authorization") == "Bearer still-works",
                "\(request.stderr)")
        }
    }

    /// The client options `authorize` takes work for the commands that refresh.
    @Test func tokenHeaderTakesTheClientOptions() async throws {
        try await withServer { server in
            _ = RotatingGrant(on: server)
            let home = try CLIProcess.home("authkit-cli-flags")
            defer { try? FileManager.default.removeItem(at: home) }
            try Data(RotatingGrant.descriptor(id: "rotating", server: server).utf8).write(
                to: home.appendingPathComponent("providers/rotating.json"))
            try Data(RotatingGrant.expiredCredential(id: "rotating").utf8).write(
                to: home.appendingPathComponent("credentials.json"))
            let without = try await CLIProcess.run(
                ["token", "header", "--provider", "rotating"], environment: ["AUTHKIT_HOME": home.path])
            #expect(without.status == 64 && without.stderr.contains("Pass --client-id"), "\(without.stderr)")
            let with = try await CLIProcess.run(
                ["token", "header", "--provider", "rotating", "--client-id", "app", "--client-secret", "secret"],
                environment: ["AUTHKIT_HOME": home.path])
            #expect(with.status == 0 && with.stdout == "Authorization: Bearer at-1\n", "\(with.stderr)")
        }
    }

    /// `--dpop-nonce` for a token that is not DPoP-bound is refused before
    /// anything is refreshed: a due token was renewed first (its refresh
    /// token rotated), for a command refused anyway.
    @Test func aNonceForAnUnboundTokenIsRefusedBeforeARefresh() async throws {
        try await withServer { server in
            _ = RotatingGrant(on: server)
            let home = try CLIProcess.home("authkit-cli-nonce-unbound")
            defer { try? FileManager.default.removeItem(at: home) }
            try Data(RotatingGrant.descriptor(id: "rotating", server: server).utf8).write(
                to: home.appendingPathComponent("providers/rotating.json"))
            try Data(RotatingGrant.expiredCredential(id: "rotating").utf8).write(
                to: home.appendingPathComponent("credentials.json"))
            let refused = try await CLIProcess.run(
                [
                    "token", "header", "--provider", "rotating", "--client-id", "app", "--client-secret", "secret",
                    "--dpop-nonce", "n-1", "\(server.baseURL)/resource",
                ], environment: ["AUTHKIT_HOME": home.path])
            #expect(refused.status == 64 && refused.stderr.contains("not DPoP-bound"), "\(refused.stderr)")
            #expect(server.requests(to: "/token").isEmpty, "the token was refreshed first")
        }
    }

    /// Unless the refresh would bind it: a Bearer token of a provider whose
    /// descriptor has since turned `dpop` on is renewed with a new key, so
    /// the nonce is not refused before that refresh is tried (this
    /// provider answers Bearer, which a bound refresh refuses).
    @Test func aNonceForATokenARefreshWouldBindIsNotRefusedBeforeIt() async throws {
        try await withServer { server in
            _ = RotatingGrant(on: server)
            let home = try CLIProcess.home("authkit-cli-nonce-binds")
            defer { try? FileManager.default.removeItem(at: home) }
            let descriptor = RotatingGrant.descriptor(id: "rotating", server: server)
                .replacingOccurrences(of: #""protocol": "oauth2","#, with: #""protocol": "oauth2", "dpop": "on","#)
            #expect(descriptor.contains(#""dpop": "on""#))
            try Data(descriptor.utf8).write(to: home.appendingPathComponent("providers/rotating.json"))
            try Data(RotatingGrant.expiredCredential(id: "rotating").utf8).write(
                to: home.appendingPathComponent("credentials.json"))
            let result = try await CLIProcess.run(
                [
                    "token", "header", "--provider", "rotating", "--client-id", "app", "--client-secret", "secret",
                    "--dpop-nonce", "n-1", "\(server.baseURL)/resource",
                ], environment: ["AUTHKIT_HOME": home.path])
            #expect(!result.stderr.contains("not DPoP-bound"), "\(result.stderr)")
            let refresh = try #require(server.requests(to: "/token").first, "no refresh was tried: \(result.stderr)")
            #expect(refresh.header("DPoP") != nil, "the refresh carried no proof")
        }
    }

    // MARK: - A signal during a refresh

    /// A refresh in flight when a signal comes: the provider has spent the
    /// old refresh token, so a process killed before saving the new one loses
    /// the grant (here, the next refresh reuses rt-0 and the server revokes
    /// everything). authkit finishes the refresh, saves, then dies of the
    /// signal itself, so a shell loop stops as it would for any Ctrl-C.
    @Test(arguments: [SIGINT, SIGTERM, SIGHUP])
    func aSignalDuringARefreshWaitsForTheSave(signal: Int32) async throws {
        try await withServer { server in
            let grant = RotatingGrant(on: server, delay: 1.5)
            let (home, environment) = try Self.rotatingHome(server, "authkit-cli-signal")
            defer { try? FileManager.default.removeItem(at: home) }
            let url = "\(server.baseURL)/resource"

            let interrupted = try await CLIProcess.run(
                ["request", "--provider", "rotating", url], environment: environment,
                signalWhen: { grant.arrivedCount > 0 }, signals: [signal])
            #expect(
                interrupted.signal == signal,
                "status \(interrupted.status), signal \(interrupted.signal.map { String($0) } ?? "none"): \(interrupted.stderr)"
            )
            #expect(
                interrupted.stderr.contains("finishing the refresh (or sign-out) under way first")
                    && interrupted.stderr.contains("the stored credential is up to date; stopping"),
                "\(interrupted.stderr)")
            // SIGTERM and SIGHUP come from no key: the second is not called a Ctrl-C.
            let second = signal == SIGINT ? "A second Ctrl-C stops now" : "A second signal stops now"
            #expect(
                interrupted.stderr.contains(second) && (signal == SIGINT || !interrupted.stderr.contains("Ctrl-C")),
                "\(interrupted.stderr)")
            #expect(interrupted.stdout.isEmpty, "the request itself is not sent after the signal")
            #expect(grant.refreshCount == 1)
            let stored = try String(contentsOf: home.appendingPathComponent("credentials.json"), encoding: .utf8)
            #expect(
                stored.contains(#""refreshToken" : "rt-1""#) || stored.contains(#""refreshToken":"rt-1""#),
                "the rotated token was not saved: \(stored)")

            let after = try await CLIProcess.run(["request", "--provider", "rotating", url], environment: environment)
            #expect(after.status == 0 && after.stdout == #"{"ok":"at-1"}"#, "\(after.stderr)")
            #expect(!grant.isRevoked && grant.refreshCount == 1)
        }
    }

    /// A second Ctrl-C does not wait: it ends authkit at once, as the first
    /// one's message promised, and the store is as it was.
    @Test func aSecondCtrlCStopsAtOnce() async throws {
        try await withServer { server in
            let grant = RotatingGrant(on: server, delay: 5)
            let (home, environment) = try Self.rotatingHome(server, "authkit-cli-signal-twice")
            defer { try? FileManager.default.removeItem(at: home) }
            let arrived = Recorder<Date>()
            let result = try await CLIProcess.run(
                ["request", "--provider", "rotating", "\(server.baseURL)/resource"], environment: environment,
                signalWhen: { arrived.firstTime(grant.arrivedCount > 0) }, signals: [SIGINT, SIGINT])
            #expect(result.signal == SIGINT, "status \(result.status): \(result.stderr)")
            #expect(arrived.sinceFirst < 4.5, "waited for the 5-second refresh")
            #expect(result.stderr.contains("A second Ctrl-C stops now"))
            let stored = try String(contentsOf: home.appendingPathComponent("credentials.json"), encoding: .utf8)
            #expect(stored == RotatingGrant.expiredCredential(id: "rotating"), "the store changed: \(stored)")
        }
    }

    /// `token delete` while another process refreshes the credential: the
    /// delete waits for the refresh's save and then deletes; before, the
    /// refresh saved the credential back after it was deleted.
    @Test func aDeleteDuringARefreshIsNotUndone() async throws {
        try await withServer { server in
            let grant = RotatingGrant(on: server, delay: 1.5)
            let (home, environment) = try Self.rotatingHome(server, "authkit-cli-delete-race")
            defer { try? FileManager.default.removeItem(at: home) }
            async let request = CLIProcess.run(
                ["request", "--provider", "rotating", "\(server.baseURL)/resource"], environment: environment)
            let deadline = Date().addingTimeInterval(30)
            while grant.arrivedCount == 0 && Date() < deadline { try await Task.sleep(for: .milliseconds(10)) }

            let deleted = try await CLIProcess.run(
                ["token", "delete", "--provider", "rotating"], environment: ["AUTHKIT_HOME": home.path])
            #expect(deleted.status == 0, "\(deleted.stderr)")
            let finished = try await request
            #expect(finished.status == 0 && finished.stdout == #"{"ok":"at-1"}"#, "\(finished.stderr)")
            let list = try await CLIProcess.run(["token", "list"], environment: ["AUTHKIT_HOME": home.path])
            #expect(
                list.status == 0 && (list.stdout + list.stderr).contains("No stored credentials"),
                "the deleted credential came back: \(list.stdout)")
        }
    }

    /// A credential whose provider file has since been removed: each command
    /// that would use it says so and how to proceed, instead of suggesting
    /// another provider's id; `--due` goes on with the others.
    @Test func aCredentialWhoseProviderIsGoneIsNamed() async throws {
        let home = try CLIProcess.home("authkit-cli-gone")
        defer { try? FileManager.default.removeItem(at: home) }
        try Data(RotatingGrant.expiredCredential(id: "gone").utf8).write(
            to: home.appendingPathComponent("credentials.json"))
        let environment = ["AUTHKIT_HOME": home.path]
        let expected = "The credential gone was issued by 'gone', which no provider file describes any more"
        for command in [
            ["token", "header", "--provider", "gone"], ["request", "--provider", "gone", "https://example.com/"],
            ["token", "refresh", "--provider", "gone"],
        ] {
            let result = try await CLIProcess.run(command, environment: environment)
            #expect(
                result.status == 64 && result.stderr.contains(expected)
                    && result.stderr.contains("authkit token delete --provider gone")
                    && result.stderr.contains("(or give the --providers-dir it was signed in from)"),
                "\(command): \(result.stderr)")
        }
        let due = try await CLIProcess.run(["token", "refresh", "--due"], environment: environment)
        #expect(due.status == 1 && due.stdout.contains("gone: failed: \(expected)"), "\(due.stdout) \(due.stderr)")
        let unknown = try await CLIProcess.run(["token", "header", "--provider", "nope"], environment: environment)
        #expect(
            unknown.status == 64 && unknown.stderr.contains("No provider named 'nope'"),
            "no credential, no provider: \(unknown.stderr)")
        let deleted = try await CLIProcess.run(["token", "delete", "--provider", "gone"], environment: environment)
        #expect(deleted.status == 0, "\(deleted.stderr)")

        // A label from the store is shown escaped in that message, never raw.
        let labelled = RotatingGrant.expiredCredential(id: "gone").replacingOccurrences(
            of: #""providerID":"gone""#, with: #""providerID":"gone","label":"w\u001b[2J""#)
        try Data(labelled.utf8).write(to: home.appendingPathComponent("credentials.json"))
        let escaped = try await CLIProcess.run(
            ["token", "header", "--provider", "gone", "--label", "w\u{1B}[2J"], environment: environment)
        #expect(
            escaped.status == 64 && escaped.stderr.contains("which no provider file describes any more")
                && !escaped.stderr.contains("\u{1B}"), "\(escaped.stderr)")
    }

    static func rotatingHome(_ server: TestHTTPServer, _ name: String) throws -> (URL, [String: String]) {
        let home = try CLIProcess.home(name)
        try Data(RotatingGrant.descriptor(id: "rotating", server: server).utf8).write(
            to: home.appendingPathComponent("providers/rotating.json"))
        try Data(RotatingGrant.expiredCredential(id: "rotating").utf8).write(
            to: home.appendingPathComponent("credentials.json"))
        return (
            home,
            [
                "AUTHKIT_HOME": home.path, "AUTHKIT_ROTATING_CLIENT_ID": "app",
                "AUTHKIT_ROTATING_CLIENT_SECRET": "secret",
            ]
        )
    }
}
