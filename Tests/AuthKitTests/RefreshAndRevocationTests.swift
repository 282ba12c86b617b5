import AuthKitTestSupport
import Foundation
import HTTPTypes
import Testing

@testable import AuthKit

@Suite struct RefreshTests {
    func descriptor(_ server: TestHTTPServer, revocation: DescriptorFile.Template? = nil) -> ProviderDescriptor {
        testDescriptor(
            id: "rotating", name: "Rotating", protocol: .oauth2,
            authorization: DescriptorFile.Authorization(url: "\(server.baseURL)/authorize"),
            token: DescriptorFile.Token(url: "\(server.baseURL)/token", clientAuthentication: .post), pkce: .s256,
            revocation: revocation)
    }

    let expired = Credential(
        providerID: "rotating", label: "me", accessToken: "old-access", refreshToken: "refresh-1",
        expiresAt: fixedNow.addingTimeInterval(-10), scopes: ["read"], obtainedAt: fixedNow.addingTimeInterval(-3600))

    /// A token a descriptor puts in an endpoint's path (Qiita revokes at
    /// `/access_tokens/{access_token}`) never reaches an error: with the
    /// network down, "The request to …/access_tokens/<token> failed" was
    /// printed (issue 44, item 2). The error names the template.
    @Test func aNetworkErrorNamesTheTemplateNotTheRenderedURL() async throws {
        try await withServer { server in
            let closed = try RawHTTP.freePort() // nothing listens there
            let template = "http://127.0.0.1:\(closed)/api/v2/access_tokens/{access_token}"
            let client = try OAuth2Client(
                descriptor: descriptor(server, revocation: .init(url: template, method: "DELETE")),
                settings: ClientSettings(clientID: "c", clientSecret: "s"), now: { fixedNow })
            let error = await #expect(throws: AuthKitError.self) { try await client.revoke(expired) }
            let text = "\(String(describing: error))"
            #expect(text.contains("/api/v2/access_tokens/{access_token}") && !text.contains("old-access"), "\(text)")
            guard case .network(_, .connectionFailed)? = error?.reason else {
                Issue.record("not a refused connection: \(text)")
                return
            }
        }
    }

