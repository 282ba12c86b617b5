import AuthKitTestSupport
import Foundation
import HTTPTypes
import Synchronization
import Testing

@testable import AuthKit

/// A body the caller would stream, capped within what the transport holds
/// before it streams anyway (`ParsedURLHTTPClient.collectsBodiesUpTo`), is
/// collected instead: the default transport then sends it through its event
/// loop when alone. What the caller reads, and what it is refused, must
/// not change with the way it came.
@Suite struct CollectedBodyTests {
    static let api = "https://api.test"

    static func read(_ body: HTTPResponseBody) async throws -> Data {
        var read = Data()
        for try await chunk in body { read.append(chunk) }
        return read
    }

    @Test func aBodyCappedWithinWhatTheTransportHoldsIsCollected() async throws {
        let answer = Data((0..<900).map { UInt8($0 % 251) })
        let transport = CollectRecordingTransport(collectsBodiesUpTo: 1_000, answer: answer)
        let source = try apiSource(at: Self.api, through: transport)
        let request = HTTPRequest(method: .get, url: URL(string: "\(Self.api)/me")!)

        let (head, body) = try await source.send(request, maximumBodySize: 1_000)
        #expect(head.status == .ok)
        #expect(body.complete == answer, "handed over whole, with no stream to read")
        #expect(transport.asked.withLock { $0 } == [1_000], "asked for whole, at the caller's cap")

        // One byte more than the transport holds: streamed, as before.
        let (_, streamed) = try await source.send(request, maximumBodySize: 1_001)
        #expect(streamed.complete == nil)
        #expect(try await Self.read(streamed) == answer)
        #expect(transport.asked.withLock { $0 } == [1_000, nil])
    }

    /// Collected, an answer past the cap comes back one byte past it
    /// (the transport's promise), and is refused as it is read, naming the
    /// cap, as a streamed one is: the head has come, the body fails.
    @Test func aCollectedBodyPastTheCapIsRefusedAsAStreamedOneIs() async throws {
        let answer = Data(repeating: 0x61, count: 5_000)
        let request = HTTPRequest(method: .get, url: URL(string: "\(Self.api)/me")!)
        for holds in [1_000, 0] {
            let transport = CollectRecordingTransport(collectsBodiesUpTo: holds, answer: answer)
            let (head, body) = try await apiSource(at: Self.api, through: transport).send(
                request, maximumBodySize: 1_000)
            #expect(head.status == .ok)
            await #expect {
                _ = try await Self.read(body)
            } throws: { error in
                guard case .responseTooLarge(let url, let limit)? = error.authKitReason else { return false }
                return url == "\(Self.api)/me" && limit == 1_000
            }
            #expect(transport.asked.withLock { $0 } == [holds == 0 ? nil : 1_000])
        }
    }

    /// A transport that says nothing of it (an app's own) is never asked to collect.
    @Test func aTransportThatHoldsNothingStreamsEvenATinyCap() async throws {
        let transport = CollectRecordingTransport(collectsBodiesUpTo: 0, answer: Data("ok".utf8))
        let (_, body) = try await apiSource(at: Self.api, through: transport)
            .send(HTTPRequest(method: .get, url: URL(string: "\(Self.api)/me")!), maximumBodySize: 2)
        #expect(try await Self.read(body) == Data("ok".utf8))
        #expect(transport.asked.withLock { $0 } == [nil])
    }

    #if os(Linux)
        /// The default transport end to end, on the process's shared loop and
        /// workers: answers within the cap read back whole and byte for byte,
        /// one past it refused, whichever way each came (another test's
        /// transfer in flight sends it through a worker instead).
        @Test func theDefaultTransportReadsCappedBodiesWholeAndRefusesLargerOnes() async throws {
            let small = String(repeating: "s", count: 3_000)
            let capped = String(repeating: "c", count: 64 << 10)
            let larger = String(repeating: "l", count: (64 << 10) + 1)
            try await withServer { server in
                server.route("GET", "/small") { _ in StubResponse.json(small).keptAlive() }
                server.route("GET", "/capped") { _ in StubResponse.json(capped).keptAlive() }
                server.route("GET", "/larger") { _ in StubResponse.json(larger).keptAlive() }
                let source = try apiSource(at: server.baseURL, through: platformHTTPClient())
                func get(_ path: String) async throws -> Data {
                    let (head, body) = try await source.send(
                        HTTPRequest(method: .get, url: URL(string: "\(server.baseURL)\(path)")!),
                        maximumBodySize: 64 << 10)
                    #expect(head.status == .ok)
                    return try await Self.read(body)
                }
                for _ in 0..<3 {
                    #expect(try await get("/small") == Data(small.utf8))
                    #expect(try await get("/capped") == Data(capped.utf8))
                }
                await #expect {
                    _ = try await get("/larger")
                } throws: { error in
                    guard case .responseTooLarge(_, let limit)? = error.authKitReason else { return false }
                    return limit == 64 << 10
                }
                // Each request carried the credential, as a streamed one does.
                let seen = server.requests(to: "/small") + server.requests(to: "/capped")
                #expect(seen.count == 6 && seen.allSatisfy { $0.header("Authorization") == "Bearer at-api" })
            }
        }
    #endif
}

/// Answers every request 200 with `answer`: streamed in two chunks, or,
/// asked for whole, held to one byte past the cap (the contract of
/// `send(_:url:body:collectingAtMost:)`); records which way each was asked
/// for (the cap, or nil for streamed).
private final class CollectRecordingTransport: ParsedURLHTTPClient, @unchecked Sendable {
    let collectsBodiesUpTo: Int
    let answer: Data
    let asked = Mutex<[Int?]>([])

    init(collectsBodiesUpTo: Int, answer: Data) {
        self.collectsBodiesUpTo = collectsBodiesUpTo
        self.answer = answer
    }

    func send(_ request: HTTPRequest, body: Data?) async throws -> (HTTPResponse, HTTPResponseBody) {
        try await send(request, url: request.url!, body: body)
    }

    func send(_ request: HTTPRequest, url: URL, body: Data?) async throws -> (HTTPResponse, HTTPResponseBody) {
        asked.withLock { $0.append(nil) }
        let (stream, continuation) = AsyncThrowingStream<Data, any Error>.makeStream()
        let half = answer.count / 2
        continuation.yield(Data(answer.prefix(half)))
        continuation.yield(Data(answer.dropFirst(half)))
        continuation.finish()
        return (HTTPResponse(status: .ok), HTTPResponseBody(stream, onCancel: {}))
    }

    func send(_ request: HTTPRequest, url: URL, body: Data?, collectingAtMost limit: Int) async throws -> (
        HTTPResponse, HTTPResponseBody
    ) {
        asked.withLock { $0.append(limit) }
        return (HTTPResponse(status: .ok), HTTPResponseBody(Data(answer.prefix(limit + 1))))
    }
}
