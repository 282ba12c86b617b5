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
        let words = ["authkit", "token", "show", "--provider", "github", "--label", "kr-"]
        let offered = try await run(
            ["---completion", "token", "show", "--", "--label", String(words.count - 1), "3"] + words)
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

    /// No Secret Service: the file is used, and that is said on standard
    /// error by every command, not once (gh falls back silently).
    @Test func withoutAKeyringTheFileIsUsedAndSaidEveryTime() async throws {
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
        let environment = ["AUTHKIT_HOME": home.path, "AUTHKIT_STORE": "keyring"].merging(TestKeyring.busEnvironment) {
            $1
        }
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
