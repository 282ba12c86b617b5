import AuthKit
import AuthKitTestSupport
import Foundation
import Testing

@testable import AuthKitOAuth1

#if canImport(FoundationNetworking)
    import AuthKitFoundationNetworking
    import FoundationNetworking
#endif

/// The whole flow against oauthlib, an independent implementation that checks
/// every signature (request token, access token, protected resource).
///
/// Runs when `python3` can import oauthlib, or whenever `AUTHKIT_PYTHON` or
/// `AUTHKIT_REQUIRE_INTEROP=1` is set (then failing to start the server fails
/// the tests). `AUTHKIT_PYTHON=/work/venv/bin/python swift test` runs them here.
@Suite(
    .serialized,
    .enabled(
        "python3 cannot import oauthlib: set AUTHKIT_PYTHON to a Python with oauthlib (pip install oauthlib), or AUTHKIT_REQUIRE_INTEROP=1 to make this a failure"
    ) { await InteropPeer.isEnabled })
struct InteropTests {
    private func withServers(
        signatureMethod: String? = nil,
        _ body: (OAuth1Client, InteropPeer, TestHTTPServer) async throws -> Void
    ) async throws {
        let provider = InteropPeer()
        try await provider.start(consumerKey: Fixture.consumerKey, consumerSecret: Fixture.consumerSecret)
        let listener = TestHTTPServer()
        do {
            try await listener.start()
            listener.route("GET", "/callback") { _ in
                .text("Signed in. You can close this window.", contentType: "text/plain", status: 200)
            }
            let client = try Fixture.client(baseURL: provider.baseURL, signatureMethod: signatureMethod)
            try await body(client, provider, listener)
        } catch {
            await listener.stop()
            provider.stop()
            throw error
        }
        await listener.stop()
        provider.stop()
    }

    /// Plays the user with a browser-like GET: oauthlib approves at once and
    /// redirects to the loopback listener, whose recorded request is the callback.
    private func browserAgent(listener: TestHTTPServer, path: String = "/callback") -> ScriptedAgent {
        ScriptedAgent { session in
            let callback = URL(string: listener.baseURL + path)!
            let url = try await session.makeAuthorizationURL(callback)
            let (_, response) = try await URLSession.shared.data(from: url)
            #expect((response as? HTTPURLResponse)?.statusCode == 200)
            let received = try #require(listener.requests(to: path).last)
            let answer = URL(string: listener.baseURL + received.uri)!
            try session.validateRedirect(answer)
            return .redirect(answer)
        }
    }

    /// Reads the PIN from oauthlib's out-of-band page.
    private let pinAgent = ScriptedAgent { session in
        #expect(session.redirectURI == nil)
        let url = try await session.makeAuthorizationURL(nil)
        let (data, _) = try await URLSession.shared.data(from: url)
        let page = String(decoding: data, as: UTF8.self)
        let start = try #require(page.range(of: "<code id=\"pin\">"))
        let end = try #require(page.range(of: "</code>", range: start.upperBound..<page.endIndex))
        return .verificationCode(String(page[start.upperBound..<end.lowerBound]))
    }

    @Test(arguments: ["HMAC-SHA1", "HMAC-SHA256", "PLAINTEXT"])
    func callbackFlowThenProtectedResources(signatureMethod: String) async throws {
        try await withServers(signatureMethod: signatureMethod) { client, provider, listener in
            let credential = try await client.authorize(using: browserAgent(listener: listener))
            #expect(credential.kind == .oauth1)
            #expect(!credential.accessToken.isEmpty)
            #expect(credential.tokenSecret?.isEmpty == false)
            #expect(credential.rawFields["user_id"] == .string("4242"))
            #expect(credential.rawFields["screen_name"] == .string("authkit-tester"))
            try await checkProtectedResources(client: client, credential: credential, baseURL: provider.baseURL)
        }
    }

