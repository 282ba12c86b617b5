import Logging

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// swift-log output as `authkit` prints everything else on standard error:
/// `authkit: warning: …`, plus the logger's label with `--verbose`.
///
/// AuthKit's log messages never contain secrets (they name endpoints by
/// their redacted URL and never print bodies), so `--verbose` is safe to share.
struct ConsoleLogHandler: LogHandler {
    var logLevel: Logger.Level
    var metadata: Logger.Metadata = [:]
    let label: String

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let origin = logLevel <= .debug ? " [\(label)]" : ""
        Console.err("authkit\(origin): \(event.level): \(event.message)")
    }
}
