import AuthKitTestSupport
import Foundation
import Testing

@testable import AuthKit
@testable import AuthKitLoopback

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The whole sign-in: `OAuth2Client.authorize(using: LoopbackUserAgent(…))`
/// with a "browser" that follows the provider's redirect to the listener, and a
/// real token endpoint on another local port.
@Suite struct EndToEndTests {
    /// What the fake browser saw after following the redirect.
    final class BrowserPage: @unchecked Sendable {
        private let lock = NSLock()
        private var result: (status: Int, body: String)?
        private var seen: ListeningSockets?
        func set(_ value: (Int, String)) { lock.withLock { result = value } }
        var value: (status: Int, body: String)? { lock.withLock { result } }
        /// The sockets listening on the redirect's port when the browser followed it.
        var listening: ListeningSockets? {
            get { lock.withLock { seen } }
            set { lock.withLock { seen = newValue } }
        }
    }

    func descriptor(_ server: TestHTTPServer) -> ProviderDescriptor {
        server.route("POST", "/token") { request in
            let body = Dictionary(
                FormURLEncoding.decode(request.bodyText) ?? [], uniquingKeysWith: { first, _ in first })
            guard body["code"] == "good-code" else { return .json(#"{"error":"invalid_grant"}"#, status: 400) }
            return .json(#"{"access_token":"at-123","token_type":"Bearer","expires_in":3600}"#)
        }
        return testDescriptor(
            id: "local", name: "Local", protocol: .oauth2,
            authorization: DescriptorFile.Authorization(url: "\(server.baseURL)/authorize"),
            token: DescriptorFile.Token(url: "\(server.baseURL)/token"), pkce: .s256)
    }

    /// A browser that "approves" at the provider: it reads the authorization
    /// URL's `state` and `redirect_uri` and GETs the redirect with `answer`
    /// appended, in the background, as a browser does after `open` returns.
    func browser(answer: String, page: BrowserPage) -> @Sendable (URL) async throws -> Void {
        { url in
            let query = url.query(percentEncoded: true) ?? ""
            let parameters = Dictionary(FormURLEncoding.decode(query) ?? [], uniquingKeysWith: { first, _ in first })
            let redirect = parameters["redirect_uri"] ?? ""
            let state = PercentEncoding.encode(parameters["state"] ?? "")
            let target = URL(string: "\(redirect)?\(answer)&state=\(state)")!
            page.listening = target.port.map { ListeningSockets(port: $0) }
            Task {
                let (data, response) = try await URLSession.shared.data(from: target)
                page.set(((response as? HTTPURLResponse)?.statusCode ?? 0, String(decoding: data, as: UTF8.self)))
            }
        }
    }

    @Test func signsInThroughTheLoopbackListener() async throws {
        let server = TestHTTPServer()
        try await server.start()
        defer { Task { await server.stop() } }
        let client = try OAuth2Client(descriptor: descriptor(server), settings: ClientSettings(clientID: "c"))
        let page = BrowserPage()
        let agent = LoopbackUserAgent(timeout: .seconds(30), browser: browser(answer: "code=good-code", page: page))

        let credential = try await client.authorize(using: agent)
        #expect(credential.accessToken == "at-123")

        // The token request carried the redirect URI with the port the listener bound.
        let tokenBody = Dictionary(
            FormURLEncoding.decode(try #require(server.requests(to: "/token").last).bodyText) ?? [],
            uniquingKeysWith: { first, _ in first })
        let redirectURI = try #require(tokenBody["redirect_uri"])
        let port = try #require(URLComponents(string: redirectURI)?.port)
        #expect(redirectURI == "http://127.0.0.1:\(port)/callback")
        #expect(tokenBody["code_verifier"] != nil)
        let listening = try #require(page.listening)
        #expect(listening.port == port && listening.sawOne)
        #expect(await listening.closedSoon(), "\(listening)")

        // The browser was shown the "signed in" page.
        for _ in 0..<100 where page.value == nil { try await Task.sleep(for: .milliseconds(20)) }
        #expect(page.value?.status == 200)
        #expect(page.value?.body.contains("Local answered. You can close this tab") == true)
    }

    @Test func deniedConsentShowsTheErrorAndThrowsIt() async throws {
        let server = TestHTTPServer()
        try await server.start()
        defer { Task { await server.stop() } }
        let client = try OAuth2Client(descriptor: descriptor(server), settings: ClientSettings(clientID: "c"))
        let page = BrowserPage()
        let agent = LoopbackUserAgent(
            timeout: .seconds(30),
            browser: browser(answer: "error=access_denied&error_description=The+user+said+no", page: page))

        await #expect {
            try await client.authorize(using: agent)
        } throws: { error in
            (error as? AuthKitError)?.code == .accessDenied
        }
        #expect(server.requests.isEmpty) // no token request
        for _ in 0..<100 where page.value == nil { try await Task.sleep(for: .milliseconds(20)) }
        #expect(page.value?.body.contains("access_denied — The user said no") == true)
    }

    /// docs/library.md's snippet, line for line (`ReadmeTests` checks it): the
    /// trailing closure is `onEvent`, and the other settings keep their
    /// defaults (the system browser, five minutes).
    @Test func readmeSnippetCompiles() {
        let agent = LoopbackUserAgent { event in
            switch event {
            case .listening: print("Waiting for you to approve in the browser…")
            case .browserFailed(let url, _): print("Open this URL to sign in:\n\(url)")
            case .ignoredRequest: break
            case .rejectedAnswer: print("A request to the redirect address was refused; still waiting…")
            }
        }
        #expect(agent.timeout == .seconds(300))
    }
}
