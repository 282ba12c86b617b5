import AuthKit
import Foundation
import Testing

/// A body read with `for try await` on an actor is read on that actor
/// (``HTTPResponseBody/AsyncIterator/next(isolation:)``, SE-0421): a body
/// handed over whole (most answers) costs no hop to Swift's pool and back,
/// which an app reading on the main actor paid as two thread switches.
@Suite struct ResponseBodyReadingTests {
    /// A serial executor that counts the jobs it is handed: each is the
    /// actor's code starting, or resuming after it hopped elsewhere.
    final class CountingExecutor: SerialExecutor, @unchecked Sendable {
        private let lock = NSLock()
        private var count = 0
        private let queue = DispatchQueue(label: "ResponseBodyReadingTests")

        var enqueued: Int { lock.withLock { count } }

        func enqueue(_ job: consuming ExecutorJob) {
            lock.withLock { count += 1 }
            let job = UnownedJob(job)
            queue.async { job.runSynchronously(on: self.asUnownedSerialExecutor()) }
        }
    }

    actor Reader {
        let executor = CountingExecutor()
        nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

        func read(_ body: HTTPResponseBody) async throws -> [Int] {
            var sizes = [Int]()
            for try await chunk in body { sizes.append(chunk.count) }
            return sizes
        }
    }

    @Test func aCompleteBodyIsReadOnTheReadersActor() async throws {
        let reader = Reader()
        let sizes = try await reader.read(HTTPResponseBody(Data(repeating: 7, count: 300)))
        #expect(sizes == [300])
        // The call into the actor, and nothing else: reading through a
        // `next()` that hopped to the pool came back to the actor once
        // per chunk and once more for the end.
        #expect(reader.executor.enqueued == 1)
    }

    /// A streamed body's chunks come through `AsyncThrowingStream`, whose
    /// iterator (Swift 6.3) still reads each one on the pool: read all the
    /// same, in order, on the actor.
    @Test func streamedChunksAreReadInOrderOnTheActor() async throws {
        let (stream, continuation) = AsyncThrowingStream<Data, any Error>.makeStream()
        for size in [10, 20, 30] { continuation.yield(Data(repeating: 1, count: size)) }
        continuation.finish()
        let reader = Reader()
        let sizes = try await reader.read(HTTPResponseBody(stream, onCancel: {}))
        #expect(sizes == [10, 20, 30])
    }

    @Test func aChunkStillToComeIsWaitedForAndReadOnTheActor() async throws {
        let (stream, continuation) = AsyncThrowingStream<Data, any Error>.makeStream()
        let reader = Reader()
        let reading = Task { try await reader.read(HTTPResponseBody(stream, onCancel: {})) }
        continuation.yield(Data(repeating: 2, count: 5))
        try await Task.sleep(for: .milliseconds(20))
        continuation.yield(Data(repeating: 3, count: 6))
        continuation.finish()
        #expect(try await reading.value == [5, 6])
    }
}
