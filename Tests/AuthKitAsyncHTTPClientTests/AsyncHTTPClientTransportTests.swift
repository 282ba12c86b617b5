import AuthKitAsyncHTTPClient
import AuthKitTestSupport
import Foundation
import Logging
import Testing
@testable import AuthKit

/// The AsyncHTTPClient transport keeps AuthKit's rules like the default one:
/// the same flows, and the same hostile servers (a redirect, a flood, a drip)
/// stopped the same way (HostileServerTests plays them to the default transport).
@Suite struct AsyncHTTPClientTransportTests {
    func client(_ server: TestHTTPServer) throws -> OAuth2Client {
        let descriptor = testDescriptor(
            id: "ahc", protocol: .oauth2, authorization: .init(url: "\(server.baseURL)/authorize"),
            token: .init(url: "\(server.baseURL)/token", clientAuthentication: .post), pkce: .s256)
        return try OAuth2Client(descriptor: descriptor, settings: ClientSettings(clientID: "app", clientSecret: "secret"),
                                httpClient: AsyncHTTPClientTransport())
    }

    func pending(for client: OAuth2Client) throws -> PendingAuthorization {
        try client.startAuthorization(redirectURI: URL(string: "http://127.0.0.1:5000/callback")).pending
    }

    @Test func exchangesACodeAndSendsTheRequestAsBuilt() async throws {
        try await withServer { server in
            server.route("POST", "/token") { _ in .json(#"{"access_token":"at-1","token_type":"Bearer","expires_in":60,"refresh_token":"rt-1"}"#) }
            let client = try client(server)
            let pending = try pending(for: client)
            let credential = try await client.exchange(code: "the-code", pending: pending)
            #expect(credential.accessToken == "at-1")
            #expect(credential.refreshToken == "rt-1")
            let request = try #require(server.requests.first)
            #expect(request.header("Content-Type") == "application/x-www-form-urlencoded")
            #expect(request.header("Accept") == "application/json")
            #expect(request.header("Accept-Encoding") == nil, "asked for compression AuthKit would not bound")
            let form = Dictionary(uniqueKeysWithValues: FormURLEncoding.decode(String(decoding: request.body, as: UTF8.self)) ?? [])
            #expect(form["code"] == "the-code")
            #expect(form["code_verifier"] == pending.codeVerifier)
            #expect(form["client_secret"] == "secret")
        }
    }

    @Test(arguments: [302, 307])
    func aRedirectComesBackUnfollowed(status: Int) async throws {
        try await withServer { server in
            let elsewhere = TestHTTPServer()
            try await elsewhere.start()
            defer { Task { await elsewhere.stop() } }
            elsewhere.route("POST", "/token") { _ in .json(#"{"access_token":"stolen","token_type":"Bearer"}"#) }
            server.route("POST", "/token") { _ in .redirect(status, to: "\(elsewhere.baseURL)/token") }
            let client = try client(server)
            await #expect(throws: AuthKitError.redirectNotFollowed(step: .tokenExchange, status: status, location: elsewhere.baseURL)) {
                _ = try await client.exchange(code: "the-code", pending: pending(for: client))
            }
            #expect(elsewhere.requests.isEmpty, "the code and secret were resent to \(elsewhere.baseURL)")
        }
    }

    @Test func aFloodEndsAtTheCap() async throws {
        try await withServer { server in
            server.route("POST", "/token") { _ in .streaming(.flood, headers: [("Content-Type", "application/json")]) }
            let client = try client(server)
            await #expect(throws: AuthKitError.responseTooLarge(url: "\(server.baseURL)/token", limit: 1 << 20)) {
                _ = try await client.exchange(code: "c", pending: pending(for: client))
            }
        }
    }

    @Test func aDripEndsAtTheDeadline() async throws {
        let outcome = try await DripPlay.play(to: AsyncHTTPClientTransport())
        #expect(outcome.endedAtTheDeadline, "ended with \(String(describing: outcome.error))")
        #expect(outcome.elapsed < .seconds(30)) // loose: the suite runs in parallel on two cores
    }

    /// AsyncHTTPClient retries a refused connection until its connect
    /// timeout; AuthKit's deadline ends the wait first, with an error that
    /// shows no query.
    @Test func aClosedPortIsANetworkError() async throws {
        let transport = FlowTransport(http: AsyncHTTPClientTransport(), logger: Logger(label: "test"))
        let request = OutgoingRequest(method: .post, url: URL(string: "http://127.0.0.1:9/token?code=secret-code")!)
        await #expect {
            _ = try await transport.send(request, step: .tokenExchange, policy: RequestPolicy(
                redirects: .refuse, maximumBodySize: 1 << 20, deadline: .seconds(2)))
        } throws: { error in
            guard case AuthKitError.network(let url, _) = error else { return false }
            return !url.contains("secret-code")
        }
    }
}
