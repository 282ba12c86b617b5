import Foundation

/// A one-line status with a spinner on standard error, drawn only when
/// standard error is a terminal (in a pipe or a log it prints the message once).
final class StatusLine: @unchecked Sendable {
    private let lock = NSLock()
    private var timer: DispatchSourceTimer?
    private var message = ""
    private var frame = 0
    private static let frames = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"]

    func show(_ message: String) {
        guard Console.stderrIsTerminal else {
            Console.err(message)
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
        }
    }

    /// Prints `text` on its own line without garbling the spinner.
    func note(_ text: String) {
        lock.withLock {
            if timer != nil { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
            Console.err(text)
        }
    }

    func stop() {
        lock.withLock {
            guard let timer else { return }
            timer.cancel()
            self.timer = nil
            FileHandle.standardError.write(Data("\r\u{1B}[K".utf8))
        }
    }

    private func draw() {
        lock.withLock {
            frame = (frame + 1) % Self.frames.count
            FileHandle.standardError.write(Data("\r\u{1B}[K\(Self.frames[frame]) \(message)".utf8))
        }
    }
}
