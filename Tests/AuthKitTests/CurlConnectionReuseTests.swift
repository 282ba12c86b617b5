#if os(Linux)
import AuthKitTestSupport
import Foundation
import Testing
@testable import AuthKit

/// `CurlHTTPClient` (the default transport on Linux) keeps each worker's easy
/// handle, and with it the connections of finished transfers (`CurlWorkers`).
/// A connection is reused only when the previous answer was read to its end
/// on a connection the server keeps open; never one a reader stopped midway,
/// whose unread bytes would otherwise be read as the next answer.
@Suite struct CurlConnectionReuseTests {
    static let token = #"{"access_token":"at-1","token_type":"Bearer","expires_in":3600}"#

    /// A pool of its own, so tests running beside this one do not take its workers.
    let workers = CurlWorkers(keptIdle: 8)

    func client(_ server: TestHTTPServer) throws -> OAuth2Client {
        let descriptor = testDescriptor(
            id: "reuse", protocol: .oauth2, authorization: .init(url: "\(server.baseURL)/authorize"),
            token: .init(url: "\(server.baseURL)/token", clientAuthentication: .post), pkce: .s256)
        return try OAuth2Client(descriptor: descriptor, settings: ClientSettings(clientID: "app", clientSecret: "secret"),
                                httpClient: CurlHTTPClient(timeout: 10, workers: workers))
    }

    func exchange(_ client: OAuth2Client) async throws -> Credential {
        let pending = try client.startAuthorization(redirectURI: URL(string: "http://127.0.0.1:5000/callback")).pending
        return try await client.exchange(code: "c", pending: pending)
    }

    @Test func aSecondTokenRequestToTheSameServerReusesTheConnection() async throws {
        try await withServer { server in
            server.route("POST", "/token") { _ in StubResponse.json(Self.token).keptAlive() }
            let client = try client(server)
            for _ in 0..<3 { #expect(try await exchange(client).accessToken == "at-1") }
            #expect(server.requests(to: "/token").count == 3)
            #expect(server.connections == 1, "three requests opened \(server.connections) connections")
        }
    }

    @Test func aConnectionTheServerClosesIsNotReused() async throws {
        try await withServer { server in
            server.route("POST", "/token") { _ in .json(Self.token) } // Connection: close
            let client = try client(server)
            for _ in 0..<2 { #expect(try await exchange(client).accessToken == "at-1") }
            #expect(server.connections == 2)
        }
    }

    /// The first answer is larger than the 1 MiB cap, on a connection the
    /// server keeps open: AuthKit stops reading it. The second request must
    /// get its own answer on a new connection, not the first one's remains.
    @Test func aConnectionLeftMidBodyIsNeverReused() async throws {
        try await withServer { server in
            let oversized = #"{"access_token":""# + String(repeating: "x", count: 4 << 20) + #"","token_type":"Bearer"}"#
            // The server records a request before routing it: the first one gets the oversized answer.
            server.route("POST", "/token") { [server] _ in
                StubResponse.json(server.requests(to: "/token").count == 1 ? oversized : Self.token).keptAlive()
            }
            let client = try client(server)
            await #expect(throws: AuthKitError.responseTooLarge(url: "\(server.baseURL)/token", limit: 1 << 20)) {
                _ = try await exchange(client)
            }
            #expect(try await exchange(client).accessToken == "at-1")
            #expect(server.connections == 2, "the stopped connection was reused")
        }
    }

    /// Transfers at once each get a worker; afterwards no more than the kept
    /// number wait idle, and the next request still gets its answer.
    @Test func concurrentTransfersEachGetAWorker() async throws {
        try await withServer { server in
            server.route("POST", "/token") { _ in StubResponse.json(Self.token).keptAlive() }
            let client = try client(server)
            try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<16 { group.addTask { try await exchange(client).accessToken } }
                for try await token in group { #expect(token == "at-1") }
            }
            #expect(server.requests(to: "/token").count == 16)
            #expect(workers.idleCount <= workers.keptIdle)
            #expect(try await exchange(client).accessToken == "at-1")
        }
    }

    /// A transfer runs on a thread named `authkit.curl`, which `top -H`,
    /// `ps -L` and a debugger show; read from inside the transfer, by the
    /// thread itself.
    @Test func transfersRunOnThreadsNamedForThem() async throws {
        try CurlHTTPClient.loadLibrary(display: "test")
        let pool = CurlWorkers(keptIdle: 0) // the worker ends after its transfer
        let name = await withCheckedContinuation { (done: CheckedContinuation<String?, Never>) in
            pool.run(origin: "http://127.0.0.1:1") { slot in
                let name = try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)
                let hasHandle = if case .handle = slot { true } else { false }
                return { done.resume(returning: hasHandle ? name : "no handle") }
            }
        }
        #expect(name?.trimmingCharacters(in: .newlines) == CurlWorkers.threadName)
        #expect(CurlWorkers.threadName == "authkit.curl")
    }
}
#endif
