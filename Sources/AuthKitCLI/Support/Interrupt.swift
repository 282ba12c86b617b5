import AuthKit
import Dispatch

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Ends `authkit` cleanly on Ctrl-C: one line on standard error and exit
/// status 130, instead of a stack of cancelled-task errors — except where
/// a shield holds signals back until what the provider did is stored.
///
/// Credentials are saved with an atomic rename, so an interrupt at any point
/// leaves the store as it was.
enum Interrupt {
    /// What the shield is holding signals back for: the words said when a
    /// signal comes during it, and when it ends with that signal pending.
    struct Purpose: Sendable {
        /// Said when the first signal comes, then "A second Ctrl-C" (or
        /// "signal", for SIGTERM and SIGHUP, which no key sends) and
        /// `second`: what a second one does.
        var waiting: String
        var second: String
        var done: String
        var failed: String
        /// Run once, when the first signal comes: for a span that can be
        /// cut short safely, the way to cut it short.
        var onFirstSignal: (@Sendable () -> Void)? = nil

        /// A refresh (request, then save; or a sign-out: revoke, then remove).
        static let refresh = Purpose(
            waiting:
                "authkit: finishing the refresh (or sign-out) under way first, so that the stored credential matches what "
                + "the provider did.",
            second: "stops now, and may cost the stored sign-in.",
            done: "authkit: the stored credential is up to date; stopping.",
            failed: "authkit: the update did not complete; stopping.")
        /// A sign-in, from the provider's answer to the save.
        static let signIn = Purpose(
            waiting: "authkit: the provider has answered; finishing the sign-in first (its code exchange waits up to "
                + "\(Int(RequestPolicy.tokenEndpoint.deadline.components.seconds)) s for the token endpoint), so that what it issues "
                + "is stored rather than left behind.",
            second: "stops now, without storing it.",
            done: "authkit: the sign-in is stored ('authkit token delete' removes it); stopping.",
            failed: "Cancelled; nothing was stored.")
        /// A device-code sign-in's polling: stopped by a signal (`cancel`),
        /// but a poll under way is seen through, since its answer may
        /// carry the tokens (``AuthKit/OAuth2Client/pollDeviceAuthorization(_:label:)``).
        static func devicePolling(cancel: @escaping @Sendable () -> Void) -> Purpose {
            Purpose(
                waiting: "authkit: stopping. A poll of the provider under way, if any, is finished first, so that a "
                    + "sign-in it brings is stored rather than left behind.",
                second: "stops now.", done: signIn.done, failed: signIn.failed, onFirstSignal: cancel)
        }
    }

    /// Files a signal's death removes first: a download's partial copy
    /// (`request -o`), which its own clean-up, a `defer`, would not reach.
    private static let leftovers = LockedValue<Set<String>>([])

    /// Removes `path` if a signal ends the process before ``keep(_:)``.
    static func removeOnSignal(_ path: String) {
        installShield()
        leftovers.withLock { _ = $0.insert(path) }
    }

    /// `path` is no longer removed on a signal (renamed into place, or removed already).
    static func keep(_ path: String) {
        leftovers.withLock { _ = $0.remove(path) }
    }

    private static func removeLeftovers() {
        for path in leftovers.withLock({ $0 }) { unlink(path) }
    }

    /// What SIGINT outside a shield says before exit status 130; `nil`: it
    /// ends the process as its default action does.
    private static let cancelMessage = LockedValue<String?>(nil)

    /// Ctrl-C outside a shield prints `message` and exits with status 130;
    /// inside one (``raiseShield(for:)``) it waits, as SIGTERM and SIGHUP do.
    static func install(message: String) {
        cancelMessage.withLock { $0 = message }
        installShield()
    }

    // MARK: - What the provider did is saved before a signal ends the process

    /// How many shields are up, what the outermost is for, and the first
    /// signal that came meanwhile (0: none).
    private static let shield = LockedValue<
        (depth: Int, purpose: Purpose?, pending: Int32, afterwards: (@Sendable () -> Void)?)
    >((0, nil, 0, nil))
    nonisolated(unsafe) private static var shieldSources: [DispatchSourceSignal] = []
    private static let shieldInstalled = LockedValue(false)

    /// Makes SIGINT, SIGTERM and SIGHUP wait for the shields raised by
    /// ``shielding(_:)`` and ``raiseShield(for:)``. Outside one, a signal
    /// ends the process as its default action does (so a shell sees the same
    /// death), or, for SIGINT after ``install(message:)``, with its message.
    /// Called before the refresh lock is waited for, so that libdispatch,
    /// which installs its handlers on a thread of its own, has them in place
    /// by the time a refresh request is sent.
    static func installShield() {
        guard
            shieldInstalled.withLock({ installed in
                defer { installed = true }
                return !installed
            })
        else { return }
        shieldSources = [SIGINT, SIGTERM, SIGHUP].map { number in
            #if canImport(Darwin)
                // kqueue only reports the signal; its default action must be off.
                // (On Linux, libdispatch installs a handler of its own when the
                // source is registered, on its manager thread after resume()
                // returns. Ignoring the signal first would lose one that came in
                // between; until then the default action ends the process.)
                signal(number, SIG_IGN)
            #endif
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { arrived(number) }
            source.resume()
            return source
        }
        #if !canImport(Darwin)
            waitForHandlers([SIGINT, SIGTERM, SIGHUP])
        #endif
    }