    @Test func concurrentRefreshesShareOneRequest() async throws {
        try await withServer { server in
            // The first request is held until all eight callers wait for it
            // (a fixed sleep let a late caller, on a loaded machine, start a
            // second refresh after the first had ended).
            let release = DispatchSemaphore(value: 0)
            server.route("POST", "/token") { _ in
                _ = release.wait(timeout: .now() + 30)
                return .json(
                    #"{"access_token":"new-access","token_type":"Bearer","expires_in":3600,"refresh_token":"refresh-2"}"#
                )
            }
            let client = try OAuth2Client(
                descriptor: descriptor(server), settings: ClientSettings(clientID: "c", clientSecret: "s"),
                now: { fixedNow })
            let expired = self.expired
            let flight = RefreshCoordinator.key(for: expired, tokenEndpoint: "\(server.baseURL)/token", clientID: "c")
            let results = try await withThrowingTaskGroup(of: Credential.self) { group in
                for _ in 0..<8 { group.addTask { try await client.refresh(expired) } }
                try await until { RefreshCoordinator.shared.waiterCount(for: flight) == 8 }
                release.signal()
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(server.requests(to: "/token").count == 1)
            #expect(results.allSatisfy { $0.accessToken == "new-access" && $0.refreshToken == "refresh-2" })

            let body = try formObject(try #require(server.requests.first).bodyText)
            #expect(
                body == [
                    "grant_type": "refresh_token", "refresh_token": "refresh-1", "client_id": "c", "client_secret": "s",
                ])
        }
    }

    /// What merges refreshes compares its fields byte for byte: tokens,
    /// client ids and labels that Swift's `==` takes for one (canonically
    /// equivalent: `é` and `e` + U+0301) are other grants' refreshes.
    @Test func refreshesAreMergedByTheExactBytes() {
        func key(token: String = "t", clientID: String = "c", label: String? = nil) -> RefreshCoordinator.Key {
            RefreshCoordinator.Key(
                tokenEndpoint: "https://p.example/token", clientID: clientID, providerID: "p", label: label,
                token: token)
        }
        #expect(key(token: "r\u{E9}") == key(token: "r\u{E9}"))
        #expect(key(token: "r\u{E9}") != key(token: "re\u{301}"))
        #expect(key(clientID: "\u{E9}") != key(clientID: "e\u{301}"))
        #expect(key(label: "\u{E9}") != key(label: "e\u{301}"))
        #expect(key(label: nil) == key(label: nil) && key(label: "a") != key(label: nil))
    }

    /// Two clients built from the same descriptor and settings (a web
    /// backend's handlers each make one) refreshing one credential at once
    /// send one request: each merged only its own refreshes, so the
    /// rotating refresh token went twice, and a provider's reuse detection
    /// revokes the grant for that (RFC 9700 §4.14.2). A client of another
    /// client id is another grant, and is not merged with it.
    @Test func clientsOfOneGrantShareOneRefresh() async throws {
        let transport = HeldTransport(
            #"{"access_token":"new-access","token_type":"Bearer","expires_in":3600,"refresh_token":"refresh-2"}"#)
        let descriptor = testDescriptor(
            id: "rotating", protocol: .oauth2, authorization: .init(url: "https://shared.example/authorize"),
            token: .init(url: "https://shared.example/token", clientAuthentication: .post))
        func client(_ id: String) throws -> OAuth2Client {
            try OAuth2Client(
                descriptor: descriptor, settings: ClientSettings(clientID: id, clientSecret: "s"),
                httpClient: transport, now: { fixedNow })
        }
        let (first, second, other) = (try client("c"), try client("c"), try client("another"))
        // This test's own refresh token: the coordinator is the process's.
        var credential = expired
        credential.refreshToken = "refresh-\(UUID().uuidString)"
        let merged = RefreshCoordinator.key(
            for: credential, tokenEndpoint: "https://shared.example/token", clientID: "c")

        let one = Task { [credential] in try await first.refresh(credential) }
        try await until { transport.count == 1 }
        let two = Task { [credential] in try await second.refresh(credential) }
        try await until { RefreshCoordinator.shared.waiterCount(for: merged) == 2 || transport.count > 1 }
        let three = Task { [credential] in try await other.refresh(credential) }
        try await until { transport.count >= 2 }
        transport.release()
        let results = [try await one.value, try await two.value, try await three.value]
        #expect(transport.count == 2, "one request for the clients of one grant, one for the other's")
        #expect(results.allSatisfy { $0.accessToken == "new-access" && $0.refreshToken == "refresh-2" })
    }

    /// A source over one credential of a provider that refreshes two hours
    /// ahead of time: due from the start and still working (it expires in
    /// ten minutes from `now`), over `transport` for the token endpoint and
    /// the API; with `fixedClock`, the client's clock is `now`.
    func dueAheadOfTime(
        label: String, transport: some HTTPClient, now: Date = Date(), fixedClock: Bool = false
    ) throws -> (source: CredentialSource, store: InMemoryCredentialStore, credential: Credential) {
        var descriptor = testDescriptor(
            id: "rotating", protocol: .oauth2, authorization: .init(url: "https://ahead.example/authorize"),
            token: .init(url: "https://ahead.example/token", clientAuthentication: .post))
        descriptor.refreshPolicy = RefreshPolicy(ahead: 7200)
        let start = now
        let clock: @Sendable () -> Date
        if fixedClock { clock = { start } } else { clock = { Date() } }
        let client = try OAuth2Client(
            descriptor: descriptor, settings: ClientSettings(clientID: "c", clientSecret: "s"), httpClient: transport,
            now: clock)
        let credential = Credential(
            providerID: "rotating", label: label, accessToken: "old-access",
            refreshToken: "refresh-\(UUID().uuidString)", expiresAt: now.addingTimeInterval(600),
            obtainedAt: now.addingTimeInterval(-3600))
        let store = InMemoryCredentialStore([credential])
        let source = CredentialSource(
            authenticator: client, store: store, key: credential.key, httpClient: transport)
        return (source, store, credential)
    }

    /// A source over one credential that expired ten seconds ago (a refresh
    /// it must have), over `transport` for the token endpoint and the API.
    func expired(label: String, transport: some HTTPClient) throws -> (
        source: CredentialSource, store: InMemoryCredentialStore, credential: Credential
    ) {
        let client = try OAuth2Client(
            descriptor: testDescriptor(
                id: "rotating", protocol: .oauth2, authorization: .init(url: "https://due.example/authorize"),
                token: .init(url: "https://due.example/token", clientAuthentication: .post)),
            settings: ClientSettings(clientID: "c", clientSecret: "s"), httpClient: transport)
        let credential = Credential(
            providerID: "rotating", label: label, accessToken: "old-access", refreshToken: "refresh-1",
            expiresAt: Date().addingTimeInterval(-10))
        let store = InMemoryCredentialStore([credential])
        return (
            CredentialSource(authenticator: client, store: store, key: credential.key, httpClient: transport), store,
            credential
        )
    }

    /// Expects a GET of `url` through `source`, given `deadline`, to fail
    /// with that request's own timeout (not a token request's, nor a store's).
    func expectItsTimeout(
        _ source: CredentialSource, _ url: String, within deadline: Duration,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async {
        await #expect(sourceLocation: sourceLocation) {
            _ = try await source.send(HTTPRequest(method: .get, url: URL(string: url)!), deadline: deadline)
        } throws: { error in
            guard case .network(let named, let reason)? = error.authKitReason else { return false }
            return named == url && reason.kind == .timedOut && reason.detail.contains("within \(deadline.spoken)")
        }
    }

    /// Takes `key`'s refresh lock in `store` from a task of its own, holds
    /// it for `duration`, runs `then` under it and lets it go; returns once
    /// the lock is held.
    func holdingTheLock(
        of key: CredentialKey, in store: InMemoryCredentialStore, for duration: Duration,
        then: @escaping @Sendable () async throws -> Void = {}
    ) async throws -> Task<Void, any Error> {
        let locked = LockedValue(false)
        let holder = Task {
            try await store.withRefreshLock(for: key, timeout: .seconds(30)) {
                locked.withLock { $0 = true }
                try await Task.sleep(for: duration)
                try await then()
            }
        }
        try await until { locked.current }
        return holder
    }

    /// Waits until `condition` holds, at most 30 s (then fails the test).
    func until(_ condition: () -> Bool) async throws {
        let end = ContinuousClock.now.advanced(by: .seconds(30))
        while !condition(), ContinuousClock.now < end { try await Task.sleep(for: .milliseconds(5)) }
        try #require(condition(), "did not come to pass within 30 s")
    }

    /// A token endpoint on `server` answering `new-access-1`, `-2`, … at
    /// each refresh; and a resource server's 401 `invalid_token`.
    func issuingNewAccessTokens(on server: TestHTTPServer) -> StubResponse {
        let issued = Recorder<Int>()
        server.route("POST", "/token") { _ in
            issued.append(1)
            return .json(
                #"{"access_token":"new-access-\#(issued.all.count)","token_type":"Bearer","expires_in":3600}"#)
        }
        return StubResponse.json(
            #"{"error":"invalid_token"}"#, status: 401,
            headers: [("WWW-Authenticate", #"Bearer error="invalid_token""#)])
    }

    /// RFC 6750 §3.1: a resource server's `invalid_token` (a token revoked, or
    /// dead before its expiry) is answered once: the credential is refreshed,
    /// saved, and the request, body and all, sent again. A second refusal,
    /// or a credential that cannot be renewed, gets the 401 back as it came.
    @Test func anInvalidTokenIsRefreshedAndTheRequestSentAgainOnce() async throws {
        try await withServer { server in
            let refused = issuingNewAccessTokens(on: server)
            server.route("POST", "/api") { request in
                request.header("Authorization") == "Bearer new-access-1" ? .json(#"{"ok":true}"#) : refused
            }
            let client = try OAuth2Client(
                descriptor: descriptor(server), settings: ClientSettings(clientID: "c", clientSecret: "s"))
            var live = expired
            live.expiresAt = Date().addingTimeInterval(3600) // not due: only the 401 says it is dead
            let store = InMemoryCredentialStore([live])
            let source = CredentialSource(authenticator: client, store: store, key: live.key)
            let api = try #require(URL(string: "\(server.baseURL)/api"))
            func send() async throws -> (Int, String) {
                let (response, body) = try await source.send(
                    HTTPRequest(method: .post, url: api), body: Data("x=1".utf8))
                var text = Data()
                for try await chunk in body { text += chunk }
                return (response.status.code, String(decoding: text, as: UTF8.self))
            }
            #expect(try await send() == (200, #"{"ok":true}"#))
            #expect(
                server.requests(to: "/api").map(\.bodyText) == ["x=1", "x=1"]
                    && server.requests(to: "/token").count == 1)
            #expect(await store.credential(for: live.key)?.accessToken == "new-access-1")

            // Refused again after a refresh: once only, and the 401 comes back.
            server.route("POST", "/api") { _ in refused }
            #expect(try await send() == (401, #"{"error":"invalid_token"}"#))
            #expect(server.requests(to: "/api").count == 4 && server.requests(to: "/token").count == 2)
            // That renewed token refused again: no further refresh for it (an
            // API that refuses every token cost one refresh per request).
            #expect(try await send() == (401, #"{"error":"invalid_token"}"#))
            #expect(server.requests(to: "/api").count == 5 && server.requests(to: "/token").count == 2)

            // Nothing to refresh it with: the 401 as it came, no refresh tried.
            var bare = live
            bare.refreshToken = nil
            await store.save(bare)
            #expect(try await send() == (401, #"{"error":"invalid_token"}"#))
            #expect(server.requests(to: "/api").count == 6 && server.requests(to: "/token").count == 2)
        }
    }

    /// After a redirect, the request has been carried out by the hop that
    /// answered it: a POST answered 303 whose page then said
    /// `invalid_token` was sent again after the refresh (two items created).
    /// Only a GET or HEAD without a body is sent again from the start.
    @Test func aRequestRedirectedBeforeItsRefusalIsNotSentAgainUnlessItIsAGet() async throws {
        try await withServer { server in
            let refused = issuingNewAccessTokens(on: server)
            server.route("POST", "/items") { _ in .redirect(303, to: "/items/42") }
            server.route("GET", "/items/42") { request in
                request.header("Authorization") == "Bearer new-access-1" ? .json(#"{"id":42}"#) : refused
            }
            server.route("GET", "/moved") { _ in .redirect(302, to: "/items/42") }
            let client = try OAuth2Client(
                descriptor: descriptor(server), settings: ClientSettings(clientID: "c", clientSecret: "s"))
            var live = expired
            live.expiresAt = Date().addingTimeInterval(3600)
            let store = InMemoryCredentialStore([live])
            let source = CredentialSource(authenticator: client, store: store, key: live.key)
            let items = try #require(URL(string: "\(server.baseURL)/items"))
            let (posted, postedBody) = try await source.send(
                HTTPRequest(method: .post, url: items), body: Data("title=x".utf8), followRedirects: true)
            postedBody.cancel()
            #expect(posted.status.code == 401)
            #expect(server.requests(to: "/items").count == 1 && server.requests(to: "/token").isEmpty)

            let moved = try #require(URL(string: "\(server.baseURL)/moved"))
            let (got, gotBody) = try await source.send(HTTPRequest(method: .get, url: moved), followRedirects: true)
            gotBody.cancel()
            #expect(got.status.code == 200)
            #expect(server.requests(to: "/moved").count == 2 && server.requests(to: "/token").count == 1)
        }
    }

    /// A redirect not followed names its target's origin, which the server
    /// chose: one that made the access token it was sent a host name had
    /// it in the error whole (only the request's own secrets were masked,
    /// and an API request's token is added per hop).
    @Test func aRedirectRefusedDoesNotRepeatTheTokenItWasSent() async throws {
        try await withServer { server in
            server.route("GET", "/echo") { _ in .redirect(302, to: "ftp://Old-Access-Token.example/") }
            let client = try OAuth2Client(
                descriptor: descriptor(server), settings: ClientSettings(clientID: "c", clientSecret: "s"))
            var live = expired
            live.accessToken = "Old-Access-Token" // mixed case: the origin writes a host in lower case
            live.expiresAt = Date().addingTimeInterval(3600)
            let source = CredentialSource(authenticator: client, store: InMemoryCredentialStore([live]), key: live.key)
            let echo = try #require(URL(string: "\(server.baseURL)/echo"))
            await #expect {
                _ = try await source.send(HTTPRequest(method: .get, url: echo), followRedirects: true)
            } throws: { error in
                guard case .redirectNotFollowed(_, _, let location)? = error.authKitReason else { return false }
                let text = "\(error)".lowercased()
                return !location.lowercased().contains("old-access-token") && !text.contains("old-access-token")
            }
        }
    }

    /// RFC 7009's two calls: a server that refuses the access token once its
    /// refresh token (and with it the grant) is revoked does not fail the
    /// sign-out; a refused refresh token still lets the access token be
    /// revoked, and is the error (the refresh token stands).
    @Test func theSecondRevocationCallNeitherFailsASignOutNorIsSkipped() async throws {
        try await withServer { server in
            let client = try OAuth2Client(
                descriptor: descriptor(server, revocation: .init(url: "\(server.baseURL)/revoke")),
                settings: ClientSettings(clientID: "c", clientSecret: "s"), now: { fixedNow })
            server.route("POST", "/revoke") { request in
                (try? formObject(request.bodyText)["token_type_hint"]) == "access_token"
                    ? .json(#"{"error":"invalid_token","error_description":"the grant is gone"}"#, status: 400)
                    : StubResponse(status: 200)
            }
            try await client.revoke(expired)
            #expect(server.requests(to: "/revoke").count == 2)
            server.route("POST", "/revoke") { request in
                (try? formObject(request.bodyText)["token_type_hint"]) == "refresh_token"
                    ? StubResponse(status: 503) : StubResponse(status: 200)
            }
            let error = await #expect(throws: AuthKitError.self) { try await client.revoke(expired) }
            #expect("\(String(describing: error))".contains("temporarily_unavailable"), "\(String(describing: error))")
            #expect(
                try server.requests(to: "/revoke").suffix(2).map { try formObject($0.bodyText)["token"] } == [
                    "refresh-1", "old-access",
                ])
        }
    }

    /// Signing out while a refresh is in flight: the refresh saves first, the
    /// renewed credential is what is revoked, and nothing is saved back
    /// after the removal (before, the refresh's save brought it back).
    @Test func signingOutDuringARefreshRevokesTheRenewedCredentialAndKeepsItGone() async throws {
        try await withServer { server in
            server.route("POST", "/revoke") { _ in StubResponse(status: 200) }
            let client = try OAuth2Client(
                descriptor: descriptor(server, revocation: .init(url: "\(server.baseURL)/revoke")),
                settings: ClientSettings(clientID: "c", clientSecret: "s"), now: { fixedNow })
            let store = InMemoryCredentialStore()
            var revoked: Credential?
            let refreshed = try await slowRefresh(on: server, answering: "new-access", by: client, in: store) {
                source in
                revoked = try await source.revoke()
            }
            #expect(refreshed.accessToken == "new-access")
            #expect(
                revoked?.accessToken == "new-access", "the spent credential was revoked, not the one the refresh saved")
            // RFC 7009: the renewed refresh token first (it also ends the grant's access tokens), then the access token.
            #expect(
                try server.requests(to: "/revoke").map { try formObject($0.bodyText)["token_type_hint"] } == [
                    "refresh_token", "access_token",
                ])
            let renewedRefresh = try #require(revoked?.refreshToken)
            #expect(
                try formObject(try #require(server.requests(to: "/revoke").first).bodyText)["token"] == renewedRefresh)
            #expect(try formObject(try #require(server.requests(to: "/revoke").last).bodyText)["token"] == "new-access")
            #expect(
                await store.credential(for: expired.key) == nil,
                "the refresh saved the credential back after the sign-out")
            let source = CredentialSource(authenticator: client, store: store, key: expired.key)
            await #expect(throws: AuthKitError.signInRequired(expired.key, reason: .noCredential)) {
                try await source.revoke()
            }
        }
    }

    /// A new sign-in stored while a refresh of the account's earlier
    /// credential is in flight: the refresh saves first and the sign-in is
    /// what stays (with a plain `save`, the refresh's renewal of the earlier
    /// credential replaced it, and every request went to the earlier account).
    @Test func aNewSignInSavedDuringARefreshIsWhatStays() async throws {
        try await withServer { server in
            let client = try OAuth2Client(
                descriptor: descriptor(server), settings: ClientSettings(clientID: "c", clientSecret: "s"),
                now: { fixedNow })
            let store = InMemoryCredentialStore()
            let signIn = Credential(
                providerID: "rotating", label: "me", accessToken: "new-sign-in", refreshToken: "other-grant",
                expiresAt: fixedNow.addingTimeInterval(3600), scopes: ["read"], obtainedAt: fixedNow)
            let refreshed = try await slowRefresh(on: server, answering: "renewed-earlier", by: client, in: store) {
                _ in
                try await store.saveSignIn(signIn, lockTimeout: .seconds(60))
            }
            #expect(refreshed.accessToken == "renewed-earlier")
            #expect(
                await store.credential(for: expired.key)?.accessToken == "new-sign-in",
                "the refresh of the earlier credential was saved over the new sign-in")
        }
    }

    /// Stores `expired`, starts refreshing it through a ``CredentialSource``
    /// (the token endpoint answers `accessToken` after half a second), runs
    /// `meanwhile` once the refresh request has reached the server, and
    /// returns what the refresh returned.
    func slowRefresh(
        on server: TestHTTPServer, answering accessToken: String, by client: OAuth2Client,
        in store: InMemoryCredentialStore,
        meanwhile: (CredentialSource) async throws -> Void
    ) async throws -> Credential {
        server.route("POST", "/token") { _ in
            Thread.sleep(forTimeInterval: 0.5)
            return .json(
                #"{"access_token":"\#(accessToken)","token_type":"Bearer","expires_in":3600,"refresh_token":"refresh-2"}"#
            )
        }
        await store.save(expired)
        let source = CredentialSource(authenticator: client, store: store, key: expired.key)
        async let refreshed = source.current(at: fixedNow)
        // Generous: on a loaded machine (the whole suite, two cores) the
        // request once took over 10 s to arrive, `meanwhile` then ran before
        // the refresh had begun, and the test checked another order than it says.
        let deadline = Date().addingTimeInterval(60)
        while server.requests(to: "/token").isEmpty && Date() < deadline { try await Task.sleep(for: .milliseconds(5)) }
        try #require(!server.requests(to: "/token").isEmpty, "the refresh request never reached the token endpoint")
        try await meanwhile(source)
        return try await refreshed
    }

    @Test func keepsTheOldRefreshTokenWhenNoneIsReturned() async throws {
        try await withServer { server in
            server.route("POST", "/token") { _ in
                .json(#"{"access_token":"new-access","token_type":"Bearer","expires_in":60}"#)
            }
            let client = try OAuth2Client(
                descriptor: descriptor(server), settings: ClientSettings(clientID: "c", clientSecret: "s"),
                now: { fixedNow })
            let refreshed = try await client.refresh(expired)
            #expect(refreshed.refreshToken == "refresh-1")
            #expect(refreshed.accessToken == "new-access")
            #expect(refreshed.label == "me")
            #expect(refreshed.scopes == ["read"])
            #expect(refreshed.expiresAt == fixedNow.addingTimeInterval(60))
        }
    }

    /// A refresh token's known expiry stays with it: when the answer leaves
    /// it out, and when the answer repeats the same token without
    /// `refresh_token_expires_in` (it was dropped then, and `token list`
    /// stopped warning before the user had to sign in). A new token without
    /// a lifetime has none known.
    @Test func aRefreshTokenKeepsItsExpiryUntilAnotherReplacesIt() async throws {
        try await withServer { server in
            let client = try OAuth2Client(
                descriptor: descriptor(server), settings: ClientSettings(clientID: "c", clientSecret: "s"),
                now: { fixedNow })
            var earlier = expired
            let deadline = fixedNow.addingTimeInterval(86_400 * 30)
            earlier.refreshTokenExpiresAt = deadline
            func refreshed(answering refreshMember: String) async throws -> Credential {
                server.route("POST", "/token") { _ in
                    .json(#"{"access_token":"new-access","token_type":"Bearer",\#(refreshMember)"expires_in":60}"#)
                }
                return try await client.refresh(earlier)
            }
            #expect(try await refreshed(answering: "").refreshTokenExpiresAt == deadline)
            let repeated = try await refreshed(answering: #""refresh_token":"refresh-1","#)
            #expect(repeated.refreshToken == "refresh-1" && repeated.refreshTokenExpiresAt == deadline)
            let rotated = try await refreshed(answering: #""refresh_token":"refresh-2","#)
            #expect(rotated.refreshToken == "refresh-2" && rotated.refreshTokenExpiresAt == nil)
        }
    }

    /// A refresh whose caller is cancelled once the request is out (a view
    /// that went away, a request handler's timeout) is seen through and
    /// saved: the provider may already have rotated the refresh token, and
    /// only the answer holds the new one (RFC 9700 §4.14.2).
    @Test func aRefreshBegunIsSavedWhenItsCallerIsCancelled() async throws {
        try await withServer { server in
            server.route("POST", "/token") { _ in
                Thread.sleep(forTimeInterval: 0.5)
                return .json(
                    #"{"access_token":"renewed","token_type":"Bearer","expires_in":3600,"refresh_token":"refresh-2"}"#)
            }
            let client = try OAuth2Client(
                descriptor: descriptor(server), settings: ClientSettings(clientID: "c", clientSecret: "s"),
                now: { fixedNow })
            let store = InMemoryCredentialStore([expired])
            let source = CredentialSource(authenticator: client, store: store, key: expired.key)
            let caller = Task { try await source.current(at: fixedNow) }
            let deadline = Date().addingTimeInterval(60)
            while server.requests(to: "/token").isEmpty && Date() < deadline {
                try await Task.sleep(for: .milliseconds(5))
            }
            try #require(!server.requests(to: "/token").isEmpty, "the refresh request never reached the token endpoint")
            caller.cancel()
            _ = await caller.result
            let stored = try #require(await store.credential(for: expired.key))
            #expect(stored.refreshToken == "refresh-2" && stored.accessToken == "renewed")
        }
    }

    /// A sign-in whose answer brought no refresh token (Google's, after the
    /// first consent) keeps the stored one, only where it is the same
    /// account's and nothing else differs.
    @Test func aSignInWithoutARefreshTokenKeepsTheSameAccountsOne() async throws {
        let google = Identity(issuer: "https://accounts.google.com", subject: "1001")
        func credential(
            refresh: String?, identity: Identity? = google, account: String? = nil, origins: [String]? = ["https://t"]
        ) -> Credential {
            var credential = Credential(
                providerID: "google", label: "me", accessToken: refresh == nil ? "second" : "first",
                refreshToken: refresh, expiresAt: fixedNow.addingTimeInterval(3600), obtainedAt: fixedNow)
            credential.identity = identity
            credential.account = account
            credential.endpointOrigins = origins
            return credential
        }
        func saved(after first: Credential, _ second: Credential) async throws -> String? {
            let store = InMemoryCredentialStore([first])
            try await store.saveSignIn(second)
            let stored = try #require(await store.credential(for: second.key))
            #expect(stored.accessToken == "second")
            return stored.refreshToken
        }
        #expect(try await saved(after: credential(refresh: "r1"), credential(refresh: nil)) == "r1")
        #expect(
            try await saved(
                after: credential(refresh: "r1", identity: nil, account: "octocat"),
                credential(refresh: nil, identity: nil, account: "octocat")) == "r1")
        // Another user, or nobody known: not kept.
        #expect(
            try await saved(
                after: credential(refresh: "r1"),
                credential(refresh: nil, identity: Identity(issuer: google.issuer, subject: "1002"))) == nil)
        #expect(
            try await saved(
                after: credential(refresh: "r1", identity: nil), credential(refresh: nil, identity: nil)) == nil)
        // "K" and "K" (U+212A) are one string to Swift's ==, two subjects to a provider.
        #expect(
            try await saved(
                after: credential(refresh: "r1", identity: Identity(issuer: google.issuer, subject: "K")),
                credential(refresh: nil, identity: Identity(issuer: google.issuer, subject: "\u{212A}"))) == nil)
        // Other endpoints: the old refresh token would go where it was not issued.
        #expect(
            try await saved(after: credential(refresh: "r1"), credential(refresh: nil, origins: ["https://other"]))
                == nil)
        // Bound to a DPoP key the new sign-in does not hold.
        var bound = credential(refresh: "r1")
        bound.proofKey = ProofKey()
        #expect(try await saved(after: bound, credential(refresh: nil)) == nil)
    }

    /// The stored credential could not be read at the sign-in's save (a
    /// busy store, a cancelled wait): the save fails, and the refresh token
    /// stored stays. Taken as "none stored", the sign-in was saved over it.
    /// Contents that cannot be read at all are replaced by the sign-in.
    @Test func aSignInWithoutARefreshTokenIsNotSavedOverAStoredOneItCouldNotRead() async throws {
        let stored = Credential(
            providerID: "google", label: "me", accessToken: "first", refreshToken: "r1",
            expiresAt: fixedNow.addingTimeInterval(3600), obtainedAt: fixedNow)
        let signIn = Credential(
            providerID: "google", label: "me", accessToken: "second", expiresAt: fixedNow.addingTimeInterval(3600),
            obtainedAt: fixedNow)
        let busy = AuthKitError.store(path: "store", reason: .busy("another process holds it"))
        let store = UnreadableOnceStore(InMemoryCredentialStore([stored]), failure: busy)
        await #expect(throws: busy) { try await store.saveSignIn(signIn) }
        #expect(await store.inner.credential(for: stored.key)?.refreshToken == "r1")
        let garbled = UnreadableOnceStore(
            InMemoryCredentialStore([stored]),
            failure: AuthKitError.store(path: "store", reason: .invalidContents("not JSON")))
        try await garbled.saveSignIn(signIn)
        #expect(await garbled.inner.credential(for: stored.key)?.accessToken == "second")
    }

    /// A refresh answer's members replace the earlier ones; of those it
    /// does not repeat, what describes the earlier token (`expires_in`) is
    /// not kept (it said nothing of the new one), and the rest is (the
    /// sign-in's `id_token`, an account id, Slack's `team`), within bounds.
    @Test func aRefreshKeepsTheEarlierMembersButWhatDescribedTheEarlierToken() async throws {
        try await withServer { server in
            server.route("POST", "/token") { _ in
                .json(#"{"access_token":"new-access","token_type":"Bearer","scope":"read write"}"#)
            }
            let client = try OAuth2Client(
                descriptor: descriptor(server), settings: ClientSettings(clientID: "c", clientSecret: "s"),
                now: { fixedNow })
            var earlier = expired
            earlier.rawFields = [
                "access_token": .string("old-access"), "user_id": .integer(17), "scope": .string("read"),
                "id_token": .string("h.c.s"), "team": .object(["id": .string("T1")]), "expires_in": .integer(60),
            ]
            let refreshed = try await client.refresh(earlier)
            #expect(
                refreshed.rawFields == [
                    "access_token": .string("new-access"), "token_type": .string("Bearer"),
                    "scope": .string("read write"), "user_id": .integer(17), "id_token": .string("h.c.s"),
                    "team": .object(["id": .string("T1")]),
                ])
        }
    }

    @Test func refreshErrorIsTypedAndNoRefreshTokenIsUnsupported() async throws {
        try await withServer { server in
            server.route("POST", "/token") { _ in .json(#"{"error":"invalid_grant"}"#, status: 400) }
            let client = try OAuth2Client(
                descriptor: descriptor(server), settings: ClientSettings(clientID: "c", clientSecret: "s"))
            await #expect {
                try await client.refresh(expired)
            } throws: { error in
                // invalid_grant at refresh: the grant is gone, so the caller must show its sign-in.
                if case .signInRequired(expired.key, .refreshRefused(let r))? = error.authKitReason {
                    return r.code == "invalid_grant"
                }
                return false
            }
            var noRefresh = expired
            noRefresh.refreshToken = nil
            await #expect {
                try await client.refresh(noRefresh)
            } throws: { error in
                error as? AuthKitError == .signInRequired(noRefresh.key, reason: .noRefreshToken)
            }
            #expect(server.requests.count == 1)
        }
    }

    @Test func aSourceRefreshesOnlyWhenDueAndSavesFirst() async throws {
        try await withServer { server in
            server.route("POST", "/token") { _ in
                .json(#"{"access_token":"fresh","token_type":"Bearer","expires_in":3600,"refresh_token":"refresh-2"}"#)
            }
            let client = try OAuth2Client(
                descriptor: descriptor(server), settings: ClientSettings(clientID: "c", clientSecret: "s"),
                now: { fixedNow })
            var valid = expired
            valid.expiresAt = fixedNow.addingTimeInterval(3600)
            let store = InMemoryCredentialStore([valid])
            let source = CredentialSource(authenticator: client, store: store, key: valid.key)
            #expect(try await source.current(at: fixedNow).accessToken == "old-access")
            #expect(server.requests.isEmpty)
            // Inside the 60 s margin: refreshed, and saved before it is returned.
            let renewed = try await source.current(at: fixedNow.addingTimeInterval(3590))
            #expect(renewed.accessToken == "fresh")
            #expect(await store.credential(for: valid.key) == renewed)
            // A caller's margin replaces the descriptor's.
            let eager = CredentialSource(authenticator: client, store: store, key: valid.key, refreshMargin: 1700)
            #expect(eager.policy.mustRefresh(renewed, at: fixedNow.addingTimeInterval(1950)))
            #expect(!source.policy.mustRefresh(renewed, at: fixedNow.addingTimeInterval(1950)))
        }
    }

    /// Refreshes `expired` through `store`, the token endpoint renewing it,
    /// and expects the store's error (at `path`, starting with `detail`) to
    /// say the renewal was lost, so the user knows why the next refresh may
    /// ask for a new sign-in; the renewed token is not in it. The client is
    /// returned for more requests to the same server.
    @discardableResult
    func expectLostRenewal(
        on server: TestHTTPServer, through store: some CredentialStore, path expectedPath: String, detail: String
    ) async throws -> OAuth2Client {
        server.route("POST", "/token") { _ in
            .json(#"{"access_token":"renewed-token-1","token_type":"Bearer","expires_in":3600}"#)
        }
        let client = try OAuth2Client(
            descriptor: descriptor(server), settings: ClientSettings(clientID: "c", clientSecret: "s"),
            now: { fixedNow })
        let source = CredentialSource(authenticator: client, store: store, key: expired.key)
        await #expect {
            _ = try await source.current(at: fixedNow)
        } throws: { error in
            guard case .store(let path, let reason)? = error.authKitReason else { return false }
            return path == expectedPath && reason.detail.hasPrefix(detail)
                && reason.detail.contains("the renewal was not saved") && !reason.detail.contains("renewed-token-1")
        }
        return client
    }

    /// A store that cannot save: the refreshed credential is not handed out.
    @Test func aCredentialThatCouldNotBeSavedIsNotHandedOut() async throws {
        _ = try await withServer { server in
            try await expectLostRenewal(
                on: server, through: ReadOnlyStore(expired), path: "read-only", detail: "cannot save ")
        }
    }

    /// Refreshed ahead of time, the token still working: a refresh that
    /// failed falls back to the stored token, unless the provider did renew
    /// it and the save failed. The stored refresh token may then be spent,
    /// and handing out the old token said nothing of it.
    @Test func aRenewalLostAheadOfTimeIsSaidNotHidden() async throws {
        try await withServer { server in
            var descriptor = descriptor(server)
            descriptor.refreshPolicy = RefreshPolicy(ahead: 7200)
            let client = try OAuth2Client(
                descriptor: descriptor, settings: ClientSettings(clientID: "c", clientSecret: "s"), now: { fixedNow })
            // An account of its own: the process-wide refresh lock and the
            // refreshes under way are keyed by account and grant, and
            // another test's refresh of `me` held this one past its 10 s
            // wait on a loaded machine (still under way at the second call).
            let working = Credential(
                providerID: "rotating", label: "lost-\(UUID().uuidString)", accessToken: "old-access",
                refreshToken: "refresh-\(UUID().uuidString)", expiresAt: fixedNow.addingTimeInterval(3600),
                obtainedAt: fixedNow.addingTimeInterval(-3600))
            var source = CredentialSource(authenticator: client, store: ReadOnlyStore(working), key: working.key)
            // Each call ends with its refresh's outcome, not at the 10 s
            // wait for it, which a loaded run outlasted once.
            source.optionalRefreshLimit = .seconds(300)
            // The provider failing: the working token is used.
            server.route("POST", "/token") { _ in StubResponse(status: 503) }
            #expect(try await source.current(at: fixedNow).accessToken == "old-access")
            server.route("POST", "/token") { _ in
                .json(
                    #"{"access_token":"renewed","token_type":"Bearer","expires_in":3600,"refresh_token":"refresh-2"}"#)
            }
            // Once the failed one's pause is over (anOptionalRefreshIsWaitedForBrieflyAndPausedAfterAFailure).
            await #expect {
                _ = try await source.current(at: fixedNow.addingTimeInterval(CredentialSource.optionalRefreshPause))
            } throws: { error in
                guard case .store(_, let reason)? = error.authKitReason else { return false }
                return reason.detail.contains("the renewal was not saved")
            }
            #expect(server.requests(to: "/token").count == 2)
        }
    }

    /// A refresh that need not happen yet (ahead of time, the token still
    /// working) is waited for 10 s at most, and one that failed is not tried
    /// again at every use: with a token endpoint that hangs, every call took
    /// the full 30 s, then used the old token. A refresh the token must have
    /// is tried whatever failed before, and waited for.
    @Test func anOptionalRefreshIsWaitedForBrieflyAndPausedAfterAFailure() async throws {
        var descriptor = testDescriptor(
            id: "rotating", protocol: .oauth2, authorization: .init(url: "https://ahead.example/authorize"),
            token: .init(url: "https://ahead.example/token", clientAuthentication: .post))
        descriptor.refreshPolicy = RefreshPolicy(ahead: 7200)
        // Due ahead of time from the start; it must be refreshed from 540 s on.
        func source(_ transport: some HTTPClient) throws -> (CredentialSource, Credential) {
            let client = try OAuth2Client(
                descriptor: descriptor, settings: ClientSettings(clientID: "c", clientSecret: "s"),
                httpClient: transport, now: { fixedNow })
            let working = Credential(
                providerID: "rotating", label: "me-\(UUID().uuidString)", accessToken: "old-access",
                refreshToken: "refresh-\(UUID().uuidString)", expiresAt: fixedNow.addingTimeInterval(600),
                obtainedAt: fixedNow.addingTimeInterval(-3600))
            let store = InMemoryCredentialStore([working])
            return (CredentialSource(authenticator: client, store: store, key: working.key), working)
        }

        // A token endpoint that never answers: the call ends after the wait
        // (10 s) with the token that works, not at the full 30 s; a call
        // meanwhile uses it at once, and sends no second request.
        let hanging = HangingTransport()
        let (patient, _) = try source(hanging)
        let started = ContinuousClock.now
        #expect(try await patient.current(at: fixedNow).accessToken == "old-access")
        let took = ContinuousClock.now - started
        #expect(took < .seconds(25), "the refresh ahead of time took \(took); a token request's deadline is 30 s")
        let again = ContinuousClock.now
        #expect(try await patient.current(at: fixedNow).accessToken == "old-access")
        #expect(ContinuousClock.now - again < .seconds(5), "waited again for the refresh under way")
        #expect(hanging.count == 1)

        // A failing one. Its failure, not the wait, must end the first call:
        // on a loaded CI run (24 tests at once on 2 cores) even this
        // transport's refusal once took over 10 s to come back, the call
        // ended at the wait with the refresh still under way, and every
        // count below was one short.
        let failing = RefusingTransport()
        let (made, working) = try source(failing)
        var source = made
        source.optionalRefreshLimit = .seconds(300)
        #expect(try await source.current(at: fixedNow).accessToken == "old-access")
        // Over once its caller has its failure (a call after the pause found
        // the grant still taken for the moment it was freed, on a loaded run).
        #expect(!CredentialSource.isUnderWay(working.key))
        #expect(try await source.current(at: fixedNow.addingTimeInterval(100)).accessToken == "old-access")
        #expect(failing.count == 1, "tried again within the pause")
        let pauseOver = fixedNow.addingTimeInterval(CredentialSource.optionalRefreshPause + 1)
        #expect(try await source.current(at: pauseOver).accessToken == "old-access")
        #expect(failing.count == 2)
        // Must be refreshed: tried within the pause, and its failure thrown.
        await #expect(throws: AuthKitError.self) {
            _ = try await source.current(at: pauseOver.addingTimeInterval(250))
        }
        #expect(failing.count == 3)
        #expect(try await source.store.credential(for: working.key) == working)
    }

    /// One grant's pause outlasts another grant's failure recorded at an
    /// earlier `now` (a call that read the clock before this one, while the
    /// provider was down for both) or at a fixed date: forgotten by the
    /// later caller's `now`, the first grant's failure counted as "in the
    /// future" and was dropped, and its next call waited for the token
    /// endpoint again (a loaded CI run caught it between two tests).
    @Test func aPauseOutlastsOtherGrantsFailuresAtOtherTimes() async throws {
        let now = Date()
        let first = RefusingTransport()
        let (paused, _, _) = try dueAheadOfTime(label: "paused-\(UUID().uuidString)", transport: first, now: now)
        #expect(try await paused.current(at: now).accessToken == "old-access")
        #expect(first.count == 1)
        for other in [now.addingTimeInterval(-1), fixedNow] {
            let failing = RefusingTransport()
            let (another, _, _) = try dueAheadOfTime(
                label: "other-\(UUID().uuidString)", transport: failing, now: other, fixedClock: true)
            #expect(try await another.current(at: other).accessToken == "old-access")
            #expect(failing.count == 1)
        }
        #expect(try await paused.current(at: now.addingTimeInterval(1)).accessToken == "old-access")
        #expect(first.count == 1, "tried again within the pause")
    }

    /// A token with no known expiry, due at its assumed lifetime
    /// (Salesforce's), may already be dead: its refresh is not paused after
    /// a failure. Paused, one blip of the token endpoint left it answering
    /// 401 for five minutes.
    @Test func aRefreshAtAnAssumedLifetimeIsNotPaused() async throws {
        var descriptor = testDescriptor(
            id: "assumed", protocol: .oauth2, authorization: .init(url: "https://assumed.example/authorize"),
            token: .init(url: "https://assumed.example/token", clientAuthentication: .post))
        descriptor.refreshPolicy = RefreshPolicy(assumedLifetime: 900)
        let failing = RefusingTransport()
        let client = try OAuth2Client(
            descriptor: descriptor, settings: ClientSettings(clientID: "c", clientSecret: "s"),
            httpClient: failing, now: { fixedNow })
        let aging = Credential(
            providerID: "assumed", accessToken: "old-access", refreshToken: "refresh-\(UUID().uuidString)",
            obtainedAt: fixedNow.addingTimeInterval(-850))
        let source = CredentialSource(
            authenticator: client, store: InMemoryCredentialStore([aging]), key: aging.key)
        #expect(try await source.current(at: fixedNow).accessToken == "old-access")
        #expect(try await source.current(at: fixedNow.addingTimeInterval(30)).accessToken == "old-access")
        #expect(failing.count == 2)
    }

    /// A refresh answer without `token_type` (or with one that is not a
    /// type) was refused, and the rotated refresh token it carried lost
    /// (RFC 9700 §4.14.2): the token keeps the type it had, and the answer's
    /// refresh token is kept.
    @Test(arguments: [#""#, #""token_type":"not a type","#])
    func aRefreshAnswerWithoutAUsableTypeKeepsTheEarlierOne(typeMember: String) async throws {
        try await withServer { server in
            server.route("POST", "/token") { _ in
                .json(#"{"access_token":"renewed",\#(typeMember)"expires_in":3600,"refresh_token":"refresh-2"}"#)
            }
            let client = try OAuth2Client(
                descriptor: descriptor(server), settings: ClientSettings(clientID: "c", clientSecret: "s"),
                now: { fixedNow })
            var earlier = expired
            earlier.tokenType = "bearer"
            let refreshed = try await client.refresh(earlier)
            #expect(refreshed.accessToken == "renewed" && refreshed.refreshToken == "refresh-2")
            #expect(refreshed.tokenType == "bearer")
            // A sign-in's answer is still refused.
            let (_, pending) = try await client.startAuthorization()
            await #expect(throws: AuthKitError.self) { _ = try await client.exchange(code: "c", pending: pending) }
        }
    }

    /// A refresh answer whose `expires_in` cannot be read (`-1`, `"soon"`),
    /// or is 0 or absent, is kept without it; the new token had then no
    /// expiry, and with no assumed lifetime was never found due again: a
    /// dead token was sent until an API's 401 `invalid_token`. It is taken
    /// to live as long as the one it replaces (RFC 6749 §5.1: omitted, the
    /// lifetime is the server's documented default, most likely what it
    /// said at sign-in).
    @Test(arguments: [#""expires_in":-1,"#, #""expires_in":"soon","#, #""expires_in":0,"#, ""])
    func aRefreshAnswerWithAnUnusableLifetimeTakesTheEarlierOne(lifetime: String) async throws {
        try await withServer { server in
            server.route("POST", "/token") { _ in
                .json(#"{"access_token":"renewed","token_type":"Bearer",\#(lifetime)"refresh_token":"refresh-2"}"#)
            }
            let client = try OAuth2Client(
                descriptor: descriptor(server), settings: ClientSettings(clientID: "c", clientSecret: "s"),
                now: { fixedNow })
            var earlier = expired
            earlier.obtainedAt = fixedNow.addingTimeInterval(-7200)
            earlier.expiresAt = fixedNow.addingTimeInterval(-3600)
            let refreshed = try await client.refresh(earlier)
            #expect(refreshed.accessToken == "renewed" && refreshed.refreshToken == "refresh-2")
            #expect(refreshed.expiresAt == fixedNow.addingTimeInterval(3600))
            #expect(RefreshPolicy().isDue(refreshed, at: fixedNow.addingTimeInterval(7200)))
        }
    }

    /// `expires_in: 0` says nothing of the lifetime, as golang.org/x/oauth2
    /// reads it (and `refresh_token_expires_in: 0` likewise): in a refresh
    /// answer the earlier token's lifetime stands in for it. Read as
    /// "expired when issued", the token was found due at once: every use
    /// refreshed it, each refresh spending a rotating refresh token.
    @Test func aLifetimeOfZeroSaysNothingOfTheLifetime() async throws {
        try await withServer { server in
            server.route("POST", "/token") { _ in
                .json(
                    #"{"access_token":"renewed","token_type":"Bearer","expires_in":0,"refresh_token":"refresh-2","refresh_token_expires_in":"0"}"#
                )
            }
            let client = try OAuth2Client(
                descriptor: descriptor(server), settings: ClientSettings(clientID: "c", clientSecret: "s"),
                now: { fixedNow })
            let refreshed = try await client.refresh(expired)
            #expect(refreshed.accessToken == "renewed")
            #expect(refreshed.expiresAt == fixedNow.addingTimeInterval(3590), "the earlier token's 3,590 s")
            #expect(refreshed.refreshTokenExpiresAt == nil)
            #expect(!RefreshPolicy().isDue(refreshed, at: fixedNow))
            // Used through a credential source, it is not refreshed again.
            let store = InMemoryCredentialStore()
            await store.save(refreshed)
            let source = CredentialSource(authenticator: client, store: store, key: refreshed.key)
            #expect(try await source.current(at: fixedNow).accessToken == "renewed")
            #expect(server.requests(to: "/token").count == 1)
        }
    }

    /// `"scope": ""` in a refresh answer kept no scopes, and a client
    /// credentials grant's next renewal then asked for none. Kept as an
    /// absent `scope` is (RFC 6749 §6).
    @Test func anEmptyScopeInARefreshAnswerKeepsTheEarlierScopes() async throws {
        try await withServer { server in
            server.route("POST", "/token") { _ in
                .json(#"{"access_token":"renewed","token_type":"Bearer","scope":"","refresh_token":"refresh-2"}"#)
            }
            let client = try OAuth2Client(
                descriptor: descriptor(server), settings: ClientSettings(clientID: "c", clientSecret: "s"),
                now: { fixedNow })
            #expect(try await client.refresh(expired).scopes == ["read"])
        }
    }

    /// The same in a client credentials answer: the grant's scopes were
    /// stored as none, and its renewal asked for none (the server's default).
    @Test func anEmptyScopeInAClientCredentialsAnswerKeepsTheRequestedOnes() async throws {
        try await withServer { server in
            server.route("POST", "/token") { _ in
                .json(#"{"access_token":"machine","token_type":"Bearer","expires_in":60,"scope":""}"#)
            }
            let client = try OAuth2Client(
                descriptor: descriptor(server), settings: ClientSettings(clientID: "c", clientSecret: "s"),
                now: { fixedNow })
            let granted = try await client.clientCredentials(scopes: ["orders.read"])
            #expect(granted.scopes == ["orders.read"])
            _ = try await client.refresh(granted)
            let renewal = try #require(server.requests(to: "/token").last)
            #expect(renewal.bodyText.contains("scope=orders.read"), "\(renewal.bodyText)")
        }
    }

    /// A store whose lock could not be let go after the save (a database
    /// whose commit failed, undoing it): the renewal is as lost as when the
    /// save fails, and the error says so too.
    @Test func aRenewalLostWhenTheLockIsLetGoIsSaid() async throws {
        try await withServer { server in
            let client = try await expectLostRenewal(
                on: server, through: CommitFailingStore(expired), path: "commit", detail: "the commit failed")
            // A store error before the provider answered is not said to be a lost renewal.
            let early = CredentialSource(
                authenticator: client, store: CommitFailingStore(expired, failsBefore: true), key: expired.key)
            await #expect {
                _ = try await early.current(at: fixedNow)
            } throws: { error in
                guard case .store(_, let reason)? = error.authKitReason else { return false }
                return !reason.detail.contains("renewal")
            }
            #expect(server.requests(to: "/token").count == 1)
        }
    }

    /// A sign-out (revoke or remove, under the refresh lock) while a call
    /// that read the stored credential waits for that lock to refresh it
    /// ahead of time: the call finds nothing and says so. It fell back to
    /// the token it had read, and `send` used the signed-out user's token.
    @Test func anOptionalRefreshThatFindsTheCredentialRemovedSaysSignInAgain() async throws {
        let (made, store, working) = try dueAheadOfTime(
            label: "signed-out", transport: RefusingTransport(), now: fixedNow, fixedClock: true)
        var source = made
        // Its outcome, not the end of the wait for it (10 s, which a loaded run outlasted once).
        source.optionalRefreshLimit = .seconds(300)
        // The call reads, then waits for the lock the sign-out holds.
        let signOut = try await holdingTheLock(of: working.key, in: store, for: .milliseconds(300)) {
            _ = await store.remove(working.key)
        }
        await #expect {
            _ = try await source.current(at: fixedNow)
        } throws: { error in
            guard case .signInRequired(_, .noCredential)? = error.authKitReason else { return false }
            return true
        }
        try await signOut.value
    }

    /// A token with no known expiry (Salesforce's, refreshed at an assumed
    /// lifetime) whose refresh the provider refuses (`invalid_grant`: the
    /// grant was revoked) says to sign in again: its token was used, and
    /// every call refreshed twice (before it, and at the API's 401). So
    /// does a `send` whose deadline the refusal comes after (its refresh is
    /// seen through): not the request's timeout.
    @Test func aRefusedRefreshAtAnAssumedLifetimeSaysSignInAgain() async throws {
        var descriptor = testDescriptor(
            id: "assumed", protocol: .oauth2, authorization: .init(url: "https://assumed.example/authorize"),
            token: .init(url: "https://assumed.example/token", clientAuthentication: .post))
        descriptor.refreshPolicy = RefreshPolicy(assumedLifetime: 900)
        func source(answeringAfter delay: Duration) throws -> CredentialSource {
            let transport = InvalidGrantTransport(delay: delay)
            let client = try OAuth2Client(
                descriptor: descriptor, settings: ClientSettings(clientID: "c", clientSecret: "s"),
                httpClient: transport)
            let revoked = Credential(
                providerID: "assumed", label: "\(delay)", accessToken: "old-access",
                refreshToken: "refresh-\(UUID().uuidString)", obtainedAt: Date().addingTimeInterval(-1000))
            return CredentialSource(
                authenticator: client, store: InMemoryCredentialStore([revoked]), key: revoked.key,
                httpClient: transport)
        }
        func saysSignInAgain(_ error: any Error) -> Bool {
            guard case .signInRequired(_, .refreshRefused)? = error.authKitReason else { return false }
            return true
        }
        await #expect(performing: { _ = try await source(answeringAfter: .zero).current() }, throws: saysSignInAgain)
        let api = try #require(URL(string: "https://assumed.example/api"))
        await #expect(
            performing: {
                _ = try await source(answeringAfter: .seconds(1)).send(
                    HTTPRequest(method: .get, url: api), deadline: .milliseconds(300))
            }, throws: saysSignInAgain)
    }

    /// A `send` with less time left than an optional refresh's 10 s does
    /// not begin one: the token still works, and is sent. Given what was
    /// left, the refresh was cut short, its answer (a rotated refresh token)
    /// lost; given its 10 s, it kept the request waiting past its deadline.
    @Test func aShortSendBeginsNoOptionalRefresh() async throws {
        let transport = SlowTokenTransport(tokenDelay: nil)
        let (source, _, _) = try dueAheadOfTime(label: "hurried", transport: transport)
        let api = try #require(URL(string: "https://ahead.example/api"))
        let (response, _) = try await source.send(HTTPRequest(method: .get, url: api), deadline: .seconds(5))
        #expect(response.status == .ok)
        #expect(transport.requested == ["/api"])
    }

    /// Nor does it wait for another task's refresh holding the lock: the
    /// token still works, and is sent at once. It waited its whole time
    /// for the lock, then failed as timed out.
    @Test func aShortSendDoesNotWaitForAnotherTasksOptionalRefresh() async throws {
        let transport = SlowTokenTransport(tokenDelay: nil)
        let (source, store, working) = try dueAheadOfTime(label: "patient", transport: transport)
        let holder = try await holdingTheLock(of: working.key, in: store, for: .seconds(4))
        let api = try #require(URL(string: "https://ahead.example/api"))
        let (response, _) = try await source.send(HTTPRequest(method: .get, url: api), deadline: .seconds(3))
        #expect(response.status == .ok)
        #expect(transport.requested == ["/api"])
        holder.cancel()
        _ = try? await holder.value
    }

    /// A refresh the token must have is seen through on its own deadline
    /// however little of a `send`'s is left, and saved; the request, its
    /// time used up, is then not sent but fails as timed out. Cut at the
    /// send's deadline, the provider's answer was lost; not bounded at all,
    /// the request was sent past it.
    @Test func aRefreshTheTokenMustHaveIsSeenThroughPastASendsDeadline() async throws {
        let transport = SlowTokenTransport(tokenDelay: .seconds(2))
        let (source, store, due) = try expired(label: "due", transport: transport)
        await expectItsTimeout(source, "https://due.example/api", within: .seconds(1))
        #expect(transport.requested == ["/token"], "the request was sent past its deadline")
        #expect(await store.credential(for: due.key)?.accessToken == "renewed")
    }

    /// A wait for the refresh lock that a `send`'s deadline cut short is
    /// that request's timeout, not "another task has held it for more than
    /// 300 ms" (a store error, exit 74 at the command line).
    @Test func aLockWaitCutByASendsDeadlineIsItsTimeout() async throws {
        let transport = SlowTokenTransport(tokenDelay: .zero)
        let (source, store, due) = try expired(label: "locked", transport: transport)
        // Held far past the deadline, and let go once checked: held 2 s, a
        // loaded CI run's late timers let the 300 ms deadline pass only
        // after the holder had gone, and the refresh was sent.
        let holder = try await holdingTheLock(of: due.key, in: store, for: .seconds(120))
        await expectItsTimeout(source, "https://due.example/api", within: .milliseconds(300))
        #expect(transport.requested.isEmpty)
        holder.cancel()
        _ = await holder.result
    }

    /// An optional refresh waiting for the lock another task holds: the
    /// request goes with the token that still works once the caller's wait
    /// is over, and the refresh, when it has the lock, is made and saved.
    /// Bounded by the request's deadline instead, the wait for the lock
    /// made the request fail as timed out, though its token worked.
    @Test func anOptionalRefreshWaitingForTheLockLetsTheRequestGo() async throws {
        let transport = SlowTokenTransport(tokenDelay: .zero)
        var (source, store, working) = try dueAheadOfTime(label: "waiting", transport: transport)
        source.optionalRefreshLimit = .milliseconds(200)
        // Held until the request has gone: held 1 s, a loaded run's late
        // wake-up could let the refresh take the lock first.
        let holder = try await holdingTheLock(of: working.key, in: store, for: .seconds(300))
        let api = try #require(URL(string: "https://ahead.example/api"))
        let (response, _) = try await source.send(HTTPRequest(method: .get, url: api), deadline: .seconds(60))
        #expect(response.status == .ok)
        #expect(transport.requested.first == "/api", "the request waited for the refresh")
        holder.cancel()
        _ = await holder.result
        try await untilStored(in: store, working.key) { $0?.accessToken == "renewed" }
        #expect(transport.requested == ["/api", "/token"])
    }

    /// An optional refresh the provider answers after the caller stopped
    /// waiting is seen through and saved: the caller went on with the token
    /// that still works, and the rotated refresh token the answer carries
    /// is kept (RFC 9700 §4.14.2). Cut at the caller's wait, the answer was
    /// lost and the stored refresh token spent: the next refresh asked the
    /// user to sign in again. A call meanwhile sends no second refresh.
    @Test func anOptionalRefreshAnsweredAfterTheWaitIsSaved() async throws {
        let transport = SlowTokenTransport(heldUntilReleased: .renewed)
        var (source, store, working) = try dueAheadOfTime(label: "late", transport: transport)
        source.optionalRefreshLimit = .milliseconds(100)
        #expect(try await source.current().accessToken == "old-access")
        #expect(try await source.current().accessToken == "old-access")
        #expect(transport.answered == 0, "waited for the provider's answer")
        transport.release()
        try await CredentialSource.finishRefreshesUnderWay(of: working.key) { _ in }
        #expect(transport.answered == 1)
        try await untilStored(in: store, working.key) { $0?.refreshToken == "refresh-2" }
        #expect(await store.credential(for: working.key)?.accessToken == "renewed")
        #expect(transport.requested == ["/token"])
    }

    /// An optional refresh that fails after its caller went on is paused as
    /// one that failed in time: the next call uses the token, sending nothing.
    @Test func anOptionalRefreshFailingAfterTheWaitIsPaused() async throws {
        let transport = SlowTokenTransport(heldUntilReleased: .unavailable)
        var (source, _, _) = try dueAheadOfTime(label: "late-failure", transport: transport)
        source.optionalRefreshLimit = .milliseconds(100)
        #expect(try await source.current().accessToken == "old-access")
        #expect(transport.answered == 0, "waited for the provider's answer")
        transport.release()
        try await CredentialSource.finishRefreshesUnderWay(of: source.key) { _ in }
        #expect(try await source.current().accessToken == "old-access")
        #expect(transport.requested == ["/token"], "tried again within the pause")
    }

    /// A renewal the store could not save after the caller went on with
    /// its token is thrown by ``CredentialSource/finishRefreshesUnderWay()``
    /// (the stored refresh token may be spent): only logged, a program
    /// exited as if all were well.
    @Test func aRenewalNotSavedAfterTheCallerWentOnIsThrownWhenFinishing() async throws {
        let transport = SlowTokenTransport(heldUntilReleased: .renewed)
        let (source, working) = try wentOnWithAStoreThatCannotSave(label: "unsaved-late", transport: transport)
        #expect(try await source.current().accessToken == "old-access")
        let said = LockedValue<[CredentialKey]>([])
        // Answered once the program has said what it waits for: still under way then.
        await #expect {
            try await CredentialSource.finishRefreshesUnderWay(of: working.key) { keys in
                said.withLock { $0 = keys }
                transport.release()
            }
        } throws: { error in
            guard case .store(_, let reason)? = error.authKitReason else { return false }
            return reason.detail.contains("the renewal was not saved")
        }
        #expect(said.current == [working.key])
        // Nothing under way any more: nothing said, nothing thrown.
        try await CredentialSource.finishRefreshesUnderWay(of: working.key) { _ in Issue.record("said again") }
    }

    /// Likewise when that refresh ended before the program asked: the
    /// error was kept with the refresh's record, which went when it ended.
    @Test func aRenewalNotSavedThatEndedBeforeFinishingIsThrownToo() async throws {
        let transport = SlowTokenTransport(heldUntilReleased: .renewed)
        let (source, working) = try wentOnWithAStoreThatCannotSave(label: "unsaved-ended", transport: transport)
        #expect(try await source.current().accessToken == "old-access")
        transport.release()
        try await until { transport.answered == 1 && !CredentialSource.isUnderWay(working.key) }
        await #expect {
            try await CredentialSource.finishRefreshesUnderWay(of: working.key) { _ in Issue.record("nothing runs") }
        } throws: { error in
            guard case .store(_, let reason)? = error.authKitReason else { return false }
            return reason.detail.contains("the renewal was not saved")
        }
        try await CredentialSource.finishRefreshesUnderWay(of: working.key) { _ in }
    }

    /// A token with no known expiry (due at an assumed lifetime) may be dead
    /// already: its refresh is waited for, however long the wait for an
    /// optional one.
    @Test func aRefreshAtAnAssumedLifetimeIsWaitedFor() async throws {
        var descriptor = testDescriptor(
            id: "assumed", protocol: .oauth2, authorization: .init(url: "https://assumed.example/authorize"),
            token: .init(url: "https://assumed.example/token", clientAuthentication: .post))
        descriptor.refreshPolicy = RefreshPolicy(assumedLifetime: 900)
        let transport = SlowTokenTransport(tokenDelay: .milliseconds(400))
        let client = try OAuth2Client(
            descriptor: descriptor, settings: ClientSettings(clientID: "c", clientSecret: "s"),
            httpClient: transport)
        let aging = Credential(
            providerID: "assumed", accessToken: "old-access", refreshToken: "refresh-\(UUID().uuidString)",
            obtainedAt: Date().addingTimeInterval(-850))
        var source = CredentialSource(
            authenticator: client, store: InMemoryCredentialStore([aging]), key: aging.key)
        source.optionalRefreshLimit = .milliseconds(100)
        #expect(try await source.current().accessToken == "renewed")
    }

    /// ``dueAheadOfTime(label:transport:now:fixedClock:)``'s credential in a
    /// store whose every save fails, waited for 100 ms when refreshed ahead of time.
    func wentOnWithAStoreThatCannotSave(label: String, transport: SlowTokenTransport) throws -> (
        CredentialSource, Credential
    ) {
        let (template, _, working) = try dueAheadOfTime(label: label, transport: transport)
        var source = CredentialSource(
            authenticator: template.authenticator, store: ReadOnlyStore(working), key: working.key,
            httpClient: transport)
        source.optionalRefreshLimit = .milliseconds(100)
        return (source, working)
    }

    /// Waits until what `store` holds for `key` satisfies `condition`, at most 30 s.
    func untilStored(
        in store: InMemoryCredentialStore, _ key: CredentialKey, _ condition: (Credential?) -> Bool
    ) async throws {
        let end = ContinuousClock.now.advanced(by: .seconds(30))
        while !condition(await store.credential(for: key)), ContinuousClock.now < end {
            try await Task.sleep(for: .milliseconds(10))
        }
        try #require(condition(await store.credential(for: key)), "not stored within 30 s")
    }

    /// After an optional refresh failed, the credential used is the one
    /// read under the lock, unless that one must be refreshed itself
    /// (another writer stored an expired one meanwhile): the failure is
    /// then thrown, not the expired token handed out as one that works.
    @Test func aFallbackNeverHandsOutACredentialThatMustBeRefreshed() async throws {
        let (made, store, working) = try dueAheadOfTime(
            label: "replaced", transport: RefusingTransport(), now: fixedNow, fixedClock: true)
        var source = made
        // Its outcome, not the end of the wait for it (10 s, which a loaded run outlasted once).
        source.optionalRefreshLimit = .seconds(300)
        var replacement = working
        replacement.accessToken = "expired-access"
        replacement.expiresAt = fixedNow.addingTimeInterval(-10)
        let expired = replacement
        // The call reads, then waits for the lock another writer holds.
        let writer = try await holdingTheLock(of: working.key, in: store, for: .milliseconds(300)) {
            await store.save(expired)
        }
        await #expect(throws: AuthKitError.self) { _ = try await source.current(at: fixedNow) }
        try await writer.value
    }

    /// A 401 `invalid_token` whose refresh the provider answered but the
    /// store could not save: `send` throws that (the rotated refresh token
    /// is spent), as `current()` does, rather than hand back the 401.
    @Test func aRenewalLostAfterA401IsSaidNotHidden() async throws {
        try await withServer { server in
            let refused = issuingNewAccessTokens(on: server)
            server.route("GET", "/api") { _ in refused }
            let client = try OAuth2Client(
                descriptor: descriptor(server), settings: ClientSettings(clientID: "c", clientSecret: "s"))
            var live = expired
            live.expiresAt = Date().addingTimeInterval(3600)
            let source = CredentialSource(authenticator: client, store: ReadOnlyStore(live), key: live.key)
            let api = try #require(URL(string: "\(server.baseURL)/api"))
            await #expect {
                _ = try await source.send(HTTPRequest(method: .get, url: api))
            } throws: { error in
                guard case .store(_, let reason)? = error.authKitReason else { return false }
                return reason.detail.contains("the renewal was not saved")
            }
            #expect(server.requests(to: "/token").count == 1)
        }
    }

    @Test func instagramRefreshRunsTheDescriptorsCall() async throws {
        try await withServer { server in
            server.route("GET", "/refresh_access_token") { _ in
                .json(#"{"access_token":"IGlonger","token_type":"bearer","expires_in":5184000}"#)
            }
            let client = try OAuth2Client(
                descriptor: bundledDescriptor("instagram", pointingTo: server),
                settings: ClientSettings(clientID: "c", clientSecret: "s"), now: { fixedNow })
            let current = Credential(
                providerID: "instagram", accessToken: "IGlong", tokenType: "bearer", expiresAt: fixedNow)
            let refreshed = try await client.refresh(current)
            #expect(refreshed.accessToken == "IGlonger")
            let request = try #require(server.requests.last)
            #expect(request.method == "GET")
            #expect(
                try formObject(try #require(request.query)) == [
                    "grant_type": "ig_refresh_token", "access_token": "IGlong",
                ])
        }
    }

    /// A credential bound to a DPoP key before its descriptor turned `dpop`
    /// off, refreshed through the descriptor's own call (which sends no
    /// proof): the token it brings is a Bearer token, not bound to the key.
    /// It kept the key and the type `DPoP`, and was sent as `Authorization:
    /// DPoP` with proofs its server never bound it to.
    @Test func aTemplateRefreshOfABoundCredentialBringsAnUnboundOne() async throws {
        try await withServer { server in
            server.route("GET", "/refresh_access_token") { _ in
                .json(#"{"access_token":"IGlonger","expires_in":5184000}"#)
            }
            let client = try OAuth2Client(
                descriptor: bundledDescriptor("instagram", pointingTo: server),
                settings: ClientSettings(clientID: "c", clientSecret: "s"), now: { fixedNow })
            var bound = Credential(
                providerID: "instagram", accessToken: "IGlong", tokenType: "DPoP", expiresAt: fixedNow)
            bound.proofKey = ProofKey()
            let refreshed = try await client.refresh(bound)
            #expect(refreshed.accessToken == "IGlonger" && refreshed.proofKey == nil && refreshed.tokenType == "Bearer")
            #expect(server.requests.last?.header("DPoP") == nil)
        }
    }
}

@Suite struct RevocationTests {
    let credential = Credential(providerID: "p", accessToken: "tok/en+1", refreshToken: "r")

    /// A provider whose revocation is RFC 7009 with every default.
    func rfc7009Provider(_ server: TestHTTPServer) -> ProviderDescriptor {
        testDescriptor(
            id: "p", name: "P", protocol: .oauth2,
            authorization: DescriptorFile.Authorization(url: "\(server.baseURL)/a"),
            token: DescriptorFile.Token(url: "\(server.baseURL)/token"),
            revocation: DescriptorFile.Template(url: "\(server.baseURL)/revoke"))
    }

    @Test func rfc7009DefaultsWithClientAuthentication() async throws {
        try await withServer { server in
            server.route("POST", "/revoke") { _ in StubResponse(status: 200) }
            let descriptor = rfc7009Provider(server)
            let client = try OAuth2Client(
                descriptor: descriptor, settings: ClientSettings(clientID: "CLIENT_ID", clientSecret: "CLIENT_SECRET"))
            try await client.revoke(credential)
            let request = try #require(server.requests.last)
            #expect(request.method == "POST")
            #expect(request.header("Authorization") == "Basic Q0xJRU5UX0lEOkNMSUVOVF9TRUNSRVQ=")
            #expect(try formObject(request.bodyText) == ["token": "tok/en+1", "token_type_hint": "access_token"])
        }
    }

    /// A revocation that sends the access token alone (Twitch names it,
    /// Dropbox authenticates with it) refuses an expired one: signing out
    /// refreshes it first (saving the rotated refresh token), then revokes
    /// the live one. When the refresh is refused, the revocation is tried as
    /// it was, and its refusal is what is said: nothing is removed.
    @Test func anExpiredAccessTokenIsRefreshedBeforeARevocationThatSendsItAlone() async throws {
        try await withServer { server in
            let live = LockedValue<Set<String>>(["new-access"])
            let refreshes = LockedValue(true)
            server.route("POST", "/token") { _ in
                refreshes.current
                    ? .json(
                        #"{"access_token":"new-access","token_type":"Bearer","expires_in":3600,"refresh_token":"refresh-2"}"#
                    )
                    : .json(#"{"error":"invalid_grant"}"#, status: 400)
            }
            server.route("POST", "/revoke") { request in
                let token = (try? formObject(request.bodyText))?["token"] ?? ""
                return live.current.contains(token) ? StubResponse(status: 200) : .json("{}", status: 400)
            }
            let descriptor = testDescriptor(
                id: "p", name: "P", protocol: .oauth2,
                authorization: DescriptorFile.Authorization(url: "\(server.baseURL)/a"),
                token: DescriptorFile.Token(url: "\(server.baseURL)/token", clientAuthentication: .post),
                revocation: DescriptorFile.Template(
                    url: "\(server.baseURL)/revoke",
                    parameters: ["client_id": "{client_id}", "token": "{access_token}"]))
            let client = try OAuth2Client(
                descriptor: descriptor, settings: ClientSettings(clientID: "c", clientSecret: "s"))
            let expired = Credential(
                providerID: "p", accessToken: "old-access", refreshToken: "refresh-1",
                expiresAt: Date(timeIntervalSinceNow: -60))
            let store = InMemoryCredentialStore([expired])
            let source = CredentialSource(authenticator: client, store: store, key: expired.key)
            let revoked = try await source.revoke()
            #expect(revoked.accessToken == "new-access")
            #expect(try server.requests(to: "/revoke").map { try formObject($0.bodyText)["token"] } == ["new-access"])
            #expect(await store.credential(for: expired.key) == nil)

            // The refresh refused: the revocation is tried with what is stored, and fails; nothing removed.
            refreshes.withLock { $0 = false }
            let kept = InMemoryCredentialStore([expired])
            await #expect(throws: AuthKitError.self) {
                _ = try await CredentialSource(authenticator: client, store: kept, key: expired.key).revoke()
            }
            #expect(await kept.credential(for: expired.key)?.accessToken == "old-access")

            // RFC 7009's own revocation (the refresh token first) needs no
            // live access token: nothing is refreshed for it.
            refreshes.withLock { $0 = true }
            let tokenRequests = server.requests(to: "/token").count
            let rfc7009 = testDescriptor(
                id: "p", name: "P", protocol: .oauth2,
                authorization: DescriptorFile.Authorization(url: "\(server.baseURL)/a"),
                token: DescriptorFile.Token(url: "\(server.baseURL)/token", clientAuthentication: .post),
                revocation: DescriptorFile.Template(url: "\(server.baseURL)/revoke"))
            #expect(rfc7009.revocation?.isRFC7009Revocation == true)
            let standard = try OAuth2Client(
                descriptor: rfc7009, settings: ClientSettings(clientID: "c", clientSecret: "s"))
            _ = live.withLock { $0.insert("refresh-1") }
            _ = try await CredentialSource(
                authenticator: standard, store: InMemoryCredentialStore([expired]), key: expired.key
            ).revoke()
            #expect(server.requests(to: "/token").count == tokenRequests)
            #expect(
                try server.requests(to: "/revoke").last.map { try formObject($0.bodyText)["token"] } == "old-access")
        }
    }

    @Test func unavailableServerIsReportedForRetry() async throws {
        try await withServer { server in
            server.route("POST", "/revoke") { _ in StubResponse(status: 503) }
            let descriptor = rfc7009Provider(server)
            let client = try OAuth2Client(descriptor: descriptor, settings: ClientSettings(clientID: "c"))
            await #expect {
                try await client.revoke(credential)
            } throws: { error in
                if case .providerError(.revocation, let r)? = error.authKitReason {
                    return r.code == "temporarily_unavailable" && r.status == 503
                }
                return false
            }
        }
    }

    @Test func qiitaDeletesTheTokenPathWithoutPrintingIt() async throws {
        try await withServer { server in
            let token = "ea5d0a593b2655e9568f144fb1826342292f5c6b"
            server.route("DELETE", "/api/v2/access_tokens/\(token)") { _ in StubResponse(status: 204) }
            let client = try OAuth2Client(
                descriptor: bundledDescriptor("qiita", pointingTo: server),
                settings: ClientSettings(clientID: "c", clientSecret: "s"))
            try await client.revoke(Credential(providerID: "qiita", accessToken: token))
            let request = try #require(server.requests.last)
            #expect(request.method == "DELETE")
            #expect(request.body.isEmpty)
            #expect(request.header("Content-Type") == nil)

            // A failing revocation names the templated URL, not the token in it.
            await #expect {
                try await client.revoke(Credential(providerID: "qiita", accessToken: "unknown-token-value"))
            } throws: { error in
                guard case .invalidResponse(.revocation, let reason)? = error.authKitReason else { return false }
                return reason.detail.contains("HTTP 404") && !"\(error)".contains("unknown-token-value")
            }
        }
    }

    /// GitHub's revocation is not RFC 7009: `DELETE /applications/{client_id}/token`
    /// with HTTP Basic and the token in a JSON body, answered 204.
    @Test func githubDeletesTheTokenWithBasicAndAJSONBody() async throws {
        try await withServer { server in
            server.route("DELETE", "/applications/Iv1.abc/token") { _ in StubResponse(status: 204) }
            let client = try OAuth2Client(
                descriptor: bundledDescriptor("github", pointingTo: server),
                settings: ClientSettings(clientID: "Iv1.abc", clientSecret: "gh-secret"))
            try await client.revoke(Credential(providerID: "github", accessToken: "gho_token"))
            let request = try #require(server.requests.last)
            #expect(request.method == "DELETE")
            #expect(request.header("Authorization") == "Basic " + Data("Iv1.abc:gh-secret".utf8).base64EncodedString())
            #expect(request.header("Content-Type") == "application/json")
            #expect(try jsonObject(request.body) == ["access_token": "gho_token"])
        }
    }

    /// Slack answers a failed revocation with HTTP 200 and `"ok": false`:
    /// that is an error, not a revoked token.
    @Test func anErrorInASuccessfulAnswerIsAnError() async throws {
        try await withServer { server in
            let answers = Recorder<Int>()
            server.route("POST", "/api/auth.revoke") { _ in
                answers.append(1)
                return answers.all.count == 1
                    ? .json(#"{"ok":false,"error":"invalid_auth"}"#) : .json(#"{"ok":true,"revoked":true}"#)
            }
            let client = try OAuth2Client(
                descriptor: bundledDescriptor("slack", pointingTo: server),
                settings: ClientSettings(clientID: "c", clientSecret: "s"))
            let credential = Credential(providerID: "slack", accessToken: "xoxp-secret-token")
            await #expect {
                try await client.revoke(credential)
            } throws: { error in
                guard case .providerError(.revocation, let response)? = error.authKitReason else { return false }
                return response.code == "invalid_auth" && !"\(error)".contains("xoxp-secret-token")
            }
            #expect(server.requests.last?.header("Authorization") == "Bearer xoxp-secret-token")
            try await client.revoke(credential)
        }
    }

    /// RFC 7009 gives a successful revocation no body format: an HTML page
    /// with HTTP 200 is still a success.
    @Test func aSuccessWithAnyBodyIsASuccess() async throws {
        try await withServer { server in
            server.route("POST", "/revoke") { _ in
                StubResponse(status: 200, headers: [("Content-Type", "text/html")], body: Data("<p>ok</p>".utf8))
            }
            let client = try OAuth2Client(
                descriptor: rfc7009Provider(server), settings: ClientSettings(clientID: "c", clientSecret: "s"))
            try await client.revoke(credential)
            // Both of the credential's tokens were sent for revocation (RFC 7009 §2.1).
            #expect(server.requests(to: "/revoke").count == 2, "the revocations were sent")
        }
    }

    @Test func providersWithoutRevocationSaySo() async throws {
        let client = try OAuth2Client(descriptor: bundledDescriptor("spotify"), settings: ClientSettings(clientID: "c"))
        await #expect {
            try await client.revoke(Credential(providerID: "spotify", accessToken: "t"))
        } throws: { error in
            guard error as? AuthKitError == .notSupported(providerID: "spotify", .revocation) else { return false }
            return "\(error)".contains("spotify descriptor names no way to revoke")
        }
    }
}

/// A store that holds one credential and refuses to save.
struct ReadOnlyStore: CredentialStore {
    let held: Credential
    init(_ held: Credential) { self.held = held }
    func credential(for key: CredentialKey) async throws -> Credential? { key == held.key ? held : nil }
    func allCredentials() async throws -> [Credential] { [held] }
    func save(_ credential: Credential) async throws {
        throw AuthKitError.store(path: "read-only", reason: .init(.notSaved, "cannot save"))
    }
    func remove(_ key: CredentialKey) async throws -> Credential? { nil }
}

/// Fails its first read with `failure`, then reads and writes `inner`.
struct UnreadableOnceStore: CredentialStore {
    let inner: InMemoryCredentialStore
    let failure: AuthKitError
    private let failed = LockedValue(false)
    init(_ inner: InMemoryCredentialStore, failure: AuthKitError) { (self.inner, self.failure) = (inner, failure) }
    func credential(for key: CredentialKey) async throws -> Credential? {
        let first = failed.withLock { failed in
            defer { failed = true }
            return !failed
        }
        if first { throw failure }
        return await inner.credential(for: key)
    }
    func allCredentials() async throws -> [Credential] { await inner.allCredentials() }
    func save(_ credential: Credential) async throws { await inner.save(credential) }
    func remove(_ key: CredentialKey) async throws -> Credential? { await inner.remove(key) }
}

/// Saves, then fails as a database whose commit failed after the body of
/// the refresh lock ran (or, `failsBefore`, before it runs).
struct CommitFailingStore: CredentialStore {
    let held: Credential
    var failsBefore = false
    init(_ held: Credential, failsBefore: Bool = false) {
        self.held = held
        self.failsBefore = failsBefore
    }
    func credential(for key: CredentialKey) async throws -> Credential? { key == held.key ? held : nil }
    func allCredentials() async throws -> [Credential] { [held] }
    func save(_ credential: Credential) async throws {}
    func remove(_ key: CredentialKey) async throws -> Credential? { nil }
    func withRefreshLock<Result: Sendable>(
        for key: CredentialKey, timeout: Duration, _ body: @Sendable () async throws -> Result
    ) async throws -> Result {
        let failure = AuthKitError.store(path: "commit", reason: .init(.inaccessible, "the commit failed"))
        if failsBefore { throw failure }
        _ = try await body()
        throw failure
    }
}

/// Refresh policy as data: the margin, and Instagram's refresh-ahead window and minimum age.
@Suite struct RefreshPolicyTests {
    @Test func instagramsRulesComeFromItsDescriptor() throws {
        let policy = try bundledDescriptor("instagram").refreshPolicy
        #expect(policy == RefreshPolicy(margin: 60, ahead: 14 * 86400, minimumAge: 86400))
        func token(obtainedHoursAgo age: Double, expiresInDays days: Double) -> Credential {
            Credential(
                providerID: "instagram", accessToken: "t", expiresAt: fixedNow.addingTimeInterval(days * 86400),
                obtainedAt: fixedNow.addingTimeInterval(-age * 3600))
        }
        #expect(!policy.isDue(token(obtainedHoursAgo: 48, expiresInDays: 30), at: fixedNow))
        #expect(policy.isDue(token(obtainedHoursAgo: 48, expiresInDays: 10), at: fixedNow))
        #expect(!policy.isDue(token(obtainedHoursAgo: 2, expiresInDays: 10), at: fixedNow), "younger than 24 h")
        #expect(
            policy.isDue(token(obtainedHoursAgo: 2, expiresInDays: 0.0001), at: fixedNow),
            "about to expire: refreshed whatever its age")
        #expect(try bundledDescriptor("github").refreshPolicy == RefreshPolicy())
    }

