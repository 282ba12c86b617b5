#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Where credentials live between runs.
///
/// ``FileCredentialStore`` keeps them in a JSON file under `$AUTHKIT_HOME`;
/// ``inMemoryCredentialStore(_:)`` keeps them for the life of the process (tests,
/// servers that persist elsewhere). An app can conform its own (Keychain, a database).
public protocol CredentialStore: Sendable {
    /// The credential filed under `key`, or `nil`.
    func credential(for key: CredentialKey) async throws -> Credential?
    /// Every stored credential, sorted by provider then label.
    func allCredentials() async throws -> [Credential]
    /// Stores `credential` under its ``Credential/key``, replacing any previous one.
    func save(_ credential: Credential) async throws
    /// Removes the credential under `key`; returns it, or `nil` if there was none.
    @discardableResult
    func remove(_ key: CredentialKey) async throws -> Credential?

    /// Runs `body` while no other refresh of `key` runs, so that a rotating
    /// refresh token (single use, RFC 9700 §4.14.2) is sent once: read the
    /// stored credential, refresh, save — all inside `body`.
    ///
    /// The default implementation excludes other tasks of this process. A
    /// store shared between processes should exclude them too, as
    /// ``FileCredentialStore`` does with a lock file; a Keychain store, say,
    /// can use a lock file beside the app's data. Waiting longer than
    /// `timeout` throws ``AuthKitError``, never hangs.
    func withRefreshLock<Result: Sendable>(
        for key: CredentialKey, timeout: Duration, _ body: @Sendable () async throws -> Result
    ) async throws -> Result

    /// Stores a new sign-in's credential under the account's refresh lock
    /// (the default: ``save(_:)`` inside ``withRefreshLock(for:timeout:_:)``).
    /// A store may do both at once, as PostgreSQL does in one transaction.
    func saveSignIn(_ credential: Credential, lockTimeout: Duration) async throws
}

extension CredentialStore {
    /// Stores a new sign-in's credential: ``save(_:)`` under the account's
    /// refresh lock, which is how an app should store what
    /// ``Authenticator/authorize(using:options:)`` returned.
    ///
    /// A refresh of the account's earlier credential may be under way, in
    /// this process or another (a timer's `authkit token refresh --due`, a
    /// ``CredentialSource`` of a background task). It read that credential
    /// before the sign-in ended and saves its renewal when it is done: with
    /// a plain `save`, that renewal replaced the new sign-in, and every
    /// request went to the earlier account. Under the lock, the refresh
    /// finishes and saves first, and the new sign-in is saved over it.
    /// - Parameter lockTimeout: the longest wait for such a refresh; longer
    ///   than ``CredentialSource/lockTimeout``, as a sign-in the user has
    ///   just completed is worth waiting for.
    ///
    /// A sign-in whose answer brought no refresh token keeps the one stored
    /// for the same account (Google issues one only at the first consent);
    /// see `Credential.keepingRefreshToken(of:at:)` for when. A stored one
    /// that cannot be read now (a busy or locked store, a cancelled wait)
    /// fails the save: taken as none, the sign-in was saved over it and its
    /// refresh token lost. One whose contents cannot be read at all is
    /// replaced, as the way back from it.
    public func saveSignIn(_ credential: Credential, lockTimeout: Duration) async throws {
        try await withRefreshLock(for: credential.key, timeout: lockTimeout) {
            var credential = credential
            if credential.refreshToken == nil {
                let earlier: Credential?
                do {
                    earlier = try await self.credential(for: credential.key)
                } catch AuthKitError.Code.storeInvalidContents {
                    earlier = nil
                }
                credential = credential.keepingRefreshToken(of: earlier)
            }
            try await save(credential)
        }
    }

    /// ``saveSignIn(_:lockTimeout:)`` waiting at most 60 s for a refresh.
    public func saveSignIn(_ credential: Credential) async throws {
        try await saveSignIn(credential, lockTimeout: .seconds(60))
    }

