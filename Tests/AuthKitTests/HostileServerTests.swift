import AuthKitTestSupport
import Foundation
import HTTPTypes
import Logging
import Testing

@testable import AuthKit

#if canImport(FoundationNetworking)
    import AuthKitFoundationNetworking // URLSessionHTTPClient on Linux
#endif

/// Every request that carries a credential goes through one policy
/// (`RequestPolicy`, applied by `FlowTransport` for every `HTTPClient`). These
/// tests play the servers a polite stub never is: one that redirects the
/// token request elsewhere, inflates, drips, floods or echoes what it was sent.
@Suite struct HostileServerTests {
    static let secret = "s3cr3t+/&=~client"

    func client(
        _ server: TestHTTPServer, secret: String? = HostileServerTests.secret, auth: ClientAuthentication = .basic,
        revocation: Bool = false
    ) throws -> OAuth2Client {
        let descriptor = testDescriptor(
            id: "hostile", protocol: .oauth2,
            authorization: .init(url: "\(server.baseURL)/authorize"),
            token: .init(url: "\(server.baseURL)/token", clientAuthentication: auth), pkce: .s256,
            revocation: revocation ? .init(url: "\(server.baseURL)/revoke") : nil)
        // The platform's default transport: what a user of OAuth2Client gets.
        return try OAuth2Client(descriptor: descriptor, settings: ClientSettings(clientID: "app", clientSecret: secret))
    }

    func pending(for client: OAuth2Client) async throws -> PendingAuthorization {
        try await client.startAuthorization(redirectURI: URL(string: "http://127.0.0.1:5000/callback")).pending
    }

    // MARK: - Redirects

    /// `server`, and `elsewhere` at another origin, for redirects that leave it.
    func withTwoServers(_ body: (TestHTTPServer, TestHTTPServer) async throws -> Void) async throws {
        try await withServer { server in
            let elsewhere = TestHTTPServer()
            try await elsewhere.start()
            defer { Task { await elsewhere.stop() } }
            try await body(server, elsewhere)
        }
    }

