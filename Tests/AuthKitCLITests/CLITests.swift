import AuthKit
import AuthKitTestSupport
import Foundation
import Testing

/// End-to-end: the built `authkit` binary against a token endpoint on
/// 127.0.0.1, with a temporary $AUTHKIT_HOME holding a user override of the
/// bundled descriptor that points its endpoints at the test server.
@Suite(.serialized) struct CLITests {
    /// A fresh $AUTHKIT_HOME; `qiitaAt` writes a user override of qiita.json whose endpoints are the server's.
    func home(qiitaAt server: TestHTTPServer? = nil) throws -> URL {
        let home = try CLIProcess.home("authkit-cli")
        if let server {
            let bundled = try String(contentsOf: root.appendingPathComponent("providers/qiita.json"), encoding: .utf8)
            let local = bundled.replacingOccurrences(of: "https://qiita.com", with: server.baseURL)
            try local.write(to: home.appendingPathComponent("providers/qiita.json"), atomically: true, encoding: .utf8)
        }
        return home
    }

    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..").standardized

    func environment(_ home: URL, _ extra: [String: String] = [:]) -> [String: String] {
        ["AUTHKIT_HOME": home.path].merging(extra) { _, new in new }
    }

    /// Answers the `--manual` prompt like the provider would: reads the state from
    /// the printed authorization URL and returns the redirect with a code.
    static func pasteRedirect(code: String = "good-code", stateOverride: String? = nil) -> @Sendable (String) -> String?
    {
        { stderr in
            guard let line = stderr.split(separator: "\n").first(where: { $0.contains("/oauth/authorize?") }),
                let url = URLComponents(string: line.trimmingCharacters(in: .whitespaces)),
                let state = url.queryItems?.first(where: { $0.name == "state" })?.value,
                stderr.contains("paste")
            else { return nil }
            return "http://127.0.0.1:8765/callback?code=\(code)&state=\(stateOverride ?? state)"
        }
    }

