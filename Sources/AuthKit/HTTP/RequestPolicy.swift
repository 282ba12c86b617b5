import Dispatch

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The rules a request that carries a credential is sent under: whether a
/// redirect is followed, how much of the answer is read, and for how long.
///
/// One policy applies to every transport (``HTTPClient`` implementations never
/// follow redirects and stream the body), so these rules hold whatever HTTP
/// stack an app plugs in:
/// - **Token-endpoint calls** (code exchange, follow-up, refresh, revocation,
///   OAuth 1.0a request and access token) never follow a redirect: a 3xx is
///   `AuthKitError.redirectNotFollowed`. Following would resend the client
///   secret, the code or a token to wherever the server points.
/// - **Resource requests** may follow redirects; the credential goes only to
///   the origin it was meant for (RFC 9110 §15.4: "a user agent … SHOULD NOT
///   send" credentials to another origin; curl, Go's net/http and requests
///   behave so), and never from https to http.
/// - A credential goes over plain http only to a loopback host (RFC 6749
///   §2.3.1, RFC 6750 §5.3: TLS is required).
/// - The body is refused past `maximumBodySize` bytes while it arrives, after
///   decompression, and the whole request must finish within `deadline`.
package struct RequestPolicy: Sendable, Hashable {
    package enum Redirects: Sendable, Hashable {
        /// A 3xx is an error (`AuthKitError.redirectNotFollowed`).
        case refuse
        /// A 3xx is the answer, handed back unfollowed (curl without `-L`).
        case deliver
        /// Followed up to `maximum` times, under the origin rule.
        case follow(maximum: Int)
    }

    package var redirects: Redirects
    package var maximumBodySize: Int
    package var deadline: Duration

    package init(redirects: Redirects, maximumBodySize: Int, deadline: Duration) {
        self.redirects = redirects
        self.maximumBodySize = maximumBodySize
        self.deadline = deadline
    }

    /// A token answer is a few hundred bytes; 1 MiB and 30 s are generous.
    package static let tokenEndpoint = RequestPolicy(
        redirects: .refuse, maximumBodySize: 1 << 20, deadline: .seconds(30))
}

/// How ``withDeadline(_:allowed:display:stoppedBy:_:)`` stops an operation
/// that has not finished by its deadline.
package enum DeadlineStop: Sendable, Equatable {
    /// The operation runs as a child task, cancelled at the deadline: this
    /// stops any operation that ends once cancelled.
    case cancellingItsTask
    /// The operation runs in the caller's own task, and what it waits on is
    /// only transfers of a transport that stops them at the deadline itself
    /// (``ParsedURLHTTPClient/stopsAtDeadlineScope``, through
    /// ``DeadlineScope``). No child task: each child costs a thread wake-up
    /// per request when its answer comes (measured on the default
    /// transport: 5.4 → 3.9 context switches a code exchange or GET, 10–17%
    /// less CPU; Benchmarks/README.md).
    case stoppingItsTransfers
}

/// Runs `operation`, failing with a network error naming `display` when it
/// has not finished after `duration` (a server that drips one byte a second
/// would otherwise hold the caller for ever: the transport's timeout only
/// measures silence). `allowed` is the time the whole request was given,
/// which the error names: a body read chunk by chunk waits for each chunk
/// only what is left of it, and "within 481 ms" would misstate a 2-second
/// `--timeout`.
///
/// `stop` says how the operation is stopped at the deadline (``DeadlineStop``):
/// by default it runs as one child task that ``DeadlineWatchdog`` cancels;
/// the caller's own task is never cancelled by it, unless it is a task run
/// for this work alone (``DedicatedTask``), which is then cancelled instead. Where the runtime offers
/// `Task.immediate` (Swift 6.2; Linux, and macOS/iOS 26), the child starts on
/// the caller's thread, so an answer that is already there (a transport that
/// buffers, a test) costs no thread hand-off. Cancelling the caller cancels
/// the operation; the call returns when the operation has ended (every
/// AuthKit transport ends promptly once cancelled), with
/// ``AuthKitError/Code/cancelled``.
nonisolated(nonsending) package func withDeadline<Result: Sendable>(
    _ duration: Duration, allowed: Duration? = nil, display: String,
    stoppedBy stop: DeadlineStop = .cancellingItsTask,
    _ operation: nonisolated(nonsending) @escaping @Sendable () async throws -> Result
) async throws -> Result {
    // Passed already (what was left of a request's time went to a refresh):
    // nothing is started, not even for the watchdog's next tick.
    guard duration > .zero else {
        throw timedOut(display, within: allowed ?? duration)
    }
    // Nor for a caller cancelled already: the operation's task below, started
    // at once on this thread (`Task.immediate`), is not cancelled before it
    // first waits, and a transport that hands a request over at once could
    // send it for nobody: a code given up on, spent anyway.
    if Task.isCancelled { throw AuthKitError.cancelled }
    let deadline = ContinuousClock.now.advanced(by: duration)
    let outcome: Swift.Result<Result, any Error>
    let registration: UInt64
    switch stop {
    case .stoppingItsTransfers:
        let scope = DeadlineScope(deadline: deadline)
        registration = DeadlineWatchdog.shared.register(deadline) { scope.expire() }
        // An enclosing deadline that passes first stops this one's transfers too.
        DeadlineScope.current?.onExpiry { scope.expire() }
        do {
            outcome = .success(try await DeadlineScope.$current.withValue(scope) { try await operation() })
        } catch {
            outcome = .failure(error)
        }
    case .cancellingItsTask where DeadlineScope.current == nil && DedicatedTask.current?.claim() == true:
        // In a task run for this operation's callers alone, the deadline
        // cancels that task (``DedicatedTask``): no child task to start.
        // Not under an enclosing scope, whose expiry would come later too.
        let dedicated = DedicatedTask.current!
        registration = DeadlineWatchdog.shared.register(deadline) { dedicated.cancel() }
        do {
            outcome = .success(try await operation())
        } catch {
            outcome = .failure(error)
        }
        dedicated.release()
    case .cancellingItsTask:
        // A transfer inside answers to this task's cancellation, not to an
        // enclosing scope's deadline.
        let scoped: @Sendable () async throws -> Result = {
            try await DeadlineScope.$current.withValue(nil) { try await operation() }
        }
        let task: Task<Result, any Error>
        if #available(macOS 26.0, iOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, *) {
            task = Task.immediate { try await scoped() }
        } else {
            task = Task { try await scoped() }
        }
        registration = DeadlineWatchdog.shared.register(deadline) { task.cancel() }
        // Hidden from the task (above), an enclosing scope's deadline cancels it instead.
        DeadlineScope.current?.onExpiry { task.cancel() }
        outcome = await withTaskCancellationHandler {
            await task.result
        } onCancel: {
            task.cancel()
        }
    }
    // Past the deadline, whatever the operation ended with is a timeout: a
    // transport may end a cancelled transfer as if the body were complete.
    if DeadlineWatchdog.shared.finish(registration) {
        throw timedOut(display, within: allowed ?? duration)
    }
    // Likewise a cancelled caller is told so, whatever the cancelled transfer
    // ended with: a body cut short would read as a complete one, a token or
    // metadata answer cut short as a malformed one, an aborted connection as
    // a network failure.
    if Task.isCancelled { throw AuthKitError.cancelled }
    return try outcome.get()
}