    /// Salesforce's answers carry no `expires_in`: its tokens last the org's
    /// session timeout, which the client is not told. Such a token was used
    /// until refused; its descriptor now has it refreshed once 15 minutes
    /// old (`assumedLifetimeSeconds`), when it has a refresh token to do so.
    /// A token issued for less than the margin (`expires_in` 30 against 60)
    /// is not "about to expire" from the moment it arrives: the margin is at
    /// most half its lifetime, or every use refreshed it again.
    @Test func aShortLivedTokenIsNotRefreshedAtEveryUse() {
        func token(lifetime: TimeInterval) -> Credential {
            Credential(
                providerID: "p", accessToken: "t", refreshToken: "r", expiresAt: fixedNow.addingTimeInterval(lifetime),
                obtainedAt: fixedNow)
        }
        let policy = RefreshPolicy()
        #expect(!policy.mustRefresh(token(lifetime: 30), at: fixedNow))
        #expect(!policy.mustRefresh(token(lifetime: 30), at: fixedNow.addingTimeInterval(14)))
        #expect(policy.mustRefresh(token(lifetime: 30), at: fixedNow.addingTimeInterval(16)))
        // A token that outlives the margin keeps all of it.
        #expect(!policy.mustRefresh(token(lifetime: 3600), at: fixedNow.addingTimeInterval(3539)))
        #expect(policy.mustRefresh(token(lifetime: 3600), at: fixedNow.addingTimeInterval(3541)))
        #expect(!policy.mustRefresh(token(lifetime: 64), at: fixedNow.addingTimeInterval(3)))
        #expect(policy.mustRefresh(token(lifetime: 64), at: fixedNow.addingTimeInterval(5)))
    }

