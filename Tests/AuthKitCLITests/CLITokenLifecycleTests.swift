import AuthKit
import AuthKitTestSupport
import Foundation
import Testing

/// Refresh, automatic refresh before a request, revocation, signing and Ctrl-C,
/// through the built binary.
@Suite(.serialized) struct CLITokenLifecycleTests {
    func home(_ server: TestHTTPServer) throws -> URL {
        let home = try CLIProcess.home("authkit-cli-life")
        try """
        {"id": "local", "name": "Local AS", "protocol": "oauth2", "pkce": "S256",
         "authorization": {"url": "\(server.baseURL)/authorize"},
         "token": {"url": "\(server.baseURL)/token", "clientAuthentication": "basic"},
         "revocation": {"url": "\(server.baseURL)/revoke"}}
        """.write(to: home.appendingPathComponent("providers/local.json"), atomically: true, encoding: .utf8)
        return home
    }

    func env(_ home: URL) -> [String: String] {
        [
            "AUTHKIT_HOME": home.path, "AUTHKIT_LOCAL_CLIENT_ID": "life-client",
            "AUTHKIT_LOCAL_CLIENT_SECRET": "life-secret",
        ]
    }

    /// Stores an already-expired credential, as if signed in an hour ago.
    func storeExpired(in home: URL) async throws {
        try await FileCredentialStore(file: home.appendingPathComponent("credentials.json")).save(
            Credential(
                providerID: "local", accessToken: "old-access-token-0000", refreshToken: "refresh-one",
                expiresAt: Date().addingTimeInterval(-60), scopes: ["read"],
                obtainedAt: Date().addingTimeInterval(-3660)))
    }