    @Test func pinFlowThenProtectedResources() async throws {
        try await withServers { _, provider, _ in
            // `oob` as the configured redirect URI selects the PIN flow.
            let client = try OAuth1Client(
                descriptor: Fixture.descriptor(baseURL: provider.baseURL),
                settings: ClientSettings(
                    clientID: Fixture.consumerKey, clientSecret: Fixture.consumerSecret, redirectURI: "oob"))
            let credential = try await client.authorize(using: pinAgent)
            #expect(credential.rawFields["screen_name"] == .string("authkit-tester"))
            try await checkProtectedResources(client: client, credential: credential, baseURL: provider.baseURL)
        }
    }

    @Test func deniedAtTheProviderIsAccessDenied() async throws {
        try await withServers { _, provider, listener in
            let client = try Fixture.client(baseURL: provider.baseURL, authorizePath: "/deny")
            let error = await #expect(throws: AuthKitError.self) {
                _ = try await client.authorize(using: browserAgent(listener: listener))
            }
            #expect(error?.code == .accessDenied)
        }
    }

    @Test func wrongConsumerSecretIsRejectedByOAuthlib() async throws {
        try await withServers { _, provider, _ in
            let client = try OAuth1Client(
                descriptor: Fixture.descriptor(baseURL: provider.baseURL),
                settings: ClientSettings(clientID: Fixture.consumerKey, clientSecret: "not-the-secret"))
            let error = await #expect(throws: AuthKitError.self) {
                _ = try await client.startAuthorization(redirectURI: nil)
            }
            guard case .invalidResponse(.requestToken, _)? = error?.reason else {
                // oauthlib answers 401 with an empty body.
                Issue.record("unexpected \(String(describing: error))")
                return
            }
            #expect(!(error?.description.contains("not-the-secret") ?? true))
        }
    }

    /// A signed GET with a query (duplicates, spaces, reserved characters) and
    /// a signed POST with a form body and a query, both verified by oauthlib's
    /// ResourceEndpoint.
    private func checkProtectedResources(client: OAuth1Client, credential: Credential, baseURL: String) async throws {
        var get = URLRequest(url: URL(string: baseURL + "/resource?b=2&a=x%20y&a=1&sym=%2B%26%3D%E2%98%83")!)
        get = try client.authorize(get, with: credential)
        let (getData, getResponse) = try await URLSession.shared.data(for: get)
        #expect((getResponse as? HTTPURLResponse)?.statusCode == 200, "\(String(decoding: getData, as: UTF8.self))")
        let getJSON = try JSONDecoder().decode(ResourceReply.self, from: getData)
        #expect(getJSON.params.map { $0.joined(separator: "=") }.sorted() == ["a=1", "a=x y", "b=2", "sym=+&=☃"])

        var post = URLRequest(url: URL(string: baseURL + "/resource?include_entities=true")!)
        post.httpMethod = "POST"
        post.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
        post.httpBody = Data(
            "status=Hello%20Ladies%20%2B%20Gentlemen%2C%20a%20signed%20OAuth%20request%21&n=1&n=1".utf8)
        post = try client.authorize(post, with: credential)
        let (postData, postResponse) = try await URLSession.shared.data(for: post)
        #expect((postResponse as? HTTPURLResponse)?.statusCode == 200, "\(String(decoding: postData, as: UTF8.self))")
        let postJSON = try JSONDecoder().decode(ResourceReply.self, from: postData)
        #expect(postJSON.method == "POST")
        #expect(
            postJSON.params.map { $0.joined(separator: "=") }.sorted()
                == ["include_entities=true", "n=1", "n=1", "status=Hello Ladies + Gentlemen, a signed OAuth request!"])

        // A body changed after signing fails oauthlib's check.
        var tampered = post
        tampered.httpBody = Data("status=Goodbye".utf8)
        let (_, tamperedResponse) = try await URLSession.shared.data(for: tampered)
        #expect((tamperedResponse as? HTTPURLResponse)?.statusCode == 401)
    }

    private struct ResourceReply: Decodable {
        var ok: Bool
        var method: String
        var params: [[String]]
    }
}
