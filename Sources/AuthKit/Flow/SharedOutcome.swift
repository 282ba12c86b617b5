#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// One outcome that several callers wait for, each free to stop waiting
/// before it comes: a refresh under way (``RefreshCoordinator``), a key set
/// being fetched (``KeySetCache``), a refresh ahead of time that a caller
/// waits for only so long (``CredentialSource/current(at:)``), a Secret
/// Service call on a thread of its own.
///
/// A caller joins (``join()``) and waits (``wait(_:)``). It leaves when its
/// task is cancelled, or when something else decides it has waited long
/// enough (``leave(_:)``, from a deadline): its wait then returns `nil` at
/// once. Whatever produces the outcome goes on regardless, and hands it
/// over with ``end(with:)``, which says whether any caller was still there
/// to take it; callers that join later get it at once.
///
/// Awaiting the producing task itself held a cancelled caller for as long
/// as that task took (up to a request's 30 s). Four hand-written copies of
/// this wait each had to get the same races right: a caller cancelled
/// before it begins to wait, an outcome that comes as a caller leaves, a
/// continuation resumed exactly once.
package final class SharedOutcome<Value: Sendable>: @unchecked Sendable {
    /// One caller's place among those waiting.
    package struct Ticket: Hashable, Sendable {
        fileprivate let number: UInt64
    }

    private typealias Waiter = CheckedContinuation<Result<Value, any Error>?, Never>

    private let lock = ThreadLock()
    // Every field below under `lock`.
    private var outcome: Result<Value, any Error>?
    // Lists, not a set and a dictionary: one or two callers share most
    // outcomes (a refresh, a key set's fetch), and a hashed collection's
    // storage, made and freed per refresh, was a measurable part of one.
    /// Callers that joined and have not left: waiting already, or about to.
    private var present = Tickets()
    private var waiters: [(ticket: UInt64, waiter: Waiter)] = []
    private var lastTicket: UInt64 = 0

    package init() {}

    /// A place for one more caller, taken before anything can end or leave
    /// for it (a deadline registered with the ticket, the producer started).
    package func join() -> Ticket {
        lock.withLock {
            lastTicket += 1
            present.insert(lastTicket)
            return Ticket(number: lastTicket)
        }
    }

    /// The outcome, once it comes; `nil` when the caller left first: its
    /// task cancelled (before or during the wait) or ``leave(_:)``. A
    /// caller that left gets `nil` even if the outcome came after it went
    /// (``end(with:)`` said nobody took it, and its producer acted on that);
    /// one that leaves after the outcome came has not left.
    package func wait(_ ticket: Ticket) async -> Result<Value, any Error>? {
        await withTaskCancellationHandler {
            await waitWithoutCancellation(ticket)
        } onCancel: {
            leave(ticket)
        }
    }

    /// ``wait(_:)`` for a caller whose task's cancellation must not cut it
    /// short: only ``leave(_:)`` does. A Secret Service call waited for so
    /// may still change what is stored, and a caller that went on at its
    /// cancellation would say it failed.
    package func waitWithoutCancellation(_ ticket: Ticket) async -> Result<Value, any Error>? {
        await withCheckedContinuation { (continuation: Waiter) in
            let ready = lock.withLock { () -> Result<Value, any Error>?? in
                // Left before it got here (its cancellation handler ran
                // first, or a deadline): nothing, even if the outcome came
                // since, as ``end(with:)`` then said nobody took it.
                guard present.contains(ticket.number) else { return .some(nil) }
                if let outcome { return .some(outcome) }
                waiters.append((ticket.number, continuation))
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }

    /// Joins and waits, as a caller with nothing else to do meanwhile.
    /// - Throws: the outcome's error, or ``AuthKitError/Code/cancelled`` when the
    ///   caller's task was cancelled first.
    package func value() async throws -> Value {
        guard let outcome = await wait(join()) else { throw AuthKitError.cancelled }
        return try outcome.get()
    }

    /// The caller stops waiting, unless the outcome is there already (then
    /// nothing changes: it is the caller's). Leaving twice is leaving once.
    package func leave(_ ticket: Ticket) {
        let waiter = lock.withLock { () -> Waiter? in
            guard outcome == nil, present.remove(ticket.number) else { return nil }
            return waiters.firstIndex { $0.ticket == ticket.number }.map { waiters.remove(at: $0).waiter }
        }
        waiter?.resume(returning: nil)
    }

    /// Hands `result` to the callers waiting and to any that join later.
    /// Only the first outcome counts.
    /// - Returns: whether any caller that joined had not left (`false` when
    ///   every one had gone, or none had come): nobody took it otherwise.
    @discardableResult
    package func end(with result: Result<Value, any Error>) -> Bool {
        let (waiting, taken) = lock.withLock { () -> ([Waiter], Bool) in
            guard outcome == nil else { return ([], false) }
            outcome = result
            defer { waiters = [] }
            return (waiters.map(\.waiter), !present.isEmpty)
        }
        for waiter in waiting { waiter.resume(returning: result) }
        return taken
    }

    /// The outcome, if it has come.
    package var ended: Result<Value, any Error>? { lock.withLock { outcome } }

    /// Callers waiting now (joined, in ``wait(_:)``, not left): for a test
    /// to know they are all there before it lets the outcome come.
    package var waiting: Int { lock.withLock { waiters.count } }

    /// Ticket numbers (from 1), the first held in place: most outcomes have
    /// one caller, and a list's storage for it, made and freed each time,
    /// was one allocation of every refresh (counted).
    private struct Tickets {
        /// 0: none.
        private var first: UInt64 = 0
        private var others: [UInt64] = []

        var isEmpty: Bool { first == 0 && others.isEmpty }

        func contains(_ number: UInt64) -> Bool { first == number || others.contains(number) }

        mutating func insert(_ number: UInt64) {
            if first == 0 { first = number } else { others.append(number) }
        }

        /// Whether `number` was there.
        mutating func remove(_ number: UInt64) -> Bool {
            if first == number {
                first = 0
                return true
            }
            guard let index = others.firstIndex(of: number) else { return false }
            others.remove(at: index)
            return true
        }
    }
}
