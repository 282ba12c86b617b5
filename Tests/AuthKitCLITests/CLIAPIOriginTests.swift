import Foundation
import Testing

/// A stored credential goes only where its provider's API lives (the
/// descriptor's `api.origins`): a mistyped host or a URL pasted from
/// someone else gets an error naming the API's origins, before the store is
/// read or a token refreshed, and an override can add an origin.
@Suite struct CLIAPIOriginTests {
    @Test func aCredentialGoesOnlyToItsProvidersAPI() async throws {
        let home = try CLIProcess.home("authkit-cli-origins")
        defer { try? FileManager.default.removeItem(at: home) }
        let credentials = home.appendingPathComponent("credentials.json")
        // Expired, with a refresh token: a check placed after the refresh
        // would send the refresh token to qiita.com first (exit 4 offline).
        let expired = CLIBoundaryTests.storedQiita.replacingOccurrences(
            of: #""rawFields":{}"#,
            with: #""rawFields":{},"expiresAt":"2026-01-01T01:00:00Z","refreshToken":"the-refresh-token""#)
        try Data(expired.utf8).write(to: credentials)
        let environment = [
            "AUTHKIT_HOME": home.path, "AUTHKIT_QIITA_CLIENT_ID": "c", "AUTHKIT_QIITA_CLIENT_SECRET": "s",
        ]
        for command in [
            ["request", "--provider", "qiita", "https://qitta.com/api/v2/items"],
            ["token", "header", "--provider", "qiita", "https://qiita.com.evil.example/api/v2/items"],
            ["request", "--provider", "qiita", "-X", "POST", "https://evil.example/collect", "-d", "a=b"],
            // Loopback is not a free pass: any local process may listen there (issue 44, item 7).
            ["token", "header", "--provider", "qiita", "https://127.0.0.2/api/v2/items"],
            ["request", "--provider", "qiita", "http://127.0.0.1:9/api/v2/items"],
            ["token", "header", "--provider", "qiita", "http://[::1]:8080/api/v2/items"],
        ] {
            let result = try await CLIProcess.run(command, environment: environment)
            #expect(
                result.status == 64 && result.stdout.isEmpty
                    && result.stderr.contains(
                        "is not where Qiita's API lives (https://qiita.com), so the stored credential is not sent there"
                    )
                    && result.stderr.contains("authkit providers override qiita")
                    && !result.stderr.contains("the-qiita-token"),
                "\(command): exit \(result.status): \(result.stderr)")
        }
        #expect(try String(contentsOf: credentials, encoding: .utf8) == expired)
        try Data(CLIBoundaryTests.storedQiita.utf8).write(to: credentials)
        let own = try await CLIProcess.run(
            ["token", "header", "--provider", "qiita", "https://qiita.com/api/v2/items"], environment: environment)
        #expect(own.status == 0 && own.stdout == "Authorization: Bearer the-qiita-token\n", "\(own.stderr)")

        // An override that lists another origin lets the credential go there.
        let override = try await CLIProcess.run(["providers", "override", "qiita"], environment: environment)
        let file = home.appendingPathComponent("providers/qiita.json")
        #expect(override.status == 0 && FileManager.default.fileExists(atPath: file.path), "\(override.stderr)")
        let text = try String(contentsOf: file, encoding: .utf8)
        try Data(
            text.replacingOccurrences(
                of: #"["https://qiita.com"]"#,
                with: #"["https://qiita.com", "https://qiita-mirror.example", "https://QIITA-mirror.example"]"#
            ).utf8
        ).write(to: file)
        let added = try await CLIProcess.run(
            ["token", "header", "--provider", "qiita", "https://qiita-mirror.example/api"], environment: environment)
        #expect(added.status == 0 && added.stdout == "Authorization: Bearer the-qiita-token\n", "\(added.stderr)")
        // The wider list is announced, as a file that moves the endpoints is,
        // each origin once (one written twice was named twice).
        #expect(
            added.stderr.contains("lets credentials go to https://qiita-mirror.example as well as https://qiita.com"),
            "\(added.stderr)")
        // Once, though the command looks the descriptor up twice.
        #expect(added.stderr.components(separatedBy: "lets credentials go to").count == 2, "\(added.stderr)")
        let elsewhere = try await CLIProcess.run(
            ["token", "header", "--provider", "qiita", "https://evil.example/"], environment: environment)
        #expect(
            elsewhere.status == 64 && elsewhere.stderr.contains("(https://qiita.com, https://qiita-mirror.example)")
                && elsewhere.stderr.contains("to api.origins in \(file.path)"), "\(elsewhere.stderr)")
    }

    /// An origin with a placeholder (a self-hosted GitLab's `{host}`) lets
    /// the credential go where it was issued, also with no client id or
    /// host configured now (a credential signed in with flags).
    @Test func anOriginWithAPlaceholderIsWhereTheCredentialWasIssued() async throws {
        let home = try CLIProcess.home("authkit-cli-origins-host")
        defer { try? FileManager.default.removeItem(at: home) }
        let environment = ["AUTHKIT_HOME": home.path]
        let nothing = try await CLIProcess.run(
            ["request", "--provider", "gitlab-self-managed", "https://git.example.com/api/v4/user"],
            environment: environment)
        #expect(
            nothing.status == 64 && nothing.stderr.contains("No stored credential for gitlab-self-managed"),
            "\(nothing.stderr)")
        try Data(Self.storedGitLab.utf8).write(to: home.appendingPathComponent("credentials.json"))
        let own = try await CLIProcess.run(
            ["token", "header", "-p", "gitlab-self-managed", "https://git.example.com/api/v4/user"],
            environment: environment)
        #expect(own.status == 0 && own.stdout == "Authorization: Bearer the-gitlab-token\n", "\(own.stderr)")
        let other = try await CLIProcess.run(
            ["token", "header", "-p", "gitlab-self-managed", "https://evil.example/api/v4/user"],
            environment: environment)
        #expect(
            other.status == 64 && other.stdout.isEmpty
                && other.stderr.contains("for this credential (https://git.example.com)"), "\(other.stderr)")
    }

    static let storedGitLab =
        #"{"version":1,"credentials":[{"providerID":"gitlab-self-managed","kind":"oauth2","accessToken":"the-gitlab-token","tokenType":"Bearer","scopes":[],"obtainedAt":"2026-01-01T00:00:00Z","rawFields":{},"endpointOrigins":["https://git.example.com"]}]}"#

    /// A placeholder given now that differs from the sign-in's does not
    /// carry the credential to the host it names, in `token header` as in
    /// `request`; with a sandbox, the header is made for the sandbox only.
    @Test func aPlaceholderCannotMoveTheCredential() async throws {
        let home = try CLIProcess.home("authkit-cli-origins-moved")
        defer { try? FileManager.default.removeItem(at: home) }
        try Data(Self.storedGitLab.utf8).write(to: home.appendingPathComponent("credentials.json"))
        let environment = ["AUTHKIT_HOME": home.path, "AUTHKIT_GITLAB_SELF_MANAGED_CLIENT_ID": "c"]
        for command in [
            [
                "token", "header", "-p", "gitlab-self-managed", "--placeholder", "host=evil.example",
                "https://evil.example/api/v4/user",
            ],
            [
                "request", "-p", "gitlab-self-managed", "--placeholder", "host=evil.invalid",
                "https://evil.invalid/api/v4/user",
            ],
        ] {
            let moved = try await CLIProcess.run(command, environment: environment)
            #expect(
                moved.status == 64 && !moved.stdout.contains("the-gitlab-token")
                    && moved.stderr.contains("for this credential (https://git.example.com)"),
                "\(command): exit \(moved.status): \(moved.stderr)")
        }
        let own = try await CLIProcess.run(
            [
                "token", "header", "-p", "gitlab-self-managed", "--placeholder", "host=git.example.com",
                "https://git.example.com/api/v4/user",
            ],
            environment: environment)
        #expect(own.status == 0 && own.stdout == "Authorization: Bearer the-gitlab-token\n", "\(own.stderr)")
        let sandboxed = try await CLIProcess.run(
            ["token", "header", "--sandbox", "http://127.0.0.1:9", "-p", "qiita", "https://evil.example/"],
            environment: environment)
        #expect(
            sandboxed.status == 64 && sandboxed.stderr.contains("the credential is the sandbox's and goes only to it"),
            "\(sandboxed.stderr)")
    }

    /// An override that changes only a placeholder's default moves every
    /// sign-in that sets none: it is announced as a file that moves the
    /// endpoints is.
    @Test func anOverrideThatChangesADefaultIsAnnounced() async throws {
        let home = try CLIProcess.home("authkit-cli-origins-default")
        defer { try? FileManager.default.removeItem(at: home) }
        let environment = ["AUTHKIT_HOME": home.path]
        let override = try await CLIProcess.run(["providers", "override", "salesforce"], environment: environment)
        let file = home.appendingPathComponent("providers/salesforce.json")
        #expect(override.status == 0, "\(override.stderr)")
        let text = try String(contentsOf: file, encoding: .utf8)
        #expect(text.contains(#""default": "login.salesforce.com""#))
        try Data(
            text.replacingOccurrences(of: #""default": "login.salesforce.com""#, with: #""default": "evil.example""#)
                .utf8
        ).write(to: file)
        let moved = try await CLIProcess.run(
            ["authorize", "--provider", "salesforce", "--manual"], environment: environment)
        #expect(
            moved.stderr.contains("note: 'salesforce' comes from \(file.path)")
                && moved.stderr.contains("sends to evil.example instead of login.salesforce.com"),
            "\(moved.stderr)")
        // Its API origin, https://{host}, is where a credential was issued: no note claims it widened.
        #expect(!moved.stderr.contains("lets credentials go to"), "\(moved.stderr)")
    }
}
