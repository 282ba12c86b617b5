import Foundation
import Testing

@testable import AuthKit

/// The per-request deadline (`withDeadline`, `DeadlineWatchdog`) and the
/// refresh merging (`RefreshCoordinator`) without a network: their timing
/// and cancellation rules, which the benchmarks' fast paths must not bend.
@Suite struct DeadlineTests {
    @Test func aSlowOperationEndsAtTheDeadlineAndTheCallerIsNotCancelled() async throws {
        let started = ContinuousClock.now
        await #expect {
            try await withDeadline(.milliseconds(200), display: "https://as.test/token") {
                try await Task.sleep(for: .seconds(600))
                return 1
            }
        } throws: { error in
            guard case .network(let url, let reason)? = error.authKitReason else { return false }
            return url == "https://as.test/token" && reason.kind == .timedOut && reason.detail.contains("within 200 ms")
        }
        // The error proves the deadline ended it; the bound is loose because
        // the whole suite runs in parallel on two cores.
        #expect(ContinuousClock.now - started < .seconds(120))
        // The deadline cancels the request, never the task that made it.
        #expect(!Task.isCancelled)
        try await Task.sleep(for: .milliseconds(1))
    }

    @Test func aQuickOperationKeepsItsResult() async throws {
        let value = try await withDeadline(.seconds(30), display: "x") { 42 }
        #expect(value == 42)
        let thrown = await #expect(throws: AuthKitError.self) {
            try await withDeadline(.seconds(30), display: "x") { () async throws -> Int in throw AuthKitError.cancelled
            }
        }
        #expect(thrown == .cancelled)
    }

    @Test func cancellingTheCallerCancelsTheOperation() async throws {
        let task = Task {
            try await withDeadline(.seconds(600), display: "x") {
                try await Task.sleep(for: .seconds(600))
                return 1
            }
        }
        try await Task.sleep(for: .milliseconds(100))
        let started = ContinuousClock.now
        task.cancel()
        await #expect(throws: AuthKitError.cancelled) { _ = try await task.value }
        #expect(ContinuousClock.now - started < .seconds(120))
    }

    /// A transport may end a cancelled transfer as if it were complete (a
    /// body cut short, a response parsed from half its bytes): the cancelled
    /// caller is told it cancelled, not handed that result. Discovery read a
    /// cut metadata document as "not a JSON object".
    @Test func aCancelledCallerGetsNoResultFromTheCancelledOperation() async throws {
        let task = Task {
            try await withDeadline(.seconds(600), display: "x") { () async throws -> Int in
                // Ends "normally" once cancelled, as a cut-short transfer does.
                while !Task.isCancelled { try? await Task.sleep(for: .milliseconds(5)) }
                return 7
            }
        }
        try await Task.sleep(for: .milliseconds(100))
        task.cancel()
        await #expect(throws: AuthKitError.cancelled) { _ = try await task.value }
    }

    /// A caller cancelled already starts nothing, in either way of stopping:
    /// the operation's task, started on the caller's thread, was not
    /// cancelled before it first waited, and AsyncHTTPClient wrote the
    /// request on a kept connection in that time (a code given up on, spent).
    @Test(arguments: [DeadlineStop.cancellingItsTask, .stoppingItsTransfers])
    func aCallerCancelledAlreadyStartsNothing(stop: DeadlineStop) async throws {
        let ran = LockedValue(false)
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await withDeadline(.seconds(600), display: "x", stoppedBy: stop) { () async throws -> Int in
                ran.withLock { $0 = true }
                return 7
            }
        }
        await #expect(throws: AuthKitError.cancelled) { _ = try await task.value }
        #expect(!ran.current, "the operation ran for a caller cancelled already")
    }

    @Test func theWatchdogFiresOnlyWhatIsDue() async throws {
        let watchdog = DeadlineWatchdog()
        let fired = LockedValue([String]())
        let past = watchdog.register(.now - .seconds(1)) { fired.withLock { $0.append("past") } }
        let future = watchdog.register(.now + .seconds(60)) { fired.withLock { $0.append("future") } }
        let deadline = ContinuousClock.now + .seconds(5)
        while fired.current.isEmpty, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        #expect(fired.current == ["past"])
        #expect(watchdog.finish(past), "a fired registration must say so")
        #expect(!watchdog.finish(future))
        try await Task.sleep(for: DeadlineWatchdog.resolution * 3)
        #expect(fired.current == ["past"], "a finished registration fired")
    }
}

@Suite struct RefreshCoordinatorTests {
    static let credential = Credential(providerID: "p", accessToken: "a", refreshToken: "r")

