import AuthKitTestSupport
import Foundation
import HTTPTypes
import Logging
import Synchronization
import Testing

@testable import AuthKit

/// A request deadline held without a task of its own
/// (`DeadlineStop.stoppingItsTransfers`): the operation runs in the caller's
/// task, and what it waits on is stopped through `DeadlineScope`. Used only
/// with a transport that stops its transfers so (`stopsAtDeadlineScope`);
/// any other keeps the child task the watchdog cancels.
@Suite struct DeadlineScopeTests {
    /// A transfer that never answers unless stopped; it asks the scope to stop it.
    static func neverAnswering() async throws -> Int {
        let stopped = StopSignal()
        DeadlineScope.current?.onExpiry { stopped.fire() }
        try await stopped.wait()
        return 1
    }

    @Test func whatAsksToBeStoppedEndsAtTheDeadline() async throws {
        let started = ContinuousClock.now
        await #expect {
            try await withDeadline(
                .milliseconds(200), display: "https://as.test/token", stoppedBy: .stoppingItsTransfers
            ) { try await Self.neverAnswering() }
        } throws: { error in
            guard case .network(let url, let reason)? = error.authKitReason else { return false }
            return url == "https://as.test/token" && reason.kind == .timedOut && reason.detail.contains("within 200 ms")
        }
        // Loose: the suites run in parallel on two cores. Without the stop,
        // the operation would wait for ever.
        #expect(ContinuousClock.now - started < .seconds(120))
    }

    /// A deadline inside another (either mode) is stopped by the enclosing
    /// one when that passes first: a scope of its own, or a task of its
    /// own, hides the enclosing scope from what it runs.
    @Test(arguments: [DeadlineStop.stoppingItsTransfers, .cancellingItsTask])
    func anEnclosingDeadlineStopsANestedOne(inner: DeadlineStop) async throws {
        let started = ContinuousClock.now
        await #expect {
            try await withDeadline(.milliseconds(200), display: "outer", stoppedBy: .stoppingItsTransfers) {
                try await withDeadline(.seconds(600), display: "inner", stoppedBy: inner) {
                    if inner == .stoppingItsTransfers { return try await Self.neverAnswering() }
                    try await Task.sleep(for: .seconds(600))
                    return 1
                }
            }
        } throws: { error in
            guard case .network(let url, let reason)? = error.authKitReason else { return false }
            return url == "outer" && reason.kind == .timedOut
        }
        #expect(ContinuousClock.now - started < .seconds(120))
    }

    @Test func aStopAskedForAfterTheDeadlineRunsAtOnce() async throws {
        let scope = DeadlineScope(deadline: .now)
        scope.expire()
        let stopped = StopSignal()
        scope.onExpiry { stopped.fire() }
        #expect(stopped.hasFired)
    }

    /// The operation runs in the caller's task (no child task, no thread
    /// wake-up), under a scope; a deadline that runs its operation as a task
    /// of its own shows that task no enclosing scope, whose deadline would
    /// otherwise stop transfers it does not own.
    @Test func onlyTheStoppingModeRunsInTheCallersTaskUnderAScope() async throws {
        let caller = withUnsafeCurrentTask { $0?.hashValue }
        let inside = try await withDeadline(.seconds(30), display: "x", stoppedBy: .stoppingItsTransfers) {
            let task = withUnsafeCurrentTask { $0?.hashValue }
            let nested = try await withDeadline(.seconds(30), display: "y") {
                (withUnsafeCurrentTask { $0?.hashValue }, DeadlineScope.current == nil)
            }
            return (task, DeadlineScope.current != nil, nested)
        }
        #expect(inside.0 == caller)
        #expect(inside.1, "no scope inside the stopping mode")
        #expect(inside.2.0 != caller, "the default mode runs its operation as a task of its own")
        #expect(inside.2.1, "a task of its own saw the enclosing scope")
    }

    /// `FlowTransport` picks the mode from its transport: one that stops its
    /// transfers gets the caller's task and a scope; any other (an app's, or
    /// AsyncHTTPClient's) a task the deadline cancels.
    @Test(arguments: [true, false])
    func theTransportDecidesHowItsRequestsAreStopped(stopsItself: Bool) async throws {
        let transport = ScopeRecordingTransport(stopsAtDeadlineScope: stopsItself)
        let flow = FlowTransport(http: transport, logger: Logger(label: "test"))
        let caller = withUnsafeCurrentTask { $0?.hashValue }
        let request = OutgoingRequest(method: .post, url: URL(string: "http://127.0.0.1:9/token")!)
        let response = try await flow.send(request, step: .tokenExchange)
        #expect(response.status == 200)
        let seen = try #require(transport.seen.withLock { $0 })
        #expect(seen.scoped == stopsItself)
        #expect((seen.task == caller) == stopsItself)
    }

    #if os(Linux)
        /// The default transport, end to end: an API that never answers is
        /// stopped by the request's deadline (1 s), with no task for the
        /// deadline to cancel.
        @Test func theDefaultTransportStopsASilentAPIAtTheDeadline() async throws {
            try await withServer { server in
                server.route("GET", "/me") { _ in StubResponse.json("{}").delayed(by: .seconds(30)) }
                let pool = ClosingPool(keptIdle: 2)
                let transport = CurlHTTPClient(timeout: 30, workers: pool.workers)
                #expect(
                    FlowTransport(http: transport, logger: Logger(label: "test")).deadlineStop == .stoppingItsTransfers)
                let source = try apiSource(at: server.baseURL, through: transport)
                let started = ContinuousClock.now
                await #expect {
                    _ = try await source.send(
                        HTTPRequest(method: .get, url: URL(string: "\(server.baseURL)/me")!), deadline: .seconds(1))
                } throws: { error in
                    guard case .network(_, let reason)? = error.authKitReason else { return false }
                    return reason.kind == .timedOut && reason.detail.contains("within 1 s")
                }
                // Well before the server's 30 s (and the transport's 30 s of silence).
                #expect(ContinuousClock.now - started < .seconds(20))
            }
        }

        /// A body that drips after its head, read through `CredentialSource`:
        /// each wait for a chunk is stopped through the body itself (no task
        /// of its own), at the request's deadline (5 s: the head must come
        /// first, with the whole suite running beside it).
        @Test func theDefaultTransportStopsADrippingBodyAtTheDeadline() async throws {
            try await withServer { server in
                server.route("GET", "/feed") { _ in .streaming(.drip(every: .milliseconds(100))) }
                let pool = ClosingPool(keptIdle: 2)
                let source = try apiSource(
                    at: server.baseURL, through: CurlHTTPClient(timeout: 30, workers: pool.workers))
                let started = ContinuousClock.now
                let (response, body) = try await source.send(
                    HTTPRequest(method: .get, url: URL(string: "\(server.baseURL)/feed")!), deadline: .seconds(5))
                #expect(response.status == .ok)
                var read = 0
                await #expect {
                    for try await chunk in body { read += chunk.count }
                } throws: { error in
                    guard case .network(_, let reason)? = error.authKitReason else { return false }
                    return reason.kind == .timedOut && reason.detail.contains("within 5 s")
                }
                #expect(read > 0, "the body's first bytes were read before the deadline")
                // Loose (the whole suite shares two cores); without the stop,
                // the drip would go on for ever.
                #expect(ContinuousClock.now - started < .seconds(60))
            }
        }
    #endif
}

