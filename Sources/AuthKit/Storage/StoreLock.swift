#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The exclusive lock every read-modify-write of a store file holds: an
/// `flock` on `<file>.lock`, shared by every process using the file, so two
/// `authkit` processes saving different credentials at once both land.
///
/// A read or a save holds it for milliseconds. Waited on without a limit, a
/// holder that never lets go (a stopped process, a lock taken by hand) hung
/// every command until it was killed; so the wait is bounded, and its error
/// says how to find the holder.
package struct StoreLock {
    /// The lock file: the store's path with `.lock` after it.
    let path: String
    let timeout: Duration

    package init(path: String, timeout: Duration) {
        self.path = path
        self.timeout = timeout
    }

    /// Runs `body` holding the lock.
    package func withLock<Result>(_ body: () throws -> Result) throws -> Result {
        let fd = try RefreshLockFile.openLock(path)
        defer { close(fd) }
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while try !taken(fd, before: deadline) { usleep(5_000) }
        defer { flock(fd, LOCK_UN) }
        return try body()
    }

    /// ``withLock(_:)`` for an async caller: while another process holds the
    /// lock, the task sleeps, not its thread. Swift's pool has a thread per
    /// core: a library server whose store lock a stopped process held had
    /// each waiting task block one for up to the timeout, and every other
    /// task of the process (timers included) waited behind them.
    ///
    /// This process's own tasks queue for the lock in memory first
    /// (``KeyedAsyncLock``), from before the lock file is opened until
    /// after it is closed: an NFS client emulates `flock` with `fcntl`
    /// locks (flock(2)), which belong to the process, so two tasks of one
    /// process both "held" it, and the first to close its descriptor
    /// released it for the other.
    package func withLockWaitingAsTask<Result>(_ body: () throws -> Result) async throws -> Result {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        let key = queueKey
        try await KeyedAsyncLock.shared.acquire(key, deadline: deadline, what: path, timeout: timeout)
        do {
            let result = try await lockingFile(until: deadline, body)
            await KeyedAsyncLock.shared.release(key)
            return result
        } catch {
            await KeyedAsyncLock.shared.release(key)
            throw error
        }
    }

    /// The lock file's path with its directory's links resolved: one store
    /// reached as `~/.authkit` and through a link to it, or by a relative
    /// path, is one queue (the directory exists by the time a lock is taken).
    package var queueKey: String { Self.queueKey(for: path) }

    /// `path` with its directory's links resolved (``queueKey``), also the
    /// refresh lock's (``RefreshLockFile``). On NFS, `flock` is made of
    /// `fcntl` locks, which are the process's: two stores of one process
    /// reaching one directory by two paths both took the file's lock, and
    /// the first to close its descriptor released it for other processes
    /// too. Only one queue per file keeps the second waiting in the process.
    package static func queueKey(for path: String) -> String {
        let url = URL(fileURLWithPath: path)
        guard let resolved = realpath(url.deletingLastPathComponent().path, nil) else { return path }
        defer { free(resolved) }
        return String(cString: resolved) + "/" + url.lastPathComponent
    }

    /// The file's lock, once this process's tasks have let this one through.
    private func lockingFile<Result>(until deadline: ContinuousClock.Instant, _ body: () throws -> Result)
        async throws -> Result
    {
        let fd = try RefreshLockFile.openLock(path)
        defer { close(fd) }
        while try !taken(fd, before: deadline) {
            do {
                try await Task.sleep(for: .milliseconds(5))
            } catch {
                throw AuthKitError.cancelled
            }
        }
        defer { flock(fd, LOCK_UN) }
        return try body()
    }

    /// Tries the lock once: whether it was taken; throws once `deadline`
    /// has passed, or for an error other than "held".
    private func taken(_ fd: Int32, before deadline: ContinuousClock.Instant) throws -> Bool {
        guard flock(fd, LOCK_EX | LOCK_NB) != 0 else { return true }
        guard errno == EWOULDBLOCK || errno == EINTR else {
            throw AuthKitError.store(
                path: path, reason: .init(.inaccessible, RefreshLockFile.refusal(locking: errno)))
        }
        guard ContinuousClock.now < deadline else {
            throw AuthKitError.store(
                path: path,
                reason: .init(
                    .busy,
                    """
                    has been held by another process for more than \(timeout.spoken), though a read or a save \
                    holds it for milliseconds: a process stopped while holding it (`fuser \(FileSystem.shellQuoted(path))` shows which). End it, then try again.
                    """))
        }
        return false
    }
}