    @Test func salesforceTokensWithoutAnExpiryAreRefreshedAtTheAssumedLifetime() async throws {
        let policy = try bundledDescriptor("salesforce").refreshPolicy
        #expect(policy.assumedLifetime == 900)
        func token(minutesOld age: Double, refreshToken: String? = "r") -> Credential {
            Credential(
                providerID: "salesforce", accessToken: "t", refreshToken: refreshToken,
                obtainedAt: fixedNow.addingTimeInterval(-age * 60))
        }
        #expect(!policy.isDue(token(minutesOld: 10), at: fixedNow))
        #expect(policy.isDue(token(minutesOld: 14.5), at: fixedNow), "inside the margin")
        #expect(
            !policy.mustRefresh(token(minutesOld: 60), at: fixedNow),
            "due, not required: a failed refresh leaves it in use")
        #expect(!policy.isDue(token(minutesOld: 60, refreshToken: nil), at: fixedNow), "nothing to refresh it with")
        #expect(!RefreshPolicy().isDue(token(minutesOld: 600), at: fixedNow), "no lifetime assumed: used until refused")

        // Through CredentialSource: the old token is refreshed and the new one used.
        try await withServer { server in
            server.route("POST", "/services/oauth2/token") { _ in
                .json(
                    #"{"access_token":"fresh","token_type":"Bearer","instance_url":"https://na1.salesforce.com","issued_at":"1700000000000"}"#
                )
            }
            let client = try OAuth2Client(
                descriptor: bundledDescriptor("salesforce", pointingTo: server),
                settings: ClientSettings(
                    clientID: "c", clientSecret: "s", placeholders: ["host": "login.salesforce.com"]),
                now: { fixedNow })
            let store = InMemoryCredentialStore([token(minutesOld: 20)])
            let source = CredentialSource(authenticator: client, store: store, key: token(minutesOld: 20).key)
            #expect(try await source.current(at: fixedNow).accessToken == "fresh")
            let kept = try await source.current(at: fixedNow.addingTimeInterval(60))
            #expect(kept.accessToken == "fresh" && server.requests.count == 1)
        }
    }

    /// Salesforce and Reddit revoke only the token they are sent, and their
    /// refresh tokens live until revoked: revoking the access token alone
    /// (what their files said before) left the grant alive after `token
    /// revoke`. Their descriptors now take RFC 7009's default: the refresh
    /// token first, then the access token, authenticated as at the token
    /// endpoint (Salesforce: in the body; Reddit: Basic, with its User-Agent).
    @Test(arguments: ["salesforce", "reddit"])
    func bundledRevocationsSendTheRefreshTokenFirst(_ id: String) async throws {
        try await withServer { server in
            let path = id == "salesforce" ? "/services/oauth2/revoke" : "/api/v1/revoke_token"
            server.route("POST", path) { _ in .json("{}") }
            let client = try OAuth2Client(
                descriptor: bundledDescriptor(id, pointingTo: server),
                settings: ClientSettings(
                    clientID: "the-client", clientSecret: "the-secret",
                    placeholders: ["host": "login.salesforce.com", "user_agent": "test:authkit:1 (by /u/t)"]),
                now: { fixedNow })
            try await client.revoke(
                Credential(providerID: id, accessToken: "the-access", refreshToken: "the-refresh", obtainedAt: fixedNow)
            )
            let sent = server.requests
            let forms = try sent.map { try formObject($0.bodyText) }
            try #require(sent.count == 2, "\(sent.map(\.bodyText))")
            #expect(forms[0]["token"] == "the-refresh" && forms[0]["token_type_hint"] == "refresh_token")
            #expect(forms[1]["token"] == "the-access" && forms[1]["token_type_hint"] == "access_token")
            for (request, form) in zip(sent, forms) {
                if id == "reddit" {
                    #expect(
                        request.header("Authorization")?.hasPrefix("Basic ") == true && form["client_secret"] == nil)
                    #expect(request.header("User-Agent") == "test:authkit:1 (by /u/t)")
                } else {
                    #expect(form["client_id"] == "the-client" && form["client_secret"] == "the-secret")
                }
            }
        }
    }

    @Test func refreshTokenLifetimeIsKept() async throws {
        try await withServer { server in
            server.route("POST", "/token") { _ in
                .json(
                    #"{"access_token":"a","token_type":"Bearer","expires_in":28800,"refresh_token":"r","refresh_token_expires_in":15897600}"#
                )
            }
            let descriptor = testDescriptor(
                id: "gh", protocol: .oauth2, authorization: .init(url: "\(server.baseURL)/a"),
                token: .init(url: "\(server.baseURL)/token"))
            let client = try OAuth2Client(
                descriptor: descriptor, settings: ClientSettings(clientID: "c", clientSecret: "s"), now: { fixedNow })
            let credential = try await client.exchange(
                code: "c",
                pending: await client.startAuthorization(redirectURI: URL(string: "http://127.0.0.1:1/cb")).pending
            )
            #expect(credential.refreshTokenExpiresAt == fixedNow.addingTimeInterval(15_897_600))
        }
    }
}

