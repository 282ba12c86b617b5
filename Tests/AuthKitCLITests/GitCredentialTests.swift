import AuthKit
import AuthKitTestSupport
import Foundation
import Testing

/// `token setup-git` and `token git-credential` with the real git: git's
/// own `git credential fill` asks the helper setup-git configured, as a
/// clone or push over HTTPS does.
@Suite struct GitCredentialTests {
    static let git = "/usr/bin/git"
    static var hasGit: Bool { FileManager.default.isExecutableFile(atPath: git) }

    /// A home with a provider `gitbox` whose token endpoint is `server` and
    /// whose git host is https://git.example.test (user name `oauth2`, scope
    /// `write_repository`), and an expired credential with a refresh token.
    static func gitbox(at server: TestHTTPServer, scopes: [String] = ["write_repository"]) throws -> (
        home: URL, environment: [String: String]
    ) {
        let home = try CLIProcess.home("authkit-git")
        let descriptor = """
            {"id": "gitbox", "name": "Gitbox", "protocol": "oauth2",
             "authorization": {"url": "https://git.example.test/oauth/authorize"},
             "token": {"url": "\(server.baseURL)/token", "clientAuthentication": "post"},
             "scopes": {"separator": " ", "default": ["write_repository"]},
             "git": {"origins": ["https://git.example.test"], "username": "oauth2", "scopes": ["write_repository"]}}
            """
        try Data(descriptor.utf8).write(to: home.appendingPathComponent("providers/gitbox.json"))
        let scopeList = scopes.map { "\"\($0)\"" }.joined(separator: ",")
        let stored = """
            {"version":1,"credentials":[{"providerID":"gitbox","kind":"oauth2","accessToken":"expired-token",\
            "refreshToken":"the-refresh-token","tokenType":"Bearer","scopes":[\(scopeList)],\
            "expiresAt":"2026-01-01T01:00:00Z","obtainedAt":"2026-01-01T00:00:00Z","rawFields":{}}]}
            """
        try Data(stored.utf8).write(to: home.appendingPathComponent("credentials.json"))
        try FileManager.default.setAttributes(
            [.posixPermissions: 0o600], ofItemAtPath: home.appendingPathComponent("credentials.json").path)
        let environment = [
            "AUTHKIT_HOME": home.path, "HOME": home.path,
            "GIT_CONFIG_GLOBAL": home.appendingPathComponent("gitconfig").path, "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_TERMINAL_PROMPT": "0", "AUTHKIT_GITBOX_CLIENT_ID": "git-client",
            "AUTHKIT_GITBOX_CLIENT_SECRET": "client-secret-for-git",
            "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin",
        ]
        return (home, environment)
    }

    /// The gitbox home's store holding only `accounts`, each token good for
    /// an hour and granted git's scope.
    static func holdingOnly(_ accounts: [(label: String?, token: String)], environment: [String: String])
        async throws
    {
        let store = FileCredentialStore(environment: environment)
        for credential in try await store.allCredentials() { try await store.remove(credential.key) }
        for (label, token) in accounts {
            try await store.save(
                Credential(
                    providerID: "gitbox", label: label, accessToken: token,
                    expiresAt: Date(timeIntervalSinceNow: 3600), scopes: ["write_repository"]))
        }
    }

    /// `git credential fill` for `protocol://host`, as git asks before a clone.
    static func fill(_ scheme: String, _ host: String, user: String? = nil, environment: [String: String])
        async throws -> ChildProcess.Outcome
    {
        try await ChildProcess.run(
            git, ["credential", "fill"], environment: environment,
            input: "protocol=\(scheme)\nhost=\(host)\n" + (user.map { "username=\($0)\n" } ?? "") + "\n")
    }

    /// A git on `PATH` ahead of the real one that writes each command line
    /// it is given to `log`, fails the `--add` of a non-empty value while
    /// `failing` exists, and otherwise runs the real git. Returns the `PATH` to use.
    static func recordingGit(in home: URL, log: URL, failing: URL, path: String?) throws -> String {
        let bin = home.appendingPathComponent("bin")
        try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
        let script = """
            #!/bin/sh
            printf '%s\\n' "$*" >> '\(log.path)'
            if [ "$3" = "--add" ] && [ -n "$5" ] && [ -e '\(failing.path)' ]; then
              rm -f '\(failing.path)'; printf 'error: could not lock config file\\nfatal: try again\\n' >&2; exit 255
            fi
            exec \(Self.git) "$@"
            """
        try Data(script.utf8).write(to: bin.appendingPathComponent("git"))
        try FileManager.default.setAttributes(
            [.posixPermissions: 0o755], ofItemAtPath: bin.appendingPathComponent("git").path)
        return bin.path + ":" + (path ?? "/usr/bin:/bin")
    }

    /// Adds `values` to the origin's helpers, in order, with the real git.
    static func addHelpers(_ values: [String], at name: String, environment: [String: String]) async throws {
        for value in values {
            let added = try await ChildProcess.run(
                Self.git, ["config", "--global", "--add", name, value], environment: environment)
            try #require(added.exit.status == 0, "\(added)")
        }
    }

    /// An origin's helpers, whole (`-z`: a value may hold a line break).
    static func helpers(_ name: String, environment: [String: String]) async throws -> [String] {
        let now = try await ChildProcess.run(
            Self.git, ["config", "--global", "-z", "--get-all", name], environment: environment)
        return now.standardOutput.split(separator: "\0", omittingEmptySubsequences: false).dropLast().map(String.init)
    }

