#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A mutual-exclusion lock for threads: a `pthread_mutex_t`, which is all
/// `NSLock` is on Linux. AuthKit's modules import FoundationEssentials there
/// rather than Foundation (see git history of Benchmarks/README.md: Foundation's other
/// modules and ICU were a fifth of a short command's start), and it has no `NSLock`.
/// `Synchronization.Mutex` would do, but needs macOS 15 / iOS 18.
///
/// The mutex lives in the same allocation as the object that owns it (a
/// `ManagedBuffer`'s tail, as SwiftNIO's `LockStorage`): a separately
/// allocated one doubled the allocations of every lock made, and every
/// refresh makes two (its flight's task and outcome; a third, a deadline's
/// scope, on the default transport).
package struct ThreadLock: @unchecked Sendable {
    @usableFromInline let storage: Storage

    @usableFromInline final class Storage: ManagedBuffer<Void, pthread_mutex_t> {
        deinit { _ = withUnsafeMutablePointerToElements { pthread_mutex_destroy($0) } }
    }

    package init() {
        storage = unsafeDowncast(Storage.create(minimumCapacity: 1) { _ in }, to: Storage.self)
        _ = storage.withUnsafeMutablePointerToElements { pthread_mutex_init($0, nil) }
    }

    // Inlinable: the other modules (OAuth 1.0a's signer takes this lock for
    // every signature) would otherwise call an unspecialised generic.
    @inlinable package func lock() { _ = storage.withUnsafeMutablePointerToElements { pthread_mutex_lock($0) } }
    @inlinable package func unlock() { _ = storage.withUnsafeMutablePointerToElements { pthread_mutex_unlock($0) } }

    @inlinable package func withLock<Result>(_ body: () throws -> Result) rethrows -> Result {
        lock()
        defer { unlock() }
        return try body()
    }

    /// A condition threads wait on while holding this lock (`NSCondition`'s part).
    package final class Condition: @unchecked Sendable {
        package let lock = ThreadLock()
        private let condition: UnsafeMutablePointer<pthread_cond_t>

        package init() {
            condition = .allocate(capacity: 1)
            condition.initialize(to: pthread_cond_t())
            pthread_cond_init(condition, nil)
        }

        deinit {
            pthread_cond_destroy(condition)
            condition.deinitialize(count: 1)
            condition.deallocate()
        }

        package func withLock<Result>(_ body: () throws -> Result) rethrows -> Result { try lock.withLock(body) }
        /// Called with the lock held; returns with it held again.
        package func wait() {
            _ = lock.storage.withUnsafeMutablePointerToElements { pthread_cond_wait(condition, $0) }
        }
        package func signal() { pthread_cond_signal(condition) }
    }
}
