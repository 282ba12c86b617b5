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

/// A one-line status with a spinner on standard error, drawn only when
/// standard error is a terminal that takes escape sequences (in a pipe, a
/// log or with `TERM=dumb` it prints each new message once, at most
/// ``printedPerWindow`` in any ``printWindow``: a port scanner's thousand
/// stray requests at a listener must not write a thousand lines to a CI log).
///
/// The line never wraps: it is cut to the terminal's width (read again at
/// every redraw, so a resize is followed) and redrawn in place with `\r` and
/// erase-line. A wrapped line would leave a stale copy on the screen at every
/// redraw and scroll the sign-in URL away.
///
/// Anything else printed while it is drawn (``Console/out(_:)``,
/// ``Console/err(_:)``: a sandbox's events, `--verbose` logs) first erases it
/// (``printing(_:)``), so that text starts at the left edge instead of after
/// the spinner; the next tick draws the line again below it.
final class StatusLine: @unchecked Sendable {
    private let lock = ThreadLock()
    private var timer: DispatchSourceTimer?
    private var message = ""
    private var frame = 0
    private static let frames = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"]
    /// The line on the screen now, if any.
    private static let drawn = LockedValue<StatusLine?>(nil)

    /// Without escapes: the message printed last, and when recent ones were.
    private var printedLast: String?
    private var printedAt: [ContinuousClock.Instant] = []
    static let printedPerWindow = 8
    static let printWindow: Duration = .seconds(10)

    func show(_ message: String) {
        guard Console.stderrTakesEscapes else {
            let prints = lock.withLock { () -> Bool in
                guard message != printedLast else { return false }
                let now = ContinuousClock.now
                printedAt.removeAll { now - $0 > Self.printWindow }
                guard printedAt.count < Self.printedPerWindow else { return false }
                printedAt.append(now)
                printedLast = message
                return true
            }
            if prints { Console.err(message) }
            return
        }
        lock.withLock {
            self.message = message
            guard timer == nil else { return }
            let timer = DispatchSource.makeTimerSource(queue: .global())
            timer.schedule(deadline: .now(), repeating: .milliseconds(100))
            timer.setEventHandler { [weak self] in self?.draw() }
            timer.resume()
            self.timer = timer
            Self.drawn.withLock { $0 = self }
        }
    }

    /// Prints `text` on its own lines above the status line.
    func note(_ text: String) {
        Console.err(text)
    }

    func stop() {
        lock.withLock {
            guard let timer else { return }
            timer.cancel()
            self.timer = nil
            Self.drawn.withLock { if $0 === self { $0 = nil } }
            Console.write(Data("\r\u{1B}[K".utf8), to: STDERR_FILENO)
        }
    }

    /// Runs `write` with the status line, if one is drawn, erased first and
    /// held from redrawing until `write` is done.
    static func printing(_ write: () -> Void) {
        guard let line = drawn.withLock({ $0 }) else { return write() }
        line.lock.withLock {
            if line.timer != nil { Console.write(Data("\r\u{1B}[K".utf8), to: STDERR_FILENO) }
            write()
        }
    }

    private func draw() {
        lock.withLock {
            frame = (frame + 1) % Self.frames.count
            let line = Self.fit("\(Self.frames[frame]) \(message)", width: Self.width())
            Console.write(Data("\r\u{1B}[K\(line)".utf8), to: STDERR_FILENO)
        }
    }

    /// `text` cut to one column less than `width` (a character in the last
    /// column makes some terminals wrap), with `…` where it was cut.
    /// Counted in terminal columns: a provider named in CJK takes two per
    /// character, and a line cut by characters would still wrap.
    static func fit(_ text: String, width: Int) -> String {
        text.cut(toColumns: max(1, width - 1))
    }

    /// Standard error's terminal width, or 80.
    static func width() -> Int {
        Console.columns(of: STDERR_FILENO) ?? 80
    }
}
