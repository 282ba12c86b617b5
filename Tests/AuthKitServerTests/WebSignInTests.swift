import AuthKit
import AuthKitHummingbird
import AuthKitSandbox
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import Testing

@testable import AuthKitServer

/// "Sign in with …" in a web backend (issue 47), through Hummingbird's
/// routes and the sandbox's emulation of Google: the two requests, the
/// session, sign-out, and the attacks each step must refuse.
@Suite struct WebSignInTests {
    static let publicURL = URL(string: "http://127.0.0.1:8080")!

    /// An app with AuthKit's routes and a `/me` route, signing in to `sandbox`.
    static func app(
        _ sandbox: Sandbox, publicURL: URL = publicURL,
        stores: (any WebSignInStore, any CredentialStore)? = nil, web given: WebSignIn? = nil,
        logger: Logger = Logger(label: "test")
    ) throws -> (some ApplicationProtocol, WebSignIn) {
        let client = try OAuth2Client(descriptor: sandbox.descriptor, settings: sandbox.clientSettings)
        let (store, credentials) = stores ?? (InMemoryWebSignInStore(), InMemoryCredentialStore())
        let web =
            given
            ?? WebSignIn(
                configuration: .init(publicURL: publicURL), clients: [client], credentials: credentials,
                store: store)
        let router = Router()
        web.addRoutes(to: router)
        router.get("/me") { request, _ -> Response in
            guard let session = try await web.session(of: request) else { return Response(status: .unauthorized) }
            let body =
                #"{"provider":"\#(session.user.providerID)","subject":"\#(session.user.subject)","csrf":"\#(session.csrfToken)"}"#
            return Response(status: .ok, body: .init(byteBuffer: ByteBuffer(string: body)))
        }
        return (Application(router: router, logger: logger), web)
    }

    static func google(redirect: String = publicURL.absoluteString + "/auth/google/callback") async throws -> Sandbox {
        let google = try ProviderCatalog(includeBundled: true, directories: []).descriptor(id: "google")
        return try await Sandbox.start(emulating: google, options: SandboxOptions(redirectURIs: [redirect]))
    }

    /// The consent page, approved as `account`: the provider's redirect back.
    static func consent(
        _ sandbox: Sandbox, location: String, account: String = "alice", publicURL: URL = publicURL
    ) async throws -> URL {
        let session = AuthorizationSession(
            providerName: "Google", redirectURI: URL(string: publicURL.absoluteString + "/auth/google/callback"),
            redirectPortIsFlexible: false, makeAuthorizationURL: { _ in URL(string: location)! },
            validateRedirect: { _ in })
        return try await sandbox.userAgent(account: account).run(session)
    }

    static func cookies(_ response: TestResponse) -> [String: String] {
        var cookies = [String: String]()
        for field in response.headers[values: .setCookie] {
            let pair = field.split(separator: ";")[0].split(separator: "=", maxSplits: 1)
            cookies[String(pair[0])] = pair.count > 1 ? String(pair[1]) : ""
        }
        return cookies
    }

