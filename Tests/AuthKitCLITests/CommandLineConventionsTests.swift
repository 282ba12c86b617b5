import AuthKit
import AuthKitTestSupport
import Foundation
import Testing

@testable import authkit

/// What every command does alike: usage errors, hints that name only flags the command takes, help that fits and pastes, suggestions, the home directory, a closed pipe, completion.
@Suite(.serialized) struct CommandLineConventionsTests: CLIFixture {
    /// A --timeout too large for the deadline arithmetic (it trapped) or not
    /// positive is a usage error in every command that waits, naming the
    /// range; a negative one too (it was "Missing value for '--timeout'",
    /// the parser taking `-1` for an option), and so is a negative port or size.
    @Test func aTimeoutOutOfRangeIsAUsageError() async throws {
        let home = try home()
        for command in [
            ["authorize", "--provider", "qiita", "--client-id", "c", "--no-browser"],
            ["request", "--provider", "qiita", "https://qiita.com/api/v2/authenticated_user"],
            ["sandbox", "try", "--provider", "qiita"],
            ["providers", "add", "idp", "--issuer", "https://idp.example"],
        ] {
            for value in ["9223372036854775807", "604801", "0", "-1"] {
                let result = try await CLIProcess.run(
                    command + ["--timeout", value], environment: ["AUTHKIT_HOME": home.path])
                #expect(
                    result.status == 64
                        && result.stderr.contains("--timeout takes 1–604800 seconds (a week at most); got \(value)."),
                    "\(command[0]) --timeout \(value): exit \(result.status): \(result.stderr)")
            }
        }
        for (command, expected) in [
            (
                ["authorize", "--provider", "qiita", "--client-id", "c", "--no-browser", "--port", "-1"],
                "--port takes 1–65535; got -1."
            ),
            (["sandbox", "serve", "--provider", "qiita", "--port", "-1"], "--port takes 0–65535; got -1."),
            (["sandbox", "try", "--provider", "qiita", "--port", "-8790"], "--port takes 1–65535; got -8790."),
            (
                ["request", "--provider", "qiita", "--max-size", "-1", "https://qiita.com/api/v2/items"],
                "--max-size takes a positive number of bytes."
            ),
        ] {
            let result = try await CLIProcess.run(command, environment: ["AUTHKIT_HOME": home.path])
            #expect(
                result.status == 64 && result.stderr.contains(expected),
                "\(command): exit \(result.status): \(result.stderr)")
        }
    }

    /// Two flags that each choose what is printed or done are refused
    /// together, each named: before, `token show --field F --json` printed
    /// the field raw, ignoring --json, and `token refresh --due --provider`
    /// was told to give one of the two flags it had given.
    @Test func flagsThatExcludeEachOtherAreRefusedTogether() async throws {
        let home = try home()
        try Data(CLIBoundaryTests.storedQiita.utf8).write(to: home.appendingPathComponent("credentials.json"))
        for (command, message) in [
            (
                ["token", "show", "--provider", "qiita", "--field", "access_token", "--json"],
                "--field prints one field raw and --json the whole credential; give one of them."
            ),
            (
                ["token", "refresh", "--provider", "qiita", "--due"],
                "--due refreshes every credential that is due, --provider one credential now; give one of them."
            ),
            (["token", "refresh"], "Give --provider ID to refresh one credential, or --due"),
            // One provider's client secret went to every provider's token endpoint.
            (
                ["token", "refresh", "--due", "--client-secret", "one-providers-secret"],
                "--client-id, --client-secret, --private-key and --placeholder are one provider's; --due refreshes every provider's credentials"
            ),
            // One provider's key signed the assertions sent to every provider.
            (
                ["token", "refresh", "--due", "--private-key", "/nonexistent/one-providers-key.pem"],
                "--private-key and --placeholder are one provider's"
            ),
            // Spaces only ('' names the account without a label, as everywhere).
            (["token", "refresh", "--provider", "qiita", "--label", "  "], "--label takes a name such as work"),
        ] {
            let result = try await CLIProcess.run(command, environment: ["AUTHKIT_HOME": home.path])
            #expect(
                result.status == 64 && result.stderr.contains(message),
                "\(command): exit \(result.status): \(result.stderr)")
            #expect(result.stdout.isEmpty, "\(command) printed \(result.stdout)")
        }
    }

    /// No message sends a control character to the terminal, whatever it
    /// quotes: an option as typed (argument-parser's own errors printed it
    /// raw), or a path from `$XDG_CONFIG_HOME` (the permission warnings did).
    /// `$AUTHKIT_HOME` with one is refused, without repeating it.
    @Test func messagesWriteOutControlCharactersTheyQuote() async throws {
        let config = try home().appendingPathComponent("h\u{1B}[2Jx")
        let home = config.appendingPathComponent("authkit")
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        chmod(home.path, 0o755)
        try Data(#"{"version":1,"credentials":[]}"#.utf8).write(to: home.appendingPathComponent("credentials.json"))
        let environment = ["XDG_CONFIG_HOME": config.path]
        let option = try await CLIProcess.run(["token", "list", "--x\u{1B}[2J"], environment: environment)
        #expect(
            option.status == 64 && option.stderr.contains(#"Unknown option '--x\u{1B}[2J'"#),
            "\(option.stderr.debugDescription)")
        let warning = try await CLIProcess.run(["token", "list"], environment: environment)
        #expect(
            warning.status == 0 && warning.stderr.contains(#"h\u{1B}[2Jx/authkit is accessible by other users"#),
            "\(warning.stderr.debugDescription)")
        let refused = try await CLIProcess.run(["token", "list"], environment: ["AUTHKIT_HOME": home.path])
        #expect(
            refused.status == 64
                && refused.stderr.contains("AUTHKIT_HOME holds a line break or other control character"),
            "\(refused.stderr.debugDescription)")
        for result in [option, warning, refused] {
            #expect(
                !result.stderr.contains("\u{1B}") && !result.stdout.contains("\u{1B}"),
                "\(result.stderr.debugDescription)")
        }
    }

    /// A relative `AUTHKIT_HOME` (or one starting with a `~` no shell
    /// expanded) would be another store in every directory: refused with
    /// exit 64 before anything is read or created; help still works.
    @Test func aRelativeHomeIsRefused() async throws {
        let directory = TemporaryDirectory.url("authkit-relative-home")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        for value in ["relative/dir", "~/.config/authkit"] {
            for command in [
                ["token", "list"], ["authorize", "--provider", "qiita", "--client-id", "c", "--manual"],
                ["providers", "list"],
            ] {
                let result = try await CLIProcess.run(
                    command, environment: ["AUTHKIT_HOME": value], workingDirectory: directory)
                #expect(
                    result.status == 64 && result.stderr.contains("AUTHKIT_HOME is '\(value)', a relative path")
                        && result.stderr.contains("Set it to an absolute path"),
                    "\(command) with \(value): \(result.stderr)")
                #expect(result.stderr.contains("write $HOME instead") == value.hasPrefix("~"), "\(result.stderr)")
            }
        }
        // An absolute one with an env file's slip, a space or a line break at
        // its end, named another, empty, directory, used without a word.
        for (value, expected) in [
            (directory.path + " ", "ends with a space"), (directory.path + "\n", "holds a line break"),
        ] {
            for command in [["token", "list"], ["authorize", "--provider", "qiita", "--client-id", "c", "--manual"]] {
                let result = try await CLIProcess.run(
                    command, environment: ["AUTHKIT_HOME": value], workingDirectory: directory)
                #expect(
                    result.status == 64 && result.stderr.contains(expected),
                    "\(command) with \(value.debugDescription): \(result.stderr)")
            }
            #expect(!FileManager.default.fileExists(atPath: value), "\(value.debugDescription) was created")
        }
        // The default directory under a relative HOME (a service's or a
        // script's environment) is the same fault; an absolute
        // XDG_CONFIG_HOME or AUTHKIT_HOME takes its place, and is used.
        for command in [["token", "list"], ["providers", "list"]] {
            let result = try await CLIProcess.run(
                command, environment: ["HOME": "relative"], workingDirectory: directory)
            #expect(
                result.status == 64 && result.stderr.contains("HOME is 'relative', a relative path")
                    && result.stderr.contains("Set HOME, or AUTHKIT_HOME, to an absolute path"),
                "\(command): \(result.stderr)")
        }
        let elsewhere = TemporaryDirectory.url("authkit-relative-home-xdg")
        defer { try? FileManager.default.removeItem(at: elsewhere) }
        for environment in [
            ["HOME": "relative", "XDG_CONFIG_HOME": elsewhere.path],
            ["HOME": "relative", "AUTHKIT_HOME": elsewhere.path],
        ] {
            let result = try await CLIProcess.run(
                ["token", "list"], environment: environment, workingDirectory: directory)
            #expect(result.status == 0, "\(environment): \(result.stderr)")
        }
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty,
            "nothing was created in the working directory")
        let help = try await CLIProcess.run(
            ["token", "list", "--help"], environment: ["AUTHKIT_HOME": "relative"], workingDirectory: directory)
        #expect(help.status == 0 && help.stdout.contains("USAGE"), "\(help.stderr)")
    }

    /// A home taken by a file (or below one), or a link to nothing: `token
    /// list` said "No stored credentials" and exited 0, hiding that every
    /// sign-in was elsewhere (and a sign-in could not be stored).
    /// Now refused with exit 64, naming the path, from AUTHKIT_HOME or the
    /// default under XDG_CONFIG_HOME.
    @Test func aHomeTakenByAFileIsRefused() async throws {
        let directory = TemporaryDirectory.url("authkit-file-home")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("authkit")
        try Data("not a directory".utf8).write(to: file)
        // A link to a directory that is not there (a disk not mounted).
        let dangling = directory.appendingPathComponent("linked")
        let missing = directory.appendingPathComponent("unmounted/authkit").path
        try FileManager.default.createSymbolicLink(atPath: dangling.path, withDestinationPath: missing)
        let cases: [([String: String], String)] = [
            (
                ["AUTHKIT_HOME": dangling.path],
                "AUTHKIT_HOME (\(dangling.path)) is a symbolic link to \(missing), which does not exist"
            ),
            (["AUTHKIT_HOME": file.path], "AUTHKIT_HOME (\(file.path)) is a file, not a directory."),
            (
                ["AUTHKIT_HOME": file.path + "/below"],
                "AUTHKIT_HOME (\(file.path)/below) cannot be a directory: a part of its path is a file."
            ),
            (
                ["XDG_CONFIG_HOME": directory.path, "HOME": directory.path],
                "AuthKit's directory \(file.path) is a file, not a directory."
            ),
        ]
        for (environment, message) in cases {
            let result = try await CLIProcess.run(["token", "list"], environment: environment)
            #expect(
                result.status == 64 && result.stderr.contains(message) && result.stdout.isEmpty,
                "\(environment): \(result.stderr)")
        }
        #expect(try String(contentsOf: file, encoding: .utf8) == "not a directory")
    }

    /// `request -o ''` names what is missing (it failed renaming into
    /// nothing, exit 74); a misspelt option argument-parser recognises gets
    /// its suggestion alone, not curl's advice after it.
    @Test func requestsSmallMistakesAreSaidPlainly() async throws {
        let home = try home()
        let environment = ["AUTHKIT_HOME": home.path]
        let empty = try await CLIProcess.run(
            ["request", "--provider", "github", "-o", "", "https://api.github.com/user"], environment: environment)
        #expect(empty.status == 64 && empty.stderr.contains("-o needs a file name"), "\(empty.stderr)")
        let misspelt = try await CLIProcess.run(
            ["request", "--provder", "github", "https://api.github.com/user"], environment: environment)
        #expect(
            misspelt.status == 64 && misspelt.stderr.contains("Did you mean '--provider'?")
                && !misspelt.stderr.contains("curl's"), "\(misspelt.stderr)")
    }

    /// OAuth 1.0a has no scopes: `--scope` with such a provider is refused
    /// before anything is asked (it was sent nowhere, and the credential
    /// had whatever access the app has), naming what sets the access.
    @Test func scopesAreRefusedForOAuth1() async throws {
        let home = try home()
        let result = try await CLIProcess.run(
            ["authorize", "--provider", "twitter", "--manual", "--scope", "read"],
            environment: [
                "AUTHKIT_HOME": home.path, "AUTHKIT_TWITTER_CLIENT_ID": "k", "AUTHKIT_TWITTER_CLIENT_SECRET": "s",
            ])
        #expect(
            result.status == 64 && result.stderr.contains("--scope has no meaning for twitter")
                && result.stderr.contains("x_auth_access_type") && result.stdout.isEmpty, "\(result.stderr)")
    }

    /// Hints name the real path and only flags the command takes.
    @Test func hintsAreHonest() async throws {
        let home = try home()
        let noClient = try await CLIProcess.run(
            ["authorize", "--provider", "qiita-team", "--manual"], environment: ["AUTHKIT_HOME": home.path])
        #expect(noClient.status == 64)
        #expect(
            noClient.stderr.contains("Pass --client-id") && noClient.stderr.contains("\(home.path)/config.json"),
            "\(noClient.stderr)")
        #expect(!noClient.stderr.contains("$AUTHKIT_HOME"))
        let noTeam = try await CLIProcess.run(
            ["authorize", "--provider", "qiita-team", "--manual", "--client-id", "c"],
            environment: ["AUTHKIT_HOME": home.path])
        #expect(noTeam.stderr.contains("Pass --placeholder team=…"), "\(noTeam.stderr)")
        try Data(#"{"providers": {"qiita-tem": {"clientID": "mine"}}}"#.utf8).write(
            to: home.appendingPathComponent("config.json"))
        let misspelt = try await CLIProcess.run(
            ["authorize", "--provider", "qiita-team", "--manual"], environment: ["AUTHKIT_HOME": home.path])
        #expect(
            misspelt.status == 64
                && misspelt.stderr.contains(
                    "config.json has settings under 'qiita-tem', which no provider reads: did you mean 'qiita-team'?"),
            "\(misspelt.stderr)")
        // `providers list`, where one looks at what is configured, names every such entry.
        try Data(
            #"{"providers": {"qiita-tem": {"clientID": "mine"}, "github": {"clientID": "g"}, "zzzzzz": {"clientID": "z"}}}"#
                .utf8
        )
        .write(to: home.appendingPathComponent("config.json"))
        let listed = try await CLIProcess.run(["providers", "list"], environment: ["AUTHKIT_HOME": home.path])
        #expect(
            listed.status == 0
                && listed.stderr.contains(
                    "config.json has settings under 'qiita-tem', which no provider reads: did you mean 'qiita-team'?")
                && listed.stderr.contains("settings under 'zzzzzz', which no provider reads.")
                && !listed.stderr.contains("'github'"), "\(listed.stderr)")
        try Data(#"{"providers": {"qiita-team": {"clientID": "mine", "placeholders": {"tema": "acme"}}}}"#.utf8).write(
            to: home.appendingPathComponent("config.json"))
        let configTypo = try await CLIProcess.run(
            ["authorize", "--provider", "qiita-team", "--manual"], environment: ["AUTHKIT_HOME": home.path])
        #expect(
            configTypo.status == 65
                && configTypo.stderr.contains(
                    "field 'providers.qiita-team.placeholders.tema': Qiita Team has no placeholder 'tema'; it takes: team."
                ),
            "\(configTypo.stderr)")
        try Data(#"{"providers": {"box": {"clientID": "mine"}}}"#.utf8).write(
            to: home.appendingPathComponent("config.json"))
        let another = try await CLIProcess.run(
            ["authorize", "--provider", "x", "--manual"], environment: ["AUTHKIT_HOME": home.path])
        #expect(
            another.status == 64 && !another.stderr.contains("did you mean"),
            "box is a provider, not a misspelt x: \(another.stderr)")
        try FileManager.default.removeItem(at: home.appendingPathComponent("config.json"))
        let typo = try await CLIProcess.run(
            ["authorize", "--provider", "qiita-team", "--manual", "--client-id", "c", "--placeholder", "tema=acme"],
            environment: ["AUTHKIT_HOME": home.path])
        #expect(
            typo.status == 64
                && typo.stderr.contains("--placeholder: Qiita Team has no placeholder 'tema'; it takes: team."),
            "\(typo.stderr)")
        let none = try await CLIProcess.run(
            ["authorize", "--provider", "qiita", "--manual", "--client-id", "c", "--placeholder", "team=acme"],
            environment: ["AUTHKIT_HOME": home.path])
        #expect(
            none.status == 64 && none.stderr.contains("--placeholder: Qiita has no placeholder 'team'; it takes none."),
            "\(none.stderr)")
        let remote = try await CLIProcess.run(
            [
                "authorize", "--provider", "github", "--client-id", "c", "--client-secret", "s", "--redirect-uri",
                "http://app.example/cb",
            ],
            environment: ["AUTHKIT_HOME": home.path])
        #expect(
            remote.status == 64 && remote.stderr.contains("--manual")
                && !remote.stderr.lowercased().contains("manualuseragent"),
            "\(remote.stderr)")
        for command in [
            ["token", "show"], ["authorize", "--client-id", "c"], ["request", "https://qiita.com/api/v2/items"],
        ] {
            let emptyLabel = try await CLIProcess.run(
                command + ["--provider", "qiita", "--label", " "], environment: ["AUTHKIT_HOME": home.path])
            #expect(
                emptyLabel.status == 64 && emptyLabel.stderr.contains("--label takes a name such as work"),
                "\(command): \(emptyLabel.stderr)")
        }
        // An empty provider id (an unset variable) drew unrelated suggestions
        // ("did you mean 'x' or 'box'?") or "No stored credential for ."
        for command in [
            ["token", "show", "--provider", ""], ["token", "list", "--provider", " "],
            ["token", "refresh", "--provider", ""],
            ["authorize", "--provider", ""], ["sandbox", "serve", "--provider", ""], ["providers", "show", ""],
        ] {
            let empty = try await CLIProcess.run(command, environment: ["AUTHKIT_HOME": home.path])
            #expect(
                empty.status == 64 && empty.stderr.contains("takes a provider id such as github; got an empty one")
                    && !empty.stderr.contains("Did you mean"), "\(command): \(empty.stderr)")
        }
        // A new account's label must be typeable as shown: a pasted tab or
        // line break was stored and listed as `x\u{9}y`, which no --label then
        // matched; spaces around it made a look-alike second account.
        for (label, message) in [
            ("x\ty", "--label 'x\\u{9}y' holds a control or invisible character"),
            ("a\u{200B}b", "--label 'a\\u{200B}b' holds a control or invisible character"),
            (" work", "--label ' work' begins or ends with a space; give --label work."),
            // Hints that name an account cut it at 80 characters: it could not be pasted back.
            (String(repeating: "a", count: 81), "--label is 81 characters long; use a name of at most 80"),
        ] {
            let refused = try await CLIProcess.run(
                ["authorize", "--provider", "qiita", "--client-id", "c", "--manual", "--label", label],
                environment: ["AUTHKIT_HOME": home.path])
            #expect(refused.status == 64 && refused.stderr.contains(message), "\(label): \(refused.stderr)")
        }
        let longest = try await CLIProcess.run(
            [
                "authorize", "--provider", "qiita", "--client-id", "c", "--manual", "--label",
                String(repeating: "a", count: 80),
            ],
            environment: ["AUTHKIT_HOME": home.path], timeout: 20)
        #expect(
            longest.stderr.contains("no client secret is configured") && !longest.stderr.contains("characters long"),
            "\(longest.stderr)")
        // An account stored with such a label before can still be named, to delete it.
        let oddLabel = "x\ty"
        try await FileCredentialStore(file: home.appendingPathComponent("credentials.json"))
            .save(Credential(providerID: "qiita", label: oddLabel, accessToken: "t"))
        let deleted = try await CLIProcess.run(
            ["token", "delete", "--provider", "qiita", "--label", oddLabel], environment: ["AUTHKIT_HOME": home.path])
        #expect(deleted.status == 0, "\(deleted.stderr)")
        let emptyScope = try await CLIProcess.run(
            ["authorize", "--provider", "qiita", "--client-id", "c", "--scope", ""],
            environment: ["AUTHKIT_HOME": home.path])
        #expect(
            emptyScope.status == 64 && emptyScope.stderr.contains("--scope takes a scope name"), "\(emptyScope.stderr)")
        // RFC 6749 §3.3 scope tokens: two names in one flag are shown split
        // into flags; a pasted line break is refused (and shown escaped)
        // rather than sent as `%0A` for the provider to refuse after the browser.
        for (value, message) in [
            (
                "repo user:email",
                "--scope takes one scope; give each with its own --scope (--scope repo --scope user:email)."
            ),
            ("read\nwrite", "--scope 'read\\u{A}write' holds a control character"),
            ("a\"b", "holds a control character, a non-ASCII one, '\"' or '\\'"),
            (" repo", "--scope ' repo' begins or ends with a space; give --scope repo."),
        ] {
            let result = try await CLIProcess.run(
                ["authorize", "--provider", "qiita", "--client-id", "c", "--no-browser", "--scope", value],
                environment: ["AUTHKIT_HOME": home.path])
            #expect(
                result.status == 64 && result.stderr.contains(message) && !result.stderr.contains("Open this URL"),
                "\(value): \(result.stderr)")
        }
        // Over SSH with no client id, the client id is told first: every way
        // in needs it, so advice about --manual would only lead to this error next.
        let headless = try await CLIProcess.run(
            ["authorize", "--provider", "qiita"], environment: ["AUTHKIT_HOME": home.path, "SSH_TTY": "/dev/pts/3"])
        #expect(
            headless.status == 64 && headless.stderr.contains("no client id is configured")
                && !headless.stderr.contains("--manual"), "\(headless.stderr)")
    }

    @Test func versionAndSuggestions() async throws {
        let home = try home()
        let version = try await CLIProcess.run(["--version"], environment: ["AUTHKIT_HOME": home.path])
        #expect(version.status == 0 && version.stdout.contains("."))
        let typo = try await CLIProcess.run(["tokn", "list"], environment: ["AUTHKIT_HOME": home.path])
        #expect(typo.status == 64 && typo.stderr.contains("Did you mean 'authkit token'?"), "\(typo.stderr)")
        for group in ["token", "providers"] {
            let help = try await CLIProcess.run([group, "--help"], environment: ["AUTHKIT_HOME": home.path])
            #expect(help.stdout.contains("Examples:"), "\(group) --help has no examples")
        }
        // A misspelt required option is named as such: argument-parser said
        // only that the real one was missing.
        for (command, message) in [
            (["authorize", "--provder", "github"], "Unknown option '--provder'. Did you mean '--provider'?"),
            (
                ["providers", "add", "acme", "--isuer", "https://x.example"],
                "Unknown option '--isuer'. Did you mean '--issuer'?"
            ),
            (["authorize", "-v"], "Missing expected argument '--provider <id>'"),
            // --help is argument-parser's, not among the options it suggests from.
            (["token", "show", "--hlep"], "Unknown option '--hlep'. Did you mean '--help'?"),
            // An option every command takes, before the command's name.
            (["-v", "token", "list"], "Unknown option '-v'. It belongs after the command: authkit token … -v"),
        ] {
            let result = try await CLIProcess.run(command, environment: ["AUTHKIT_HOME": home.path])
            #expect(result.status == 64 && result.stderr.contains(message), "\(command): \(result.stderr)")
        }
        // Neither hint where it would mislead: `--kep` is no --help, and the sandbox takes no --sandbox.
        for (command, unsaid) in [
            (["token", "delete", "--provider", "x", "--kep"], "Did you mean '--help'"),
            (["--sandbox", "http://127.0.0.1:1", "sandbox", "serve", "-p", "qiita"], "belongs after"),
        ] {
            let result = try await CLIProcess.run(command, environment: ["AUTHKIT_HOME": home.path])
            #expect(
                result.status == 64 && result.stderr.contains("Unknown option") && !result.stderr.contains(unsaid),
                "\(command): \(result.stderr)")
        }
    }

    /// A reader that goes away (`2>&1 | head -1`) is no crash: the sign-in
    /// still ends as it would have (here: the timeout, exit 5), though its
    /// status line and error had nowhere to go.
    @Test func aClosedPipeIsNotACrash() async throws {
        let home = try home()
        let shell = try await ChildProcess.run(
            "/bin/bash",
            [
                "-c",
                #""$0" authorize --provider microsoft --client-id c --no-browser --timeout 1 2>&1 | head -1 >/dev/null; exit ${PIPESTATUS[0]}"#,
                CLIProcess.binary.path,
            ], environment: ["AUTHKIT_HOME": home.path, "HOME": home.path, "PATH": "/usr/bin:/bin"])
        #expect(
            shell.exit.status == 5,
            "authkit ended with \(shell.exit.status) (132: a trap on the closed pipe)")
    }

    /// Every command, as the groups' help lists them (a list written out
    /// by hand had missed seven), groups and the root (`[]`) included;
    /// `isGroup` for those whose help lists subcommands.
    static func everyCommand(home: URL) async throws -> [(words: [String], isGroup: Bool)] {
        var commands: [(words: [String], isGroup: Bool)] = [([], true)]
        var index = 0
        while index < commands.count {
            let help = try await CLIProcess.run(
                commands[index].words + ["--help"], environment: ["AUTHKIT_HOME": home.path, "COLUMNS": "80"])
            let parts = help.stdout.components(separatedBy: "SUBCOMMANDS:")
            commands[index].isGroup = parts.count > 1
            for line in (parts.dropFirst().first ?? "").split(separator: "\n")
            where line.hasPrefix("  ") && !line.hasPrefix("   ") {
                let name = line.dropFirst(2).prefix { $0 != " " }
                if !name.isEmpty, name.allSatisfy({ $0.isLowercase || $0 == "-" }), name != "help" {
                    commands.append((commands[index].words + [String(name)], false))
                }
            }
            index += 1
        }
        let names = commands.map { $0.words.joined(separator: " ") }
        #expect(commands.count >= 27, "\(names)")
        #expect(names.contains("token move") && names.contains("sandbox try") && names.contains("sign"), "\(names)")
        return commands
    }

    /// docs/command-line.md has a section for every command, and its table
    /// at the top links each one (five had gone missing from the table).
    @Test func theReferenceHasEveryCommand() async throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..")
        let reference = try String(contentsOf: root.appendingPathComponent("docs/command-line.md"), encoding: .utf8)
        func words(_ text: Substring) -> [String] {
            text.split(whereSeparator: { !$0.isLetter && $0 != "-" }).map(String.init)
        }
        let headings = reference.split(separator: "\n").filter { $0.hasPrefix("## ") }.map { words($0.dropFirst(3)) }
        // Its rows: `[`name …`](#anchor)`; one may name several (`providers list` / `show ID`).
        let rows = reference[..<(reference.range(of: "## Building")?.lowerBound ?? reference.endIndex)]
            .split(separator: "\n").filter { $0.hasPrefix("| [`") }.map { words($0.prefix { $0 != "]" }) }
        let commands = try await Self.everyCommand(home: try home())
        // One order for the `token` commands in `token --help`, the table
        // and the sections (three orders had grown apart): a reader who
        // looks one up finds it where the other two put it.
        let tokenCommands = commands.filter { $0.words.first == "token" && !$0.isGroup }.map { $0.words.last! }
        func position(of name: String, in entries: [[String]]) -> Int {
            entries.firstIndex { $0.first == "token" && $0.contains(name) } ?? -1
        }
        for entries in [rows, headings] {
            let positions = tokenCommands.map { position(of: $0, in: entries) }
            #expect(
                positions == positions.sorted() && !positions.contains(-1),
                "token --help lists \(tokenCommands); docs/command-line.md has them at \(positions)")
        }
        for (command, isGroup) in commands where !isGroup {
            let name = command.joined(separator: " ")
            // `providers list, show, validate` is one section for three.
            #expect(
                headings.contains { $0.first == command.first && $0.contains(command.last!) },
                "docs/command-line.md has no section for authkit \(name)")
            #expect(
                rows.contains { $0.first == command.first && $0.contains(command.last!) },
                "docs/command-line.md's table does not list authkit \(name)")
        }
    }

    /// Every line of every --help fits 80 columns, except argument-parser's
    /// own usage line, and no example is wrapped: argument-parser breaks a
    /// long line at the terminal's width, and an example broken so is no
    /// longer a command one can paste. An indented example line goes on only
    /// after a trailing backslash.
    @Test func helpExamplesFitEightyColumns() async throws {
        let home = try home()
        for command in try await Self.everyCommand(home: home).map(\.words) {
            let help = try await CLIProcess.run(
                command + ["--help"], environment: ["AUTHKIT_HOME": home.path, "COLUMNS": "80"])
            #expect(help.status == 0, "\(command): \(help.stderr)")
            // The usage line fits too (some are written by hand, shorter
            // than argument-parser's), and names only flags the command has.
            let usage = help.stdout.split(separator: "\n").first { $0.hasPrefix("USAGE: ") } ?? ""
            #expect(usage.count < 80, "\(command): \(usage)")
            for flag in usage.split(separator: " ") where flag.hasPrefix("--") || flag.hasPrefix("[--") {
                let name = flag.trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
                #expect(
                    help.stdout.contains("  \(name) ") || help.stdout.contains(", \(name) "),
                    "\(command): the usage names \(name), which it lacks")
            }
            var inDiscussion = false
            var previous: Substring = ""
            for line in help.stdout.split(separator: "\n", omittingEmptySubsequences: false) {
                if line.hasPrefix("OVERVIEW") { inDiscussion = true }
                if line.hasPrefix("USAGE") || line.hasPrefix("OPTIONS") || line.hasPrefix("ARGUMENTS")
                    || line.hasPrefix("SUBCOMMANDS")
                {
                    inDiscussion = false
                }
                guard inDiscussion else { continue }
                #expect(line.count < 80, "\(command): a line of \(line.count) columns: \(line)")
                #expect(line.trimmingCharacters(in: .whitespaces) != "\\", "\(command): a lone backslash")
                let example = previous.hasPrefix("  ") && (previous.contains("authkit ") || previous.contains("curl "))
                #expect(
                    !(example && !previous.hasSuffix("\\") && !line.isEmpty && !line.hasPrefix(" ")),
                    "\(command): an example broken at the terminal's width: \(previous) / \(line)")
                // "Examples:" is a heading: set off from the paragraph before it.
                #expect(
                    !(line.hasPrefix("Example") && !previous.isEmpty && !previous.hasPrefix("OVERVIEW")),
                    "\(command): '\(line)' runs on from '\(previous)'")
                previous = line
            }
        }
    }

    /// `--provider <TAB>` offers provider ids, as the completion scripts ask
    /// for them (`authkit ---completion SUBCOMMAND -- --provider WORD CURSOR
    /// WORDS…`, what `--generate-completion-script bash` runs): the bundled
    /// ids, the user's, those of a `--providers-dir` already typed; and
    /// nothing else on either stream, which the shell would show as candidates.
    @Test func providerIDsComplete() async throws {
        let home = try home()
        let mine = home.appendingPathComponent("mine")
        try FileManager.default.createDirectory(at: mine, withIntermediateDirectories: true)
        try Data(
            #"{"id": "gizmo", "protocol": "oauth2", "authorization": {"url": "https://gizmo.example/a"}, "token": {"url": "https://gizmo.example/t"}}"#
                .utf8
        )
        .write(to: mine.appendingPathComponent("gizmo.json"))
        func complete(_ subcommand: [String], _ option: String, _ words: [String]) async throws -> [String] {
            let result = try await CLIProcess.run(
                ["---completion"] + subcommand + ["--", option, String(words.count - 1), String(words.last!.count)]
                    + words,
                environment: ["AUTHKIT_HOME": home.path])
            #expect(result.status == 0 && result.stderr.isEmpty, "\(result.stderr)")
            return result.stdout.split(separator: "\n").map(String.init)
        }
        let github = try await complete(
            ["token", "show"], "--provider", ["authkit", "token", "show", "--provider", "gi"])
        #expect(
            github.contains("github") && github.contains("gitlab") && github.allSatisfy { $0.hasPrefix("gi") },
            "\(github)")
        let withDirectory = try await complete(
            ["authorize"], "--provider", ["authkit", "authorize", "--providers-dir", mine.path, "--provider", "gi"])
        #expect(withDirectory.contains("gizmo") && withDirectory.contains("github"), "\(withDirectory)")
        let shown = try await complete(["providers", "show"], "positional@0", ["authkit", "providers", "show", "qii"])
        #expect(shown == ["qiita", "qiita-team"], "\(shown)")
        let sandboxed = try await complete(
            ["sandbox", "serve"], "--provider", ["authkit", "sandbox", "serve", "--provider", "x"])
        #expect(sandboxed == ["x"], "\(sandboxed)")

        // `--label <TAB>`: the labels stored for the provider on the line, read without the lock or any write.
        let store = FileCredentialStore(file: home.appendingPathComponent("credentials.json"))
        for label in ["work", "wiki-bot", "personal"] {
            try await store.save(Credential(providerID: "qiita", label: label, accessToken: "t-\(label)"))
        }
        try await store.save(Credential(providerID: "github", label: "wander", accessToken: "t"))
        let before = try FileManager.default.contentsOfDirectory(atPath: home.path).sorted()
        let labels = try await complete(
            ["token", "show"], "--label", ["authkit", "token", "show", "--provider", "qiita", "--label", "w"])
        #expect(labels == ["wiki-bot", "work"], "\(labels)")
        let refreshLabels = try await complete(
            ["token", "refresh"], "--label", ["authkit", "token", "refresh", "-p", "github", "--label", ""])
        #expect(refreshLabels == ["wander"], "\(refreshLabels)")
        let noProvider = try await complete(["request"], "--label", ["authkit", "request", "--label", ""])
        #expect(noProvider.isEmpty && !labels.joined().contains("t-"), "\(noProvider)")
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: home.path).sorted() == before,
            "completion wrote nothing")
    }
}
