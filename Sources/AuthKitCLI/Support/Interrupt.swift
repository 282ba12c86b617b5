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
        signal(SIGINT, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
        source.setEventHandler {
            Console.err("\n\(message)")
            exit(ExitStatus.cancelled.rawValue)
        }
        source.resume()
        self.source = source
    }
}
