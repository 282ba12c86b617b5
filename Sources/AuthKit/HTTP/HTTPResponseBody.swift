#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A response body as it arrives: chunks of bytes, after content decoding.
///
/// Stopping early — breaking out of the loop, a size cap, a deadline, a
/// cancelled task, dropping the body unread — cancels the transfer (so a
/// transport's `onCancel` may run from a deinit, on any thread, and after
/// the transfer has ended: it must then do nothing), so a server that sends without end
/// costs no more than what was read. A transport makes one from the stream it
/// feeds and the way to stop it:
///
///     let (stream, continuation) = AsyncThrowingStream<Data, any Error>.makeStream()
///     return (head, HTTPResponseBody(stream, onCancel: { task.cancel() }))
public struct HTTPResponseBody: AsyncSequence, Sendable {
    /// A stream the transport feeds, or bytes that are all there already
    /// (kept as they are: no stream to set up for an answer in memory).
    private enum Source: Sendable {
        case stream(AsyncThrowingStream<Data, any Error>, Cancellation)
        case complete(Data)
    }

    private let source: Source

    public init(_ stream: AsyncThrowingStream<Data, any Error>, onCancel: @escaping @Sendable () -> Void) {
        self.source = .stream(stream, Cancellation(onCancel))
    }

    /// A body that is already complete (tests, transports that buffer).
    public init(_ data: Data) {
        self.source = .complete(data)
    }

    /// The whole body, when it was complete before anyone read it (nothing
    /// to wait for, so no deadline to watch while reading it).
    package var complete: Data? {
        if case .complete(let data) = source { return data }
        return nil
    }

    /// Stops the transfer; the body is not read.
    public func cancel() {
        if case .stream(_, let cancellation) = source { cancellation.fire() }
    }

    public func makeAsyncIterator() -> AsyncIterator {
        switch source {
        case .stream(let stream, let cancellation):
            return AsyncIterator(state: .stream(stream.makeAsyncIterator(), Watch(cancellation)))
        case .complete(let data):
            return AsyncIterator(state: .complete(data.isEmpty ? nil : data))
        }
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        enum State {
            case stream(AsyncThrowingStream<Data, any Error>.AsyncIterator, Watch)
            case complete(Data?)
        }

        var state: State

        public mutating func next() async throws -> Data? { try await nextChunk() }

        /// ``next()`` on the caller's actor (SE-0421), which `for try await`
        /// calls: a body handed over whole (a token's answer; an API's
        /// that arrived with its head, its `Content-Length` within 64 KiB,
        /// with the default transport) is read on the main actor, or any
        /// other, without a hop to Swift's pool and back (two thread
        /// switches). A streamed
        /// body's chunks come through `AsyncThrowingStream`, whose own
        /// iterator (Swift 6.3) still reads each on the pool.
        public mutating func next(isolation actor: isolated (any Actor)?) async throws -> Data? {
            try await nextChunk()
        }

        /// ``next()`` where its caller runs: AuthKit's own readers of a
        /// body (a token answer read whole) are already where it is read,
        /// and each hop there and back took the task's status lock (about
        /// one in twelve samples of a refresh; docs/performance.md).
        nonisolated(nonsending) package mutating func nextChunk() async throws -> Data? {
            switch state {
            case .complete(let data):
                state = .complete(nil)
                return data
            case .stream(var base, let watch):
                do {
                    let chunk = try await base.next(isolation: #isolation)
                    state = .stream(base, watch)
                    // A stream's iterator ends quietly when its task is
                    // cancelled: a body cut short there is an error, not the
                    // end (as AsyncHTTPClient's says it), and its transfer is
                    // stopped. One that ended as its task was cancelled is
                    // said cancelled too; that task goes no further anyway.
                    if chunk == nil, Task.isCancelled {
                        watch.cancel()
                        throw CancellationError()
                    }
                    if chunk == nil { watch.finished() }
                    return chunk
                } catch {
                    watch.finished()
                    throw error
                }
            }
        }
    }

    /// Fires `onCancel` once: when asked, or when the last copy of the body
    /// (and of its iterators) goes away before it was read to its end. A
    /// body dropped unread (a caller that wanted only the head) otherwise
    /// left its transfer waiting for a reader, holding a thread and a
    /// connection for the life of the process.
    final class Cancellation: @unchecked Sendable {
        private let lock = ThreadLock()
        private var action: (@Sendable () -> Void)?
        init(_ action: @escaping @Sendable () -> Void) { self.action = action }
        func fire() {
            let action = lock.withLock { () -> (@Sendable () -> Void)? in
                defer { self.action = nil }
                return self.action
            }
            action?()
        }
        /// The body was read to its end (or failed): nothing to stop.
        func disarm() { lock.withLock { action = nil } }
        deinit { action?() }
    }

    /// Cancels the transfer when an iterator goes away before the body ended.
    final class Watch: @unchecked Sendable {
        private let cancellation: Cancellation
        private var done = false
        init(_ cancellation: Cancellation) { self.cancellation = cancellation }
        func finished() {
            done = true
            cancellation.disarm()
        }
        /// Stopped before its end: the transfer is stopped now.
        func cancel() {
            done = true
            cancellation.fire()
        }
        deinit { if !done { cancellation.fire() } }
    }
}