/// Fired once, from any thread; waited on by one task.
private final class StopSignal: @unchecked Sendable {
    private let lock = NSLock()
    private var fired = false
    private var waiter: CheckedContinuation<Void, any Error>?

    var hasFired: Bool { lock.withLock { fired } }

    func fire() {
        let waiting = lock.withLock { () -> CheckedContinuation<Void, any Error>? in
            fired = true
            defer { waiter = nil }
            return waiter
        }
        waiting?.resume(throwing: CancellationError())
    }

    func wait() async throws {
        try await withCheckedThrowingContinuation { continuation in
            let already = lock.withLock { () -> Bool in
                if !fired { waiter = continuation }
                return fired
            }
            if already { continuation.resume(throwing: CancellationError()) }
        }
    }
}

/// Answers 200 at once, recording the task it was called in and whether a
/// deadline scope was there.
private final class ScopeRecordingTransport: ParsedURLHTTPClient, @unchecked Sendable {
    let stopsAtDeadlineScope: Bool
    let seen = Mutex<(task: Int?, scoped: Bool)?>(nil)

    init(stopsAtDeadlineScope: Bool) { self.stopsAtDeadlineScope = stopsAtDeadlineScope }

    func send(_ request: HTTPRequest, body: Data?) async throws -> (HTTPResponse, HTTPResponseBody) {
        try await send(request, url: request.url!, body: body)
    }

    func send(_ request: HTTPRequest, url: URL, body: Data?) async throws -> (HTTPResponse, HTTPResponseBody) {
        let task = withUnsafeCurrentTask { $0?.hashValue }
        seen.withLock { $0 = (task, DeadlineScope.current != nil) }
        return (
            HTTPResponse(status: .ok, headerFields: [.contentType: "application/json"]),
            HTTPResponseBody(Data("{}".utf8))
        )
    }
}