    /// A whole sign-in in one browser, as `account`: its session cookie and CSRF token.
    static func signIn(
        _ client: some TestClientProtocol, _ sandbox: Sandbox, account: String = "alice", over session: String? = nil
    ) async throws -> (session: String, csrf: String) {
        let started = try await client.execute(uri: "/auth/google", method: .get)
        let binding = try #require(cookies(started)["authkit_signin"])
        let callback = try await consent(sandbox, location: try #require(started.headers[.location]), account: account)
        let finished = try await client.execute(
            uri: pathAndQuery(callback), method: .get,
            headers: [.cookie: "authkit_signin=\(binding)" + (session.map { "; authkit_session=\($0)" } ?? "")])
        let session = try #require(cookies(finished)["authkit_session"], "\(finished.status)")
        let me = try await client.execute(uri: "/me", method: .get, headers: [.cookie: "authkit_session=\(session)"])
        let fields = try JSONSerialization.jsonObject(with: Data(String(buffer: me.body).utf8)) as? [String: String]
        return (session, try #require(fields?["csrf"]))
    }

    /// Signs `alice` in from two browsers and `bob` from a third, signs
    /// alice out in the first: with `everywhere` (the default,
    /// `revokeOnSignOut`) her other session ends and her credential is
    /// revoked and removed, bob's stays; without, only the first session ends.
    static func checkSignOut(
        everywhere: Bool, stores: (any WebSignInStore, any CredentialStore)? = nil
    ) async throws {
        let sandbox = try await google()
        defer { Task { await sandbox.stop() } }
        let (store, credentials) = stores ?? (InMemoryWebSignInStore(), InMemoryCredentialStore())
        let client = try OAuth2Client(descriptor: sandbox.descriptor, settings: sandbox.clientSettings)
        let web = WebSignIn(
            configuration: .init(publicURL: publicURL, revokeOnSignOut: everywhere), clients: [client],
            credentials: credentials, store: store)
        let (app, _) = try Self.app(sandbox, web: web)
        try await app.test(.router) { client in
            let first = try await signIn(client, sandbox)
            let second = try await signIn(client, sandbox)
            let bob = try await signIn(client, sandbox, account: "bob")
            let out = try await client.execute(
                uri: "/auth/logout", method: .post,
                headers: [
                    .cookie: "authkit_session=\(first.session)", .contentType: "application/x-www-form-urlencoded",
                ], body: ByteBuffer(string: "csrf=\(first.csrf)"))
            #expect(out.status == .found || out.status == .ok, "\(out.status)")
            func me(_ session: String) async throws -> HTTPResponse.Status {
                try await client.execute(uri: "/me", method: .get, headers: [.cookie: "authkit_session=\(session)"])
                    .status
            }
            #expect(try await me(first.session) == .unauthorized)
            #expect(try await me(second.session) == (everywhere ? .unauthorized : .ok))
            #expect(try await me(bob.session) == .ok)
            // Whose credentials stay, not only how many: bob's, and alice's only when she stays signed in elsewhere.
            let owners = try await credentials.allCredentials().map { $0.identity?.subject ?? $0.account ?? "?" }
            #expect(
                owners.sorted() == (everywhere ? ["sandbox-user-bob"] : ["sandbox-user-alice", "sandbox-user-bob"]),
                "\(owners)")
            // Hers was revoked at the provider too, and nothing else was.
            let revoked = sandbox.events.filter { $0.step == "revocation" && $0.summary == "grant revoked" }
            #expect(revoked.count == (everywhere ? 1 : 0), "\(sandbox.events.map(\.summary))")
        }
    }

    @Test(arguments: [true, false]) func signOutEndsEverySessionOfTheUserOrOnlyThisOne(everywhere: Bool)
        async throws
    {
        try await Self.checkSignOut(everywhere: everywhere)
    }

    /// A revocation that fails at sign-out (the provider away) is said in
    /// `SignedOut.revocationFailure`, which the routes log: it was dropped,
    /// the sign-out answered as a success, and the credential, the only
    /// copy of a refresh token the provider still honours, removed unsaid.
    @Test func aRevocationThatFailsAtSignOutIsSaid() async throws {
        let sandbox = try await Self.google()
        let credentials = InMemoryCredentialStore()
        let client = try OAuth2Client(descriptor: sandbox.descriptor, settings: sandbox.clientSettings)
        let web = WebSignIn(
            configuration: .init(publicURL: Self.publicURL), clients: [client], credentials: credentials,
            store: InMemoryWebSignInStore())
        let (app, _) = try Self.app(sandbox, web: web)
        try await app.test(.router) { http in
            let alice = try await Self.signIn(http, sandbox)
            let bob = try await Self.signIn(http, sandbox, account: "bob")
            let kept = try await web.signOut(cookie: bob.session, csrfToken: bob.csrf, origin: nil)
            #expect(kept.revocationFailure == nil)
            await sandbox.stop()
            let signedOut = try await web.signOut(cookie: alice.session, csrfToken: alice.csrf, origin: nil)
            #expect(signedOut.revocationFailure is AuthKitError, "\(String(describing: signedOut.revocationFailure))")
            #expect(await credentials.allCredentials().isEmpty)
        }
    }

    static func pathAndQuery(_ url: URL) -> String {
        url.path + (url.query.map { "?" + $0 } ?? "")
    }

    @Test func aSignInMakesASessionAndEachStepRefusesWhatItMust() async throws {
        let sandbox = try await Self.google()
        defer { Task { await sandbox.stop() } }
        let (app, _) = try Self.app(sandbox)
        try await app.test(.router) { client in
            // 1. Start: a redirect to the provider, and a binding cookie (HttpOnly, Lax).
            let started = try await client.execute(uri: "/auth/google?return_to=/settings", method: .get)
            #expect(started.status == .found)
            let location = try #require(started.headers[.location])
            #expect(location.hasPrefix(sandbox.baseURL.absoluteString) && location.contains("nonce="))
            let binding = try #require(Self.cookies(started)["authkit_signin"])
            let setCookie = started.headers[values: .setCookie].joined()
            #expect(setCookie.contains("HttpOnly") && setCookie.contains("SameSite=Lax"))
            #expect(!setCookie.contains("Secure")) // plain http on loopback: browsers would drop it

            // 2. The provider sends the browser back; 3. the callback makes a session.
            let callback = try await Self.consent(sandbox, location: location)
            let planted = "attacker-chosen-session-id"
            let finished = try await client.execute(
                uri: Self.pathAndQuery(callback), method: .get,
                headers: [.cookie: "authkit_signin=\(binding); authkit_session=\(planted)"])
            #expect(finished.status == .found && finished.headers[.location] == "/settings")
            let session = try #require(Self.cookies(finished)["authkit_session"])
            #expect(session != planted && session.count >= 43)
            // The binding stays for its lifetime: another sign-in of this browser may be under way.
            #expect(Self.cookies(finished)["authkit_signin"] == nil)

            let me = try await client.execute(
                uri: "/me", method: .get, headers: [.cookie: "authkit_session=\(session)"])
            #expect(me.status == .ok && String(buffer: me.body).contains(#""subject":"sandbox-user-alice""#))
            // A session id planted before the sign-in is nobody's (session fixation).
            let fixed = try await client.execute(
                uri: "/me", method: .get, headers: [.cookie: "authkit_session=\(planted)"])
            #expect(fixed.status == .unauthorized)

            // The same callback again (a replay): the attempt was taken once.
            let replay = try await client.execute(
                uri: Self.pathAndQuery(callback), method: .get, headers: [.cookie: "authkit_signin=\(binding)"])
            #expect(replay.status == .badRequest)

            // A callback in another browser (no binding cookie, or another one): login CSRF.
            let other = try await client.execute(uri: "/auth/google", method: .get)
            let otherCallback = try await Self.consent(sandbox, location: try #require(other.headers[.location]))
            let foreign = try await client.execute(
                uri: Self.pathAndQuery(otherCallback), method: .get, headers: [.cookie: "authkit_signin=\(binding)"])
            #expect(foreign.status == .badRequest && String(buffer: foreign.body).contains("another browser"))
            // The refusal did not use the attempt up: whoever learned the
            // callback (a log, a referrer) cannot cancel the sign-in of the
            // browser it belongs to, which still finishes.
            let ownBinding = try #require(Self.cookies(other)["authkit_signin"])
            let own = try await client.execute(
                uri: Self.pathAndQuery(otherCallback), method: .get, headers: [.cookie: "authkit_signin=\(ownBinding)"])
            #expect(own.status == .found && Self.cookies(own)["authkit_session"] != nil, "\(own.status)")

            // A forged state, with the binding of a sign-in still under way:
            // refused, and that sign-in still finishes.
            let live = try await client.execute(uri: "/auth/google", method: .get)
            let liveBinding = try #require(Self.cookies(live)["authkit_signin"])
            let liveCallback = try await Self.consent(sandbox, location: try #require(live.headers[.location]))
            let forged = try await client.execute(
                uri: "/auth/google/callback?code=x&state=forged", method: .get,
                headers: [.cookie: "authkit_signin=\(liveBinding)"])
            #expect(forged.status == .badRequest)
            // A query that does not decode is said to be unusable, not an
            // expired sign-in; nothing is taken (the genuine callback below still works).
            let undecodable = try await client.execute(
                uri: "/auth/google/callback?code=x&state=forged&error_description=100%", method: .get,
                headers: [.cookie: "authkit_signin=\(liveBinding)"])
            #expect(undecodable.status == .badRequest)
            #expect(
                String(buffer: undecodable.body).contains("could not be used")
                    && !String(buffer: undecodable.body).contains("expired"), "\(String(buffer: undecodable.body))")
            let genuine = try await client.execute(
                uri: Self.pathAndQuery(liveCallback), method: .get, headers: [.cookie: "authkit_signin=\(liveBinding)"])
            #expect(genuine.status == .found && Self.cookies(genuine)["authkit_session"] != nil, "\(genuine.status)")

            // Open redirects in the return path; and paths a proxy that merges
            // slashes or folds dot segments (or a page redirecting to its own
            // path) would make `//evil.example`, or that leave a public URL's prefix.
            for path in [
                "//evil.example/", "https://evil.example/", "/\\evil.example", "/a b", "evil", "/.//evil.example",
                "/%2e//evil.example", "/%2E%2E//evil.example", "/../other", "/a//evil.example", "/a/./b",
                // Escaped slashes and backslashes, which a proxy decoding once makes `///evil.example`.
                "/%2F%2Fevil.example", "/%2f/evil.example", "/%5C%5Cevil.example", "/a%5c/b",
            ] {
                let escaped = path.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
                let refused = try await client.execute(uri: "/auth/google?return_to=\(escaped)", method: .get)
                #expect(refused.status == .badRequest, "\(path)")
            }

            // 4. Logout: refused without this session's CSRF token, or from another origin.
            let fields = try JSONSerialization.jsonObject(with: Data(String(buffer: me.body).utf8)) as? [String: String]
            let csrf = try #require(fields?["csrf"])
            let noToken = try await client.execute(
                uri: "/auth/logout", method: .post, headers: [.cookie: "authkit_session=\(session)"])
            #expect(noToken.status == .forbidden)
            // A form too large to hold only a token: no token (403 with the
            // session, 401 without), not an outage (it was a 503).
            for cookie in ["authkit_session=\(session)", "other=1"] {
                let huge = try await client.execute(
                    uri: "/auth/logout", method: .post,
                    headers: [.cookie: cookie, .contentType: "application/x-www-form-urlencoded"],
                    body: ByteBuffer(string: "csrf=\(csrf)&pad=" + String(repeating: "x", count: 17 * 1024)))
                #expect(huge.status == (cookie == "other=1" ? .unauthorized : .forbidden), "\(huge.status)")
            }
            let crossSite = try await client.execute(
                uri: "/auth/logout", method: .post,
                headers: [
                    .cookie: "authkit_session=\(session)", .contentType: "application/x-www-form-urlencoded",
                    .origin: "https://evil.example",
                ], body: ByteBuffer(string: "csrf=\(csrf)"))
            #expect(crossSite.status == .forbidden)
            // An empty X-CSRF-Token (a page's script with none to give) is
            // no token: the form's field is read (it hid it, and the
            // genuine sign-out was refused).
            let out = try await client.execute(
                uri: "/auth/logout", method: .post,
                headers: [
                    .cookie: "authkit_session=\(session)", .contentType: "application/x-www-form-urlencoded",
                    .origin: Self.publicURL.absoluteString, HTTPField.Name("X-CSRF-Token")!: "",
                ], body: ByteBuffer(string: "csrf=\(csrf)"))
            #expect(out.status == .found && Self.cookies(out)["authkit_session"] == "")
            let after = try await client.execute(
                uri: "/me", method: .get, headers: [.cookie: "authkit_session=\(session)"])
            #expect(after.status == .unauthorized)
            // A sign-out with a session that has ended (another tab's
            // sign-out, an expiry) clears the cookie: answered 401, the
            // browser kept the dead cookie. With no cookie, still 401.
            let again = try await client.execute(
                uri: "/auth/logout", method: .post,
                headers: [.cookie: "authkit_session=\(session)", .contentType: "application/x-www-form-urlencoded"],
                body: ByteBuffer(string: "csrf=\(csrf)"))
            #expect(again.status == .found && Self.cookies(again)["authkit_session"] == "")
            let none = try await client.execute(uri: "/auth/logout", method: .post, headers: [.cookie: "other=1"])
            #expect(none.status == .unauthorized && Self.cookies(none)["authkit_session"] == nil)
        }
    }

    /// On an https site the cookies are `__Host-` ones, and the callback
    /// reads only that: a cookie planted without the prefix (by a sibling
    /// subdomain, or a plain-http answer), sent first, binds nothing.
    /// A request's cookie, read as the browser sent it: a name byte for
    /// byte; one that becomes it with Unicode spaces, invisible characters or
    /// case folded away is another cookie (ignored, not taken); the exact
    /// name twice is none.
    @Test func aCookieIsReadByItsExactNameAndALookalikeIsAnother() {
        let name = "__Host-authkit_signin"
        #expect(WebCookie.value(named: name, inCookieFields: ["a=1; __Host-authkit_signin=B ; c=3"]) == "B")
        #expect(WebCookie.value(named: name, inCookieFields: ["a=1", "__Host-authkit_signin=B"]) == "B")
        #expect(WebCookie.value(named: name, inCookieFields: ["a=1; foo; ;"]) == nil)
        for lookalike in [
            "\u{2000}__Host-authkit_signin=X; __Host-authkit_signin=B",
            "__Host-authkit_signin=B; \u{A0}__Host-authkit_signin=X",
            "\u{200B}__Host-authkit_signin=X; __Host-authkit_signin=B",
            "__host-authkit_signin=X; __Host-authkit_signin=B",
            // A value ending in U+0600 joins the next `;` into one Character.
            "other=x\u{600}; __Host-authkit_signin=B",
        ] {
            #expect(WebCookie.value(named: name, inCookieFields: [lookalike]) == "B", "\(lookalike)")
        }
        #expect(WebCookie.value(named: name, inCookieFields: ["\u{2000}__Host-authkit_signin=X"]) == nil)
        #expect(
            WebCookie.value(named: name, inCookieFields: ["__Host-authkit_signin=X; __Host-authkit_signin=B"]) == nil)
    }

    @Test func onAnHTTPSSiteCookiesAreHostPrefixedAndAPlantedOneIsIgnored() async throws {
        let site = URL(string: "https://app.example")!
        let sandbox = try await Self.google(redirect: "https://app.example/auth/google/callback")
        defer { Task { await sandbox.stop() } }
        let (app, web) = try Self.app(sandbox, publicURL: site)
        #expect(web.configuration.sessionCookie == "__Host-authkit_session")
        #expect(web.configuration.bindingCookie == "__Host-authkit_signin")
        try await app.test(.router) { client in
            let started = try await client.execute(uri: "/auth/google", method: .get)
            let binding = try #require(Self.cookies(started)["__Host-authkit_signin"])
            let setCookie = started.headers[values: .setCookie].joined()
            #expect(setCookie.contains("; Secure") && setCookie.contains("Path=/") && !setCookie.contains("Domain"))
            let location = try #require(started.headers[.location])

            // The attacker's own sign-in's binding, planted unprefixed and sent first.
            let attackers = try await client.execute(uri: "/auth/google", method: .get)
            let attackerBinding = try #require(Self.cookies(attackers)["__Host-authkit_signin"])
            let attackerCallback = try await Self.consent(
                sandbox, location: try #require(attackers.headers[.location]), account: "mallory", publicURL: site)
            let planted = try await client.execute(
                uri: Self.pathAndQuery(attackerCallback), method: .get,
                headers: [.cookie: "authkit_signin=\(attackerBinding); __Host-authkit_signin=\(binding)"])
            #expect(planted.status == .badRequest && Self.cookies(planted)["__Host-authkit_session"] == nil)
            // Planted under a name with a Unicode space first (another cookie to
            // the browser, unprefixed; Hummingbird's parser trimmed it to the
            // prefixed name): the binding is taken for absent, not the attacker's.
            let lookalike = try await client.execute(
                uri: Self.pathAndQuery(attackerCallback), method: .get,
                headers: [.cookie: "\u{2000}__Host-authkit_signin=\(attackerBinding); __Host-authkit_signin=\(binding)"]
            )
            #expect(lookalike.status == .badRequest && Self.cookies(lookalike)["__Host-authkit_session"] == nil)

            let callback = try await Self.consent(sandbox, location: location, publicURL: site)
            let finished = try await client.execute(
                uri: Self.pathAndQuery(callback), method: .get,
                headers: [.cookie: "authkit_signin=\(attackerBinding); __Host-authkit_signin=\(binding)"])
            #expect(finished.status == .found)
            let session = try #require(Self.cookies(finished)["__Host-authkit_session"])
            let me = try await client.execute(
                uri: "/me", method: .get, headers: [.cookie: "authkit_session=x; __Host-authkit_session=\(session)"])
            #expect(me.status == .ok && String(buffer: me.body).contains(#""subject":"sandbox-user-alice""#))
        }
    }

    /// `Origin` is compared with the public URL as a browser serializes it.
    @Test func theOriginOfThePublicURLIsWhatBrowsersSend() {
        #expect(WebSignIn.origin(of: URL(string: "https://App.Example/")!) == "https://app.example")
        #expect(WebSignIn.origin(of: URL(string: "HTTPS://app.example:443")!) == "https://app.example")
        #expect(WebSignIn.origin(of: URL(string: "http://[::1]:8080")!) == "http://[::1]:8080")
        #expect(WebSignIn.origin(of: URL(string: "https://app.example:8443/base")!) == "https://app.example:8443")
    }

    /// A configured `__Secure-` name becomes a `__Host-` one: `__Secure-`
    /// still lets a sibling subdomain plant the cookie for a longer path.
    @Test func aSecurePrefixedCookieNameBecomesHostPrefixed() throws {
        #expect(WebSignIn.hostPrefixed("__Secure-sid") == "__Host-sid")
        #expect(WebSignIn.hostPrefixed("__Host-sid") == "__Host-sid")
        #expect(WebSignIn.hostPrefixed("sid") == "__Host-sid")
        let web = WebSignIn(
            configuration: .init(publicURL: URL(string: "https://app.example")!, sessionCookie: "__Secure-sid"),
            clients: [], credentials: InMemoryCredentialStore(), store: InMemoryWebSignInStore())
        #expect(web.configuration.sessionCookie == "__Host-sid")
    }

    /// Sessions one of whose removals fails once (the database away for a
    /// moment): `removeSessions(of:)` for a sign-out everywhere (the browser's own
    /// session is still there, so the user can sign out again, and the second
    /// time everything ends), or `removeSession(id:)` for the old session a sign-in
    /// ends.
    final class SessionsFailingOnce: AlteredStore, @unchecked Sendable {
        enum Removal { case all, one }
        let failing: Removal
        let lock = NSLock()
        var failed = false
        init(_ failing: Removal) { self.failing = failing }
        override func removeSession(id: String) async throws {
            try failOnce(.one)
            try await super.removeSession(id: id)
        }
        override func removeSessions(of user: SignedInUser) async throws {
            try failOnce(.all)
            try await super.removeSessions(of: user)
        }
        private func failOnce(_ removal: Removal) throws {
            let fails = lock.withLock {
                defer { if removal == failing { failed = true } }
                return removal == failing && !failed
            }
            guard fails else { return }
            throw AuthKitError.store(path: "test", reason: .inaccessible("the database is away"))
        }
    }

    /// Credentials whose first two removals fail (a refresh elsewhere
    /// holding the lock too long): the one after the revocation, and the
    /// one when the revocation did not remove it.
    actor CredentialsFailingOnce: CredentialStore {
        let inner = InMemoryCredentialStore()
        var failures = 2
        func credential(for key: CredentialKey) async throws -> Credential? { await inner.credential(for: key) }
        func allCredentials() async throws -> [Credential] { await inner.allCredentials() }
        func save(_ credential: Credential) async throws { await inner.save(credential) }
        func remove(_ key: CredentialKey) async throws -> Credential? {
            if failures > 0 {
                failures -= 1
                throw AuthKitError.store(path: "test", reason: .busy("another instance has held it"))
            }
            return await inner.remove(key)
        }
    }

    /// Either step of sign-out everywhere failing once: the sessions, or the
    /// credential (the sandbox's Google has a revocation endpoint, but a
    /// failed removal after it is the same).
    @Test(arguments: [true, false]) func aSignOutThatFailedCanBeTriedAgain(sessionsFail: Bool) async throws {
        let sandbox = try await Self.google()
        defer { Task { await sandbox.stop() } }
        let stores: (any WebSignInStore, any CredentialStore) =
            sessionsFail
            ? (SessionsFailingOnce(.all), InMemoryCredentialStore())
            : (InMemoryWebSignInStore(), CredentialsFailingOnce())
        let (app, _) = try Self.app(sandbox, stores: stores)
        try await app.test(.router) { client in
            let first = try await Self.signIn(client, sandbox)
            let second = try await Self.signIn(client, sandbox)
            func signOut() async throws -> HTTPResponse.Status {
                try await client.execute(
                    uri: "/auth/logout", method: .post,
                    headers: [
                        .cookie: "authkit_session=\(first.session)", .contentType: "application/x-www-form-urlencoded",
                    ], body: ByteBuffer(string: "csrf=\(first.csrf)")
                ).status
            }
            func me(_ session: String) async throws -> HTTPResponse.Status {
                try await client.execute(uri: "/me", method: .get, headers: [.cookie: "authkit_session=\(session)"])
                    .status
            }
            #expect(try await signOut().code >= 500)
            #expect(try await me(first.session) == .ok, "the session this browser signs out with ended first")
            let again = try await signOut()
            #expect(again == .found || again == .ok, "\(again)")
            #expect(try await me(first.session) == .unauthorized)
            #expect(try await me(second.session) == .unauthorized)
        }
    }

    /// Attempts whose `take`s are counted, read in place as the in-memory
    /// store does.
    final class CountedAttempts: AlteredStore, @unchecked Sendable {
        let lock = NSLock()
        var taken = 0
        var takes: Int { lock.withLock { taken } }
        override func takeAttempt(id: String, now: Date) async throws -> SignInAttempt? {
            lock.withLock { taken += 1 }
            return try await super.takeAttempt(id: id, now: now)
        }
    }

    /// A sign-in in a browser that has a session ends that session: the
    /// new one replaces it there, and the old one, left in the store, stayed
    /// valid for a copy of its cookie and out of reach of any sign-out.
    @Test func aSignInOverASessionEndsIt() async throws {
        let sandbox = try await Self.google()
        defer { Task { await sandbox.stop() } }
        let (app, _) = try Self.app(sandbox)
        try await app.test(.router) { client in
            let alice = try await Self.signIn(client, sandbox)
            let bob = try await Self.signIn(client, sandbox, account: "bob", over: alice.session)
            let old = try await client.execute(
                uri: "/me", method: .get, headers: [.cookie: "authkit_session=\(alice.session)"])
            #expect(old.status == .unauthorized, "the replaced session still answers: \(old.status)")
            let new = try await client.execute(
                uri: "/me", method: .get, headers: [.cookie: "authkit_session=\(bob.session)"])
            #expect(new.status == .ok && String(buffer: new.body).contains("sandbox-user-bob"))
        }
    }

    /// Sessions whose removal by id fails once (the database away for a moment).
    /// The old session cannot be ended: the sign-in over it fails (503, no
    /// new session) rather than leave it valid beside the new one for a copy
    /// of its cookie, out of reach of a sign-out from this browser; the
    /// next one ends it.
    @Test func aSignInOverASessionThatCannotEndFails() async throws {
        let sandbox = try await Self.google()
        defer { Task { await sandbox.stop() } }
        let stores = (SessionsFailingOnce(.one), InMemoryCredentialStore())
        let (app, _) = try Self.app(sandbox, stores: stores)
        try await app.test(.router) { client in
            let alice = try await Self.signIn(client, sandbox)
            let started = try await client.execute(uri: "/auth/google", method: .get)
            let binding = try #require(Self.cookies(started)["authkit_signin"])
            let callback = try await Self.consent(
                sandbox, location: try #require(started.headers[.location]), account: "bob")
            let failed = try await client.execute(
                uri: Self.pathAndQuery(callback), method: .get,
                headers: [.cookie: "authkit_signin=\(binding); authkit_session=\(alice.session)"])
            #expect(failed.status == .serviceUnavailable && Self.cookies(failed)["authkit_session"] == nil)
            let bob = try await Self.signIn(client, sandbox, account: "bob", over: alice.session)
            let old = try await client.execute(
                uri: "/me", method: .get, headers: [.cookie: "authkit_session=\(alice.session)"])
            #expect(old.status == .unauthorized)
            let new = try await client.execute(
                uri: "/me", method: .get, headers: [.cookie: "authkit_session=\(bob.session)"])
            #expect(new.status == .ok)
        }
    }

    /// `Origin: null` (a form on a page with `Referrer-Policy: no-referrer`,
    /// as the Fetch standard has it) says nothing of where a sign-out comes
    /// from: with the session's CSRF token it signs out (it was refused, and
    /// such a site's users could never sign out); without, it is refused.
    @Test func aSignOutWithANullOriginNeedsItsToken() async throws {
        let sandbox = try await Self.google()
        defer { Task { await sandbox.stop() } }
        let (app, _) = try Self.app(sandbox)
        try await app.test(.router) { client in
            let alice = try await Self.signIn(client, sandbox)
            func signOut(csrf: String) async throws -> HTTPResponse.Status {
                try await client.execute(
                    uri: "/auth/logout", method: .post,
                    headers: [
                        .cookie: "authkit_session=\(alice.session)", .contentType: "application/x-www-form-urlencoded",
                        .origin: "null",
                    ], body: ByteBuffer(string: "csrf=\(csrf)")
                ).status
            }
            #expect(try await signOut(csrf: "forged") == .forbidden)
            #expect(try await signOut(csrf: alice.csrf) == .found)
            let after = try await client.execute(
                uri: "/me", method: .get, headers: [.cookie: "authkit_session=\(alice.session)"])
            #expect(after.status == .unauthorized)
        }
    }

    /// The provider id in the path is the link writer's text: the page does
    /// not repeat it (`/auth/Account-locked.Call-…`), and the error's
    /// description (for the log) has it sanitized and bounded (40 scalars:
    /// `prefix(40)` counted characters, and one letter with 10,000
    /// combining marks passed whole).
    @Test func anUnknownProvidersIdIsNotShownToTheVisitor() async throws {
        let sandbox = try await Self.google()
        defer { Task { await sandbox.stop() } }
        let (app, _) = try Self.app(sandbox)
        try await app.test(.router) { client in
            let answer = try await client.execute(uri: "/auth/Account-locked.Call-0800-555-0100", method: .get)
            #expect(answer.status == .notFound)
            #expect(!String(buffer: answer.body).contains("Account-locked"), "\(String(buffer: answer.body))")
        }
        let combining = AuthKitError.webSignIn(.unknownProvider("a" + String(repeating: "\u{301}", count: 10_000)))
        #expect(combining.description.utf8.count < 300)
        #expect(!AuthKitError.webSignIn(.unknownProvider("\u{202E}x")).description.unicodeScalars.contains("\u{202E}"))
    }

    /// Two sign-ins under way in one browser (two tabs, or a page elsewhere
    /// that sends the browser to a start meanwhile) both finish: the second
    /// start binds its attempt to the cookie the browser already has. A new
    /// value at each start replaced it, and the first callback was refused
    /// as another browser's.
    @Test func twoSignInsOfOneBrowserBothFinish() async throws {
        let sandbox = try await Self.google()
        defer { Task { await sandbox.stop() } }
        let (app, _) = try Self.app(sandbox)
        try await app.test(.router) { client in
            let first = try await client.execute(uri: "/auth/google", method: .get)
            let binding = try #require(Self.cookies(first)["authkit_signin"])
            let second = try await client.execute(
                uri: "/auth/google", method: .get, headers: [.cookie: "authkit_signin=\(binding)"])
            #expect(Self.cookies(second)["authkit_signin"] == binding)
            // A value this server could not have made is not taken up.
            let planted = try await client.execute(
                uri: "/auth/google", method: .get, headers: [.cookie: "authkit_signin=chosen-by-someone"])
            #expect(Self.cookies(planted)["authkit_signin"] != "chosen-by-someone")
            for started in [first, second] {
                let callback = try await Self.consent(sandbox, location: try #require(started.headers[.location]))
                let finished = try await client.execute(
                    uri: Self.pathAndQuery(callback), method: .get, headers: [.cookie: "authkit_signin=\(binding)"])
                #expect(
                    finished.status == .found && Self.cookies(finished)["authkit_session"] != nil, "\(finished.status)")
            }
        }
    }

    /// A callback that fails the browser check takes nothing from the store:
    /// a flood of them by whoever learned the `state` leaves no moment in
    /// which the rightful callback finds no attempt.
    @Test func aRefusedCallbackTakesNothing() async throws {
        let sandbox = try await Self.google()
        defer { Task { await sandbox.stop() } }
        let attempts = CountedAttempts()
        // A second provider is configured, so a callback at its path reaches
        // the check that the attempt is that provider's (unconfigured, it
        // was refused with 404 before it).
        let google = try OAuth2Client(descriptor: sandbox.descriptor, settings: sandbox.clientSettings)
        let github = try OAuth2Client(
            descriptor: try ProviderCatalog(includeBundled: true, directories: []).descriptor(id: "github"),
            settings: ClientSettings(clientID: "gh-client", clientSecret: "gh-secret"))
        let web = WebSignIn(
            configuration: .init(publicURL: Self.publicURL), clients: [google, github],
            credentials: InMemoryCredentialStore(), store: attempts)
        let (app, _) = try Self.app(sandbox, web: web)
        try await app.test(.router) { client in
            let started = try await client.execute(uri: "/auth/google", method: .get)
            let binding = try #require(Self.cookies(started)["authkit_signin"])
            let callback = try await Self.consent(sandbox, location: try #require(started.headers[.location]))
            for cookie in ["", "authkit_signin=forged"] {
                let refused = try await client.execute(
                    uri: Self.pathAndQuery(callback), method: .get, headers: cookie.isEmpty ? [:] : [.cookie: cookie])
                #expect(refused.status == .badRequest)
            }
            let wrongPath = try await client.execute(
                uri: "/auth/github/callback?" + (callback.query ?? ""), method: .get,
                headers: [.cookie: "authkit_signin=\(binding)"])
            #expect(wrongPath.status == .badRequest, "\(wrongPath.status)")
            #expect(attempts.takes == 0)
            let own = try await client.execute(
                uri: Self.pathAndQuery(callback), method: .get, headers: [.cookie: "authkit_signin=\(binding)"])
            #expect(own.status == .found && Self.cookies(own)["authkit_session"] != nil)
            #expect(attempts.takes == 1)
        }
    }

    /// A callback whose code exchange cannot reach the provider (it has gone
    /// away since the consent) is answered 502 with a fixed page: the
    /// error's own words named the token endpoint's URL, an internal host
    /// for a self-hosted provider. The log has them.
    @Test func aProviderThatCannotBeReachedIsAFixedPage() async throws {
        let sandbox = try await Self.google()
        let (app, _) = try Self.app(sandbox)
        try await app.test(.router) { client in
            let started = try await client.execute(uri: "/auth/google", method: .get)
            let binding = try #require(Self.cookies(started)["authkit_signin"])
            let callback = try await Self.consent(sandbox, location: try #require(started.headers[.location]))
            let host = try #require(sandbox.baseURL.host)
            await sandbox.stop()
            let answered = try await client.execute(
                uri: Self.pathAndQuery(callback), method: .get, headers: [.cookie: "authkit_signin=\(binding)"])
            let page = String(buffer: answered.body)
            #expect(answered.status == .badGateway, "\(answered.status)")
            #expect(page.contains("the provider could not be reached") && !page.contains(host), "\(page)")
        }
    }

    /// An unusable key set is said in fixed words: its error names the
    /// `jwks_uri` (an internal host, for a provider of the organisation's
    /// own) and where it redirected; the other ID token checks keep theirs.
    @Test func anUnusableKeySetIsAFixedPage() {
        let text = WebSignIn.failureText(
            .idTokenRejected(
                providerID: "keycloak",
                reason: .keySetUnusable("https://idp.internal:8443/realms/x/certs answered 503")))
        #expect(text.contains("signing keys could not be read") && !text.contains("idp.internal"), "\(text)")
        let audience = WebSignIn.failureText(
            .idTokenRejected(providerID: "google", reason: .audienceMismatch(clientID: "app", received: ["other"])))
        #expect(audience.contains("other"), "\(audience)")
    }

    /// A provider's `error` on the callback is answered by what it means:
    /// the user declining is 403, logged at info; the provider's trouble
    /// (`temporarily_unavailable` 503, `server_error` and the app's own
    /// misconfiguration 502) is not the user's refusal, and is logged as a
    /// warning (every error was a 403 at info, and a sign-in failing for
    /// everyone reached the operator only through its users).
    @Test func aProvidersErrorIsAnsweredByWhatItMeans() async throws {
        let sandbox = try await Self.google()
        defer { Task { await sandbox.stop() } }
        let (app, _) = try Self.app(sandbox)
        try await app.test(.router) { client in
            for (code, status) in [
                ("access_denied", HTTPResponse.Status.forbidden), ("temporarily_unavailable", .serviceUnavailable),
                ("server_error", .badGateway), ("invalid_scope", .badGateway),
            ] {
                let started = try await client.execute(uri: "/auth/google", method: .get)
                let binding = try #require(Self.cookies(started)["authkit_signin"])
                let callback = try await Self.consent(sandbox, location: try #require(started.headers[.location]))
                // The provider's answer, with an error in place of the code (RFC 6749 §4.1.2.1).
                var answer = try #require(URLComponents(url: callback, resolvingAgainstBaseURL: false))
                answer.queryItems =
                    (answer.queryItems ?? []).filter { $0.name != "code" } + [
                        URLQueryItem(name: "error", value: code),
                        URLQueryItem(name: "error_description", value: "Your account is locked: call +1 555 0100"),
                    ]
                let answered = try await client.execute(
                    uri: Self.pathAndQuery(try #require(answer.url)), method: .get,
                    headers: [.cookie: "authkit_signin=\(binding)"])
                #expect(answered.status == status, "\(code): \(answered.status) \(String(buffer: answered.body))")
                #expect(String(buffer: answered.body).contains(code))
                // Whoever learned the `state` could send the browser here with
                // text of their own: it is logged, not shown.
                #expect(!String(buffer: answered.body).contains("555"), "\(String(buffer: answered.body))")
            }
            // So with an `iss` of their own text (checked before the error).
            let started = try await client.execute(uri: "/auth/google", method: .get)
            let binding = try #require(Self.cookies(started)["authkit_signin"])
            let callback = try await Self.consent(sandbox, location: try #require(started.headers[.location]))
            var answer = try #require(URLComponents(url: callback, resolvingAgainstBaseURL: false))
            answer.queryItems =
                (answer.queryItems ?? []).filter { $0.name != "iss" } + [
                    URLQueryItem(name: "iss", value: "Your account is locked: call +1 555 0100")
                ]
            let answered = try await client.execute(
                uri: Self.pathAndQuery(try #require(answer.url)), method: .get,
                headers: [.cookie: "authkit_signin=\(binding)"])
            #expect(answered.status.code >= 400 && !String(buffer: answered.body).contains("555"))
        }
    }

    /// Attempts whose every write fails as a database away would, with the
    /// database's address in the error.
    final class UnreachableAttempts: AlteredStore, @unchecked Sendable {
        override func insert(_ attempt: SignInAttempt, id: String) async throws {
            throw AuthKitError.store(
                path: "postgresql://db.internal:5432/app",
                reason: .inaccessible("PostgreSQL refused: no such table (SQLSTATE 42P01)"))
        }
    }

    /// A public URL no sign-in can finish at is refused at the start (it
    /// was a 302 to the provider, and every callback then failed for want of
    /// a binding cookie the browser had dropped): plain http off this
    /// machine gets `Secure` cookies over http. The page names nothing of
    /// the configuration; a path (a proxy that strips it) is allowed, if it
    /// is one a browser reaches as written.
    @Test func aPublicURLNoSignInCanFinishAtIsRefusedAtTheStart() async throws {
        let sandbox = try await Self.google()
        defer { Task { await sandbox.stop() } }
        for (text, refused) in [
            ("http://app.example", true), ("http://192.168.1.5:8080", true), ("https://app.example/base", false),
            ("http://localhost:8080", false), ("http://[::1]:8080", false),
            // Scheme and host without regard to case, as browsers read them.
            ("HTTPS://App.Example", false), ("http://LocalHost:8080", false),
            // A path every Location begins with: `%2F` made it `//evil.example`
            // (a redirect to another host after each sign-in); a space an invalid one.
            ("https://app.example/%2Fevil.example", true), ("https://app.example/a%20b", true),
            ("https://app.example/base/../x", true), ("https://app.example/base/", false),
            ("https://app.example/", false),
        ] {
            let (app, web) = try Self.app(sandbox, publicURL: URL(string: text)!)
            var misuse = false
            do {
                _ = try await web.start(providerID: "google", returnTo: "/")
            } catch let error as AuthKitError {
                guard case .misuse(.invalidParameter(name: "configuration.publicURL", _)) = error.reason else {
                    throw error
                }
                misuse = true
            }
            #expect(misuse == refused, "\(text)")
            try await app.test(.router) { client in
                let started = try await client.execute(uri: "/auth/google", method: .get)
                if refused {
                    let page = String(buffer: started.body)
                    #expect(
                        started.status == .internalServerError && !page.contains("app.example")
                            && !page.contains("192.168"), "\(text): \(page)")
                    #expect(started.headers[.setCookie] == nil)
                } else {
                    #expect(started.status == .found, "\(text)")
                }
            }
        }
        #expect(WebSignIn.publicURLProblem(URL(string: "http://app.example")!)?.contains("plain http") == true)
        #expect(WebSignIn.publicURLProblem(URL(string: "ftp://app.example")!) != nil)
        #expect(WebSignIn.publicURLProblem(URL(string: "https://app.example")!) == nil)
        // A loopback site written in capitals: its cookies were Secure, and browsers dropped them.
        #expect(!WebSignIn.cookiesAreSecure(at: URL(string: "HTTP://LocalHost:8080")!))
    }

    /// A store's error is for the operator: the page says the service is
    /// unavailable (503), never the database's address or its refusal.
    @Test func aStoresErrorPageNamesNoDatabase() async throws {
        let sandbox = try await Self.google()
        defer { Task { await sandbox.stop() } }
        let (app, _) = try Self.app(
            sandbox, stores: (UnreachableAttempts(), InMemoryCredentialStore()))
        try await app.test(.router) { client in
            let started = try await client.execute(uri: "/auth/google", method: .get)
            let page = String(buffer: started.body)
            #expect(started.status == .serviceUnavailable)
            #expect(page.contains("unavailable") && !page.contains("db.internal") && !page.contains("42P01"))
            #expect(started.headers[HTTPField.Name("Referrer-Policy")!] == "no-referrer")
        }
        // A store of the app's own throwing its own error type: the same
        // page and status (it was Hummingbird's bare 500, unlogged by the route).
        let (own, _) = try Self.app(
            sandbox, stores: (OwnErrorAttempts(), InMemoryCredentialStore()))
        try await own.test(.router) { client in
            let started = try await client.execute(uri: "/auth/google", method: .get)
            #expect(started.status == .serviceUnavailable)
            #expect(String(buffer: started.body).contains("unavailable"))
        }
    }

    /// Attempts that fail with an error of their own, not AuthKit's.
    final class OwnErrorAttempts: AlteredStore, @unchecked Sendable {
        struct Refused: Error {}
        override func insert(_ attempt: SignInAttempt, id: String) async throws { throw Refused() }
    }

    /// A provider whose ID token fails a check: no session, a 502 page that says why.
    @Test func aRefusedIDTokenMakesNoSession() async throws {
        let google = try ProviderCatalog(includeBundled: true, directories: []).descriptor(id: "google")
        let sandbox = try await Sandbox.start(
            emulating: google,
            options: SandboxOptions(
                redirectURIs: [Self.publicURL.absoluteString + "/auth/google/callback"], idTokenFault: "wrong-audience")
        )
        defer { Task { await sandbox.stop() } }
        let (app, _) = try Self.app(sandbox)
        try await app.test(.router) { client in
            let started = try await client.execute(uri: "/auth/google", method: .get)
            let binding = try #require(Self.cookies(started)["authkit_signin"])
            let callback = try await Self.consent(sandbox, location: try #require(started.headers[.location]))
            let finished = try await client.execute(
                uri: Self.pathAndQuery(callback), method: .get, headers: [.cookie: "authkit_signin=\(binding)"])
            #expect(finished.status == .badGateway && Self.cookies(finished)["authkit_session"] == nil)
            #expect(String(buffer: finished.body).contains("addressed to"))
        }
    }

    /// A provider without OpenID Connect says who signed in through its
    /// descriptor's `whoAmI` call (GitHub's `GET /user`); without one, no
    /// sign-in can finish, which is said at the start as the configuration
    /// problem it is (500, an error in the log, nothing sent to the
    /// provider): it was found at each callback, after the user's consent,
    /// and logged at debug.
    @Test(arguments: [true, false])
    func withoutOpenIDTheWhoAmICallSaysWho(hasWhoAmI: Bool) async throws {
        let whoAmI =
            hasWhoAmI ? #", "whoAmI": {"url": "https://api.hub.example/user", "subject": "id", "name": "login"}"# : ""
        let hub = try ProviderDescriptor(
            json: Data(
                """
                {"id": "hub", "name": "Hub", "protocol": "oauth2",
                 "authorization": {"url": "https://hub.example/login/oauth/authorize"},
                 "token": {"url": "https://hub.example/login/oauth/access_token"}\(whoAmI)}
                """.utf8))
        let sandbox = try await Sandbox.start(
            emulating: hub,
            options: SandboxOptions(redirectURIs: [Self.publicURL.absoluteString + "/auth/hub/callback"]))
        defer { Task { await sandbox.stop() } }
        let log = CapturedLog()
        let (app, web) = try Self.app(sandbox, logger: log.logger)
        try await app.test(.router) { client in
            let started = try await client.execute(uri: "/auth/hub", method: .get)
            guard hasWhoAmI else {
                #expect(started.status == .internalServerError && started.headers[.setCookie] == nil)
                #expect(
                    log.lines.contains {
                        $0.level == .error && $0.message.contains("cannot say who signed in")
                            && $0.message.contains("whoAmI")
                    })
                #expect(sandbox.events.isEmpty, "\(sandbox.events)")
                return
            }
            let binding = try #require(Self.cookies(started)["authkit_signin"])
            let location = try #require(started.headers[.location])
            let session = AuthorizationSession(
                providerName: "Hub", redirectURI: URL(string: Self.publicURL.absoluteString + "/auth/hub/callback"),
                redirectPortIsFlexible: false, makeAuthorizationURL: { _ in URL(string: location)! },
                validateRedirect: { _ in })
            let callback = try await sandbox.userAgent(account: "bob").run(session)
            let finished = try await client.execute(
                uri: Self.pathAndQuery(callback), method: .get, headers: [.cookie: "authkit_signin=\(binding)"])
            let cookie = try #require(Self.cookies(finished)["authkit_session"])
            let me = try await client.execute(
                uri: "/me", method: .get, headers: [.cookie: "authkit_session=\(cookie)"])
            #expect(String(buffer: me.body).contains(#""subject":"sandbox-user-bob""#))
            let signedIn = try #require(try await web.session(cookie: cookie))
            let said = try await web.providerAnswer(for: signedIn.user)
            #expect(said?["login"] == .string("bob") && said?["id"] == .string("sandbox-user-bob"))
        }
    }
}

/// The in-memory store with a test's changes: a subclass overrides the
/// calls it alters, and the rest go to the in-memory store.
class AlteredStore: WebSignInStore, @unchecked Sendable {
    let inner = InMemoryWebSignInStore()
    func insert(_ attempt: SignInAttempt, id: String) async throws { try await inner.insert(attempt, id: id) }
    func takeAttempt(id: String, now: Date) async throws -> SignInAttempt? {
        try await inner.takeAttempt(id: id, now: now)
    }
    func attempt(id: String, now: Date) async throws -> SignInAttempt? { try await inner.attempt(id: id, now: now) }
    func insert(_ session: WebSession, id: String) async throws { try await inner.insert(session, id: id) }
    func session(id: String, now: Date) async throws -> WebSession? { try await inner.session(id: id, now: now) }
    func removeSession(id: String) async throws { try await inner.removeSession(id: id) }
    func removeSessions(of user: SignedInUser) async throws { try await inner.removeSessions(of: user) }
}
