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
}