    @Test func concurrentCallersShareOneRun() async throws {
        let coordinator = RefreshCoordinator()
        let runs = LockedValue(0)
        let results = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    try await coordinator.refresh(Self.credential) {
                        runs.withLock { $0 += 1 }
                        // Until all eight wait: after a fixed 300 ms, a caller
                        // a loaded run started late would refresh anew.
                        let end = ContinuousClock.now.advanced(by: .seconds(30))
                        while coordinator.waiterCount < 8, ContinuousClock.now < end {
                            try await Task.sleep(for: .milliseconds(5))
                        }
                        return Credential(providerID: "p", accessToken: "new", refreshToken: "r2")
                    }.accessToken
                }
            }
            return try await group.reduce(into: [String]()) { $0.append($1) }
        }
        #expect(results == Array(repeating: "new", count: 8))
        #expect(runs.current == 1)
    }

    /// The first caller's cancellation is its own: the refresh it started
    /// goes on for a caller still waiting, which gets its answer. Stopped and
    /// run again, its request may already have spent the refresh token the
    /// second run sends again (RFC 9700 §4.14.2).
    @Test func aWaiterOutlivesTheFirstCallersCancellation() async throws {
        let coordinator = RefreshCoordinator()
        let runs = LockedValue(0)
        let release = AsyncStream<Void>.makeStream()
        let first = Task {
            try await coordinator.refresh(Self.credential) {
                runs.withLock { $0 += 1 }
                for await _ in release.stream {}
                try Task.checkCancellation()
                return Credential(providerID: "p", accessToken: "first", refreshToken: "r2")
            }
        }
        while runs.current == 0 { try await Task.sleep(for: .milliseconds(5)) }
        let second = Task {
            try await coordinator.refresh(Self.credential) {
                runs.withLock { $0 += 1 }
                return Credential(providerID: "p", accessToken: "second", refreshToken: "r3")
            }
        }
        // The second is a waiter of the first's refresh before the first is
        // cancelled (a fixed sleep let a loaded machine start it afterwards,
        // and the waiter's path went untested).
        let waitingSince = ContinuousClock.now
        while coordinator.waiterCount < 2 {
            try #require(ContinuousClock.now - waitingSince < .seconds(60), "the second caller never waited")
            try await Task.sleep(for: .milliseconds(5))
        }
        first.cancel()
        await #expect(throws: AuthKitError.cancelled) { _ = try await first.value }
        release.continuation.finish()
        #expect(try await second.value.accessToken == "first")
        #expect(runs.current == 1)
    }

    /// An abandoned refresh (its lone caller cancelled once its request was
    /// under way): ended, with nobody to take its answer.
    static func abandonedRefresh(
        _ coordinator: RefreshCoordinator, runs: LockedValue<Int>, answer: Credential
    ) async throws {
        let release = LockedValue<CheckedContinuation<Void, Never>?>(nil)
        let caller = Task {
            try await coordinator.refresh(Self.credential) {
                runs.withLock { $0 += 1 }
                await withCheckedContinuation { continuation in release.withLock { $0 = continuation } }
                try Task.checkCancellation()
                return answer
            }
        }
        while release.current == nil { try await Task.sleep(for: .milliseconds(5)) }
        caller.cancel()
        await #expect(throws: AuthKitError.cancelled) { _ = try await caller.value }
        release.withLock { $0?.resume() }
        let since = ContinuousClock.now
        while coordinator.flightsInProgress > 0 {
            try #require(ContinuousClock.now - since < .seconds(60), "the abandoned refresh did not end")
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    /// The last caller going does not stop the refresh: its request may
    /// already have spent the refresh token (RFC 9700 §4.14.2). Its rotated
    /// answer, which nobody took, goes to the next caller with the spent
    /// token, which sends nothing; once no longer remembered, a caller refreshes.
    /// (Remembered for 5 minutes, then not at all: remembered 800 ms, a
    /// loaded run could pass that before the next caller came.)
    @Test func theLastCallerGoingLeavesTheRefreshToFinish() async throws {
        let coordinator = RefreshCoordinator(remembering: .seconds(300))
        let runs = LockedValue(0)
        try await Self.abandonedRefresh(
            coordinator, runs: runs, answer: Credential(providerID: "p", accessToken: "rotated", refreshToken: "r2"))
        #expect(runs.current == 1, "the abandoned refresh was stopped before it ran to its end")
        let next = try await coordinator.refresh(Self.credential) {
            runs.withLock { $0 += 1 }
            return Credential(providerID: "p", accessToken: "again", refreshToken: "r3")
        }
        #expect(next.accessToken == "rotated" && next.refreshToken == "r2")
        #expect(runs.current == 1)

        let forgetful = RefreshCoordinator(remembering: .zero)
        let forgetfulRuns = LockedValue(0)
        try await Self.abandonedRefresh(
            forgetful, runs: forgetfulRuns,
            answer: Credential(providerID: "p", accessToken: "rotated", refreshToken: "r2"))
        let later = try await forgetful.refresh(Self.credential) {
            forgetfulRuns.withLock { $0 += 1 }
            return Credential(providerID: "p", accessToken: "later", refreshToken: "r4")
        }
        #expect(later.accessToken == "later" && forgetfulRuns.current == 2)
    }

    /// Only an answer nobody took is handed to a later caller: one its
    /// caller took is that caller's to save (handed to another, it skipped
    /// the checks a refresh of that one's credential makes); one that kept
    /// the refresh token may be asked for again (after a 401); nor a failure.
    @Test func onlyAnAbandonedRotatedAnswerIsRemembered() async throws {
        let coordinator = RefreshCoordinator()
        let runs = LockedValue(0)
        for refreshToken in ["r2", "r"] {
            for _ in 0..<2 {
                let taken = try await coordinator.refresh(Self.credential) {
                    let run = runs.withLock { count in
                        count += 1
                        return count
                    }
                    return Credential(providerID: "p", accessToken: "a\(run)", refreshToken: refreshToken)
                }
                #expect(taken.accessToken == "a\(runs.current)")
            }
        }
        #expect(runs.current == 4)
        for _ in 0..<2 {
            await #expect(throws: AuthKitError.self) {
                try await coordinator.refresh(Self.credential) {
                    runs.withLock { $0 += 1 }
                    throw AuthKitError.network(url: "https://as.test/token", reason: .init(.timedOut, "timed out"))
                }
            }
        }
        #expect(runs.current == 6)
        // Abandoned, but keeping its refresh token: asked again.
        try await Self.abandonedRefresh(
            coordinator, runs: runs, answer: Credential(providerID: "p", accessToken: "kept", refreshToken: "r"))
        _ = try await coordinator.refresh(Self.credential) {
            runs.withLock { $0 += 1 }
            return Self.credential
        }
        #expect(runs.current == 8)
    }

    /// A credential being revoked is not handed to a caller with the refresh
    /// token it replaced, nor is an answer to the refresh token revoked.
    @Test func aRevokedRenewalIsForgotten() async throws {
        let coordinator = RefreshCoordinator()
        let runs = LockedValue(0)
        let rotated = Credential(providerID: "p", accessToken: "a2", refreshToken: "r2")
        for revoked in [rotated, Self.credential] {
            try await Self.abandonedRefresh(coordinator, runs: runs, answer: rotated)
            coordinator.forgetAnswers(holding: revoked)
            let before = runs.current
            let asked = try await coordinator.refresh(Self.credential) {
                runs.withLock { $0 += 1 }
                return Credential(providerID: "p", accessToken: "a3", refreshToken: "r3")
            }
            #expect(asked.accessToken == "a3" && runs.current == before + 1, "\(revoked.accessToken)")
        }
    }

    /// A refresh that ends cancelled on its own (a deadline it inherited had
    /// passed) is its caller's answer: started again, it would end so again,
    /// for ever.
    @Test(.timeLimit(.minutes(1))) func aRefreshThatEndsCancelledIsNotStartedAgainByItsOwnCaller() async throws {
        let coordinator = RefreshCoordinator()
        let runs = LockedValue(0)
        await #expect(throws: AuthKitError.cancelled) {
            _ = try await coordinator.refresh(Self.credential) {
                runs.withLock { $0 += 1 }
                throw AuthKitError.cancelled
            }
        }
        #expect(runs.current == 1)
    }

    /// A caller that comes while an abandoned refresh is still under way
    /// waits for it, and refreshes anew if it ends cancelled (as a request
    /// cut short by its deadline does): it does not send the same refresh
    /// token beside the one still on its way.
    @Test func aCallerComingAsAnAbandonedRefreshEndsWaitsForIt() async throws {
        let coordinator = RefreshCoordinator()
        let running = LockedValue(0)
        let overlapped = LockedValue(false)
        // The first refresh ignores its cancellation until released, as a
        // request being torn down takes a moment (an AsyncStream would end
        // at once when cancelled, and the test then passed without the fix).
        let release = LockedValue<CheckedContinuation<Void, Never>?>(nil)
        let first = Task {
            try await coordinator.refresh(Self.credential) {
                running.withLock { $0 += 1 }
                await withCheckedContinuation { continuation in release.withLock { $0 = continuation } }
                running.withLock { $0 -= 1 }
                throw AuthKitError.cancelled
            }
        }
        while release.current == nil { try await Task.sleep(for: .milliseconds(5)) }
        first.cancel()
        await #expect(throws: AuthKitError.cancelled) { _ = try await first.value }
        let second = Task {
            try await coordinator.refresh(Self.credential) {
                if running.current > 0 { overlapped.withLock { $0 = true } }
                return Credential(providerID: "p", accessToken: "second", refreshToken: "r2")
            }
        }
        let since = ContinuousClock.now
        while coordinator.waiterCount == 0 && !overlapped.current {
            try #require(ContinuousClock.now - since < .seconds(60), "the second caller neither waited nor ran")
            try await Task.sleep(for: .milliseconds(5))
        }
        release.withLock { $0?.resume() }
        #expect(try await second.value.accessToken == "second")
        #expect(!overlapped.current, "the second refresh ran beside the first")
    }

    /// A caller cancelled already starts no refresh: its flight, started on
    /// the caller's thread, sent the refresh token before the cancellation
    /// reached it, for an answer nobody waited for.
    @Test func aCallerCancelledAlreadyStartsNoRefresh() async throws {
        let coordinator = RefreshCoordinator()
        let runs = LockedValue(0)
        let caller = Task {
            while !Task.isCancelled { try? await Task.sleep(for: .milliseconds(5)) }
            return try await coordinator.refresh(Self.credential) {
                runs.withLock { $0 += 1 }
                return Self.credential
            }
        }
        caller.cancel()
        await #expect(throws: AuthKitError.cancelled) { _ = try await caller.value }
        #expect(runs.current == 0)
    }

    /// In a refresh's own task, a request's deadline cancels that task
    /// (`DedicatedTask`) rather than a child task started for the request,
    /// which cost every refresh a task: the request runs in the refresh's
    /// task, and still ends at its deadline as a timeout, not a cancellation.
    @Test func aRequestsDeadlineInARefreshCancelsTheRefreshsOwnTask() async throws {
        let coordinator = RefreshCoordinator()
        let inTheRefreshsTask = LockedValue<Bool?>(nil)
        let cancelledAfterwards = LockedValue<Bool?>(nil)
        await #expect {
            _ = try await coordinator.refresh(Self.credential) {
                let refreshsTask = withUnsafeCurrentTask { $0?.hashValue }
                do {
                    return try await withDeadline(.milliseconds(200), display: "https://as.test/token") {
                        () async throws -> Credential in
                        inTheRefreshsTask.withLock { $0 = withUnsafeCurrentTask { $0?.hashValue } == refreshsTask }
                        try await Task.sleep(for: .seconds(600))
                        return Self.credential
                    }
                } catch {
                    cancelledAfterwards.withLock { $0 = Task.isCancelled }
                    throw error
                }
            }
        } throws: { error in
            guard case .network(let url, let reason)? = error.authKitReason else { return false }
            return url == "https://as.test/token" && reason.kind == .timedOut
        }
        #expect(inTheRefreshsTask.current == true, "the request ran in a task of its own")
        #expect(cancelledAfterwards.current == true)
    }

    /// A deadline within another's, in a refresh's task, cannot cancel that
    /// task (what follows in the outer one would be cancelled too): it runs
    /// as a child task, and the refresh goes on after its timeout.
    @Test func aDeadlineWithinAnotherInARefreshStopsOnlyItsOwnWork() async throws {
        let coordinator = RefreshCoordinator()
        let inner = LockedValue<(any Error)?>(nil)
        let refreshed = try await coordinator.refresh(Self.credential) {
            try await withDeadline(.seconds(600), display: "https://as.test/outer") { () async throws -> Credential in
                do {
                    try await withDeadline(.milliseconds(100), display: "https://as.test/inner") {
                        try await Task.sleep(for: .seconds(600))
                    }
                } catch {
                    inner.withLock { $0 = error }
                }
                try Task.checkCancellation()
                return Credential(providerID: "p", accessToken: "after", refreshToken: "r5")
            }
        }
        #expect(refreshed.accessToken == "after")
        guard case .network(let url, let reason)? = try #require(inner.current).authKitReason else {
            Issue.record("the inner deadline ended with \(String(describing: inner.current))")
            return
        }
        #expect(url == "https://as.test/inner" && reason.kind == .timedOut)
    }
}

@Suite struct HTTPResponseBodyTests {
    @Test func aCompleteBodyIsOneChunkThenTheEnd() async throws {
        var chunks = [Data]()
        for try await chunk in HTTPResponseBody(Data("abc".utf8)) { chunks.append(chunk) }
        #expect(chunks == [Data("abc".utf8)])
        var empty = 0
        for try await _ in HTTPResponseBody(Data()) { empty += 1 }
        #expect(empty == 0)
    }
}
