import Foundation

/// A response body as it arrives: chunks of bytes, after content decoding.
///
/// Stopping early — breaking out of the loop, a size cap, a deadline, a
/// cancelled task — cancels the transfer, so a server that sends without end
/// costs no more than what was read. A transport makes one from the stream it
/// feeds and the way to stop it:
///
///     let (stream, continuation) = AsyncThrowingStream<Data, any Error>.makeStream()
///     return (head, HTTPResponseBody(stream, onCancel: { task.cancel() }))
public struct HTTPResponseBody: AsyncSequence, Sendable {
    private let stream: AsyncThrowingStream<Data, any Error>
    private let cancellation: Cancellation

    public init(_ stream: AsyncThrowingStream<Data, any Error>, onCancel: @escaping @Sendable () -> Void) {
        self.stream = stream
        self.cancellation = Cancellation(onCancel)
    }

    /// A body that is already complete (tests, transports that buffer).
    public init(_ data: Data) {
        let (stream, continuation) = AsyncThrowingStream<Data, any Error>.makeStream()
        if !data.isEmpty { continuation.yield(data) }
        continuation.finish()
        self.init(stream, onCancel: {})
    }

    /// Stops the transfer; the body is not read.
    public func cancel() { cancellation.fire() }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: stream.makeAsyncIterator(), watch: Watch(cancellation))
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: AsyncThrowingStream<Data, any Error>.AsyncIterator
        let watch: Watch

        public mutating func next() async throws -> Data? {
            do {
                let chunk = try await base.next()
                if chunk == nil { watch.finished() }
                return chunk
            } catch {
                watch.finished()
                throw error
            }
        }
    }

    /// Fires `onCancel` once.
    final class Cancellation: @unchecked Sendable {
        private let lock = NSLock()
        private var action: (@Sendable () -> Void)?
        init(_ action: @escaping @Sendable () -> Void) { self.action = action }
        func fire() {
            let action = lock.withLock { () -> (@Sendable () -> Void)? in
                defer { self.action = nil }
                return self.action
            }
            action?()
        }
    }

    /// Cancels the transfer when an iterator goes away before the body ended.
    final class Watch: @unchecked Sendable {
        private let cancellation: Cancellation
        private var done = false
        init(_ cancellation: Cancellation) { self.cancellation = cancellation }
        func finished() { done = true }
        deinit { if !done { cancellation.fire() } }
    }
}
