import AuthKit
import AuthKitTestSupport
import Foundation
import Testing

/// `token switch` (as `gh auth switch`): which account a provider's commands
/// use without --label.
@Suite struct TokenSwitchTests {
    @Test func aSwitchChoosesTheAccountCommandsUseWithoutALabel() async throws {
        let home = try CLIProcess.home("authkit-token-switch")
        defer { try? FileManager.default.removeItem(at: home) }
        func run(_ arguments: [String], token: String? = nil) async throws -> CLIResult {
            var environment = ["AUTHKIT_HOME": home.path]
            environment["TOKEN"] = token
            return try await CLIProcess.run(
                arguments, environment: environment, launcher: token == nil ? [] : CLIKeyringTests.importing(""))
        }
        #expect(try await run(["token", "import", "--provider", "github"], token: "tok-default").status == 0)
        #expect(
            try await run(["token", "import", "--provider", "github", "--label", "work"], token: "tok-work").status == 0
        )
        #expect(try await run(["token", "print", "--provider", "github"]).stdout == "tok-default\n")

        let switched = try await run(["token", "switch", "--provider", "github", "--label", "work"])
        #expect(switched.status == 0 && switched.stdout.contains("now use 'work'"), "\(switched.stderr)")
        #expect(try await run(["token", "print", "--provider", "github"]).stdout == "tok-work\n")
        let listed = try await run(["token", "list"])
        #expect(listed.stdout.contains("github (work) *") && listed.stderr.contains("authkit token switch"))
        #expect(try await run(["token", "list", "--json"]).stdout.contains("\"usedWithoutLabel\" : true"))
        // --label still names an account, the one without a label included after a switch back.
        #expect(try await run(["token", "print", "--provider", "github", "--label", "work"]).stdout == "tok-work\n")

        // An import without --label goes to the chosen account, not over the one without a label.
        let again = try await run(["token", "import", "--provider", "github"], token: "tok-work-2")
        #expect(again.status == 0 && again.stdout.contains("github (work)"), "\(again.stdout)")
        #expect(try await run(["token", "print", "--provider", "github"]).stdout == "tok-work-2\n")
        // (The account without a label still holds tok-default: see the deletion below.)

