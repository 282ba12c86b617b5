import AuthKit
import AuthKitTestSupport
import Foundation
import Testing

/// `authkit authorize` through the loopback listener, with `$BROWSER` set to a
/// script that plays the user: it fetches the authorization URL and follows
/// the provider's redirects (curl -L) to the listener, as a browser would.
@Suite(.serialized) struct CLIBrowserTests {
    func home(descriptor: String) throws -> URL {
        let home = try CLIProcess.home("authkit-cli-browser")
        try descriptor.write(to: home.appendingPathComponent("providers/local.json"), atomically: true, encoding: .utf8)
        let script = home.appendingPathComponent("browser.sh")
        // Records the URL it was given, then follows it like a browser.
        try """
        #!/bin/sh
        printf '%s\\n' "$1" >> "\(home.path)/browser.log"
        exec curl -s -L --max-time 10 -o /dev/null "$1"
        """.write(to: script, atomically: true, encoding: .utf8)
        return home
    }

    func descriptor(_ server: TestHTTPServer) -> String {
        """
        {"id": "local", "name": "Local AS", "protocol": "oauth2", "pkce": "S256",
         "authorization": {"url": "\(server.baseURL)/authorize"},
         "token": {"url": "\(server.baseURL)/token"},
         "scopes": {"default": ["read"]}}
        """
    }

