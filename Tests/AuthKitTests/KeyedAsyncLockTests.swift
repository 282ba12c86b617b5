import Foundation
import Testing

@testable import AuthKit

/// The in-process half of every refresh and sign-in lock: one holder per
/// key, waiters served in turn, a wait bounded by its deadline and by its
/// task's cancellation, and nothing left held after any of them.
@Suite struct KeyedAsyncLockTests {
    /// The deadline of waits whose deadline is not what a test checks: long,
    /// so that a test run on a loaded machine (every test shares two threads
    /// here) cannot reach it while the 20 waiters queue one by one.
    static let unhurried = Duration.seconds(600)

    /// Records who is inside, and in which order they came in.
    actor Room {
        var inside = 0
        var most = 0
        var order: [Int] = []
        func enter(_ who: Int) {
            inside += 1
            most = max(most, inside)
            order.append(who)
        }
        func leave() { inside -= 1 }
    }

    @Test func oneHolderAtATimeAndWaitersInTurn() async throws {
        let lock = KeyedAsyncLock()
        let room = Room()
        let (gate, open) = AsyncStream<Void>.makeStream()
        // The first holder keeps the lock until every other task is queued.
        let first = Task {
            try await lock.withLock("k", timeout: Self.unhurried, what: "test") {
                await room.enter(0)
                for await _ in gate { break }
                await room.leave()
            }
        }
        while await room.order.isEmpty { await Task.yield() }
        var tasks: [Task<Void, any Error>] = []
        for who in 1...20 {
            tasks.append(
                Task {
                    try await lock.withLock("k", timeout: Self.unhurried, what: "test") {
                        await room.enter(who)
                        await Task.yield()
                        await room.leave()
                    }
                })
            // Each queued before the next starts: the order they came in is known.
            while await lock.waiting(for: "k") < who { await Task.yield() }
        }
        open.yield()
        try await first.value
        for task in tasks { try await task.value }
        let most = await room.most
        let order = await room.order
        #expect(most == 1)
        #expect(order == Array(0...20), "\(order)")
        // Free again: taken at once by a new caller.
        let again = try await lock.withLock("k", timeout: .milliseconds(1), what: "test") { 42 }
        #expect(again == 42)
    }

    /// A task holding `key` until `release` is called; returns once it holds it.
    static func hold(_ key: String, of lock: KeyedAsyncLock) async -> (
        holder: Task<Void, any Error>, release: @Sendable () -> Void
    ) {
        let (gate, open) = AsyncStream<Void>.makeStream()
        let (held, holding) = AsyncStream<Void>.makeStream()
        let holder = Task {
            try await lock.withLock(key, timeout: Self.unhurried, what: "test") {
                holding.yield()
                for await _ in gate { break }
            }
        }
        for await _ in held { break }
        return (holder, { open.yield() })
    }

    @Test func aWaitEndsAtItsDeadlineAndLeavesNothingBehind() async throws {
        let lock = KeyedAsyncLock()
        let (holder, open) = await Self.hold("k", of: lock)
        await #expect {
            try await lock.withLock("k", timeout: .milliseconds(100), what: "the refresh of x") { 1 }
        } throws: { error in
            guard case .store(let path, let reason)? = error.authKitReason else { return false }
            return path == "the refresh of x" && reason.kind == .busy
        }
        // Another key is not held.
        #expect(try await lock.withLock("other", timeout: .milliseconds(1), what: "test") { 2 } == 2)
        open()
        try await holder.value
        // The timed-out waiter was not handed the lock: it is free.
        #expect(try await lock.withLock("k", timeout: .milliseconds(1), what: "test") { 3 } == 3)
    }

    @Test func aCancelledWaitLeavesTheQueue() async throws {
        let lock = KeyedAsyncLock()
        let (holder, open) = await Self.hold("k", of: lock)
        let ran = LockedValue(false)
        let waiter = Task {
            try await lock.withLock("k", timeout: Self.unhurried, what: "test") { ran.withLock { $0 = true } }
        }
        while await lock.waiting(for: "k") < 1 { await Task.yield() }
        waiter.cancel()
        await #expect(throws: AuthKitError.self) { try await waiter.value }
        open()
        try await holder.value
        #expect(!ran.current, "a cancelled waiter ran its body")
        #expect(await lock.waiting(for: "k") == 0)
        #expect(try await lock.withLock("k", timeout: .milliseconds(1), what: "test") { 4 } == 4)
    }
}