/// An ``HTTPClient`` that holds every request until ``release()``, then
/// answers each with `answer` (JSON), counting them: for requests that must
/// be in flight at once, without timing.
final class HeldTransport: HTTPClient, @unchecked Sendable {
    private let answer: String
    private let lock = NSLock()
    private var sent = 0
    private var released = false
    private var held: [CheckedContinuation<Void, Never>] = []

    init(_ answer: String) { self.answer = answer }

    /// Requests received so far, held or answered.
    var count: Int { lock.withLock { sent } }

    /// Answers every request held, and every later one at once.
    func release() {
        let waiting = lock.withLock { () -> [CheckedContinuation<Void, Never>] in
            released = true
            defer { held = [] }
            return held
        }
        for request in waiting { request.resume() }
    }

    func send(_ request: HTTPRequest, body: Data?) async throws -> (HTTPResponse, HTTPResponseBody) {
        await withCheckedContinuation { continuation in
            let answerNow = lock.withLock { () -> Bool in
                sent += 1
                if !released { held.append(continuation) }
                return released
            }
            if answerNow { continuation.resume() }
        }
        return (
            HTTPResponse(status: .ok, headerFields: [.contentType: "application/json"]),
            HTTPResponseBody(Data(answer.utf8))
        )
    }
}

/// An ``HTTPClient`` that never answers (until its task is cancelled, as a
/// deadline does), counting the requests it was sent.
final class HangingTransport: HTTPClient, @unchecked Sendable {
    private let lock = NSLock()
    private var sent = 0

