import Foundation

@testable import AuthKitLoopback

/// Thread-safe list of events.
final class EventLog: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [LoopbackEvent] = []
    func append(_ event: LoopbackEvent) { lock.withLock { items.append(event) } }
    var all: [LoopbackEvent] { lock.withLock { items } }
    /// Requests that did not end the wait: strays and refused answers.
    var ignoredCount: Int {
        all.filter {
            switch $0 {
            case .ignoredRequest, .rejectedAnswer: return true
            default: return false
            }
        }.count
    }
    /// Answers at the redirect path refused (state, issuer, malformed).
    var rejectedCount: Int {
        all.filter { if case .rejectedAnswer = $0 { return true } else { return false } }.count
    }
}