/// A request to `display` that had no complete answer within `allowed`, the
/// time it was given: one error for every deadline that stops a request.
package func timedOut(_ display: String, within allowed: Duration) -> AuthKitError {
    AuthKitError.network(url: display, reason: .init(.timedOut, "no complete answer within \(allowed.spoken)"))
}

/// The deadline an operation runs under in its caller's task
/// (``DeadlineStop/stoppingItsTransfers``): a transfer that starts within it
/// asks to be stopped when it passes, and is stopped then (at once, if it
/// has already passed).
package final class DeadlineScope: @unchecked Sendable {
    /// The innermost scope of the running task; nil outside any, and inside
    /// an operation that runs as a task of its own.
    @TaskLocal package static var current: DeadlineScope?

    /// When it passes: a transport may also hold its transfer to it, so
    /// that the transfer ends on time on its own side too.
    package let deadline: ContinuousClock.Instant
    private let lock = ThreadLock()
    private var expired = false
    private var stops: [@Sendable () -> Void] = []

    package init(deadline: ContinuousClock.Instant) { self.deadline = deadline }

    /// Calls `stop` once the deadline passes; at once if it has.
    package func onExpiry(_ stop: @escaping @Sendable () -> Void) {
        let late = lock.withLock { () -> Bool in
            if !expired { stops.append(stop) }
            return expired
        }
        if late { stop() }
    }

    package func expire() {
        let due = lock.withLock { () -> [@Sendable () -> Void] in
            expired = true
            defer { stops = [] }
            return stops
        }
        for stop in due { stop() }
    }
}

extension Duration {
    /// Whole seconds, for messages.
    var seconds: Int64 { components.seconds }

    /// `30 s`, or `200 ms` below a second, for messages.
    package var spoken: String {
        self < .seconds(1) ? "\(components.attoseconds / 1_000_000_000_000_000) ms" : "\(seconds) s"
    }

    /// Whole milliseconds, at least 1, for a C `int` of them: libcurl's
    /// `CURLOPT_TIMEOUT_MS` and PostgreSQL's `lock_timeout`; nil past
    /// `Int32.max` of them (24.8 days), as for a deadline set far off to
    /// mean none: the milliseconds of `.seconds(1 << 60)` overflowed
    /// `Int64`, which stopped the process.
    package var int32Milliseconds: Int? {
        guard self < .milliseconds(Int64(Int32.max)) else { return nil }
        let (seconds, attoseconds) = components
        return max(1, Int(seconds * 1000 + attoseconds / 1_000_000_000_000_000))
    }

    /// For `DispatchTime`: nanoseconds, at least 0, at most about 292 years.
    var dispatchInterval: DispatchTimeInterval {
        let (seconds, attoseconds) = components
        guard seconds >= 0 else { return .nanoseconds(0) }
        guard seconds < Int64.max / 1_000_000_000 - 1 else { return .never }
        return .nanoseconds(Int(seconds * 1_000_000_000 + attoseconds / 1_000_000_000))
    }
}