    @Test(arguments: [301, 302, 303, 307, 308], ["127.0.0.1", "127.0.0.2"])
    func aTokenRequestNeverFollowsARedirect(status: Int, otherHost: String) async throws {
        try await withServer { server in
            let elsewhere = TestHTTPServer(host: otherHost)
            try await elsewhere.start()
            defer { Task { await elsewhere.stop() } }
            elsewhere.route("POST", "/token") { _ in .json(#"{"access_token":"stolen","token_type":"Bearer"}"#) }
            server.route("POST", "/token") { _ in .redirect(status, to: "\(elsewhere.baseURL)/token?x=1") }
            let client = try client(server)
            await #expect(
                throws: AuthKitError.redirectNotFollowed(
                    step: .tokenExchange, status: status, location: elsewhere.baseURL)
            ) {
                _ = try await client.exchange(code: "the-code", pending: pending(for: client))
            }
            #expect(elsewhere.requests.isEmpty, "the client secret and code were resent to \(elsewhere.baseURL)")
        }
    }

    @Test func refreshAndRevocationNeverFollowARedirect() async throws {
        try await withTwoServers { server, elsewhere in
            server.route("POST", "/token") { _ in .redirect(307, to: "\(elsewhere.baseURL)/token") }
            server.route("POST", "/revoke") { _ in .redirect(308, to: "\(elsewhere.baseURL)/revoke") }
            let client = try client(server, revocation: true)
            let credential = Credential(
                providerID: "hostile", accessToken: "access-token-1", refreshToken: "refresh-token-1")
            await #expect(
                throws: AuthKitError.redirectNotFollowed(step: .refresh, status: 307, location: elsewhere.baseURL)
            ) {
                _ = try await client.refresh(credential)
            }
            await #expect(
                throws: AuthKitError.redirectNotFollowed(step: .revocation, status: 308, location: elsewhere.baseURL)
            ) {
                try await client.revoke(credential)
            }
            #expect(elsewhere.requests.isEmpty)
        }
    }

    /// An authorized resource request follows redirects only when asked, and
    /// the credential stays on its origin (RFC 9110 §15.4).
    @Test func aResourceRequestKeepsTheCredentialToItsOrigin() async throws {
        try await withTwoServers { server, elsewhere in
            server.route("POST", "/start") { _ in .redirect(307, to: "/same") }
            server.route("POST", "/same") { _ in .redirect(303, to: "\(elsewhere.baseURL)/other") }
            elsewhere.route("GET", "/other") { _ in .json(#"{"ok":true}"#) }
            let transport = FlowTransport(http: defaultHTTPClient(), logger: Logger(label: "test"))
            var request = OutgoingRequest(method: .post, url: URL(string: "\(server.baseURL)/start")!)
            request.body = Data("a=1".utf8)
            request.setHeader("Content-Type", "application/x-www-form-urlencoded")
            request.setHeader("Cookie", "session=1")
            let policy = RequestPolicy(redirects: .follow(maximum: 5), maximumBodySize: 1 << 20, deadline: .seconds(20))
            let opened = try await transport.open(request, step: .apiRequest, policy: policy) { request in
                var authorized = request
                authorized.setHeader("Authorization", "Bearer the-token")
                return authorized
            }
            #expect(opened.status == 200)
            #expect(try await opened.collect() == Data(#"{"ok":true}"#.utf8))
            let start = try #require(server.requests(to: "/start").first)
            let same = try #require(server.requests(to: "/same").first)
            #expect(start.header("Authorization") == "Bearer the-token")
            #expect(
                same.header("Authorization") == "Bearer the-token" && same.method == "POST" && same.bodyText == "a=1",
                "307 keeps method, body and credential on the same origin")
            let other = try #require(elsewhere.requests(to: "/other").first)
            #expect(other.method == "GET" && other.body.isEmpty, "303 turns the POST into a GET")
            #expect(
                other.header("Authorization") == nil && other.header("Cookie") == nil,
                "credential sent to another origin")

            // Without following, the 3xx is the answer (curl without -L).
            let delivered = try await transport.open(
                request, step: .apiRequest,
                policy: RequestPolicy(
                    redirects: .deliver, maximumBodySize: 1 << 20, deadline: .seconds(20)))
            #expect(delivered.status == 307)
        }
    }

    /// Once a hop has left the origin, no later hop carries the credential:
    /// the other host chose the way back (a 307 there sent the user's
    /// credential, method and body to a path of its choosing). A 301 or 302
    /// to a DELETE is not followed (it became a GET, did nothing, and
    /// answered 200); nor a redirect to a URL with a user name or password
    /// (libcurl sent them to that host as Basic credentials).
    @Test func aHopBackFromAnotherOriginGoesWithoutTheCredential() async throws {
        try await withTwoServers { server, elsewhere in
            server.route("POST", "/start") { _ in .redirect(307, to: "\(elsewhere.baseURL)/bounce") }
            elsewhere.route("POST", "/bounce") { _ in .redirect(307, to: "\(server.baseURL)/transfer") }
            server.route("POST", "/transfer") { _ in .json(#"{"moved":true}"#) }
            server.route("DELETE", "/item") { _ in .redirect(302, to: "/item-moved") }
            server.route("DELETE", "/item-moved") { _ in .json(#"{"deleted":true}"#) }
            let userinfo = elsewhere.baseURL.replacingOccurrences(of: "http://", with: "http://user:pw@")
            server.route("GET", "/userinfo") { _ in .redirect(302, to: "\(userinfo)/ui") }
            let transport = FlowTransport(http: defaultHTTPClient(), logger: Logger(label: "test"))
            let policy = RequestPolicy(redirects: .follow(maximum: 5), maximumBodySize: 1 << 20, deadline: .seconds(20))
            let authorize: @Sendable (OutgoingRequest) async throws -> OutgoingRequest = { request in
                var authorized = request
                authorized.setHeader("Authorization", "Bearer the-token")
                return authorized
            }
            var post = OutgoingRequest(method: .post, url: URL(string: "\(server.baseURL)/start")!)
            post.body = Data("amount=100".utf8)
            let opened = try await transport.open(post, step: .apiRequest, policy: policy, authorize: authorize)
            #expect(opened.status == 200)
            let back = try #require(server.requests(to: "/transfer").first)
            #expect(back.header("Authorization") == nil, "the hop back from another origin carried the credential")

            // A 302 to a DELETE is not followed at all: as a DELETE it would
            // remove what the server picked, as a GET it did nothing (and 200).
            await #expect {
                _ = try await transport.open(
                    OutgoingRequest(method: .delete, url: URL(string: "\(server.baseURL)/item")!), step: .apiRequest,
                    policy: policy, authorize: authorize)
            } throws: { error in
                "\(error)".contains("a 302 answering DELETE")
            }
            #expect(server.requests(to: "/item-moved").isEmpty)
            // A Location with a path only takes the request's authority: not refused for a user name.
            server.route("GET", "/relative") { _ in .redirect(302, to: "/item-moved-get") }
            server.route("GET", "/item-moved-get") { _ in .json("{}") }
            let relative = try await transport.open(
                OutgoingRequest(method: .get, url: URL(string: "\(server.baseURL)/relative")!), step: .apiRequest,
                policy: policy, authorize: authorize)
            #expect(relative.status == 200)

            await #expect(throws: AuthKitError.self) {
                _ = try await transport.open(
                    OutgoingRequest(method: .get, url: URL(string: "\(server.baseURL)/userinfo")!),
                    step: .apiRequest, policy: policy, authorize: authorize)
            }
            #expect(elsewhere.requests(to: "/ui").isEmpty)
        }
    }

    /// A redirect with two `Location` fields has none usable (RFC 9110
    /// §10.2.2 allows one): they were joined with ", " and followed as the
    /// path "/a,%20http://…". One to a `file:` URL is not followed, and the
    /// error says which redirects are.
    @Test func aRedirectWithTwoLocationsOrToAFileIsNotFollowed() async throws {
        try await withServer { server in
            server.route("GET", "/two") { _ in
                StubResponse(
                    status: 302, headers: [("Location", "/a"), ("Location", "\(server.baseURL)/b")], body: Data())
            }
            server.route("GET", "/file") { _ in .redirect(302, to: "file:///etc/passwd") }
            let transport = FlowTransport(http: defaultHTTPClient(), logger: Logger(label: "test"))
            let policy = RequestPolicy(redirects: .follow(maximum: 5), maximumBodySize: 1024, deadline: .seconds(10))
            await #expect(
                throws: AuthKitError.redirectNotFollowed(
                    step: .apiRequest, status: 302, location: "(no usable Location)")
            ) {
                _ = try await transport.open(
                    OutgoingRequest(method: .get, url: URL(string: "\(server.baseURL)/two")!), step: .apiRequest,
                    policy: policy)
            }
            // A Location whose host is none (`http:\\host\path`, which leaves
            // no host) or no host name (an escape, a space, a non-ASCII
            // letter): handed to the transport, it failed as a network error,
            // "The request to (no URL) failed".
            for (path, location) in [
                ("/backslashes", #"http:\\127.0.0.1:1\landed"#), ("/escape", "http://ex%1Bample.com/"),
                ("/letter", "http://exämple.com/"), ("/space", "http://ex ample.com/"),
            ] {
                server.route("GET", path) { _ in
                    StubResponse(status: 302, headers: [("Location", location)], body: Data())
                }
                await #expect(
                    throws: AuthKitError.redirectNotFollowed(
                        step: .apiRequest, status: 302, location: "(no usable Location)"), "\(path)"
                ) {
                    _ = try await transport.open(
                        OutgoingRequest(method: .get, url: URL(string: "\(server.baseURL)\(path)")!), step: .apiRequest,
                        policy: policy)
                }
            }
            #expect(
                FlowTransport.hasUsableHost(URL(string: "http://[::1]:8080/x")!)
                    && FlowTransport.hasUsableHost(URL(string: "https://api.example-1.com/")!))
            await #expect {
                _ = try await transport.open(
                    OutgoingRequest(method: .get, url: URL(string: "\(server.baseURL)/file")!), step: .apiRequest,
                    policy: policy)
            } throws: { error in
                "\(error)".contains("only to an http or https URL")
                    && !"\(error)".contains("from https to http, or past")
            }
            #expect(
                server.requests.map(\.path) == ["/two", "/backslashes", "/escape", "/letter", "/space", "/file"],
                "a redirect was followed: \(server.requests.map(\.uri))")
        }
    }

    /// A loop is followed to the limit, and the error says so: it read
    /// "a redirect to …, which was not followed", after ten were.
    @Test func aRedirectLoopEndsAtTheLimitAndSaysSo() async throws {
        try await withServer { server in
            server.route("GET", "/loop") { _ in .redirect(302, to: "/loop") }
            let transport = FlowTransport(http: defaultHTTPClient(), logger: Logger(label: "test"))
            let policy = RequestPolicy(redirects: .follow(maximum: 3), maximumBodySize: 1024, deadline: .seconds(10))
            await #expect {
                _ = try await transport.open(
                    OutgoingRequest(method: .get, url: URL(string: "\(server.baseURL)/loop")!), step: .apiRequest,
                    policy: policy)
            } throws: { error in
                "\(error)".contains("(after 3 redirects followed, the limit)")
            }
            #expect(server.requests(to: "/loop").count == 4)
        }
    }

    @Test func httpsToHttpIsNeverFollowed() async throws {
        try await withServer { server in
            server.route("GET", "/downgraded") { _ in .json("{}") }
            let https = ScriptedTransport { request in
                request.url?.host == "secure.test" ? .redirect(302, to: "\(server.baseURL)/downgraded") : .json("{}")
            }
            let transport = FlowTransport(http: https, logger: Logger(label: "test"))
            let request = OutgoingRequest(method: .get, url: URL(string: "https://secure.test/data")!)
            await #expect(
                throws: AuthKitError.redirectNotFollowed(
                    step: .apiRequest, status: 302, location: server.baseURL + " (from https to plain http)")
            ) {
                _ = try await transport.open(
                    request, step: .apiRequest,
                    policy: RequestPolicy(redirects: .follow(maximum: 5), maximumBodySize: 1024, deadline: .seconds(5))
                ) {
                    var authorized = $0
                    authorized.setHeader("Authorization", "Bearer t")
                    return authorized
                }
            }
            #expect(server.requests.isEmpty && https.count == 1)
        }
    }

    @Test func aCredentialGoesOverPlainHTTPOnlyToLoopback() async throws {
        let nowhere = ScriptedTransport { _ in .json(#"{"access_token":"a","token_type":"Bearer"}"#) }
        let descriptor = testDescriptor(
            id: "plain", protocol: .oauth2, authorization: .init(url: "http://192.0.2.1/authorize"),
            token: .init(url: "http://192.0.2.1/token"))
        let client = try OAuth2Client(
            descriptor: descriptor, settings: ClientSettings(clientID: "app", clientSecret: "s"), httpClient: nowhere)
        await #expect(throws: AuthKitError.insecureTransport(url: "http://192.0.2.1/token")) {
            _ = try await client.exchange(code: "c", pending: pending(for: client))
        }
        #expect(nowhere.count == 0)
        // Nor does a header made for one: `authorize(_:body:with:)` (and the
        // URLRequest form, and `authkit token header`) gave a Bearer header
        // for any URL, and the caller's client sent it in the clear
        // (RFC 6750 §5.3). https and this machine still get one.
        let credential = Credential(providerID: "plain", accessToken: "bearer-secret")
        #expect(throws: AuthKitError.insecureTransport(url: "http://api.example/me?…")) {
            _ = try client.authorize(
                HTTPRequest(method: .get, url: URL(string: "http://api.example/me?x=1")!), body: nil, with: credential)
        }
        for allowed in ["https://api.example/me", "http://127.0.0.1:8080/me", "http://localhost/me"] {
            let authorized = try client.authorize(
                HTTPRequest(method: .get, url: URL(string: allowed)!), body: nil, with: credential)
            #expect(authorized.headerFields[.authorization] == "Bearer bearer-secret", "\(allowed)")
        }
    }

    /// An `Authenticator` of the caller's that moves the request (here: the
    /// token in the query, as some old APIs want it) is sent where its head
    /// says, through the default transport, which is handed the URL parsed
    /// rather than reading it back from the head.
    @Test func aRequestAnAuthenticatorMovedGoesWhereItsHeadSays() async throws {
        try await withServer { server in
            server.route("GET", "/me") { _ in .json(#"{"ok":true}"#) }
            let descriptor = testDescriptor(
                id: "query", protocol: .oauth2, authorization: .init(url: "\(server.baseURL)/authorize"),
                token: .init(url: "\(server.baseURL)/token"))
            let client = try OAuth2Client(descriptor: descriptor, settings: ClientSettings(clientID: "app"))
            let credential = Credential(providerID: "query", accessToken: "in-the-query")
            let source = CredentialSource(
                authenticator: TokenInTheQuery(client: client), store: InMemoryCredentialStore([credential]),
                key: credential.key)
            let (response, _) = try await source.send(
                HTTPRequest(method: .get, url: URL(string: "\(server.baseURL)/me")!))
            #expect(response.status == .ok)
            let received = try #require(server.requests(to: "/me").first)
            #expect(received.uri == "/me?access_token=in-the-query")

            // One that loses the URL is refused before anything is sent.
            let lost = CredentialSource(
                authenticator: TokenInTheQuery(client: client, losingTheHost: true),
                store: InMemoryCredentialStore([credential]), key: credential.key)
            await #expect(
                throws: AuthKitError.misuse(
                    .unsignableRequest(
                        "TokenInTheQuery.authorize(_:body:with:) returned a request with no absolute URL."))
            ) {
                _ = try await lost.send(HTTPRequest(method: .get, url: URL(string: "\(server.baseURL)/me")!))
            }
            #expect(server.requests(to: "/me").count == 1)
        }
    }

    /// A request moved elsewhere (a redirect, or the caller's `Authenticator`)
    /// is named by where it goes in logs and errors, its query still hidden.
    @Test func aMovedRequestIsNamedByItsNewTarget() throws {
        var request = OutgoingRequest(method: .get, url: try #require(URL(string: "https://one.example/me")))
        request.retarget(try #require(URL(string: "https://two.example/you?access_token=in-the-query")))
        #expect(request.displayURL == "https://two.example/you?…")
        #expect(request.url.host == "two.example")
    }

    /// What counts as this machine, where a credential may go over plain
    /// http: `127.0.0.0/8` as four decimal octets, `::1`, `localhost`; not a
    /// host that only reads like one (a resolver would look it up by name:
    /// libcurl took `127.0.0.08` for a name; `010` it reads as octal).
    @Test(arguments: [
        ("127.0.0.1", true), ("127.1.2.3", true), ("127.255.255.255", true), ("127.0.0.0", true),
        ("127.0.0.01", false), ("127.0.0.08", false), ("127.00.0.1", false), ("127.0.0.010", false),
        ("::1", true), ("[::1]", true), ("localhost", true), ("LocalHost", true),
        ("127.0.0.256", false), ("127.0.0", false), ("127.0.0.1.5", false), ("127..0.1", false),
        ("127.0.0.", false), ("127.+1.0.1", false), ("127.0.0.1a", false), ("127.0.0.1000", false),
        ("128.0.0.1", false), ("1127.0.0.1", false), ("localhost.", false), ("localhost.evil.example", false),
        ("::2", false), ("", false),
    ])
    func loopbackHostsAreReadStrictly(host: String, loopback: Bool) {
        #expect(DescriptorValidator.isLoopback(host: host) == loopback, "\(host)")
    }

    // MARK: - Bounded answers

    /// 100 KB of gzip that inflate to 16 MiB: its compressed size is under
    /// the 1 MiB cap, so only counting inflated bytes refuses it. (The 2 GiB
    /// bomb, and bounded memory while it inflates, are TransportContract's.)
    @Test func theCapCountsInflatedBytes() async throws {
        try await withServer { server in
            let small = GzipBomb.make(inflatedSize: 16 << 20)
            #expect(small.count < 1 << 20)
            server.route("POST", "/token") { _ in
                StubResponse(
                    status: 200, headers: [("Content-Type", "application/json"), ("Content-Encoding", "gzip")],
                    body: small)
            }
            let client = try client(server)
            await #expect(throws: AuthKitError.responseTooLarge(url: "\(server.baseURL)/token", limit: 1 << 20)) {
                _ = try await client.exchange(code: "small", pending: pending(for: client))
            }
        }
    }

    /// The cap counts bytes as the reader receives them, after any decoding a
    /// transport does: a transport that inflates 100 KB into 16 MiB and hands
    /// it over in chunks is stopped at 1 MiB, and told to stop.
    @Test func theCapCountsDecodedBytes() async throws {
        let inflating = ChunkingTransport(chunk: Data(count: 64 << 10), chunks: 256)
        let transport = FlowTransport(http: inflating, logger: Logger(label: "test"))
        let request = OutgoingRequest(method: .post, url: URL(string: "https://as.test/token")!)
        await #expect(throws: AuthKitError.responseTooLarge(url: "https://as.test/token", limit: 1 << 20)) {
            _ = try await transport.send(request, step: .tokenExchange)
        }
        #expect(inflating.delivered <= (1 << 20) + (128 << 10), "read \(inflating.delivered) bytes past a 1 MiB cap")
        #expect(inflating.cancelled)
    }

    /// A token answer that hides its framing behind a line shaped as a
    /// status line: libcurl reads `HTTP/x 200 a: b` as a field of the `100
    /// Continue` head, and frames the body by the real final head's
    /// `Transfer-Encoding` beside its `Content-Length` (RFC 9112 §6.3). Read
    /// as a final head, that line made the real one trailers, unchecked,
    /// and the token in the body was taken. No credential comes of it.
    @Test func aTokenAnswerWithAStatusLineInsideAHeadIsRefused() async throws {
        let body = #"{"access_token":"at-1","token_type":"Bearer"}"#
        let server = RawResponseServer(
            .init(
                head: "HTTP/1.1 100 Continue\r\nHTTP/x 200 a: b\r\n\r\n"
                    + "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n"
                    + "Transfer-Encoding: chunked\r\n\r\n\(String(body.utf8.count, radix: 16))\r\n\(body)\r\n0\r\n\r\n")
        )
        try await server.start()
        defer { Task { await server.stop() } }
        let descriptor = testDescriptor(
            id: "hostile", protocol: .oauth2, authorization: .init(url: "\(server.baseURL)/authorize"),
            token: .init(url: "\(server.baseURL)/token", clientAuthentication: .basic), pkce: .s256)
        let client = try OAuth2Client(
            descriptor: descriptor, settings: ClientSettings(clientID: "app", clientSecret: Self.secret))
        let pending = try await pending(for: client)
        await #expect {
            _ = try await client.exchange(code: "the-code", pending: pending)
        } throws: { error in
            guard case .network(_, let reason)? = error.authKitReason else { return false }
            return reason.kind == .malformedAnswer
        }
    }

    // MARK: - What comes back is data

    /// A server that puts the request it received into its error: the client
    /// secret (raw, form-encoded, in the Basic header), the code and the PKCE
    /// verifier are masked in the message. So are Basic's credentials alone,
    /// without `Basic ` before them, as sent and percent-encoded: they decode
    /// to `id:secret`, and only the whole header was masked.
    @Test(arguments: [ClientAuthentication.basic, .post])
    func anEchoedRequestLeaksNoSecret(auth: ClientAuthentication) async throws {
        try await withServer { server in
            server.route("POST", "/token") { request in
                let header = request.header("Authorization") ?? ""
                let credentials = header.hasPrefix("Basic ") ? String(header.dropFirst(6)) : ""
                // The credentials first: a description is cut at 300 characters.
                let echo =
                    "credentials \(credentials) (\(PercentEncoding.encode(credentials))), got \(header) body \(request.bodyText)"
                let escaped = echo.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(
                    of: "\"", with: "\\\"")
                return .json(#"{"error":"invalid_request","error_description":"\#(escaped)"}"#, status: 400)
            }
            let client = try client(server, auth: auth)
            let pending = try await pending(for: client)
            let error = await #expect(throws: AuthKitError.self) {
                _ = try await client.exchange(code: "the-authorization-code", pending: pending)
            }
            let message = "\(try #require(error))"
            let basic = Data("app:\(PercentEncoding.encode(Self.secret))".utf8).base64EncodedString()
            #expect(PercentEncoding.encode(basic) != basic, "the credentials have a character to escape")
            for secret in [
                Self.secret, PercentEncoding.encode(Self.secret), basic, PercentEncoding.encode(basic),
                "the-authorization-code", pending.codeVerifier ?? "-",
            ] {
                #expect(!message.contains(secret), "the error shows \(secret): \(message)")
            }
            #expect(message.contains("••••") && message.contains("invalid_request"))
        }
    }

    /// An error answer that carries tokens as well (a server naming the
    /// token it just issued in its error) shows none of them.
    @Test func anErrorThatCarriesTheIssuedTokensShowsNone() async throws {
        try await withServer { server in
            server.route("POST", "/token") { _ in
                .json(
                    #"{"error":"gho_ISSUED_access","error_description":"use gho_ISSUED_access or ghr_ISSUED_refresh","access_token":"gho_ISSUED_access","refresh_token":"ghr_ISSUED_refresh"}"#,
                    status: 400)
            }
            let client = try client(server, auth: .post)
            let pending = try await pending(for: client)
            let error = await #expect(throws: AuthKitError.self) {
                _ = try await client.exchange(code: "c", pending: pending)
            }
            let message = "\(try #require(error))"
            #expect(!message.contains("ISSUED") && message.contains("••••"), "\(message)")
        }
    }

    /// One provider's answer cannot cost every other account in the store:
    /// kept whole, a member nested 125 deep sat past the store's parser's
    /// depth once in the file, and nested arrays grow many times over
    /// pretty-printed (a 1 MiB answer of them took 87 MB, past its size
    /// cap); the file was then refused for every account (`authkit token
    /// print` of another exited 65). Such members are not kept, and a
    /// warning names each, not its value, a name that repeats the client
    /// secret masked. (A 45 KB member of nested arrays here: one past the
    /// 64 KiB kept once pretty-printed, without a 1 MiB parse in the suite.)
    @Test func anAnswerBuiltToBreakTheStoreLeavesItReadable() async throws {
        try await withServer { server in
            let deep = String(repeating: "[", count: 125) + String(repeating: "]", count: 125)
            let wide = "[" + Array(repeating: "[[[[]]]]", count: 5_000).joined(separator: ",") + "]"
            let named = String(repeating: "[", count: 10) + String(repeating: "]", count: 10)
            server.route("POST", "/token") { _ in
                .json(
                    #"{"access_token":"AT-deep-0123456789","token_type":"Bearer","expires_in":3600,"team":{"id":"T1"},"#
                        + #""n":\#(deep),"w":\#(wide),"\#(Self.secret)":\#(named)}"#)
            }
            let log = RecordedLog()
            let client = try OAuth2Client(
                descriptor: testDescriptor(
                    id: "hostile", protocol: .oauth2, token: .init(url: "\(server.baseURL)/token")),
                settings: ClientSettings(clientID: "app", clientSecret: Self.secret), logger: log.logger)
            let directory = TemporaryDirectory.url("authkit-hostile-answer")
            let store = FileCredentialStore(file: directory.appendingPathComponent("credentials.json"))
            try await store.save(Credential(providerID: "other", accessToken: "other-token", obtainedAt: fixedNow))

            let credential = try await client.clientCredentials(label: "hostile")
            #expect(Set(credential.rawFields.keys) == ["access_token", "token_type", "expires_in", "team"])
            try await store.save(credential)
            #expect(try await store.allCredentials().map(\.providerID).sorted() == ["hostile", "other"])
            let size = try #require(
                try FileManager.default.attributesOfItem(atPath: store.fileURL.path)[.size] as? NSNumber)
            #expect(size.intValue < 64 << 10, "the file is \(size) bytes")

            let warnings = log.warnings.joined(separator: "\n")
            #expect(warnings.contains("'n' was not kept: it nests 125 levels deep"), "\(warnings)")
            #expect(warnings.contains("'w' was not kept: it takes about"), "\(warnings)")
            #expect(warnings.contains("'••••' was not kept: it nests 10 levels deep"), "\(warnings)")
            #expect(!warnings.contains("[[") && !warnings.contains("s3cr3t"), "\(warnings)")
        }
    }

    /// A code or token is sent as the bytes it is, never read as a template.
    @Test func valuesFromTheNetworkAreNeverRendered() async throws {
        try await withServer { server in
            server.route("POST", "/token") { _ in
                .json(#"{"access_token":"{client_secret}","token_type":"Bearer","refresh_token":"{client_secret}"}"#)
            }
            server.route("POST", "/refresh") { _ in .json(#"{"access_token":"new","token_type":"Bearer"}"#) }
            let descriptor = testDescriptor(
                id: "hostile", protocol: .oauth2, authorization: .init(url: "\(server.baseURL)/authorize"),
                token: .init(url: "\(server.baseURL)/token", clientAuthentication: .post),
                refresh: .init(
                    url: "\(server.baseURL)/refresh",
                    parameters: ["token": "{refresh_token}", "access": "{access_token}"]))
            let client = try OAuth2Client(
                descriptor: descriptor, settings: ClientSettings(clientID: "app", clientSecret: Self.secret))
            let credential = try await client.exchange(code: "{client_secret}", pending: pending(for: client))
            let exchange = try #require(server.requests(to: "/token").first).bodyText
            #expect(exchange.contains("code=%7Bclient_secret%7D"))
            #expect(credential.accessToken == "{client_secret}")
            _ = try await client.refresh(credential)
            let refresh = try formObject(try #require(server.requests(to: "/refresh").first).bodyText)
            #expect(refresh["token"] == "{client_secret}" && refresh["access"] == "{client_secret}")
        }
    }
}

/// An ``HTTPClient`` whose body is `chunks` pieces handed over on demand, as a
/// transport that inflates would; it records how much was taken and whether
/// the reader told it to stop.
final class ChunkingTransport: HTTPClient, @unchecked Sendable {
    let chunk: Data
    let chunks: Int
    private let lock = NSLock()
    private var taken = 0
    private var stopped = false

    init(chunk: Data, chunks: Int) {
        self.chunk = chunk
        self.chunks = chunks
    }

    var delivered: Int { lock.withLock { taken } }
    var cancelled: Bool { lock.withLock { stopped } }

    func send(_ request: HTTPRequest, body: Data?) async throws -> (HTTPResponse, HTTPResponseBody) {
        let stream = AsyncThrowingStream<Data, any Error>(unfolding: { [self] in
            lock.withLock { () -> Data? in
                guard taken < chunk.count * chunks else { return nil }
                taken += chunk.count
                return chunk
            }
        })
        return (
            HTTPResponse(status: .ok),
            HTTPResponseBody(stream, onCancel: { [self] in lock.withLock { stopped = true } })
        )
    }
}

/// An ``HTTPClient`` that answers from a script, for hosts no test can serve
/// (an https origin): it sees each request and never touches the network.
final class ScriptedTransport: HTTPClient, @unchecked Sendable {
    private let answer: @Sendable (HTTPRequest) -> StubResponse
    private let lock = NSLock()
    private var seen = 0

    init(_ answer: @escaping @Sendable (HTTPRequest) -> StubResponse) { self.answer = answer }

    var count: Int { lock.withLock { seen } }

    func send(_ request: HTTPRequest, body: Data?) async throws -> (HTTPResponse, HTTPResponseBody) {
        lock.withLock { seen += 1 }
        let stub = answer(request)
        var fields = HTTPFields()
        for (name, value) in stub.headers {
            if let name = HTTPField.Name(name) { fields.append(HTTPField(name: name, value: value)) }
        }
        return (HTTPResponse(status: .init(code: stub.status), headerFields: fields), HTTPResponseBody(stub.body))
    }
}

/// Sends the access token in the query instead of a header (RFC 6750 §2.3,
/// which AuthKit's own client never does).
private struct TokenInTheQuery: Authenticator {
    let client: OAuth2Client
    /// Drops the host as well (a broken authenticator).
    var losingTheHost = false
    var descriptor: ProviderDescriptor { client.descriptor }
    var settings: ClientSettings { client.settings }

    func authorize(using userAgent: some UserAgent, options: AuthorizationOptions) async throws -> Credential {
        try await client.authorize(using: userAgent, options: options)
    }

    func authorize(_ request: HTTPRequest, body: Data?, with credential: Credential) throws -> HTTPRequest {
        var moved = request
        moved.path = (request.path ?? "/") + "?access_token=" + credential.accessToken
        if losingTheHost { moved.authority = nil }
        return moved
    }

    func refresh(_ credential: Credential) async throws -> Credential { try await client.refresh(credential) }
    func revoke(_ credential: Credential) async throws { try await client.revoke(credential) }
}
