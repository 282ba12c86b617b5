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
/// status 130, instead of a stack of cancelled-task errors.
///
/// Credentials are saved with an atomic rename after the sign-in completes, so
/// an interrupt at any point leaves the store as it was.
enum Interrupt {
    nonisolated(unsafe) private static var source: DispatchSourceSignal?

    static func install(message: String) {
        #if canImport(Darwin)
        // kqueue only reports the signal; its default action must be off.
        signal(SIGINT, SIG_IGN)
        #endif
        // On Linux, libdispatch installs a handler of its own when the source
        // is registered (on its manager thread, after resume() returns).
        // Ignoring SIGINT first, as on Darwin, would lose a Ctrl-C that came
        // in between, and the sign-in would go on waiting; until then the
        // default action ends the process, as Ctrl-C does anywhere.
        let source = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
        source.setEventHandler {
            Console.err("\n\(message)")
            ExitStatus.cancelled.terminate()
        }
        source.resume()
        self.source = source
    }

    // MARK: - A refresh finishes saving before a signal ends the process

    /// The refreshes under way that have not saved their result, and the
    /// first signal that came meanwhile (0: none).
    private static let shield = LockedValue<(depth: Int, pending: Int32)>((0, 0))
    nonisolated(unsafe) private static var shieldSources: [DispatchSourceSignal] = []
    private static let shieldInstalled = LockedValue(false)

    /// Makes SIGINT, SIGTERM and SIGHUP wait for the refreshes run in
    /// ``shielding(_:)``. Outside one, a signal ends the process as its
    /// default action does (so a shell sees the same death). Called before
    /// the refresh lock is waited for, so that libdispatch, which installs
    /// its handlers on a thread of its own, has them in place by the time a
    /// refresh request is sent.
    static func installShield() {
        guard shieldInstalled.withLock({ installed in defer { installed = true }; return !installed }) else { return }
        shieldSources = [SIGINT, SIGTERM, SIGHUP].map { number in
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { arrived(number) }
            source.resume()
            return source
        }
    }

    /// Runs `body` (a refresh: request, then save; or a sign-out: revoke,
    /// then remove) with signals held back. Killed between the provider's
    /// answer and the save, the process would lose the rotated refresh
    /// token, the old one already spent (RFC 9700 §4.14.2), and with it the
    /// grant; killed after a revocation, it would keep a dead credential.
    /// A second signal ends it at once.
    static func shielding<Result>(_ body: () async throws -> Result) async rethrows -> Result {
        shield.withLock { $0.depth += 1 }
        func leave(saved: Bool) {
            let pending = shield.withLock { state -> Int32 in
                state.depth -= 1
                return state.depth == 0 ? state.pending : 0
            }
            guard pending != 0 else { return }
            Console.err(saved ? "authkit: the stored credential is up to date; stopping." : "authkit: the update did not complete; stopping.")
            die(pending)
        }
        do {
            let result = try await body()
            leave(saved: true)
            return result
        } catch {
            leave(saved: false)
            throw error
        }
    }

    private static func arrived(_ number: Int32) {
        let deferred = shield.withLock { state -> Bool in
            guard state.depth > 0, state.pending == 0 else { return false }
            state.pending = number
            return true
        }
        if deferred {
            Console.err("\nauthkit: finishing the refresh (or sign-out) under way first, so that the stored credential matches what "
                        + "the provider did. A second Ctrl-C stops now, and may cost the stored sign-in.")
        } else {
            die(number)
        }
    }

    /// Ends the process as `number`'s default action would: a shell running
    /// authkit in a loop then stops, as it does for a child killed by Ctrl-C
    /// (exiting with 130 instead would let the loop go on).
    private static func die(_ number: Int32) -> Never {
        fflush(nil)
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