    public func withRefreshLock<Result: Sendable>(
        for key: CredentialKey, timeout: Duration, _ body: @Sendable () async throws -> Result
    ) async throws -> Result {
        try await KeyedAsyncLock.shared.withLock(
            "\(key.providerID)\u{0}\(key.label ?? "")", timeout: timeout,
            what: "the refresh of \(key)", body)
    }
}

/// Exclusion between tasks of one process, per key, with a bounded wait.
///
/// Waiters queue per key and are handed the lock in turn when it is released
/// (first come, first served). It used to poll every 20 ms, on the belief that
/// refreshes are rare; but a web backend saves every sign-in under its
/// account's lock, and with sign-ins of one account at once a poll added
/// about 70 ms to each (the benchmark's `web-signin` row on PostgreSQL counted
/// 1,646 sleeps for 472 acquisitions). A waiter leaves the queue at its
/// deadline (a timer task, only for a wait that queues) or when its task is
/// cancelled, whichever comes first; one handed the lock meanwhile keeps it.
/// A key may be given a number of holders at once (`holders`), which makes it
/// a counting semaphore: the PostgreSQL store bounds the pooled connections
/// its refresh locks hold so.
package actor KeyedAsyncLock {
    package static let shared = KeyedAsyncLock()
    /// Holders of each key held.
    private var held: [String: Int] = [:]
    private var waiters: [String: [Waiter]] = [:]
    private var nextWaiter: UInt64 = 0

    private struct Waiter {
        let id: UInt64
        let continuation: CheckedContinuation<Void, any Error>
    }

    package init() {}

    /// Waits until `key` has fewer than `holders` holders and takes it;
    /// ``release(_:)`` gives it back (``withLock(_:holders:timeout:what:_:)``
    /// pairs them; a caller whose body is not `Sendable` pairs them itself).
    package func acquire(
        _ key: String, holders: Int = 1, deadline: ContinuousClock.Instant, what: String, timeout: Duration
    ) async throws {
        guard held[key, default: 0] >= holders else {
            held[key, default: 0] += 1
            return
        }
        let id = nextWaiter
        nextWaiter += 1
        let busy = AuthKitError.store(
            path: what, reason: .init(.busy, "another task has held it for more than \(timeout.spoken); try again."))
        let timer = Task {
            try? await Task.sleep(until: deadline, clock: .continuous)
            self.leave(key, id, throwing: busy)
        }
        defer { timer.cancel() }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                waiters[key, default: []].append(Waiter(id: id, continuation: continuation))
            }
        } onCancel: {
            Task { await self.leave(key, id, throwing: AuthKitError.cancelled) }
        }
    }

    /// Takes waiter `id` out of the queue and fails its wait, unless it
    /// was handed the lock already.
    private func leave(_ key: String, _ id: UInt64, throwing error: any Error) {
        guard var queue = waiters[key], let index = queue.firstIndex(where: { $0.id == id }) else { return }
        let waiter = queue.remove(at: index)
        waiters[key] = queue.isEmpty ? nil : queue
        waiter.continuation.resume(throwing: error)
    }

    /// How many wait for `key` (tests).
    package func waiting(for key: String) -> Int { waiters[key]?.count ?? 0 }

    /// How many hold `key` (tests: a store lock's holder is then waiting
    /// for, or holding, the lock file itself).
    package func holders(of key: String) -> Int { held[key] ?? 0 }

    /// Hands the lock to the first waiter, or frees it (one holder fewer).
    package func release(_ key: String) {
        guard var queue = waiters[key], !queue.isEmpty else {
            let left = held[key, default: 1] - 1
            held[key] = left > 0 ? left : nil
            return
        }
        let next = queue.removeFirst()
        waiters[key] = queue.isEmpty ? nil : queue
        next.continuation.resume()
    }

    package nonisolated func withLock<Result: Sendable>(
        _ key: String, holders: Int = 1, timeout: Duration, what: String, _ body: @Sendable () async throws -> Result
    ) async throws -> Result {
        try await acquire(
            key, holders: max(1, holders), deadline: ContinuousClock.now.advanced(by: timeout), what: what,
            timeout: timeout)
        do {
            let result = try await body()
            await release(key)
            return result
        } catch {
            await release(key)
            throw error
        }
    }
}
