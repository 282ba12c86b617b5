import Foundation
import Testing

@testable import AuthKit

/// The wait shared by a refresh's callers, a key set's fetchers, a refresh
/// ahead of time and a Secret Service call: every caller gets the one
/// outcome, a caller that leaves (cancelled, or its time up) goes at once
/// while the others wait on, and nothing is resumed twice or left waiting.
@Suite(.timeLimit(.minutes(1))) struct SharedOutcomeTests {
    struct Failure: Error, Equatable {}

    /// Waits until `outcome` has `count` callers waiting.
    static func untilWaiting(_ count: Int, _ outcome: SharedOutcome<Int>) async {
        while outcome.waiting < count { await Task.yield() }
    }

    @Test func everyCallerGetsTheOneOutcomeAndLaterOnesGetItAtOnce() async throws {
        let outcome = SharedOutcome<Int>()
        let callers = (0..<5).map { _ in Task { try await outcome.value() } }
        await Self.untilWaiting(5, outcome)
        #expect(outcome.end(with: .success(7)))
        for caller in callers { #expect(try await caller.value == 7) }
        // Only the first outcome counts.
        #expect(!outcome.end(with: .success(8)))
        #expect(try await outcome.value() == 7)
    }

    @Test func aFailureReachesEveryCaller() async {
        let outcome = SharedOutcome<Int>()
        let callers = (0..<3).map { _ in Task { try await outcome.value() } }
        await Self.untilWaiting(3, outcome)
        outcome.end(with: .failure(Failure()))
        for caller in callers { await #expect(throws: Failure.self) { try await caller.value } }
    }

    @Test func aCancelledCallerGoesAtOnceAndTheOthersWaitOn() async throws {
        let outcome = SharedOutcome<Int>()
        let staying = Task { try await outcome.value() }
        let leaving = Task { try await outcome.value() }
        await Self.untilWaiting(2, outcome)
        leaving.cancel()
        await #expect(throws: AuthKitError.cancelled) { try await leaving.value }
        #expect(outcome.waiting == 1)
        #expect(outcome.end(with: .success(3)), "the caller still waiting took it")
        #expect(try await staying.value == 3)
    }

    @Test func aCallerCancelledBeforeItWaitsDoesNotWait() async {
        let outcome = SharedOutcome<Int>()
        let caller = Task {
            // Cancelled here, between joining and waiting.
            let ticket = outcome.join()
            withUnsafeCurrentTask { $0?.cancel() }
            return await outcome.wait(ticket)
        }
        let result = await caller.value
        #expect(result == nil)
        #expect(outcome.waiting == 0)
        #expect(!outcome.end(with: .success(1)), "nobody was there to take it")
    }

    @Test func leavingTwiceIsLeavingOnceAndALeaveAfterTheOutcomeChangesNothing() async throws {
        let outcome = SharedOutcome<Int>()
        let first = outcome.join()
        let second = outcome.join()
        outcome.leave(first)
        outcome.leave(second)
        outcome.leave(second) // leaving twice is leaving once
        #expect(await outcome.wait(second) == nil)
        #expect(!outcome.end(with: .success(1)), "everyone had left")

        let ended = SharedOutcome<Int>()
        let late = ended.join()
        ended.end(with: .success(2))
        ended.leave(late)
        let result = await ended.wait(late)
        #expect(try result?.get() == 2, "an outcome already there is returned")
    }

    @Test func aCallerLeftByADeadlineGoesWhileTheProducerGoesOn() async throws {
        let outcome = SharedOutcome<Int>()
        let caller = outcome.join()
        let waiter = Task { await outcome.wait(caller) }
        await Self.untilWaiting(1, outcome)
        outcome.leave(caller) // as a watchdog does
        #expect(await waiter.value == nil)
        #expect(!outcome.end(with: .success(5)), "the result is nobody's")
    }

    /// A caller that left, then reached its wait after the outcome came:
    /// nothing for it, as `end(with:)` said nobody took the outcome (a
    /// refresh ahead of time then handled its failure itself, and the
    /// caller handled it a second time).
    @Test func aCallerThatLeftGetsNothingOfAnOutcomeThatCameAfter() async throws {
        let outcome = SharedOutcome<Int>()
        let caller = outcome.join()
        outcome.leave(caller)
        #expect(!outcome.end(with: .failure(Failure())))
        #expect(await outcome.wait(caller) == nil)
        #expect(await outcome.waitWithoutCancellation(caller) == nil)
    }

    @Test func aWaitWithoutCancellationIsNotEndedByCancellation() async throws {
        let outcome = SharedOutcome<Int>()
        let caller = outcome.join()
        let waiter = Task { await outcome.waitWithoutCancellation(caller) }
        await Self.untilWaiting(1, outcome)
        waiter.cancel()
        // Still waiting: cancellation does not end it.
        for _ in 0..<100 { await Task.yield() }
        #expect(outcome.waiting == 1)
        outcome.end(with: .success(9))
        let result = await waiter.value
        #expect(try result?.get() == 9)
    }

    /// Callers that come, leave and take the outcome from many threads at
    /// once: each is resumed once (a continuation resumed twice, or never,
    /// traps or hangs this test), with the outcome or with nothing.
    @Test func manyCallersLeavingAndEndingAtOnceAreEachResumedOnce() async throws {
        for round in 0..<50 {
            let outcome = SharedOutcome<Int>()
            let results = await withTaskGroup(of: Int?.self, returning: [Int?].self) { group in
                for index in 0..<16 {
                    group.addTask {
                        let ticket = outcome.join()
                        if index.isMultiple(of: 3) { outcome.leave(ticket) }
                        return try? await outcome.wait(ticket)?.get()
                    }
                }
                group.addTask {
                    outcome.end(with: .success(round))
                    return round
                }
                var results: [Int?] = []
                for await result in group { results.append(result) }
                return results
            }
            #expect(results.count == 17)
            #expect(results.allSatisfy { $0 == nil || $0 == round })
            // Every caller that did not leave got it.
            #expect(results.filter { $0 == round }.count >= 11)
        }
    }
}
