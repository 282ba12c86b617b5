@testable import AuthKitLoopback
import Foundation

/// Thread-safe list of events.
final class EventLog: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [LoopbackEvent] = []
    func append(_ event: LoopbackEvent) { lock.withLock { items.append(event) } }
    var all: [LoopbackEvent] { lock.withLock { items } }
    var ignoredCount: Int {
        all.filter { if case .ignoredRequest = $0 { return true } else { return false } }.count
    }
}
