import AuthKit
import AuthKitTestSupport
import Foundation
import Testing

@testable import authkit

/// `authkit token list` and `token show` as a newcomer reads them.
@Suite(.serialized) struct TokenCommandTests: CLIFixture {
    /// `token userinfo` for a provider whose descriptor names no UserInfo
    /// endpoint says that first: it asked for a client id (and a sign-in)
    /// that could never have helped.
    @Test func userInfoForAProviderWithoutItSaysSoFirst() async throws {
        let home = try self.home()
        let result = try await CLIProcess.run(
            ["token", "userinfo", "--provider", "github"], environment: ["AUTHKIT_HOME": home.path])
        #expect(
            result.status == 1 && result.stderr.contains("names no UserInfo endpoint (openid.userInfo)")
                && !result.stderr.contains("CLIENT_ID") && !result.stderr.contains("authorize"),
            "\(result.status) \(result.stderr)")
    }

    /// `token show --field` of an object or an array in the provider's
    /// answer prints it as compact JSON: it said "has no field 'X'. Known:
    /// …, X". A null one is said to be null.
    @Test func aFieldThatIsAnObjectIsPrintedAsJSON() async throws {
        let home = try self.home()
        defer { try? FileManager.default.removeItem(at: home) }
        let environment = ["AUTHKIT_HOME": home.path]
        try await FileCredentialStore(environment: environment).save(
            Credential(
                providerID: "slack", accessToken: "xoxp-1",
                rawFields: [
                    "authed_user": .object(["id": .string("U1"), "scope": .string("chat:write")]),
                    "list": .array([.integer(1), .string("a/b")]), "gone": .null, "team_id": .string("T1"),
                ]))
        func field(_ name: String) async throws -> CLIResult {
            try await CLIProcess.run(
                ["token", "show", "--provider", "slack", "--field", name], environment: environment)
        }
        let object = try await field("authed_user")
        #expect(object.status == 0 && object.stdout == #"{"id":"U1","scope":"chat:write"}"# + "\n", "\(object)")
        let array = try await field("list")
        #expect(array.status == 0 && array.stdout == #"[1,"a/b"]"# + "\n", "\(array)")
        #expect(try await field("team_id").stdout == "T1\n")
        let null = try await field("gone")
        #expect(null.status == 64 && null.stderr.contains("'gone' is null"), "\(null)")
        let missing = try await field("nope")
        #expect(missing.status == 64 && missing.stderr.contains("has no field 'nope'"), "\(missing)")
        // The fields it lists are this credential's: no OAuth 1.0a token
        // secret, refresh token or expiry where it has none.
        #expect(
            missing.stderr.contains("Known: access_token, token_type, scope, authed_user, gone, list, team_id."),
            "\(missing.stderr)")
    }

    /// `token delete` of an account with nothing stored (a mistyped label)
    /// creates nothing: it made `$AUTHKIT_HOME` and left a lock file named
    /// after the typo, `.refresh-github.wrok.lock`, taking the account's lock
    /// before finding it empty.
    @Test func deletingWhatIsNotStoredCreatesNothing() async throws {
        let absent = TemporaryDirectory.url("authkit-delete-typo-absent")
        let none = try await CLIProcess.run(
            ["token", "delete", "--provider", "github", "--label", "wrok"], environment: ["AUTHKIT_HOME": absent.path])
        #expect(none.status == 64 && none.stderr.contains("nothing was deleted"), "\(none.stderr)")
        #expect(!FileManager.default.fileExists(atPath: absent.path), "deleting created \(absent.path)")

        let home = try self.home()
        defer { try? FileManager.default.removeItem(at: home) }
        let environment = ["AUTHKIT_HOME": home.path]
        try await FileCredentialStore(environment: environment).save(
            Credential(providerID: "github", label: "work", accessToken: "t"))
        let typo = try await CLIProcess.run(
            ["token", "delete", "--provider", "github", "--label", "wrok"], environment: environment)
        #expect(typo.status == 64 && typo.stderr.contains("work"), "\(typo.stderr)")
        let left = try FileManager.default.contentsOfDirectory(atPath: home.path)
        #expect(!left.contains { $0.contains("wrok") }, "\(left)")
        let deleted = try await CLIProcess.run(
            ["token", "delete", "--provider", "github", "--label", "work"], environment: environment)
        #expect(deleted.status == 0 && deleted.stderr.contains("Deleted github (work)"), "\(deleted.stderr)")
    }

    @Test func tokenListAlignsPrintsEmptyJSONAndCreatesNothing() async throws {
        let home = TemporaryDirectory.url("authkit-newcomer-empty")
        let empty = try await CLIProcess.run(["token", "list", "--json"], environment: ["AUTHKIT_HOME": home.path])
        #expect(empty.status == 0 && empty.stdout == "[]\n", "\(empty.stdout)")
        #expect(!FileManager.default.fileExists(atPath: home.path), "listing created \(home.path)")

        let full = try self.home()
        let store =
            #"{"version":1,"credentials":[{"providerID":"qiita","kind":"oauth2","accessToken":"a-rather-long-token-value-1234","tokenType":"Bearer","scopes":["read_qiita"],"obtainedAt":"2026-01-01T00:00:00Z","rawFields":{}},{"providerID":"github","label":"a-long-label","kind":"oauth2","accessToken":"t","tokenType":"Bearer","scopes":["repo"],"obtainedAt":"2026-01-01T00:00:00Z","rawFields":{}}]}"#
        try Data(store.utf8).write(to: full.appendingPathComponent("credentials.json"))
        let list = try await CLIProcess.run(["token", "list"], environment: ["AUTHKIT_HOME": full.path])
        let lines = list.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 3)
        let tokenColumns = Set(
            lines.compactMap { line in
                line.range(of: "••••").map { line.distance(from: line.startIndex, to: $0.lowerBound) }
            })
        #expect(tokenColumns.count == 1, "columns do not line up:\n\(list.stdout)")

        // A pipe gets a long label and long scopes whole (they were cut at
        // 200 characters with '…', though README says whole).
        let label = String(repeating: "x", count: 300)
        let scopes = (1...20).map { "https://www.googleapis.com/auth/scope\($0)" }
        try await FileCredentialStore(file: full.appendingPathComponent("credentials.json"))
            .save(Credential(providerID: "google", label: label, accessToken: "t", scopes: scopes))
        let piped = try await CLIProcess.run(["token", "list"], environment: ["AUTHKIT_HOME": full.path])
        #expect(
            piped.stdout.contains("google (\(label))") && piped.stdout.contains(scopes.joined(separator: " ") + "\n")
                && !piped.stdout.contains("…"), "\(piped.stdout)")
    }

    /// A mistyped or forgotten --label, where the provider holds other
    /// accounts: "sign in first" would make a second account of the typo.
    /// The accounts stored are named instead, as they paste.
    @Test func aLabelThatMatchesNothingNamesTheAccountsStored() async throws {
        let home = try home()
        let store = FileCredentialStore(file: home.appendingPathComponent("credentials.json"))
        for label in [nil, "work", "it's"] {
            try await store.save(Credential(providerID: "github", label: label, accessToken: "t"))
        }
        try await store.save(Credential(providerID: "qiita", label: "other-provider", accessToken: "t"))
        let stored =
            "Stored for github: the default account, 'it'\\''s', work. Name one with --label (none for the default)."
        for (command, prefix) in [
            (["token", "header"], "No stored credential for github (wrok). "),
            (["token", "show"], "No stored credential for github (wrok). "),
            (["token", "delete"], "No stored credential for github (wrok); nothing was deleted. "),
            (["token", "revoke"], "No stored credential for github (wrok). "),
        ] {
            let result = try await CLIProcess.run(
                command + ["--provider", "github", "--label", "wrok"], environment: ["AUTHKIT_HOME": home.path])
            #expect(result.status == 64 && result.stderr.contains(prefix + stored), "\(command): \(result.stderr)")
            #expect(
                !result.stderr.contains("Sign in first") && !result.stderr.contains("other-provider"),
                "\(command): \(result.stderr)")
        }
        #expect(try await store.allCredentials().count == 4, "nothing was deleted")
    }

    @Test func tokenListShowsOneProviderWhenAsked() async throws {
        let home = try home()
        let store = FileCredentialStore(file: home.appendingPathComponent("credentials.json"))
        for (provider, label) in [("github", nil), ("github", "work"), ("qiita", nil)] {
            try await store.save(Credential(providerID: provider, label: label, accessToken: "t"))
        }
        let github = try await CLIProcess.run(
            ["token", "list", "--provider", "github"], environment: ["AUTHKIT_HOME": home.path])
        #expect(
            github.status == 0 && github.stdout.contains("github (work)") && !github.stdout.contains("qiita"),
            "\(github.stdout)")
        let json = try await CLIProcess.run(
            ["token", "list", "-p", "qiita", "--json"], environment: ["AUTHKIT_HOME": home.path])
        #expect(
            json.status == 0 && json.stdout.contains(#""providerID" : "qiita""#) && !json.stdout.contains("github"),
            "\(json.stdout)")
        let none = try await CLIProcess.run(
            ["token", "list", "--provider", "gitlab"], environment: ["AUTHKIT_HOME": home.path])
        #expect(
            none.status == 0
                && none.stderr.contains(
                    "No stored credentials for gitlab. Sign in with: authkit authorize --provider gitlab"),
            "\(none.stderr)")
        let typo = try await CLIProcess.run(
            ["token", "list", "--provider", "githb"], environment: ["AUTHKIT_HOME": home.path])
        #expect(typo.status == 64 && typo.stderr.contains("Did you mean 'github'"), "\(typo.stderr)")
    }

    /// `token=$(authkit token show --field access_token)` printed an expired
    /// token and nothing else: the script met 401s. It still prints it (the
    /// output is the script's), and standard error says what renews it.
    @Test func anExpiredTokenShownRawIsWarnedAbout() async throws {
        let home = try home()
        let store = FileCredentialStore(file: home.appendingPathComponent("credentials.json"))
        let past = Date(timeIntervalSinceNow: -3600)
        try await store.save(
            Credential(providerID: "github", accessToken: "old-token", refreshToken: "r", expiresAt: past))
        try await store.save(Credential(providerID: "qiita", accessToken: "q-token", expiresAt: past))
        let shown = try await CLIProcess.run(
            ["token", "show", "--provider", "github", "--field", "access_token"],
            environment: ["AUTHKIT_HOME": home.path])
        #expect(shown.status == 0 && shown.stdout == "old-token\n", "\(shown.stdout)")
        #expect(
            shown.stderr.contains("warning: this access token expired at")
                && shown.stderr.contains("'authkit token refresh --provider github' renews it"), "\(shown.stderr)")
        let json = try await CLIProcess.run(
            ["token", "show", "--provider", "qiita", "--json"], environment: ["AUTHKIT_HOME": home.path])
        #expect(
            json.status == 0 && json.stderr.contains("sign in again: authkit authorize --provider qiita"),
            "no refresh token: \(json.stderr)")
        let scope = try await CLIProcess.run(
            ["token", "show", "--provider", "github", "--field", "token_type"], environment: ["AUTHKIT_HOME": home.path]
        )
        #expect(scope.status == 0 && !scope.stderr.contains("expired"), "not the token: \(scope.stderr)")
    }
}
