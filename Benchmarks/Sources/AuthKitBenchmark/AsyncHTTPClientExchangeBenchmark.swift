import AsyncHTTPClient
import Foundation
import NIOCore

/// The exchanges-ahc rows' floor: the same POST through AsyncHTTPClient
/// alone, configured as `AuthKitAsyncHTTPClient` configures it (the default
/// event loops, no redirects, no decompression), its answer collected; no
/// AuthKit at all. `concurrency` tasks post one after another, as
/// `measureNetworkExchanges` runs whole exchanges.
struct AsyncHTTPClientExchangeBenchmark {
    static let client = AsyncHTTPClient.HTTPClient(
        eventLoopGroup: AsyncHTTPClient.HTTPClient.defaultEventLoopGroup,
        configuration: .init(
            redirectConfiguration: .disallow, timeout: .init(connect: .seconds(10), read: .seconds(30)),
            decompression: .disabled))
    let tokenURL: String

    func post() async throws {
        var request = HTTPClientRequest(url: tokenURL)
        request.method = .POST
        request.headers.add(name: "Accept", value: "application/json")
        request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
        request.body = .bytes(ByteBuffer(bytes: TransportExchangeBenchmark.form))
        let response = try await Self.client.execute(request, timeout: .seconds(30))
        let body = try await response.body.collect(upTo: 1 << 20)
        guard response.status == .ok, body.readableBytes > 0 else {
            throw BenchmarkFailure(
                "the token endpoint answered \(response.status.code) with \(body.readableBytes) bytes")
        }
    }

    func measure(seconds: Double, concurrency: Int) async throws -> Measurement {
        try await post()
        return try await Measurement.concurrently(seconds: seconds, concurrency: concurrency) { try await post() }
    }
}
