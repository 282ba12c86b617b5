import AuthKit
import AuthKitSandbox
import AuthKitTestSupport
import Foundation
import Testing

/// `token import` (as `gh auth login --with-token`), and a second sign-in
/// saying what it replaced.
@Suite struct TokenImportTests {
    /// A provider whose hosts are placeholders (`github-enterprise`'s
    /// `{host}`): the import records where the token was issued, as a
    /// sign-in does, and git is given it at that host; stored without, it
    /// was refused everywhere as "issued elsewhere". With no value for the
    /// placeholder, nothing is imported.
    @Test func anImportForAPlaceholderHostRecordsWhereTheTokenWasIssued() async throws {
        let home = try CLIProcess.home("authkit-token-import-host")
        let environment = ["AUTHKIT_HOME": home.path]
        func piping(_ input: String) -> [String] { ["/bin/sh", "-c", "printf '\(input)' | \"$0\" \"$@\""] }
        let command = ["token", "import", "--provider", "github-enterprise"]
        let missing = try await CLIProcess.run(command, environment: environment, launcher: piping("ghp_imported\\n"))
        #expect(
            missing.status == 64 && missing.stderr.contains("--placeholder host=VALUE")
                && missing.stderr.contains("AUTHKIT_GITHUB_ENTERPRISE_HOST")
                && !missing.stderr.contains("ghp_imported"),
            "\(missing.status): \(missing.stderr)")
        let imported = try await CLIProcess.run(
            command + ["--placeholder", "host=ghe.example.com"], environment: environment,
            launcher: piping("ghp_imported\\n"))
        #expect(imported.status == 0, "\(imported.stderr)")
        let git = try await CLIProcess.run(
            ["token", "git-credential", "--provider", "github-enterprise", "get"],
            environment: environment.merging(["AUTHKIT_GITHUB_ENTERPRISE_HOST": "ghe.example.com"]) { $1 },
            launcher: piping("protocol=https\\nhost=ghe.example.com\\n\\n"))
        #expect(git.status == 0 && git.stdout.contains("password=ghp_imported\n"), "\(git.status): \(git.stderr)")
    }

    @Test func anImportedTokenIsStoredAndUsedAndAReplacementIsSaid() async throws {
        let home = try CLIProcess.home("authkit-token-import")
        let sandbox = try await Sandbox.start(
            emulating: try ProviderCatalog(includeBundled: true, directories: []).descriptor(id: "github"),
            options: SandboxOptions(approves: true))
        defer { Task { await sandbox.stop() } }
        let environment = ["AUTHKIT_HOME": home.path, "AUTHKIT_SANDBOX": sandbox.baseURL.absoluteString]
        // `input` is written to standard input once authkit has said something on
        // standard error (here, always: the sandbox's note).
        func run(_ arguments: [String], input: String? = nil) async throws -> CLIResult {
            var respond: (@Sendable (String) -> String?)?
            if let input { respond = { @Sendable _ in input } }
            return try await CLIProcess.run(arguments, environment: environment, timeout: 60, respond: respond)
        }
        let first = try await run(["authorize", "--provider", "github", "--scripted-browser"])
        #expect(first.status == 0 && !first.stderr.contains("replaced"), "\(first.stderr)")
        let token = try await run(["token", "print", "--provider", "github"]).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)

        // The sandbox's token, imported under another label, works there.
        let imported = try await run(["token", "import", "--provider", "github", "--label", "ci"], input: token)
        #expect(
            imported.status == 0 && imported.stdout.contains("Imported a token for github (ci)"), "\(imported.stderr)")
        #expect(!imported.stdout.contains(token) && !imported.stderr.contains(token), "the token was echoed")
        let me = try await run(["request", "--provider", "github", "--label", "ci", "/whoami"])
        #expect(me.status == 0 && me.stdout.contains(#""account":"alice""#), "\(me.stderr)")

        // Not a token: refused, nothing replaced.
        let bad = try await run(["token", "import", "--provider", "github", "--label", "ci"], input: "two words")
        #expect(bad.status == 65 && !bad.stderr.contains("two words"), "\(bad.stderr)")
        #expect(try await run(["token", "print", "--provider", "github", "--label", "ci"]).stdout.hasPrefix(token))

        // Over the sign-in's credential, which holds a refresh token: only
        // with --force (it was replaced, and the grant lost, without a word).
        let over = try await run(["token", "import", "--provider", "github"], input: "imported-over")
        #expect(
            over.status == 65 && over.stderr.contains("pass --force") && over.stderr.contains("nothing was imported"),
            "\(over.status): \(over.stderr)")
        #expect(try await run(["token", "print", "--provider", "github"]).stdout == token + "\n")
        let forced = try await run(["token", "import", "--provider", "github", "--force"], input: "imported-over")
        #expect(forced.status == 0 && forced.stderr.contains("replaced"), "\(forced.stderr)")
        #expect(try await run(["token", "print", "--provider", "github"]).stdout == "imported-over\n")

        // Signing in again to the same account says what it replaced.
        let again = try await run(["authorize", "--provider", "github", "--scripted-browser"])
        // In the sandbox's store, which `sandbox try` shares with a running `sandbox serve`'s clients.
        #expect(
            again.status == 0 && again.stderr.contains("this replaced the sandbox credential stored for github")
                && again.stderr.contains("--label"), "\(again.stderr)")
    }

    /// `token revoke` of an imported token with no client configured: a
    /// provider that cannot revoke said "no client id", and only once one
    /// was configured that nothing could be revoked; neither named `token
    /// delete`. Now the real answer first, and the way out either way.
    @Test func revokingWithoutAClientSaysWhatStandsInTheWayAndTheWayOut() async throws {
        let home = try CLIProcess.home("authkit-token-revoke-clientless")
        defer { try? FileManager.default.removeItem(at: home) }
        let environment = ["AUTHKIT_HOME": home.path, "TOKEN": "imported-token"]
        for provider in ["bitbucket", "github"] {
            let imported = try await CLIProcess.run(
                ["token", "import", "--provider", provider], environment: environment,
                launcher: CLIKeyringTests.importing(""))
            #expect(imported.status == 0, "\(imported.stderr)")
        }
        let cannot = try await CLIProcess.run(["token", "revoke", "--provider", "bitbucket"], environment: environment)
        #expect(
            cannot.status == 1 && cannot.stderr.contains("names no way to revoke")
                && cannot.stderr.contains("authkit token delete --provider bitbucket")
                && !cannot.stderr.contains("client id"), "\(cannot.status): \(cannot.stderr)")
        let noClient = try await CLIProcess.run(["token", "revoke", "--provider", "github"], environment: environment)
        #expect(
            noClient.status == 64 && noClient.stderr.contains("AUTHKIT_GITHUB_CLIENT_ID")
                && noClient.stderr.contains("still stored here")
                && noClient.stderr.contains("authkit token delete --provider github"),
            "\(noClient.status): \(noClient.stderr)")
        let list = try await CLIProcess.run(["token", "list", "--json"], environment: environment)
        #expect(list.stdout.contains("bitbucket") && list.stdout.contains("github"), "nothing was deleted")
    }

    /// An OAuth 2.0 token imported with no client id configured (`gh auth
    /// login --with-token`'s path) is that, not OAuth 1.0a: `token status`
    /// says it was not checked and why (exit 1, as documented for a
    /// credential it cannot check), `token userinfo` and `token exchange`
    /// name the missing client id. It was called OAuth 1.0a and passed.
    @Test func anImportedTokenWithoutAClientIsNotTakenForOAuth1() async throws {
        let home = try CLIProcess.home("authkit-token-import-clientless")
        let environment = ["AUTHKIT_HOME": home.path, "TOKEN": "ghp_imported_without_client"]
        let imported = try await CLIProcess.run(
            ["token", "import", "--provider", "github"], environment: environment,
            launcher: CLIKeyringTests.importing(""))
        #expect(imported.status == 0, "\(imported.stderr)")
        let status = try await CLIProcess.run(["token", "status", "--provider", "github"], environment: environment)
        #expect(
            status.status == 1 && status.stdout.contains("not checked")
                && status.stdout.contains("AUTHKIT_GITHUB_CLIENT_ID")
                && !status.stdout.contains("OAuth 1.0a"), "\(status.stdout)\(status.stderr)")
        for command in [
            ["token", "userinfo", "--provider", "google"],
            ["token", "exchange", "--provider", "github", "--as", "other"],
        ] {
            if command[3] == "google" {
                let google = try await CLIProcess.run(
                    ["token", "import", "--provider", "google"], environment: environment,
                    launcher: CLIKeyringTests.importing(""))
                #expect(google.status == 0, "\(google.stderr)")
            }
            let result = try await CLIProcess.run(command, environment: environment)
            #expect(
                result.status == 64 && result.stderr.contains("CLIENT_ID") && !result.stderr.contains("OAuth 1.0a"),
                "\(command): \(result.status) \(result.stderr)")
        }
    }

    /// `token list` and `token show` name whose a credential is, where no ID
    /// token does: the provider's "who am I" endpoint (GitHub's `/user`),
    /// asked once at sign-in, and kept across a refresh.
    /// `--scope` is read as `authorize` reads it: `repo,read:org` is two
    /// scopes (it was stored as one, which git-credential then found none
    /// of what git needs in), `'repo user'` is refused.
    @Test func importedScopesAreSplitAndCheckedAsASignInsAre() async throws {
        let home = try CLIProcess.home("authkit-token-import-scopes")
        defer { try? FileManager.default.removeItem(at: home) }
        let environment = ["AUTHKIT_HOME": home.path, "TOKEN": "gho_scoped"]
        let imported = try await CLIProcess.run(
            ["token", "import", "--provider", "github", "--scope", "repo,read:org"], environment: environment,
            launcher: CLIKeyringTests.importing(""))
        #expect(imported.status == 0, "\(imported.stderr)")
        let stored = try await FileCredentialStore(environment: environment).credential(
            for: CredentialKey(providerID: "github"))
        #expect(stored?.scopes == ["repo", "read:org"])
        let spaced = try await CLIProcess.run(
            ["token", "import", "--provider", "github", "--label", "x", "--scope", "repo user"],
            environment: environment, launcher: CLIKeyringTests.importing(""))
        #expect(spaced.status == 64 && spaced.stderr.contains("--scope takes one scope"), "\(spaced.stderr)")
        // A negative lifetime is said as that (it was "Missing value": a flag,
        // to the parser); one past the library's bound (1e11 s) too: it was
        // stored as the year 506713, a date later parsers refuse.
        for value in ["-5", "0", "9223372036854775807", "100000000000"] {
            let odd = try await CLIProcess.run(
                ["token", "import", "--provider", "github", "--label", "y", "--expires-in", value],
                environment: environment, launcher: CLIKeyringTests.importing(""))
            #expect(
                odd.status == 64
                    && odd.stderr.contains("--expires-in takes a positive number of seconds below"),
                "\(odd.stderr)")
        }
        #expect(
            try await FileCredentialStore(environment: environment).credential(
                for: CredentialKey(providerID: "github", label: "y")) == nil)
    }

    /// A token file that starts with a byte-order mark (a Windows editor
    /// writes one) is read without it: it was refused as "not a token a
    /// Bearer header can carry", about a character no one can see. One mark
    /// only: a second is no file's.
    @Test func aLeadingByteOrderMarkIsDropped() async throws {
        let home = try CLIProcess.home("authkit-token-import-bom")
        defer { try? FileManager.default.removeItem(at: home) }
        let file = home.appendingPathComponent("token.txt")
        try Data([0xEF, 0xBB, 0xBF] + Array("ghp_from_notepad\r\n".utf8)).write(to: file)
        let environment = ["AUTHKIT_HOME": home.path]
        let imported = try await CLIProcess.run(
            ["token", "import", "--provider", "github"], environment: environment,
            launcher: ["/bin/sh", "-c", "exec \"$@\" < '\(file.path)'", "sh"])
        #expect(imported.status == 0, "\(imported.stderr)")
        let printed = try await CLIProcess.run(["token", "print", "--provider", "github"], environment: environment)
        #expect(printed.stdout == "ghp_from_notepad\n", "\(printed.stdout.debugDescription)")
        try Data([0xEF, 0xBB, 0xBF, 0xEF, 0xBB, 0xBF] + Array("ghp_twice\n".utf8)).write(to: file)
        let twice = try await CLIProcess.run(
            ["token", "import", "--provider", "github", "--label", "two"], environment: environment,
            launcher: ["/bin/sh", "-c", "exec \"$@\" < '\(file.path)'", "sh"])
        #expect(twice.status == 65, "\(twice.stderr)")
    }

    /// `token show --json` or an env file piped in: its first line is `{`
    /// or `GITHUB_TOKEN=ghp_…`, which a Bearer header could carry, and was
    /// stored as the token ("Imported"), over the one imported before.
    /// Refused, naming what it is, the stored token kept; a base64 or
    /// base32 token ending in `=`s is a token.
    @Test func aJSONDocumentOrAnAssignmentIsNotStoredAsTheToken() async throws {
        let home = try CLIProcess.home("authkit-token-import-shapes")
        defer { try? FileManager.default.removeItem(at: home) }
        let file = home.appendingPathComponent("input.txt")
        let environment = ["AUTHKIT_HOME": home.path]
        func importing(_ text: String) async throws -> CLIResult {
            try Data(text.utf8).write(to: file)
            return try await CLIProcess.run(
                ["token", "import", "--provider", "github"], environment: environment,
                launcher: ["/bin/sh", "-c", "exec \"$@\" < '\(file.path)'", "sh"])
        }
        let first = try await importing("QUJDREVGR0g=\n")
        #expect(first.status == 0, "\(first.stderr)")
        for (text, said) in [
            ("{\n  \"accessToken\" : \"ghp_x\"\n}\n", "JSON"), ("[\n  {\"access_token\": \"x\"}\n]\n", "JSON"),
            ("GITHUB_TOKEN=ghp_secretvalue\n", "GITHUB_TOKEN=…"), ("TOKEN=ghp_secretvalue\n", "TOKEN=…"),
        ] {
            let refused = try await importing(text)
            #expect(
                refused.status == 65 && refused.stderr.contains(said) && !refused.stderr.contains("ghp_"),
                "\(text): \(refused.status) \(refused.stderr)")
        }
        let printed = try await CLIProcess.run(["token", "print", "--provider", "github"], environment: environment)
        #expect(printed.stdout == "QUJDREVGR0g=\n", "\(printed.stdout.debugDescription)")
        // Padding after an upper-case name is a token's (base32), not an assignment.
        let padded = try await importing("PAT_JBSWY3DPEE======\n")
        #expect(padded.status == 0, "\(padded.stderr)")
    }

    @Test func aSignInNamesTheAccountInListAndShow() async throws {
        let home = try CLIProcess.home("authkit-account-named")
        defer { try? FileManager.default.removeItem(at: home) }
        let sandbox = try await Sandbox.start(
            emulating: try ProviderCatalog(includeBundled: true, directories: []).descriptor(id: "github"),
            options: SandboxOptions(approves: true))
        defer { Task { await sandbox.stop() } }
        let environment = ["AUTHKIT_HOME": home.path, "AUTHKIT_SANDBOX": sandbox.baseURL.absoluteString]
        let signedIn = try await CLIProcess.run(
            ["authorize", "--provider", "github", "--scripted-browser"], environment: environment)
        #expect(signedIn.status == 0 && signedIn.stdout.contains("Signed in to GitHub (sandbox) as alice"))
        let listed = try await CLIProcess.run(["token", "list"], environment: environment)
        #expect(listed.stdout.contains("github  alice (sandbox-user-alice)"), "\(listed.stdout)")
        let json = try await CLIProcess.run(["token", "list", "--json"], environment: environment)
        #expect(json.stdout.contains(#""user" : "alice (sandbox-user-alice)""#), "\(json.stdout)")
        let refreshed = try await CLIProcess.run(
            ["token", "refresh", "--provider", "github"], environment: environment)
        #expect(refreshed.status == 0, "\(refreshed.stderr)")
        let shown = try await CLIProcess.run(["token", "show", "--provider", "github"], environment: environment)
        #expect(shown.stdout.contains("account:   alice (sandbox-user-alice)"), "\(shown.stdout)")
    }
}