    /// A provider that approves at once (or denies) and redirects to redirect_uri.
    func authorizationServer(_ server: TestHTTPServer, deny: Bool = false) {
        server.route("GET", "/authorize") { request in
            let query = Dictionary((FormURLEncoding.decode(request.query ?? "") ?? []), uniquingKeysWith: { a, _ in a })
            let redirect = query["redirect_uri"] ?? ""
            let state = PercentEncoding.encode(query["state"] ?? "")
            let location =
                deny ? "\(redirect)?error=access_denied&state=\(state)" : "\(redirect)?code=browser-code&state=\(state)"
            return StubResponse(status: 302, headers: [("Location", location)])
        }
        server.route("POST", "/token") { request in
            let body = Dictionary((FormURLEncoding.decode(request.bodyText) ?? []), uniquingKeysWith: { a, _ in a })
            guard body["code"] == "browser-code", body["code_verifier"] != nil else {
                return .json(#"{"error":"invalid_grant"}"#, status: 400)
            }
            return .json(
                #"{"access_token":"browser-token-0123456789","token_type":"Bearer","expires_in":3600,"refresh_token":"r1","scope":"read"}"#
            )
        }
    }

    func env(_ home: URL) -> [String: String] {
        [
            "AUTHKIT_HOME": home.path, "BROWSER": "/bin/sh \(home.path)/browser.sh",
            "AUTHKIT_LOCAL_CLIENT_ID": "browser-client", "AUTHKIT_LOCAL_CLIENT_SECRET": "browser-secret",
        ]
    }

    @Test func signInThroughTheBrowserAndListener() async throws {
        try await withServer { server in
            authorizationServer(server)
            let home = try home(descriptor: descriptor(server))
            let result = try await CLIProcess.run(
                ["authorize", "--provider", "local", "--json"], environment: env(home))
            #expect(result.status == 0, "\(result.stderr)")
            let credential = try JSONDecoder.iso.decode(Credential.self, from: Data(result.stdout.utf8))
            #expect(credential.accessToken == "browser-token-0123456789")
            #expect(result.stderr.contains("Waiting for you to approve in the browser"))
            // The browser was given the authorization URL, with a loopback redirect on a chosen port.
            let opened = try String(contentsOf: home.appendingPathComponent("browser.log"), encoding: .utf8)
            #expect(opened.hasPrefix("\(server.baseURL)/authorize?"))
            #expect(opened.contains("redirect_uri=http%3A%2F%2F127.0.0.1%3A"))
            let stored = try await FileCredentialStore(file: home.appendingPathComponent("credentials.json"))
                .allCredentials()
            #expect(stored.map(\.accessToken) == ["browser-token-0123456789"])
        }
    }

    /// Through the loopback listener too: a SIGTERM once the redirect has
    /// come (the token request is held) waits for the save.
    @Test func aSignalAfterTheRedirectWaitsForTheSave() async throws {
        try await withServer { server in
            authorizationServer(server)
            let exchanges = Recorder<Int>()
            server.route("POST", "/token") { _ in
                exchanges.append(1)
                Thread.sleep(forTimeInterval: 1.5)
                return .json(#"{"access_token":"browser-token-0123456789","token_type":"Bearer","expires_in":3600}"#)
            }
            let home = try home(descriptor: descriptor(server))
            let result = try await CLIProcess.run(
                ["authorize", "--provider", "local"], environment: env(home),
                signalWhen: { !exchanges.all.isEmpty }, signals: [SIGTERM])
            #expect(
                result.signal == SIGTERM && result.stderr.contains("the sign-in is stored"),
                "status \(result.status): \(result.stderr)")
            let stored = try await FileCredentialStore(file: home.appendingPathComponent("credentials.json"))
                .allCredentials()
            #expect(stored.map(\.accessToken) == ["browser-token-0123456789"])
        }
    }

    /// `--timeout` passing while the answer is exchanged (the token
    /// endpoint slow): the exchange and the save are seen through, as for a
    /// signal; the code is spent by then, and exiting lost the grant.
    @Test func aTimeoutAfterTheRedirectWaitsForTheSave() async throws {
        try await withServer { server in
            authorizationServer(server)
            // The redirect must come before --timeout passes: 4 s, not 2, as a
            // loaded CI run (24 tests on 2 cores) can start the browser late.
            // An exchange longer than the timeout is still under way when it
            // passes, however soon it began.
            server.route("POST", "/token") { _ in
                Thread.sleep(forTimeInterval: 4.5)
                return .json(#"{"access_token":"browser-token-0123456789","token_type":"Bearer","expires_in":3600}"#)
            }
            let home = try home(descriptor: descriptor(server))
            let result = try await CLIProcess.run(
                ["authorize", "--provider", "local", "--timeout", "4"], environment: env(home))
            #expect(result.status == 0 && !result.stderr.contains("Timed out"), "\(result.status): \(result.stderr)")
            let stored = try await FileCredentialStore(file: home.appendingPathComponent("credentials.json"))
                .allCredentials()
            #expect(stored.map(\.accessToken) == ["browser-token-0123456789"])
        }
    }

    @Test func deniedConsentExitsThreeAndStoresNothing() async throws {
        try await withServer { server in
            authorizationServer(server, deny: true)
            let home = try home(descriptor: descriptor(server))
            let result = try await CLIProcess.run(["authorize", "--provider", "local"], environment: env(home))
            #expect(result.status == 3)
            #expect(result.stderr.contains("denied"))
            #expect(!FileManager.default.fileExists(atPath: home.appendingPathComponent("credentials.json").path))
        }
    }

    @Test func noBrowserPrintsTheURLAndTimesOutCleanly() async throws {
        try await withServer { server in
            authorizationServer(server)
            let home = try home(descriptor: descriptor(server))
            let started = Date()
            let result = try await CLIProcess.run(
                ["authorize", "--provider", "local", "--no-browser", "--timeout", "2"], environment: env(home))
            #expect(result.status == 5)
            #expect(Date().timeIntervalSince(started) < 20)
            #expect(result.stderr.contains("\(server.baseURL)/authorize?"))
            #expect(result.stderr.contains("Timed out"))
            #expect(!FileManager.default.fileExists(atPath: home.appendingPathComponent("browser.log").path))
        }
    }

    @Test func portInUseIsAUsageError() async throws {
        try await withServer { server in
            authorizationServer(server)
            let home = try home(descriptor: descriptor(server))
            // The test server already holds this port.
            let result = try await CLIProcess.run(
                ["authorize", "--provider", "local", "--port", "\(server.port)", "--no-browser"], environment: env(home)
            )
            #expect(result.status == 64)
            #expect(result.stderr.contains("\(server.port)"))
            // The port was the user's --port: not blamed on the provider.
            #expect(
                !result.stderr.contains("The provider's redirect URI fixes this port")
                    && result.stderr.contains("or the one asked for"), "\(result.stderr)")
        }
    }

    @Test func httpsOnlyProviderAsksForManual() async throws {
        let home = try home(
            descriptor:
                "{\"id\": \"local\", \"protocol\": \"oauth2\", \"authorization\": {\"url\": \"https://example.com/a\"}, \"token\": {\"url\": \"https://example.com/t\"}}"
        )
        let result = try await CLIProcess.run(
            ["authorize", "--provider", "instagram"],
            environment: [
                "AUTHKIT_HOME": home.path, "AUTHKIT_INSTAGRAM_CLIENT_ID": "x", "AUTHKIT_INSTAGRAM_CLIENT_SECRET": "s",
            ])
        #expect(result.status == 64)
        #expect(result.stderr.contains("--manual"))
    }
}
