import AuthKit
import AuthKitTestSupport
import Foundation
import Testing

/// `AUTHKIT_STORE=keyring` and `"store": "keyring"`: the command line's
/// credentials in a real Secret Service (`.ci/run` starts gnome-keyring on a
/// private D-Bus session bus), and said loudly when none answers.
@Suite struct CLIKeyringTests {
    /// Imports a token (standard input), as `gh auth login --with-token`.
    static func importing(_ token: String) -> [String] {
        ["/bin/sh", "-c", "printf '%s\\n' \"$TOKEN\" | exec \"$@\"", "sh"]
    }

    @Test(.enabled("no Secret Service answers (.ci/run starts one)") { await TestKeyring.shouldRun() })
    func credentialsLiveInTheKeyringWhenChosen() async throws {
        let home = try CLIProcess.home("authkit-keyring")
        defer { try? FileManager.default.removeItem(at: home) }
        // A label of this run's own: the keyring is shared with the other tests of the run.
        let label = "kr-\(UUID().uuidString.prefix(8).lowercased())"
        let token = "gho_keyring_\(UUID().uuidString.prefix(8))"
        let environment = ["AUTHKIT_HOME": home.path, "AUTHKIT_STORE": "keyring"].merging(TestKeyring.busEnvironment) {
            $1
        }
        func run(_ arguments: [String], input: String? = nil, extra: [String: String] = [:]) async throws -> CLIResult {
            var environment = environment.merging(extra) { $1 }
            if let input { environment["TOKEN"] = input }
            return try await CLIProcess.run(
                arguments, environment: environment, launcher: input.map { Self.importing($0) } ?? [])
        }
        let imported = try await run(["token", "import", "--provider", "github", "--label", label], input: token)
        #expect(
            imported.status == 0 && imported.stdout.contains("Stored in the Secret Service keyring")
                && !imported.stderr.contains("warning"), "\(imported.stdout)\(imported.stderr)")
        let file = home.appendingPathComponent("credentials.json")
        #expect(!FileManager.default.fileExists(atPath: file.path), "a file was written beside the keyring")

        let printed = try await run(["token", "print", "--provider", "github", "--label", label])
        #expect(printed.status == 0 && printed.stdout == token + "\n", "\(printed.stderr)")
        let listed = try await run(["token", "list", "--json"])
        #expect(listed.status == 0 && listed.stdout.contains("\"\(label)\""), "\(listed.stderr)")
        #expect(!listed.stdout.contains(token))
        // Completion offers the keyring's labels (from the items' attributes,
        // no secret read), as the shells' scripts ask for them.
        // A completion gives the keyring 2 s and answers nothing after (a
        // shell must not hang): under the whole suite's load it ran out once
        // in a few dozen runs, so it is asked up to three times.
        let words = ["authkit", "token", "show", "--provider", "github", "--label", "kr-"]
        var offered = try await run(
            ["---completion", "token", "show", "--", "--label", String(words.count - 1), "3"] + words)
        // (Out of time, it answers an empty line: "\n", not nothing, which this loop took for an answer.)
        for _ in 0..<2 where offered.status == 0 && !offered.stdout.split(separator: "\n").contains("\(label)") {
            offered = try await run(
                ["---completion", "token", "show", "--", "--label", String(words.count - 1), "3"] + words)
        }
        #expect(offered.status == 0 && offered.stdout.split(separator: "\n").contains("\(label)"), "\(offered)")