    var count: Int { lock.withLock { sent } }

    func send(_ request: HTTPRequest, body: Data?) async throws -> (HTTPResponse, HTTPResponseBody) {
        lock.withLock { sent += 1 }
        try await Task.sleep(for: .seconds(3600))
        throw CancellationError()
    }
}

/// An ``HTTPClient`` whose token endpoint (a path ending `/token`) answers
/// a new token after `tokenDelay` (never, when nil), and every other path
/// `{"ok":true}` at once, noting the paths asked for.
final class SlowTokenTransport: HTTPClient, @unchecked Sendable {
    /// What the token endpoint answers.
    enum TokenAnswer { case renewed, unavailable }

    private let tokenDelay: Duration?
    private let tokenAnswer: TokenAnswer
    private let lock = NSLock()
    private var paths: [String] = []
    private var tokenAnswers = 0
    /// Whether token requests wait for ``release()`` rather than a delay.
    private let held: Bool
    private var released = false

    init(tokenDelay: Duration?, answer: TokenAnswer = .renewed) {
        self.tokenDelay = tokenDelay
        self.tokenAnswer = answer
        self.held = false
    }

    /// Token requests answered once the test calls ``release()``: the
    /// order a test asserts is its own, not a race between a short delay
    /// and a caller's short wait, which a loaded run (24 tests on 2 cores)
    /// lost by seconds.
    init(heldUntilReleased answer: TokenAnswer = .renewed) {
        self.tokenDelay = nil
        self.tokenAnswer = answer
        self.held = true
    }

