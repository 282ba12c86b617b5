import AuthKit
import AuthKitSandbox
import AuthKitTestSupport
import Foundation
import Testing

/// `token print` and `token status`, the habits of `gh auth token` /
/// `oauth2l fetch` and `gh auth status`, against the sandbox's GitHub
/// (whose descriptor names its "who am I" call).
@Suite struct TokenPrintAndStatusTests {
    /// `--label` picks accounts byte for byte, as the stores tell them
    /// apart: a composed and a decomposed `café` (one typed, one saved by
    /// an app) are two accounts, and `token status --label café` is one.
    @Test func aLabelPicksItsAccountByteForByte() async throws {
        let home = try CLIProcess.home("authkit-token-status-label")
        defer { try? FileManager.default.removeItem(at: home) }
        let store = FileCredentialStore(environment: ["AUTHKIT_HOME": home.path])
        for (label, token) in [("caf\u{E9}", "composed"), ("cafe\u{301}", "decomposed")] {
            try await store.save(Credential(providerID: "dropbox", label: label, accessToken: token))
        }
        let status = try await CLIProcess.run(
            ["token", "status", "--provider", "dropbox", "--label", "caf\u{E9}"],
            environment: ["AUTHKIT_HOME": home.path])
        #expect(status.stdout.split(separator: "\n").filter { $0.hasPrefix("dropbox") }.count == 1, "\(status.stdout)")
    }