        // config.json chooses the same.
        try Data(#"{"store": "keyring"}"#.utf8).write(to: home.appendingPathComponent("config.json"))
        let configured = try await run(
            ["token", "print", "--provider", "github", "--label", label], extra: ["AUTHKIT_STORE": ""])
        #expect(configured.status == 0 && configured.stdout == token + "\n", "\(configured.stderr)")

        let deleted = try await run(["token", "delete", "--provider", "github", "--label", label])
        #expect(deleted.status == 0, "\(deleted.stderr)")
        let gone = try await run(["token", "print", "--provider", "github", "--label", label])
        #expect(
            gone.status != 0 && gone.stdout.isEmpty && gone.stderr.contains("No stored credential"), "\(gone.stderr)")
    }

    /// A keyring that stops answering (a daemon stopped here with SIGSTOP,
    /// as one waiting on an unlock prompt nobody sees never answers) ends
    /// the call at `AUTHKIT_KEYRING_TIMEOUT`, saying so, instead of holding
    /// the command without end; a value that is no number of seconds is
    /// refused by name. The keyring is a private one of this test's (the
    /// shared one must keep answering the other tests).
    @Test(.enabled("no Secret Service answers (.ci/run starts one)") { await TestKeyring.shouldRun() })
    func aKeyringThatStopsAnsweringIsGivenUpOnInTime() async throws {
        let home = try CLIProcess.home("authkit-keyring-stopped")
        defer { try? FileManager.default.removeItem(at: home) }
        try await Self.withPrivateKeyring { bus in try await Self.checkStoppedKeyring(home: home, bus: bus) }
    }

    /// A keyring service with no default collection (gnome-keyring started
    /// outside a desktop login has only its in-memory "session" one) cannot
    /// take a credential: the error says that and what to do, not only
    /// libsecret's "Object does not exist at path …/login"; nothing is
    /// written to a file instead, and listing (which needs no default) works.
    @Test(.enabled("no Secret Service answers (.ci/run starts one)") { await TestKeyring.shouldRun() })
    func aKeyringWithNoDefaultCollectionIsSaidSo() async throws {
        let home = try CLIProcess.home("authkit-keyring-no-default")
        defer { try? FileManager.default.removeItem(at: home) }
        try await Self.withPrivateKeyring(["--no-login"]) { bus in
            let environment = [
                "AUTHKIT_HOME": home.path, "AUTHKIT_STORE": "keyring", "DBUS_SESSION_BUS_ADDRESS": bus,
                "TOKEN": "gho_nowhere",
            ]
            let imported = try await CLIProcess.run(
                ["token", "import", "--provider", "github"], environment: environment, launcher: Self.importing(""))
            #expect(
                imported.status == 74 && imported.stderr.contains("has no default keyring to store in")
                    && imported.stderr.contains("--unlock") && !imported.stderr.contains("gho_nowhere"),
                "\(imported.status): \(imported.stderr)")
            #expect(!FileManager.default.fileExists(atPath: home.appendingPathComponent("credentials.json").path))
            let listed = try await CLIProcess.run(["token", "list"], environment: environment)
            #expect(listed.status == 0 && listed.stderr.contains("No stored credentials"), "\(listed.stderr)")
        }
    }

    /// A locked keyring whose unlock prompt cannot be shown (an SSH session
    /// into a desktop, a timer) is said to be locked, with what to do, and
    /// each command fails: libsecret returns nothing and no error, which
    /// read as "nothing stored" (`token list` and `refresh --due` exited 0,
    /// `token delete` deleted nothing and said there was nothing).
    @Test(.enabled("no Secret Service answers (.ci/run starts one)") { await TestKeyring.shouldRun() })
    func aLockedKeyringIsSaidToBeLocked() async throws {
        let home = try CLIProcess.home("authkit-keyring-locked")
        defer { try? FileManager.default.removeItem(at: home) }
        try await Self.withPrivateKeyring { bus in
            let environment = [
                "AUTHKIT_HOME": home.path, "AUTHKIT_STORE": "keyring", "DBUS_SESSION_BUS_ADDRESS": bus,
                // Long: each locked call waits for its unlock prompt to fail, on a loaded machine.
                "AUTHKIT_KEYRING_TIMEOUT": "30",
            ]
            let imported = try await CLIProcess.run(
                ["token", "import", "--provider", "github"],
                environment: environment.merging(["TOKEN": "gho_locked_away"]) { $1 }, launcher: Self.importing(""))
            try #require(imported.status == 0, "\(imported.stderr)")
            let second = try await CLIProcess.run(
                ["token", "import", "--provider", "github", "--label", "second"],
                environment: environment.merging(["TOKEN": "gho_second"]) { $1 }, launcher: Self.importing(""))
            try #require(second.status == 0, "\(second.stderr)")
            try await SecretService(bus: bus).lock("login")
            // A sign-in is refused before the browser opens (the check
            // `authorize` makes, in a process on this keyring's bus): the
            // prompt, or the refusal, came at the save, after the consent.
            let helper = CLIProcess.binary.deletingLastPathComponent().appendingPathComponent("AuthKitStoreStress")
            let check = try await ChildProcess.run(
                helper.path, ["keyring-check"], environment: ["DBUS_SESSION_BUS_ADDRESS": bus, "HOME": home.path])
            #expect(
                check.exit.status == 1 && check.standardOutput.contains("cannot take the credential")
                    && check.standardOutput.contains("is locked and was not unlocked"),
                "\(check.standardOutput) \(check.standardError)")
            // Saving says it is locked too, not that there is no default
            // keyring; the keyring is checked under the account's lock before
            // anything else is done there (a refresh of an item readable
            // elsewhere spent its refresh token, then could not save).
            let another = try await CLIProcess.run(
                ["token", "import", "--provider", "github", "--label", "another"],
                environment: environment.merging(["TOKEN": "gho_another"]) { $1 }, launcher: Self.importing(""))
            #expect(
                another.status == 75 && !another.stderr.contains("no default keyring")
                    && another.stderr.contains("cannot take the credential") && another.stderr.contains("locked"),
                "\(another.stderr)")
            // A timer's refresh stops at the first account: each other one
            // would wait for (or show) the unlock prompt again. Or, once
            // gnome-keyring has read the locked keyring back from its file
            // (when is its own: aCopyInAKeyringReadBackFromItsFileIsStillSaidLocked),
            // the accounts cannot be named, and the list is said locked (75).
            let due = try await CLIProcess.run(["token", "refresh", "--due"], environment: environment)
            #expect(
                (due.status == 1 && due.stdout.contains("github: failed:")
                    && due.stdout.contains("github (second): not tried: the store could not be read"))
                    || (due.status == 75 && due.stderr.contains("could not list the credentials")
                        && due.stderr.contains("is locked and was not unlocked")),
                "\(due.status): \(due.stdout) \(due.stderr)")
            // Locked: 75, "unlock it and try again" (a delete, which saves
            // nothing, is a delete that did not happen: 74).
            for (arguments, statuses) in [
                (["token", "list"], [75]), (["token", "print", "--provider", "github"], [75]),
                (["token", "refresh", "--due"], [1, 75]), (["token", "delete", "--provider", "github"], [74]),
            ] {
                let result = try await CLIProcess.run(arguments, environment: environment)
                #expect(
                    statuses.contains(Int(result.status))
                        && (result.stderr + result.stdout).contains("is locked and was not unlocked")
                        && !result.stdout.contains("gho_locked_away"),
                    "\(arguments): \(result.status) \(result.stderr)")
            }
        }
    }

    /// A second copy of a credential in a locked collection (stored when
    /// another keyring was the default) is not deleted by libsecret's clear,
    /// which deletes unlocked items only: `token delete` said "Deleted" and
    /// exited 0, and the copy signed the user back in once unlocked. Now the
    /// delete fails (74) and says a locked copy remains.
    @Test(.enabled("no Secret Service answers (.ci/run starts one)") { await TestKeyring.shouldRun() })
    func aCopyInALockedKeyringIsNotSaidDeleted() async throws {
        let home = try CLIProcess.home("authkit-keyring-locked-copy")
        defer { try? FileManager.default.removeItem(at: home) }
        try await Self.withPrivateKeyring { bus in
            let service = SecretService(bus: bus)
            // One copy in `login` (the default), locked; then the default made
            // the in-memory `session` collection and the same account stored
            // again (a save deletes the copies it can: not a locked one).
            let environment = try await Self.importedThenLocked("gho_in_login", home: home, bus: bus)
            // Until the keyring's search sees the copy as locked: locked
            // within moments of the save (as no user does), gnome-keyring
            // could answer searches from the keyring's file before the save
            // reached it, and nothing of the copy was found (under load, in
            // CI), the premise of this test missing.
            let since = ContinuousClock.now
            while try await !service.lockedItems(provider: "github").contains("collection/login/") {
                try #require(
                    ContinuousClock.now - since < .seconds(20), "the keyring's search never saw the locked copy")
                try await Task.sleep(for: .milliseconds(100))
            }
            try await service.makeDefault("session")
            let helper = CLIProcess.binary.deletingLastPathComponent().appendingPathComponent("AuthKitStoreStress")
            let written = try await ChildProcess.run(
                helper.path, ["keyring-item", "github", "", "gho_in_session"],
                environment: ["DBUS_SESSION_BUS_ADDRESS": bus, "HOME": home.path])
            try #require(written.exit.status == 0, "\(written.standardError)")
            let deleted = try await CLIProcess.run(
                ["token", "delete", "--provider", "github"], environment: environment)
            // Never "Deleted" while a copy remains. (A keyring that unlocks
            // `login` on its own when the delete's lookup finds that copy
            // first, as gnome-keyring did once under CI's load, lets both be
            // deleted: then "Deleted" is true.)
            let remaining = try await service.items(in: "login")
            if deleted.status == 0 {
                let locked = (try? await service.lockedItems(provider: "github")) ?? "?"
                #expect(
                    remaining == 0, "said deleted with a copy left (locked items now: \(locked)): \(deleted.stderr)")
            } else {
                // The keyring's answer, or, when its search for what is left
                // failed, that it could not say: never "Deleted".
                #expect(
                    remaining == 1 && deleted.status == 74
                        && (deleted.stderr.contains("another is in a keyring that is locked")
                            || deleted.stderr.contains("did not answer whether a copy is left"))
                        && !deleted.stderr.contains("Deleted"),
                    "\(deleted.status): \(deleted.stdout) \(deleted.stderr)")
            }
        }
    }

    /// gnome-keyring that reads a locked keyring back from its file (after a
    /// restart, or when the file changed on disk, as it did on its own under
    /// CI's load) knows the keyring's items by hashed attributes only, its
    /// `xdg:schema` then "org.freedesktop.Secret.Generic": a search by
    /// AuthKit's schema name no longer finds them. A read said "no
    /// credential", `token list` "no stored credentials" (exit 0), and a
    /// delete that left such a copy "Deleted". All three say it is locked.
    @Test(.enabled("no Secret Service answers (.ci/run starts one)") { await TestKeyring.shouldRun() })
    func aCopyInAKeyringReadBackFromItsFileIsStillSaidLocked() async throws {
        let home = try CLIProcess.home("authkit-keyring-read-back")
        defer { try? FileManager.default.removeItem(at: home) }
        try await Self.withPrivateKeyring { bus in
            let service = SecretService(bus: bus)
            let environment = try await Self.importedThenLocked("gho_read_back", home: home, bus: bus)
            // The keyring's file changed on disk: gnome-keyring reads it
            // again at its next search, and the keyring is locked. (It looks
            // at the files when their directory's modification time moves.)
            let keyrings = Self.directory(ofBus: bus).appendingPathComponent("data/keyrings")
            for changed in [keyrings.appendingPathComponent("login.keyring"), keyrings] {
                try FileManager.default.setAttributes(
                    [.modificationDate: Date().addingTimeInterval(5)], ofItemAtPath: changed.path)
            }
            let since = ContinuousClock.now
            var attributes = ""
            while !attributes.contains("gkr:compat:hashed:provider") {
                try #require(
                    ContinuousClock.now - since < .seconds(20),
                    "the keyring never read the locked file back: \(attributes)")
                let item = try await service.lockedItems(provider: "github").components(separatedBy: "\"").dropFirst()
                    .first
                if let item { attributes = try await service.attributes(of: item) }
                if !attributes.contains("gkr:compat:hashed:provider") {
                    try await Task.sleep(for: .milliseconds(100))
                }
            }
            for (arguments, status) in [
                (["token", "print", "--provider", "github"], 75), (["token", "list"], 75),
                (["token", "delete", "--provider", "github"], 74),
            ] {
                let result = try await CLIProcess.run(arguments, environment: environment)
                #expect(
                    result.status == Int32(status) && result.stderr.contains("is locked and was not unlocked")
                        && !result.stderr.contains("Deleted") && !result.stdout.contains("gho_read_back"),
                    "\(arguments): \(result.status) \(result.stdout) \(result.stderr)")
            }
            #expect(try await service.items(in: "login") == 1)
        }
    }

    /// After the user makes another keyring the default, a save goes there
    /// and the copy in the keyring it was stored in before is deleted: a
    /// read answered with whichever copy the service listed first, and could
    /// hand back the older one, its spent refresh token with it.
    @Test(.enabled("no Secret Service answers (.ci/run starts one)") { await TestKeyring.shouldRun() })
    func aSaveAfterTheDefaultKeyringChangedLeavesNoOlderCopy() async throws {
        let home = try CLIProcess.home("authkit-keyring-default")
        defer { try? FileManager.default.removeItem(at: home) }
        try await Self.withPrivateKeyring(["--second-keyring"]) { bus in
            let environment = [
                "AUTHKIT_HOME": home.path, "AUTHKIT_STORE": "keyring", "DBUS_SESSION_BUS_ADDRESS": bus,
            ]
            let service = SecretService(bus: bus)
            func save(_ token: String) async throws {
                let imported = try await CLIProcess.run(
                    ["token", "import", "--provider", "github"],
                    environment: environment.merging(["TOKEN": token]) { $1 }, launcher: Self.importing(""))
                try #require(imported.status == 0, "\(imported.stderr)")
            }
            func printed() async throws -> String {
                try await CLIProcess.run(["token", "print", "--provider", "github"], environment: environment).stdout
            }
            try await save("gho_first")
            #expect(try await service.items(in: "login") == 1)
            try await service.makeDefault("other")
            try await save("gho_second")
            #expect(try await service.items(in: "other") == 1)
            #expect(
                try await service.items(in: "login") == 0, "the older copy stayed in the keyring that was the default")
            #expect(try await printed() == "gho_second\n")
            try await service.makeDefault("login")
            #expect(try await printed() == "gho_second\n")
        }
    }

    /// One keyring item that cannot be read (edited by hand, written by a
    /// later version) is one failure of `token refresh --due`, named; the
    /// other accounts are still gone through (it stopped the whole run, and
    /// a timer renewed nothing).
    @Test(.enabled("no Secret Service answers (.ci/run starts one)") { await TestKeyring.shouldRun() })
    func oneUnreadableItemDoesNotStopTheOthersRefresh() async throws {
        let home = try CLIProcess.home("authkit-keyring-unreadable")
        defer { try? FileManager.default.removeItem(at: home) }
        try await Self.withPrivateKeyring { bus in
            let environment = [
                "AUTHKIT_HOME": home.path, "AUTHKIT_STORE": "keyring", "DBUS_SESSION_BUS_ADDRESS": bus,
            ]
            let imported = try await CLIProcess.run(
                ["token", "import", "--provider", "github", "--label", "good"],
                environment: environment.merging(["TOKEN": "gho_good"]) { $1 }, launcher: Self.importing(""))
            try #require(imported.status == 0, "\(imported.stderr)")
            let helper = CLIProcess.binary.deletingLastPathComponent().appendingPathComponent("AuthKitStoreStress")
            let written = try await ChildProcess.run(
                helper.path, ["keyring-item", "github", "bad", "not a credential"],
                environment: ["DBUS_SESSION_BUS_ADDRESS": bus, "HOME": home.path])
            try #require(written.exit.status == 0, "\(written.standardError)")
            let due = try await CLIProcess.run(["token", "refresh", "--due"], environment: environment)
            #expect(due.status == 1, "\(due.status) \(due.stderr)")
            #expect(due.stdout.contains("github (bad): failed:"), "\(due.stdout)")
            // The command that removes it names the schema: without it, other apps' items go too.
            #expect(
                due.stdout.contains(
                    "secret-tool clear xdg:schema 'dev.authkit.Credential' provider 'github' label 'bad'"),
                "\(due.stdout)")
            #expect(due.stdout.contains("github (good): not due"), "\(due.stdout)")
            #expect(due.stderr.contains("1 of 2 credentials could not be refreshed"), "\(due.stderr)")
            // The list shows the readable one and names the other (exit 65); status checks the one it can.
            let listed = try await CLIProcess.run(["token", "list"], environment: environment)
            #expect(
                listed.status == 65 && listed.stdout.contains("github (good)")
                    && listed.stderr.contains("github (bad): not listed:"), "\(listed)")
            let status = try await CLIProcess.run(["token", "status"], environment: environment)
            #expect(
                status.status == 1 && status.stdout.contains("github (bad): not checked:")
                    && status.stdout.contains("github (good): "), "\(status)")
            // And `token delete` removes it, as its error says to (a read
            // before the delete stopped at the item it was to remove).
            let deleted = try await CLIProcess.run(
                ["token", "delete", "--provider", "github", "--label", "bad"], environment: environment)
            #expect(deleted.status == 0 && deleted.stderr.contains("Deleted github (bad)"), "\(deleted)")
            let after = try await CLIProcess.run(["token", "list"], environment: environment)
            #expect(after.status == 0 && !after.stderr.contains("(bad)"), "\(after)")
        }
    }

    /// The Secret Service on `bus`, asked directly (dbus-send), as Seahorse
    /// or another app would: what a test sets up or checks beside AuthKit.
    struct SecretService {
        let bus: String

        /// `method` (interface and name) of `object`, with dbus-send's typed arguments; its reply.
        @discardableResult
        func call(_ method: String, on object: String = "/org/freedesktop/secrets", _ arguments: [String] = [])
            async throws -> String
        {
            let sent = try await ChildProcess.run(
                "/usr/bin/dbus-send",
                ["--session", "--print-reply", "--dest=org.freedesktop.secrets", object, method] + arguments,
                environment: ["DBUS_SESSION_BUS_ADDRESS": bus])
            try #require(sent.exit.status == 0, "\(method): \(sent.standardError)")
            return sent.standardOutput
        }

        func makeDefault(_ keyring: String) async throws {
            try await call(
                "org.freedesktop.Secret.Service.SetAlias",
                ["string:default", "objpath:/org/freedesktop/secrets/collection/\(keyring)"])
        }

        func lock(_ keyring: String) async throws {
            try await call(
                "org.freedesktop.Secret.Service.Lock", ["array:objpath:/org/freedesktop/secrets/collection/\(keyring)"])
        }

        /// How many items `keyring` holds, locked or not.
        func items(in keyring: String) async throws -> Int {
            try await call(
                "org.freedesktop.DBus.Properties.Get", on: "/org/freedesktop/secrets/collection/\(keyring)",
                ["string:org.freedesktop.Secret.Collection", "string:Items"]
            ).components(separatedBy: "object path").count - 1
        }

        /// The attributes of the item at `path`, as dbus-send prints them.
        func attributes(of path: String) async throws -> String {
            try await call(
                "org.freedesktop.DBus.Properties.Get", on: path,
                ["string:org.freedesktop.Secret.Item", "string:Attributes"])
        }

        /// The paths of the locked items a search for `provider` finds (the reply's second list).
        func lockedItems(provider: String) async throws -> String {
            let lists = try await call(
                "org.freedesktop.Secret.Service.SearchItems", ["dict:string:string:provider,\(provider)"]
            ).components(separatedBy: "array [")
            return lists.count >= 3 ? lists[2] : ""
        }
    }

    /// Runs `body` with the bus address of a keyring of its own
    /// (scripts/throwaway-keyring `start` with `arguments`), stopped when
    /// it ends, whatever happened in it: the shared keyring must keep
    /// answering the other tests.
    static func withPrivateKeyring(_ arguments: [String] = [], _ body: (String) async throws -> Void) async throws {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("scripts/throwaway-keyring").path
        let started = try await ChildProcess.run("/bin/bash", [script, "start"] + arguments)
        try #require(started.exit.status == 0, "\(started.standardError)")
        func exported(_ name: String) -> String? {
            started.standardOutput.split(separator: "\n").first { $0.hasPrefix("export \(name)=") }.map {
                String($0.dropFirst("export \(name)=".count)).trimmingCharacters(in: CharacterSet(charactersIn: "'"))
            }
        }
        let directory = try #require(exported("AUTHKIT_TEST_KEYRING"))
        let outcome: Result<Void, any Error>
        do {
            outcome = .success(try await body(try #require(exported("DBUS_SESSION_BUS_ADDRESS"))))
        } catch {
            outcome = .failure(error)
        }
        _ = try? await ChildProcess.run("/bin/bash", [script, "stop", directory])
        try outcome.get()
    }

    /// `token` imported for github into the keyring on `bus` (its `login`,
    /// the default), and `login` locked: the environment that reaches it.
    static func importedThenLocked(_ token: String, home: URL, bus: String) async throws -> [String: String] {
        let environment = [
            "AUTHKIT_HOME": home.path, "AUTHKIT_STORE": "keyring", "DBUS_SESSION_BUS_ADDRESS": bus,
            "AUTHKIT_KEYRING_TIMEOUT": "30",
        ]
        let imported = try await CLIProcess.run(
            ["token", "import", "--provider", "github"], environment: environment.merging(["TOKEN": token]) { $1 },
            launcher: importing(""))
        try #require(imported.status == 0, "\(imported.stderr)")
        try await SecretService(bus: bus).lock("login")
        return environment
    }

    /// The directory of a keyring `withPrivateKeyring` started, from its bus
    /// address (`unix:path=DIRECTORY/bus,guid=…`).
    static func directory(ofBus bus: String) -> URL {
        let path = bus.dropFirst("unix:path=".count).prefix { $0 != "," }
        return URL(fileURLWithPath: String(path)).deletingLastPathComponent()
    }

    static func checkStoppedKeyring(home: URL, bus: String) async throws {
        let environment = ["AUTHKIT_HOME": home.path, "AUTHKIT_STORE": "keyring", "DBUS_SESSION_BUS_ADDRESS": bus]
        var importing = environment
        importing["TOKEN"] = "gho_stopped"
        let imported = try await CLIProcess.run(
            ["token", "import", "--provider", "github"], environment: importing, launcher: Self.importing(""))
        #expect(imported.status == 0 && imported.stdout.contains("Secret Service keyring"), "\(imported.stderr)")

        // The daemon that owns org.freedesktop.secrets on that bus, stopped.
        let pid = try #require(try await TestKeyring.daemonPID(bus: bus))
        try #require(kill(pid, SIGSTOP) == 0)
        defer { kill(pid, SIGCONT) }
        var waiting = environment
        waiting["AUTHKIT_KEYRING_TIMEOUT"] = "2"
        let stuck = try await CLIProcess.run(
            ["token", "print", "--provider", "github"], environment: waiting, timeout: 20)
        // GDBus's own limit on a call is 25 s: this message is the watch's.
        #expect(
            stuck.status != 0 && stuck.stderr.contains("the Secret Service did not answer within 2 s")
                && !stuck.stdout.contains("gho_stopped"), "\(stuck.status): \(stuck.stderr)")
        kill(pid, SIGCONT)
        let answered = try await CLIProcess.run(["token", "print", "--provider", "github"], environment: environment)
        #expect(answered.status == 0 && answered.stdout == "gho_stopped\n", "\(answered.stderr)")

        waiting["AUTHKIT_KEYRING_TIMEOUT"] = "soon"
        let refused = try await CLIProcess.run(["token", "print", "--provider", "github"], environment: waiting)
        #expect(
            refused.status == 64 && refused.stderr.contains("AUTHKIT_KEYRING_TIMEOUT is 'soon'"), "\(refused.stderr)")
    }

    /// Where a missing D-Bus session means no keyring (a Mac's Keychain always answers).
    static let onLinux: Bool = {
        #if os(Linux)
            true
        #else
            false
        #endif
    }()

    /// A time the stores keep exactly (they write whole seconds).
    static let someSecond = Date(timeIntervalSince1970: 1_800_000_000)

    /// A file written by hand or another tool: an account listed twice
    /// (merged from two machines, as the store warns) is not moved (moving
    /// the first entry removed both, the second's refresh token lost); a
    /// date with fractional seconds is moved (read back from the keyring
    /// without them, it was taken for another credential, and never moved).
    @Test(.enabled("no Secret Service answers (.ci/run starts one)") { await TestKeyring.shouldRun() })
    func tokenMoveKeepsAnAccountListedTwiceAndTakesFractionalSeconds() async throws {
        let home = try CLIProcess.home("authkit-keyring-move-hand")
        defer { try? FileManager.default.removeItem(at: home) }
        let twice = "mv-\(UUID().uuidString.prefix(8).lowercased())"
        let fraction = "mv-\(UUID().uuidString.prefix(8).lowercased())"
        let environment = ["AUTHKIT_HOME": home.path].merging(TestKeyring.busEnvironment) { $1 }
        func entry(_ label: String, _ token: String, obtained: String, refresh: String? = nil) -> String {
            #"{"providerID":"github","label":"\#(label)","kind":"oauth2","accessToken":"\#(token)","tokenType":"Bearer",\#(refresh.map { #""refreshToken":"\#($0)","# } ?? "")"scopes":[],"obtainedAt":"\#(obtained)","rawFields":{}}"#
        }
        let text =
            #"{"version":1,"credentials":["#
            + [
                entry(twice, "gho_first", obtained: "2026-01-01T00:00:00Z"),
                entry(twice, "gho_second", obtained: "2026-01-02T00:00:00Z", refresh: "ghr_second"),
                entry(fraction, "gho_fraction", obtained: "2026-12-03T07:22:58.25Z"),
            ].joined(separator: ",") + "]}"
        let path = home.appendingPathComponent("credentials.json")
        try Data(text.utf8).write(to: path)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path.path)
        let keyring = SecretServiceCredentialStore(environment: environment)

        let moved = try await CLIProcess.run(["token", "move", "--to", "keyring"], environment: environment)
        #expect(moved.status == 1, "\(moved)")
        #expect(
            moved.stderr.contains("github (\(twice)) not moved")
                && moved.stderr.contains("holds 2 credentials for this account")
                && moved.stderr.contains("1 of 2 credentials not moved"), "\(moved.stderr)")
        #expect(moved.stdout.contains("Moved github (\(fraction)) to the Secret Service keyring."), "\(moved)")
        let left = try String(contentsOf: path, encoding: .utf8)
        #expect(left.contains("gho_first") && left.contains("ghr_second"), "an entry of the doubled account went")
        #expect(!left.contains("gho_fraction"))
        #expect(try await keyring.credential(for: CredentialKey(providerID: "github", label: twice)) == nil)
        let there = try await keyring.credential(for: CredentialKey(providerID: "github", label: fraction))
        #expect(there?.accessToken == "gho_fraction")
        _ = try await keyring.remove(CredentialKey(providerID: "github", label: fraction))
    }

    /// An account with an item in each of two unlocked keyrings (one saved
    /// while the other keyring was locked and another the default, then
    /// unlocked; here written there directly) is not moved out of the keyring: the move read one copy
    /// and the removal took both, the other's refresh token perhaps the
    /// live one. The keyring's account list names each account once, so the
    /// move counted one copy.
    @Test(.enabled("no Secret Service answers (.ci/run starts one)") { await TestKeyring.shouldRun() })
    func tokenMoveKeepsAnAccountWithACopyInEachOfTwoKeyrings() async throws {
        let home = try CLIProcess.home("authkit-keyring-move-two")
        defer { try? FileManager.default.removeItem(at: home) }
        try await Self.withPrivateKeyring(["--second-keyring"]) { bus in
            let environment = [
                "AUTHKIT_HOME": home.path, "AUTHKIT_STORE": "keyring", "DBUS_SESSION_BUS_ADDRESS": bus,
            ]
            let service = SecretService(bus: bus)
            let imported = try await CLIProcess.run(
                ["token", "import", "--provider", "github"],
                environment: environment.merging(["TOKEN": "gho_in_login"]) { $1 }, launcher: Self.importing(""))
            try #require(imported.status == 0, "\(imported.stderr)")
            let helper = CLIProcess.binary.deletingLastPathComponent().appendingPathComponent("AuthKitStoreStress")
            let entry =
                #"{"providerID":"github","kind":"oauth2","accessToken":"gho_in_other","tokenType":"Bearer","#
                + #""scopes":[],"obtainedAt":"2026-12-04T00:00:00Z","rawFields":{}}"#
            let written = try await ChildProcess.run(
                helper.path, ["keyring-item", "github", "", entry, "other"],
                environment: ["DBUS_SESSION_BUS_ADDRESS": bus, "HOME": home.path])
            try #require(written.exit.status == 0, "\(written.standardError)")
            let (login, other) = (try await service.items(in: "login"), try await service.items(in: "other"))
            try #require(login == 1 && other == 1, "\(login) and \(other) items")

            let moved = try await CLIProcess.run(["token", "move", "--to", "file"], environment: environment)
            #expect(
                moved.status == 1 && moved.stderr.contains("holds 2 credentials for this account")
                    && moved.stderr.contains("keyring manager"), "\(moved)")
            #expect(try await service.items(in: "login") == 1)
            #expect(try await service.items(in: "other") == 1)
            #expect(!FileManager.default.fileExists(atPath: home.appendingPathComponent("credentials.json").path))
        }
    }

    /// `token move`: whole credentials (refresh token, identity and all)
    /// from credentials.json to the keyring and back, only the account
    /// named; a destination holding another credential for the account
    /// keeps both and says how to choose; one holding the same one (a move
    /// that stopped before removing its source) lets the source's go.
    @Test(.enabled("no Secret Service answers (.ci/run starts one)") { await TestKeyring.shouldRun() })
    func tokenMoveCarriesWholeCredentialsBetweenTheFileAndTheKeyring() async throws {
        let home = try CLIProcess.home("authkit-keyring-move")
        defer { try? FileManager.default.removeItem(at: home) }
        // Labels of this run's own: the keyring is shared with the other tests of the run.
        let label = "mv-\(UUID().uuidString.prefix(8).lowercased())"
        let other = "mv-\(UUID().uuidString.prefix(8).lowercased())"
        let environment = ["AUTHKIT_HOME": home.path].merging(TestKeyring.busEnvironment) { $1 }
        let file = FileCredentialStore(environment: environment)
        let keyring = SecretServiceCredentialStore(environment: environment)
        let key = CredentialKey(providerID: "github", label: label)
        let otherKey = CredentialKey(providerID: "github", label: other)
        let whole = Credential(
            providerID: "github", label: label, accessToken: "gho_move_access", refreshToken: "ghr_move_refresh",
            expiresAt: Date(timeIntervalSince1970: 1_900_000_000), scopes: ["repo"],
            obtainedAt: Date(timeIntervalSince1970: 1_800_000_000), rawFields: ["id_token": .string("e.y.j")],
            endpointOrigins: ["https://github.com"])
        let stays = Credential(providerID: "qiita", accessToken: "qiita_stays", obtainedAt: Self.someSecond)
        try await file.save(whole)
        try await file.save(stays)

        // With the keyring chosen, the list says what the file still holds.
        let listed = try await CLIProcess.run(
            ["token", "list", "--json"], environment: environment.merging(["AUTHKIT_STORE": "keyring"]) { $1 })
        #expect(
            listed.status == 0
                && listed.stderr.contains(
                    "\(file.fileURL.path) holds 2 credentials not in the Secret Service keyring (github (\(label)), qiita)"
                )
                && listed.stderr.contains("authkit token move --to keyring carries them over"), "\(listed.stderr)")
        let there = try await CLIProcess.run(
            ["token", "move", "--to", "keyring", "--provider", "github", "--label", label], environment: environment)
        #expect(there.status == 0, "\(there.stderr)")
        #expect(there.stdout.contains("Moved github (\(label)) to the Secret Service keyring."), "\(there.stdout)")
        // Nothing chose the keyring yet: the other commands would not find it there.
        #expect(
            there.stderr.contains("commands still use credentials.json")
                && there.stderr.contains("AUTHKIT_STORE=keyring"))
        #expect(try await keyring.credential(for: key) == whole)
        #expect(try await file.credential(for: key) == nil)
        #expect(try await file.credential(for: stays.key) == stays, "an account not named was moved")
        #expect(!(there.stdout + there.stderr).contains("gho_move") && !(there.stdout + there.stderr).contains("ghr_"))
        let listedAfter = try await CLIProcess.run(
            ["token", "list", "--provider", "github"],
            environment: environment.merging(["AUTHKIT_STORE": "keyring"]) { $1 })
        #expect(listedAfter.status == 0 && !listedAfter.stderr.contains("token move"), "\(listedAfter.stderr)")
        let printed = try await CLIProcess.run(
            ["token", "show", "--provider", "github", "--label", label, "--field", "refresh_token"],
            environment: environment.merging(["AUTHKIT_STORE": "keyring"]) { $1 })
        #expect(printed.status == 0 && printed.stdout == "ghr_move_refresh\n", "\(printed.stderr)")

        let back = try await CLIProcess.run(
            ["token", "move", "--to", "file", "--provider", "github", "--label", label], environment: environment)
        #expect(back.status == 0 && back.stdout.contains("Moved github (\(label)) to \(file.fileURL.path)."), "\(back)")
        #expect(!back.stderr.contains("commands still use"), "the file is what commands use: \(back.stderr)")
        #expect(try await file.credential(for: key) == whole)
        #expect(try await keyring.credential(for: key) == nil)

        // Another credential for the account in the keyring: both kept, the way out said.
        let elsewhere = Credential(
            providerID: "github", label: label, accessToken: "gho_other_access",
            obtainedAt: Date(timeIntervalSince1970: 1_700_000_000))
        try await keyring.save(elsewhere)
        let clash = try await CLIProcess.run(
            ["token", "move", "--to", "keyring", "--provider", "github"], environment: environment)
        #expect(clash.status == 1, "\(clash)")
        #expect(
            clash.stderr.contains("already holds another credential for this account (obtained 2023-11-14T22:13:20Z)")
                && clash.stderr.contains(
                    "AUTHKIT_STORE=keyring authkit token delete --provider github --label \(label)")
                && clash.stderr.contains("AUTHKIT_STORE=file authkit token delete --provider github --label \(label)")
                && clash.stderr.contains("1 of 1 credential not moved"), "\(clash.stderr)")
        #expect(!clash.stderr.contains("gho_"))
        #expect(try await file.credential(for: key) == whole)
        #expect(try await keyring.credential(for: key) == elsewhere)

        // The same credential in both: the source's copy goes.
        let copy = Credential(
            providerID: "github", label: other, accessToken: "gho_copy", refreshToken: "ghr_copy",
            obtainedAt: Self.someSecond)
        try await file.save(copy)
        try await keyring.save(copy)
        let finish = try await CLIProcess.run(
            ["token", "move", "--to", "keyring", "--provider", "github", "--label", other], environment: environment)
        #expect(finish.status == 0, "\(finish.stderr)")
        #expect(try await file.credential(for: copy.key) == nil)
        #expect(try await keyring.credential(for: copy.key) == copy)
        // Moved already: said, not an error.
        let again = try await CLIProcess.run(
            ["token", "move", "--to", "keyring", "--provider", "github", "--label", other], environment: environment)
        #expect(
            again.status == 0
                && again.stdout.contains(
                    "\(file.fileURL.path) holds nothing for github (\(other)); the Secret Service keyring has it already."
                ),
            "\(again)")
        let nowhere = try await CLIProcess.run(
            ["token", "move", "--to", "keyring", "--provider", "github", "--label", "mv-none"], environment: environment
        )
        #expect(
            nowhere.status == 64 && nowhere.stderr.contains("No credential for github (mv-none) in either store"),
            "\(nowhere)")
        _ = try await keyring.remove(key)
        _ = try await keyring.remove(otherKey)
    }

    /// An account that cannot move is said and left as it was, and the
    /// others move: here a file entry holding a member a later AuthKit
    /// wrote, which the keyring's copy would not carry.
    @Test(.enabled("no Secret Service answers (.ci/run starts one)") { await TestKeyring.shouldRun() })
    func tokenMoveLeavesWhatItCannotCarryAndMovesTheRest() async throws {
        let home = try CLIProcess.home("authkit-keyring-move-later")
        defer { try? FileManager.default.removeItem(at: home) }
        let environment = ["AUTHKIT_HOME": home.path].merging(TestKeyring.busEnvironment) { $1 }
        let file = FileCredentialStore(environment: environment)
        let keyring = SecretServiceCredentialStore(environment: environment)
        let later = Credential(
            providerID: "github", label: "mv-\(UUID().uuidString.prefix(8).lowercased())", accessToken: "gho_later",
            obtainedAt: Self.someSecond)
        let plain = Credential(
            providerID: "github", label: "mv-\(UUID().uuidString.prefix(8).lowercased())", accessToken: "gho_plain",
            obtainedAt: Self.someSecond)
        try await file.save(later)
        try await file.save(plain)
        // A member this version does not know, in the first entry.
        var document = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: file.fileURL)) as? [String: Any])
        var entries = try #require(document["credentials"] as? [[String: Any]])
        let index = try #require(entries.firstIndex { $0["label"] as? String == later.label })
        entries[index]["boundToDevice"] = "tpm:1"
        document["credentials"] = entries
        try JSONSerialization.data(withJSONObject: document).write(to: file.fileURL)

        let moved = try await CLIProcess.run(
            ["token", "move", "--to", "keyring", "--provider", "github"], environment: environment)
        #expect(moved.status == 1, "\(moved)")
        #expect(
            moved.stderr.contains("github (\(later.label!)) not moved")
                && moved.stderr.contains("members this authkit does not know (boundToDevice)")
                && moved.stderr.contains("1 of 2 credentials not moved"), "\(moved.stderr)")
        #expect(moved.stdout.contains("Moved github (\(plain.label!))"), "\(moved.stdout)")
        #expect(try await keyring.credential(for: plain.key) == plain)
        #expect(try await keyring.credential(for: later.key) == nil)
        #expect(try String(contentsOf: file.fileURL, encoding: .utf8).contains("tpm:1"), "the member was lost")
        _ = try await keyring.remove(plain.key)

        // And the other way: a keyring item holding such a member (checked
        // for the file only, the move to the file dropped it). The item is
        // the file's entry of it, as the store writes a credential, plus the member.
        let keyed = Credential(
            providerID: "gitlab", label: "mv-\(UUID().uuidString.prefix(8).lowercased())", accessToken: "glpat_keyed",
            obtainedAt: Self.someSecond)
        try await file.save(keyed)
        let written = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: file.fileURL)) as? [String: Any])
        var item = try #require(
            (written["credentials"] as? [[String: Any]])?.first { $0["label"] as? String == keyed.label })
        item["boundToDevice"] = "tpm:2"
        try await keyring.store(
            String(decoding: try JSONSerialization.data(withJSONObject: item), as: UTF8.self), for: keyed.key)
        try #require(try await file.remove(keyed.key) != nil)
        // Named by label: the keyring is shared with the other tests of the run.
        let back = try await CLIProcess.run(
            ["token", "move", "--to", "file", "--provider", "gitlab", "--label", keyed.label!], environment: environment
        )
        #expect(
            back.status == 1 && back.stderr.contains("members this authkit does not know (boundToDevice)"),
            "\(back.status): \(back.stderr)")
        #expect(try await file.credential(for: keyed.key) == nil)
        #expect(try await keyring.credential(for: keyed.key)?.accessToken == "glpat_keyed")
        _ = try await keyring.remove(keyed.key)
    }

    /// Two processes at once: `token list` while another process deletes
    /// items. The keyring's search answers paths and each item is read
    /// after; one deleted between the two failed the whole list ("No such
    /// secret item at path", seen once in CI beside another test's
    /// cleanup). Every list succeeds and lists the account that stays.
    @Test(.enabled("no Secret Service answers (.ci/run starts one)") { await TestKeyring.shouldRun() })
    func aListWhileAnotherProcessDeletesSucceeds() async throws {
        let home = try CLIProcess.home("authkit-keyring-list-deletes")
        defer { try? FileManager.default.removeItem(at: home) }
        let environment = ["AUTHKIT_HOME": home.path, "AUTHKIT_STORE": "keyring"].merging(TestKeyring.busEnvironment) {
            $1
        }
        let keyring = SecretServiceCredentialStore(environment: environment)
        let run = UUID().uuidString.prefix(8).lowercased()
        let stays = Credential(providerID: "bitbucket", label: "ls-\(run)-stays", accessToken: "bb_stays")
        try await keyring.save(stays)
        // Items come and go while the lists run: each saved, then deleted
        // (in this process, which the lists' processes do not coordinate with).
        let progress = DeleteProgress()
        let churning = Task {
            var deleted = 0
            while await !progress.finished, !Task.isCancelled {
                let batch = (0..<8).map {
                    Credential(providerID: "bitbucket", label: "ls-\(run)-\(deleted + $0)", accessToken: "bb_\($0)")
                }
                for credential in batch { try await keyring.save(credential) }
                for credential in batch { _ = try await keyring.remove(credential.key) }
                deleted += batch.count
                // A pause, for the other tests sharing the keyring.
                try await Task.sleep(for: .milliseconds(20))
            }
            return deleted
        }
        var lists: [CLIResult] = []
        var failure: (any Error)?
        do {
            for _ in 0..<6 {
                lists.append(
                    try await CLIProcess.run(
                        ["token", "list", "--provider", "bitbucket", "--json"], environment: environment))
            }
        } catch {
            failure = error
        }
        // Stopped and cleaned up whatever happened above.
        await progress.finish()
        let deleted = try await churning.value
        _ = try await keyring.remove(stays.key)
        if let failure { throw failure }
        #expect(deleted >= 16, "too few items deleted beside the lists to test anything")
        for list in lists {
            #expect(list.status == 0 && list.stdout.contains("ls-\(run)-stays"), "\(list)")
        }
    }

    /// Two processes at once: a refresh under way in another process (this
    /// one, holding the account's refresh lock) finishes first, and its
    /// renewal is what moves; a sign-in under way stops the move of its
    /// account, which stays where it was.
    @Test(.enabled("no Secret Service answers (.ci/run starts one)") { await TestKeyring.shouldRun() })
    func tokenMoveWaitsForARefreshAndStopsForASignIn() async throws {
        let home = try CLIProcess.home("authkit-keyring-move-locks")
        defer { try? FileManager.default.removeItem(at: home) }
        // The keyring's locks in a runtime directory of their own, as on a
        // desktop: the move takes both stores' locks.
        let runtime = try CLIProcess.home("authkit-keyring-move-runtime")
        defer { try? FileManager.default.removeItem(at: runtime) }
        let label = "mv-\(UUID().uuidString.prefix(8).lowercased())"
        let environment = ["AUTHKIT_HOME": home.path, "XDG_RUNTIME_DIR": runtime.path].merging(
            TestKeyring.busEnvironment
        ) { $1 }
        let file = FileCredentialStore(environment: environment)
        let keyring = SecretServiceCredentialStore(environment: environment)
        try #require(keyring.lockDirectory.path.hasPrefix(runtime.path))
        let key = CredentialKey(providerID: "github", label: label)
        try await file.save(
            Credential(
                providerID: "github", label: label, accessToken: "gho_old", refreshToken: "ghr_old",
                obtainedAt: Self.someSecond))
        let move = ["token", "move", "--to", "keyring", "--provider", "github", "--label", label]

        let stopped = try await {
            let signingIn = try file.beginSignIn(for: key)
            defer { withExtendedLifetime(signingIn) {} }
            return try await CLIProcess.run(move, environment: environment)
        }()
        #expect(
            stopped.status != 0 && stopped.stderr.contains("another sign-in to github (\(label)) is in progress"),
            "\(stopped)")
        #expect(try await file.credential(for: key)?.accessToken == "gho_old")
        #expect(try await keyring.credential(for: key) == nil)
        // A sign-in to the keyring's account (another process, which chose
        // the keyring) stops it too: it would be overwritten by the move.
        let stoppedThere = try await {
            let signingIn = try keyring.beginSignIn(for: key)
            defer { withExtendedLifetime(signingIn) {} }
            return try await CLIProcess.run(move, environment: environment)
        }()
        #expect(
            stoppedThere.status != 0
                && stoppedThere.stderr.contains("another sign-in to github (\(label)) is in progress"),
            "\(stoppedThere)")
        #expect(try await keyring.credential(for: key) == nil)

        let renewed = Credential(
            providerID: "github", label: label, accessToken: "gho_renewed", refreshToken: "ghr_renewed",
            obtainedAt: Self.someSecond)
        let signInLock = home.appendingPathComponent(".signin-\(FileCredentialStore.fileName(for: key)).lock").path
        let mover = try await file.withRefreshLock(for: key, timeout: .seconds(10)) {
            let mover = Task { try await CLIProcess.run(move, environment: environment) }
            // The child takes the account's sign-in lock, then waits for this one.
            var reached = false
            for _ in 0..<400 where !reached {
                reached = Self.flockHeldByAnotherProcess(signInLock)
                if !reached { try await Task.sleep(for: .milliseconds(25)) }
            }
            #expect(reached, "the move never took the sign-in lock")
            try await file.save(renewed)
            return mover
        }
        let moved = try await mover.value
        #expect(moved.status == 0, "\(moved.stderr)")
        #expect(try await keyring.credential(for: key) == renewed)
        #expect(try await file.credential(for: key) == nil)
        _ = try await keyring.remove(key)
    }

    /// Whether another process holds an `flock` on `path` (/proc/locks
    /// lists it by the file's inode): a look that takes no lock itself.
    static func flockHeldByAnotherProcess(_ path: String) -> Bool {
        var info = stat()
        guard stat(path, &info) == 0, let locks = KernelFile.contents(of: "/proc/locks") else {
            return false
        }
        return locks.split(separator: "\n").contains { line in
            // "1: FLOCK  ADVISORY  WRITE 4242 08:01:1234 0 EOF"; a waiter's line has "->" after the number.
            let fields = line.split(separator: " ")
            return fields.count > 5 && fields[1] == "FLOCK" && fields[5].hasSuffix(":\(info.st_ino)")
                && Int32(fields[4]) != getpid()
        }
    }

    /// `token move` with no keyring to move to is an error that moves
    /// nothing (not the other commands' fallback to the file), and a store
    /// it does not know is a usage error.
    @Test(.enabled(if: Self.onLinux, "elsewhere the system keyring always answers, and is the user's own"))
    func tokenMoveWithoutAKeyringMovesNothing() async throws {
        let home = try CLIProcess.home("authkit-move-no-keyring")
        defer { try? FileManager.default.removeItem(at: home) }
        let environment = ["AUTHKIT_HOME": home.path, "DBUS_SESSION_BUS_ADDRESS": "unix:path=\(home.path)/no-bus"]
        let file = FileCredentialStore(environment: environment)
        let stored = Credential(
            providerID: "github", accessToken: "gho_kept", refreshToken: "ghr_kept", obtainedAt: Self.someSecond)
        try await file.save(stored)
        let moved = try await CLIProcess.run(["token", "move", "--to", "keyring"], environment: environment)
        #expect(
            moved.status == 1 && moved.stderr.contains("The keyring cannot be used: no Secret Service answers")
                && moved.stderr.contains("Nothing was moved"), "\(moved.stderr)")
        #expect(try await file.credential(for: stored.key) == stored)
        let unknown = try await CLIProcess.run(["token", "move", "--to", "vault"], environment: environment)
        #expect(unknown.status == 64 && unknown.stderr.contains("vault"), "\(unknown.stderr)")
        let sandboxed = try await CLIProcess.run(
            ["token", "move", "--to", "file", "--sandbox", "http://127.0.0.1:9"], environment: environment)
        #expect(sandboxed.status == 64 && sandboxed.stderr.contains("sandbox's credentials"), "\(sandboxed.stderr)")
    }

    /// No Secret Service: the file is used, and that is said on standard
    /// error by every command, not once (gh falls back silently).
    @Test(.enabled(if: Self.onLinux, "elsewhere the system keyring always answers, and is the user's own"))
    func withoutAKeyringTheFileIsUsedAndSaidEveryTime() async throws {
        let home = try CLIProcess.home("authkit-no-keyring")
        defer { try? FileManager.default.removeItem(at: home) }
        let environment = [
            "AUTHKIT_HOME": home.path, "AUTHKIT_STORE": "keyring",
            "DBUS_SESSION_BUS_ADDRESS": "unix:path=\(home.path)/no-bus", "TOKEN": "gho_fallback",
        ]
        let imported = try await CLIProcess.run(
            ["token", "import", "--provider", "github"], environment: environment, launcher: Self.importing(""))
        let file = home.appendingPathComponent("credentials.json")
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(
            imported.stderr.contains("AUTHKIT_STORE=keyring asks for the keyring, but no Secret Service answers")
                && imported.stderr.contains("using \(file.path) instead"), "\(imported.stderr)")
        #expect(imported.stdout.contains("Stored in \(file.path)"))
        #expect(!imported.stderr.contains("gho_fallback"))
        let listed = try await CLIProcess.run(["token", "list"], environment: environment)
        #expect(listed.status == 0 && listed.stderr.contains("no Secret Service answers"), "\(listed.stderr)")
        // A command that reads no credential asks no keyring and warns of none.
        let providers = try await CLIProcess.run(["providers", "list"], environment: environment)
        #expect(providers.status == 0 && !providers.stderr.contains("keyring"), "\(providers.stderr)")
    }

    /// Without a session bus (no `DBUS_SESSION_BUS_ADDRESS`, no
    /// `$XDG_RUNTIME_DIR/bus`: a cron job, `ssh -X`), GLib would start
    /// `dbus-launch`, which inherited authkit's environment, a client secret
    /// with it. The keyring is not asked: the file is used, and the warning
    /// says there is no session bus. (A `dbus-launch` of the test's own,
    /// first on PATH, records whether it ran.)
    @Test(.enabled(if: Self.onLinux, "the keyring is the Keychain on macOS"))
    func withoutASessionBusNoDBusIsLaunched() async throws {
        let home = try CLIProcess.home("authkit-no-session-bus")
        defer { try? FileManager.default.removeItem(at: home) }
        let bin = home.appendingPathComponent("bin")
        try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
        let launched = home.appendingPathComponent("launched.env")
        let launcher = bin.appendingPathComponent("dbus-launch")
        try "#!/bin/sh\nenv > '\(launched.path)'\nexit 1\n".write(to: launcher, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: launcher.path)
        // An `autolaunch:` address, alone or after one GLib tries first, is GLib's autolaunch too.
        for (address, said) in [
            ("", "no D-Bus session bus"), ("autolaunch:", "autolaunch"),
            ("unix:path=\(home.path)/gone;autolaunch:", "autolaunch"),
        ] {
            let result = try await CLIProcess.run(
                ["token", "list"],
                environment: [
                    "AUTHKIT_HOME": home.path, "AUTHKIT_STORE": "keyring", "DBUS_SESSION_BUS_ADDRESS": address,
                    "XDG_RUNTIME_DIR": home.path, "DISPLAY": ":4242",
                    "AUTHKIT_GITHUB_CLIENT_SECRET": "must-not-travel", "PATH": "\(bin.path):/usr/bin:/bin",
                ])
            #expect(result.status == 0 && result.stderr.contains(said), "\(address): \(result.stderr)")
            #expect(!FileManager.default.fileExists(atPath: launched.path), "\(address): dbus-launch was started")
        }
    }

    /// A libsecret someone placed beside the program is not loaded (RUNPATH
    /// `$ORIGIN` would find it before the system's; CWE-427): the keyring
    /// is not used, and the warning names the file.
    @Test func aLibsecretPlacedBesideTheProgramIsRefused() async throws {
        let home = try CLIProcess.home("authkit-planted-libsecret")
        let directory = TemporaryDirectory.url("authkit-planted-secret-bin")
        defer {
            try? FileManager.default.removeItem(at: home)
            try? FileManager.default.removeItem(at: directory)
        }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let program = directory.appendingPathComponent("authkit")
        try FileManager.default.copyItem(at: CLIProcess.binary, to: program)
        // Refused before anything is loaded, so its content does not matter.
        let planted = directory.appendingPathComponent("libsecret-1.so.0")
        try Data("not a library".utf8).write(to: planted)
        let copy = ["/bin/sh", "-c", #"shift; exec "$0" "$@""#, program.path]
        // A bus named (none need answer): without one, the keyring is not
        // looked for at all, and the library never comes into question.
        let environment = [
            "AUTHKIT_HOME": home.path, "AUTHKIT_STORE": "keyring", "DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent",
        ].merging(TestKeyring.busEnvironment) { $1 }
        let listed = try await CLIProcess.run(["token", "list"], environment: environment, launcher: copy)
        #expect(
            listed.status == 0
                && listed.stderr.contains("refusing to load \(planted.path): a libsecret beside the program")
                && listed.stderr.contains("using \(home.path)/credentials.json instead"), "\(listed.stderr)")
    }

    /// A store that is neither: named, with the values it takes.
    @Test func anUnknownStoreIsRefusedByName() async throws {
        let home = try CLIProcess.home("authkit-store-choice")
        defer { try? FileManager.default.removeItem(at: home) }
        let variable = try await CLIProcess.run(
            ["token", "list"], environment: ["AUTHKIT_HOME": home.path, "AUTHKIT_STORE": "vault"])
        #expect(
            variable.status == 64 && variable.stderr.contains("AUTHKIT_STORE is 'vault'")
                && variable.stderr.contains("file or keyring"), "\(variable.stderr)")
        let config = home.appendingPathComponent("config.json")
        try Data(#"{"store": "vault"}"#.utf8).write(to: config)
        let file = try await CLIProcess.run(["token", "list"], environment: ["AUTHKIT_HOME": home.path])
        #expect(
            file.status == 65 && file.stderr.contains(config.path) && file.stderr.contains("store")
                && file.stderr.contains("\"keyring\""), "\(file.stderr)")
    }
}

/// Whether a task beside the test's own work has ended, asked without waiting for it.
private actor DeleteProgress {
    private(set) var finished = false
    func finish() { finished = true }
}
