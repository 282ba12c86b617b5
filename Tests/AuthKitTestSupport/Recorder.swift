import Foundation

/// A thread-safe, append-only list for what tests observe inside `@Sendable`
/// closures (server routes, user agents, hooks).
public final class Recorder<Element>: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [Element] = []

    public init() {}

    public func append(_ item: Element) { lock.withLock { items.append(item) } }
    public var all: [Element] { lock.withLock { items } }
}

extension Recorder where Element == Date {
    /// Passes `condition` through, noting the moment it first held: a test
    /// times what follows an event (a request reaching the server) from the
    /// event, so that a loaded machine's slow start does not count.
    public func firstTime(_ condition: Bool) -> Bool {
        if condition { lock.withLock { if items.isEmpty { items.append(Date()) } } }
        return condition
    }

    /// Seconds since the condition first held; infinity if it never did.
    public var sinceFirst: TimeInterval { all.first.map { Date().timeIntervalSince($0) } ?? .infinity }
}
