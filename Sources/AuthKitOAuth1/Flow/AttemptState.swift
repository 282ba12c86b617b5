import Foundation

/// The attempt in progress during ``OAuth1Client/authorize(using:options:)``,
/// shared between the session's closures and the flow, guarded by a lock.
final class AttemptState: @unchecked Sendable {
    private let lock = NSLock()
    private var pending: OAuth1PendingAuthorization?

    var current: OAuth1PendingAuthorization? {
        lock.lock()
        defer { lock.unlock() }
        return pending
    }

    func set(_ value: OAuth1PendingAuthorization) {
        lock.lock()
        defer { lock.unlock() }
        pending = value
    }
}