    /// Answers held token requests, and every later one at once.
    func release() { lock.withLock { released = true } }

    var requested: [String] { lock.withLock { paths } }
    /// Token requests answered.
    var answered: Int { lock.withLock { tokenAnswers } }

    func send(_ request: HTTPRequest, body: Data?) async throws -> (HTTPResponse, HTTPResponseBody) {
        let path = request.url?.path ?? ""
        lock.withLock { paths.append(path) }
        var answer = #"{"ok":true}"#
        var status = HTTPResponse.Status.ok
        if path.hasSuffix("/token") {
            if held {
                while !lock.withLock({ released }) { try await Task.sleep(for: .milliseconds(5)) }
            } else {
                try await Task.sleep(for: tokenDelay ?? .seconds(3600))
            }
            defer { lock.withLock { tokenAnswers += 1 } }
            switch tokenAnswer {
            case .renewed:
                answer =
                    #"{"access_token":"renewed","token_type":"Bearer","expires_in":3600,"refresh_token":"refresh-2"}"#
            case .unavailable:
                (status, answer) = (.serviceUnavailable, "")
            }
        }
        return (
            HTTPResponse(status: status, headerFields: [.contentType: "application/json"]),
            HTTPResponseBody(Data(answer.utf8))
        )
    }
}

/// An ``HTTPClient`` whose every answer is RFC 6749 §5.2's `invalid_grant`.
final class InvalidGrantTransport: HTTPClient, @unchecked Sendable {
    private let delay: Duration

    /// - Parameter delay: how long each answer takes.
    init(delay: Duration = .zero) { self.delay = delay }

    func send(_ request: HTTPRequest, body: Data?) async throws -> (HTTPResponse, HTTPResponseBody) {
        if delay > .zero { try await Task.sleep(for: delay) }
        return (
            HTTPResponse(status: .badRequest, headerFields: [.contentType: "application/json"]),
            HTTPResponseBody(Data(#"{"error":"invalid_grant"}"#.utf8))
        )
    }
}

/// An ``HTTPClient`` that answers every request 503, counting them.
final class RefusingTransport: HTTPClient, @unchecked Sendable {
    private let lock = NSLock()
    private var sent = 0

    var count: Int { lock.withLock { sent } }

    func send(_ request: HTTPRequest, body: Data?) async throws -> (HTTPResponse, HTTPResponseBody) {
        lock.withLock { sent += 1 }
        return (HTTPResponse(status: .serviceUnavailable), HTTPResponseBody(Data()))
    }
}
