import AuthKit
import AuthKitSandbox
import AuthKitTestSupport
import Crypto
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The sandbox from the command line: the README's first command offline, and
/// a real sign-in pointed at a running sandbox without touching what the user
/// had stored or sending the user's secret.
@Suite(.serialized) struct CLISandboxTests {
    /// A loopback port that was free a moment ago, and that no other test's
    /// connection will take meanwhile (``UnusedPort``).
    func freePort() async throws -> Int {
        try UnusedPort.next()
    }

    /// The sandbox gets the sandbox's client, not the user's: a private key
    /// from the environment (or config.json) is not used either. It was:
    /// an assertion signed with the user's real key went to the sandbox's
    /// port, and the sign-in failed with `invalid_client`.
    @Test func theSandboxIsNotSentTheUsersPrivateKey() async throws {
        let home = try CLIProcess.home("authkit-sandbox-key")
        let key = home.appendingPathComponent("real-key.pem")
        let made = try await ChildProcess.run(
            "/usr/bin/openssl",
            ["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", key.path])
        try #require(made.exit.status == 0, "\(made.standardError)")
        let port = try await freePort()
        let result = try await CLIProcess.run(
            ["sandbox", "try", "--provider", "qiita", "--deterministic", "--port", String(port)],
            environment: ["AUTHKIT_HOME": home.path, "AUTHKIT_QIITA_PRIVATE_KEY_FILE": key.path], timeout: 90)
        #expect(result.status == 0 && result.stdout.contains("Signed in to Qiita (sandbox)"), "\(result.stderr)")
        #expect(
            !result.stdout.contains("client_assertion") && !result.stderr.contains("client key"), "\(result.stderr)")
    }

    @Test func sandboxTryRunsTheWholeSignInOffline() async throws {
        let home = try CLIProcess.home("authkit-sandbox-try")
        let port = try await freePort()
        // No display, no $BROWSER, no client id: a fresh machine.
        let result = try await CLIProcess.run(
            ["sandbox", "try", "--provider", "qiita", "--deterministic", "--port", String(port)],
            environment: ["AUTHKIT_HOME": home.path], timeout: 90)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("POST /qiita.com/api/v2/access_tokens → 201: code exchanged for account alice"))
        #expect(result.stdout.contains("Signed in to Qiita (sandbox)"))
        #expect(result.stdout.contains(#""account":"alice""#))
        #expect(result.stderr.contains("Sandbox browser: redirected to http://127.0.0.1:\(port)/callback?code=***"))
        #expect(
            result.stderr.contains("Waiting for the sandbox's scripted browser")
                && !result.stderr.contains("approve in the browser"))
        // Deterministic values make a leak visible: neither the code nor a token is printed.
        for output in [result.stdout, result.stderr] {
            #expect(
                !output.contains("sandbox-code-") && !output.contains("sandbox-access-")
                    && !output.contains("sandbox-refresh-"))
        }
        #expect(FileManager.default.fileExists(atPath: home.appendingPathComponent("sandbox/credentials.json").path))
        #expect(!FileManager.default.fileExists(atPath: home.appendingPathComponent("credentials.json").path))
        // Without the sandbox named, its credential is pointed to, not "sign in first" (to the real Qiita),
        // and `token list` says the sandbox's store holds one (it said only "No stored credentials").
        let list = try await CLIProcess.run(["token", "list"], environment: ["AUTHKIT_HOME": home.path])
        #expect(
            list.status == 0
                && list.stderr.contains(
                    "The sandbox's store (\(home.path)/sandbox/credentials.json) holds 1 credential: list it with --sandbox"
                ),
            "\(list.stderr)")
        for command in [
            ["token", "show", "--provider", "qiita"],
            ["request", "--provider", "qiita", "https://qiita.com/api/v2/authenticated_user"],
        ] {
            let unnamed = try await CLIProcess.run(command, environment: ["AUTHKIT_HOME": home.path])
            #expect(
                unnamed.status == 64
                    && unnamed.stderr.contains(
                        "No stored credential for qiita. The sandbox's store (\(home.path)/sandbox/credentials.json) has one: to use it, pass --sandbox"
                    ),
                "\(unnamed.stderr)")
        }
    }

    /// A label that begins with '-' (`--label=-x`) is refused as `authorize`
    /// refuses it, exit 64: re-parsed as `--label -x`, it stopped with the
    /// argument parser's internal dump, exit 1.
    @Test func sandboxTryRefusesALabelBeginningWithADashAsAuthorizeDoes() async throws {
        let home = try CLIProcess.home("authkit-sandbox-dash-label")
        defer { try? FileManager.default.removeItem(at: home) }
        for label in ["-x", "--help"] {
            let result = try await CLIProcess.run(
                ["sandbox", "try", "--provider", "qiita", "--label=\(label)"], environment: ["AUTHKIT_HOME": home.path])
            #expect(
                result.status == 64 && result.stderr.contains("--label \(label) holds -")
                    && !result.stderr.contains("CommandError"), "\(label): \(result.stderr)")
        }
    }

    /// A providers directory whose path holds a control character: what
    /// `sandbox try` and `providers list` print of it is escaped, as the
    /// errors already were (the terminal ran the escape sequence).
    @Test func aProviderFilesPathIsPrintedEscaped() async throws {
        let home = try CLIProcess.home("authkit-sandbox-escaped-path")
        defer { try? FileManager.default.removeItem(at: home) }
        let directory = home.appendingPathComponent("esc\u{1B}[31mdir")
        try FileManager.default.createDirectory(
            at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let bundled = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("providers/qiita.json")
        try FileManager.default.copyItem(at: bundled, to: directory.appendingPathComponent("qiita.json"))
        let port = try await freePort()
        for command in [
            ["sandbox", "try", "--provider", "qiita", "--port", String(port)], ["providers", "list"],
        ] {
            let result = try await CLIProcess.run(
                command + ["--providers-dir", directory.path], environment: ["AUTHKIT_HOME": home.path], timeout: 90)
            #expect(result.status == 0, "\(command): \(result.stderr)")
            #expect(
                result.stdout.contains("esc\\u{1B}[31mdir/qiita.json") && !result.stdout.contains("\u{1B}"),
                "\(command): \(result.stdout)")
        }
    }

    /// Google's descriptor has an `openid` part: the sandbox signs an ID token
    /// (RS256, as Google does) and `sandbox try` says who signed in, verified;
    /// `token show` and `--json` carry the identity too (issue 46).
    @Test func sandboxTryWithGoogleShowsTheVerifiedUser() async throws {
        let home = try CLIProcess.home("authkit-sandbox-openid")
        let result = try await CLIProcess.run(
            ["sandbox", "try", "--provider", "google", "--deterministic"], environment: ["AUTHKIT_HOME": home.path],
            timeout: 90)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("Signed in to Google (sandbox) as alice@sandbox.example."), "\(result.stdout)")
        #expect(result.stdout.contains("user:      alice@sandbox.example (ID token verified)"), "\(result.stdout)")
        let shown = try await CLIProcess.run(
            ["token", "show", "--provider", "google", "--json"],
            environment: ["AUTHKIT_HOME": home.appendingPathComponent("sandbox").path])
        #expect(shown.stdout.contains(#""subject" : "sandbox-user-alice""#), "\(shown.stdout) \(shown.stderr)")
    }

    /// `token userinfo` and the end-session line of `token revoke`, against
    /// Microsoft's emulation (UserInfo and end session in its descriptor, no
    /// revocation), and a faulty ID token refused with nothing stored.
    @Test func userInfoAndSigningOutAtTheProvider() async throws {
        let home = try CLIProcess.home("authkit-sandbox-userinfo")
        let environment = ["AUTHKIT_HOME": home.path]
        let microsoft = try ProviderCatalog(includeBundled: true, directories: []).descriptor(id: "microsoft")
        let sandbox = try await Sandbox.start(emulating: microsoft, options: SandboxOptions(approves: true))
        defer { Task { await sandbox.stop() } }
        let url = sandbox.baseURL.absoluteString
        let signIn = try await CLIProcess.run(
            ["authorize", "--provider", "microsoft", "--sandbox", url, "--scripted-browser"], environment: environment,
            timeout: 60)
        #expect(signIn.status == 0, "\(signIn.stderr)")
        let info = try await CLIProcess.run(
            ["token", "userinfo", "--provider", "microsoft", "--sandbox", url, "--json"], environment: environment)
        #expect(info.status == 0, "\(info.stderr)")
        let claims = try JSONSerialization.jsonObject(with: Data(info.stdout.utf8)) as? [String: Any]
        #expect(claims?["sub"] as? String == "sandbox-user-alice" && claims?["name"] as? String == "Alice")
        let plain = try await CLIProcess.run(
            ["token", "userinfo", "--provider", "microsoft", "--sandbox", url], environment: environment)
        // Each claim on its line, the values in one column (a name longer
        // than "subject:", as email_verified, pushed its value along).
        let lines = plain.stdout.split(separator: "\n")
        let columns = Set(
            lines.map { line in
                line.firstIndex(of: ":").map {
                    line[$0...].prefix { $0 == ":" || $0 == " " }.count + line.distance(from: line.startIndex, to: $0)
                } ?? -1
            })
        #expect(lines.count >= 3 && columns.count == 1, "\(plain.stdout)")
        #expect(
            lines.first?.hasPrefix("subject:") == true
                && lines.first?.hasSuffix("sandbox-user-alice (the ID token's)") == true, "\(plain.stdout)")

        let stored = try await CLIProcess.run(
            ["token", "show", "--provider", "microsoft", "--sandbox", url, "--field", "id_token"],
            environment: environment)
        let idToken = stored.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(idToken.count > 100)
        let revoke = try await CLIProcess.run(
            ["token", "revoke", "--provider", "microsoft", "--sandbox", url], environment: environment)
        // Microsoft revokes nothing per token: said, the credential kept, and the way out of its session given.
        #expect(revoke.status == 1 && revoke.stderr.contains("names no way to revoke"), "\(revoke.stderr)")
        #expect(
            revoke.stderr.contains(
                "To sign out of Microsoft identity platform (sandbox) in your browser too, open:\n  \(url)/login.microsoftonline.com/common/oauth2/v2.0/logout?client_id=sandbox-client"
            ), "\(revoke.stderr)")
        #expect(!revoke.stderr.contains(idToken) && !revoke.stdout.contains(idToken))

        // A sign-in whose ID token carries another sign-in's nonce: exit 3, nothing stored.
        let faulty = try await CLIProcess.run(
            ["sandbox", "try", "--provider", "google", "--id-token-fault", "wrong-nonce"], environment: environment,
            timeout: 90)
        #expect(
            faulty.status == 3 && faulty.stderr.contains("nonce is not the one this sign-in sent"), "\(faulty.stderr)")
        let list = try await CLIProcess.run(
            ["token", "list", "--sandbox", url], environment: environment)
        #expect(!list.stdout.contains("google"), "\(list.stdout)")
    }

    /// A provider whose URLs need a value nobody gave ({host} of a
    /// self-hosted GitHub or GitLab, {team} of Qiita Team) is tried with a
    /// stand-in: the sandbox answers at its own address whatever the value.
    /// It failed with "Pass --placeholder host=…", a flag `sandbox try` does
    /// not take. A value that is given is still used.
    @Test func sandboxTryNeedsNoPlaceholderValues() async throws {
        let home = try CLIProcess.home("authkit-sandbox-placeholder")
        for provider in ["github-enterprise", "qiita-team"] {
            let result = try await CLIProcess.run(
                ["sandbox", "try", "--provider", provider, "--deterministic"], environment: ["AUTHKIT_HOME": home.path],
                timeout: 90)
            #expect(
                result.status == 0 && result.stdout.contains(#""account":"alice""#), "\(provider): \(result.stderr)")
            #expect(!result.stderr.contains("--placeholder"), "\(result.stderr)")
        }
        let given = try await CLIProcess.run(
            ["sandbox", "try", "--provider", "github-enterprise", "--deterministic"],
            environment: ["AUTHKIT_HOME": home.path, "AUTHKIT_GITHUB_ENTERPRISE_HOST": "ghe.example"], timeout: 90)
        #expect(given.status == 0 && given.stderr.contains("/ghe.example/login/oauth/authorize?"), "\(given.stderr)")
    }

    /// A provider whose descriptor names no redirect port (Google, GitHub)
    /// signs in on a free port, as `authorize` does: `sandbox try` passed its
    /// redirect URI on, which fixed port 80, so it failed for anyone but root
    /// and when another run held that port. The port is held here, if this
    /// process may bind it, during the run.
    @Test func sandboxTryTakesAFreePortWhereTheDescriptorNamesNone() async throws {
        let home = try CLIProcess.home("authkit-sandbox-free-port")
        let held = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(held) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(80).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        _ = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(held, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        _ = listen(held, 1)
        let result = try await CLIProcess.run(
            ["sandbox", "try", "--provider", "google", "--deterministic"], environment: ["AUTHKIT_HOME": home.path],
            timeout: 90)
        #expect(
            result.status == 0 && result.stdout.contains(#""account":"alice""#), "\(result.stdout)\n\(result.stderr)")
        #expect(
            result.stdout.contains("the loopback listener waits at http://127.0.0.1/callback on a free port"),
            "\(result.stdout)")
        #expect(
            !result.stderr.contains("redirect_uri=http%3A%2F%2F127.0.0.1%2Fcallback&"),
            "the redirect URI named no port: \(result.stderr)")
    }

    /// `sandbox try` without `--label` signs in and calls the API with one
    /// account: the one `token switch` chose in the sandbox's store. The
    /// sign-in replaced the chosen account, then the request used the one
    /// without a label, which held nothing (exit 64) or a stale token.
    @Test func sandboxTrySignsInAndCallsTheAPIWithTheSameAccount() async throws {
        let home = try CLIProcess.home("authkit-sandbox-try-switched")
        defer { try? FileManager.default.removeItem(at: home) }
        let environment = ["AUTHKIT_HOME": home.path]
        let first = try await CLIProcess.run(
            ["sandbox", "try", "--provider", "google", "--deterministic", "--label", "work"],
            environment: environment, timeout: 90)
        #expect(first.status == 0, "\(first.stderr)")
        // The sandbox's store only needs a sandbox URL to be named; none need be running.
        let switched = try await CLIProcess.run(
            ["token", "switch", "--sandbox", "http://127.0.0.1:9", "--provider", "google", "--label", "work"],
            environment: environment)
        #expect(switched.status == 0, "\(switched.stderr)")
        let again = try await CLIProcess.run(
            ["sandbox", "try", "--provider", "google", "--deterministic"], environment: environment, timeout: 90)
        #expect(
            again.status == 0 && again.stdout.contains(#""account":"alice""#)
                && again.stderr.contains("replaced the sandbox credential stored for google (work)"),
            "\(again.status): \(again.stdout)\n\(again.stderr)")
        let stored = try await CLIProcess.run(
            ["token", "list", "--sandbox", "http://127.0.0.1:9"], environment: environment)
        #expect(!stored.stdout.contains("google  "), "no account without a label was made: \(stored.stdout)")
    }

    /// `--port` with a device code is refused, as `authorize --device
    /// --port` is: `sandbox try` dropped it without a word.
    @Test func sandboxTryRefusesAPortWithADeviceCode() async throws {
        let home = try CLIProcess.home("authkit-sandbox-try-device-port")
        defer { try? FileManager.default.removeItem(at: home) }
        let result = try await CLIProcess.run(
            ["sandbox", "try", "--provider", "google", "--device", "--port", "8123", "--deterministic"],
            environment: ["AUTHKIT_HOME": home.path], timeout: 90)
        #expect(
            result.status == 64 && result.stderr.contains("--device signs in with a code")
                && result.stderr.contains("drop --port"), "\(result.status): \(result.stderr)")
    }

    /// Instagram redirects to https://localhost, which no loopback listener
    /// receives: `sandbox try` refused it ("test it with the library"). The
    /// scripted browser now hands the redirect back as the app's web view
    /// would; with --browser, the person pastes it (--manual), as with the
    /// real Instagram. A plain `authorize --no-browser` still says to use --manual.
    @Test func sandboxTrySignsInWhereNoListenerCanReceiveTheRedirect() async throws {
        let home = try CLIProcess.home("authkit-sandbox-instagram")
        let scripted = try await CLIProcess.run(
            ["sandbox", "try", "--provider", "instagram", "--deterministic"],
            environment: ["AUTHKIT_HOME": home.path], timeout: 90)
        #expect(scripted.status == 0 && scripted.stdout.contains(#""account":"alice""#), "\(scripted.stderr)")
        #expect(
            scripted.stdout.contains(
                "GET /graph.instagram.com/access_token → 200: follow-up exchange for account alice"),
            "\(scripted.stdout)")
        #expect(
            scripted.stderr.contains("Sandbox browser: redirected to https://localhost/callback?code=***"),
            "\(scripted.stderr)")
        for output in [scripted.stdout, scripted.stderr] {
            #expect(!output.contains("sandbox-code-") && !output.contains("sandbox-access-"))
        }

        // --browser: the person approves (here: as bob) and pastes where the browser ended.
        let pasted = try await CLIProcess.run(
            ["sandbox", "try", "--provider", "instagram", "--browser"],
            environment: ["AUTHKIT_HOME": home.path, "BROWSER": ""], timeout: 90,
            respond: { stderr in
                guard stderr.contains("paste"),
                    let range = stderr.range(
                        of: #"http://127\.0\.0\.1:\d+/www\.instagram\.com/oauth/authorize\?\S+"#,
                        options: .regularExpression),
                    let url = URL(string: String(stderr[range]))
                else { return nil }
                return try? Self.approve(url, as: "bob")
            })
        #expect(pasted.status == 0 && pasted.stdout.contains(#""account":"bob""#), "\(pasted.stdout)\n\(pasted.stderr)")

        let sandbox = try await Sandbox.start(
            emulating: try ProviderCatalog(includeBundled: true, directories: []).descriptor(id: "instagram"))
        defer { Task { await sandbox.stop() } }
        let listener = try await CLIProcess.run(
            ["authorize", "--provider", "instagram", "--sandbox", sandbox.baseURL.absoluteString, "--no-browser"],
            environment: ["AUTHKIT_HOME": home.path])
        #expect(listener.status == 64 && listener.stderr.contains("Use --manual"), "\(listener.stderr)")
    }

    /// A person at the sandbox's consent page, with plain sockets (this runs
    /// on CLIProcess's reading thread): the page's hidden `request`, posted
    /// back with an account; returns where the sandbox redirects.
    static func approve(_ url: URL, as account: String) throws -> String? {
        guard let port = url.port, let query = url.query else { return nil }
        func exchange(_ text: String) throws -> RawResponse {
            let fd = try RawHTTP.connect(port: port)
            defer { close(fd) }
            try RawHTTP.write(fd, Data(text.utf8))
            return try RawHTTP.readResponse(fd, headOnly: false)
        }
        let page = try exchange(
            "GET \(url.path)?\(query) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n\r\n")
        guard let range = page.body.range(of: #"name="request" value="[^"]+""#, options: .regularExpression) else {
            return nil
        }
        let request = page.body[range].dropFirst(#"name="request" value=""#.count).dropLast()
        let approval =
            page.body.firstRange(of: #"name="approval" value=""#).map {
                String(page.body[$0.upperBound...].prefix { $0 != "\"" })
            } ?? ""
        let form = FormURLEncoding.encode([
            ("request", String(request)), ("approval", approval), ("account", account), ("decision", "approve"),
        ])
        let answer = try exchange(
            "POST /consent HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: \(form.utf8.count)\r\nConnection: close\r\n\r\n\(form)"
        )
        return answer.header("Location")
    }

    /// The store is touched three times in a sign-in (check, sign-in lock,
    /// save); a directory others can read is still reported once, with its fix.
    @Test func aStoreOthersCanReadIsReportedOnce() async throws {
        let home = try CLIProcess.home("authkit-sandbox-shared-store")
        let store = home.appendingPathComponent("sandbox")
        try FileManager.default.createDirectory(
            at: store, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        let port = try await freePort()
        let result = try await CLIProcess.run(
            ["sandbox", "try", "--provider", "qiita", "--port", String(port)],
            environment: ["AUTHKIT_HOME": home.path], timeout: 90)
        #expect(result.status == 0, "\(result.stderr)")
        let warning = "\(store.path) is accessible by other users (mode 755); run: chmod 700 '\(store.path)'"
        #expect(result.stderr.components(separatedBy: warning).count - 1 == 1, "\(result.stderr)")
    }

    /// AuthKit loads libcurl when the first request is sent (dlopen), not
    /// before main(): without it, a command that sends a request says what to
    /// install, and one that sends none works. Run in a mount namespace in which
    /// libcurl reads as an empty file, so root only.
    @Test(.enabled(if: getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare")))
    func withoutLibcurlARequestSaysWhatToInstall() async throws {
        let home = try CLIProcess.home("authkit-sandbox-no-libcurl")
        let port = try await freePort()
        // Runs the rest of its arguments once libcurl reads as an empty file; 99 if it cannot hide it.
        let hideLibcurl = [
            "/usr/bin/unshare", "-m", "sh", "-c",
            """
            lib=$(readlink -f "$(ldconfig -p | awk '/libcurl\\.so\\.4 /{print $NF; exit}')") && mount --bind /dev/null "$lib" || exit 99
            exec "$@"
            """, "sh",
        ]
        let environment = ["AUTHKIT_HOME": home.path, "PATH": "/usr/sbin:/usr/bin:/sbin:/bin"]
        let signIn = try await CLIProcess.run(
            ["sandbox", "try", "--provider", "qiita", "--port", String(port)],
            environment: environment, launcher: hideLibcurl)
        #expect(signIn.status == 4, "\(signIn.stderr)") // a network error, not a crash at start-up
        #expect(
            signIn.stderr.contains("libcurl could not be loaded") && signIn.stderr.contains("apt-get install libcurl4"),
            "\(signIn.stderr)")
        // Said before the consent page: the scripted browser never ran, and nothing blames the sandbox.
        #expect(
            !signIn.stderr.contains("Sandbox browser:") && !signIn.stderr.contains("still running"), "\(signIn.stderr)")
        // A sign-in at a provider (here a sandbox outside the namespace) stops
        // before the user is sent to consent: no URL is shown to open (without
        // the check it would be, and the wait would end at --timeout).
        let provider = try await Sandbox.start(
            emulating: try ProviderCatalog(includeBundled: true, directories: []).descriptor(id: "github"))
        defer { Task { await provider.stop() } }
        let authorize = try await CLIProcess.run(
            [
                "authorize", "--provider", "github", "--sandbox", provider.baseURL.absoluteString,
                "--no-browser", "--timeout", "5",
            ],
            environment: environment, launcher: hideLibcurl)
        #expect(authorize.status == 4, "\(authorize.stderr)")
        #expect(
            authorize.stderr.contains(
                "The request to the token endpoint of GitHub (sandbox) failed: libcurl could not be loaded"),
            "\(authorize.stderr)")
        #expect(!authorize.stderr.contains("Open this URL"), "\(authorize.stderr)")
        let list = try await CLIProcess.run(["token", "list"], environment: environment, launcher: hideLibcurl)
        #expect(list.status == 0, "\(list.stderr)")
    }

    /// A sign-in on a full disk: refused before the browser opens (it was
    /// found when the save failed, after the user had consented), the store
    /// left as it was (an earlier sign-in still in it, no temporary copy
    /// behind), and the error names the store's own path; exit 74, as for
    /// any write that failed. (A save that fails all the same:
    /// `CLITokenLifecycleTests.aFullDiskIsFoundBeforeARefreshSpendsItsToken`.) Run on a small tmpfs in a mount namespace
    /// of its own, so root only.
    @Test(.enabled(if: getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare")))
    func aFullDiskLeavesTheStoreAsItWas() async throws {
        let home = try CLIProcess.home("authkit-sandbox-full-disk")
        let (first, second) = (try await freePort(), try await freePort())
        // Everything in one namespace: the tmpfs lives only as long as it.
        let script = """
            mount -t tmpfs -o size=8m tmpfs "$AUTHKIT_HOME" && chmod 700 "$AUTHKIT_HOME" || exit 99
            store="$AUTHKIT_HOME/sandbox/credentials.json"
            "$0" sandbox try --provider qiita --deterministic --port \(first) > /dev/null 2>&1; echo "first $?"
            cp "$store" /tmp/authkit-full-disk-before.$$
            dd if=/dev/zero of="$AUTHKIT_HOME/filler" bs=4k > /dev/null 2>&1
            "$0" sandbox try --provider github --deterministic --port \(second) > /dev/null; echo "second $?"
            cmp -s "$store" /tmp/authkit-full-disk-before.$$ && echo "store as it was"; rm -f /tmp/authkit-full-disk-before.$$
            ls -A "$AUTHKIT_HOME/sandbox" | grep -c '\\.tmp$' | sed 's/^/temporary copies /'
            rm -f "$AUTHKIT_HOME/filler"; avail=$(df -k --output=avail "$AUTHKIT_HOME" | tail -1)
            dd if=/dev/zero of="$AUTHKIT_HOME/filler" bs=1k count=$((avail - 32)) > /dev/null 2>&1
            AUTHKIT_HOME="$AUTHKIT_HOME/sandbox" "$0" token delete --provider qiita > /dev/null; echo "delete $?"
            dd if=/dev/zero of="$AUTHKIT_HOME/filler" bs=4k > /dev/null 2>&1
            "$0" providers override github > /dev/null; echo "override $?"
            ls -A "$AUTHKIT_HOME/providers" 2> /dev/null | wc -l | sed 's/^/provider files /'
            """
        let result = try await CLIProcess.run(
            [], environment: ["AUTHKIT_HOME": home.path, "PATH": "/usr/sbin:/usr/bin:/sbin:/bin"],
            launcher: ["/usr/bin/unshare", "-m", "sh", "-c", script, CLIProcess.binary.path], bareLauncher: true)
        try #require(result.status != 99, "no tmpfs could be mounted: \(result.stderr)")
        #expect(
            result.stdout.contains("first 0") && result.stdout.contains("second 74"),
            "\(result.stdout)\n\(result.stderr)")
        #expect(
            result.stdout.contains("store as it was") && result.stdout.contains("temporary copies 0"),
            "\(result.stdout)")
        // A removal with little room left: the check that a save has room
        // (2 MiB on top of the file) refused `token delete`, which shrinks it.
        #expect(result.stdout.contains("delete 0"), "\(result.stdout)\n\(result.stderr)")
        #expect(
            result.stderr.contains(
                "Credential store \(home.path)/sandbox/credentials.json: could not be saved: the disk holding it is full"
            ),
            "\(result.stderr)")
        // A provider file likewise: named, nothing half-written left (it
        // was a type dump with exit 1, and a stray .tmp file).
        #expect(result.stdout.contains("override 74") && result.stdout.contains("provider files 0"), "\(result.stdout)")
        #expect(
            result.stderr.contains(
                "\(home.path)/providers/github.json could not be written: writing it failed (No space left on device). Nothing was changed."
            ),
            "\(result.stderr)")
    }

    /// The store's file mounted on its own (`docker run -v FILE:…`): it reads,
    /// but a rename onto it fails (EBUSY), so a sign-in or a refresh would
    /// reach the provider and then fail to save. Refused before, naming the
    /// mount and what to do. Root only (a mount namespace of its own).
    @Test(.enabled(if: getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare")))
    func aStoreFileMountedOnItsOwnIsRefusedBeforeTheSignIn() async throws {
        let home = try CLIProcess.home("authkit-sandbox-bind-mount")
        let (first, second) = (try await freePort(), try await freePort())
        let script = """
            store="$AUTHKIT_HOME/sandbox/credentials.json"
            "$0" sandbox try --provider qiita --deterministic --port \(first) > /dev/null 2>&1; echo "first $?"
            cp "$store" "$AUTHKIT_HOME/outside.json" && mount --bind "$AUTHKIT_HOME/outside.json" "$store" || exit 99
            "$0" sandbox try --provider qiita --deterministic --port \(second) > /dev/null; echo "second $?"
            cmp -s "$store" "$AUTHKIT_HOME/outside.json" && echo "store as it was"
            """
        let result = try await CLIProcess.run(
            [], environment: ["AUTHKIT_HOME": home.path, "PATH": "/usr/sbin:/usr/bin:/sbin:/bin"],
            launcher: ["/usr/bin/unshare", "-m", "sh", "-c", script, CLIProcess.binary.path], bareLauncher: true)
        try #require(result.status != 99, "no bind mount could be made: \(result.stderr)")
        #expect(
            result.stdout.contains("first 0") && result.stdout.contains("second 74")
                && result.stdout.contains("store as it was"),
            "\(result.stdout)\n\(result.stderr)")
        #expect(result.stderr.contains("it is a file mounted on its own"), "\(result.stderr)")
        #expect(!result.stderr.contains("Open this URL"), "\(result.stderr)")
    }

    /// SwiftPM links `authkit` with RUNPATH $ORIGIN, so `dlopen("libcurl.so.4")`
    /// would look beside the program first: a libcurl someone placed there
    /// (a Downloads folder) would run inside a process holding secrets. Here
    /// the planted file is a copy of the real libcurl, which would load and
    /// work: only the refusal tells it apart. The same copy of `authkit`
    /// signs in once the file is gone, and a command without a request is
    /// unaffected.
    @Test(.enabled(if: Self.systemLibcurl != nil))
    func aLibcurlPlacedBesideTheProgramIsRefused() async throws {
        let home = try CLIProcess.home("authkit-planted-libcurl")
        let directory = TemporaryDirectory.url("authkit-planted-bin")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let program = directory.appendingPathComponent("authkit")
        try FileManager.default.copyItem(at: CLIProcess.binary, to: program)
        let planted = directory.appendingPathComponent("libcurl.so.4")
        // The file itself: copying the soname's link would leave a dangling one.
        let library = URL(fileURLWithPath: try #require(Self.systemLibcurl)).resolvingSymlinksInPath()
        try FileManager.default.copyItem(at: library, to: planted)
        // The launcher runs the copy in place of the built binary (its first argument).
        let copy = ["/bin/sh", "-c", #"shift; exec "$0" "$@""#, program.path]
        let environment = ["AUTHKIT_HOME": home.path]

        let refused = try await CLIProcess.run(
            ["sandbox", "try", "--provider", "qiita", "--port", String(try await freePort())],
            environment: environment, launcher: copy)
        #expect(refused.status == 4, "\(refused.stderr)")
        #expect(
            refused.stderr.contains("refusing to load \(planted.path): a libcurl beside the program"),
            "\(refused.stderr)")
        #expect(try await CLIProcess.run(["token", "list"], environment: environment, launcher: copy).status == 0)

        try FileManager.default.removeItem(at: planted)
        let signedIn = try await CLIProcess.run(
            ["sandbox", "try", "--provider", "qiita", "--port", String(try await freePort())],
            environment: environment, launcher: copy)
        #expect(signedIn.status == 0, "\(signedIn.stderr)")
    }

    /// The system's libcurl.so.4, found where Debian's multiarch layout puts it.
    static let systemLibcurl: String? = [
        "/usr/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu",
        "/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib",
    ]
    .map { $0 + "/libcurl.so.4" }
    .first { FileManager.default.fileExists(atPath: $0) }

    @Test func authorizeAgainstARunningSandboxLeavesRealCredentialsAndSecretsAlone() async throws {
        let home = try CLIProcess.home("authkit-sandbox-authorize")
        let real = Credential(
            providerID: "github", isOAuth1: false, accessToken: "gho_real", tokenType: "Bearer", scopes: ["repo"])
        try await FileCredentialStore(file: home.appendingPathComponent("credentials.json")).save(real)
        let before = try Data(contentsOf: home.appendingPathComponent("credentials.json"))
        let sandbox = try await Sandbox.start(
            emulating: try ProviderCatalog(includeBundled: true, directories: []).descriptor(id: "github"))
        defer { Task { await sandbox.stop() } }
        let result = try await CLIProcess.run(
            ["authorize", "--provider", "github", "--sandbox", sandbox.baseURL.absoluteString],
            environment: [
                "AUTHKIT_HOME": home.path, "AUTHKIT_GITHUB_CLIENT_ID": "real-id",
                "AUTHKIT_GITHUB_CLIENT_SECRET": "real-secret",
            ], timeout: 60)
        // The sandbox accepts only its own client: success means the real id and secret were not sent.
        #expect(result.status == 0, "\(result.stderr)")
        #expect(sandbox.events.contains { $0.step == "token" && $0.status == 200 })
        #expect(try Data(contentsOf: home.appendingPathComponent("credentials.json")) == before)
        let request = try await CLIProcess.run(
            ["request", "--provider", "github", sandbox.whoamiURL.absoluteString],
            environment: ["AUTHKIT_HOME": home.path, "AUTHKIT_SANDBOX": sandbox.baseURL.absoluteString])
        #expect(request.status == 0 && request.stdout.contains(#""account":"alice""#), "\(request.stderr)")
        // The URL given is not rewritten: a real API's went out with the sandbox's token.
        let elsewhere = try await CLIProcess.run(
            ["request", "--provider", "github", "https://api.github.com/user"],
            environment: ["AUTHKIT_HOME": home.path, "AUTHKIT_SANDBOX": sandbox.baseURL.absoluteString])
        #expect(
            elsewhere.status == 64 && elsewhere.stderr.contains("the credential is the sandbox's and goes only to it")
                && elsewhere.stderr.contains("\(sandbox.baseURL.absoluteString)/whoami"), "\(elsewhere.stderr)")
        // Revoked at the sandbox but kept here: its API's Bearer challenge
        // (RFC 6750 §3.1) is read out, with what to type.
        let environment = ["AUTHKIT_HOME": home.path, "AUTHKIT_SANDBOX": sandbox.baseURL.absoluteString]
        let revoked = try await CLIProcess.run(
            ["token", "revoke", "--provider", "github", "--keep"], environment: environment)
        #expect(revoked.status == 0, "\(revoked.stderr)")
        let refused = try await CLIProcess.run(
            ["request", "--provider", "github", sandbox.whoamiURL.absoluteString], environment: environment)
        #expect(
            refused.status == 3
                && refused.stderr.contains("answered HTTP 401: invalid_token. The token was not accepted")
                && refused.stderr.contains("authkit authorize --provider github."), "\(refused.stderr)")
    }

    /// The sandbox's own commands listed `--sandbox <url>` in their help
    /// ("Use the AuthKit sandbox at this URL"), and refused it when given.
    @Test func theSandboxsOwnCommandsDoNotOfferSandbox() async throws {
        for command in ["serve", "try"] {
            let help = try await CLIProcess.run(["sandbox", command, "--help"], environment: [:])
            #expect(
                help.status == 0 && help.stdout.contains("--providers-dir") && !help.stdout.contains("--sandbox"),
                "\(help.stdout)")
            let given = try await CLIProcess.run(
                ["sandbox", command, "--provider", "qiita", "--sandbox", "http://127.0.0.1:1"], environment: [:])
            #expect(given.status == 64 && given.stderr.contains("Unknown option '--sandbox'"), "\(given.stderr)")
        }
    }

    @Test func aSandboxURLElsewhereIsRefused() async throws {
        let home = try CLIProcess.home("authkit-sandbox-elsewhere")
        // localhost and [::1] are this machine too, but the sandbox names
        // itself 127.0.0.1 (its issuer): a sign-in through them waited for ever.
        for url in [
            "https://sandbox.example", "http://10.0.0.5:8790", "http://127.0.0.1", "http://localhost:8790",
            "http://[::1]:8790",
        ] {
            let result = try await CLIProcess.run(
                ["token", "list"], environment: ["AUTHKIT_HOME": home.path, "AUTHKIT_SANDBOX": url])
            #expect(result.status == 64)
            #expect(
                result.stderr.contains("$AUTHKIT_SANDBOX takes the URL 'authkit sandbox' prints"), "\(result.stderr)")
        }
        let scripted = try await CLIProcess.run(
            ["authorize", "--provider", "github", "--scripted-browser"], environment: ["AUTHKIT_HOME": home.path])
        #expect(
            scripted.status == 64
                && scripted.stderr.contains("--scripted-browser only answers the sandbox's consent page"))
    }

    @Test func aSandboxThatIsGoneEndsTheSignInInsteadOfWaiting() async throws {
        let home = try CLIProcess.home("authkit-sandbox-gone")
        let gone = "http://127.0.0.1:\(try await freePort())"
        let started = Date()
        let result = try await CLIProcess.run(
            ["authorize", "--provider", "github", "--sandbox", gone, "--scripted-browser"],
            environment: ["AUTHKIT_HOME": home.path], timeout: 60)
        #expect(result.status == 4, "\(result.stderr)")
        #expect(
            result.stderr.contains("authkit: error: The sandbox's scripted browser failed")
                && result.stderr.contains("Is the sandbox still running?"))
        #expect(Date().timeIntervalSince(started) < 30, "it must not wait for --timeout")
    }

    /// A credential `sandbox try` left behind, its emulation gone, seen
    /// under another provider's sandbox: `token status` says it cannot be
    /// used, and offers to remove it beside signing in again (a sign-in to
    /// Qiita fails against GitHub's sandbox, so that advice alone led nowhere).
    @Test func aCredentialOfAGoneSandboxCanBeRemovedAsAdvised() async throws {
        let home = try CLIProcess.home("authkit-sandbox-gone-credential")
        defer { try? FileManager.default.removeItem(at: home) }
        let tried = try await CLIProcess.run(
            ["sandbox", "try", "--provider", "qiita"], environment: ["AUTHKIT_HOME": home.path], timeout: 60)
        #expect(tried.status == 0, "\(tried.stderr)")
        let sandbox = try await Sandbox.start(
            emulating: try ProviderCatalog(includeBundled: true, directories: []).descriptor(id: "github"))
        defer { Task { await sandbox.stop() } }
        let environment = ["AUTHKIT_HOME": home.path, "AUTHKIT_SANDBOX": sandbox.baseURL.absoluteString]
        let status = try await CLIProcess.run(["token", "status"], environment: environment, timeout: 60)
        #expect(
            status.status != 0
                && status.stdout.contains("if its sandbox is gone, remove it: authkit token delete --provider qiita"),
            "\(status.status): \(status.stdout)\(status.stderr)")
        let deleted = try await CLIProcess.run(
            ["token", "delete", "--provider", "qiita"], environment: environment, timeout: 60)
        #expect(deleted.status == 0, "\(deleted.stderr)")
        let after = try await CLIProcess.run(["token", "status"], environment: environment, timeout: 60)
        #expect(!(after.stdout + after.stderr).contains("qiita"), "\(after.stdout)\(after.stderr)")
    }

    /// A running sandbox that refuses the authorization request is the
    /// provider refusing (exit 3), not one out of reach (it was exit 4 and
    /// "Is the sandbox still running?"); a 404 names the likely cause, a
    /// sandbox emulating another provider.
    @Test func aSandboxThatRefusesIsNotASandboxThatIsGone() async throws {
        let home = try CLIProcess.home("authkit-sandbox-refuses")
        let sandbox = try await Sandbox.start(
            emulating: try ProviderCatalog(includeBundled: true, directories: []).descriptor(id: "github"))
        defer { Task { await sandbox.stop() } }
        let environment = ["AUTHKIT_HOME": home.path, "AUTHKIT_SANDBOX": sandbox.baseURL.absoluteString]
        let other = try await CLIProcess.run(
            ["authorize", "--provider", "qiita", "--scripted-browser"], environment: environment, timeout: 60)
        #expect(
            other.status == 3
                && other.stderr.contains(
                    "authkit: error: The sandbox refused the authorization request: invalid_request [HTTP 404].")
                && !other.stderr.contains("Optional(") && other.stderr.contains("emulate Qiita")
                && other.stderr.contains("authkit sandbox serve --provider qiita")
                && !other.stderr.contains("still running"), "\(other.status): \(other.stderr)")
        let unregistered = try await CLIProcess.run(
            ["authorize", "--provider", "github", "--scripted-browser", "--redirect-uri", "http://localhost/callback"],
            environment: environment, timeout: 60)
        #expect(
            unregistered.status == 3 && unregistered.stderr.contains("redirect_uri is not registered")
                && !unregistered.stderr.contains("still running"), "\(unregistered.status): \(unregistered.stderr)")
    }

    /// The scripted browser hands back any redirect, as the docs say; one to
    /// plain http on another machine (`http://app.test/cb`, registered with
    /// the sandbox) was given to a loopback listener, which cannot bind it:
    /// exit 64, "not a loopback address".
    @Test func theScriptedBrowserTakesAPlainHTTPRedirectElsewhere() async throws {
        let home = try CLIProcess.home("authkit-sandbox-elsewhere")
        let redirect = "http://app.test/cb"
        let sandbox = try await Sandbox.start(
            emulating: try ProviderCatalog(includeBundled: true, directories: []).descriptor(id: "github"),
            options: SandboxOptions(redirectURIs: [redirect]))
        defer { Task { await sandbox.stop() } }
        let result = try await CLIProcess.run(
            ["authorize", "--provider", "github", "--scripted-browser", "--redirect-uri", redirect],
            environment: ["AUTHKIT_HOME": home.path, "AUTHKIT_SANDBOX": sandbox.baseURL.absoluteString],
            timeout: 60)
        #expect(result.status == 0, "\(result.status): \(result.stderr)")
        #expect(sandbox.events.contains { $0.step == "token" && $0.status == 200 })
    }

    /// Qiita's authorization request names no redirect URI: the provider
    /// (and its sandbox) redirects to the one registered for the client. A
    /// `--port` that is not that one listened where no redirect came; the
    /// scripted browser's failure to reach the registered one was reported
    /// as "Is the sandbox still running?" of a sandbox that was running.
    /// Now the sign-in says so before it starts, and the failure names
    /// both addresses. With the registered port, no note.
    @Test func aPortTheProviderDoesNotRedirectToIsSaid() async throws {
        let home = try CLIProcess.home("authkit-sandbox-registered")
        let registered = "http://127.0.0.1:\(try await freePort())/callback"
        let elsewhere = try await freePort()
        let sandbox = try await Sandbox.start(
            emulating: try ProviderCatalog(includeBundled: true, directories: []).descriptor(id: "qiita"),
            options: SandboxOptions(redirectURIs: [registered]))
        defer { Task { await sandbox.stop() } }
        let environment = [
            "AUTHKIT_HOME": home.path, "AUTHKIT_SANDBOX": sandbox.baseURL.absoluteString,
            "AUTHKIT_QIITA_REDIRECT_URI": registered,
        ]
        let missed = try await CLIProcess.run(
            ["authorize", "--provider", "qiita", "--scripted-browser", "--port", String(elsewhere), "--timeout", "50"],
            environment: environment, timeout: 60)
        #expect(missed.status == 4, "\(missed.stderr)")
        #expect(
            missed.stderr.contains(
                "Note: Qiita (sandbox) takes no redirect URI in the request: it redirects to the one registered for the client (\(registered) as AuthKit is set up)"
            ), "\(missed.stderr)")
        #expect(
            missed.stderr.contains(
                "The sandbox redirected to \(registered)?…, where this sign-in does not listen (http://127.0.0.1:\(elsewhere)/callback)"
            ), "\(missed.stderr)")
        #expect(!missed.stderr.contains("still running"))
        let port = try #require(URL(string: registered)?.port)
        let signedIn = try await CLIProcess.run(
            ["authorize", "--provider", "qiita", "--scripted-browser", "--port", String(port)],
            environment: environment, timeout: 60)
        #expect(signedIn.status == 0 && !signedIn.stderr.contains("Note:"), "\(signedIn.stderr)")
    }

    /// `export AUTHKIT_SANDBOX=…` is what `sandbox serve` tells the user to
    /// type; in that terminal a later `sandbox serve` or `sandbox try` is
    /// the sandbox, not a client of it. They announced "using the sandbox at
    /// <the exported URL>" (one they do not use), and a stale or mistyped
    /// value stopped them with an error about a variable they do not read.
    @Test func theSandboxCommandsIgnoreAnExportedSandboxURL() async throws {
        let home = try CLIProcess.home("authkit-sandbox-exported")
        let stale = "http://127.0.0.1:\(try await freePort())"
        let tried = try await CLIProcess.run(
            ["sandbox", "try", "--provider", "qiita", "--deterministic"],
            environment: ["AUTHKIT_HOME": home.path, "AUTHKIT_SANDBOX": stale], timeout: 90)
        #expect(tried.status == 0 && tried.stdout.contains(#""account":"alice""#), "\(tried.stderr)")
        #expect(!tried.stderr.contains(stale) && !tried.stdout.contains(stale), "\(tried.stderr)")
        let holder = try await Sandbox.start(
            emulating: try ProviderCatalog(includeBundled: true, directories: []).descriptor(id: "qiita"))
        defer { Task { await holder.stop() } }
        let served = try await CLIProcess.run(
            ["sandbox", "serve", "--provider", "qiita", "--port", String(holder.baseURL.port!)],
            environment: ["AUTHKIT_HOME": home.path, "AUTHKIT_SANDBOX": "garbage"], timeout: 30)
        #expect(served.status == 64 && served.stderr.contains("is already in use"), "\(served.stderr)")
        #expect(!served.stderr.contains("AUTHKIT_SANDBOX"), "\(served.stderr)")
    }

    /// `sandbox serve --public-client` told the user to run `authkit
    /// authorize --provider google`, which sends the sandbox's standard
    /// secret: the public client was refused (invalid_client) after the
    /// consent. The commands it prints now work as printed: this runs them.
    @Test func thePublicClientBannerCommandsWorkAsPrinted() async throws {
        let home = try CLIProcess.home("authkit-sandbox-public")
        let script = #"""
            "$1" sandbox serve --provider google --public-client --port 0 > "$AUTHKIT_HOME/serve.out" 2>&1 &
            served=$!
            for _ in $(seq 300); do grep -q 'Ctrl-C stops it' "$AUTHKIT_HOME/serve.out" && break; sleep 0.1; done
            cat "$AUTHKIT_HOME/serve.out"
            eval "$(sed -n 's/^  export /export /p' "$AUTHKIT_HOME/serve.out")"
            for verb in authorize request; do
                line=$(sed -n "s/^  authkit $verb /$verb /p" "$AUTHKIT_HOME/serve.out")
                extra=; [ "$verb" = authorize ] && extra=--scripted-browser
                eval "\"\$1\" $line $extra" || { kill $served; exit 1; }
            done
            kill $served
            """#
        let result = try await CLIProcess.run(
            [], environment: ["AUTHKIT_HOME": home.path], timeout: 90,
            launcher: ["/bin/bash", "-c", script, "bash"])
        #expect(result.stdout.contains("authkit authorize --provider google --client-secret ''"), "\(result.stdout)")
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        #expect(
            result.stdout.contains("Signed in to Google (sandbox)") && result.stdout.contains(#""account":"alice""#),
            "\(result.stdout)")
    }

    /// A provider with no public clients, and OAuth 1.0a, which has none:
    /// `--public-client` would emulate what the provider does not offer.
    @Test func serveRefusesAPublicClientWhereTheProviderHasNone() async throws {
        let home = try CLIProcess.home("authkit-sandbox-public-refused")
        for (provider, reason) in [("qiita", "has no public clients"), ("twitter", "OAuth 1.0a")] {
            let result = try await CLIProcess.run(
                ["sandbox", "serve", "--provider", provider, "--public-client", "--port", "0"],
                environment: ["AUTHKIT_HOME": home.path], timeout: 30)
            #expect(
                result.status == 64 && result.stderr.contains(reason) && result.stderr.contains("Drop --public-client"),
                "\(result.stderr)")
            #expect(!result.stdout.contains("Emulating"))
        }
    }

    /// What `sandbox serve` is given is checked before it starts: a client
    /// key file that holds no key (taken, every assertion was then "a
    /// signature that does not verify"), a key beside --public-client (the
    /// commands it printed then failed), a redirect URI `authorize` would
    /// refuse (a port out of range, user info).
    @Test func serveRefusesAKeyItCannotReadAndRedirectURIsAuthorizeWould() async throws {
        let home = try CLIProcess.home("authkit-sandbox-serve-inputs")
        defer { try? FileManager.default.removeItem(at: home) }
        let garbage = home.appendingPathComponent("garbage.pem")
        try Data("not a key\n".utf8).write(to: garbage)
        let key = home.appendingPathComponent("client.pem")
        try Data(P256.Signing.PrivateKey().pemRepresentation.utf8).write(to: key)
        let cases: [([String], String)] = [
            (["--client-key", garbage.path], "is not an EC or RSA key"),
            (["--public-client", "--client-key", key.path], "not a public client"),
            (["--redirect-uri", "http://127.0.0.1:99999/cb"], "--redirect-uri"),
            (["--redirect-uri", "https://a:b@app.example/cb"], "--redirect-uri"),
        ]
        for (extra, said) in cases {
            let result = try await CLIProcess.run(
                ["sandbox", "serve", "--provider", "github", "--port", "0"] + extra,
                environment: ["AUTHKIT_HOME": home.path], timeout: 30)
            #expect(result.status == 64 && result.stderr.contains(said), "\(extra): \(result.status) \(result.stderr)")
            #expect(!result.stdout.contains("Emulating"), "\(extra)")
        }
    }

    @Test func serveOnABusyPortSaysWhatToDo() async throws {
        let home = try CLIProcess.home("authkit-sandbox-busy")
        let holder = try await Sandbox.start(
            emulating: try ProviderCatalog(includeBundled: true, directories: []).descriptor(id: "qiita"))
        defer { Task { await holder.stop() } }
        let result = try await CLIProcess.run(
            ["sandbox", "serve", "--provider", "qiita", "--port", String(holder.baseURL.port!)],
            environment: ["AUTHKIT_HOME": home.path], timeout: 30)
        let port = holder.baseURL.port!
        #expect(result.status == 64, "\(result.stderr)")
        #expect(
            result.stderr.contains("Port \(port) on 127.0.0.1 is already in use, so the sandbox cannot listen there")
                && result.stderr.contains("Choose another with --port, or --port 0 for any free one."),
            "\(result.stderr)")
        // Not framed as a failed request, and no event-loop internals.
        #expect(!result.stderr.contains("request") && !result.stderr.contains("bind("), "\(result.stderr)")
        // The library says the same, typed.
        await #expect(throws: AuthKitError.sandbox(.portInUse(port: port))) {
            _ = try await Sandbox.start(
                emulating: try ProviderCatalog(includeBundled: true, directories: []).descriptor(id: "qiita"),
                options: SandboxOptions(port: port))
        }
        // A port that does not fit 16 bits: SwiftNIO would trap; the library refuses it.
        await #expect(throws: AuthKitError.sandbox(.cannotListen(port: 70000, reason: "not a TCP port (0–65535)"))) {
            _ = try await Sandbox.start(
                emulating: try ProviderCatalog(includeBundled: true, directories: []).descriptor(id: "qiita"),
                options: SandboxOptions(port: 70000))
        }
        let unknown = try await CLIProcess.run(
            ["sandbox", "try", "--provider", "qiitaa"], environment: ["AUTHKIT_HOME": home.path])
        #expect(unknown.status == 64 && unknown.stderr.contains("qiita"), "\(unknown.stderr)")
    }
}
