import AuthKit
import AuthKitTestSupport
import Foundation
import Testing

@testable import authkit

/// Client ids, secrets and placeholder values, from flags, variables and config.json: checked where they come from, and asked for before anyone approves.
@Suite(.serialized) struct ClientSettingsInputTests: CLIFixture {
    @Test func configJSONIsCheckedStrictly() async throws {
        let home = try home()
        try Data(#"{"providers": {"qiita": {"clientId": "x"}}}"#.utf8).write(
            to: home.appendingPathComponent("config.json"))
        let misspelt = try await CLIProcess.run(
            ["authorize", "--provider", "qiita", "--manual"], environment: ["AUTHKIT_HOME": home.path])
        #expect(misspelt.status == 65)
        #expect(
            misspelt.stderr.contains(
                "field 'providers.qiita.clientId': unknown field. Did you mean 'clientID'? Check its spelling against README.md, \"Client id and secret\""
            ), "\(misspelt.stderr)")
        try Data("{\n  \"providers\": {,\n}".utf8).write(to: home.appendingPathComponent("config.json"))
        let broken = try await CLIProcess.run(
            ["authorize", "--provider", "qiita", "--manual"], environment: ["AUTHKIT_HOME": home.path])
        #expect(broken.status == 65 && broken.stderr.contains("line 2, column"), "\(broken.stderr)")
    }

    /// A config.json holding a client secret that others can read is warned
    /// about, with the chmod; one without a secret, or private, is not.
    @Test func aReadableClientSecretIsWarnedAbout() async throws {
        let home = try home()
        // so that settings are read
        try Data(CLIBoundaryTests.storedQiita.utf8).write(to: home.appendingPathComponent("credentials.json"))
        let config = home.appendingPathComponent("config.json")
        let warning =
            "\(config.path) holds a client secret and other users can read it (mode 644); run: chmod 600 '\(config.path)'"
        for (json, mode, warned) in [
            (#"{"providers": {"qiita": {"clientID": "x", "clientSecret": "s3cret"}}}"#, 0o644, true),
            (#"{"providers": {"qiita": {"clientID": "x", "clientSecret": "s3cret"}}}"#, 0o600, false),
            (#"{"providers": {"qiita": {"clientID": "x"}}}"#, 0o644, false),
        ] {
            try Data(json.utf8).write(to: config)
            try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: config.path)
            let result = try await CLIProcess.run(
                ["token", "header", "--provider", "qiita"], environment: ["AUTHKIT_HOME": home.path])
            #expect(result.stderr.contains(warning) == warned, "mode \(String(mode, radix: 8)): \(result.stderr)")
            #expect(!result.stderr.contains("s3cret"))
        }
    }

    /// A client secret given with the host it is for (config.json's
    /// `placeholders`) does not go to another host that a flag or a variable
    /// names: the settings merge field by field, and the secret went, before
    /// any consent, to `--placeholder host=…`. Given without a host, the
    /// secret says nothing of where it is for, and a flag's host is used.
    @Test func aClientSecretDoesNotGoToAnotherHostThanItWasGivenFor() async throws {
        let home = try home()
        let config = home.appendingPathComponent("config.json")
        try Data(
            #"{"providers": {"gitlab-self-managed": {"clientID": "corp-id", "clientSecret": "corp-secret-XYZ", "placeholders": {"host": "gitlab.corp.example"}}}}"#
                .utf8
        ).write(to: config)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: config.path)
        let refusal = "so the secret would go to a server it was not given for"
        for (flags, environment) in [
            (["--placeholder", "host=127.0.0.1:9"], [String: String]()),
            ([], ["AUTHKIT_GITLAB_SELF_MANAGED_HOST": "127.0.0.1:9"]),
        ] {
            let result = try await CLIProcess.run(
                ["authorize", "--provider", "gitlab-self-managed", "--device", "--timeout", "5"] + flags,
                environment: environment.merging(["AUTHKIT_HOME": home.path]) { $1 })
            #expect(
                result.status != 0 && result.stderr.contains(refusal)
                    && result.stderr.contains("host=gitlab.corp.example") && !result.stderr.contains("corp-secret"),
                "\(flags) \(environment): \(result.status) \(result.stderr)")
        }
        // The same host, or the secret given beside the flag's host: not this refusal.
        for (flags, environment) in [
            (["--placeholder", "host=gitlab.corp.example"], [String: String]()),
            (["--placeholder", "host=127.0.0.1:9"], ["AUTHKIT_GITLAB_SELF_MANAGED_CLIENT_SECRET": "other-secret"]),
        ] {
            let result = try await CLIProcess.run(
                ["authorize", "--provider", "gitlab-self-managed", "--device", "--timeout", "5"] + flags,
                environment: environment.merging(["AUTHKIT_HOME": home.path]) { $1 })
            #expect(!result.stderr.contains(refusal), "\(flags) \(environment): \(result.stderr)")
        }
        // A placeholder that chooses no host (Microsoft's tenant is in the
        // path: a multi-tenant app's one secret serves every tenant) is no
        // other server.
        try Data(
            #"{"providers": {"microsoft": {"clientID": "abc", "clientSecret": "s", "placeholders": {"tenant": "common"}}}}"#
                .utf8
        ).write(to: config)
        let tenant = try await CLIProcess.run(
            ["authorize", "--provider", "microsoft", "--manual", "--timeout", "1"],
            environment: ["AUTHKIT_HOME": home.path, "AUTHKIT_MICROSOFT_TENANT": "organizations"])
        #expect(!tenant.stderr.contains(refusal), "\(tenant.stderr)")
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
            (
                [], ["AUTHKIT_GITHUB_CLIENT_ID": " abc"],
                "AUTHKIT_GITHUB_CLIENT_ID: the client id begins or ends with a space"
            ),
            (
                [], ["AUTHKIT_GITHUB_CLIENT_ID": "abc", "AUTHKIT_GITHUB_CLIENT_SECRET": "pasted-secret\t"],
                "AUTHKIT_GITHUB_CLIENT_SECRET: the client secret holds"
            ),
            (
                ["--client-id", "a\u{1B}[2Jb"], [:],
                "--client-id: the client id holds a line break or another control character"
            ),
        ]
        for (flags, environment, message) in cases {
            let result = try await CLIProcess.run(
                ["authorize", "--provider", "github", "--no-browser", "--timeout", "5"] + flags,
                environment: base.merging(environment) { $1 })
            #expect(
                result.status == 64 && result.stderr.contains(message),
                "\(message): exit \(result.status): \(result.stderr)")
            #expect(
                !result.stderr.contains("pasted-secret") && !result.stderr.contains("\u{1B}[2J")
                    && !result.stderr.contains("github.com/login"),
                "\(result.stderr)")
        }
        let config = home.appendingPathComponent("config.json")
        try Data(#"{"providers": {"github": {"clientID": "abc", "clientSecret": "pasted-secret\n"}}}"#.utf8).write(
            to: config)
        chmod(config.path, 0o600)
        let fromFile = try await CLIProcess.run(
            ["authorize", "--provider", "github", "--no-browser", "--timeout", "5"], environment: base)
        #expect(
            fromFile.status == 65
                && fromFile.stderr.contains("\(config.path): field 'providers.github.clientSecret': holds a line break")
                && !fromFile.stderr.contains("pasted-secret"), "\(fromFile.stderr)")
    }

    /// A client id or secret that starts with '-' (one random base64url
    /// secret in 64 does) is taken and sent; it was argument-parser's
    /// "Missing value" with no hint. A flag in its place (the value left
    /// out) is refused, naming the flag, not sent as the secret.
    @Test func aClientValueThatStartsWithADashIsTakenAndAFlagIsNot() async throws {
        try await withServer { server in
            server.route("POST", "/token") { _ in
                .json(#"{"access_token":"machine-token","token_type":"Bearer","expires_in":3600}"#)
            }
            let home = try home()
            defer { try? FileManager.default.removeItem(at: home) }
            let descriptor = """
                {"id": "machine", "name": "Machine", "protocol": "oauth2",
                 "authorization": {"url": "\(server.baseURL)/authorize"},
                 "token": {"url": "\(server.baseURL)/token", "clientAuthentication": "post"}}
                """
            try Data(descriptor.utf8).write(to: home.appendingPathComponent("providers/machine.json"))
            let signIn = ["authorize", "--provider", "machine", "--client-credentials"]
            let taken = try await CLIProcess.run(
                signIn + ["--client-id", "-cid", "--client-secret", "-Xab_9secret"],
                environment: ["AUTHKIT_HOME": home.path])
            #expect(taken.status == 0, "\(taken.stderr)")
            let body = try #require(server.requests(to: "/token").last).bodyText
            #expect(body.contains("client_id=-cid") && body.contains("client_secret=-Xab_9secret"), "\(body)")
            #expect(!taken.stderr.contains("-Xab_9secret") && !taken.stdout.contains("-Xab_9secret"))
            for (flags, name) in [
                (["--client-secret", "--json"], "--client-secret took --json as"),
                (["--client-id", "-v"], "--client-id took -v as"),
                (["--client-secret", "--scope=read"], "--client-secret took --scope=… as"),
            ] {
                let refused = try await CLIProcess.run(
                    signIn + ["--client-id", "cid"] + flags, environment: ["AUTHKIT_HOME": home.path])
                #expect(
                    refused.status == 64 && refused.stderr.contains("\(name) its value, which is a flag"),
                    "\(flags): \(refused.stderr)")
            }
            #expect(server.requests(to: "/token").count == 1)
        }
    }

    /// A placeholder value that would not make a host (`me@gitlab.example.com`,
    /// a port past 65535, a `/` in the middle of a name) is refused before the
    /// browser opens, naming where it came from. Before, it was percent-encoded
    /// into a host nobody has and the browser opened on it; an IPv6 address
    /// was blamed on the bundled descriptor. Values that are right still pass:
    /// a port, a path, an IPv6 address.
    @Test func aPlaceholderValueThatMakesNoHostIsRefusedByItsSource() async throws {
        let home = try home()
        let base = [
            "AUTHKIT_HOME": home.path, "AUTHKIT_GITLAB_SELF_MANAGED_CLIENT_ID": "c",
            "AUTHKIT_QIITA_TEAM_CLIENT_ID": "c",
            "AUTHKIT_QIITA_TEAM_CLIENT_SECRET": "s",
        ]
        let cases: [(String, [String], [String: String], String)] = [
            (
                "gitlab-self-managed", ["--placeholder", "host=me@gitlab.example.com"], [:],
                "--placeholder host=…: 'me@gitlab.example.com' holds '@', which no host name has"
            ),
            (
                "gitlab-self-managed", [], ["AUTHKIT_GITLAB_SELF_MANAGED_HOST": "gitlab.example.com:99999"],
                "AUTHKIT_GITLAB_SELF_MANAGED_HOST: 'gitlab.example.com:99999' names port 99999, which is not a TCP port"
            ),
            (
                "gitlab-self-managed", ["--placeholder", "host=gitläb.example.com"], [:],
                "'gitläb.example.com' is not ASCII; give its IDNA form"
            ),
            (
                "gitlab-self-managed", ["--placeholder", "host=gitlab.example.com/x?y"], [:],
                "holds '?' or '#' after its path"
            ),
            ("gitlab-self-managed", ["--placeholder", "host=[fe80::zz]"], [:], "is not an IPv6 address in brackets"),
            (
                "gitlab-self-managed", ["--placeholder", "host=gitlab.example.com\u{0A}"], [:],
                "holds a line break or another control character"
            ),
            (
                "qiita-team", ["--placeholder", "team=evil.example/"], [:],
                "'evil.example/' holds '/', which would end the name early in https://{team}.qiita.com/"
            ),
        ]
        for (provider, flags, environment, message) in cases {
            let result = try await CLIProcess.run(
                ["authorize", "--provider", provider, "--no-browser", "--timeout", "5"] + flags,
                environment: base.merging(environment) { $1 })
            #expect(
                result.status == 64 && result.stderr.contains(message),
                "\(message): exit \(result.status): \(result.stderr)")
            #expect(
                !result.stderr.contains("Open this URL") && !result.stdout.contains("https://"),
                "\(result.stdout)\(result.stderr)")
        }
        // With --sandbox too: the sandbox would answer whatever the value, but
        // the real provider could not be reached with it.
        let sandboxed = try await CLIProcess.run(
            [
                "authorize", "--provider", "qiita-team", "--sandbox", "http://127.0.0.1:9", "--scripted-browser",
                "--placeholder", "team=evil.example/",
            ], environment: base)
        #expect(
            sandboxed.status == 64
                && sandboxed.stderr.contains("'evil.example/' holds '/', which would end the name early"),
            "\(sandboxed.stderr)")
        let config = home.appendingPathComponent("config.json")
        try Data(#"{"providers": {"gitlab-self-managed": {"placeholders": {"host": "gitlab.example.com:0"}}}}"#.utf8)
            .write(to: config)
        chmod(config.path, 0o600)
        let fromFile = try await CLIProcess.run(
            ["authorize", "--provider", "gitlab-self-managed", "--no-browser", "--timeout", "5"], environment: base)
        #expect(
            fromFile.status == 65
                && fromFile.stderr.contains(
                    "\(config.path): field 'providers.gitlab-self-managed.placeholders.host': 'gitlab.example.com:0' names port 0"
                ), "\(fromFile.stderr)")
        try FileManager.default.removeItem(at: config)

        for (value, shown) in [
            ("gitlab.example.com:8443", "https://gitlab.example.com:8443/oauth/authorize?"),
            ("gitlab.example.com/gitlab", "https://gitlab.example.com/gitlab/oauth/authorize?"),
            ("[2001:db8::1]", "https://[2001:db8::1]/oauth/authorize?"),
        ] {
            let result = try await CLIProcess.run(
                [
                    "authorize", "--provider", "gitlab-self-managed", "--manual", "--timeout", "5", "--placeholder",
                    "host=" + value,
                ],
                environment: base)
            #expect(
                result.stderr.contains(shown) || result.stdout.contains(shown),
                "\(value): \(result.stdout)\(result.stderr)")
        }
    }

    /// Qiita has no public clients (`token.requiresClientSecret`): a sign-in
    /// without the secret sent the user to approve, and the exchange failed
    /// at Qiita after it. It is now refused before the URL is shown, naming
    /// every way to give the secret.
    @Test func aSecretTheProviderRequiresIsAskedForBeforeTheUserApproves() async throws {
        let home = try CLIProcess.home("authkit-missing-secret")
        let result = try await CLIProcess.run(
            ["authorize", "--provider", "qiita", "--client-id", "c", "--manual"],
            environment: ["AUTHKIT_HOME": home.path],
            respond: { $0.contains("what to paste") ? "http://127.0.0.1:8765/callback?code=x&state=y" : nil })
        #expect(result.status == 64, "\(result.stderr)")
        #expect(
            result.stderr.contains("qiita: no client secret is configured") && result.stderr.contains("--client-secret")
                && result.stderr.contains("AUTHKIT_QIITA_CLIENT_SECRET"), "\(result.stderr)")
        #expect(
            !result.stdout.contains("qiita.com/api/v2/oauth/authorize")
                && !result.stderr.contains("qiita.com/api/v2/oauth/authorize"))
        // A config.json entry left empty (a template filled in halfway) counts as none, and is named.
        let config = home.appendingPathComponent("config.json")
        try Data(#"{"providers": {"qiita": {"clientID": "c", "clientSecret": ""}}}"#.utf8).write(to: config)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: config.path)
        let empty = try await CLIProcess.run(
            ["authorize", "--provider", "qiita", "--manual"], environment: ["AUTHKIT_HOME": home.path])
        #expect(
            empty.status == 64
                && empty.stderr.contains(#"config.json has "clientSecret" under "providers"."qiita", but it is empty."#),
            "\(empty.stderr)")
        try FileManager.default.removeItem(at: config)
        // `--client-secret ''` (what `sandbox serve --public-client` prints) wins over the variable:
        // "set AUTHKIT_QIITA_CLIENT_SECRET" would not help where it is set. A variable left empty is named.
        let overriding = try await CLIProcess.run(
            ["authorize", "--provider", "qiita", "--client-id", "c", "--client-secret", "", "--manual"],
            environment: ["AUTHKIT_HOME": home.path, "AUTHKIT_QIITA_CLIENT_SECRET": "the-secret"])
        #expect(
            overriding.status == 64
                && overriding.stderr.contains(
                    "--client-secret '' gives none, and it overrides the one in AUTHKIT_QIITA_CLIENT_SECRET: drop --client-secret ''."
                ),
            "\(overriding.stderr)")
        #expect(!overriding.stderr.contains("the-secret"))
        let emptyVariable = try await CLIProcess.run(
            ["authorize", "--provider", "qiita", "--client-id", "c", "--manual"],
            environment: ["AUTHKIT_HOME": home.path, "AUTHKIT_QIITA_CLIENT_SECRET": ""])
        #expect(
            emptyVariable.status == 64
                && emptyVariable.stderr.contains("AUTHKIT_QIITA_CLIENT_SECRET is set, but empty."),
            "\(emptyVariable.stderr)")
        // GitHub's code grant needs the secret, its device grant does not: the error names that way too.
        let github = try await CLIProcess.run(
            ["authorize", "--provider", "github", "--client-id", "c", "--manual", "--label", "work"],
            environment: ["AUTHKIT_HOME": home.path], respond: { $0.contains("what to paste") ? "" : nil })
        #expect(
            github.status == 64 && github.stderr.contains("github: no client secret is configured")
                && github.stderr.contains(
                    "Or sign in by the device grant, which GitHub allows without one: authkit authorize --provider github --label work --device."
                ),
            "\(github.stderr)")
        #expect(!github.stderr.contains("github.com/login/oauth/authorize"))
        // A provider with public clients still signs in without one (PKCE); here it gets as far as the URL.
        let open = try await CLIProcess.run(
            ["authorize", "--provider", "gitlab", "--client-id", "c", "--manual"],
            environment: ["AUTHKIT_HOME": home.path], respond: { $0.contains("what to paste") ? "" : nil })
        #expect((open.stdout + open.stderr).contains("gitlab.com/oauth/authorize?"), "\(open.stderr)")
    }

    /// With neither a stored credential nor a client id, the commands that use
    /// a credential say to sign in first: that is the step that helps (and
    /// it asks for the client id itself).
    @Test func nothingStoredIsSaidBeforeAMissingClientID() async throws {
        let home = try home()
        for command in [
            ["token", "header", "--provider", "github"],
            ["request", "--provider", "github", "https://api.github.com/user"],
            ["token", "refresh", "--provider", "github"],
        ] {
            let result = try await CLIProcess.run(command, environment: ["AUTHKIT_HOME": home.path])
            #expect(
                result.status == 64
                    && result.stderr.contains(
                        "No stored credential for github. Sign in first: authkit authorize --provider github"),
                "\(command): \(result.stderr)")
        }
        // A provider no file describes is not one to sign in to: the near ids instead.
        let typo = try await CLIProcess.run(
            ["token", "show", "--provider", "githbu"], environment: ["AUTHKIT_HOME": home.path])
        #expect(
            typo.status == 64 && typo.stderr.contains("No provider named 'githbu'. Did you mean 'github'?")
                && !typo.stderr.contains("Sign in"),
            "\(typo.stderr)")
        // Revoking or deleting what is not there is no reason to sign in.
        for (command, outcome) in [
            (["token", "revoke", "--provider", "github"], "nothing was revoked"),
            (["token", "delete", "--provider", "github"], "nothing was deleted"),
        ] {
            let result = try await CLIProcess.run(command, environment: ["AUTHKIT_HOME": home.path])
            #expect(
                result.status == 64
                    && result.stderr.contains(
                        "No stored credential for github; \(outcome). 'authkit token list' shows what is stored."),
                "\(command): \(result.stderr)")
        }
        // The suggested command pastes: a label a shell would split is
        // quoted, and a control character is written out, not obeyed.
        for (label, shown) in [
            ("my work", "--label 'my work'"), ("w\u{1B}[2J", #"--label 'w\u{1B}[2J'"#), ("it's", #"--label 'it'\''s'"#),
            ("仕事", "--label 仕事"),
        ] {
            let result = try await CLIProcess.run(
                ["token", "header", "--provider", "github", "--label", label], environment: ["AUTHKIT_HOME": home.path])
            #expect(
                result.status == 64
                    && result.stderr.contains("Sign in first: authkit authorize --provider github \(shown)\n"),
                "\(label): \(result.stderr)")
            #expect(
                !result.stderr.contains("\u{1B}"), "the escape reached the terminal: \(result.stderr.debugDescription)")
        }
    }

    @Test func theManualPromptEndsItsLineAndExplainsTheErrorPage() async throws {
        let home = try home()
        let result = try await CLIProcess.run(
            ["authorize", "--provider", "github", "--client-id", "c", "--client-secret", "s", "--manual"],
            environment: ["AUTHKIT_HOME": home.path])
        #expect(
            result.stderr.contains(
                "the browser will most likely show a connection error; the URL in its address bar is what to paste:\n"),
            "\(result.stderr)")
        // Nothing to read (standard input closed at once): said as such, exit 65, not a bare "Cancelled." and 130.
        #expect(
            result.status == 65
                && result.stderr.contains(
                    "authkit: error: Standard input ended before the redirect URL (or PIN) was pasted; nothing was stored."
                ),
            "exit \(result.status): \(result.stderr)")
        let empty = try await CLIProcess.run(
            ["authorize", "--provider", "github", "--client-id", "c", "--client-secret", "s", "--manual"],
            environment: ["AUTHKIT_HOME": home.path],
            respond: { $0.contains("what to paste") ? "" : nil })
        #expect(
            empty.status == 65 && empty.stderr.contains("An empty line was entered before the redirect URL"),
            "exit \(empty.status): \(empty.stderr)")
    }
}
