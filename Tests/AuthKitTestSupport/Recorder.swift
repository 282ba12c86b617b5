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
