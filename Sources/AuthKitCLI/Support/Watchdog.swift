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

/// Ends the process with exit status 5 when a deadline passes.
///
/// A task-based timeout cannot interrupt a thread blocked reading standard
/// input (`--manual`); a process-level deadline can, and since credentials are
/// saved by atomic rename only after the sign-in completes, exiting at any
/// moment leaves the store as it was. A deadline that passes once the
/// provider has answered (the shield is up) waits for the exchange and the
/// save, bounded by their own deadlines: the code is spent by then.
enum Watchdog {
    /// `message` is made when the deadline passes, so it can say what happened meanwhile.
    static func start(seconds: Int, message: @escaping @Sendable () -> String) {
        DispatchQueue.global().asyncAfter(deadline: .now() + .seconds(seconds)) {
            // Not while the provider's answer is being exchanged and saved
            // (Interrupt's shield): then once that is done.
            Interrupt.whenUnshielded {
                // On a terminal the cursor may stand after a half-typed answer
                // (--manual): a line of its own. A pipe or a log had a blank line.
                Console.err((isatty(STDERR_FILENO) != 0 ? "\n" : "") + "authkit: error: \(message())")
                ExitStatus.timedOut.terminate()
            }
        }
    }
}