    func routes(_ server: TestHTTPServer) {
        server.route("POST", "/token") { request in
            let body = Dictionary((FormURLEncoding.decode(request.bodyText) ?? []), uniquingKeysWith: { a, _ in a })
            guard body["grant_type"] == "refresh_token", body["refresh_token"] == "refresh-one" else {
                return .json(#"{"error":"invalid_grant"}"#, status: 400)
            }
            return .json(
                #"{"access_token":"new-access-token-1111","token_type":"Bearer","expires_in":3600,"refresh_token":"refresh-two"}"#
            )
        }
        server.route("GET", "/api/me") { request in
            request.header("Authorization") == "Bearer new-access-token-1111"
                ? .json(#"{"me":"ok"}"#) : .json(#"{"error":"expired"}"#, status: 401)
        }
        server.route("POST", "/revoke") { _ in StubResponse(status: 200) }
    }

    /// A stored credential of the other protocol than its provider file now
    /// says (an override that changed it, a store edited by hand): the
    /// library's "use the authenticator that issued it" said nothing a user
    /// of the command line could do. Nothing is sent; sign in again.
    @Test func aCredentialOfAnotherProtocolThanItsProviderFileSaysSignInAgain() async throws {
        try await withServer { server in
            let home = try home(server)
            try await FileCredentialStore(file: home.appendingPathComponent("credentials.json")).save(
                Credential(
                    providerID: "local", isOAuth1: true, accessToken: "oauth1-token-0000", tokenType: "OAuth",
                    tokenSecret: "secret-0000", obtainedAt: Date()))
            for command in [
                ["request", "--provider", "local", "\(server.baseURL)/api/me"],
                ["token", "refresh", "--provider", "local"],
            ] {
                let result = try await CLIProcess.run(command, environment: env(home))
                #expect(
                    result.status == 1
                        && result.stderr.contains(
                            "The stored credential local is an oauth1 one, but its provider file now says oauth2 (a changed or replaced provider file, or an edited store), so it was not used. Sign in again: authkit authorize --provider local"
                        ),
                    "\(command): \(result.stderr)")
            }
            #expect(server.requests(to: "/api/me").isEmpty && server.requests(to: "/token").isEmpty)
        }
    }

    @Test func requestRefreshesAnExpiredTokenOnceAndSavesTheNewOne() async throws {
        try await withServer { server in
            routes(server)
            let home = try home(server)
            try await storeExpired(in: home)
            let first = try await CLIProcess.run(
                ["request", "--provider", "local", "\(server.baseURL)/api/me"], environment: env(home))
            #expect(first.status == 0, "\(first.stderr)")
            #expect(first.stdout == #"{"me":"ok"}"#)
            let stored = try await FileCredentialStore(file: home.appendingPathComponent("credentials.json"))
                .allCredentials()
            #expect(stored.first?.accessToken == "new-access-token-1111")
            #expect(stored.first?.refreshToken == "refresh-two")
            // The saved token is valid now: a second request does not refresh again.
            let second = try await CLIProcess.run(
                ["request", "--provider", "local", "\(server.baseURL)/api/me"], environment: env(home))
            #expect(second.status == 0)
            #expect(server.requests(to: "/token").count == 1)
        }
    }

    @Test func nonSuccessResponseExitsThreeAndPrintsTheBody() async throws {
        try await withServer { server in
            routes(server)
            let home = try home(server)
            try await FileCredentialStore(file: home.appendingPathComponent("credentials.json")).save(
                Credential(providerID: "local", accessToken: "wrong-token-value-99"))
            let result = try await CLIProcess.run(
                ["request", "--provider", "local", "\(server.baseURL)/api/me"], environment: env(home))
            #expect(result.status == 3)
            #expect(result.stdout == #"{"error":"expired"}"#)
            #expect(result.stderr.contains("HTTP 401"))
        }
    }

    /// A resource server says why it refused the token in its
    /// `WWW-Authenticate: Bearer` challenge (RFC 6750 §3.1); `request` said
    /// only "answered HTTP 401". It now gives the reason, and the command that
    /// deals with it: a refresh or a new sign-in for `invalid_token`, a
    /// sign-in with the named scopes for `insufficient_scope`. A scope list
    /// that could not be pasted as flags is not turned into a command.
    /// An API that echoes the request in its challenge had the token, and
    /// with the refresh it triggered the refresh token and client secret,
    /// printed whole on standard error (the token endpoint's errors masked
    /// them). And after -L to another origin, which got no credential, its
    /// 401 invalid_token refreshed the user's credential and advised a new
    /// sign-in, and its 403 the scopes it named.
    @Test func anAPIChallengeNeitherRepeatsSecretsNorSpeaksForAnotherOrigin() async throws {
        try await withServer { server in
            server.route("POST", "/token") { _ in
                .json(
                    #"{"access_token":"renewed-access-token-2222","token_type":"Bearer","expires_in":3600,"refresh_token":"refresh-two-3333"}"#
                )
            }
            server.route("GET", "/api/echo") { request in
                let sent = request.header("Authorization") ?? ""
                return StubResponse(
                    status: 401,
                    headers: [
                        (
                            "WWW-Authenticate",
                            #"Bearer error="invalid_token", error_description="you sent \#(sent) with refresh-two-3333 and life-secret""#
                        )
                    ])
            }
            try await withServer { elsewhere in
                elsewhere.route("GET", "/denied") { _ in
                    StubResponse(
                        status: 403,
                        headers: [("WWW-Authenticate", #"Bearer error="insufficient_scope", scope="admin:org""#)])
                }
                elsewhere.route("GET", "/expired") { _ in
                    StubResponse(status: 401, headers: [("WWW-Authenticate", #"Bearer error="invalid_token""#)])
                }
                server.route("GET", "/api/away") { _ in .redirect(302, to: "\(elsewhere.baseURL)/denied") }
                server.route("GET", "/api/gone") { _ in .redirect(302, to: "\(elsewhere.baseURL)/expired") }
                let home = try home(server)
                let store = FileCredentialStore(file: home.appendingPathComponent("credentials.json"))
                try await store.save(
                    Credential(
                        providerID: "local", accessToken: "first-access-token-1111", refreshToken: "refresh-one-0000",
                        expiresAt: Date().addingTimeInterval(3600)))
                let echoed = try await CLIProcess.run(
                    ["request", "--provider", "local", "\(server.baseURL)/api/echo"], environment: env(home))
                #expect(
                    echoed.status == 3
                        && echoed.stderr.contains("invalid_token (you sent Bearer •••• with •••• and ••••)"),
                    "\(echoed.stderr)")
                for secret in [
                    "first-access-token-1111", "renewed-access-token-2222", "refresh-two-3333", "life-secret",
                ] {
                    #expect(!echoed.stderr.contains(secret) && !echoed.stdout.contains(secret), "\(secret) was printed")
                }
                let refreshes = server.requests(to: "/token").count
                for (path, said) in [
                    ("/api/away", "answered HTTP 403 from \(elsewhere.baseURL)/denied, where a redirect led"),
                    ("/api/gone", "answered HTTP 401 from \(elsewhere.baseURL)/expired, where a redirect led"),
                ] {
                    let result = try await CLIProcess.run(
                        ["request", "--provider", "local", "-L", "-v", "\(server.baseURL)\(path)"],
                        environment: env(home))
                    #expect(
                        result.status == 3 && result.stderr.contains(said) && !result.stderr.contains("authorize"),
                        "\(result.stderr)")
                    // -v says which hop went without the credential.
                    #expect(
                        result.stderr.contains(
                            "GET \(elsewhere.baseURL)/\(path == "/api/away" ? "denied" : "expired") (without the credential, which goes only to \(server.baseURL))"
                        ),
                        "\(result.stderr)")
                }
                #expect(
                    server.requests(to: "/token").count == refreshes,
                    "a 401 from an origin that got no credential refreshed it")
                // Both hops reached the other origin, and neither carried the credential.
                let hops = elsewhere.requests(to: "/expired") + elsewhere.requests(to: "/denied")
                #expect(hops.count == 2 && hops.allSatisfy { $0.header("Authorization") == nil }, "\(hops)")

                // Back to the origin through another one: that hop carries no
                // credential either, and its 401 refreshes nothing (the other
                // host chose the way back, and could spend a rotating token).
                elsewhere.route("GET", "/bounce") { _ in .redirect(302, to: "\(server.baseURL)/api/back") }
                server.route("GET", "/api/roundtrip") { _ in .redirect(302, to: "\(elsewhere.baseURL)/bounce") }
                server.route("GET", "/api/back") { _ in
                    StubResponse(status: 401, headers: [("WWW-Authenticate", #"Bearer error="invalid_token""#)])
                }
                let back = try await CLIProcess.run(
                    ["request", "--provider", "local", "-L", "-v", "\(server.baseURL)/api/roundtrip"],
                    environment: env(home))
                #expect(
                    back.status == 3
                        && back.stderr.contains(
                            "answered HTTP 401 from \(server.baseURL)/api/back, where a redirect led")
                        && back.stderr.contains("the way back to \(server.baseURL) went through another origin")
                        && !back.stderr.contains("authorize"), "\(back.stderr)")
                #expect(server.requests(to: "/token").count == refreshes, "a 401 after the way back refreshed")
                #expect(server.requests(to: "/api/back").first?.header("Authorization") == nil)
            }
        }
    }

    /// Another process renewed the credential while this one's request was
    /// being refused: the refresh took up that renewal (no second refresh),
    /// the API refused it too, and the advice said "a refresh could not
    /// renew it", though no refresh had failed.
    @Test func aRenewalByAnotherProcessIsNotCalledAFailedRefresh() async throws {
        try await withServer { server in
            let home = try home(server)
            let file = home.appendingPathComponent("credentials.json")
            try await FileCredentialStore(file: file).save(
                Credential(
                    providerID: "local", accessToken: "first-access-token-1111",
                    refreshToken: "refresh-one-0000", expiresAt: Date().addingTimeInterval(3600)))
            server.route("GET", "/api/refused") { request in
                if request.header("Authorization") == "Bearer first-access-token-1111" {
                    // Meanwhile, another process renews the credential.
                    let saved = DispatchSemaphore(value: 0)
                    Task {
                        try? await FileCredentialStore(file: file).save(
                            Credential(
                                providerID: "local", accessToken: "other-process-token-2222",
                                refreshToken: "refresh-two-0000", expiresAt: Date().addingTimeInterval(3600)))
                        saved.signal()
                    }
                    saved.wait()
                }
                return StubResponse(status: 401, headers: [("WWW-Authenticate", #"Bearer error="invalid_token""#)])
            }
            let result = try await CLIProcess.run(
                ["request", "--provider", "local", "\(server.baseURL)/api/refused"], environment: env(home))
            #expect(
                result.status == 3
                    && result.stderr.contains(
                        "a refresh renewed it just now, but the API refused the new token as well")
                    && !result.stderr.contains("could not renew"), "\(result.stderr)")
            #expect(
                server.requests(to: "/token").isEmpty, "the other process's renewal is taken up, not refreshed again")
            #expect(
                server.requests(to: "/api/refused").map { $0.header("Authorization") } == [
                    "Bearer first-access-token-1111", "Bearer other-process-token-2222",
                ])
        }
    }

    /// A refresh lock held by a process stopped mid-refresh was found only
    /// when the sign-in was saved: after the user had consented and the
    /// code was exchanged, so the new grant was thrown away. The sign-in now
    /// waits for that lock (30 s) before it begins, and the error says who
    /// may hold it.
    @Test func aRefreshLockHeldElsewhereStopsTheSignInBeforeItBegins() async throws {
        try await withServer { server in
            routes(server)
            let home = try home(server)
            // Held by this test process, as another process's refresh would hold it.
            let lockPath = home.appendingPathComponent(".refresh-local.lock").path
            let fd = open(lockPath, O_RDWR | O_CREAT, 0o600)
            try #require(fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0)
            defer { close(fd) }
            let result = try await CLIProcess.run(
                ["authorize", "--provider", "local", "--manual"], environment: env(home), timeout: 90
            ) { stderr in
                stderr.contains("paste") ? "http://127.0.0.1/callback?code=x&state=y" : nil
            }
            #expect(
                result.status == 65
                    && result.stderr.contains("another process has been refreshing local for more than 30 s")
                    && result.stderr.contains("(`fuser '\(lockPath)'` shows which)"),
                "\(result.status): \(result.stderr)"
            )
            #expect(!result.stderr.contains("/authorize?"), "the sign-in began: \(result.stderr)")
            #expect(server.requests(to: "/token").isEmpty)
        }
    }

    /// A label holding a `'` followed by a combining mark (an app can store
    /// one through the library; the command line refuses `'` in a new
    /// label) is quoted for the shell scalar by scalar: the advice pastes as
    /// that label. Quoted character by character, the `'` and its mark were
    /// one character left as it was, the shell's quoting ended there, and
    /// the rest of the label ran as a command.
    @Test func adviceQuotesAQuoteCarryingACombiningMark() async throws {
        try await withServer { server in
            server.route("GET", "/api/expired") { _ in
                StubResponse(status: 401, headers: [("WWW-Authenticate", #"Bearer error="invalid_token""#)])
            }
            let home = try home(server)
            let label = "a'\u{301}; echo ran #"
            try await FileCredentialStore(file: home.appendingPathComponent("credentials.json")).save(
                Credential(providerID: "local", label: label, accessToken: "token-that-fails"))
            let result = try await CLIProcess.run(
                ["request", "--provider", "local", "--label", label, "\(server.baseURL)/api/expired"],
                environment: env(home))
            let prefix = "sign in again: authkit authorize --provider local --label "
            let advice = try #require(
                result.stderr.split(separator: "\n").first { $0.contains(prefix) }, "\(result.stderr)")
            var word = String(try #require(advice.range(of: prefix).map { advice[$0.upperBound...] }))
            #expect(word.hasSuffix("."))
            word.removeLast()
            let echoed = try await ChildProcess.run("/bin/sh", ["-c", "printf %s " + word])
            #expect(echoed.exit.status == 0 && echoed.standardOutput == label, "\(word) pasted as \(echoed)")
        }
    }

    @Test func aBearerChallengeSaysWhatToDo() async throws {
        try await withServer { server in
            server.route("GET", "/api/expired") { _ in
                StubResponse(
                    status: 401,
                    headers: [
                        (
                            "WWW-Authenticate",
                            #"Bearer realm="api", error="invalid_token", error_description="The access token expired""#
                        )
                    ])
            }
            server.route("GET", "/api/admin") { _ in
                StubResponse(
                    status: 403,
                    headers: [
                        (
                            "WWW-Authenticate",
                            #"Basic realm="x", Bearer error="insufficient_scope", scope="read admin:org""#
                        )
                    ])
            }
            server.route("GET", "/api/odd") { _ in
                StubResponse(
                    status: 403,
                    headers: [("WWW-Authenticate", #"Bearer error="insufficient_scope", scope="read -rf""#)])
            }
            // Twelve scopes were cut to the first ten, a command that signs in to a token refused again.
            let twelve = (1...12).map { "scope\($0)" }.joined(separator: " ")
            server.route("GET", "/api/many") { _ in
                StubResponse(
                    status: 403,
                    headers: [("WWW-Authenticate", "Bearer error=\"insufficient_scope\", scope=\"\(twelve)\"")])
            }
            server.route("GET", "/api/plain") { _ in StubResponse(status: 401) }
            let home = try home(server)
            try await FileCredentialStore(file: home.appendingPathComponent("credentials.json")).save(
                Credential(providerID: "local", label: "work", accessToken: "token-that-fails"))
            func request(_ path: String) async throws -> CLIResult {
                try await CLIProcess.run(
                    ["request", "--provider", "local", "--label", "work", "\(server.baseURL)\(path)"],
                    environment: env(home))
            }
            let expired = try await request("/api/expired")
            #expect(
                expired.status == 3
                    && expired.stderr.contains(
                        "answered HTTP 401: invalid_token (The access token expired). The token was not accepted (expired early, revoked, or for another audience), and it cannot be refreshed (the provider gave no refresh token): sign in again: authkit authorize --provider local --label work."
                    ),
                "\(expired.stderr)")
            // With a refresh token, the 401 is answered by a refresh (saved) and the request sent again (RFC 6750 §3.1).
            server.route("POST", "/token") { _ in
                .json(#"{"access_token":"renewed-token","token_type":"Bearer","expires_in":3600}"#)
            }
            server.route("GET", "/api/revoked") { request in
                request.header("Authorization") == "Bearer renewed-token"
                    ? .json(#"{"ok":true}"#)
                    : StubResponse(status: 401, headers: [("WWW-Authenticate", #"Bearer error="invalid_token""#)])
            }
            try await FileCredentialStore(file: home.appendingPathComponent("credentials.json")).save(
                Credential(
                    providerID: "local", label: "work", accessToken: "token-that-fails", refreshToken: "refresh-one",
                    expiresAt: Date().addingTimeInterval(3600)))
            // Without a client id here, no refresh can be tried: the advice is
            // the setting, not a new sign-in (which would need it too).
            var clientless = env(home)
            clientless["AUTHKIT_LOCAL_CLIENT_ID"] = nil
            let unrefreshed = try await CLIProcess.run(
                ["request", "--provider", "local", "--label", "work", "\(server.baseURL)/api/revoked"],
                environment: clientless)
            #expect(
                unrefreshed.status == 3
                    && unrefreshed.stderr.contains(
                        "and no refresh could be tried: local: no client id is configured. Pass --client-id, set AUTHKIT_LOCAL_CLIENT_ID"
                    )
                    && unrefreshed.stderr.contains(
                        "With it, authkit renews the credential and sends the request again.")
                    && !unrefreshed.stderr.contains("sign in again"), "\(unrefreshed.stderr)")
            // A refresh that fails says why beside the 401 (it said only "a refresh could not renew it").
            server.route("POST", "/token") { _ in
                StubResponse(
                    status: 400, headers: [("Content-Type", "application/json")],
                    body: Data(#"{"error":"invalid_grant","error_description":"the grant was revoked"}"#.utf8))
            }
            let refused = try await request("/api/revoked")
            #expect(
                refused.status == 3 && refused.stderr.contains("the refresh that followed failed")
                    && refused.stderr.contains("invalid_grant: the grant was revoked")
                    && refused.stderr.contains("a refresh could not renew it"),
                "\(refused.stderr)")
            // A refresh that works, and an API that refuses the renewed token
            // too: no "could not renew" (it did), and no refresh loop.
            server.route("POST", "/token") { _ in
                .json(
                    #"{"access_token":"also-refused","token_type":"Bearer","expires_in":3600,"refresh_token":"refresh-two"}"#
                )
            }
            let stillRefused = try await request("/api/revoked")
            #expect(
                stillRefused.status == 3
                    && stillRefused.stderr.contains(
                        "and a refresh renewed it just now, but the API refused the new token as well (the account may have lost access to this API): sign in again: authkit authorize --provider local --label work."
                    )
                    && !stillRefused.stderr.contains("could not renew"), "\(stillRefused.stderr)")
            #expect(server.requests(to: "/token").count == 2, "one refresh per 401 invalid_token")
            server.route("POST", "/token") { _ in
                .json(#"{"access_token":"renewed-token","token_type":"Bearer","expires_in":3600}"#)
            }
            let renewed = try await request("/api/revoked")
            #expect(renewed.status == 0 && renewed.stdout.contains(#"{"ok":true}"#), "\(renewed.stderr)")
            let stored = try await FileCredentialStore(file: home.appendingPathComponent("credentials.json"))
                .credential(for: CredentialKey(providerID: "local", label: "work"))
            #expect(stored?.accessToken == "renewed-token")
            let admin = try await request("/api/admin")
            #expect(
                admin.status == 3
                    && admin.stderr.contains(
                        "answered HTTP 403: insufficient_scope. It needs the scope read admin:org: sign in again with it, authkit authorize --provider local --label work --scope read --scope admin:org."
                    ),
                "\(admin.stderr)")
            let odd = try await request("/api/odd")
            #expect(
                odd.stderr.contains("The token lacks a scope this request needs")
                    && !odd.stderr.contains("--scope -rf"), "\(odd.stderr)")
            let many = try await request("/api/many")
            #expect(
                many.status == 3
                    && many.stderr.contains(
                        "It needs 12 scopes (\(twelve)): sign in again with them, authkit authorize --provider local --label work with a --scope for each."
                    )
                    && !many.stderr.contains("--scope scope1"), "\(many.stderr)")
            // A server echoing the token it was sent as a scope: not repeated
            // (its error and description were masked, the scope was not), nor
            // put in a command to paste.
            server.route("GET", "/api/echo") { request in
                let token = (request.header("Authorization") ?? "").split(separator: " ").last.map(String.init) ?? ""
                return StubResponse(
                    status: 403,
                    headers: [("WWW-Authenticate", "Bearer error=\"insufficient_scope\", scope=\"read \(token)\"")])
            }
            let echoed = try await request("/api/echo")
            #expect(
                echoed.status == 3 && echoed.stderr.contains("The token lacks a scope this request needs")
                    && !echoed.stderr.contains("renewed-token"), "\(echoed.stderr)")
            let plain = try await request("/api/plain")
            #expect(plain.status == 3 && plain.stderr.contains("answered HTTP 401.\n"), "\(plain.stderr)")
            #expect(![expired, admin, odd, plain].contains { $0.stderr.contains("token-that-fails") })
            // A DPoP-bound token's refusal is a DPoP challenge (RFC 9449 §7.1): read as one.
            server.route("GET", "/api/bound") { request in
                guard request.header("Authorization") == "DPoP bound-token", request.header("DPoP") != nil else {
                    return StubResponse(status: 400)
                }
                return StubResponse(
                    status: 403,
                    headers: [
                        ("WWW-Authenticate", #"DPoP algs="ES256", error="insufficient_scope", scope="admin:org""#)
                    ])
            }
            var bound = Credential(
                providerID: "local", label: "bound", accessToken: "bound-token", tokenType: "DPoP",
                expiresAt: Date().addingTimeInterval(3600))
            bound.proofKey = ProofKey()
            try await FileCredentialStore(file: home.appendingPathComponent("credentials.json")).save(bound)
            let dpop = try await CLIProcess.run(
                ["request", "--provider", "local", "--label", "bound", "\(server.baseURL)/api/bound"],
                environment: env(home))
            #expect(
                dpop.status == 3
                    && dpop.stderr.contains(
                        "answered HTTP 403: insufficient_scope. It needs the scope admin:org: sign in again with it, authkit authorize --provider local --label bound --scope admin:org."
                    ),
                "\(dpop.stderr)")
        }
    }

    /// A refresh answer kept without an unusable side field said it was
    /// kept "for the rotated refresh token it carries" when it carried none.
    @Test func aKeptRefreshAnswerIsDescribedAsItIs() async throws {
        try await withServer { server in
            server.route("POST", "/token") { _ in
                .json(#"{"access_token":"new-access-token-1111","token_type":"Bearer","expires_in":"soon"}"#)
            }
            let home = try home(server)
            try await storeExpired(in: home)
            let refreshed = try await CLIProcess.run(
                ["token", "refresh", "--provider", "local"], environment: env(home))
            #expect(
                refreshed.status == 0
                    && refreshed.stderr.contains(
                        "It was kept without it (the new token is taken to live as long as the one it replaces), for the new token it carries."
                    )
                    && !refreshed.stderr.contains("rotated"), "\(refreshed.stderr)")
        }
    }

    /// A refresh answer too unusable to keep (an empty access token) that
    /// still carried a new refresh token was reported as any bad answer,
    /// though the provider may have spent the stored refresh token.
    @Test func anUnusableRefreshAnswerWithANewRefreshTokenSaysSo() async throws {
        try await withServer { server in
            server.route("POST", "/token") { _ in
                .json(#"{"access_token":"","token_type":"Bearer","refresh_token":"refresh-new-9999"}"#)
            }
            let home = try home(server)
            try await storeExpired(in: home)
            let refreshed = try await CLIProcess.run(
                ["token", "refresh", "--provider", "local"], environment: env(home))
            #expect(
                refreshed.status == 3 && refreshed.stderr.contains("got an empty one")
                    && refreshed.stderr.contains(
                        "it carried a new refresh token, so the stored one may have been spent"),
                "\(refreshed.stderr)")
            #expect(!refreshed.stderr.contains("refresh-new-9999"))
        }
    }

    @Test func tokenRefreshAndRevoke() async throws {
        try await withServer { server in
            routes(server)
            let home = try home(server)
            try await storeExpired(in: home)
            let refreshed = try await CLIProcess.run(
                ["token", "refresh", "--provider", "local"], environment: env(home))
            #expect(refreshed.status == 0, "\(refreshed.stderr)")
            #expect(!refreshed.stdout.contains("new-access-token-1111")) // masked
            #expect(refreshed.stdout.contains("••••1111"))

            let revoked = try await CLIProcess.run(["token", "revoke", "--provider", "local"], environment: env(home))
            #expect(revoked.status == 0, "\(revoked.stderr)")
            // The refresh token first: revoking the access token alone (one
            // that may have expired, which a server answers 200 for) left the
            // refresh token valid at the provider after "Revoked".
            let requests = server.requests(to: "/revoke")
            #expect(
                requests.map(\.bodyText) == [
                    "token=refresh-two&token_type_hint=refresh_token",
                    "token=new-access-token-1111&token_type_hint=access_token",
                ])
            #expect(
                requests.allSatisfy {
                    $0.header("Authorization") == "Basic " + Data("life-client:life-secret".utf8).base64EncodedString()
                })
            #expect(
                try await FileCredentialStore(file: home.appendingPathComponent("credentials.json")).allCredentials()
                    .isEmpty)
        }
    }

    /// A refresh whose new token is of a type AuthKit cannot send keeps it
    /// (its rotated refresh token must not be lost) but says so at once,
    /// naming the type and the descriptor setting. Before, `token refresh`
    /// printed the new token as a success and only the next request failed.
    @Test func aRefreshToATokenAuthKitCannotSendSaysSo() async throws {
        try await withServer { server in
            server.route("POST", "/token") { _ in
                .json(
                    #"{"access_token":"mac-access-token-2222","token_type":"mac","expires_in":3600,"refresh_token":"refresh-two"}"#
                )
            }
            let home = try home(server)
            try await storeExpired(in: home)
            let refreshed = try await CLIProcess.run(
                ["token", "refresh", "--provider", "local"], environment: env(home))
            #expect(refreshed.status == 0, "\(refreshed.stderr)")
            #expect(
                refreshed.stderr.contains("its new token is of type 'mac', which AuthKit cannot send")
                    && refreshed.stderr.contains("requests with it will fail")
                    && refreshed.stderr.contains("token.response.assumeBearer"), "\(refreshed.stderr)")
            #expect(!refreshed.stderr.contains("mac-access-token-2222") && !refreshed.stderr.contains("refresh-two"))
            let stored = try await FileCredentialStore(file: home.appendingPathComponent("credentials.json"))
                .credential(for: CredentialKey(providerID: "local"))
            #expect(stored?.refreshToken == "refresh-two")
        }
    }

    /// A sign-in that ends while a refresh of the same account is under way
    /// in another process stays stored: the refresh had read the earlier
    /// credential, and saved its renewal over the new sign-in when its slow
    /// answer came, so every later request went to the earlier account.
    @Test func aSignInDuringARefreshIsNotOverwrittenByIt() async throws {
        try await withServer { server in
            let refreshes = Recorder<Int>()
            server.route("POST", "/token") { request in
                let body = Dictionary((FormURLEncoding.decode(request.bodyText) ?? []), uniquingKeysWith: { a, _ in a })
                guard body["grant_type"] == "refresh_token" else {
                    return .json(
                        #"{"access_token":"second-sign-in-token","token_type":"Bearer","expires_in":3600,"refresh_token":"second-refresh"}"#
                    )
                }
                refreshes.append(1)
                return StubResponse.json(
                    #"{"access_token":"earlier-account-renewed","token_type":"Bearer","expires_in":3600,"refresh_token":"refresh-two"}"#
                )
                .delayed(by: .seconds(3))
            }
            let home = try home(server)
            try await storeExpired(in: home)
            let refresh = Task {
                try await CLIProcess.run(["token", "refresh", "--provider", "local"], environment: env(home))
            }
            let waitUntil = Date().addingTimeInterval(20)
            while refreshes.all.isEmpty, Date() < waitUntil { try await Task.sleep(for: .milliseconds(20)) }
            let signIn = try await CLIProcess.run(
                ["authorize", "--provider", "local", "--manual"], environment: env(home), timeout: 30,
                respond: { stderr in
                    guard stderr.contains("Then paste"), let start = stderr.range(of: "\(server.baseURL)/authorize?"),
                        let url = URLComponents(
                            string: String(stderr[start.lowerBound...].prefix { !$0.isWhitespace })),
                        let state = url.queryItems?.first(where: { $0.name == "state" })?.value,
                        let redirect = url.queryItems?.first(where: { $0.name == "redirect_uri" })?.value
                    else { return nil }
                    return "\(redirect)?code=second-code&state=\(state)"
                })
            #expect(signIn.status == 0, "\(signIn.stderr)")
            #expect(try await refresh.value.status == 0)
            let stored = try await FileCredentialStore(file: home.appendingPathComponent("credentials.json"))
                .credential(for: CredentialKey(providerID: "local"))
            #expect(stored?.accessToken == "second-sign-in-token", "\(String(describing: stored))")
        }
    }

    #if os(Linux) // mount(8) and umount2(2)
        /// Runs `body` with the test server (routed as ``routes(_:)``) and an
        /// `AUTHKIT_HOME` on a tmpfs of 8 MiB of its own, unmounted after,
        /// which holds the `local` descriptor and an expired credential.
        func withSmallDisk(_ body: (TestHTTPServer, URL) async throws -> Void) async throws {
            try await withServer { server in
                routes(server)
                let home = try home(server)
                let disk = home.appendingPathComponent("disk")
                try FileManager.default.createDirectory(at: disk, withIntermediateDirectories: true)
                let mount = try await CLIProcess.run(
                    ["-t", "tmpfs", "-o", "size=8m,mode=700", "tmpfs", disk.path], environment: [:],
                    launcher: ["/bin/mount"], bareLauncher: true)
                try #require(mount.status == 0, "mount: \(mount.stderr)")
                defer { _ = umount2(disk.path, Int32(MNT_DETACH)) }
                try FileManager.default.copyItem(
                    at: home.appendingPathComponent("providers"), to: disk.appendingPathComponent("providers"))
                try await storeExpired(in: disk)
                try await body(server, disk)
            }
        }

        /// A store that cannot be saved to (here a full disk) is found before
        /// the provider is asked: a refresh spent the refresh token and only
        /// then found its renewal could not be kept, so the grant was lost; and
        /// `--due` went on to do so for every stored credential. Needs root, to
        /// mount a small file system.
        @Test(
            .enabled(
                if: getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/bin/mount"),
                "mounting a small file system needs root"))
        func aFullDiskIsFoundBeforeARefreshSpendsItsToken() async throws {
            try await withSmallDisk { server, disk in
                let store = FileCredentialStore(file: disk.appendingPathComponent("credentials.json"))
                try await store.save(
                    Credential(
                        providerID: "local", label: "second", accessToken: "old-access-token-0001",
                        refreshToken: "refresh-second", expiresAt: Date().addingTimeInterval(-60)))
                // Fill the disk: less room is left than a new copy of the file needs.
                let filler = disk.appendingPathComponent("filler")
                _ = FileManager.default.createFile(atPath: filler.path, contents: nil)
                let handle = try FileHandle(forWritingTo: filler)
                while (try? handle.write(contentsOf: Data(count: 4096))) != nil {}
                try? handle.close()

                let environment = env(disk)
                let one = try await CLIProcess.run(
                    ["token", "refresh", "--provider", "local"], environment: environment)
                #expect(
                    one.status == 74 && one.stderr.contains("the disk holding it is full"),
                    "status \(one.status): \(one.stderr)")
                let due = try await CLIProcess.run(["token", "refresh", "--due"], environment: environment)
                #expect(
                    due.status == 74 && due.stdout.contains("the disk holding it is full")
                        && due.stdout.contains("not tried: the store cannot be saved to"),
                    "status \(due.status): \(due.stdout) \(due.stderr)")
                #expect(
                    server.requests(to: "/token").isEmpty, "a refresh was sent though its renewal could not be saved")
                #expect(
                    try await store.credential(for: CredentialKey(providerID: "local"))?.refreshToken == "refresh-one")
                // A save that fails all the same (the library's own, unchecked)
                // names the store and the system's reason, and leaves the file as it was.
                let before = try Data(contentsOf: disk.appendingPathComponent("credentials.json"))
                await #expect {
                    try await store.save(
                        Credential(
                            providerID: "local", label: "third", accessToken: "a",
                            rawFields: ["big": .string(String(repeating: "x", count: 200_000))]))
                } throws: { error in
                    "\(error)".contains(
                        "Credential store \(disk.path)/credentials.json: could not be saved: writing its new copy failed (No space left on device). The file was left as it was."
                    )
                }
                #expect(try Data(contentsOf: disk.appendingPathComponent("credentials.json")) == before)
                #expect(
                    try FileManager.default.contentsOfDirectory(atPath: disk.path).filter { $0.hasSuffix(".tmp") }
                        .isEmpty)

                try FileManager.default.removeItem(at: filler)
                let freed = try await CLIProcess.run(
                    ["token", "refresh", "--provider", "local"], environment: environment)
                #expect(freed.status == 0, "\(freed.stderr)")
                #expect(
                    try await store.credential(for: CredentialKey(providerID: "local"))?.refreshToken == "refresh-two")
            }
        }

        /// A store on a read-only mount (secrets in CI) is read as it is: every
        /// command failed there, `token show` and `request` with a valid token
        /// too, since the lock file could not be opened for writing. What must
        /// write (a refresh) says so before the provider is asked. Needs root.
        @Test(
            .enabled(
                if: getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/bin/mount"),
                "mounting a file system needs root"))
        func aReadOnlyStoreIsReadAsItIs() async throws {
            try await withSmallDisk { server, disk in
                try await FileCredentialStore(file: disk.appendingPathComponent("credentials.json")).save(
                    Credential(
                        providerID: "local", label: "valid", accessToken: "new-access-token-1111",
                        expiresAt: Date().addingTimeInterval(3600)))
                // As a volume is mounted: without the lock file a save leaves behind,
                // and the file readable by others, as a secret mounted in CI often is.
                try FileManager.default.removeItem(atPath: disk.appendingPathComponent("credentials.json.lock").path)
                chmod(disk.appendingPathComponent("credentials.json").path, 0o644)
                let remount = try await CLIProcess.run(
                    ["-o", "remount,ro", disk.path], environment: [:], launcher: ["/bin/mount"], bareLauncher: true)
                try #require(remount.status == 0, "remount: \(remount.stderr)")

                let environment = env(disk)
                let list = try await CLIProcess.run(["token", "list"], environment: environment)
                #expect(list.status == 0 && list.stdout.contains("local (valid)"), "\(list.status): \(list.stderr)")
                // Warned about as on a writable disk (the read-only path skipped the check).
                // With advice that can be followed: a chmod on a read-only mount fails.
                #expect(
                    list.stderr.contains("is accessible by other users (mode 644) and read-only here")
                        && !list.stderr.contains("run: chmod"), "\(list.stderr)")
                let field = try await CLIProcess.run(
                    ["token", "show", "--provider", "local", "--label", "valid", "--field", "access_token"],
                    environment: environment)
                #expect(
                    field.status == 0 && field.stdout == "new-access-token-1111\n", "\(field.status): \(field.stderr)")
                let request = try await CLIProcess.run(
                    ["request", "--provider", "local", "--label", "valid", "\(server.baseURL)/api/me"],
                    environment: environment)
                #expect(
                    request.status == 0 && request.stdout.contains(#"{"me":"ok"}"#),
                    "\(request.status): \(request.stderr)")
                let refresh = try await CLIProcess.run(
                    ["token", "refresh", "--provider", "local"], environment: environment)
                // Exit 74 (could not be written) naming the directory, as README's table says; the
                // refresh lock's file, which cannot be created there, was reported as a bad file (65).
                #expect(
                    refresh.status == 74
                        && refresh.stderr.contains(
                            "\(disk.path): could not be saved: this directory is not writable (Read-only file system)"),
                    "\(refresh.status): \(refresh.stderr)")
                let delete = try await CLIProcess.run(
                    ["token", "delete", "--provider", "local", "--label", "valid"], environment: environment)
                #expect(
                    delete.status == 74 && delete.stderr.contains("Read-only file system"),
                    "\(delete.status): \(delete.stderr)")
                let signIn = try await CLIProcess.run(
                    ["authorize", "--provider", "local", "--manual"], environment: environment)
                #expect(
                    signIn.status == 74
                        && signIn.stderr.contains("this directory is not writable (Read-only file system)")
                        && !signIn.stderr.contains("/authorize?"), "\(signIn.status): \(signIn.stderr)")
                #expect(
                    server.requests(to: "/token").isEmpty, "a refresh was sent though its renewal could not be saved")
            }
        }
    #endif

    /// A revocation that fails keeps the credential (it is deleted only once
    /// the provider confirms), and the error says so and how to delete it
    /// anyway: the provider may be gone for good. The same for a provider
    /// whose descriptor names no revocation endpoint.
    @Test func aFailedRevocationSaysTheCredentialIsKeptAndHowToDeleteIt() async throws {
        try await withServer { server in
            server.route("POST", "/revoke") { _ in
                StubResponse(status: 503, headers: [("Content-Type", "text/html")], body: Data("<h1>down</h1>".utf8))
            }
            let home = try home(server)
            try await storeExpired(in: home)
            let store = FileCredentialStore(file: home.appendingPathComponent("credentials.json"))
            let failed = try await CLIProcess.run(["token", "revoke", "--provider", "local"], environment: env(home))
            #expect(failed.status == 3, "\(failed.stderr)")
            #expect(
                failed.stderr.contains("[HTTP 503].")
                    && failed.stderr.contains(
                        "The credential is still stored here; 'authkit token delete --provider local' deletes it without telling the provider."
                    ), "\(failed.stderr)")
            #expect(try await store.allCredentials().count == 1)

            // A provider file that now sends revocations elsewhere: not "Sign in again" (someone getting rid of the credential).
            var moved = try #require(try await store.allCredentials().first)
            moved.endpointOrigins = ["https://as.example"]
            try await store.save(moved)
            let elsewhere = try await CLIProcess.run(
                ["token", "revoke", "--provider", "local"], environment: env(home))
            #expect(
                elsewhere.status != 0 && elsewhere.stderr.contains("where its provider file now sends revocations")
                    && elsewhere.stderr.contains("'authkit token delete --provider local' deletes it")
                    && !elsewhere.stderr.contains("Sign in again"),
                "\(elsewhere.stderr)")
            // The two calls of the 503 above (the refresh token, refused; the access token, still tried); none since.
            #expect(server.requests(to: "/revoke").count == 2)

            // A provider that cannot revoke: the command to type, not "delete the credential locally".
            let noRevocation = home.appendingPathComponent("providers/local.json")
            let text = try String(contentsOf: noRevocation, encoding: .utf8)
            try text.replacingOccurrences(
                of: #""revocation": {"url": "\#(server.baseURL)/revoke"}"#,
                with: #""documentation": "https://as.example/docs""#
            )
            .write(to: noRevocation, atomically: true, encoding: .utf8)
            let unsupported = try await CLIProcess.run(
                ["token", "revoke", "--provider", "local"], environment: env(home))
            #expect(
                unsupported.status == 1
                    && unsupported.stderr.contains(
                        "names no way to revoke a token. Delete it here with 'authkit token delete --provider local'"),
                "\(unsupported.stderr)")
            #expect(try await store.allCredentials().count == 1)
            let deleted = try await CLIProcess.run(["token", "delete", "--provider", "local"], environment: env(home))
            #expect(deleted.status == 0, "\(deleted.stderr)")
            #expect(try await store.allCredentials().isEmpty)
        }
    }

    /// Ctrl-C at any moment of the start: while libcurl loads on a thread of
    /// its own, before the handler is in place, while the listener starts.
    /// authkit ends with status 130, or by SIGINT itself before its handler is
    /// installed; never by a crash, never by waiting on. (Before the fix, 3 of
    /// 200 such interrupts of a release build crashed with SIGSEGV, exiting
    /// while libcurl loaded, and 2 were lost, authkit waiting on.)
    @Test func ctrlCAtAnyMomentEndsTheProcess() async throws {
        try await withServer { server in
            let home = try home(server)
            for step in 0..<20 {
                let delay = Double(step) * 0.015 // 0–285 ms: from exec to waiting, in a debug build
                let result = try await CLIProcess.run(
                    ["authorize", "--provider", "local", "--no-browser"], environment: env(home),
                    timeout: 30, interruptAfter: delay)
                let ended = result.signal.map { $0 == SIGINT } ?? (result.status == 130)
                #expect(
                    ended,
                    "after \(delay) s: status \(result.status), signal \(result.signal.map { String($0) } ?? "none"): \(result.stderr)"
                )
                #expect(!FileManager.default.fileExists(atPath: home.appendingPathComponent("credentials.json").path))
            }
        }
    }

    @Test func ctrlCEndsTheWaitCleanly() async throws {
        try await withServer { server in
            let home = try home(server)
            let result = try await CLIProcess.run(
                ["authorize", "--provider", "local", "--no-browser"], environment: env(home),
                interruptWhen: { $0.contains("Waiting for you to approve") })
            // Exit status 130 of its own, not ended by the signal (which also reads 130).
            #expect(result.status == 130 && result.signal == nil, "\(result.stderr)")
            #expect(result.stderr.contains("Cancelled; nothing was stored."))
            #expect(!FileManager.default.fileExists(atPath: home.appendingPathComponent("credentials.json").path))
        }
    }

    @Test func signReproducesTwittersDocumentedExample() async throws {
        let example = [
            "https://api.twitter.com/1.1/statuses/update.json?include_entities=true",
            "-d", "status=Hello%20Ladies%20%2B%20Gentlemen%2C%20a%20signed%20OAuth%20request%21",
            "--consumer-key", "xvz1evFS4wEEPTGEFPHBog", "--consumer-secret",
            "kAcSOqF21Fu85e7zjz7ZN2U4ZRhfV3WpwPAoE3Z7kBw",
            "--token", "370773112-GmHxMAgYyLbNEtIKZeRNFsMKPR9EyMZeS9weJAEb", "--token-secret",
            "LswwdoUaIvS8ltyTt5jkRh4J50vUPVVHtR2YPi5kE",
            "--nonce", "kYjzVBB8Y0ZFabxSWbWovY3uYSQ2pTgmZeNu2VS4cg", "--timestamp", "1318622958",
        ]
        let result = try await CLIProcess.run(["sign", "-X", "POST"] + example, environment: [:])
        #expect(result.status == 0)
        #expect(result.stdout.hasPrefix("Authorization: OAuth "))
        #expect(result.stdout.contains(#"oauth_signature="hCtSmYh%2BiHYCEqBWrE7C7hYmtUk%3D""#))
        // -d without -X signs POST, the method `curl -d` sends: it signed GET,
        // and the header failed at the server.
        let implied = try await CLIProcess.run(["sign"] + example, environment: [:])
        #expect(implied.status == 0 && implied.stdout == result.stdout, "\(implied.stdout)")
        let bad = try await CLIProcess.run(
            [
                "sign", "https://x.example/", "--consumer-key", "k", "--consumer-secret", "s", "--signature-method",
                "RSA-SHA1",
            ], environment: [:])
        #expect(bad.status == 64)
        #expect(!bad.stderr.contains("\"s\""))
        // A method no server would verify a signature over: refused, shown escaped.
        for method in ["", "G\nET"] {
            let odd = try await CLIProcess.run(
                ["sign", "-X", method, "https://x.example/", "--consumer-key", "k", "--consumer-secret", "s"],
                environment: [:])
            #expect(
                odd.status == 64 && odd.stderr.contains("-X takes an HTTP method") && odd.stdout.isEmpty,
                "\(method.debugDescription): \(odd.stderr)")
            #expect(!odd.stderr.contains("G\nET"), "the newline reached the terminal")
        }
        // CONNECT asks a proxy for a tunnel: request failed with "the request has no
        // absolute URL" (exit 4), sign and token header printed a header. Refused in
        // each, as a usage error, before anything is read or sent.
        let home = try CLIProcess.home("authkit-connect")
        defer { try? FileManager.default.removeItem(at: home) }
        for command in [
            ["sign", "https://x.example/", "--consumer-key", "k", "--consumer-secret", "s"],
            ["request", "--provider", "qiita", "https://x.example/"],
            ["token", "header", "--provider", "qiita", "https://x.example/"],
        ] {
            let connect = try await CLIProcess.run(
                command + ["-X", "connect"], environment: ["AUTHKIT_HOME": home.path])
            #expect(
                connect.status == 64 && connect.stderr.contains("-X CONNECT asks a proxy for a tunnel")
                    && connect.stdout.isEmpty,
                "\(command[0]): \(connect.status) \(connect.stderr)")
        }

        // The secrets from the environment, off the command line (which other
        // users see in the process list): the same header. A flag still wins.
        let secrets = [
            "AUTHKIT_CONSUMER_SECRET": "kAcSOqF21Fu85e7zjz7ZN2U4ZRhfV3WpwPAoE3Z7kBw",
            "AUTHKIT_TOKEN_SECRET": "LswwdoUaIvS8ltyTt5jkRh4J50vUPVVHtR2YPi5kE",
        ]
        let withoutSecrets = [
            "sign", "-X", "POST", "https://api.twitter.com/1.1/statuses/update.json?include_entities=true",
            "-d", "status=Hello%20Ladies%20%2B%20Gentlemen%2C%20a%20signed%20OAuth%20request%21",
            "--consumer-key", "xvz1evFS4wEEPTGEFPHBog", "--token", "370773112-GmHxMAgYyLbNEtIKZeRNFsMKPR9EyMZeS9weJAEb",
            "--nonce", "kYjzVBB8Y0ZFabxSWbWovY3uYSQ2pTgmZeNu2VS4cg", "--timestamp", "1318622958",
        ]
        let fromEnvironment = try await CLIProcess.run(withoutSecrets, environment: secrets)
        #expect(fromEnvironment.status == 0 && fromEnvironment.stdout == result.stdout, "\(fromEnvironment.stderr)")
        let flagWins = try await CLIProcess.run(
            withoutSecrets + ["--consumer-secret", "another"], environment: secrets)
        #expect(
            flagWins.status == 0 && flagWins.stdout.hasPrefix("Authorization: OAuth ")
                && flagWins.stdout != result.stdout)
        let none = try await CLIProcess.run(withoutSecrets, environment: [:])
        #expect(
            none.status == 64 && none.stderr.contains("No consumer secret: set AUTHKIT_CONSUMER_SECRET"),
            "\(none.stderr)")
    }

    @Test func redirectSchemeTheProviderRefusesIsAUsageError() async throws {
        let home = TemporaryDirectory.url("authkit-cli-ig")
        let result = try await CLIProcess.run(
            ["authorize", "--provider", "instagram", "--manual", "--redirect-uri", "http://127.0.0.1:9000/cb"],
            environment: [
                "AUTHKIT_HOME": home.path, "AUTHKIT_INSTAGRAM_CLIENT_ID": "x", "AUTHKIT_INSTAGRAM_CLIENT_SECRET": "s",
            ])
        #expect(result.status == 64)
        #expect(result.stderr.contains("only accepts https"))
    }
}