    func qiitaServer(_ server: TestHTTPServer) {
        server.route("POST", "/api/v2/access_tokens") { request in
            let body = (try? JSONDecoder().decode([String: String].self, from: request.body)) ?? [:]
            guard body["code"] == "good-code", body["client_secret"] == "cli-secret" else {
                return .json(#"{"message":"Bad code","type":"bad_request"}"#, status: 400)
            }
            return .json(
                #"{"client_id":"cli-client","scopes":["read_qiita"],"token":"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b"}"#,
                status: 201)
        }
        server.route("GET", "/api/v2/authenticated_user") { request in
            request.header("Authorization") == "Bearer 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b"
                ? .json(#"{"id":"alice"}"#) : .json(#"{"message":"Unauthorized","type":"unauthorized"}"#, status: 401)
        }
    }

    /// A store edited by hand to hold one account twice: the first was
    /// used without a word (a stale copy, whose refresh then failed), and
    /// `token list` showed two identical rows. Said once, with the way out.
    @Test func anAccountStoredTwiceIsSaid() async throws {
        let home = try home()
        let entry = { (token: String) in
            #"{"providerID":"qiita","kind":"oauth2","accessToken":"\#(token)","tokenType":"Bearer","scopes":[],"obtainedAt":"2026-11-20T00:00:00Z","rawFields":{}}"#
        }
        let file = home.appendingPathComponent("credentials.json")
        try Data(#"{"version":1,"credentials":[\#(entry("first-token")),\#(entry("second-token"))]}"#.utf8).write(
            to: file)
        #expect(chmod(file.path, 0o600) == 0)
        let list = try await CLIProcess.run(["token", "list"], environment: environment(home))
        #expect(
            list.status == 0
                && list.stderr.contains(
                    "credentials.json holds more than one credential for qiita; the first is used. Sign in again"),
            "\(list.stderr)")
        #expect(list.stderr.components(separatedBy: "holds more than one").count == 2, "said once: \(list.stderr)")
    }

    @Test func providersListShowsBundledDescriptors() async throws {
        let home = try home()
        let result = try await CLIProcess.run(["providers", "list"], environment: environment(home))
        #expect(result.status == 0, "\(result.stderr)")
        for id in ["qiita", "instagram", "github"] { #expect(result.stdout.contains(id)) }
    }

    /// Ctrl-C, SIGTERM or SIGHUP once the provider's answer is in: the code
    /// is being exchanged, and the tokens would exist only in this process.
    /// The signal waits for the save, then ends authkit by itself; before,
    /// the sign-in was dropped ("nothing was stored") and its grant left
    /// behind at the provider.
    @Test(arguments: [SIGINT, SIGTERM, SIGHUP])
    func aSignalDuringTheCodeExchangeWaitsForTheSave(signal: Int32) async throws {
        try await withServer { server in
            let exchanges = Self.slowExchange(on: server, seconds: 1.5) {
                .json(#"{"client_id":"cli-client","scopes":["read_qiita"],"token":"the-new-token"}"#, status: 201)
            }
            let home = try home(qiitaAt: server)
            defer { try? FileManager.default.removeItem(at: home) }
            let env = environment(
                home, ["AUTHKIT_QIITA_CLIENT_ID": "cli-client", "AUTHKIT_QIITA_CLIENT_SECRET": "cli-secret"])
            let result = try await CLIProcess.run(
                ["authorize", "--provider", "qiita", "--manual"], environment: env,
                respond: Self.pasteRedirect(), signalWhen: { !exchanges.all.isEmpty }, signals: [signal])
            #expect(
                result.signal == signal,
                "status \(result.status), signal \(result.signal.map { String($0) } ?? "none"): \(result.stderr)")
            #expect(
                result.stderr.contains("the provider has answered; finishing the sign-in first")
                    && result.stderr.contains("the sign-in is stored ('authkit token delete' removes it); stopping."),
                "\(result.stderr)")
            #expect(!result.stderr.contains("nothing was stored"), "\(result.stderr)")
            let stored = try await FileCredentialStore(file: home.appendingPathComponent("credentials.json"))
                .allCredentials()
            #expect(stored.map(\.accessToken) == ["the-new-token"])
        }
    }

    /// An exchange that fails while a signal waits for it: its error was
    /// never printed (the signal ended authkit with "Cancelled; nothing was
    /// stored."), so a token endpoint that refused, or never answered,
    /// read as the user's own cancel.
    @Test func aSignalDuringAFailingCodeExchangeSaysWhyItFailed() async throws {
        try await withServer { server in
            let exchanges = Self.slowExchange(on: server, seconds: 1.5) {
                .json(#"{"message":"bad code","type":"unauthorized"}"#, status: 401)
            }
            let home = try home(qiitaAt: server)
            defer { try? FileManager.default.removeItem(at: home) }
            let env = environment(
                home, ["AUTHKIT_QIITA_CLIENT_ID": "cli-client", "AUTHKIT_QIITA_CLIENT_SECRET": "cli-secret"])
            let result = try await CLIProcess.run(
                ["authorize", "--provider", "qiita", "--manual"], environment: env,
                respond: Self.pasteRedirect(), signalWhen: { !exchanges.all.isEmpty }, signals: [SIGINT])
            #expect(result.signal == SIGINT, "\(result.stderr)")
            #expect(result.stderr.contains("waits up to 30 s for the token endpoint"), "\(result.stderr)")
            #expect(
                result.stderr.contains("authkit: error: ") && result.stderr.contains("401")
                    && result.stderr.contains("Cancelled; nothing was stored."),
                "\(result.stderr)")
            // The reason first, then what became of the sign-in.
            let reason = try #require(result.stderr.range(of: "authkit: error: "))
            let outcome = try #require(result.stderr.range(of: "Cancelled; nothing was stored."))
            #expect(reason.lowerBound < outcome.lowerBound, "\(result.stderr)")
        }
    }

    /// Qiita's token endpoint on `server`, answering `answer` after
    /// `seconds`; the recorder fills as each exchange arrives, for a signal
    /// to be sent while the answer is awaited.
    static func slowExchange(on server: TestHTTPServer, seconds: Double, answer: @escaping @Sendable () -> StubResponse)
        -> Recorder<Int>
    {
        let exchanges = Recorder<Int>()
        server.route("POST", "/api/v2/access_tokens") { _ in
            exchanges.append(1)
            Thread.sleep(forTimeInterval: seconds)
            return answer()
        }
        return exchanges
    }

    /// A second Ctrl-C does not wait for the exchange: authkit ends at once
    /// and nothing is stored, as the first one's message said.
    @Test func aSecondCtrlCDuringTheCodeExchangeStopsAtOnce() async throws {
        try await withServer { server in
            let exchanges = Self.slowExchange(on: server, seconds: 5) {
                .json(#"{"token":"the-new-token"}"#, status: 201)
            }
            let home = try home(qiitaAt: server)
            defer { try? FileManager.default.removeItem(at: home) }
            let env = environment(
                home, ["AUTHKIT_QIITA_CLIENT_ID": "cli-client", "AUTHKIT_QIITA_CLIENT_SECRET": "cli-secret"])
            // Timed from the exchange's arrival, not the launch: a loaded
            // machine's slow start must not count as waiting for it.
            let arrived = Recorder<Date>()
            let result = try await CLIProcess.run(
                ["authorize", "--provider", "qiita", "--manual"], environment: env,
                respond: Self.pasteRedirect(), signalWhen: { arrived.firstTime(!exchanges.all.isEmpty) },
                signals: [SIGINT, SIGINT])
            #expect(result.signal == SIGINT, "status \(result.status): \(result.stderr)")
            #expect(arrived.sinceFirst < 4.5, "waited for the 5-second exchange")
            #expect(result.stderr.contains("A second Ctrl-C stops now, without storing it."), "\(result.stderr)")
            #expect(!FileManager.default.fileExists(atPath: home.appendingPathComponent("credentials.json").path))
        }
    }

    @Test func manualSignInStoresTheCredentialAndRequestUsesIt() async throws {
        try await withServer { server in
            qiitaServer(server)
            let home = try home(qiitaAt: server)
            let env = environment(
                home, ["AUTHKIT_QIITA_CLIENT_ID": "cli-client", "AUTHKIT_QIITA_CLIENT_SECRET": "cli-secret"])
            let signIn = try await CLIProcess.run(
                ["authorize", "--provider", "qiita", "--manual", "--json", "--label", "work"],
                environment: env, respond: Self.pasteRedirect())
            #expect(signIn.status == 0, "\(signIn.stderr)")
            // --json: the credential, and only it, on standard output.
            let printed = try JSONDecoder.iso.decode(Credential.self, from: Data(signIn.stdout.utf8))
            #expect(printed.accessToken == "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b")
            #expect(printed.label == "work")
            #expect(!signIn.stderr.contains("cli-secret"))

            let stored = try await FileCredentialStore(file: home.appendingPathComponent("credentials.json"))
                .allCredentials()
            #expect(stored.map(\.accessToken) == ["9f86d081884c7d659a2feaa0c55ad015a3bf4f1b"])

            let field = try await CLIProcess.run(
                ["token", "show", "--provider", "qiita", "--label", "work", "--field", "access_token"], environment: env
            )
            #expect(field.stdout == "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b\n")
            // The name --json printed it under works too; an unknown one lists each known field once.
            let jsonName = try await CLIProcess.run(
                ["token", "show", "--provider", "qiita", "--label", "work", "--field", "accessToken"], environment: env)
            #expect(jsonName.stdout == field.stdout, "\(jsonName.stderr)")
            let unknown = try await CLIProcess.run(
                ["token", "show", "--provider", "qiita", "--label", "work", "--field", "nope"], environment: env)
            let known = try #require(unknown.stderr.split(separator: "Known: ").last).dropLast(2).components(
                separatedBy: ", ")
            #expect(
                unknown.status == 64 && known.first == "access_token" && Set(known).count == known.count,
                "\(unknown.stderr)")

            let summary = try await CLIProcess.run(["token", "list"], environment: env)
            #expect(summary.status == 0)
            #expect(summary.stdout.contains("qiita (work)"))
            #expect(!summary.stdout.contains("9f86d081884c7d659a2feaa0c55ad015a3bf4f1b"))

            let request = try await CLIProcess.run(
                ["request", "--provider", "qiita", "--label", "work", "\(server.baseURL)/api/v2/authenticated_user"],
                environment: env)
            #expect(request.status == 0, "\(request.stderr)")
            #expect(request.stdout == #"{"id":"alice"}"#)

            let header = try await CLIProcess.run(
                ["token", "header", "--provider", "qiita", "--label", "work"], environment: env)
            #expect(header.stdout == "Authorization: Bearer 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b\n")

            let deleted = try await CLIProcess.run(
                ["token", "delete", "--provider", "qiita", "--label", "work"], environment: env)
            #expect(deleted.status == 0)
            #expect(
                try await FileCredentialStore(file: home.appendingPathComponent("credentials.json")).allCredentials()
                    .isEmpty)
        }
    }

    @Test func pastedURLWithAnotherStateStoresNothing() async throws {
        try await withServer { server in
            qiitaServer(server)
            let home = try home(qiitaAt: server)
            let env = environment(
                home, ["AUTHKIT_QIITA_CLIENT_ID": "cli-client", "AUTHKIT_QIITA_CLIENT_SECRET": "cli-secret"])
            let result = try await CLIProcess.run(
                ["authorize", "--provider", "qiita", "--manual"], environment: env,
                respond: Self.pasteRedirect(stateOverride: "forged"))
            #expect(result.status == 65)
            #expect(result.stderr.contains("'state' does not match"))
            #expect(server.requests.isEmpty)
            #expect(!FileManager.default.fileExists(atPath: home.appendingPathComponent("credentials.json").path))
        }
    }

    @Test func providerErrorExitsThree() async throws {
        try await withServer { server in
            qiitaServer(server)
            let home = try home(qiitaAt: server)
            let env = environment(
                home, ["AUTHKIT_QIITA_CLIENT_ID": "cli-client", "AUTHKIT_QIITA_CLIENT_SECRET": "cli-secret"])
            let result = try await CLIProcess.run(
                ["authorize", "--provider", "qiita", "--manual"], environment: env,
                respond: Self.pasteRedirect(code: "expired"))
            #expect(result.status == 3)
            #expect(result.stderr.contains("bad_request: Bad code"))
        }
    }

    @Test func unknownProviderSuggestsAndExits64() async throws {
        let result = try await CLIProcess.run(
            ["authorize", "--provider", "quiita", "--manual"], environment: environment(try home()))
        #expect(result.status == 64)
        #expect(result.stderr.contains("Did you mean 'qiita'"))
    }

    @Test func missingClientIDSaysHowAndExits64() async throws {
        let result = try await CLIProcess.run(
            ["authorize", "--provider", "qiita", "--manual"], environment: environment(try home()))
        #expect(result.status == 64)
        #expect(result.stderr.contains("AUTHKIT_QIITA_CLIENT_ID"))
    }

    @Test func corruptCredentialFileIsReportedAndKept() async throws {
        let home = try home()
        let file = home.appendingPathComponent("credentials.json")
        try Data("{not json".utf8).write(to: file)
        let result = try await CLIProcess.run(["token", "list"], environment: environment(home))
        #expect(result.status == 65)
        #expect(result.stderr.contains(file.path))
        #expect(try Data(contentsOf: file) == Data("{not json".utf8))
    }

    @Test func validateReportsFileAndFieldAndExits65() async throws {
        let home = try home()
        let bad = home.appendingPathComponent("bad.json")
        try
            #"{"id": "bad", "protocol": "oauth2", "authorization": {"url": "http://example.com/a"}, "token": {"url": "https://example.com/t"}}"#
            .write(to: bad, atomically: true, encoding: .utf8)
        let result = try await CLIProcess.run(
            ["providers", "validate", bad.path, root.appendingPathComponent("providers/qiita.json").path],
            environment: environment(home))
        #expect(result.status == 65)
        #expect(result.stdout.contains("\(bad.path): field 'authorization.url'"))
        #expect(result.stdout.contains("qiita.json: ok"))
    }

    @Test func helpShowsExamplesAndNoSecrets() async throws {
        let env = environment(try home(), ["AUTHKIT_QIITA_CLIENT_SECRET": "env-secret-value"])
        for command in [["--help"], ["authorize", "--help"], ["token", "show", "--help"], ["request", "--help"]] {
            let result = try await CLIProcess.run(command, environment: env)
            #expect(result.status == 0)
            #expect(result.stdout.contains("Example"), "\(command)")
            #expect(!result.stdout.contains("env-secret-value"))
        }
    }
}

extension JSONDecoder {
    static var iso: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }
}