        // An account that is not stored is not chosen; nothing changes.
        let missing = try await run(["token", "switch", "--provider", "github", "--label", "nope"])
        #expect(
            missing.status != 0 && missing.stderr.contains("nothing was switched")
                && missing.stderr.contains("work"), "\(missing.stderr)")
        #expect(try await run(["token", "print", "--provider", "github"]).stdout == "tok-work-2\n")

        // `token refresh` without --label takes the chosen account too; an
        // imported token with no refresh token (and no client here) is told
        // to sign in again, not to configure a client id it would not need.
        let refreshed = try await run(["token", "refresh", "--provider", "github"])
        #expect(
            refreshed.status != 0 && refreshed.stderr.contains("github (work)")
                && refreshed.stderr.contains("no refresh token") && !refreshed.stderr.contains("client id"),
            "\(refreshed.stderr)")

        // While the switch holds, the account without a label is named
        // --label '': advice that left --label out sent the user to the
        // chosen account (a typo's "Stored for …" hint; a sign-in again).
        let typo = try await run(["token", "delete", "--provider", "github", "--label", "wrok"])
        #expect(
            typo.status != 0 && typo.stderr.contains("--label ('' for the default")
                && !typo.stderr.contains("none for the default"), "\(typo.stderr)")
        #expect(
            try await run(["token", "print", "--provider", "github", "--label", ""]).stdout == "tok-default\n")
        let statusOfDefault = try await run(["token", "status", "--provider", "github", "--label", ""])
        #expect(statusOfDefault.stdout.hasPrefix("github:"), "\(statusOfDefault.stdout)")

        // Deleting the chosen account goes back to the one without a label.
        let deleted = try await run(["token", "delete", "--provider", "github"])
        #expect(deleted.status == 0 && deleted.stderr.contains("Deleted github (work)"), "\(deleted.stderr)")
        #expect(try await run(["token", "print", "--provider", "github"]).stdout == "tok-default\n")

        // A file that is not such an object is named, not ignored.
        try Data("[1]".utf8).write(to: home.appendingPathComponent("default-accounts.json"))
        let broken = try await run(["token", "print", "--provider", "github"])
        #expect(
            broken.status == 65 && broken.stderr.contains("default-accounts.json") && broken.stdout.isEmpty,
            "\(broken.stderr)")
        // A provider named twice: Foundation kept the first ("work"), an
        // editor or jq shows the last; which one is meant cannot be told.
        try Data(#"{"github": "work", "github": "personal"}"#.utf8).write(
            to: home.appendingPathComponent("default-accounts.json"))
        let twice = try await run(["token", "print", "--provider", "github"])
        #expect(
            twice.status == 65 && twice.stderr.contains("'github' more than once") && twice.stdout.isEmpty,
            "\(twice.stderr)")
        // One every user can write (or another user's): whoever wrote it
        // chose which account's token a request carried. Refused, as
        // config.json is; it was read and followed.
        let choices = home.appendingPathComponent("default-accounts.json")
        try Data(#"{"github": "work"}"#.utf8).write(to: choices)
        try FileManager.default.setAttributes([.posixPermissions: 0o666], ofItemAtPath: choices.path)
        let foreign = try await run(["token", "print", "--provider", "github"])
        #expect(
            foreign.status == 65 && foreign.stderr.contains("chmod go-w") && foreign.stdout.isEmpty,
            "\(foreign.stderr)")
    }

    /// `token refresh --label ''` names the account without a label, as
    /// `--label ''` does in every other command (and as `token show`'s
    /// expiry warning advises once `token switch` chose another); it was
    /// refused as an empty label. Only spaces are refused.
    @Test func refreshTakesTheEmptyLabelForTheAccountWithoutOne() async throws {
        let home = try CLIProcess.home("authkit-token-refresh-empty-label")
        defer { try? FileManager.default.removeItem(at: home) }
        let environment = ["AUTHKIT_HOME": home.path]
        for label in ["", "work"] {
            let imported = try await CLIProcess.run(
                ["token", "import", "--provider", "github", "--label", label],
                environment: environment.merging(["TOKEN": "tok-\(label)"]) { $1 },
                launcher: CLIKeyringTests.importing(""))
            #expect(imported.status == 0, "\(imported.stderr)")
        }
        let switched = try await CLIProcess.run(
            ["token", "switch", "--provider", "github", "--label", "work"], environment: environment)
        #expect(switched.status == 0, "\(switched.stderr)")
        // The account without a label is the one tried: its imported token
        // has no refresh token, which is what is said (not a usage error).
        let refreshed = try await CLIProcess.run(
            ["token", "refresh", "--provider", "github", "--label", ""], environment: environment)
        #expect(
            refreshed.status == 1 && refreshed.stderr.contains("github cannot be refreshed")
                && !refreshed.stderr.contains("(work)") && !refreshed.stderr.contains("--label takes"),
            "\(refreshed.status): \(refreshed.stderr)")
        let spaces = try await CLIProcess.run(
            ["token", "refresh", "--provider", "github", "--label", "  "], environment: environment)
        #expect(spaces.status == 64 && spaces.stderr.contains("got only spaces"), "\(spaces.stderr)")
    }

    /// Switches run at once, for several providers, all land: the file is
    /// read, changed and written under its lock.
    /// A switch that cannot be written (its lock cannot be made: a
    /// read-only or full file system, a directory in its place) is a
    /// failure to write, exit 74, as for the credential store; it was 65, a
    /// file to fix. The lock is named by its path, with what is there (it
    /// was "Credential store …: cannot be opened (Is a directory)." and
    /// advice to make room).
    @Test func aSwitchThatCannotBeWrittenIsAWriteFailure() async throws {
        let home = try CLIProcess.home("authkit-token-switch-unwritable")
        defer { try? FileManager.default.removeItem(at: home) }
        let environment = ["AUTHKIT_HOME": home.path, "TOKEN": "tok-work"]
        let imported = try await CLIProcess.run(
            ["token", "import", "--provider", "github", "--label", "work"], environment: environment,
            launcher: CLIKeyringTests.importing(""))
        #expect(imported.status == 0, "\(imported.stderr)")
        // A directory where its lock file goes: the lock cannot be opened.
        let lock = home.appendingPathComponent("default-accounts.json.lock")
        try FileManager.default.createDirectory(at: lock, withIntermediateDirectories: true)
        let switched = try await CLIProcess.run(
            ["token", "switch", "--provider", "github", "--label", "work"], environment: environment)
        #expect(
            switched.status == 74
                && switched.stderr.contains(
                    "\(lock.path): is a directory, where a lock file belongs (a lock file is only ever a file authkit made); move it aside. Nothing was changed."
                ) && !switched.stderr.contains("Make room") && !switched.stderr.contains("Credential store"),
            "\(switched.status): \(switched.stderr)")
    }

    /// Another `authkit` holding the choices' lock past the wait: a switch
    /// said "Make room" (exit 74), and a delete whose credential was gone
    /// already said "nothing was changed". Now: busy (65), and what did
    /// happen before what did not.
    @Test func aChoiceFileBusyPastTheWaitIsSaidAsBusy() async throws {
        let home = try CLIProcess.home("authkit-token-switch-busy")
        defer { try? FileManager.default.removeItem(at: home) }
        let environment = ["AUTHKIT_HOME": home.path]
        let store = FileCredentialStore(file: home.appendingPathComponent("credentials.json"))
        try await store.save(Credential(providerID: "github", label: "work", accessToken: "tok-github"))
        try await store.save(Credential(providerID: "gitlab", label: "work", accessToken: "tok-gitlab"))
        let chosen = try await CLIProcess.run(
            ["token", "switch", "--provider", "github", "--label", "work"], environment: environment)
        #expect(chosen.status == 0, "\(chosen.stderr)")
        let fd = open(
            home.appendingPathComponent("default-accounts.json.lock").path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        #expect(fd >= 0 && flock(fd, LOCK_EX) == 0)
        defer { close(fd) }
        async let switched = CLIProcess.run(
            ["token", "switch", "--provider", "gitlab", "--label", "work"], environment: environment)
        async let deleted = CLIProcess.run(
            ["token", "delete", "--provider", "github", "--label", "work"], environment: environment)
        let (switchResult, deleteResult) = try await (switched, deleted)
        #expect(
            switchResult.status == 65 && switchResult.stderr.contains("being changed by another authkit")
                && !switchResult.stderr.contains("Make room"), "\(switchResult.status): \(switchResult.stderr)")
        #expect(
            deleteResult.status == 65 && deleteResult.stderr.contains("(work) was deleted here, but the choice")
                && deleteResult.stderr.contains("authkit token switch --provider github"),
            "\(deleteResult.status): \(deleteResult.stderr)")
        #expect(try await store.credential(for: CredentialKey(providerID: "github", label: "work")) == nil)
    }

    /// A dangling `default-accounts.json` link read as no choice: commands
    /// without --label went to the account without one, silently.
    @Test func aDanglingChoicesLinkIsSaidNotReadAsNoChoice() async throws {
        let home = try CLIProcess.home("authkit-token-switch-dangling")
        defer { try? FileManager.default.removeItem(at: home) }
        let store = FileCredentialStore(file: home.appendingPathComponent("credentials.json"))
        try await store.save(Credential(providerID: "github", accessToken: "tok-plain"))
        let choices = home.appendingPathComponent("default-accounts.json")
        try FileManager.default.createSymbolicLink(
            atPath: choices.path, withDestinationPath: home.appendingPathComponent("dotfiles/choices.json").path)
        let printed = try await CLIProcess.run(
            ["token", "show", "--provider", "github"], environment: ["AUTHKIT_HOME": home.path])
        #expect(
            printed.status == 65
                && printed.stderr.contains("\(choices.path) is a symbolic link to a file that does not exist")
                && !printed.stdout.contains("tok-plain"), "\(printed.status): \(printed.stderr)")
    }

    /// A `default-accounts.json` that is a link (kept in a dotfiles
    /// checkout) is read through it, and a switch writes where it leads:
    /// the link was replaced by a file of its own, the checkout's copy
    /// left stale without a word.
    @Test func aSwitchWritesThroughAChoicesLink() async throws {
        let home = try CLIProcess.home("authkit-token-switch-link")
        defer { try? FileManager.default.removeItem(at: home) }
        let store = FileCredentialStore(file: home.appendingPathComponent("credentials.json"))
        try await store.save(Credential(providerID: "github", label: "work", accessToken: "tok-work"))
        let dotfiles = home.appendingPathComponent("dotfiles")
        try FileManager.default.createDirectory(at: dotfiles, withIntermediateDirectories: true)
        let kept = dotfiles.appendingPathComponent("choices.json")
        try Data("{}".utf8).write(to: kept)
        let choices = home.appendingPathComponent("default-accounts.json")
        try FileManager.default.createSymbolicLink(atPath: choices.path, withDestinationPath: kept.path)
        let switched = try await CLIProcess.run(
            ["token", "switch", "--provider", "github", "--label", "work"], environment: ["AUTHKIT_HOME": home.path])
        #expect(switched.status == 0, "\(switched.stderr)")
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: choices.path) == kept.path)
        #expect(try String(contentsOf: kept, encoding: .utf8).contains("\"github\" : \"work\""))
        let printed = try await CLIProcess.run(
            ["token", "print", "--provider", "github"], environment: ["AUTHKIT_HOME": home.path])
        #expect(printed.stdout == "tok-work\n", "\(printed.stderr)")
    }

    @Test func switchesAtOnceAllLand() async throws {
        let home = try CLIProcess.home("authkit-token-switch-race")
        defer { try? FileManager.default.removeItem(at: home) }
        let providers = ["github", "gitlab", "google", "microsoft"]
        for provider in providers {
            let imported = try await CLIProcess.run(
                ["token", "import", "--provider", provider, "--label", "work"],
                environment: ["AUTHKIT_HOME": home.path, "TOKEN": "tok-\(provider)"],
                launcher: CLIKeyringTests.importing(""))
            #expect(imported.status == 0, "\(imported.stderr)")
        }
        let results = try await withThrowingTaskGroup(of: CLIResult.self) { group in
            for _ in 0..<4 {
                for provider in providers {
                    group.addTask {
                        try await CLIProcess.run(
                            ["token", "switch", "--provider", provider, "--label", "work"],
                            environment: ["AUTHKIT_HOME": home.path])
                    }
                }
            }
            return try await group.reduce(into: [CLIResult]()) { $0.append($1) }
        }
        #expect(results.allSatisfy { $0.status == 0 }, "\(results.filter { $0.status != 0 }.map(\.stderr))")
        let chosen = try String(contentsOf: home.appendingPathComponent("default-accounts.json"), encoding: .utf8)
        for provider in providers { #expect(chosen.contains("\"\(provider)\" : \"work\""), "\(chosen)") }
    }

    /// The chosen account is compared byte for byte, as labels are: with
    /// `==`, a label spelled with the Kelvin sign (U+212A, canonically a
    /// `K`) and one with a `K` were one, so deleting the other reset the
    /// choice (and `token list` starred both).
    @Test func theChosenAccountIsItsLabelByteForByte() async throws {
        let home = try CLIProcess.home("authkit-token-switch-bytes")
        defer { try? FileManager.default.removeItem(at: home) }
        let store = FileCredentialStore(file: home.appendingPathComponent("credentials.json"))
        let kelvin = "\u{212A}elvin"
        try await store.save(Credential(providerID: "github", label: kelvin, accessToken: "tok-kelvin"))
        try await store.save(Credential(providerID: "github", label: "Kelvin", accessToken: "tok-ascii"))
        func run(_ arguments: [String]) async throws -> CLIResult {
            try await CLIProcess.run(arguments, environment: ["AUTHKIT_HOME": home.path])
        }
        #expect(try await run(["token", "switch", "--provider", "github", "--label", kelvin]).status == 0)
        let deleted = try await run(["token", "delete", "--provider", "github", "--label", "Kelvin"])
        #expect(deleted.status == 0 && !deleted.stderr.contains("without a label again"), "\(deleted.stderr)")
        #expect(try await run(["token", "print", "--provider", "github"]).stdout == "tok-kelvin\n")
        try await store.save(Credential(providerID: "github", label: "Kelvin", accessToken: "tok-ascii"))
        let listed = try await run(["token", "list", "--json"])
        #expect(listed.stdout.components(separatedBy: "usedWithoutLabel").count == 2, "\(listed.stdout)")
    }
}