    /// What an OAuth 1.0a token cannot give is said first, before any
    /// client is looked for: "no client id is configured" came first, and
    /// the real answer only once one had been set up for nothing.
    @Test func anOAuth1TokensLimitsAreSaidBeforeAClientIsAskedFor() async throws {
        let home = try CLIProcess.home("authkit-oauth1-print")
        defer { try? FileManager.default.removeItem(at: home) }
        let environment = ["AUTHKIT_HOME": home.path]
        try await FileCredentialStore(environment: environment).save(
            Credential(providerID: "twitter", isOAuth1: true, accessToken: "t-1", tokenSecret: "s-1"))
        let printed = try await CLIProcess.run(["token", "print", "--provider", "twitter"], environment: environment)
        #expect(
            printed.status == 64 && printed.stderr.contains("OAuth 1.0a credential")
                && !printed.stderr.contains("client id"), "\(printed.stderr)")
        // Never checked, so no consumer key is asked for: it was "not
        // checked", exit 1, without one configured here.
        let status = try await CLIProcess.run(["token", "status", "--provider", "twitter"], environment: environment)
        #expect(
            status.status == 0 && status.stdout.contains("OAuth 1.0a tokens are not checked"),
            "\(status.status): \(status.stdout) \(status.stderr)")
        let header = try await CLIProcess.run(["token", "header", "--provider", "twitter"], environment: environment)
        #expect(
            header.status == 64 && header.stderr.contains("give its method and URL")
                && !header.stderr.contains("client id"), "\(header.stderr)")

        // The command each advises names the account asked about: without
        // its label, following it reached (and a sign-in replaced) another.
        try await FileCredentialStore(environment: environment).save(
            Credential(providerID: "twitter", label: "work", isOAuth1: true, accessToken: "t-2", tokenSecret: "s-2"))
        for arguments in [
            ["token", "print", "--provider", "twitter", "--label", "work"],
            ["token", "header", "--provider", "twitter", "--label", "work"],
            ["token", "import", "--provider", "twitter", "--label", "work"],
        ] {
            let advised = try await CLIProcess.run(arguments, environment: environment)
            #expect(
                advised.status == 64 && advised.stderr.contains("--provider twitter --label work"),
                "\(arguments): \(advised.stderr)")
        }
    }

    /// A token saved by a library or an editor (not by a sign-in here)
    /// with a line break: `token header` and `git-credential` refused it,
    /// `token print` printed it, and `curl -H "$(authkit token print
    /// --format header)"` sent a header of the file's choosing. JSON
    /// escapes it; a type other than Bearer gets no Bearer line.
    @Test func printRefusesATokenNoBearerHeaderCouldCarry() async throws {
        let home = try CLIProcess.home("authkit-print-unsendable")
        defer { try? FileManager.default.removeItem(at: home) }
        let environment = ["AUTHKIT_HOME": home.path, "AUTHKIT_GITHUB_CLIENT_ID": "c"]
        let store = FileCredentialStore(environment: environment)
        try await store.save(Credential(providerID: "github", accessToken: "abc\r\nX-Evil: 1"))
        for format in ["bare", "header"] {
            let printed = try await CLIProcess.run(
                ["token", "print", "--provider", "github", "--format", format], environment: environment)
            #expect(
                printed.status == 1 && printed.stdout.isEmpty && printed.stderr.contains("not printed")
                    && !printed.stderr.contains("X-Evil"), "\(format): \(printed.status) \(printed.stderr)")
        }
        let json = try await CLIProcess.run(
            ["token", "print", "--provider", "github", "--format", "json"], environment: environment)
        #expect(json.status == 0 && json.stdout.contains(#"abc\r\nX-Evil: 1"#), "\(json.stdout)")

        try await store.save(Credential(providerID: "github", accessToken: "mac-token", tokenType: "mac"))
        let header = try await CLIProcess.run(
            ["token", "print", "--provider", "github", "--format", "header"], environment: environment)
        #expect(
            header.status == 64 && header.stdout.isEmpty && header.stderr.contains("not Bearer"), "\(header.stderr)")
        // `token header` says the same, with the same status (it exited 1).
        let tokenHeader = try await CLIProcess.run(
            ["token", "header", "--provider", "github"], environment: environment)
        #expect(
            tokenHeader.status == 64 && tokenHeader.stdout.isEmpty && tokenHeader.stderr.contains("not Bearer")
                && !tokenHeader.stderr.contains("mac-token"), "\(tokenHeader.status) \(tokenHeader.stderr)")
        let bare = try await CLIProcess.run(["token", "print", "--provider", "github"], environment: environment)
        #expect(bare.status == 0 && bare.stdout == "mac-token\n", "\(bare.stderr)")
    }

    @Test func printGivesAFreshTokenAndStatusAsksTheProvider() async throws {
        let home = try CLIProcess.home("authkit-token-status")
        var options = SandboxOptions(approves: true)
        options.accessTokenLifetime = 3600
        let sandbox = try await Sandbox.start(
            emulating: try ProviderCatalog(includeBundled: true, directories: []).descriptor(id: "github"),
            options: options)
        defer { Task { await sandbox.stop() } }
        let environment = ["AUTHKIT_HOME": home.path, "AUTHKIT_SANDBOX": sandbox.baseURL.absoluteString]
        func run(_ arguments: [String]) async throws -> CLIResult {
            try await CLIProcess.run(arguments, environment: environment, timeout: 60)
        }
        #expect(try await run(["token", "status"]).status == 1, "nothing stored: not a success")
        let signIn = try await run(["authorize", "--provider", "github", "--scripted-browser"])
        #expect(signIn.status == 0, "\(signIn.stderr)")

        let stored = try await run(["token", "show", "--provider", "github", "--field", "access_token"])
        let bare = try await run(["token", "print", "--provider", "github"])
        #expect(bare.status == 0 && bare.stdout == stored.stdout, "print: '\(bare.stdout)'")
        let header = try await run(["token", "print", "--provider", "github", "--format", "header"])
        #expect(header.stdout == "Authorization: Bearer " + stored.stdout)

        let status = try await run(["token", "status"])
        #expect(status.status == 0, "\(status.stderr)")
        #expect(status.stdout.contains("github: valid, account alice (sandbox-user-alice)"), "\(status.stdout)")
        // Revoked at the provider, kept here: status says so and fails.
        #expect(try await run(["token", "revoke", "--provider", "github", "--keep"]).status == 0)
        let revoked = try await run(["token", "status", "--provider", "github"])
        #expect(revoked.status == 1 && revoked.stdout.contains("github: not valid"), "\(revoked.stdout)")
        #expect(!revoked.stdout.contains(stored.stdout.trimmingCharacters(in: .newlines)), "the token was printed")
    }

    /// A provider that cannot be reached says nothing of its credential: it
    /// is "not checked", counted apart, and a run whose only failures are
    /// such ends with 4 (a network error). It said "not valid" and exit 1;
    /// a credential with no client here was counted "not valid" too, and
    /// named a Swift type to set ("Set it in ClientSettings….;").
    @Test func anUnreachableProviderIsNotCheckedRatherThanNotValid() async throws {
        try await withServer { server in
            server.route("GET", "/me") { _ in StubResponse.json(#"{"message":"Bad credentials"}"#, status: 401) }
            // Up, but answering that it cannot serve now.
            server.route("GET", "/busy/me") { _ in StubResponse.json(#"{"message":"try later"}"#, status: 503) }
            // Up, answering what AuthKit cannot read: it says nothing of the token.
            server.route("GET", "/garbled/me") { _ in
                .text("<html><body>Welcome</body></html>", contentType: "text/html", status: 200)
            }
            let home = try CLIProcess.home("authkit-token-status-unreached")
            defer { try? FileManager.default.removeItem(at: home) }
            let closed = try UnusedPort.next()
            for (id, base) in [
                ("down", "http://127.0.0.1:\(closed)"), ("refusing", server.baseURL),
                ("busy", server.baseURL + "/busy"), ("garbled", server.baseURL + "/garbled"),
            ] {
                let descriptor = """
                    {"id": "\(id)", "name": "\(id)", "protocol": "oauth2",
                     "authorization": {"url": "\(base)/authorize"}, "token": {"url": "\(base)/token"},
                     "whoAmI": {"url": "\(base)/me", "subject": "id", "name": "login"}}
                    """
                try Data(descriptor.utf8).write(to: home.appendingPathComponent("providers/\(id).json"))
            }
            let environment = [
                "AUTHKIT_HOME": home.path, "AUTHKIT_DOWN_CLIENT_ID": "c", "AUTHKIT_REFUSING_CLIENT_ID": "c",
                "AUTHKIT_BUSY_CLIENT_ID": "c", "AUTHKIT_GARBLED_CLIENT_ID": "c",
            ]
            let store = FileCredentialStore(environment: environment)
            for id in ["down", "refusing", "busy", "garbled"] {
                try await store.save(
                    Credential(
                        providerID: id, accessToken: "tok-\(id)", expiresAt: Date(timeIntervalSinceNow: 3600)))
            }
            // Due, with a refresh token, and no client here to refresh it:
            // the refresh's missing setting made it "not valid".
            try await store.save(
                Credential(
                    providerID: "github", accessToken: "tok-github", refreshToken: "tok-refresh",
                    expiresAt: Date(timeIntervalSinceNow: -60)))
            func run(_ arguments: [String]) async throws -> CLIResult {
                try await CLIProcess.run(arguments, environment: environment)
            }
            let down = try await run(["token", "status", "--provider", "down"])
            #expect(
                down.status == 4 && down.stdout.hasPrefix("down: not checked: ")
                    && !down.stdout.contains("not valid")
                    && down.stderr.contains("Of 1 credential: 1 not checked (a provider could not be reached"),
                "\(down.status): \(down.stdout)\(down.stderr)")
            let busy = try await run(["token", "status", "--provider", "busy"])
            #expect(
                busy.status == 4 && busy.stdout.hasPrefix("busy: not checked: ") && !busy.stdout.contains("not valid"),
                "\(busy.status): \(busy.stdout)\(busy.stderr)")
            let all = try await run(["token", "status"])
            #expect(all.status == 1, "\(all.stdout)\(all.stderr)")
            #expect(all.stdout.contains("refusing: not valid: "), "\(all.stdout)")
            #expect(all.stdout.contains("down: not checked: "), "\(all.stdout)")
            #expect(all.stdout.contains("garbled: not checked: "), "\(all.stdout)")
            // No client id for github here: not checked, the setting named as the command line takes it.
            let github = try #require(all.stdout.split(separator: "\n").first { $0.hasPrefix("github: ") })
            #expect(
                github.hasPrefix("github: stored, not checked") && github.contains("AUTHKIT_GITHUB_CLIENT_ID")
                    && !github.contains("ClientSettings") && !github.contains(".;"), "\(github)")
            #expect(all.stderr.contains("Of 5 credentials: 1 not valid, 4 not checked"), "\(all.stderr)")
            #expect(!all.stdout.contains("tok-"), "a token was printed")
        }
    }

    @Test func anExpiredTokenThatCannotBeRefreshedIsNotPrinted() async throws {
        let home = try CLIProcess.home("authkit-token-print-expired")
        let expired = Credential(
            providerID: "github", accessToken: "gho_expired_token_value", expiresAt: Date(timeIntervalSinceNow: -60))
        try await FileCredentialStore(file: home.appendingPathComponent("credentials.json")).save(expired)
        let result = try await CLIProcess.run(
            ["token", "print", "--provider", "github"],
            environment: [
                "AUTHKIT_HOME": home.path, "AUTHKIT_GITHUB_CLIENT_ID": "id", "AUTHKIT_GITHUB_CLIENT_SECRET": "s",
            ])
        #expect(result.status != 0 && result.stdout.isEmpty, "\(result.stdout)")
        #expect(
            result.stderr.contains("Sign in again") || result.stderr.contains("authkit authorize"), "\(result.stderr)")
    }
}
