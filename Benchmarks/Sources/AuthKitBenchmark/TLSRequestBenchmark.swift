import AuthKit
import Foundation
import HTTPTypes

/// Authorized GETs over TLS (rows tls-requests-sequential and -16): batches
/// of 200 requests to the tokenserver's `/me` on its TLS port through
/// `CredentialSource.send` and the default transport (libcurl on Linux), one
/// at a time or `concurrency` at once. The server's certificate comes from a
/// throwaway authority the run trusts through `SSL_CERT_FILE`, as x/oauth2's
/// side does (Go reads the same variable). A batch is one op.
///
/// Each body is capped at `maximumBodySize` (64 KiB unless `-max-body`
/// says otherwise): within what the default transport holds before it
/// streams, so each is read whole, through libcurl's event loop when one
/// at a time; `-max-body 104857600`, `send`'s default cap, streams them
/// through the workers instead.
///
/// With `transportAlone`, the same GETs, the bearer token set by hand, go
/// through the default transport (`platformHTTPClient()`) directly: no
/// credential read, no deadline, no challenge check. That line splits the
/// row's time between libcurl (its C line), the transport and the rest.
struct TLSRequestBenchmark {
    static let batch = 200
    let source: CredentialSource
    let request: HTTPRequest
    let transport: (any HTTPClient)?
    let maximumBodySize: Int

    init(base: String, transportAlone: Bool = false, maximumBodySize: Int = 1 << 16) throws {
        transport = transportAlone ? platformHTTPClient() : nil
        self.maximumBodySize = maximumBodySize
        let json = """
            {"id": "bench", "name": "Benchmark", "protocol": "oauth2",
             "authorization": {"url": "\(base)/authorize"},
             "token": {"url": "\(base)/token", "clientAuthentication": "post"},
             "api": {"origins": ["\(base)"]},
             "pkce": "S256", "redirect": {"port": 8765}}
            """
        let client = try OAuth2Client(
            descriptor: try ProviderDescriptor(json: Data(json.utf8), source: "benchmark"),
            settings: ClientSettings(clientID: "bench-client", clientSecret: "bench-secret"))
        // Signed in an hour ago for a day: no refresh is due during the run.
        let credential = Credential(
            providerID: "bench", accessToken: "bench-access", refreshToken: "bench-refresh",
            expiresAt: Date().addingTimeInterval(86_400), obtainedAt: Date().addingTimeInterval(-3_600))
        source = CredentialSource(
            authenticator: client, store: inMemoryCredentialStore([credential]), key: credential.key)
        request = HTTPRequest(method: .get, url: URL(string: "\(base)/me")!)
    }

    func getOnce() async throws {
        let (response, body): (HTTPResponse, HTTPResponseBody)
        if let transport {
            var authorized = request
            authorized.headerFields[.authorization] = "Bearer bench-access"
            (response, body) = try await transport.send(authorized, body: nil)
        } else {
            (response, body) = try await source.send(request, maximumBodySize: maximumBodySize, deadline: .seconds(10))
        }
        var bytes = 0
        for try await chunk in body { bytes += chunk.count }
        guard response.status == .ok, bytes > 0 else {
            throw BenchmarkFailure("GET /me answered \(response.status) with \(bytes) bytes")
        }
    }

    /// One batch: 200 GETs, `concurrency` tasks taking the next one until none is left.
    func batch(concurrency: Int) async throws {
        if concurrency <= 1 {
            for _ in 0..<Self.batch { try await getOnce() }
            return
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            let next = Counter()
            for _ in 0..<concurrency {
                group.addTask {
                    while next.take() < Self.batch { try await getOnce() }
                }
            }
            try await group.waitForAll()
        }
    }

    func measure(seconds: Double, concurrency: Int) async throws -> Measurement {
        try await getOnce()
        _ = try await Measurement.loop(seconds: 0.2, batch: 1) { try await batch(concurrency: concurrency) }
        return try await Measurement.loop(seconds: seconds, batch: 1) { try await batch(concurrency: concurrency) }
    }
}

/// The next request's number, shared by a batch's tasks.
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var value = 0

    func take() -> Int {
        lock.lock()
        defer { lock.unlock() }
        value += 1
        return value - 1
    }
}
