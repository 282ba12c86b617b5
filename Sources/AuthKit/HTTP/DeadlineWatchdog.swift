import Dispatch

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Fires an action when a deadline passes, for ``withDeadline(_:allowed:display:stoppedBy:_:)``.
///
/// One coarse timer serves every request in flight: registering is a lock
/// and a dictionary insert, with no system call and no timer per request.
/// The timer ticks every ``resolution`` while something is registered and
/// stops at the first tick that finds nothing, so an idle process has no
/// timer at all. Deadlines fire up to one tick late, which is nothing next to
/// the seconds a request deadline allows.
final class DeadlineWatchdog: @unchecked Sendable {
    static let shared = DeadlineWatchdog()
    static let resolution: Duration = .milliseconds(20)

    private struct Entry {
        var deadline: ContinuousClock.Instant
        var action: @Sendable () -> Void
    }

    private let lock = ThreadLock()
    private var entries: [UInt64: Entry] = [:]
    /// Registrations whose deadline passed, until ``finish(_:)`` asks.
    private var fired: Set<UInt64> = []
    private var nextID: UInt64 = 0
    private var timer: (any DispatchSourceTimer)?
    private let queue = DispatchQueue(label: "authkit.deadline-watchdog")

    /// Runs `action` once `deadline` has passed, unless ``finish(_:)`` comes first.
    func register(_ deadline: ContinuousClock.Instant, action: @escaping @Sendable () -> Void) -> UInt64 {
        lock.lock()
        defer { lock.unlock() }
        nextID &+= 1
        entries[nextID] = Entry(deadline: deadline, action: action)
        if timer == nil {
            let timer = DispatchSource.makeTimerSource(queue: queue)
            let interval = Self.resolution.dispatchInterval
            timer.schedule(deadline: .now() + interval, repeating: interval, leeway: interval)
            timer.setEventHandler { [weak self] in self?.tick() }
            timer.resume()
            self.timer = timer
        }
        return nextID
    }

    /// Ends a registration and tells whether its deadline had passed (its
    /// action was taken out to run; it may still be running: actions must be
    /// safe to run late).
    func finish(_ id: UInt64) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        if entries.removeValue(forKey: id) != nil { return false }
        return fired.remove(id) != nil
    }

    private func tick() {
        let now = ContinuousClock.now
        lock.lock()
        var due = [@Sendable () -> Void]()
        for (id, entry) in entries where entry.deadline <= now {
            due.append(entry.action)
            entries[id] = nil
            fired.insert(id)
        }
        if entries.isEmpty {
            timer?.cancel()
            timer = nil
        }
        lock.unlock()
        for action in due { action() }
    }
}
