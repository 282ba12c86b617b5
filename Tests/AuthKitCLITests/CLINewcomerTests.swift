import AuthKitTestSupport
import AuthKit
@testable import authkit
import Foundation
import Testing

/// The command line as a newcomer meets it: validation that lists every
/// problem, hints that name only flags the command takes, help that pastes,
/// and scripts that get what they expect.
@Suite(.serialized) struct CLINewcomerTests {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..").standardized

    func home() throws -> URL {
        let home = try CLIProcess.home("authkit-newcomer")
        return home
    }

    /// A home whose qiita.json sends to `server`, with a Qiita credential stored.
    func signedInToQiita(at server: TestHTTPServer) throws -> URL {
        let home = try home()
        let bundled = try String(contentsOf: root.appendingPathComponent("providers/qiita.json"), encoding: .utf8)
        try bundled.replacingOccurrences(of: "https://qiita.com", with: server.baseURL)
            .write(to: home.appendingPathComponent("providers/qiita.json"), atomically: true, encoding: .utf8)
        try Data(CLIBoundaryTests.storedQiita.utf8).write(to: home.appendingPathComponent("credentials.json"))
        return home
    }

    /// A home signed in to Qiita at `server`, whose items endpoint answers
    /// `{}`; the environment `request` needs there; the endpoint's URL.
    func qiitaItems(at server: TestHTTPServer) throws -> (home: URL, environment: [String: String], url: String) {
        server.route("POST", "/api/v2/items") { _ in .json("{}") }
        let home = try signedInToQiita(at: server)
        return (home, ["AUTHKIT_HOME": home.path, "AUTHKIT_QIITA_CLIENT_ID": "c", "AUTHKIT_QIITA_CLIENT_SECRET": "s"], "\(server.baseURL)/api/v2/items")
    }

