import AuthKit
import AuthKitTestSupport
import Foundation
import Testing

@testable import authkit

/// `authkit providers`: validate, add, show and override, and the files they read and write.
@Suite(.serialized) struct ProvidersCommandTests: CLIFixture {
    @Test func validateSkipsTheSchemaExplainsDirectoriesAndKeepsPathsAsGiven() async throws {
        let home = try home()
        let bad =
            #"{"id": "bad", "protocol": "oauth2", "pkce": "plain", "authorization": {"url": "https://a.example/x"}, "token": {"url": "http://a.example/t"}}"#
        try Data(bad.utf8).write(to: home.appendingPathComponent("providers/bad.json"))
        let result = try await CLIProcess.run(
            [
                "providers", "validate", "providers/schema.json", "providers/qiita.json", "\(home.path)/providers",
                "providers/../providers/github.json",
                "\(home.path)/providers/bad.json",
            ],
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
        try Data(
            #"{"id": "shared", "protocol": "oauth2", "authorization": {"url": "https://a.example/x"}, "token": {"url": "https://a.example/t"}}"#
                .utf8
        ).write(to: shared)
        try FileManager.default.setAttributes([.posixPermissions: 0o666], ofItemAtPath: shared.path)
        let writable = try await CLIProcess.run(
            ["providers", "validate", shared.path], environment: ["AUTHKIT_HOME": home.path])
        #expect(
            writable.status == 65
                && writable.stdout.contains(
                    "\(shared.path): valid (shared, oauth2), but authkit will not read it: every user can write to it (mode 0666)"
                ), "\(writable.stdout)")
    }

