import AuthKitAsyncHTTPClient
import AuthKitTestSupport
import Foundation
import Testing

@testable import AuthKit

/// The AsyncHTTPClient transport keeps AuthKit's rules like the default one:
/// the same flows, and every promise of ``HTTPClient`` against the same
/// hostile servers (``TransportContract``; TransportContractTests plays them
/// to the default transport and to URLSession).
@Suite struct AsyncHTTPClientTransportTests {
    func client(_ server: TestHTTPServer) throws -> OAuth2Client {
        let descriptor = testDescriptor(
            id: "ahc", protocol: .oauth2, authorization: .init(url: "\(server.baseURL)/authorize"),
            token: .init(url: "\(server.baseURL)/token", clientAuthentication: .post), pkce: .s256)
        let settings = ClientSettings(clientID: "app", clientSecret: "secret")
        let client = try OAuth2Client(
            descriptor: descriptor, settings: settings, httpClient: AsyncHTTPClientTransport())
        return client
    }

    func pending(for client: OAuth2Client) async throws -> PendingAuthorization {
        try await client.startAuthorization(redirectURI: URL(string: "http://127.0.0.1:5000/callback")).pending
    }

    @Test func exchangesACodeAndSendsTheRequestAsBuilt() async throws {
        try await withServer { server in
            server.route("POST", "/token") { _ in
                .json(#"{"access_token":"at-1","token_type":"Bearer","expires_in":60,"refresh_token":"rt-1"}"#)
            }
            let client = try client(server)
            let pending = await try pending(for: client)
            let credential = try await client.exchange(code: "the-code", pending: pending)
            #expect(credential.accessToken == "at-1")
            #expect(credential.refreshToken == "rt-1")
            let request = try #require(server.requests.first)
            #expect(request.header("Content-Type") == "application/x-www-form-urlencoded")
            #expect(request.header("Accept") == "application/json")
            #expect(request.header("Accept-Encoding") == nil, "asked for compression AuthKit would not bound")
            let form = Dictionary(
                uniqueKeysWithValues: FormURLEncoding.decode(String(decoding: request.body, as: UTF8.self)) ?? [])
            #expect(form["code"] == "the-code")
            #expect(form["code_verifier"] == pending.codeVerifier)
            #expect(form["client_secret"] == "secret")
        }
    }

    @Test(.serialized, arguments: TransportContract.Clause.all)
    func keepsThePromise(_ clause: TransportContract.Clause) async throws {
        // AsyncHTTPClient 1.37 stops the process on `HTTP/1.1 099` followed
        // by a body: its state machine ignores a head below 200 as a 1xx
        // while NIO's parser (1xx is 100-199) hands the body over, and
        // HTTPRequestStateMachine.swift:595 calls fatalError ("How can we
        // receive a response body, if we haven't received a head"). Inside
        // AsyncHTTPClient's pipeline, out of AuthKit's reach; docs/http.md.
        let broken = try await TransportContract(
            AsyncHTTPClientTransport(), statusLinesNotPlayed: ["HTTP/1.1 099 OK"], retriesConnections: true
        ).check(clause)
        #expect(broken.isEmpty, "AsyncHTTPClientTransport broke \(clause): \(broken.joined(separator: "; "))")
    }
}