    @Test func validateSkipsTheSchemaExplainsDirectoriesAndKeepsPathsAsGiven() async throws {
        let home = try home()
        let bad = #"{"id": "bad", "protocol": "oauth2", "pkce": "plain", "authorization": {"url": "https://a.example/x"}, "token": {"url": "http://a.example/t"}}"#
        try Data(bad.utf8).write(to: home.appendingPathComponent("providers/bad.json"))
        let result = try await CLIProcess.run(["providers", "validate", "providers/schema.json", "providers/qiita.json", "\(home.path)/providers", "providers/../providers/github.json",
                                         "\(home.path)/providers/bad.json"],
                                        environment: ["AUTHKIT_HOME": home.path], workingDirectory: root)
        #expect(result.status == 65)
        #expect(result.stdout.contains("providers/schema.json: skipped"))
        #expect(result.stdout.contains("providers/qiita.json: ok (qiita, oauth2)"))
        #expect(result.stdout.contains("providers/../providers/github.json: ok"), "a passing path is printed as given")
        #expect(result.stdout.contains("\(home.path)/providers: is a directory; name the descriptor files in it"))
        #expect(!result.stdout.contains("NSCocoaErrorDomain"))
        #expect(result.stdout.contains("field 'pkce': 'plain' is not allowed; use one of: none, S256, required."))
        #expect(result.stdout.contains("field 'token.url':"), "every problem of the file, not the first")

        // A valid file authkit would refuse to read (others can write to it) is a problem too.
        let shared = home.appendingPathComponent("providers/shared.json")
        try Data(#"{"id": "shared", "protocol": "oauth2", "authorization": {"url": "https://a.example/x"}, "token": {"url": "https://a.example/t"}}"#.utf8).write(to: shared)
        try FileManager.default.setAttributes([.posixPermissions: 0o666], ofItemAtPath: shared.path)
        let writable = try await CLIProcess.run(["providers", "validate", shared.path], environment: ["AUTHKIT_HOME": home.path])
        #expect(writable.status == 65 && writable.stdout.contains("\(shared.path): valid (shared, oauth2), but authkit will not read it: every user can write to it (mode 0666)"), "\(writable.stdout)")
    }

    @Test func configJSONIsCheckedStrictly() async throws {
        let home = try home()
        try Data(#"{"providers": {"qiita": {"clientId": "x"}}}"#.utf8).write(to: home.appendingPathComponent("config.json"))
        let misspelt = try await CLIProcess.run(["authorize", "--provider", "qiita", "--manual"], environment: ["AUTHKIT_HOME": home.path])
        #expect(misspelt.status == 65)
        #expect(misspelt.stderr.contains("field 'providers.qiita.clientId': unknown field. Did you mean 'clientID'? Check its spelling against README.md, \"Client id and secret\""), "\(misspelt.stderr)")
        try Data("{\n  \"providers\": {,\n}".utf8).write(to: home.appendingPathComponent("config.json"))
        let broken = try await CLIProcess.run(["authorize", "--provider", "qiita", "--manual"], environment: ["AUTHKIT_HOME": home.path])
        #expect(broken.status == 65 && broken.stderr.contains("line 2, column"), "\(broken.stderr)")
    }

    /// A config.json holding a client secret that others can read is warned
    /// about, with the chmod; one without a secret, or private, is not.
    @Test func aReadableClientSecretIsWarnedAbout() async throws {
        let home = try home()
        try Data(CLIBoundaryTests.storedQiita.utf8).write(to: home.appendingPathComponent("credentials.json")) // so that settings are read
        let config = home.appendingPathComponent("config.json")
        let warning = "\(config.path) holds a client secret and other users can read it (mode 644); run: chmod 600 '\(config.path)'"
        for (json, mode, warned) in [(#"{"providers": {"qiita": {"clientID": "x", "clientSecret": "s3cret"}}}"#, 0o644, true),
                                     (#"{"providers": {"qiita": {"clientID": "x", "clientSecret": "s3cret"}}}"#, 0o600, false),
                                     (#"{"providers": {"qiita": {"clientID": "x"}}}"#, 0o644, false)] {
            try Data(json.utf8).write(to: config)
            try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: config.path)
            let result = try await CLIProcess.run(["token", "header", "--provider", "qiita"], environment: ["AUTHKIT_HOME": home.path])
            #expect(result.stderr.contains(warning) == warned, "mode \(String(mode, radix: 8)): \(result.stderr)")
            #expect(!result.stderr.contains("s3cret"))
        }
    }

    /// `authkit request` for `path` at `server`, with the Qiita credential
    /// ``signedInToQiita(at:)`` stores: once through a pipe, and once in a
    /// real terminal (`script` gives one; its output is both streams, as the
    /// terminal shows them).
    func requestPipedAndOnATerminal(_ path: String, at server: TestHTTPServer) async throws -> (piped: CLIResult, terminal: CLIResult) {
        let home = try signedInToQiita(at: server)
        let arguments = ["request", "--provider", "qiita", "\(server.baseURL)\(path)"]
        let piped = try await CLIProcess.run(arguments, environment: ["AUTHKIT_HOME": home.path, "AUTHKIT_QIITA_CLIENT_ID": "c"])
        let command = (["env", "AUTHKIT_HOME=\(home.path)", "AUTHKIT_QIITA_CLIENT_ID=c", CLIProcess.binary.path] + arguments)
            .map { "'\($0)'" }.joined(separator: " ")
        let terminal = try await CLIProcess.run(["-qec", command, "/dev/null"], environment: [:], launcher: ["/usr/bin/script"], bareLauncher: true)
        return (piped, terminal)
    }

    /// A --timeout too large for the deadline arithmetic (it trapped) or not
    /// positive is a usage error in every command that waits, naming the
    /// range; a negative one too (it was "Missing value for '--timeout'",
    /// the parser taking `-1` for an option), and so is a negative port or size.
    @Test func aTimeoutOutOfRangeIsAUsageError() async throws {
        let home = try home()
        for command in [["authorize", "--provider", "qiita", "--client-id", "c", "--no-browser"],
                        ["request", "--provider", "qiita", "https://qiita.com/api/v2/authenticated_user"],
                        ["sandbox", "try", "--provider", "qiita"],
                        ["providers", "add", "idp", "--issuer", "https://idp.example"]] {
            for value in ["9223372036854775807", "604801", "0", "-1"] {
                let result = try await CLIProcess.run(command + ["--timeout", value], environment: ["AUTHKIT_HOME": home.path])
                #expect(result.status == 64 && result.stderr.contains("--timeout takes 1–604800 seconds (a week at most); got \(value)."),
                        "\(command[0]) --timeout \(value): exit \(result.status): \(result.stderr)")
            }
        }
        for (command, expected) in [(["authorize", "--provider", "qiita", "--client-id", "c", "--no-browser", "--port", "-1"], "--port takes 1–65535; got -1."),
                                    (["sandbox", "serve", "--provider", "qiita", "--port", "-1"], "--port takes 0–65535; got -1."),
                                    (["sandbox", "try", "--provider", "qiita", "--port", "-8790"], "--port takes 1–65535; got -8790."),
                                    (["request", "--provider", "qiita", "--max-size", "-1", "https://qiita.com/api/v2/items"], "--max-size takes a positive number of bytes.")] {
            let result = try await CLIProcess.run(command, environment: ["AUTHKIT_HOME": home.path])
            #expect(result.status == 64 && result.stderr.contains(expected), "\(command): exit \(result.status): \(result.stderr)")
        }
    }

    /// Two flags that each choose what is printed or done are refused
    /// together, each named: before, `token show --field F --json` printed
    /// the field raw, ignoring --json, and `token refresh --due --provider`
    /// was told to give one of the two flags it had given.
    @Test func flagsThatExcludeEachOtherAreRefusedTogether() async throws {
        let home = try home()
        try Data(CLIBoundaryTests.storedQiita.utf8).write(to: home.appendingPathComponent("credentials.json"))
        for (command, message) in [(["token", "show", "--provider", "qiita", "--field", "access_token", "--json"],
                                    "--field prints one field raw and --json the whole credential; give one of them."),
                                   (["token", "refresh", "--provider", "qiita", "--due"],
                                    "--due refreshes every credential that is due, --provider one credential now; give one of them."),
                                   (["token", "refresh"], "Give --provider ID to refresh one credential, or --due"),
                                   // One provider's client secret went to every provider's token endpoint.
                                   (["token", "refresh", "--due", "--client-secret", "one-providers-secret"],
                                    "--client-id, --client-secret and --placeholder are one provider's; --due refreshes every provider's credentials")] {
            let result = try await CLIProcess.run(command, environment: ["AUTHKIT_HOME": home.path])
            #expect(result.status == 64 && result.stderr.contains(message), "\(command): exit \(result.status): \(result.stderr)")
            #expect(result.stdout.isEmpty, "\(command) printed \(result.stdout)")
        }
    }

    /// A client id or secret with a line break or a space at an end (a
    /// paste slip) is refused before the browser opens, naming where it came
    /// from and never repeating it; before, it was sent as it was and the
    /// provider refused it after the user had approved.
    @Test func aClientValueWithAPastedLineBreakIsRefusedByItsSource() async throws {
        let home = try home()
        let base = ["AUTHKIT_HOME": home.path]
        let cases: [([String], [String: String], String)] = [
            ([], ["AUTHKIT_GITHUB_CLIENT_ID": "abc\n"], "AUTHKIT_GITHUB_CLIENT_ID: the client id holds a line break"),
            ([], ["AUTHKIT_GITHUB_CLIENT_ID": " abc"], "AUTHKIT_GITHUB_CLIENT_ID: the client id begins or ends with a space"),
            ([], ["AUTHKIT_GITHUB_CLIENT_ID": "abc", "AUTHKIT_GITHUB_CLIENT_SECRET": "pasted-secret\t"], "AUTHKIT_GITHUB_CLIENT_SECRET: the client secret holds"),
            (["--client-id", "a\u{1B}[2Jb"], [:], "--client-id: the client id holds a line break or another control character"),
        ]
        for (flags, environment, message) in cases {
            let result = try await CLIProcess.run(["authorize", "--provider", "github", "--no-browser", "--timeout", "5"] + flags,
                                                  environment: base.merging(environment) { $1 })
            #expect(result.status == 64 && result.stderr.contains(message), "\(message): exit \(result.status): \(result.stderr)")
            #expect(!result.stderr.contains("pasted-secret") && !result.stderr.contains("\u{1B}[2J") && !result.stderr.contains("github.com/login"),
                    "\(result.stderr)")
        }
        let config = home.appendingPathComponent("config.json")
        try Data(#"{"providers": {"github": {"clientID": "abc", "clientSecret": "pasted-secret\n"}}}"#.utf8).write(to: config)
        chmod(config.path, 0o600)
        let fromFile = try await CLIProcess.run(["authorize", "--provider", "github", "--no-browser", "--timeout", "5"], environment: base)
        #expect(fromFile.status == 65 && fromFile.stderr.contains("\(config.path): field 'providers.github.clientSecret': holds a line break")
                && !fromFile.stderr.contains("pasted-secret"), "\(fromFile.stderr)")
    }

    /// A placeholder value that would not make a host (`me@gitlab.example.com`,
    /// a port past 65535, a `/` in the middle of a name) is refused before the
    /// browser opens, naming where it came from. Before, it was percent-encoded
    /// into a host nobody has and the browser opened on it; an IPv6 address
    /// was blamed on the bundled descriptor. Values that are right still pass:
    /// a port, a path, an IPv6 address.
    @Test func aPlaceholderValueThatMakesNoHostIsRefusedByItsSource() async throws {
        let home = try home()
        let base = ["AUTHKIT_HOME": home.path, "AUTHKIT_GITLAB_SELF_MANAGED_CLIENT_ID": "c", "AUTHKIT_QIITA_TEAM_CLIENT_ID": "c",
                    "AUTHKIT_QIITA_TEAM_CLIENT_SECRET": "s"]
        let cases: [(String, [String], [String: String], String)] = [
            ("gitlab-self-managed", ["--placeholder", "host=me@gitlab.example.com"], [:],
             "--placeholder host=…: 'me@gitlab.example.com' holds '@', which no host name has"),
            ("gitlab-self-managed", [], ["AUTHKIT_GITLAB_SELF_MANAGED_HOST": "gitlab.example.com:99999"],
             "AUTHKIT_GITLAB_SELF_MANAGED_HOST: 'gitlab.example.com:99999' names port 99999, which is not a TCP port"),
            ("gitlab-self-managed", ["--placeholder", "host=gitläb.example.com"], [:], "'gitläb.example.com' is not ASCII; give its IDNA form"),
            ("gitlab-self-managed", ["--placeholder", "host=gitlab.example.com/x?y"], [:], "holds '?' or '#' after its path"),
            ("gitlab-self-managed", ["--placeholder", "host=[fe80::zz]"], [:], "is not an IPv6 address in brackets"),
            ("gitlab-self-managed", ["--placeholder", "host=gitlab.example.com\u{0A}"], [:], "holds a line break or another control character"),
            ("qiita-team", ["--placeholder", "team=evil.example/"], [:],
             "'evil.example/' holds '/', which would end the name early in https://{team}.qiita.com/"),
        ]
        for (provider, flags, environment, message) in cases {
            let result = try await CLIProcess.run(["authorize", "--provider", provider, "--no-browser", "--timeout", "5"] + flags,
                                                  environment: base.merging(environment) { $1 })
            #expect(result.status == 64 && result.stderr.contains(message), "\(message): exit \(result.status): \(result.stderr)")
            #expect(!result.stderr.contains("Open this URL") && !result.stdout.contains("https://"), "\(result.stdout)\(result.stderr)")
        }
        // With --sandbox too: the sandbox would answer whatever the value, but
        // the real provider could not be reached with it.
        let sandboxed = try await CLIProcess.run(["authorize", "--provider", "qiita-team", "--sandbox", "http://127.0.0.1:9", "--scripted-browser",
                                                  "--placeholder", "team=evil.example/"], environment: base)
        #expect(sandboxed.status == 64 && sandboxed.stderr.contains("'evil.example/' holds '/', which would end the name early"), "\(sandboxed.stderr)")
        let config = home.appendingPathComponent("config.json")
        try Data(#"{"providers": {"gitlab-self-managed": {"placeholders": {"host": "gitlab.example.com:0"}}}}"#.utf8).write(to: config)
        chmod(config.path, 0o600)
        let fromFile = try await CLIProcess.run(["authorize", "--provider", "gitlab-self-managed", "--no-browser", "--timeout", "5"], environment: base)
        #expect(fromFile.status == 65 && fromFile.stderr.contains(
            "\(config.path): field 'providers.gitlab-self-managed.placeholders.host': 'gitlab.example.com:0' names port 0"), "\(fromFile.stderr)")
        try FileManager.default.removeItem(at: config)

        for (value, shown) in [("gitlab.example.com:8443", "https://gitlab.example.com:8443/oauth/authorize?"),
                               ("gitlab.example.com/gitlab", "https://gitlab.example.com/gitlab/oauth/authorize?"),
                               ("[2001:db8::1]", "https://[2001:db8::1]/oauth/authorize?")] {
            let result = try await CLIProcess.run(["authorize", "--provider", "gitlab-self-managed", "--manual", "--timeout", "5", "--placeholder", "host=" + value],
                                                  environment: base)
            #expect(result.stderr.contains(shown) || result.stdout.contains(shown), "\(value): \(result.stdout)\(result.stderr)")
        }
    }

    /// A URL whose host is not ASCII, or whose port is not a TCP port, is a
    /// usage error naming what to change, in every command that takes one:
    /// libcurl refused both as a "bad/illegal format" network error (exit 4),
    /// and `sign` signed a host other than the one curl would send. So is a
    /// URL that is not http or https.
    @Test func aURLWithAHostOrPortThatCannotBeSentIsRefused() async throws {
        let home = try home()
        try Data(CLIBoundaryTests.storedQiita.utf8).write(to: home.appendingPathComponent("credentials.json"))
        let environment = ["AUTHKIT_HOME": home.path, "AUTHKIT_QIITA_CLIENT_ID": "c", "AUTHKIT_CONSUMER_SECRET": "s"]
        for (url, message) in [("https://bücher.example/api", "The host 'bücher.example' is not ASCII; give its ASCII (IDNA) form"),
                               ("https://qiita.com:99999/api", "The URL's port 99999 is not a TCP port (1–65535)."),
                               ("http://127.0.0.1:0/api", "The URL's port 0 is not a TCP port"),
                               // Only an HTTP request is signed or sent (RFC 5849 §3.4.1.2): `token header` signed ftp://.
                               ("ftp://qiita.com/api", "'ftp://qiita.com/api' is not an http:// or https:// URL; give the request's whole URL, https:// included."),
                               ("qiita.com/api/v2/items", "is not an http:// or https:// URL"),
                               // It was sent (and signed) re-encoded as %25zz: another URL than the one typed.
                               ("https://qiita.com/api?q=%zz", "has '%zz', which is not a percent escape (RFC 3986 §2.1); write %25 for a literal %."),
                               ("https://qiita.com/a%2", "has '%2', which is not a percent escape")] {
            for command in [["request", "--provider", "qiita", url], ["token", "header", "--provider", "qiita", url], ["sign", url, "--consumer-key", "k"]] {
                let result = try await CLIProcess.run(command, environment: environment)
                #expect(result.status == 64 && result.stderr.contains(message), "\(command): exit \(result.status): \(result.stderr)")
            }
        }
        // A header for plain http to another machine: curl would send the
        // credential in the clear, which `request` refuses to do.
        let plain = try await CLIProcess.run(["token", "header", "--provider", "qiita", "http://qiita.com/api/v2/items"], environment: environment)
        #expect(plain.status == 64 && plain.stderr.contains("http://qiita.com/api/v2/items is plain http on a host that is not this machine")
                && !plain.stdout.contains("Bearer"), "\(plain.stderr)")
        // An IPv6 literal's colons are not a port; an empty port is the default one.
        #expect(TypedURL.authority(of: "http://[::1]:8080/x").port == "8080" && TypedURL.authority(of: "http://[::1]/x").port == nil)
        #expect(TypedURL.problem("http://127.0.0.1:/x") == nil && TypedURL.problem("https://u@qiita.com:8443/x")?.contains("user name") == true)
        #expect(TypedURL.badEscape(in: "https://x.example/%E3%81%82?q=%2Fa%2f") == nil && TypedURL.badEscape(in: "https://x.example/?q=%G1") == "%G1")
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
        #expect(option.status == 64 && option.stderr.contains(#"Unknown option '--x\u{1B}[2J'"#), "\(option.stderr.debugDescription)")
        let warning = try await CLIProcess.run(["token", "list"], environment: environment)
        #expect(warning.status == 0 && warning.stderr.contains(#"h\u{1B}[2Jx/authkit is accessible by other users"#), "\(warning.stderr.debugDescription)")
        let refused = try await CLIProcess.run(["token", "list"], environment: ["AUTHKIT_HOME": home.path])
        #expect(refused.status == 64 && refused.stderr.contains("AUTHKIT_HOME holds a line break or other control character"), "\(refused.stderr.debugDescription)")
        for result in [option, warning, refused] {
            #expect(!result.stderr.contains("\u{1B}") && !result.stdout.contains("\u{1B}"), "\(result.stderr.debugDescription)")
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
            for command in [["token", "list"], ["authorize", "--provider", "qiita", "--client-id", "c", "--manual"], ["providers", "list"]] {
                let result = try await CLIProcess.run(command, environment: ["AUTHKIT_HOME": value], workingDirectory: directory)
                #expect(result.status == 64 && result.stderr.contains("AUTHKIT_HOME is '\(value)', a relative path")
                        && result.stderr.contains("Set it to an absolute path"), "\(command) with \(value): \(result.stderr)")
                #expect(result.stderr.contains("write $HOME instead") == value.hasPrefix("~"), "\(result.stderr)")
            }
        }
        // An absolute one with an env file's slip, a space or a line break at
        // its end, named another, empty, directory, used without a word.
        for (value, expected) in [(directory.path + " ", "ends with a space"), (directory.path + "\n", "holds a line break")] {
            for command in [["token", "list"], ["authorize", "--provider", "qiita", "--client-id", "c", "--manual"]] {
                let result = try await CLIProcess.run(command, environment: ["AUTHKIT_HOME": value], workingDirectory: directory)
                #expect(result.status == 64 && result.stderr.contains(expected), "\(command) with \(value.debugDescription): \(result.stderr)")
            }
            #expect(!FileManager.default.fileExists(atPath: value), "\(value.debugDescription) was created")
        }
        // The default directory under a relative HOME (a service's or a
        // script's environment) is the same fault; an absolute
        // XDG_CONFIG_HOME or AUTHKIT_HOME takes its place, and is used.
        for command in [["token", "list"], ["providers", "list"]] {
            let result = try await CLIProcess.run(command, environment: ["HOME": "relative"], workingDirectory: directory)
            #expect(result.status == 64 && result.stderr.contains("HOME is 'relative', a relative path") && result.stderr.contains("Set HOME, or AUTHKIT_HOME, to an absolute path"),
                    "\(command): \(result.stderr)")
        }
        let elsewhere = TemporaryDirectory.url("authkit-relative-home-xdg")
        defer { try? FileManager.default.removeItem(at: elsewhere) }
        for environment in [["HOME": "relative", "XDG_CONFIG_HOME": elsewhere.path], ["HOME": "relative", "AUTHKIT_HOME": elsewhere.path]] {
            let result = try await CLIProcess.run(["token", "list"], environment: environment, workingDirectory: directory)
            #expect(result.status == 0, "\(environment): \(result.stderr)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty, "nothing was created in the working directory")
        let help = try await CLIProcess.run(["token", "list", "--help"], environment: ["AUTHKIT_HOME": "relative"], workingDirectory: directory)
        #expect(help.status == 0 && help.stdout.contains("USAGE"), "\(help.stderr)")
    }

    /// A home taken by a file (or below one): `token list` said "No stored
    /// credentials" and exited 0, hiding that every sign-in was elsewhere.
    /// Now refused with exit 64, naming the path, from AUTHKIT_HOME or the
    /// default under XDG_CONFIG_HOME.
    @Test func aHomeTakenByAFileIsRefused() async throws {
        let directory = TemporaryDirectory.url("authkit-file-home")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("authkit")
        try Data("not a directory".utf8).write(to: file)
        let cases: [([String: String], String)] = [
            (["AUTHKIT_HOME": file.path], "AUTHKIT_HOME (\(file.path)) is a file, not a directory."),
            (["AUTHKIT_HOME": file.path + "/below"], "AUTHKIT_HOME (\(file.path)/below) cannot be a directory: a part of its path is a file."),
            (["XDG_CONFIG_HOME": directory.path, "HOME": directory.path], "AuthKit's directory \(file.path) is a file, not a directory."),
        ]
        for (environment, message) in cases {
            let result = try await CLIProcess.run(["token", "list"], environment: environment)
            #expect(result.status == 64 && result.stderr.contains(message) && result.stdout.isEmpty, "\(environment): \(result.stderr)")
        }
        #expect(try String(contentsOf: file, encoding: .utf8) == "not a directory")
    }

    /// Hints name the real path and only flags the command takes.
    @Test func hintsAreHonest() async throws {
        let home = try home()
        let noClient = try await CLIProcess.run(["authorize", "--provider", "qiita-team", "--manual"], environment: ["AUTHKIT_HOME": home.path])
        #expect(noClient.status == 64)
        #expect(noClient.stderr.contains("Pass --client-id") && noClient.stderr.contains("\(home.path)/config.json"), "\(noClient.stderr)")
        #expect(!noClient.stderr.contains("$AUTHKIT_HOME"))
        let noTeam = try await CLIProcess.run(["authorize", "--provider", "qiita-team", "--manual", "--client-id", "c"], environment: ["AUTHKIT_HOME": home.path])
        #expect(noTeam.stderr.contains("Pass --placeholder team=…"), "\(noTeam.stderr)")
        try Data(#"{"providers": {"qiita-tem": {"clientID": "mine"}}}"#.utf8).write(to: home.appendingPathComponent("config.json"))
        let misspelt = try await CLIProcess.run(["authorize", "--provider", "qiita-team", "--manual"], environment: ["AUTHKIT_HOME": home.path])
        #expect(misspelt.status == 64 && misspelt.stderr.contains("config.json has settings under 'qiita-tem', which no provider reads: did you mean 'qiita-team'?"),
                "\(misspelt.stderr)")
        // `providers list`, where one looks at what is configured, names every such entry.
        try Data(#"{"providers": {"qiita-tem": {"clientID": "mine"}, "github": {"clientID": "g"}, "zzzzzz": {"clientID": "z"}}}"#.utf8)
            .write(to: home.appendingPathComponent("config.json"))
        let listed = try await CLIProcess.run(["providers", "list"], environment: ["AUTHKIT_HOME": home.path])
        #expect(listed.status == 0 && listed.stderr.contains("config.json has settings under 'qiita-tem', which no provider reads: did you mean 'qiita-team'?")
                && listed.stderr.contains("settings under 'zzzzzz', which no provider reads.") && !listed.stderr.contains("'github'"), "\(listed.stderr)")
        try Data(#"{"providers": {"qiita-team": {"clientID": "mine", "placeholders": {"tema": "acme"}}}}"#.utf8).write(to: home.appendingPathComponent("config.json"))
        let configTypo = try await CLIProcess.run(["authorize", "--provider", "qiita-team", "--manual"], environment: ["AUTHKIT_HOME": home.path])
        #expect(configTypo.status == 65 && configTypo.stderr.contains("field 'providers.qiita-team.placeholders.tema': Qiita Team has no placeholder 'tema'; it takes: team."),
                "\(configTypo.stderr)")
        try Data(#"{"providers": {"box": {"clientID": "mine"}}}"#.utf8).write(to: home.appendingPathComponent("config.json"))
        let another = try await CLIProcess.run(["authorize", "--provider", "x", "--manual"], environment: ["AUTHKIT_HOME": home.path])
        #expect(another.status == 64 && !another.stderr.contains("did you mean"), "box is a provider, not a misspelt x: \(another.stderr)")
        try FileManager.default.removeItem(at: home.appendingPathComponent("config.json"))
        let typo = try await CLIProcess.run(["authorize", "--provider", "qiita-team", "--manual", "--client-id", "c", "--placeholder", "tema=acme"],
                                            environment: ["AUTHKIT_HOME": home.path])
        #expect(typo.status == 64 && typo.stderr.contains("--placeholder: Qiita Team has no placeholder 'tema'; it takes: team."), "\(typo.stderr)")
        let none = try await CLIProcess.run(["authorize", "--provider", "qiita", "--manual", "--client-id", "c", "--placeholder", "team=acme"],
                                            environment: ["AUTHKIT_HOME": home.path])
        #expect(none.status == 64 && none.stderr.contains("--placeholder: Qiita has no placeholder 'team'; it takes none."), "\(none.stderr)")
        let remote = try await CLIProcess.run(["authorize", "--provider", "github", "--client-id", "c", "--client-secret", "s", "--redirect-uri", "http://app.example/cb"],
                                        environment: ["AUTHKIT_HOME": home.path])
        #expect(remote.status == 64 && remote.stderr.contains("--manual") && !remote.stderr.contains("ManualUserAgent"), "\(remote.stderr)")
        for command in [["token", "show"], ["authorize", "--client-id", "c"], ["request", "https://qiita.com/api/v2/items"]] {
            let emptyLabel = try await CLIProcess.run(command + ["--provider", "qiita", "--label", " "], environment: ["AUTHKIT_HOME": home.path])
            #expect(emptyLabel.status == 64 && emptyLabel.stderr.contains("--label takes a name such as work"), "\(command): \(emptyLabel.stderr)")
        }
        // An empty provider id (an unset variable) drew unrelated suggestions
        // ("did you mean 'x' or 'box'?") or "No stored credential for ."
        for command in [["token", "show", "--provider", ""], ["token", "list", "--provider", " "], ["token", "refresh", "--provider", ""],
                        ["authorize", "--provider", ""], ["sandbox", "serve", "--provider", ""], ["providers", "show", ""]] {
            let empty = try await CLIProcess.run(command, environment: ["AUTHKIT_HOME": home.path])
            #expect(empty.status == 64 && empty.stderr.contains("takes a provider id such as github; got an empty one")
                    && !empty.stderr.contains("Did you mean"), "\(command): \(empty.stderr)")
        }
        // A new account's label must be typeable as shown: a pasted tab or
        // line break was stored and listed as `x\u{9}y`, which no --label then
        // matched; spaces around it made a look-alike second account.
        for (label, message) in [("x\ty", "--label 'x\\u{9}y' holds a control or invisible character"),
                                 ("a\u{200B}b", "--label 'a\\u{200B}b' holds a control or invisible character"),
                                 (" work", "--label ' work' begins or ends with a space; give --label work."),
                                 // Hints that name an account cut it at 80 characters: it could not be pasted back.
                                 (String(repeating: "a", count: 81), "--label is 81 characters long; use a name of at most 80")] {
            let refused = try await CLIProcess.run(["authorize", "--provider", "qiita", "--client-id", "c", "--manual", "--label", label],
                                                   environment: ["AUTHKIT_HOME": home.path])
            #expect(refused.status == 64 && refused.stderr.contains(message), "\(label): \(refused.stderr)")
        }
        let longest = try await CLIProcess.run(["authorize", "--provider", "qiita", "--client-id", "c", "--manual", "--label", String(repeating: "a", count: 80)],
                                               environment: ["AUTHKIT_HOME": home.path], timeout: 20)
        #expect(longest.stderr.contains("no client secret is configured") && !longest.stderr.contains("characters long"), "\(longest.stderr)")
        // An account stored with such a label before can still be named, to delete it.
        let oddLabel = "x\ty"
        try await FileCredentialStore(file: home.appendingPathComponent("credentials.json"))
            .save(Credential(providerID: "qiita", label: oddLabel, accessToken: "t"))
        let deleted = try await CLIProcess.run(["token", "delete", "--provider", "qiita", "--label", oddLabel], environment: ["AUTHKIT_HOME": home.path])
        #expect(deleted.status == 0, "\(deleted.stderr)")
        let emptyScope = try await CLIProcess.run(["authorize", "--provider", "qiita", "--client-id", "c", "--scope", ""], environment: ["AUTHKIT_HOME": home.path])
        #expect(emptyScope.status == 64 && emptyScope.stderr.contains("--scope takes a scope name"), "\(emptyScope.stderr)")
        // RFC 6749 §3.3 scope tokens: two names in one flag are shown split
        // into flags; a pasted line break is refused (and shown escaped)
        // rather than sent as `%0A` for the provider to refuse after the browser.
        for (value, message) in [("repo user:email", "--scope takes one scope; give each with its own --scope (--scope repo --scope user:email)."),
                                 ("read\nwrite", "--scope 'read\\u{A}write' holds a control character"),
                                 ("a\"b", "holds a control character, a non-ASCII one, '\"' or '\\'"),
                                 (" repo", "--scope ' repo' begins or ends with a space; give --scope repo.")] {
            let result = try await CLIProcess.run(["authorize", "--provider", "qiita", "--client-id", "c", "--no-browser", "--scope", value],
                                                  environment: ["AUTHKIT_HOME": home.path])
            #expect(result.status == 64 && result.stderr.contains(message) && !result.stderr.contains("Open this URL"), "\(value): \(result.stderr)")
        }
        // Over SSH with no client id, the client id is told first: every way
        // in needs it, so advice about --manual would only lead to this error next.
        let headless = try await CLIProcess.run(["authorize", "--provider", "qiita"], environment: ["AUTHKIT_HOME": home.path, "SSH_TTY": "/dev/pts/3"])
        #expect(headless.status == 64 && headless.stderr.contains("no client id is configured") && !headless.stderr.contains("--manual"), "\(headless.stderr)")
    }

    /// Qiita has no public clients (`token.requiresClientSecret`): a sign-in
    /// without the secret sent the user to approve, and the exchange failed
    /// at Qiita after it. It is now refused before the URL is shown, naming
    /// every way to give the secret.
    @Test func aSecretTheProviderRequiresIsAskedForBeforeTheUserApproves() async throws {
        let home = try CLIProcess.home("authkit-missing-secret")
        let result = try await CLIProcess.run(["authorize", "--provider", "qiita", "--client-id", "c", "--manual"],
                                              environment: ["AUTHKIT_HOME": home.path], respond: { $0.contains("what to paste") ? "http://127.0.0.1:8765/callback?code=x&state=y" : nil })
        #expect(result.status == 64, "\(result.stderr)")
        #expect(result.stderr.contains("qiita: no client secret is configured") && result.stderr.contains("--client-secret")
                && result.stderr.contains("AUTHKIT_QIITA_CLIENT_SECRET"), "\(result.stderr)")
        #expect(!result.stdout.contains("qiita.com/api/v2/oauth/authorize") && !result.stderr.contains("qiita.com/api/v2/oauth/authorize"))
        // A config.json entry left empty (a template filled in halfway) counts as none, and is named.
        let config = home.appendingPathComponent("config.json")
        try Data(#"{"providers": {"qiita": {"clientID": "c", "clientSecret": ""}}}"#.utf8).write(to: config)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: config.path)
        let empty = try await CLIProcess.run(["authorize", "--provider", "qiita", "--manual"], environment: ["AUTHKIT_HOME": home.path])
        #expect(empty.status == 64 && empty.stderr.contains(#"config.json has "clientSecret" under "providers"."qiita", but it is empty."#), "\(empty.stderr)")
        try FileManager.default.removeItem(at: config)
        // `--client-secret ''` (what `sandbox serve --public-client` prints) wins over the variable:
        // "set AUTHKIT_QIITA_CLIENT_SECRET" would not help where it is set. A variable left empty is named.
        let overriding = try await CLIProcess.run(["authorize", "--provider", "qiita", "--client-id", "c", "--client-secret", "", "--manual"],
                                                  environment: ["AUTHKIT_HOME": home.path, "AUTHKIT_QIITA_CLIENT_SECRET": "the-secret"])
        #expect(overriding.status == 64 && overriding.stderr.contains("--client-secret '' gives none, and it overrides the one in AUTHKIT_QIITA_CLIENT_SECRET: drop --client-secret ''."),
                "\(overriding.stderr)")
        #expect(!overriding.stderr.contains("the-secret"))
        let emptyVariable = try await CLIProcess.run(["authorize", "--provider", "qiita", "--client-id", "c", "--manual"],
                                                     environment: ["AUTHKIT_HOME": home.path, "AUTHKIT_QIITA_CLIENT_SECRET": ""])
        #expect(emptyVariable.status == 64 && emptyVariable.stderr.contains("AUTHKIT_QIITA_CLIENT_SECRET is set, but empty."), "\(emptyVariable.stderr)")
        // GitHub's code grant needs the secret, its device grant does not: the error names that way too.
        let github = try await CLIProcess.run(["authorize", "--provider", "github", "--client-id", "c", "--manual", "--label", "work"],
                                              environment: ["AUTHKIT_HOME": home.path], respond: { $0.contains("what to paste") ? "" : nil })
        #expect(github.status == 64 && github.stderr.contains("github: no client secret is configured")
                && github.stderr.contains("Or sign in by the device grant, which GitHub allows without one: authkit authorize --provider github --label work --device."),
                "\(github.stderr)")
        #expect(!github.stderr.contains("github.com/login/oauth/authorize"))
        // A provider with public clients still signs in without one (PKCE); here it gets as far as the URL.
        let open = try await CLIProcess.run(["authorize", "--provider", "gitlab", "--client-id", "c", "--manual"],
                                            environment: ["AUTHKIT_HOME": home.path], respond: { $0.contains("what to paste") ? "" : nil })
        #expect((open.stdout + open.stderr).contains("gitlab.com/oauth/authorize?"), "\(open.stderr)")
    }

    /// curl's header forms: 'Name;' sends an empty value, 'Name:' sends none
    /// of that name, not even one authkit would add. 'X:' was refused as
    /// having no ':', and an empty value never left the default transport
    /// (libcurl reads "Name:" as its off switch).
    @Test func requestTakesCurlsEmptyAndRemovedHeaders() async throws {
        try await withServer { server in
            let (_, environment, url) = try qiitaItems(at: server)
            let result = try await CLIProcess.run(["request", "--provider", "qiita", url, "-d", "a=b", "-H", "X-Empty;", "-H", "X-Gone: 1",
                                                   "-H", "X-Gone:", "-H", "Content-Type:"], environment: environment)
            #expect(result.status == 0, "\(result.stderr)")
            let sent = try #require(server.requests(to: "/api/v2/items").last)
            #expect(sent.header("X-Empty") == "" && sent.header("X-Gone") == nil && sent.header("Content-Type") == nil, "\(sent.headers)")
            #expect(sent.bodyText == "a=b" && sent.header("Authorization") != nil)
            #expect(sent.header("User-Agent")?.hasPrefix("AuthKit/") == true, "GitHub's API refuses a request without one")
            let named = try await CLIProcess.run(["request", "--provider", "qiita", url, "-d", "a=b", "-H", "User-Agent: mine/1"], environment: environment)
            #expect(named.status == 0 && server.requests(to: "/api/v2/items").last?.header("User-Agent") == "mine/1", "\(named.stderr)")
            let none = try await CLIProcess.run(["request", "--provider", "qiita", url, "-H", "X-Empty"], environment: environment)
            #expect(none.status == 64 && none.stderr.contains("('Name;' for an empty value); one -H has no ':' after its name"), "\(none.stderr)")
            let credential = try await CLIProcess.run(["request", "--provider", "qiita", url, "-H", "Authorization:"], environment: environment)
            #expect(credential.status == 64 && credential.stderr.contains("the stored credential's Authorization header is sent"), "\(credential.stderr)")
        }
    }

    /// With `http_proxy` set (and no `no_proxy` for 127.0.0.1), libcurl sent
    /// a plain-http loopback request through the proxy: a credential that
    /// AuthKit sends over http only because it stays on this machine left it
    /// in the clear (and reached the proxy's 127.0.0.1, not this one).
    @Test func aLoopbackRequestNeverGoesThroughAProxy() async throws {
        try await withServer { proxy in
            try await withServer { server in
                server.route("GET", "/api/v2/authenticated_user") { _ in .json(#"{"id":"me"}"#) }
                let home = try signedInToQiita(at: server)
                let environment = ["AUTHKIT_HOME": home.path, "AUTHKIT_QIITA_CLIENT_ID": "c", "AUTHKIT_QIITA_CLIENT_SECRET": "s",
                                   "http_proxy": proxy.baseURL, "HTTPS_PROXY": proxy.baseURL, "ALL_PROXY": proxy.baseURL]
                let result = try await CLIProcess.run(["request", "--provider", "qiita", "\(server.baseURL)/api/v2/authenticated_user"], environment: environment)
                #expect(result.status == 0 && result.stdout.contains(#""id":"me""#), "\(result.stderr)")
                #expect(proxy.requests.isEmpty, "the proxy received \(proxy.requests.map(\.uri))")
                #expect(server.requests(to: "/api/v2/authenticated_user").first?.header("Authorization") != nil)
            }
        }
    }

    @Test func requestChecksFormBodiesAndEncodesOnRequest() async throws {
        try await withServer { server in
            server.route("POST", "/api/v2/items") { request in .json(#"{"body":"\#(request.bodyText)"}"#) }
            let home = try signedInToQiita(at: server)
            let environment = ["AUTHKIT_HOME": home.path, "AUTHKIT_QIITA_CLIENT_ID": "c", "AUTHKIT_QIITA_CLIENT_SECRET": "s"]
            let url = "\(server.baseURL)/api/v2/items"
            let refused = try await CLIProcess.run(["request", "--provider", "qiita", "-X", "POST", url, "-d", "status=hello world"], environment: environment)
            #expect(refused.status == 64 && refused.stderr.contains("--data-urlencode"), "\(refused.stderr)")
            #expect(server.requests(to: "/api/v2/items").isEmpty)
            // A '+' is the form's own space: sent as given, with a note.
            let plus = try await CLIProcess.run(["request", "--provider", "qiita", "-X", "POST", url, "-d", "status=1+1"], environment: environment)
            #expect(plus.status == 0 && plus.stderr.contains("write %2B for a plus sign"), "\(plus.stderr)")
            #expect(server.requests(to: "/api/v2/items").map(\.bodyText) == ["status=1+1"])
            let encoded = try await CLIProcess.run(["request", "--provider", "qiita", "-X", "POST", url, "--data-urlencode", "status=1+1 is 2!"],
                                             environment: environment)
            #expect(encoded.status == 0, "\(encoded.stderr)")
            #expect(try #require(server.requests(to: "/api/v2/items").last).bodyText == "status=1%2B1%20is%202%21")
            let empty = try await CLIProcess.run(["request", "--provider", "qiita", "-X", "POST", url, "--data-urlencode", "status="], environment: environment)
            #expect(empty.status == 0 && server.requests(to: "/api/v2/items").last?.bodyText == "status=", "an empty value is a value, as in curl: \(empty.stderr)")
            // A body without -X is POSTed, as curl does; it was sent with GET,
            // whose body servers ignore.
            for body in [["-d", "status=implied"], ["--data-urlencode", "status=implied"], ["--data-binary", "status=implied"]] {
                let implied = try await CLIProcess.run(["request", "--provider", "qiita", url] + body, environment: environment)
                let sent = server.requests(to: "/api/v2/items").last
                #expect(implied.status == 0 && sent?.method == "POST" && sent?.bodyText == "status=implied", "\(body[0]): \(implied.stderr)")
            }
            let spaced = try await CLIProcess.run(["request", "--provider", "qiita", "\(url)/a b"], environment: environment)
            #expect(spaced.status == 64 && spaced.stderr.contains("contains a space or control character"), "\(spaced.stderr)")
            let header = try await CLIProcess.run(["token", "header", "--provider", "qiita", "\(url)/a\tb"], environment: environment)
            #expect(header.status == 64 && header.stderr.contains("'\(url)/a\\u{9}b' contains a space or control character"), "\(header.stderr)")
            // A user name and password in the URL would go out as Basic
            // credentials beside the token: refused, and not repeated.
            let withUser = url.replacingOccurrences(of: "http://", with: "http://me:hunter2@")
            for command in [["request", "--provider", "qiita", withUser], ["token", "header", "--provider", "qiita", withUser]] {
                let refused = try await CLIProcess.run(command, environment: environment)
                #expect(refused.status == 64 && refused.stderr.contains("carries a user name or password") && !refused.stderr.contains("hunter2"),
                        "\(command[0]): \(refused.stderr)")
            }
            // Headers that were dropped (the credential's Authorization
            // replaced the one given) or obeyed to the request's harm (a
            // Content-Length that left the server waiting) are refused.
            for header in ["Authorization: Bearer mine", "content-length: 5", "Transfer-Encoding: chunked", "Host: elsewhere.example"] {
                let refused = try await CLIProcess.run(["request", "--provider", "qiita", url, "-H", header], environment: environment)
                let name = header.prefix { $0 != ":" }
                #expect(refused.status == 64 && refused.stderr.contains("-H '\(name)': ") && refused.stderr.contains("Remove it."), "\(header): \(refused.stderr)")
            }
            #expect(server.requests.count == 6)
        }
    }

    /// `-d @FILE`, `-d @-`, `--data-binary @FILE` and `--data-urlencode
    /// name@FILE`, as curl reads them: a
    /// curl user's `-d @body.json` was sent as the text "@body.json".
    @Test func requestReadsBodiesFromFilesAsCurlDoes() async throws {
        try await withServer { server in
            let (home, environment, url) = try qiitaItems(at: server)
            let form = home.appendingPathComponent("form.txt"), json = home.appendingPathComponent("item.json"), png = home.appendingPathComponent("a.png")
            try Data("title=a%20b&\r\nbody=c\n".utf8).write(to: form)
            try Data("{\n  \"title\": \"x\"\n}\n".utf8).write(to: json)
            let binary = Data([0x89, 0x50, 0x4E, 0x47, 0x00, 0x0A, 0xFF])
            try binary.write(to: png)
            func post(_ arguments: [String], launcher: [String] = []) async throws -> (CLIResult, RecordedRequest?) {
                let before = server.requests(to: "/api/v2/items").count
                let result = try await CLIProcess.run(["request", "--provider", "qiita", "-X", "POST", url] + arguments, environment: environment, launcher: launcher)
                let requests = server.requests(to: "/api/v2/items")
                return (result, requests.count > before ? requests.last : nil)
            }
            // -d @FILE: line breaks removed, as curl does; checked as a form.
            let (fromFile, formRequest) = try await post(["-d", "@\(form.path)"])
            #expect(fromFile.status == 0 && formRequest?.bodyText == "title=a%20b&body=c", "\(fromFile.stderr)")
            #expect(formRequest?.header("Content-Type") == "application/x-www-form-urlencoded")
            let (jsonFile, jsonRequest) = try await post(["-d", "@\(json.path)", "-H", "Content-Type: application/json"])
            #expect(jsonFile.status == 0 && jsonRequest?.bodyText == #"{  "title": "x"}"#, "\(jsonFile.stderr)")
            // --data-binary @FILE: every byte, with the type given.
            let (raw, rawRequest) = try await post(["--data-binary", "@\(png.path)", "-H", "Content-Type: image/png"])
            #expect(raw.status == 0 && rawRequest?.body == binary, "\(raw.stderr)")
            // -d @-: standard input, beside --data-urlencode.
            let (piped, pipedRequest) = try await post(["-d", "@-", "--data-urlencode", "n=a b"], launcher: ["/bin/sh", "-c", #"printf 'c=3\n' | "$0" "$@""#])
            #expect(piped.status == 0 && pipedRequest?.bodyText == "c=3&n=a%20b", "\(piped.stderr)")
            // -d @<(…): a pipe from the shell (Foundation's read called it "Permission denied").
            let (substituted, substitutedRequest) = try await post([], launcher: ["/bin/bash", "-c", #""$0" "$@" -d @<(printf 'p=1\n')"#])
            #expect(substituted.status == 0 && substitutedRequest?.bodyText == "p=1", "\(substituted.stderr)")
            // Refused before anything is sent: a missing file, bytes sent as a form.
            let (missing, sent1) = try await post(["-d", "@\(home.path)/nope.json"])
            #expect(missing.status == 64 && missing.stderr.contains("-d @\(home.path)/nope.json: the file cannot be read (No such file or directory).") && sent1 == nil,
                    "\(missing.stderr)")
            let (directory, sent3) = try await post(["-d", "@\(home.path)"])
            #expect(directory.status == 64 && directory.stderr.contains("-d @\(home.path): the file is a directory.") && sent3 == nil, "\(directory.stderr)")
            let (binaryForm, sent2) = try await post(["--data-binary", "@\(png.path)"])
            #expect(binaryForm.status == 64 && binaryForm.stderr.contains("it is not text. Give its type with -H") && sent2 == nil, "\(binaryForm.stderr)")
            // --data-urlencode name@FILE, as curl: the file's text, line breaks kept, encoded; @- standard input.
            let message = home.appendingPathComponent("message.txt")
            try Data("Hello + world!\nsecond line é".utf8).write(to: message)
            let (fieldFromFile, fieldRequest) = try await post(["--data-urlencode", "status@\(message.path)", "--data-urlencode", "email=me@example.com"])
            #expect(fieldFromFile.status == 0 && fieldRequest?.bodyText == "status=Hello%20%2B%20world%21%0Asecond%20line%20%C3%A9&email=me%40example.com",
                    "\(fieldFromFile.stderr)")
            let (fieldPiped, fieldPipedRequest) = try await post(["--data-urlencode", "q@-"], launcher: ["/bin/sh", "-c", #"printf 'a&b' | "$0" "$@""#])
            #expect(fieldPiped.status == 0 && fieldPipedRequest?.bodyText == "q=a%26b", "\(fieldPiped.stderr)")
            // Standard input is read once; bytes are no form field's text; a field needs a name.
            let (twice, sent4) = try await post(["-d", "@-", "--data-urlencode", "q@-"], launcher: ["/bin/sh", "-c", #"printf 'c=3' | "$0" "$@""#])
            #expect(twice.status == 64 && twice.stderr.contains("Standard input can be read once") && sent4 == nil, "\(twice.stderr)")
            let (twiceD, sent7) = try await post(["-d", "@-", "-d", "@-"], launcher: ["/bin/sh", "-c", #"printf 'c=3' | "$0" "$@""#])
            #expect(twiceD.status == 64 && twiceD.stderr.contains("Standard input can be read once") && sent7 == nil, "\(twiceD.stderr)")
            // -d repeated, as in curl: every part, joined with & (the last alone was sent).
            let (repeated, repeatedRequest) = try await post(["-d", "a=1", "-d", "b=2", "--data-binary", "c=3", "--data-urlencode", "d=4 5"])
            #expect(repeated.status == 0 && repeatedRequest?.bodyText == "a=1&b=2&c=3&d=4%205", "\(repeated.stderr)")
            let (binaryField, sent5) = try await post(["--data-urlencode", "img@\(png.path)"])
            #expect(binaryField.status == 64 && binaryField.stderr.contains("--data-urlencode img@\(png.path): the file is not UTF-8 text") && sent5 == nil,
                    "\(binaryField.stderr)")
            let (nameless, sent6) = try await post(["--data-urlencode", "@\(message.path)"])
            #expect(nameless.status == 64 && nameless.stderr.contains("no name before its '@'") && sent6 == nil, "\(nameless.stderr)")
        }
    }

    /// Binary bytes are not written to a terminal (curl's rule): in a real
    /// terminal (`script` gives one) the command stops with a hint; through a
    /// pipe every byte arrives.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/script"), "script(1) is not installed (bsdutils)"))
    func binaryIsNotWrittenToATerminal() async throws {
        try await withServer { server in
            let binary = Data([0x50, 0x4E, 0x47, 0x00, 0x1B, 0x5D, 0x30, 0x3B, 0x70, 0x77, 0x6E, 0x07, 0x00])
            server.route("GET", "/api/v2/image") { _ in StubResponse(status: 200, headers: [("Content-Type", "image/png")], body: binary) }
            let (piped, terminal) = try await requestPipedAndOnATerminal("/api/v2/image", at: server)
            #expect(piped.status == 0, "\(piped.stderr)")
            #expect(Data(piped.stdout.utf8) == binary, "a pipe gets every byte")
            #expect(terminal.status == 1, "\(terminal.stdout)")
            #expect(terminal.stdout.contains("The response is binary"), "\(terminal.stdout)")
            #expect(!terminal.stdout.contains("\u{1B}]0;pwn"), "the body reached the terminal")
        }
    }

    /// Text is shown on a terminal with its escape sequences written out,
    /// colours aside: an OSC 52 in a response would otherwise have put a
    /// command in the user's clipboard. A pipe still gets every byte.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/script"), "script(1) is not installed (bsdutils)"))
    func escapeSequencesAreShownNotObeyedOnATerminal() async throws {
        try await withServer { server in
            let text = "\u{1B}[32mok\u{1B}[0m \u{1B}]52;c;cm0gLXJmIH4K\u{07} done\n"
            server.route("GET", "/api/v2/text") { _ in StubResponse(status: 200, headers: [("Content-Type", "text/plain")], body: Data(text.utf8)) }
            let (piped, terminal) = try await requestPipedAndOnATerminal("/api/v2/text", at: server)
            #expect(piped.status == 0 && piped.stdout == text, "a pipe gets every byte: \(piped.stderr)")
            #expect(terminal.status == 0, "\(terminal.stdout)")
            #expect(terminal.stdout.contains("\u{1B}[32mok\u{1B}[0m") && terminal.stdout.contains(#"\u{1B}]52;c;cm0gLXJmIH4K\u{7} done"#),
                    "\(terminal.stdout.debugDescription)")
            #expect(!terminal.stdout.contains("\u{1B}]52"), "the OSC 52 reached the terminal")
        }
    }

    /// On a terminal a body without a final line break gets one, so the
    /// error that follows a non-2xx answer (and the shell's prompt) starts
    /// its own line; a pipe gets the server's bytes unchanged.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/script"), "script(1) is not installed (bsdutils)"))
    func aBodyEndsItsLineOnATerminal() async throws {
        try await withServer { server in
            let json = #"{"error":"nope"}"#
            server.route("GET", "/api/v2/denied") { _ in StubResponse(status: 403, headers: [("Content-Type", "application/json")], body: Data(json.utf8)) }
            let (piped, terminal) = try await requestPipedAndOnATerminal("/api/v2/denied", at: server)
            #expect(piped.status == 3 && piped.stdout == json, "a pipe gets the bytes unchanged: \(piped.stdout.debugDescription)")
            let lines = terminal.stdout.split(whereSeparator: \.isNewline).map(String.init)
            #expect(lines.contains(json) && lines.contains { $0.hasPrefix("authkit: error: GET ") }, "\(terminal.stdout.debugDescription)")
        }
    }

    /// `sign` signs what will be sent: a body or URL that a server (or curl)
    /// would read differently from how it is signed is refused.
    @Test func signRefusesWhatWouldBeSentDifferently() async throws {
        let keys = ["--consumer-key", "k", "--consumer-secret", "s"]
        for (arguments, expected) in [(["https://x.example/", "-d", "a=%zz"], "'%' that is not followed by two hex digits"),
                                      (["https://x.example/", "-d", "a=b c"], "contains a space"),
                                      (["https://x.example/a b"], "contains a space or control character"),
                                      (["https://me:hunter2@x.example/"], "carries a user name or password"),
                                      // PLAINTEXT's signature is the secrets themselves (RFC 5849 §3.4.4): TLS only.
                                      (["http://x.example/", "--signature-method", "PLAINTEXT"], "http://x.example/ is plain http on a host that is not this machine")] {
            let result = try await CLIProcess.run(["sign"] + arguments + keys, environment: [:])
            #expect(result.status == 64 && result.stderr.contains(expected) && !result.stdout.contains("oauth_signature"), "\(arguments): \(result.stderr)")
            #expect(!result.stderr.contains("oauth_signature"))
        }
        let fine = try await CLIProcess.run(["sign", "https://x.example/?q=a%20b", "-d", "a=1%2B1"] + keys, environment: [:])
        #expect(fine.status == 0 && fine.stdout.hasPrefix("Authorization: OAuth "), "\(fine.stderr)")
        // A '+' is a form body's space (RFC 5849 §3.4.1.3.1 decodes the body
        // so before signing): signed as %20 would be, with a note for whoever
        // meant a plus (issue 44, item 8; it was refused).
        let pinned = keys + ["--nonce", "n", "--timestamp", "1318622958"]
        let plus = try await CLIProcess.run(["sign", "https://x.example/", "-d", "a=1+1"] + pinned, environment: [:])
        let space = try await CLIProcess.run(["sign", "https://x.example/", "-d", "a=1%201"] + pinned, environment: [:])
        let literal = try await CLIProcess.run(["sign", "https://x.example/", "-d", "a=1%2B1"] + pinned, environment: [:])
        #expect(plus.status == 0 && plus.stdout == space.stdout && plus.stdout != literal.stdout, "\(plus.stdout) \(plus.stderr)")
        #expect(plus.stderr.contains("write %2B for a plus sign") && !space.stderr.contains("%2B"), "\(plus.stderr)")

        // -d @FILE signs the file's form, as request and curl -d send it (it
        // signed the text '@FILE', silently); a file that is not there is named.
        let fixed = keys + ["--nonce", "n", "--timestamp", "1318622958"]
        let directory = TemporaryDirectory.url("authkit-sign-form")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("body.txt")
        try Data("a=1%2B1\r\n".utf8).write(to: file)
        let typed = try await CLIProcess.run(["sign", "https://x.example/", "-d", "a=1%2B1"] + fixed, environment: [:])
        let fromFile = try await CLIProcess.run(["sign", "https://x.example/", "-d", "@" + file.path] + fixed, environment: [:])
        #expect(typed.status == 0 && fromFile.status == 0 && fromFile.stdout == typed.stdout, "\(fromFile.stdout) \(fromFile.stderr)")
        let missing = try await CLIProcess.run(["sign", "https://x.example/", "-d", "@" + directory.appendingPathComponent("none").path] + fixed, environment: [:])
        #expect(missing.status == 64 && missing.stderr.contains("-d @") && missing.stdout.isEmpty, "\(missing.stderr)")
        try Data("a=b c".utf8).write(to: file)
        for key in ["", "k\u{1B}[2J"] {
            let odd = try await CLIProcess.run(["sign", "https://x.example/", "--consumer-key", key, "--consumer-secret", "s"], environment: [:])
            #expect(odd.status == 64 && odd.stderr.contains("--consumer-key is") && !odd.stderr.contains("\u{1B}") && odd.stdout.isEmpty, "\(odd.stderr)")
        }
        let unencoded = try await CLIProcess.run(["sign", "https://x.example/", "-d", "@" + file.path] + fixed, environment: [:])
        #expect(unencoded.status == 64 && unencoded.stderr.contains("contains a space"), "\(unencoded.stderr)")
    }

    /// The secrets key the signature: a consumer or token secret with a
    /// pasted line break, a space at an end, or empty, or a token without its
    /// secret, signed with another key (exit 0), for the provider to answer
    /// 401. Each is refused naming the flag or variable, never the value.
    @Test func signRefusesSecretsThatWouldSignWithAnotherKey() async throws {
        let url = ["https://x.example/", "--consumer-key", "k", "--nonce", "n", "--timestamp", "1"]
        let secretFile = TemporaryDirectory.url("authkit-sign-secret")
        try FileManager.default.createDirectory(at: secretFile, withIntermediateDirectories: true)
        try Data("hunter2-secret\n".utf8).write(to: secretFile.appendingPathComponent("secret"))
        defer { try? FileManager.default.removeItem(at: secretFile) }
        for (arguments, environment, expected) in [
            (["--consumer-secret", "hunter2-secret\n"], [String: String](), "--consumer-secret: the secret holds a line break"),
            (["--consumer-secret", " hunter2-secret"], [:], "--consumer-secret: the secret begins or ends with a space"),
            (["--consumer-secret", ""], [:], "--consumer-secret is empty"),
            ([], ["AUTHKIT_CONSUMER_SECRET": "hunter2-secret\r\n"], "AUTHKIT_CONSUMER_SECRET: the secret holds a line break"),
            (["--consumer-secret", "s", "--token", "t"], [:], "--token needs its secret"),
            (["--consumer-secret", "s", "--token", "t", "--token-secret", "hunter2-secret "], [:], "--token-secret: the secret begins or ends with a space"),
            (["--consumer-secret", "s", "--token-secret", "ts"], [:], "--token-secret is given without --token"),
            // As -d reads them: signed with the two characters "@-" (exit 0).
            (["--consumer-secret", "@-"], [:], "--consumer-secret takes the secret itself, not a file or standard input. To keep it off the command line, set AUTHKIT_CONSUMER_SECRET"),
            (["--consumer-secret", "-"], [:], "--consumer-secret takes the secret itself"),
            (["--consumer-secret", "s", "--token", "t", "--token-secret", "@" + secretFile.appendingPathComponent("secret").path], [:], "--token-secret takes the secret itself"),
        ] {
            let result = try await CLIProcess.run(["sign"] + url + arguments, environment: environment)
            #expect(result.status == 64 && result.stderr.contains(expected) && result.stdout.isEmpty, "\(arguments) \(environment): \(result.stderr)")
            #expect(!result.stderr.contains("hunter2"))
        }
        // A protocol parameter the header carries, given in the query or the body too, was signed and sent twice (RFC 5849 §3.5).
        for (extra, place) in [(["-d", "oauth_nonce=evil"], "oauth_nonce is in -d"), (["https://x.example/?oauth%5Fconsumer%5Fkey=other"], "oauth_consumer_key is in the URL's query")] {
            let twice = try await CLIProcess.run(["sign", "--consumer-key", "k", "--consumer-secret", "s"] + (extra.count == 1 ? extra : ["https://x.example/"] + extra), environment: [:])
            #expect(twice.status == 64 && twice.stderr.contains(place) && twice.stderr.contains("RFC 5849 §3.5") && twice.stdout.isEmpty, "\(twice.stderr)")
        }
        // A negative timestamp was "Missing value for '--timestamp <timestamp>'".
        let negative = try await CLIProcess.run(["sign", "https://x.example/", "--consumer-key", "k", "--consumer-secret", "s", "--timestamp", "-5"], environment: [:])
        #expect(negative.status == 64 && negative.stderr.contains("--timestamp takes whole seconds since 1970"), "\(negative.stderr)")
        let paired = try await CLIProcess.run(["sign"] + url + ["--consumer-secret", "s", "--token", "t"], environment: ["AUTHKIT_TOKEN_SECRET": "ts"])
        #expect(paired.status == 0 && paired.stdout.contains("oauth_token=\"t\""), "\(paired.stderr)")
    }

    @Test func tokenListAlignsPrintsEmptyJSONAndCreatesNothing() async throws {
        let home = TemporaryDirectory.url("authkit-newcomer-empty")
        let empty = try await CLIProcess.run(["token", "list", "--json"], environment: ["AUTHKIT_HOME": home.path])
        #expect(empty.status == 0 && empty.stdout == "[]\n", "\(empty.stdout)")
        #expect(!FileManager.default.fileExists(atPath: home.path), "listing created \(home.path)")

        let full = try self.home()
        let store = #"{"version":1,"credentials":[{"providerID":"qiita","kind":"oauth2","accessToken":"a-rather-long-token-value-1234","tokenType":"Bearer","scopes":["read_qiita"],"obtainedAt":"2026-01-01T00:00:00Z","rawFields":{}},{"providerID":"github","label":"a-long-label","kind":"oauth2","accessToken":"t","tokenType":"Bearer","scopes":["repo"],"obtainedAt":"2026-01-01T00:00:00Z","rawFields":{}}]}"#
        try Data(store.utf8).write(to: full.appendingPathComponent("credentials.json"))
        let list = try await CLIProcess.run(["token", "list"], environment: ["AUTHKIT_HOME": full.path])
        let lines = list.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 3)
        let tokenColumns = Set(lines.compactMap { line in line.range(of: "••••").map { line.distance(from: line.startIndex, to: $0.lowerBound) } })
        #expect(tokenColumns.count == 1, "columns do not line up:\n\(list.stdout)")

        // A pipe gets a long label and long scopes whole (they were cut at
        // 200 characters with '…', though README says whole).
        let label = String(repeating: "x", count: 300)
        let scopes = (1...20).map { "https://www.googleapis.com/auth/scope\($0)" }
        try await FileCredentialStore(file: full.appendingPathComponent("credentials.json"))
            .save(Credential(providerID: "google", label: label, accessToken: "t", scopes: scopes))
        let piped = try await CLIProcess.run(["token", "list"], environment: ["AUTHKIT_HOME": full.path])
        #expect(piped.stdout.contains("google (\(label))") && piped.stdout.contains(scopes.joined(separator: " ") + "\n")
                && !piped.stdout.contains("…"), "\(piped.stdout)")
    }

    @Test func aMissingBundledDirectoryIsAnError() async throws {
        let home = try home()
        let result = try await CLIProcess.run(["providers", "list"], environment: ["AUTHKIT_HOME": home.path, "AUTHKIT_BUNDLED_PROVIDERS": "/nonexistent/authkit"])
        #expect(result.status == 64 && result.stderr.contains("$AUTHKIT_BUNDLED_PROVIDERS names /nonexistent/authkit"), "\(result.stderr)")
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
        for (command, message) in [(["authorize", "--provder", "github"], "Unknown option '--provder'. Did you mean '--provider'?"),
                                   (["providers", "add", "acme", "--isuer", "https://x.example"], "Unknown option '--isuer'. Did you mean '--issuer'?"),
                                   (["authorize", "-v"], "Missing expected argument '--provider <id>'"),
                                   // --help is argument-parser's, not among the options it suggests from.
                                   (["token", "show", "--hlep"], "Unknown option '--hlep'. Did you mean '--help'?"),
                                   // An option every command takes, before the command's name.
                                   (["-v", "token", "list"], "Unknown option '-v'. It belongs after the command: authkit token … -v")] {
            let result = try await CLIProcess.run(command, environment: ["AUTHKIT_HOME": home.path])
            #expect(result.status == 64 && result.stderr.contains(message), "\(command): \(result.stderr)")
        }
        // Neither hint where it would mislead: `--kep` is no --help, and the sandbox takes no --sandbox.
        for (command, unsaid) in [(["token", "delete", "--provider", "x", "--kep"], "Did you mean '--help'"),
                                  (["--sandbox", "http://127.0.0.1:1", "sandbox", "serve", "-p", "qiita"], "belongs after")] {
            let result = try await CLIProcess.run(command, environment: ["AUTHKIT_HOME": home.path])
            #expect(result.status == 64 && result.stderr.contains("Unknown option") && !result.stderr.contains(unsaid), "\(command): \(result.stderr)")
        }
    }

    /// With neither a stored credential nor a client id, the commands that use
    /// a credential say to sign in first: that is the step that helps (and
    /// it asks for the client id itself).
    @Test func nothingStoredIsSaidBeforeAMissingClientID() async throws {
        let home = try home()
        for command in [["token", "header", "--provider", "github"], ["request", "--provider", "github", "https://api.github.com/user"],
                        ["token", "refresh", "--provider", "github"]] {
            let result = try await CLIProcess.run(command, environment: ["AUTHKIT_HOME": home.path])
            #expect(result.status == 64 && result.stderr.contains("No stored credential for github. Sign in first: authkit authorize --provider github"),
                    "\(command): \(result.stderr)")
        }
        // A provider no file describes is not one to sign in to: the near ids instead.
        let typo = try await CLIProcess.run(["token", "show", "--provider", "githbu"], environment: ["AUTHKIT_HOME": home.path])
        #expect(typo.status == 64 && typo.stderr.contains("No provider named 'githbu'. Did you mean 'github'?") && !typo.stderr.contains("Sign in"),
                "\(typo.stderr)")
        // Revoking or deleting what is not there is no reason to sign in.
        for (command, outcome) in [(["token", "revoke", "--provider", "github"], "nothing was revoked"), (["token", "delete", "--provider", "github"], "nothing was deleted")] {
            let result = try await CLIProcess.run(command, environment: ["AUTHKIT_HOME": home.path])
            #expect(result.status == 64 && result.stderr.contains("No stored credential for github; \(outcome). 'authkit token list' shows what is stored."),
                    "\(command): \(result.stderr)")
        }
        // The suggested command pastes: a label a shell would split is
        // quoted, and a control character is written out, not obeyed.
        for (label, shown) in [("my work", "--label 'my work'"), ("w\u{1B}[2J", #"--label 'w\u{1B}[2J'"#), ("it's", #"--label 'it'\''s'"#), ("仕事", "--label 仕事")] {
            let result = try await CLIProcess.run(["token", "header", "--provider", "github", "--label", label], environment: ["AUTHKIT_HOME": home.path])
            #expect(result.status == 64 && result.stderr.contains("Sign in first: authkit authorize --provider github \(shown)\n"), "\(label): \(result.stderr)")
            #expect(!result.stderr.contains("\u{1B}"), "the escape reached the terminal: \(result.stderr.debugDescription)")
        }
    }

    /// A mistyped or forgotten --label, where the provider holds other
    /// accounts: "sign in first" would make a second account of the typo.
    /// The accounts stored are named instead, as they paste.
    @Test func aLabelThatMatchesNothingNamesTheAccountsStored() async throws {
        let home = try home()
        let store = FileCredentialStore(file: home.appendingPathComponent("credentials.json"))
        for label in [nil, "work", "it's"] { try await store.save(Credential(providerID: "github", label: label, accessToken: "t")) }
        try await store.save(Credential(providerID: "qiita", label: "other-provider", accessToken: "t"))
        let stored = "Stored for github: the default account, 'it'\\''s', work. Name one with --label (none for the default)."
        for (command, prefix) in [(["token", "header"], "No stored credential for github (wrok). "), (["token", "show"], "No stored credential for github (wrok). "),
                                  (["token", "delete"], "No stored credential for github (wrok); nothing was deleted. "),
                                  (["token", "revoke"], "No stored credential for github (wrok). ")] {
            let result = try await CLIProcess.run(command + ["--provider", "github", "--label", "wrok"], environment: ["AUTHKIT_HOME": home.path])
            #expect(result.status == 64 && result.stderr.contains(prefix + stored), "\(command): \(result.stderr)")
            #expect(!result.stderr.contains("Sign in first") && !result.stderr.contains("other-provider"), "\(command): \(result.stderr)")
        }
        #expect(try await store.allCredentials().count == 4, "nothing was deleted")
    }

    @Test func tokenListShowsOneProviderWhenAsked() async throws {
        let home = try home()
        let store = FileCredentialStore(file: home.appendingPathComponent("credentials.json"))
        for (provider, label) in [("github", nil), ("github", "work"), ("qiita", nil)] {
            try await store.save(Credential(providerID: provider, label: label, accessToken: "t"))
        }
        let github = try await CLIProcess.run(["token", "list", "--provider", "github"], environment: ["AUTHKIT_HOME": home.path])
        #expect(github.status == 0 && github.stdout.contains("github (work)") && !github.stdout.contains("qiita"), "\(github.stdout)")
        let json = try await CLIProcess.run(["token", "list", "-p", "qiita", "--json"], environment: ["AUTHKIT_HOME": home.path])
        #expect(json.status == 0 && json.stdout.contains(#""provider" : "qiita""#) && !json.stdout.contains("github"), "\(json.stdout)")
        let none = try await CLIProcess.run(["token", "list", "--provider", "gitlab"], environment: ["AUTHKIT_HOME": home.path])
        #expect(none.status == 0 && none.stderr.contains("No stored credentials for gitlab. Sign in with: authkit authorize --provider gitlab"), "\(none.stderr)")
        let typo = try await CLIProcess.run(["token", "list", "--provider", "githb"], environment: ["AUTHKIT_HOME": home.path])
        #expect(typo.status == 64 && typo.stderr.contains("Did you mean 'github'"), "\(typo.stderr)")
    }

    /// `token=$(authkit token show --field access_token)` printed an expired
    /// token and nothing else: the script met 401s. It still prints it (the
    /// output is the script's), and standard error says what renews it.
    @Test func anExpiredTokenShownRawIsWarnedAbout() async throws {
        let home = try home()
        let store = FileCredentialStore(file: home.appendingPathComponent("credentials.json"))
        let past = Date(timeIntervalSinceNow: -3600)
        try await store.save(Credential(providerID: "github", accessToken: "old-token", refreshToken: "r", expiresAt: past))
        try await store.save(Credential(providerID: "qiita", accessToken: "q-token", expiresAt: past))
        let shown = try await CLIProcess.run(["token", "show", "--provider", "github", "--field", "access_token"], environment: ["AUTHKIT_HOME": home.path])
        #expect(shown.status == 0 && shown.stdout == "old-token\n", "\(shown.stdout)")
        #expect(shown.stderr.contains("warning: this access token expired at") && shown.stderr.contains("'authkit token refresh --provider github' renews it"), "\(shown.stderr)")
        let json = try await CLIProcess.run(["token", "show", "--provider", "qiita", "--json"], environment: ["AUTHKIT_HOME": home.path])
        #expect(json.status == 0 && json.stderr.contains("sign in again: authkit authorize --provider qiita"), "no refresh token: \(json.stderr)")
        let scope = try await CLIProcess.run(["token", "show", "--provider", "github", "--field", "token_type"], environment: ["AUTHKIT_HOME": home.path])
        #expect(scope.status == 0 && !scope.stderr.contains("expired"), "not the token: \(scope.stderr)")
    }

    /// `providers add` refuses an id that is not a file name before it
    /// fetches anything; and one too long for a file name (found when the
    /// write failed) or `schema` (written as providers/schema.json, which is
    /// never read as a provider: exit 0, then "No provider named 'schema'").
    @Test func providersAddRefusesAnIdThatIsNoFileName() async throws {
        let home = try home()
        let result = try await CLIProcess.run(["providers", "add", "../evil", "--issuer", "https://127.0.0.1:1"], environment: ["AUTHKIT_HOME": home.path])
        #expect(result.status == 64)
        #expect(result.stderr.contains("'../evil' is not a valid provider id"))
        #expect(!FileManager.default.fileExists(atPath: home.appendingPathComponent("evil.json").path))
        for (id, expected) in [(String(repeating: "a", count: 65), "The provider id is 65 characters long; use at most 64"),
                               ("schema", "'schema' names the descriptors' schema (providers/schema.json)")] {
            let refused = try await CLIProcess.run(["providers", "add", id, "--issuer", "https://127.0.0.1:1"], environment: ["AUTHKIT_HOME": home.path])
            #expect(refused.status == 64 && refused.stderr.contains(expected), "\(refused.stderr)")
        }
    }

    /// Metadata under the fetch's 1 MiB cap that makes a descriptor over the
    /// 1 MiB a provider file may hold (95,000 scopes, pretty-printed) is not
    /// written: every command then refused to read the file `providers add`
    /// had reported added.
    @Test func providersAddWritesNoFileNoCommandCouldRead() async throws {
        try await withServer { server in
            let home = try home()
            let scopes = (0..<95_000).map { "\"s\($0)\"" }.joined(separator: ",")
            server.route("GET", "/.well-known/oauth-authorization-server") { _ in
                .json(#"{"issuer":"\#(server.baseURL)","authorization_endpoint":"\#(server.baseURL)/authorize","token_endpoint":"\#(server.baseURL)/token","scopes_supported":[\#(scopes)]}"#)
            }
            let result = try await CLIProcess.run(["providers", "add", "idp", "--issuer", server.baseURL], environment: ["AUTHKIT_HOME": home.path])
            #expect(result.status == 65 && result.stderr.contains("more than the 1048576 a provider file may hold") && result.stderr.contains("nothing was written"),
                    "\(result.status): \(result.stderr)")
            #expect(!FileManager.default.fileExists(atPath: home.appendingPathComponent("providers/idp.json").path))
        }
    }

    /// An issuer is the server's plain URL (RFC 8414 §2): a user name and
    /// password (which would be sent as Basic credentials, and are not
    /// repeated), a query or a fragment are refused before anything is fetched.
    @Test func providersAddRefusesAnIssuerThatIsNoPlainURL() async throws {
        try await withServer { server in
            let home = try home()
            let base = server.baseURL
            for (issuer, expected) in [(base.replacingOccurrences(of: "http://", with: "http://me:hunter2@"), "must not carry a user name or password"),
                                       (base + "/?tenant=a", "has no query or fragment"), (base + "/#top", "has no query or fragment")] {
                let result = try await CLIProcess.run(["providers", "add", "acme", "--issuer", issuer], environment: ["AUTHKIT_HOME": home.path])
                #expect(result.status == 64 && result.stderr.contains(expected) && !result.stderr.contains("hunter2"), "\(issuer): \(result.stderr)")
            }
            #expect(server.requests.isEmpty, "metadata was fetched")
        }
    }

    /// `providers add github --issuer …` wrote $AUTHKIT_HOME/providers/github.json,
    /// which silently replaced the bundled GitHub for every command. The id of
    /// a bundled provider is refused before anything is fetched, unless --force.
    @Test func providersAddDoesNotReplaceABundledProviderUnasked() async throws {
        try await withServer { server in
            let home = try home()
            server.route("GET", "/.well-known/oauth-authorization-server") { _ in
                .json(#"{"issuer":"\#(server.baseURL)","authorization_endpoint":"\#(server.baseURL)/authorize","token_endpoint":"\#(server.baseURL)/token"}"#)
            }
            let refused = try await CLIProcess.run(["providers", "add", "github", "--issuer", server.baseURL], environment: ["AUTHKIT_HOME": home.path])
            #expect(refused.status == 64 && refused.stderr.contains(
                "'github' is a bundled provider (GitHub); a file of that id would replace it for every command. Choose another id, such as github-2, or pass --force"),
                    "\(refused.stderr)")
            #expect(server.requests.isEmpty && !FileManager.default.fileExists(atPath: home.appendingPathComponent("providers/github.json").path))
            let forced = try await CLIProcess.run(["providers", "add", "github", "--issuer", server.baseURL, "--force"], environment: ["AUTHKIT_HOME": home.path])
            #expect(forced.status == 0, "\(forced.stderr)")
            let list = try await CLIProcess.run(["providers", "list"], environment: ["AUTHKIT_HOME": home.path])
            #expect(list.stdout.contains("(override: \(home.path)/providers/github.json)"), "\(list.stdout)")
        }
    }

    /// A server that drips its metadata held `providers add` for 30 s at each
    /// of the two locations. `--timeout` bounds the whole discovery; the
    /// error names the issuer and the time, and nothing is written.
    @Test func providersAddAgainstADrippingServerEndsAtItsTimeout() async throws {
        try await withServer { server in
            let home = try home()
            for path in ["/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"] {
                server.route("GET", path) { _ in .streaming(.drip(every: .milliseconds(100))) }
            }
            let started = Date()
            let result = try await CLIProcess.run(["providers", "add", "acme", "--issuer", server.baseURL, "--timeout", "2"],
                                                  environment: ["AUTHKIT_HOME": home.path], timeout: 30)
            #expect(result.status == 4 && result.stderr.contains("The request to \(server.baseURL) failed: no complete answer within 2 s"), "\(result.status): \(result.stderr)")
            #expect(Date().timeIntervalSince(started) < 25, "not a deadline at each of the two locations (30 s each)")
            #expect(!FileManager.default.fileExists(atPath: home.appendingPathComponent("providers/acme.json").path))
            let zero = try await CLIProcess.run(["providers", "add", "acme", "--issuer", server.baseURL, "--timeout", "0"], environment: ["AUTHKIT_HOME": home.path])
            #expect(zero.status == 64 && zero.stderr.contains("--timeout takes 1–"), "\(zero.stderr)")
        }
    }

    /// A file that appears while discovery reads the metadata (the user's
    /// editor, another `providers add`) is not replaced without --force; with
    /// it, the file is replaced whole, 0644 from the start.
    @Test func providersAddDoesNotReplaceAFileThatAppearedMeanwhile() async throws {
        try await withServer { server in
            let home = try home()
            let target = home.appendingPathComponent("providers/acme.json")
            let mine = Data(#"{"id": "acme", "protocol": "oauth2", "authorization": {"url": "https://mine.example/a"}, "token": {"url": "https://mine.example/t"}}"#.utf8)
            server.route("GET", "/.well-known/oauth-authorization-server") { _ in
                if !FileManager.default.fileExists(atPath: target.path) { try? mine.write(to: target) }
                return .json(#"{"issuer":"\#(server.baseURL)","authorization_endpoint":"\#(server.baseURL)/authorize","token_endpoint":"\#(server.baseURL)/token"}"#)
            }
            let result = try await CLIProcess.run(["providers", "add", "acme", "--issuer", server.baseURL], environment: ["AUTHKIT_HOME": home.path])
            #expect(result.status == 65 && result.stderr.contains("\(target.path) appeared while the metadata was read; it was left as it is. Pass --force"),
                    "\(result.stderr)")
            #expect(try Data(contentsOf: target) == mine)
            let forced = try await CLIProcess.run(["providers", "add", "acme", "--issuer", server.baseURL, "--force"], environment: ["AUTHKIT_HOME": home.path])
            #expect(forced.status == 0, "\(forced.stderr)")
            #expect(try String(contentsOf: target, encoding: .utf8).contains("\(server.baseURL)/token"))
            #expect(try String(contentsOf: target, encoding: .utf8).hasSuffix("}\n"), "a text file ends with a line break")
            let mode = try FileManager.default.attributesOfItem(atPath: target.path)[.posixPermissions] as? Int
            #expect(mode == 0o644)
            #expect(try FileManager.default.contentsOfDirectory(atPath: target.deletingLastPathComponent().path) == ["acme.json"], "no temporary file left")
        }
    }

    /// A reader that goes away (`2>&1 | head -1`) is no crash: the sign-in
    /// still ends as it would have (here: the timeout, exit 5), though its
    /// status line and error had nowhere to go.
    @Test func aClosedPipeIsNotACrash() throws {
        let home = try home()
        let shell = Process()
        shell.executableURL = URL(fileURLWithPath: "/bin/bash")
        shell.arguments = ["-c", #""$0" authorize --provider microsoft --client-id c --no-browser --timeout 1 2>&1 | head -1 >/dev/null; exit ${PIPESTATUS[0]}"#,
                           CLIProcess.binary.path]
        shell.environment = ["AUTHKIT_HOME": home.path, "HOME": home.path, "PATH": "/usr/bin:/bin"]
        try shell.run()
        shell.waitUntilExit()
        #expect(shell.terminationStatus == 5, "authkit ended with \(shell.terminationStatus) (132: a trap on the closed pipe)")
    }

    /// Every line of every --help fits 80 columns, except argument-parser's
    /// own usage line, and no example is wrapped: argument-parser breaks a
    /// long line at the terminal's width, and an example broken so is no
    /// longer a command one can paste. An indented example line goes on only
    /// after a trailing backslash.
    @Test func helpExamplesFitEightyColumns() async throws {
        let home = try home()
        let commands = [[], ["authorize"], ["request"], ["sign"], ["token"], ["token", "list"], ["token", "show"], ["token", "header"],
                        ["token", "refresh"], ["token", "revoke"], ["token", "delete"], ["providers"], ["providers", "list"],
                        ["providers", "show"], ["providers", "override"], ["providers", "add"], ["providers", "validate"],
                        ["sandbox"], ["sandbox", "serve"], ["sandbox", "try"]]
        for command in commands {
            let help = try await CLIProcess.run(command + ["--help"], environment: ["AUTHKIT_HOME": home.path, "COLUMNS": "80"])
            #expect(help.status == 0, "\(command): \(help.stderr)")
            // The usage line fits too (some are written by hand, shorter
            // than argument-parser's), and names only flags the command has.
            let usage = help.stdout.split(separator: "\n").first { $0.hasPrefix("USAGE: ") } ?? ""
            #expect(usage.count < 80, "\(command): \(usage)")
            for flag in usage.split(separator: " ") where flag.hasPrefix("--") || flag.hasPrefix("[--") {
                let name = flag.trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
                #expect(help.stdout.contains("  \(name) ") || help.stdout.contains(", \(name) "), "\(command): the usage names \(name), which it lacks")
            }
            var inDiscussion = false
            var previous: Substring = ""
            for line in help.stdout.split(separator: "\n", omittingEmptySubsequences: false) {
                if line.hasPrefix("OVERVIEW") { inDiscussion = true }
                if line.hasPrefix("USAGE") || line.hasPrefix("OPTIONS") || line.hasPrefix("ARGUMENTS") || line.hasPrefix("SUBCOMMANDS") { inDiscussion = false }
                guard inDiscussion else { continue }
                #expect(line.count < 80, "\(command): a line of \(line.count) columns: \(line)")
                #expect(line.trimmingCharacters(in: .whitespaces) != "\\", "\(command): a lone backslash")
                let example = previous.hasPrefix("  ") && (previous.contains("authkit ") || previous.contains("curl "))
                #expect(!(example && !previous.hasSuffix("\\") && !line.isEmpty && !line.hasPrefix(" ")),
                        "\(command): an example broken at the terminal's width: \(previous) / \(line)")
                // "Examples:" is a heading: set off from the paragraph before it.
                #expect(!(line.hasPrefix("Example") && !previous.isEmpty && !previous.hasPrefix("OVERVIEW")),
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
        try Data(#"{"id": "gizmo", "protocol": "oauth2", "authorization": {"url": "https://gizmo.example/a"}, "token": {"url": "https://gizmo.example/t"}}"#.utf8)
            .write(to: mine.appendingPathComponent("gizmo.json"))
        func complete(_ subcommand: [String], _ option: String, _ words: [String]) async throws -> [String] {
            let result = try await CLIProcess.run(["---completion"] + subcommand + ["--", option, String(words.count - 1), String(words.last!.count)] + words,
                                                  environment: ["AUTHKIT_HOME": home.path])
            #expect(result.status == 0 && result.stderr.isEmpty, "\(result.stderr)")
            return result.stdout.split(separator: "\n").map(String.init)
        }
        let github = try await complete(["token", "show"], "--provider", ["authkit", "token", "show", "--provider", "gi"])
        #expect(github.contains("github") && github.contains("gitlab") && github.allSatisfy { $0.hasPrefix("gi") }, "\(github)")
        let withDirectory = try await complete(["authorize"], "--provider", ["authkit", "authorize", "--providers-dir", mine.path, "--provider", "gi"])
        #expect(withDirectory.contains("gizmo") && withDirectory.contains("github"), "\(withDirectory)")
        let shown = try await complete(["providers", "show"], "positional@0", ["authkit", "providers", "show", "qii"])
        #expect(shown == ["qiita", "qiita-team"], "\(shown)")
        let sandboxed = try await complete(["sandbox", "serve"], "--provider", ["authkit", "sandbox", "serve", "--provider", "x"])
        #expect(sandboxed == ["x"], "\(sandboxed)")

        // `--label <TAB>`: the labels stored for the provider on the line, read without the lock or any write.
        let store = FileCredentialStore(file: home.appendingPathComponent("credentials.json"))
        for label in ["work", "wiki-bot", "personal"] { try await store.save(Credential(providerID: "qiita", label: label, accessToken: "t-\(label)")) }
        try await store.save(Credential(providerID: "github", label: "wander", accessToken: "t"))
        let before = try FileManager.default.contentsOfDirectory(atPath: home.path).sorted()
        let labels = try await complete(["token", "show"], "--label", ["authkit", "token", "show", "--provider", "qiita", "--label", "w"])
        #expect(labels == ["wiki-bot", "work"], "\(labels)")
        let refreshLabels = try await complete(["token", "refresh"], "--label", ["authkit", "token", "refresh", "-p", "github", "--label", ""])
        #expect(refreshLabels == ["wander"], "\(refreshLabels)")
        let noProvider = try await complete(["request"], "--label", ["authkit", "request", "--label", ""])
        #expect(noProvider.isEmpty && !labels.joined().contains("t-"), "\(noProvider)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: home.path).sorted() == before, "completion wrote nothing")
    }

    @Test func providersShowAndOverride() async throws {
        let home = try home()
        let environment = ["AUTHKIT_HOME": home.path]
        let json = try await CLIProcess.run(["providers", "show", "qiita", "--json"], environment: environment)
        #expect(json.status == 0 && json.stdout.contains(#""successStatus" : ["#), "\(json.stdout)")
        // The summary's `{host}` is explained: what it is, and where its value comes from.
        let summary = try await CLIProcess.run(["providers", "show", "gitlab-self-managed"], environment: environment)
        #expect(summary.stdout.contains("authorize:     https://{host}/oauth/authorize\n") && summary.stdout.contains("api:           https://{host}\n")
                && summary.stdout.contains("placeholder:   {host} (required, no default): the GitLab instance's host name")
                && summary.stdout.contains("set with --placeholder host=…, AUTHKIT_GITLAB_SELF_MANAGED_HOST, or config.json"), "\(summary.stdout)")
        let withDefault = try await CLIProcess.run(["providers", "show", "microsoft"], environment: environment)
        #expect(withDefault.stdout.contains("placeholder:   {tenant} (default: common):"), "\(withDefault.stdout)")
        // A value config.json or the environment sets is shown with where it comes from.
        try Data(#"{"providers": {"gitlab-self-managed": {"placeholders": {"host": "git.example.com"}}}}"#.utf8)
            .write(to: home.appendingPathComponent("config.json"))
        let fromFile = try await CLIProcess.run(["providers", "show", "gitlab-self-managed"], environment: environment)
        #expect(fromFile.stdout.contains("placeholder:   {host} (set to git.example.com by config.json; required, no default)"), "\(fromFile.stdout)")
        let fromVariable = try await CLIProcess.run(["providers", "show", "microsoft"],
                                                    environment: environment.merging(["AUTHKIT_MICROSOFT_TENANT": "contoso"]) { $1 })
        #expect(fromVariable.stdout.contains("placeholder:   {tenant} (set to contoso by AUTHKIT_MICROSOFT_TENANT; default: common)"), "\(fromVariable.stdout)")
        try FileManager.default.removeItem(at: home.appendingPathComponent("config.json"))
        // Whether a sign-in needs the client secret, where the descriptor says so.
        for (id, line) in [("qiita", "client secret: required (no public clients)\n"), ("github", "client secret: required, except for the device grant (a refresh needs it)\n"),
                           ("twitch", "client secret: required, except for the device grant and refreshing its tokens\n"),
                           ("google", "client secret: required for the device grant\n")] {
            let shown = try await CLIProcess.run(["providers", "show", id], environment: environment)
            #expect(shown.stdout.contains(line), "\(id): \(shown.stdout)")
        }
        #expect(!summary.stdout.contains("client secret:"), "GitLab has public clients")
        #expect(json.stdout.contains(#""requiresClientSecret" : true"#), "\(json.stdout)")
        let override = try await CLIProcess.run(["providers", "override", "qiita"], environment: environment)
        let written = home.appendingPathComponent("providers/qiita.json")
        #expect(override.status == 0 && override.stdout == written.path + "\n", "\(override.stderr)")
        try Data(#"{"id": "qiita", "protocol": "oauth2", "authorization": {"url": "https://mine.example/a"}, "token": {"url": "https://mine.example/t"}}"#.utf8)
            .write(to: written)
        let again = try await CLIProcess.run(["providers", "override", "qiita"], environment: environment)
        #expect(again.status == 65 && again.stderr.contains("exists already"))
        #expect(try String(contentsOf: written, encoding: .utf8).contains("mine.example"), "the user's file was replaced")
        let bundled = try await CLIProcess.run(["providers", "show", "qiita", "--bundled"], environment: environment)
        #expect(bundled.stdout.contains("https://qiita.com/api/v2/oauth/authorize"), "--bundled shows the shipped file even when overridden")
        // An id names a file in the providers directory: '../x' named one
        // outside it ("write …/providers/../x.json yourself"; --path printed it).
        let outside = try await CLIProcess.run(["providers", "override", "../x", "--path"], environment: environment)
        #expect(outside.status == 64 && outside.stderr.contains("'../x' is not a provider id") && outside.stdout.isEmpty, "\(outside.stderr)")
        // A misspelt id gets the near ones, as `providers show` gives them.
        let typo = try await CLIProcess.run(["providers", "override", "githb"], environment: environment)
        #expect(typo.status == 64 && typo.stderr.contains("No bundled descriptor is named 'githb'. Did you mean 'github' or 'gitlab'?"), "\(typo.stderr)")
    }

    /// A file where `$AUTHKIT_HOME/providers` belongs: `providers list` was
    /// silent (every override in it missed, the bundled files used), and
    /// `providers override` said its directory "cannot be created (File
    /// exists)". The help's example edits what `override` prints, and
    /// `--path` prints the same path for the next edit.
    @Test func aFileWhereTheProvidersDirectoryBelongsIsNamed() async throws {
        let home = try CLIProcess.home("authkit-providers-file")
        let providers = home.appendingPathComponent("providers")
        try FileManager.default.removeItem(at: providers)
        try Data("notes".utf8).write(to: providers)
        let environment = ["AUTHKIT_HOME": home.path]
        let list = try await CLIProcess.run(["providers", "list"], environment: environment)
        #expect(list.status == 0 && list.stderr.contains("\(providers.path): is a regular file, not a directory: no provider file is read from it. Move it aside."), "\(list.stderr)")
        let override = try await CLIProcess.run(["providers", "override", "qiita"], environment: environment)
        #expect(override.status == 74 && override.stderr.contains("\(providers.path) is a regular file, not a directory. Move it aside"), "\(override.stderr)")
        #expect(try String(contentsOf: providers, encoding: .utf8) == "notes")

        try FileManager.default.removeItem(at: providers)
        let help = try await CLIProcess.run(["providers", "override", "--help"], environment: environment)
        #expect(help.stdout.contains(#"$EDITOR "$(authkit providers override qiita)""#), "\(help.stdout)")
        let written = try await CLIProcess.run(["providers", "override", "qiita"], environment: environment)
        let again = try await CLIProcess.run(["providers", "override", "qiita", "--path"], environment: environment)
        #expect(written.status == 0 && again.status == 0 && written.stdout == again.stdout
                && FileManager.default.fileExists(atPath: written.stdout.trimmingCharacters(in: .newlines)), "\(written.stderr)")
    }

    /// What `providers override` writes, authkit reads, even under umask 000
    /// (a file others can write is refused): the new directory is 0700 and
    /// the file 0644.
    @Test func anOverrideWrittenUnderAPermissiveUmaskIsStillRead() async throws {
        let home = TemporaryDirectory.url("authkit-umask")
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: home) }
        let permissive = ["/bin/sh", "-c", #"umask 000; exec "$0" "$@""#]
        let override = try await CLIProcess.run(["providers", "override", "qiita"], environment: ["AUTHKIT_HOME": home.path], launcher: permissive)
        #expect(override.status == 0, "\(override.stderr)")
        func mode(_ path: String) throws -> Int { try #require(FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int) }
        #expect(try mode(home.appendingPathComponent("providers").path) == 0o700)
        #expect(try mode(home.appendingPathComponent("providers/qiita.json").path) == 0o644)
        let show = try await CLIProcess.run(["providers", "show", "qiita"], environment: ["AUTHKIT_HOME": home.path], launcher: permissive)
        #expect(show.status == 0, "\(show.stderr)")
    }

    @Test func theManualPromptEndsItsLineAndExplainsTheErrorPage() async throws {
        let home = try home()
        let result = try await CLIProcess.run(["authorize", "--provider", "github", "--client-id", "c", "--client-secret", "s", "--manual"], environment: ["AUTHKIT_HOME": home.path])
        #expect(result.stderr.contains("the browser will most likely show a connection error; the URL in its address bar is what to paste:\n"), "\(result.stderr)")
        // Nothing to read (standard input closed at once): said as such, exit 65, not a bare "Cancelled." and 130.
        #expect(result.status == 65 && result.stderr.contains("authkit: error: Standard input ended before the redirect URL (or PIN) was pasted; nothing was stored."),
                "exit \(result.status): \(result.stderr)")
        let empty = try await CLIProcess.run(["authorize", "--provider", "github", "--client-id", "c", "--client-secret", "s", "--manual"], environment: ["AUTHKIT_HOME": home.path],
                                             respond: { $0.contains("what to paste") ? "" : nil })
        #expect(empty.status == 65 && empty.stderr.contains("An empty line was entered before the redirect URL"), "exit \(empty.status): \(empty.stderr)")
    }
}