    /// What `providers show` and `providers add` report: the introspection
    /// endpoint too, and each endpoint the client authenticates at on
    /// another origin than the token endpoint's, marked (discovery takes
    /// what the metadata names, and the client secret goes there).
    @Test func endpointsOnAnotherOriginAreMarked() throws {
        let descriptor = try ProviderDescriptor(
            json: Data(
                """
                {"id": "far", "protocol": "oauth2",
                 "authorization": {"url": "https://as.example/authorize", "par": "https://as.example/par"},
                 "token": {"url": "https://as.example/token"},
                 "revocation": {"url": "https://as.example/revoke"},
                 "introspection": "https://elsewhere.example/introspect",
                 "device": {"url": "https://AS.example/device"}}
                """.utf8))
        let lines = ProvidersShow.endpoints(of: descriptor)
        let marked = lines.filter { $0.contains("another origin") }
        #expect(
            marked == [
                "introspection: https://elsewhere.example/introspect (another origin than the token endpoint's: the client authenticates there too)"
            ], "\(lines)")
        #expect(lines.contains("revocation:    https://as.example/revoke"), "\(lines)")
    }

    @Test func aMissingBundledDirectoryIsAnError() async throws {
        let home = try home()
        let result = try await CLIProcess.run(
            ["providers", "list"],
            environment: ["AUTHKIT_HOME": home.path, "AUTHKIT_BUNDLED_PROVIDERS": "/nonexistent/authkit"])
        #expect(
            result.status == 64 && result.stderr.contains("$AUTHKIT_BUNDLED_PROVIDERS names /nonexistent/authkit"),
            "\(result.stderr)")
    }

    /// A dangling link where the file would go is a file there: refused
    /// before anything is fetched, the link left as it is (it was taken for
    /// no file, the issuer asked, and the write said the file had appeared).
    @Test func providersAddRefusesADanglingLinkBeforeFetching() async throws {
        let home = try home()
        let providers = home.appendingPathComponent("providers")
        try FileManager.default.createDirectory(at: providers, withIntermediateDirectories: true)
        let link = providers.appendingPathComponent("acme.json")
        try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: "/nonexistent/acme.json")
        try await withServer { server in
            let result = try await CLIProcess.run(
                ["providers", "add", "acme", "--issuer", server.baseURL], environment: ["AUTHKIT_HOME": home.path])
            #expect(
                result.status == 65 && result.stderr.contains("is a symbolic link (to nothing) already"),
                "\(result.status) \(result.stderr)")
            #expect(server.requests.isEmpty, "the issuer was asked")
        }
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link.path) == "/nonexistent/acme.json")
    }

    /// `providers add` refuses an id that is not a file name before it
    /// fetches anything; and one too long for a file name (found when the
    /// write failed) or `schema` (written as providers/schema.json, which is
    /// never read as a provider: exit 0, then "No provider named 'schema'").
    @Test func providersAddRefusesAnIdThatIsNoFileName() async throws {
        let home = try home()
        let result = try await CLIProcess.run(
            ["providers", "add", "../evil", "--issuer", "https://127.0.0.1:1"], environment: ["AUTHKIT_HOME": home.path]
        )
        #expect(result.status == 64)
        #expect(result.stderr.contains("'../evil' is not a valid provider id"))
        #expect(!FileManager.default.fileExists(atPath: home.appendingPathComponent("evil.json").path))
        for (id, expected) in [
            (String(repeating: "a", count: 65), "The provider id is 65 characters long; use at most 64"),
            ("schema", "'schema' names the descriptors' schema (providers/schema.json)"),
        ] {
            let refused = try await CLIProcess.run(
                ["providers", "add", id, "--issuer", "https://127.0.0.1:1"], environment: ["AUTHKIT_HOME": home.path])
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
                .json(
                    #"{"issuer":"\#(server.baseURL)","authorization_endpoint":"\#(server.baseURL)/authorize","token_endpoint":"\#(server.baseURL)/token","scopes_supported":[\#(scopes)]}"#
                )
            }
            let result = try await CLIProcess.run(
                ["providers", "add", "idp", "--issuer", server.baseURL], environment: ["AUTHKIT_HOME": home.path])
            #expect(
                result.status == 65 && result.stderr.contains("more than the 1048576 a provider file may hold")
                    && result.stderr.contains("nothing was written"),
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
            for (issuer, expected) in [
                (
                    base.replacingOccurrences(of: "http://", with: "http://me:hunter2@"),
                    "--issuer carries a user name or password"
                ),
                (base + "/?tenant=a&client_secret=hunter2", "--issuer has a query or fragment"),
                (base + "/#top", "--issuer has a query or fragment"),
                // Refused for its scheme, and still not repeated whole.
                ("ftp://me:hunter2@idp.example", "--issuer carries a user name or password"),
                ("ftp://idp.example/?client_secret=hunter2", "--issuer is not an absolute https URL"),
                // Compared byte for byte with the metadata's: as a server writes it.
                (base + "/a/../b", "'.' and '..' segments"), (base + "/realms/%7Bx%7D/./", "'.' and '..' segments"),
                ("https://exa mple.com", "which no host name has"),
            ] {
                let result = try await CLIProcess.run(
                    ["providers", "add", "acme", "--issuer", issuer], environment: ["AUTHKIT_HOME": home.path])
                #expect(
                    result.status == 64 && result.stderr.contains(expected) && !result.stderr.contains("hunter2"),
                    "\(issuer): \(result.stderr)")
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
                .json(
                    #"{"issuer":"\#(server.baseURL)","authorization_endpoint":"\#(server.baseURL)/authorize","token_endpoint":"\#(server.baseURL)/token"}"#
                )
            }
            let refused = try await CLIProcess.run(
                ["providers", "add", "github", "--issuer", server.baseURL], environment: ["AUTHKIT_HOME": home.path])
            #expect(
                refused.status == 64
                    && refused.stderr.contains(
                        "'github' is a bundled provider (GitHub); a file of that id would replace it for every command. Choose another id, such as github-2, or pass --force"
                    ),
                "\(refused.stderr)")
            #expect(
                server.requests.isEmpty
                    && !FileManager.default.fileExists(
                        atPath: home.appendingPathComponent("providers/github.json").path)
            )
            let forced = try await CLIProcess.run(
                ["providers", "add", "github", "--issuer", server.baseURL, "--force"],
                environment: ["AUTHKIT_HOME": home.path])
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
            let result = try await CLIProcess.run(
                ["providers", "add", "acme", "--issuer", server.baseURL, "--timeout", "2"],
                environment: ["AUTHKIT_HOME": home.path], timeout: 30)
            #expect(
                result.status == 4
                    && result.stderr.contains("The request to \(server.baseURL) failed: no complete answer within 2 s"),
                "\(result.status): \(result.stderr)")
            #expect(Date().timeIntervalSince(started) < 25, "not a deadline at each of the two locations (30 s each)")
            #expect(!FileManager.default.fileExists(atPath: home.appendingPathComponent("providers/acme.json").path))
            let zero = try await CLIProcess.run(
                ["providers", "add", "acme", "--issuer", server.baseURL, "--timeout", "0"],
                environment: ["AUTHKIT_HOME": home.path])
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
            let mine = Data(
                #"{"id": "acme", "protocol": "oauth2", "authorization": {"url": "https://mine.example/a"}, "token": {"url": "https://mine.example/t"}}"#
                    .utf8)
            server.route("GET", "/.well-known/oauth-authorization-server") { _ in
                if !FileManager.default.fileExists(atPath: target.path) { try? mine.write(to: target) }
                return .json(
                    #"{"issuer":"\#(server.baseURL)","authorization_endpoint":"\#(server.baseURL)/authorize","token_endpoint":"\#(server.baseURL)/token"}"#
                )
            }
            let result = try await CLIProcess.run(
                ["providers", "add", "acme", "--issuer", server.baseURL], environment: ["AUTHKIT_HOME": home.path])
            #expect(
                result.status == 65
                    && result.stderr.contains(
                        "\(target.path) appeared while the metadata was read; it was left as it is. Pass --force"),
                "\(result.stderr)")
            #expect(try Data(contentsOf: target) == mine)
            let forced = try await CLIProcess.run(
                ["providers", "add", "acme", "--issuer", server.baseURL, "--force"],
                environment: ["AUTHKIT_HOME": home.path])
            #expect(forced.status == 0, "\(forced.stderr)")
            #expect(try String(contentsOf: target, encoding: .utf8).contains("\(server.baseURL)/token"))
            #expect(
                try String(contentsOf: target, encoding: .utf8).hasSuffix("}\n"), "a text file ends with a line break")
            let mode = try FileManager.default.attributesOfItem(atPath: target.path)[.posixPermissions] as? Int
            #expect(mode == 0o644)
            #expect(
                try FileManager.default.contentsOfDirectory(atPath: target.deletingLastPathComponent().path) == [
                    "acme.json"
                ], "no temporary file left")
        }
    }

    /// "(any port)" only where `authorize` lets the listener choose one: a
    /// redirect URI without a port, named in the authorization request. One
    /// that is not (Qiita's shape) goes to the registered URI, whose port
    /// the listener must hold.
    @Test func providersShowSaysAnyPortOnlyWhereTheListenerChoosesIt() async throws {
        let home = try home()
        defer { try? FileManager.default.removeItem(at: home) }
        for (id, sends) in [("named", true), ("unnamed", false)] {
            let file = """
                {"id": "\(id)", "name": "\(id)", "protocol": "oauth2",
                 "authorization": {"url": "https://\(id).example/authorize", "sendRedirectURI": \(sends)},
                 "token": {"url": "https://\(id).example/token"}}
                """
            try Data(file.utf8).write(to: home.appendingPathComponent("providers/\(id).json"))
        }
        let environment = ["AUTHKIT_HOME": home.path]
        let named = try await CLIProcess.run(["providers", "show", "named"], environment: environment)
        #expect(named.status == 0 && named.stdout.contains("(any port)"), "\(named.stdout)\(named.stderr)")
        let unnamed = try await CLIProcess.run(["providers", "show", "unnamed"], environment: environment)
        #expect(unnamed.status == 0, "\(unnamed.stderr)")
        #expect(unnamed.stdout.contains("redirect:") && !unnamed.stdout.contains("(any port)"), "\(unnamed.stdout)")
    }

    @Test func providersShowAndOverride() async throws {
        let home = try home()
        let environment = ["AUTHKIT_HOME": home.path]
        let json = try await CLIProcess.run(["providers", "show", "qiita", "--json"], environment: environment)
        #expect(json.status == 0 && json.stdout.contains(#""successStatus" : ["#), "\(json.stdout)")
        // The summary's `{host}` is explained: what it is, and where its value comes from.
        let summary = try await CLIProcess.run(["providers", "show", "gitlab-self-managed"], environment: environment)
        #expect(
            summary.stdout.contains("authorize:     https://{host}/oauth/authorize\n")
                && summary.stdout.contains("api:           https://{host}\n")
                && summary.stdout.contains(
                    "placeholder:   {host} (required, no default): the GitLab instance's host name")
                && summary.stdout.contains(
                    "set with --placeholder host=…, AUTHKIT_GITLAB_SELF_MANAGED_HOST, or config.json"),
            "\(summary.stdout)")
        let withDefault = try await CLIProcess.run(["providers", "show", "microsoft"], environment: environment)
        #expect(withDefault.stdout.contains("placeholder:   {tenant} (default: common):"), "\(withDefault.stdout)")
        // A value config.json or the environment sets is shown with where it comes from.
        try Data(#"{"providers": {"gitlab-self-managed": {"placeholders": {"host": "git.example.com"}}}}"#.utf8)
            .write(to: home.appendingPathComponent("config.json"))
        let fromFile = try await CLIProcess.run(["providers", "show", "gitlab-self-managed"], environment: environment)
        #expect(
            fromFile.stdout.contains(
                "placeholder:   {host} (set to git.example.com by config.json; required, no default)"),
            "\(fromFile.stdout)")
        let fromVariable = try await CLIProcess.run(
            ["providers", "show", "microsoft"],
            environment: environment.merging(["AUTHKIT_MICROSOFT_TENANT": "contoso"]) { $1 })
        #expect(
            fromVariable.stdout.contains(
                "placeholder:   {tenant} (set to contoso by AUTHKIT_MICROSOFT_TENANT; default: common)"),
            "\(fromVariable.stdout)")
        try FileManager.default.removeItem(at: home.appendingPathComponent("config.json"))
        // Whether a sign-in needs the client secret, where the descriptor says so.
        for (id, line) in [
            ("qiita", "client secret: required (no public clients)\n"),
            ("github", "client secret: required, except for the device grant (a refresh needs it)\n"),
            ("twitch", "client secret: required, except for the device grant and refreshing its tokens\n"),
            ("google", "client secret: required for the device grant\n"),
        ] {
            let shown = try await CLIProcess.run(["providers", "show", id], environment: environment)
            #expect(shown.stdout.contains(line), "\(id): \(shown.stdout)")
        }
        #expect(!summary.stdout.contains("client secret:"), "GitLab has public clients")
        #expect(json.stdout.contains(#""requiresClientSecret" : true"#), "\(json.stdout)")
        let override = try await CLIProcess.run(["providers", "override", "qiita"], environment: environment)
        let written = home.appendingPathComponent("providers/qiita.json")
        #expect(override.status == 0 && override.stdout == written.path + "\n", "\(override.stderr)")
        try Data(
            #"{"id": "qiita", "protocol": "oauth2", "authorization": {"url": "https://mine.example/a"}, "token": {"url": "https://mine.example/t"}}"#
                .utf8
        )
        .write(to: written)
        let again = try await CLIProcess.run(["providers", "override", "qiita"], environment: environment)
        #expect(again.status == 65 && again.stderr.contains("exists already"))
        #expect(
            try String(contentsOf: written, encoding: .utf8).contains("mine.example"), "the user's file was replaced")
        let bundled = try await CLIProcess.run(["providers", "show", "qiita", "--bundled"], environment: environment)
        #expect(
            bundled.stdout.contains("https://qiita.com/api/v2/oauth/authorize"),
            "--bundled shows the shipped file even when overridden")
        // An id names a file in the providers directory: '../x' named one
        // outside it ("write …/providers/../x.json yourself"; --path printed it).
        let outside = try await CLIProcess.run(["providers", "override", "../x", "--path"], environment: environment)
        #expect(
            outside.status == 64 && outside.stderr.contains("'../x' is not a provider id") && outside.stdout.isEmpty,
            "\(outside.stderr)")
        // A misspelt id gets the near ones, as `providers show` gives them.
        let typo = try await CLIProcess.run(["providers", "override", "githb"], environment: environment)
        #expect(
            typo.status == 64
                && typo.stderr.contains("No bundled descriptor is named 'githb'. Did you mean 'github' or 'gitlab'?"),
            "\(typo.stderr)")
    }

    /// `providers show` on an 80-column terminal: prose after a value (a
    /// placeholder's description, 224 columns for Salesforce; a note after
    /// an endpoint, 148 for GitHub's revocation) is broken at spaces under
    /// the values' column, as the docs promise; the label and its URL stay
    /// together; a pipe gets each line whole.
    @Test(.scriptGivesATerminal)
    func providersShowWrapsItsProseOnATerminal() async throws {
        let home = try home()
        defer { try? FileManager.default.removeItem(at: home) }
        for id in ["salesforce", "github", "reddit"] {
            let command =
                "stty cols 80 rows 24; env AUTHKIT_HOME='\(home.path)' '\(CLIProcess.binary.path)' providers show \(id)"
            let terminal = try await CLIProcess.run(
                ["-qec", command, "/dev/null"], environment: [:], launcher: ["/usr/bin/script"], bareLauncher: true)
            #expect(terminal.status == 0, "\(id): \(terminal.stdout)")
            let lines = terminal.stdout.replacingOccurrences(of: "\r", with: "").split(separator: "\n").map(String.init)
            let piped = try await CLIProcess.run(["providers", "show", id], environment: ["AUTHKIT_HOME": home.path])
            let pipedLines = piped.stdout.split(separator: "\n").map(String.init)
            #expect(
                piped.status == 0 && pipedLines.contains { $0.terminalColumns > 80 } && lines.count > pipedLines.count,
                "\(id): \(piped.stdout)")
            // A line past 80 columns is a label and one word the terminal must fold (a URL).
            for line in lines where line.terminalColumns > 80 {
                #expect(!line.dropFirst(15).contains(" "), "\(id): \(line)")
            }
            // Continuations sit under the values; every value stays beside its label.
            #expect(
                lines.contains {
                    $0.hasPrefix(String(repeating: " ", count: 15)) && !$0.hasPrefix(String(repeating: " ", count: 16))
                }, "\(id): \(lines)")
            for label in pipedLines.compactMap({ $0.split(separator: " ").first }) where label.hasSuffix(":") {
                let labelled = pipedLines.first { $0.hasPrefix(label + " ") }!
                let value = labelled.dropFirst(15).split(separator: " ").first ?? ""
                #expect(lines.contains { $0.hasPrefix(label + " ") && $0.contains(value) }, "\(id): \(label) \(value)")
            }
        }
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
        #expect(
            list.status == 0
                && list.stderr.contains(
                    "\(providers.path): is a regular file, not a directory: no provider file is read from it. Move it aside."
                ), "\(list.stderr)")
        let override = try await CLIProcess.run(["providers", "override", "qiita"], environment: environment)
        #expect(
            override.status == 74
                && override.stderr.contains("\(providers.path) is a regular file, not a directory. Move it aside"),
            "\(override.stderr)")
        #expect(try String(contentsOf: providers, encoding: .utf8) == "notes")

        try FileManager.default.removeItem(at: providers)
        let help = try await CLIProcess.run(["providers", "override", "--help"], environment: environment)
        #expect(help.stdout.contains(#"$EDITOR "$(authkit providers override qiita)""#), "\(help.stdout)")
        let written = try await CLIProcess.run(["providers", "override", "qiita"], environment: environment)
        let again = try await CLIProcess.run(["providers", "override", "qiita", "--path"], environment: environment)
        #expect(
            written.status == 0 && again.status == 0 && written.stdout == again.stdout
                && FileManager.default.fileExists(atPath: written.stdout.trimmingCharacters(in: .newlines)),
            "\(written.stderr)")
    }

    /// What `providers override` writes, authkit reads, even under umask 000
    /// (a file others can write is refused): the new directory is 0700 and
    /// the file 0644.
    @Test func anOverrideWrittenUnderAPermissiveUmaskIsStillRead() async throws {
        let home = TemporaryDirectory.url("authkit-umask")
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: home) }
        let permissive = ["/bin/sh", "-c", #"umask 000; exec "$0" "$@""#]
        let override = try await CLIProcess.run(
            ["providers", "override", "qiita"], environment: ["AUTHKIT_HOME": home.path], launcher: permissive)
        #expect(override.status == 0, "\(override.stderr)")
        func mode(_ path: String) throws -> Int {
            try #require(FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
        }
        #expect(try mode(home.appendingPathComponent("providers").path) == 0o700)
        #expect(try mode(home.appendingPathComponent("providers/qiita.json").path) == 0o644)
        let show = try await CLIProcess.run(
            ["providers", "show", "qiita"], environment: ["AUTHKIT_HOME": home.path], launcher: permissive)
        #expect(show.status == 0, "\(show.stderr)")
    }

    /// Two ids that differ only by `-` and `_` read one set of variables
    /// (`AUTHKIT_MY_IDP_CLIENT_ID`), and the catalogue refuses one of the
    /// two: `providers add my-idp` beside `my_idp.json` (or `qiita_team`
    /// beside the bundled `qiita-team`) said it had added it, and `my_idp`,
    /// the provider the user had, stopped working. Refused before anything
    /// is fetched, even with --force; `providers validate` names the clash.
    @Test func anIdWhoseVariablesAnotherProviderReadsIsRefused() async throws {
        try await withServer { server in
            let home = try home()
            defer { try? FileManager.default.removeItem(at: home) }
            let providers = home.appendingPathComponent("providers")
            try FileManager.default.createDirectory(
                at: providers, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            let mine = providers.appendingPathComponent("my_idp.json")
            try Data(
                #"{"id":"my_idp","name":"Mine","protocol":"oauth2","authorization":{"url":"https://idp.example/a"},"token":{"url":"https://idp.example/t"}}"#
                    .utf8
            ).write(to: mine)
            let environment = ["AUTHKIT_HOME": home.path]
            for (id, other) in [("my-idp", "'my_idp'"), ("qiita_team", "'qiita-team'")] {
                for force in [false, true] {
                    let added = try await CLIProcess.run(
                        ["providers", "add", id, "--issuer", server.baseURL] + (force ? ["--force"] : []),
                        environment: environment)
                    #expect(
                        added.status == 64
                            && added.stderr.contains(
                                "Provider '\(id)': its settings would be read from AUTHKIT_\(id.uppercased().replacingOccurrences(of: "-", with: "_"))_CLIENT_ID, which provider \(other)"
                            ) && added.stderr.contains("Nothing was written."), "\(id): \(added.stderr)")
                    #expect(
                        !FileManager.default.fileExists(atPath: providers.appendingPathComponent("\(id).json").path))
                }
            }
            #expect(server.requests.isEmpty, "metadata was fetched for an id that cannot be added")
            let show = try await CLIProcess.run(["providers", "show", "my_idp"], environment: environment)
            #expect(show.status == 0, "\(show.stderr)")
            // The same file checked before it is put in place.
            let elsewhere = home.appendingPathComponent("my-idp.json")
            try Data(
                #"{"id":"my-idp","name":"Mine","protocol":"oauth2","authorization":{"url":"https://idp.example/a"},"token":{"url":"https://idp.example/t"}}"#
                    .utf8
            ).write(to: elsewhere)
            let validated = try await CLIProcess.run(
                ["providers", "validate", elsewhere.path, mine.path], environment: environment)
            #expect(
                validated.status == 65
                    && validated.stdout.contains(
                        "\(elsewhere.path): field 'id': its settings would be read from AUTHKIT_MY_IDP_CLIENT_ID, which provider 'my_idp'"
                    ) && validated.stdout.contains("\(mine.path): ok (my_idp, oauth2)"), "\(validated.stdout)")
        }
    }

    /// `providers override` and `providers add` into a providers directory
    /// others can write in: the catalogue reads nothing from it, so the file
    /// was reported written, then refused, and the override hid the bundled
    /// provider. Refused before writing, with the command that fixes it.
    @Test func nothingIsWrittenIntoAProvidersDirectoryOthersCanWriteIn() async throws {
        let home = try home()
        defer { try? FileManager.default.removeItem(at: home) }
        let providers = home.appendingPathComponent("providers")
        try FileManager.default.createDirectory(at: providers, withIntermediateDirectories: true)
        guard chmod(providers.path, 0o777) == 0 else { throw POSIXError(.EPERM) }
        let override = try await CLIProcess.run(
            ["providers", "override", "qiita"], environment: ["AUTHKIT_HOME": home.path])
        #expect(
            override.status == 65
                && override.stderr.contains("qiita.json was not written: every user can write to its directory")
                && override.stderr.contains("Run: chmod go-w"), "\(override.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: providers.path).isEmpty)
    }
}
