#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A value shared between concurrent closures, guarded by a lock.
///
/// (`Synchronization.Mutex` would do, but needs macOS 15 / iOS 18; AuthKit
/// supports macOS 13 / iOS 16.)
package final class LockedValue<Value>: @unchecked Sendable {
    private let lock = ThreadLock()
    private var value: Value

    package init(_ value: Value) { self.value = value }

    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }

    package var current: Value { withLock { $0 } }
}
