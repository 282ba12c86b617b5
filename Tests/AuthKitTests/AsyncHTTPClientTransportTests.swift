import AuthKitAsyncHTTPClient
import AuthKitTestSupport
import Foundation
import HTTPTypes
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
            descriptor: descriptor, settings: settings, httpClient: asyncHTTPClientTransport())
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
            let pending = try await pending(for: client)
            let credential = try await client.exchange(code: "the-code", pending: pending)
            #expect(credential.accessToken == "at-1")
            #expect(credential.refreshToken == "rt-1")
            let request = try #require(server.requests.first)
            #expect(request.header("Content-Type") == "application/x-www-form-urlencoded")
            #expect(request.header("Accept") == "application/json")
            #expect(request.header("Accept-Encoding") == "identity", "asked for compression AuthKit would not bound")
            let form = Dictionary(
                uniqueKeysWithValues: FormURLEncoding.decode(String(decoding: request.body, as: UTF8.self)) ?? [])
            #expect(form["code"] == "the-code")
            #expect(form["code_verifier"] == pending.codeVerifier)
            #expect(form["client_secret"] == "secret")
        }
    }

    /// A caller's `Accept-Encoding: gzip` is not passed on, and a body sent
    /// compressed anyway is refused: with decompression off, it came back
    /// compressed, counted against the cap, to be inflated past it by the reader.
    @Test func aCallersCompressionIsNotAskedForAndACompressedBodyIsRefused() async throws {
        try await withServer { server in
            server.route("GET", "/data") { _ in
                StubResponse(
                    status: 200, headers: [("Content-Encoding", "gzip")], body: GzipBomb.make(inflatedSize: 4096))
            }
            var request = HTTPRequest(method: .get, url: URL(string: "\(server.baseURL)/data")!)
            request.headerFields[.acceptEncoding] = "gzip"
            await #expect {
                _ = try await AsyncHTTPClientTransport().send(request, body: nil)
            } throws: { error in
                guard case .network(_, .malformedAnswer(let detail))? = error.authKitReason else { return false }
                return detail.contains("'gzip'-encoded body")
            }
            #expect(server.requests.first?.header("Accept-Encoding") == "identity")
        }
    }

    /// A body cancelled by its holder (a Stop button) part-way is not then
    /// read as complete: the next read throws, where it ended quietly.
    @Test func aBodyCancelledPartWayIsNotReadAsComplete() async throws {
        // One byte of a hundred, and the connection held open.
        let server = RawResponseServer(
            TransportContract.json200("Content-Length: 100\r\n\r\n{", repeating: "", interval: .hours(1)))
        try await server.start()
        defer { Task { await server.stop() } }
        let request = HTTPRequest(method: .get, scheme: "http", authority: "127.0.0.1:\(server.port)", path: "/")
        let (_, body) = try await AsyncHTTPClientTransport().send(request, body: nil)
        var iterator = body.makeAsyncIterator()
        #expect(try await iterator.next() == Data("{".utf8))
        body.cancel()
        await #expect(throws: CancellationError.self) { _ = try await iterator.next() }
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