    #if !canImport(Darwin)
        /// libdispatch installs a signal source's handler on its manager thread
        /// after `resume()` returns; until then the default action ends the
        /// process. A Ctrl-C right after "Waiting for you to approve…" appeared
        /// ended it so, without "Cancelled" and status 130 (seen once in CI,
        /// under load). Waits until each handler is in place, 250 ms at most.
        private static func waitForHandlers(_ numbers: [Int32]) {
            let deadline = ContinuousClock.now.advanced(by: .milliseconds(250))
            for number in numbers {
                var current = sigaction()
                while sigaction(number, nil, &current) == 0, current.__sigaction_handler.sa_handler == nil,
                    ContinuousClock.now < deadline
                {
                    usleep(200)
                }
            }
        }
    #endif

    /// Runs `body` (a refresh: request, then save; or a sign-out: revoke,
    /// then remove) with signals held back. Killed between the provider's
    /// answer and the save, the process would lose the rotated refresh
    /// token, the old one already spent (RFC 9700 §4.14.2), and with it the
    /// grant; killed after a revocation, it would keep a dead credential.
    /// A second signal ends it at once.
    static func shielding<Result>(_ body: () async throws -> Result) async rethrows -> Result {
        raiseShield(for: .refresh)
        do {
            let result = try await body()
            lowerShield(done: true)
            return result
        } catch {
            lowerShield(done: false)
            throw error
        }
    }

    /// Holds signals back from now until ``lowerShield(done:)``, for a span
    /// that does not fit one closure (a sign-in's, from the user agent's
    /// answer to the save). Each call needs its `lowerShield`.
    static func raiseShield(for purpose: Purpose) {
        installShield()
        shield.withLock { state in
            if state.depth == 0 { state.purpose = purpose }
            state.depth += 1
        }
    }

    /// Ends the span of the matching ``raiseShield(for:)``; when it was the
    /// outermost and a signal came meanwhile, says whether the work got
    /// `done` and ends the process by that signal.
    /// - Parameter failure: why the span failed, said before the signal
    ///   ends the process: the error would otherwise never be printed (a
    ///   token endpoint that never answered read only as "Cancelled").
    static func lowerShield(done: Bool, failure: (any Error)? = nil) {
        let (pending, purpose, afterwards) = shield.withLock {
            state -> (Int32, Purpose?, (@Sendable () -> Void)?) in
            state.depth -= 1
            guard state.depth == 0 else { return (0, nil, nil) }
            defer { state.afterwards = nil }
            return (state.pending, state.purpose, state.afterwards)
        }
        if pending != 0, let purpose {
            if !done, let failure { Console.err("authkit: error: \(ErrorReport.message(forAny: failure))") }
            Console.err(done ? purpose.done : purpose.failed)
            die(pending)
        }
        // Done (the sign-in stored): the deadline that passed meanwhile has
        // nothing left to stop, and the command ends as it succeeded.
        if !done, let afterwards {
            if let failure { Console.err("authkit: error: \(ErrorReport.message(forAny: failure))") }
            afterwards()
        }
    }

    /// Runs `action` (an exit: the `--timeout` deadline) now, or, while a
    /// shield is up, once it is lowered without its work done: a sign-in
    /// whose answer came just before the deadline is exchanged and saved
    /// first, as it is for a Ctrl-C, rather than lost with its code spent;
    /// saved, the command ends as it succeeded.
    static func whenUnshielded(_ action: @escaping @Sendable () -> Void) {
        let now = shield.withLock { state -> Bool in
            guard state.depth > 0 else { return true }
            state.afterwards = action
            return false
        }
        if now { action() }
    }

    private static func arrived(_ number: Int32) {
        enum Outcome {
            case deferred(Purpose)
            case second
            case unshielded
        }
        let outcome = shield.withLock { state -> Outcome in
            guard state.depth > 0, let purpose = state.purpose else { return .unshielded }
            guard state.pending == 0 else { return .second }
            state.pending = number
            return .deferred(purpose)
        }
        if case .deferred(let purpose) = outcome {
            Console.err("\n\(purpose.waiting) A second \(number == SIGINT ? "Ctrl-C" : "signal") \(purpose.second)")
            purpose.onFirstSignal?()
        } else if case .unshielded = outcome, number == SIGINT, let message = cancelMessage.withLock({ $0 }) {
            Console.err("\n\(message)")
            removeLeftovers()
            ExitStatus.cancelled.terminate()
        } else {
            die(number)
        }
    }

    /// Ends the process as `number`'s default action would: a shell running
    /// authkit in a loop then stops, as it does for a child killed by Ctrl-C
    /// (exiting with 130 instead would let the loop go on).
    private static func die(_ number: Int32) -> Never {
        removeLeftovers()
        Console.flushStandardStreams()
        signal(number, SIG_DFL)
        // Raised on this thread with the signal unblocked here, it is
        // delivered before raise returns (libdispatch's threads, where the
        // handler runs, block signals; sent to the process, it would race
        // the fallback below).
        var unblocked = sigset_t()
        sigemptyset(&unblocked)
        sigaddset(&unblocked, number)
        pthread_sigmask(SIG_UNBLOCK, &unblocked, nil)
        raise(number)
        _exit(128 + number) // not reached; the status a signal's death reports
    }
}
