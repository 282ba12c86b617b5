import Foundation

/// Runs `body` on a thread of its own and awaits its result.
///
/// Tests that wait on a child process, a pipe or a socket call this instead
/// of blocking where they are: Swift's cooperative pool has one thread per
/// core (two here), every test in the run shares it, and a test blocking one
/// of them holds up the others' tasks. With two blocked at once, a waiter in
/// `KeyedAsyncLockTests` once went past a 30-second deadline it was given to
/// queue behind 20 others.
public func blocking<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}