    /// git refusing a step part-way (here the helper's `--add`, after the
    /// empty entry's, as another `git config` holding the configuration's
    /// lock would): the origin, left with the empty entry alone, had git ask
    /// no helper there; it is taken away and the origin is as it was. The
    /// user's helpers, an inline one with a password among them, were never
    /// on git's command line (readable by every user in /proc): setup-git
    /// writes nothing of theirs again, so it never has to put them back.
    @Test(.enabled(if: hasGit))
    func setupGitFailingPartWayLeavesTheHelpersAsTheyWere() async throws {
        let server = TestHTTPServer()
        try await server.start()
        defer { Task { await server.stop() } }
        var (home, environment) = try Self.gitbox(at: server)
        defer { try? FileManager.default.removeItem(at: home) }
        let secret = "ghp_inline0secret0in0a0helper"
        let name = "credential.https://git.example.test.helper"
        let original = ["!f() { echo username=me; echo password=\(secret); }; f", "store"]
        try await Self.addHelpers(original, at: name, environment: environment)
        let log = home.appendingPathComponent("git-command-lines")
        let failing = home.appendingPathComponent("fail-next-add")
        try Data().write(to: failing)
        environment["PATH"] = try Self.recordingGit(in: home, log: log, failing: failing, path: environment["PATH"])

        let setup = try await CLIProcess.run(["token", "setup-git", "--provider", "gitbox"], environment: environment)
        #expect(
            setup.status == 1
                && setup.stderr.contains("failed (exit status 255): error: could not lock config file fatal: try again")
                && setup.stderr.contains("https://git.example.test was left as it was."),
            "\(setup.status) \(setup.stderr)")
        #expect(try await Self.helpers(name, environment: environment) == original)
        // Run again (git's lock free): set up after the user's helpers, which stay.
        let again = try await CLIProcess.run(["token", "setup-git", "--provider", "gitbox"], environment: environment)
        #expect(again.status == 0, "\(again)")
        let now = try await Self.helpers(name, environment: environment)
        #expect(
            now.count == 4 && Array(now.prefix(3)) == original + [""] && now[3].contains("git-credential"), "\(now)")
        let lines = try String(contentsOf: log, encoding: .utf8)
        #expect(lines.contains("--add \(name)") && !lines.contains(secret) && !lines.contains(" store"), "\(lines)")
    }

    @Test(.enabled(if: hasGit))
    func setupGitMakesGitAskForTheRefreshedTokenAtTheProvidersGitHostOnly() async throws {
        let server = TestHTTPServer()
        server.route("POST", "/token") { _ in
            .json(
                #"{"access_token":"fresh-token","token_type":"Bearer","expires_in":3600,"refresh_token":"r2","scope":"write_repository"}"#
            )
        }
        try await server.start()
        defer { Task { await server.stop() } }
        let (home, environment) = try Self.gitbox(at: server)
        defer { try? FileManager.default.removeItem(at: home) }
        // A helper the user had for that host, with another password: setup-git
        // resets the list there, so git no longer asks it.
        try Data("[credential \"https://git.example.test\"]\n\thelper = store\n".utf8)
            .write(to: home.appendingPathComponent("gitconfig"))
        try Data("https://someone:old-password@git.example.test\n".utf8)
            .write(to: home.appendingPathComponent(".git-credentials"))

        let setup = try await CLIProcess.run(["token", "setup-git", "--provider", "gitbox"], environment: environment)
        #expect(setup.status == 0 && setup.stdout.contains("https://git.example.test"), "\(setup)")
        let config = try String(contentsOf: home.appendingPathComponent("gitconfig"), encoding: .utf8)
        // What the credential was found through here goes with the command:
        // git runs the helper in the user's environment, not this one.
        #expect(
            config.contains("AUTHKIT_HOME='\(home.path)' '")
                && config.contains("token git-credential --provider='gitbox'"),
            "\(config)")
        #expect(
            !config.contains("client-secret-for-git") && !config.contains("token\"")
                && !config.contains("expired-token"))
        // Twice is the same configuration, not two helpers.
        _ = try await CLIProcess.run(["token", "setup-git", "--provider", "gitbox"], environment: environment)
        #expect(try String(contentsOf: home.appendingPathComponent("gitconfig"), encoding: .utf8) == config)
        // A relative AUTHKIT_BUNDLED_PROVIDERS is written out whole: git runs
        // the helper in a repository, where it named nothing.
        try FileManager.default.createDirectory(
            at: home.appendingPathComponent("bundled"), withIntermediateDirectories: true)
        let relative = try await CLIProcess.run(
            ["token", "setup-git", "--provider", "gitbox"],
            environment: environment.merging(["AUTHKIT_BUNDLED_PROVIDERS": "bundled"]) { $1 }, workingDirectory: home)
        let written = try String(contentsOf: home.appendingPathComponent("gitconfig"), encoding: .utf8)
        #expect(
            relative.status == 0 && written.contains("AUTHKIT_BUNDLED_PROVIDERS='/")
                && written.contains("/bundled' '"), "\(relative.stderr)\n\(written)")
        _ = try await CLIProcess.run(["token", "setup-git", "--provider", "gitbox"], environment: environment)

        // git asks (from an environment without AUTHKIT_HOME): the expired token is
        // refreshed first, and given with the descriptor's user name.
        var gitsEnvironment = environment
        gitsEnvironment["AUTHKIT_HOME"] = nil
        let filled = try await Self.fill("https", "git.example.test", environment: gitsEnvironment)
        #expect(filled.exit.status == 0, "\(filled)")
        #expect(
            filled.standardOutput.contains("username=oauth2\n")
                && filled.standardOutput.contains("password=fresh-token\n"),
            "\(filled)")
        #expect(!filled.standardOutput.contains("old-password"))
        let refreshes = server.requests(to: "/token")
        #expect(refreshes.count == 1 && refreshes.first?.bodyText.contains("grant_type=refresh_token") == true)

        // Another host, plain http, a longer host name, a user name or path in
        // the host: git gets nothing from authkit, whether git's configuration
        // scopes the helper to the host (as setup-git writes it) or a user
        // made it every host's (`credential.helper`), when git asks the helper
        // for anything.
        let everyHost = home.appendingPathComponent("gitconfig-every-host")
        try Data(
            "[credential]\n\thelper = !'\(CLIProcess.binary.path)' token git-credential --provider gitbox\n".utf8
        ).write(to: everyHost)
        let others = [
            ("https", "other.example.test"), ("http", "git.example.test"), ("https", "git.example.test.evil"),
            ("https", "git.example.test@evil.example"), ("https", "evil.example/git.example.test"),
            ("https", "git.example.test:8443"), ("ftp", "git.example.test"),
        ]
        for (scheme, host) in others {
            for config in [home.appendingPathComponent("gitconfig"), everyHost] {
                var scoped = environment
                scoped["GIT_CONFIG_GLOBAL"] = config.path
                let other = try await Self.fill(scheme, host, environment: scoped)
                #expect(
                    other.exit.status != 0 && !other.standardOutput.contains("fresh-token"),
                    "\(scheme)://\(host), \(config.lastPathComponent): \(other)")
            }
            let asked = try await ChildProcess.run(
                CLIProcess.binary.path, ["token", "git-credential", "--provider", "gitbox", "get"],
                environment: environment, input: "protocol=\(scheme)\nhost=\(host)\n\n")
            #expect(asked.exit.status == 0 && asked.standardOutput.isEmpty, "\(scheme)://\(host): \(asked)")
        }
        var everyHostEnvironment = environment
        everyHostEnvironment["GIT_CONFIG_GLOBAL"] = everyHost.path
        let viaEveryHost = try await Self.fill("https", "git.example.test", environment: everyHostEnvironment)
        #expect(viaEveryHost.standardOutput.contains("password=fresh-token\n"), "\(viaEveryHost)")
        // The helper asked directly, by a request naming two hosts: nothing.
        let two = try await ChildProcess.run(
            CLIProcess.binary.path, ["token", "git-credential", "--provider", "gitbox", "get"],
            environment: environment, input: "protocol=https\nhost=git.example.test\nhost=other.example.test\n\n")
        #expect(two.exit.status == 0 && two.standardOutput.isEmpty, "\(two)")

        // git's erase after a refusal (a repository the grant does not reach)
        // does not delete the credential.
        let rejected = try await ChildProcess.run(
            Self.git, ["credential", "reject"], environment: environment,
            input: "protocol=https\nhost=git.example.test\nusername=oauth2\npassword=fresh-token\n\n")
        #expect(rejected.exit.status == 0)
        let print = try await CLIProcess.run(["token", "print", "--provider", "gitbox"], environment: environment)
        #expect(print.status == 0 && print.stdout == "fresh-token\n", "\(print)")
    }

    /// The helpers an origin had stay in git's configuration, before the
    /// empty entry that stops git asking them, and are named by their first
    /// word only: shown whole, an inline helper (`!f() { echo password=…;
    /// }; f`) put its secret on standard error. Nothing of them is written
    /// anywhere else or passed to git again (its command line is readable
    /// by every user in /proc). The undo printed takes away exactly what
    /// was added; where the origin had an empty entry of its own, which a
    /// pattern would take too, it says which lines to remove instead.
    @Test(.enabled(if: hasGit))
    func replacedHelpersStayInGitsConfigurationAndTheUndoIsExact() async throws {
        let server = TestHTTPServer()
        try await server.start()
        defer { Task { await server.stop() } }
        var (home, environment) = try Self.gitbox(at: server)
        defer { try? FileManager.default.removeItem(at: home) }
        let secret = "ghp_inline0secret0in0a0helper"
        let name = "credential.https://git.example.test.helper"
        let original = ["!f() { echo username=me; echo password=\(secret); }; f", "store --file ~/.my-creds"]
        try await Self.addHelpers(original, at: name, environment: environment)
        let log = home.appendingPathComponent("git-command-lines")
        environment["PATH"] = try Self.recordingGit(
            in: home, log: log, failing: home.appendingPathComponent("never"), path: environment["PATH"])
        let setup = try await CLIProcess.run(["token", "setup-git", "--provider", "gitbox"], environment: environment)
        #expect(setup.status == 0, "\(setup)")
        #expect(!setup.stderr.contains(secret) && !setup.stdout.contains(secret), "\(setup.stderr)")
        #expect(setup.stderr.contains("no longer asks these helpers there: !f() …; store …."), "\(setup.stderr)")
        let now = try await Self.helpers(name, environment: environment)
        #expect(Array(now.prefix(3)) == original + [""] && now.count == 4, "\(now)")
        let lines = try String(contentsOf: log, encoding: .utf8)
        #expect(!lines.contains(secret) && !lines.contains("my-creds"), "\(lines)")
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: home.path).allSatisfy { !$0.hasPrefix("replaced-git") })
        let filled = try await Self.fill("https", "git.example.test", environment: environment)
        #expect(!filled.standardOutput.contains(secret), "\(filled)")

        // The undo it printed, run as printed: the origin is as it was.
        let undo = "git config --global --unset-all \(name) '^$| token git-credential --provider'"
        #expect(setup.stderr.contains("to undo: \(undo)"), "\(setup.stderr)")
        let undone = try await ChildProcess.run("/bin/sh", ["-c", undo], environment: environment)
        #expect(undone.exit.status == 0, "\(undone)")
        #expect(try await Self.helpers(name, environment: environment) == original)

        // An origin with an empty entry of its own: the lines to remove are named.
        _ = try await ChildProcess.run(Self.git, ["config", "--global", "--unset-all", name], environment: environment)
        try await Self.addHelpers(["", "store"], at: name, environment: environment)
        let own = try await CLIProcess.run(["token", "setup-git", "--provider", "gitbox"], environment: environment)
        #expect(
            own.status == 0
                && own.stderr.contains(
                    "to undo: remove the last two helper lines under [credential \"https://git.example.test\"]"),
            "\(own.stderr)")
        // Set up again over its own helper: nothing changes, and it says so.
        let again = try await CLIProcess.run(["token", "setup-git", "--provider", "gitbox"], environment: environment)
        #expect(
            again.status == 0 && again.stderr.contains("git was set up so already; nothing changed.")
                && !again.stderr.contains("to undo"), "\(again.stderr)")
        #expect(try await Self.helpers(name, environment: environment).count == 4)
    }

    /// A git origin with a placeholder (`https://{host}`, a self-managed
    /// GitLab) gets the token only where the credential was issued: a value
    /// in effect that names another host (here the environment's) sends it
    /// nowhere else, and a host neither names nor issued is passed silently.
    @Test(.enabled(if: hasGit))
    func aPlaceholderOriginGetsOnlyTheCredentialIssuedThere() async throws {
        let home = try CLIProcess.home("authkit-git-host")
        defer { try? FileManager.default.removeItem(at: home) }
        let descriptor = """
            {"id": "selfgit", "protocol": "oauth2", "placeholders": {"host": {}},
             "authorization": {"url": "https://{host}/oauth/authorize"}, "token": {"url": "https://{host}/oauth/token"},
             "git": {"origins": ["https://{host}"], "username": "oauth2"}}
            """
        try Data(descriptor.utf8).write(to: home.appendingPathComponent("providers/selfgit.json"))
        let stored = """
            {"version":1,"credentials":[{"providerID":"selfgit","kind":"oauth2","accessToken":"corp-token",\
            "tokenType":"Bearer","scopes":[],"expiresAt":"2099-01-01T00:00:00Z","obtainedAt":"2026-01-01T00:00:00Z",\
            "endpointOrigins":["https://git.corp.example"],"rawFields":{}}]}
            """
        try Data(stored.utf8).write(to: home.appendingPathComponent("credentials.json"))
        try FileManager.default.setAttributes(
            [.posixPermissions: 0o600], ofItemAtPath: home.appendingPathComponent("credentials.json").path)
        let environment = [
            "AUTHKIT_HOME": home.path, "HOME": home.path, "AUTHKIT_SELFGIT_CLIENT_ID": "c",
            "AUTHKIT_SELFGIT_HOST": "evil.example",
            "GIT_CONFIG_GLOBAL": home.appendingPathComponent("gitconfig").path, "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_TERMINAL_PROMPT": "0", "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin",
        ]
        func helper(_ host: String) async throws -> ChildProcess.Outcome {
            try await ChildProcess.run(
                CLIProcess.binary.path, ["token", "git-credential", "--provider", "selfgit", "get"],
                environment: environment, input: "protocol=https\nhost=\(host)\n\n")
        }
        // Where it was issued: the token.
        let issued = try await helper("git.corp.example")
        #expect(issued.exit.status == 0 && issued.standardOutput.contains("password=corp-token\n"), "\(issued)")
        // Where the values in effect point (setup-git configured it there): refused, said.
        let setup = try await CLIProcess.run(["token", "setup-git", "--provider", "selfgit"], environment: environment)
        #expect(setup.status == 0 && setup.stdout.contains("https://evil.example"), "\(setup)")
        let filled = try await Self.fill("https", "evil.example", environment: environment)
        #expect(!filled.standardOutput.contains("corp-token"), "\(filled)")
        #expect(filled.standardError.contains("was not issued at https://evil.example"), "\(filled)")
        // Neither: nothing, and nothing said (git may ask a helper for every host).
        let other = try await helper("other.example")
        #expect(other.exit.status == 0 && other.standardOutput.isEmpty && other.standardError.isEmpty, "\(other)")
    }

    /// An override of a bundled descriptor that gives git the token at
    /// another host is said, by every command that uses it, as one that
    /// widens api.origins is.
    @Test func anOverrideThatAddsAGitHostIsSaid() async throws {
        let home = try CLIProcess.home("authkit-git-override")
        defer { try? FileManager.default.removeItem(at: home) }
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..")
        let bundled = try String(contentsOf: root.appendingPathComponent("providers/github.json"), encoding: .utf8)
        let widened = bundled.replacingOccurrences(
            of: #""origins": ["https://github.com", "https://gist.github.com"]"#,
            with: #""origins": ["https://github.com", "https://gist.github.com", "https://git.elsewhere.example"]"#)
        #expect(widened != bundled)
        try Data(widened.utf8).write(to: home.appendingPathComponent("providers/github.json"))
        let environment = [
            "AUTHKIT_HOME": home.path, "GIT_CONFIG_GLOBAL": home.appendingPathComponent("gitconfig").path,
            "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin",
        ]
        let asked = try await ChildProcess.run(
            CLIProcess.binary.path, ["token", "git-credential", "-p", "github", "get"], environment: environment,
            input: "protocol=https\nhost=git.elsewhere.example\n\n")
        #expect(
            asked.standardError.contains(
                "gives git the token at https://git.elsewhere.example as well as https://github.com"), "\(asked)")
        let listed = try await CLIProcess.run(["providers", "show", "github"], environment: environment)
        #expect(listed.stdout.contains("https://git.elsewhere.example (user x-access-token)"), "\(listed)")
    }

    /// A DPoP-bound credential is refused before anything is refreshed: git
    /// sends the token as a password, without the proof the token needs
    /// (RFC 9449 §7.1), and a refresh would rotate its refresh token for nothing.
    @Test func aDPoPBoundCredentialIsRefusedBeforeARefresh() async throws {
        let server = TestHTTPServer()
        server.route("POST", "/token") { _ in .json(#"{"access_token":"x","token_type":"DPoP","expires_in":60}"#) }
        try await server.start()
        defer { Task { await server.stop() } }
        let (home, environment) = try Self.gitbox(at: server)
        defer { try? FileManager.default.removeItem(at: home) }
        var bound = Credential(
            providerID: "gitbox", accessToken: "bound-token", tokenType: "DPoP", refreshToken: "bound-refresh",
            expiresAt: Date(timeIntervalSinceNow: -60))
        bound.proofKey = ProofKey()
        try await FileCredentialStore(environment: environment).save(bound)
        let asked = try await ChildProcess.run(
            CLIProcess.binary.path, ["token", "git-credential", "--provider", "gitbox", "get"],
            environment: environment, input: "protocol=https\nhost=git.example.test\n\n")
        #expect(asked.exit.status == 64 && asked.standardError.contains("DPoP-bound"), "\(asked)")
        #expect(!asked.standardOutput.contains("bound-token") && asked.standardOutput.isEmpty)
        #expect(server.requests(to: "/token").isEmpty, "refreshed before the refusal")
    }

    /// A URL with a user name makes git ask for that user: the account with
    /// that label or that name at sign-in answers, byte for byte; a user no
    /// credential is gets nothing (not the default account's token), and
    /// `--label` keeps the helper to its account.
    @Test func aUserNameInTheURLPicksThatAccount() async throws {
        let server = TestHTTPServer()
        try await server.start()
        defer { Task { await server.stop() } }
        let (home, environment) = try Self.gitbox(at: server)
        defer { try? FileManager.default.removeItem(at: home) }
        let store = FileCredentialStore(environment: environment)
        var alice = Credential(
            providerID: "gitbox", accessToken: "alice-token", expiresAt: Date(timeIntervalSinceNow: 3600),
            scopes: ["write_repository"])
        alice.account = "alice (1)"
        var bob = Credential(
            providerID: "gitbox", label: "work", accessToken: "bob-token", expiresAt: Date(timeIntervalSinceNow: 3600),
            scopes: ["write_repository"])
        bob.account = "bob (2)"
        try await store.save(alice)
        try await store.save(bob)
        func ask(_ user: String?, label: String? = nil) async throws -> String {
            let asked = try await ChildProcess.run(
                CLIProcess.binary.path,
                ["token", "git-credential", "--provider", "gitbox"] + (label.map { ["--label", $0] } ?? []) + ["get"],
                environment: environment,
                input: "protocol=https\nhost=git.example.test\n" + (user.map { "username=\($0)\n" } ?? "") + "\n")
            #expect(asked.exit.status == 0, "\(asked)")
            return asked.standardOutput
        }
        #expect(try await ask(nil).contains("password=alice-token"))
        #expect(try await ask("oauth2").contains("password=alice-token"))
        #expect(try await ask("bob").contains("password=bob-token"))
        #expect(try await ask("work").contains("password=bob-token"))
        #expect(try await ask("alice").contains("password=alice-token"))
        for nobody in ["carol", "Bob", "bob (2", "al"] {
            #expect(try await ask(nobody).isEmpty, "\(nobody)")
        }
        #expect(try await ask("alice", label: "work").isEmpty)
        #expect(try await ask("bob", label: "work").contains("password=bob-token"))
    }

    /// One user with accounts at two hosts of a `{host}` provider: git
    /// asking about the second host as that user gets the second's token
    /// (the first, another host's, was picked, refused, and git got nothing).
    @Test func aUserNameInTheURLPicksThatUsersAccountAtThatHost() async throws {
        let home = try CLIProcess.home("authkit-git-two-hosts")
        defer { try? FileManager.default.removeItem(at: home) }
        let environment = ["AUTHKIT_HOME": home.path]
        let store = FileCredentialStore(environment: environment)
        for (label, host) in [("a", "ghe-a.example"), ("b", "ghe-b.example")] {
            var credential = Credential(
                providerID: "github-enterprise", label: label, accessToken: "\(label)-token",
                expiresAt: Date(timeIntervalSinceNow: 3600), scopes: ["repo"], endpointOrigins: ["https://\(host)"])
            credential.account = "bob (1)"
            try await store.save(credential)
        }
        for (host, token) in [("ghe-a.example", "a-token"), ("ghe-b.example", "b-token")] {
            let asked = try await ChildProcess.run(
                CLIProcess.binary.path, ["token", "git-credential", "--provider", "github-enterprise", "get"],
                environment: environment, input: "protocol=https\nhost=\(host)\nusername=bob\n\n")
            #expect(
                asked.exit.status == 0 && asked.standardOutput.contains("password=\(token)\n"), "\(host): \(asked)")
        }
    }

    /// `setup-git` without `--label` where the provider holds only labelled
    /// accounts sets git up all the same: git then picks among them by the
    /// URL's user name (`https://work@…`). Only a `--label` given that names
    /// nothing stored is refused (a typo), git's configuration left alone.
    @Test(.enabled(if: hasGit))
    func setupGitWithoutALabelServesLabelledAccounts() async throws {
        let server = TestHTTPServer()
        try await server.start()
        defer { Task { await server.stop() } }
        let (home, environment) = try Self.gitbox(at: server)
        defer { try? FileManager.default.removeItem(at: home) }
        try await Self.holdingOnly([("work", "work-token")], environment: environment)
        let setup = try await CLIProcess.run(["token", "setup-git", "--provider", "gitbox"], environment: environment)
        #expect(setup.status == 0, "\(setup)")
        let asked = try await Self.fill("https", "git.example.test", user: "work", environment: environment)
        #expect(asked.standardOutput.contains("password=work-token\n"), "\(asked)")
        let typo = try await CLIProcess.run(
            ["token", "setup-git", "--provider", "gitbox", "--label", "wrok"], environment: environment)
        #expect(typo.status == 64 && typo.stderr.contains("git's configuration was left as it was"), "\(typo)")
    }

    /// `--label ''` names the unlabelled account once `token switch` chose
    /// another (setup-git's own refusal says so): the helper written for it
    /// works. Written `--label=''`, the shell made it `--label=`, which took
    /// the `get` git appends as the label, and every fill failed.
    @Test(.enabled(if: hasGit))
    func setupGitForTheUnlabelledAccountBesideAChosenOneWorks() async throws {
        let server = TestHTTPServer()
        try await server.start()
        defer { Task { await server.stop() } }
        let (home, environment) = try Self.gitbox(at: server)
        defer { try? FileManager.default.removeItem(at: home) }
        try await Self.holdingOnly([(nil, "default-token"), ("work", "work-token")], environment: environment)
        let switched = try await CLIProcess.run(
            ["token", "switch", "--provider", "gitbox", "--label", "work"], environment: environment)
        #expect(switched.status == 0, "\(switched)")
        let setup = try await CLIProcess.run(
            ["token", "setup-git", "--provider", "gitbox", "--label", ""], environment: environment)
        #expect(setup.status == 0, "\(setup)")
        let filled = try await Self.fill("https", "git.example.test", environment: environment)
        #expect(filled.standardOutput.contains("password=default-token\n"), "\(filled)")
    }

    /// Setups at once, over a helper the user had: one at a time. Two at
    /// once each read the old helper; the one git's configuration lock
    /// refused put its stale copy back over the other's success (which had
    /// said "git asks authkit", git then asking only the old helper), or
    /// both added theirs.
    @Test(.enabled(if: hasGit))
    func setupsAtOnceRunOneAtATime() async throws {
        let server = TestHTTPServer()
        try await server.start()
        defer { Task { await server.stop() } }
        let (home, environment) = try Self.gitbox(at: server)
        defer { try? FileManager.default.removeItem(at: home) }
        try await Self.holdingOnly([(nil, "the-token")], environment: environment)
        let name = "credential.https://git.example.test.helper"
        _ = try await ChildProcess.run(
            Self.git, ["config", "--global", name, "store --file /dev/null"], environment: environment)
        let setups = try await withThrowingTaskGroup(of: CLIResult.self) { group in
            for _ in 0..<4 {
                group.addTask {
                    try await CLIProcess.run(["token", "setup-git", "--provider", "gitbox"], environment: environment)
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(setups.allSatisfy { $0.status == 0 }, "\(setups.map(\.stderr))")
        let helpers = try await ChildProcess.run(
            Self.git, ["config", "--global", "--get-all", name], environment: environment)
        let lines = helpers.standardOutput.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        #expect(
            lines.count == 3 && lines.first == "store --file /dev/null" && lines.dropFirst().first == ""
                && lines.last?.contains("git-credential") == true, "\(lines)")
        let filled = try await Self.fill("https", "git.example.test", environment: environment)
        #expect(filled.standardOutput.contains("password=the-token\n"), "\(filled)")
    }

    /// Someone trying the sandbox (`AUTHKIT_SANDBOX` exported) with nothing
    /// real stored: refused before git's configuration is touched. A
    /// newcomer following README's block pointed their real git at an
    /// empty account.
    @Test(.enabled(if: hasGit))
    func setupGitInASandboxSessionWithNothingRealStoredIsRefused() async throws {
        let server = TestHTTPServer()
        try await server.start()
        defer { Task { await server.stop() } }
        let (home, environment) = try Self.gitbox(at: server)
        defer { try? FileManager.default.removeItem(at: home) }
        try await Self.holdingOnly([], environment: environment)
        var sandboxed = environment
        sandboxed["AUTHKIT_SANDBOX"] = "http://127.0.0.1:8790"
        let refused = try await CLIProcess.run(["token", "setup-git", "--provider", "gitbox"], environment: sandboxed)
        #expect(
            refused.status == 64 && refused.stderr.contains("AUTHKIT_SANDBOX is set")
                && refused.stderr.contains("git's configuration was left as it was"), "\(refused)")
        let config = home.appendingPathComponent("gitconfig").path
        #expect(!FileManager.default.fileExists(atPath: config), "git's configuration was written")
        // With a real credential stored, it is set up as asked.
        try await Self.holdingOnly([(nil, "real-token")], environment: environment)
        let setup = try await CLIProcess.run(["token", "setup-git", "--provider", "gitbox"], environment: sandboxed)
        #expect(setup.status == 0, "\(setup)")
    }

    /// A credential granted none of the scopes git needs is given (the host
    /// decides), with a warning naming the sign-in that would do.
    @Test(.enabled(if: hasGit))
    func aCredentialWithoutGitsScopesIsWarnedOf() async throws {
        let server = TestHTTPServer()
        server.route("POST", "/token") { _ in
            .json(#"{"access_token":"read-only-token","token_type":"Bearer","expires_in":3600,"scope":"read_user"}"#)
        }
        try await server.start()
        defer { Task { await server.stop() } }
        let (home, environment) = try Self.gitbox(at: server, scopes: ["read_user"])
        defer { try? FileManager.default.removeItem(at: home) }
        let setup = try await CLIProcess.run(["token", "setup-git", "--provider", "gitbox"], environment: environment)
        #expect(
            setup.status == 0
                && setup.stderr.contains("none of what git needs (write_repository)")
                && setup.stderr.contains("authkit authorize --provider gitbox --scope write_repository"),
            "\(setup)")
        let filled = try await Self.fill("https", "git.example.test", environment: environment)
        #expect(filled.standardOutput.contains("password=read-only-token\n"), "\(filled)")
        #expect(filled.standardError.contains("none of what git needs"), "\(filled)")
        // A mistyped --label, where the provider holds another account, is
        // refused before git's configuration is touched: the working helper
        // stays (it was replaced by one that found nothing, and exit 0).
        let typo = try await CLIProcess.run(
            ["token", "setup-git", "--provider", "gitbox", "--label", "wrok"], environment: environment)
        #expect(
            typo.status == 64 && typo.stderr.contains("git's configuration was left as it was")
                && typo.stderr.contains("Stored for gitbox"), "\(typo)")
        let still = try await Self.fill("https", "git.example.test", environment: environment)
        #expect(still.standardOutput.contains("password=read-only-token\n"), "\(still)")
    }

    /// A home found through `XDG_CONFIG_HOME` is written into the helper:
    /// git run without that variable (a GUI, cron, sudo) looked in
    /// ~/.config/authkit and found nothing.
    @Test(.enabled(if: hasGit))
    func aHomeFoundThroughXDGIsWrittenIntoTheHelper() async throws {
        let server = TestHTTPServer()
        server.route("POST", "/token") { _ in
            .json(#"{"access_token":"xdg-token","token_type":"Bearer","expires_in":3600,"scope":"write_repository"}"#)
        }
        try await server.start()
        defer { Task { await server.stop() } }
        let (home, given) = try Self.gitbox(at: server)
        defer { try? FileManager.default.removeItem(at: home) }
        // The same home, reached as $XDG_CONFIG_HOME/authkit.
        let xdg = home.appendingPathComponent("xdg")
        try FileManager.default.createDirectory(at: xdg, withIntermediateDirectories: true)
        #expect(chmod(xdg.path, 0o700) == 0)
        let found = xdg.appendingPathComponent("authkit")
        try FileManager.default.createDirectory(at: found, withIntermediateDirectories: true)
        #expect(chmod(found.path, 0o700) == 0)
        for name in ["providers", "credentials.json"] {
            try FileManager.default.copyItem(
                at: home.appendingPathComponent(name), to: found.appendingPathComponent(name))
        }
        var environment = given
        environment["AUTHKIT_HOME"] = nil
        environment["XDG_CONFIG_HOME"] = xdg.path
        let setup = try await CLIProcess.run(["token", "setup-git", "--provider", "gitbox"], environment: environment)
        #expect(setup.status == 0, "\(setup)")
        var gitsOwn = environment
        gitsOwn["XDG_CONFIG_HOME"] = nil
        let filled = try await Self.fill("https", "git.example.test", environment: gitsOwn)
        #expect(filled.standardOutput.contains("password=xdg-token\n"), "\(filled)")
    }

    /// git is run without AuthKit's variables (a client secret among them),
    /// and its failure is said with what git said.
    @Test func gitRunsWithoutAuthKitsVariablesAndItsFailureIsSaid() async throws {
        let server = TestHTTPServer()
        try await server.start()
        defer { Task { await server.stop() } }
        let (home, base) = try Self.gitbox(at: server)
        defer { try? FileManager.default.removeItem(at: home) }
        let bin = home.appendingPathComponent("bin")
        try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
        let record = home.appendingPathComponent("git-saw")
        let fake = """
            #!/bin/sh
            { echo "ARGS: $*"; env; } >> '\(record.path)'
            [ -n "$FAIL" ] && { echo "error: could not lock config file" >&2; exit 255; }
            exit 0
            """
        try Data(fake.utf8).write(to: bin.appendingPathComponent("git"))
        try FileManager.default.setAttributes(
            [.posixPermissions: 0o755], ofItemAtPath: bin.appendingPathComponent("git").path)
        var environment = base
        environment["PATH"] = bin.path + ":" + (base["PATH"] ?? "")
        environment["AUTHKIT_PRIVATE_KEY"] = "-----BEGIN PRIVATE KEY-----not-a-key"

        let setup = try await CLIProcess.run(["token", "setup-git", "--provider", "gitbox"], environment: environment)
        #expect(setup.status == 0, "\(setup)")
        let saw = try String(contentsOf: record, encoding: .utf8)
        #expect(saw.contains("ARGS: config --global --add credential.https://git.example.test.helper \n"))
        #expect(saw.contains("ARGS: config --global --add credential.https://git.example.test.helper !AUTHKIT_HOME='"))
        // git's environment has no AuthKit variable; no secret is anywhere in what it got.
        let environmentLines = saw.split(separator: "\n").filter { !$0.hasPrefix("ARGS: ") }
        #expect(!environmentLines.contains { $0.hasPrefix("AUTHKIT_") }, "\(saw)")
        #expect(!saw.contains("client-secret-for-git") && !saw.contains("not-a-key"), "\(saw)")

        environment["FAIL"] = "1"
        let failed = try await CLIProcess.run(["token", "setup-git", "--provider", "gitbox"], environment: environment)
        #expect(
            failed.status == 1 && failed.stderr.contains("could not lock config file")
                && failed.stderr.contains("git config --global --get-all failed"), "\(failed)")
    }

    @Test func aProviderWithoutAGitHostIsRefusedByName() async throws {
        let home = try CLIProcess.home("authkit-git-none")
        defer { try? FileManager.default.removeItem(at: home) }
        let environment = [
            "AUTHKIT_HOME": home.path, "GIT_CONFIG_GLOBAL": home.appendingPathComponent("gitconfig").path,
        ]
        for arguments in [
            ["token", "setup-git", "--provider", "qiita"], ["token", "git-credential", "-p", "qiita", "get"],
        ] {
            let result = try await CLIProcess.run(arguments, environment: environment, respond: nil)
            #expect(result.status == 64 && result.stderr.contains("names no git host"), "\(arguments): \(result)")
        }
        #expect(!FileManager.default.fileExists(atPath: home.appendingPathComponent("gitconfig").path))
        // `providers show` says where git gets the token, and what it needs.
        let shown = try await CLIProcess.run(["providers", "show", "github"], environment: environment)
        #expect(
            shown.stdout.contains("git:           https://github.com, https://gist.github.com (user x-access-token)\n")
                && shown.stdout.contains("git scope:     repo or public_repo\n"), "\(shown)")
        let qiita = try await CLIProcess.run(["providers", "show", "qiita"], environment: environment)
        #expect(qiita.status == 0 && !qiita.stdout.contains("git"), "\(qiita)")
    }

    /// What git hands the helper is read with bounds: a long line is
    /// skipped, lines past 256 dropped, more than 1 MiB refused, none held;
    /// `store` changes nothing.
    @Test func theHelperReadsItsInputWithBounds() async throws {
        let server = TestHTTPServer()
        server.route("POST", "/token") { _ in
            .json(#"{"access_token":"fresh-token","token_type":"Bearer","expires_in":3600,"scope":"write_repository"}"#)
        }
        try await server.start()
        defer { Task { await server.stop() } }
        let (home, environment) = try Self.gitbox(at: server)
        defer { try? FileManager.default.removeItem(at: home) }
        func helper(_ operation: String, _ input: String) async throws -> ChildProcess.Outcome {
            try await ChildProcess.run(
                CLIProcess.binary.path, ["token", "git-credential", "--provider", "gitbox", operation],
                environment: environment, input: input)
        }
        // A server's long WWW-Authenticate (git passes it on as wwwauth[]) is
        // skipped, not a reason to answer nothing; past 1 MiB, the request is refused.
        let long = try await helper(
            "get",
            "protocol=https\nhost=git.example.test\nwwwauth[]=Bearer " + String(repeating: "a", count: 64 << 10)
                + "\n" + String(repeating: "capability[]=authtype\n", count: 400) + "\n")
        #expect(
            long.exit.status == 0 && long.standardOutput.contains("password=fresh-token\n"), "\(long.standardError)")
        // The expiry goes with it (git 2.41 and later drop an expired password).
        #expect(long.standardOutput.contains("\npassword_expiry_utc="), "\(long.standardOutput)")
        let before = try Data(contentsOf: home.appendingPathComponent("credentials.json"))
        let flood = try await helper("get", String(repeating: "x=y\n", count: 300_000))
        #expect(flood.exit.status == 65 && flood.standardError.contains("more than 1 MiB"), "\(flood.standardError)")
        let store = try await helper(
            "store", "protocol=https\nhost=git.example.test\nusername=oauth2\npassword=typed-by-someone\n\n")
        #expect(store.exit.status == 0 && store.standardOutput.isEmpty)
        #expect(try Data(contentsOf: home.appendingPathComponent("credentials.json")) == before)
        #expect(server.requests(to: "/token").count == 1, "one refresh, for the first get")
    }
}
