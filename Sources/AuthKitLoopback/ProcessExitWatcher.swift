import AuthKit

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The exit status of a launched process, awaited for a limited time.
///
/// ``SystemBrowser`` uses it to tell "the browser command failed at once"
/// (report it, so the URL can be shown) from "the browser is running" (do not
/// wait for it: the listener must keep serving meanwhile).
final class ProcessExitWatcher: @unchecked Sendable {
    private let lock = ThreadLock()
    private var exitStatus: Int32?
    private var expired = false
    private var waiter: CheckedContinuation<Int32?, Never>?

    /// Call when the process has exited.
    func finish(_ status: Int32) {
        let waiter = lock.withLock { () -> CheckedContinuation<Int32?, Never>? in
            exitStatus = status
            defer { self.waiter = nil }
            return self.waiter
        }
        waiter?.resume(returning: status)
    }

    /// The exit status, or `nil` when the process is still running after
    /// `window` (or the task is cancelled: stop watching, leave the browser be).
    func status(within window: Duration) async -> Int32? {
        let timer = Task { [self] in
            try? await Task.sleep(for: window)
            expire()
        }
        defer { timer.cancel() }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let ready: Int32?? = lock.withLock {
                    if let exitStatus { return .some(exitStatus) }
                    if expired { return .some(nil) }
                    waiter = continuation
                    return .none
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            expire()
        }
    }

    private func expire() {
        let waiter = lock.withLock { () -> CheckedContinuation<Int32?, Never>? in
            expired = true
            defer { self.waiter = nil }
            return self.waiter
        }
        waiter?.resume(returning: nil)
    }
}
