import AuthKit
import Foundation

@testable import AuthKitLoopback

/// A browser that only records what it was asked to open.
final class BrowserSpy: Sendable {
    let opened: AsyncStream<URL>
    private let continuation: AsyncStream<URL>.Continuation

    init() {
        (opened, continuation) = AsyncStream.makeStream(of: URL.self)
    }

    var launcher: @Sendable (URL) async throws -> Void {
        let continuation = self.continuation
        return { _ = continuation.yield($0) }
    }

    /// Ends ``opened``: the agent returned without opening (or before opening) anything more.
    func finish() { continuation.finish() }

    /// The next URL the agent opened.
    func next() async -> URL? {
        var iterator = opened.makeAsyncIterator()
        return await iterator.next()
    }
}

/// Starts `agent.run(attempt.session)`, waits until the browser was asked to
/// open the authorization URL (the listener is bound by then), and returns the
/// running task and that URL.
func start(_ agent: LoopbackUserAgent, _ attempt: TestAttempt, browser: BrowserSpy) async throws
    -> (task: Task<URL, Error>, authorizationURL: URL)
{
    let task = Task {
        defer { browser.finish() }
        return try await agent.run(attempt.session)
    }
    guard let url = await browser.next() else {
        _ = try await task.value // the agent failed before opening the browser: its error
        throw AuthKitError.misuse(.userAgentBrokeProtocol("the agent returned without opening the browser"))
    }
    return (task, url)
}
