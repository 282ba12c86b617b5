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

/// The refresh lock of one credential across processes: an `flock` on
/// `.refresh-<key>.lock` in a directory every process sharing the credential
/// can reach (beside `credentials.json`; for the Keychain, an app group
/// container), held together with the in-process lock of ``KeyedAsyncLock``.
///
/// `flock` locks are released by the kernel when the holder dies, so a
/// crashed refresher never blocks the next one (RFC 9700 §4.14.2: a rotating
/// refresh token must be sent once; two processes refreshing one credential
/// would lose the grant).
package struct RefreshLockFile: Sendable {
    package let path: String
    /// What a holder does, for the error of a wait that ran out.
    let activity: String

    package init(directory: URL, key: CredentialKey) {
        self.path = directory.appendingPathComponent(".refresh-\(FileCredentialStore.fileName(for: key)).lock").path
        self.activity = "refreshing \(key)"
    }

    /// A lock of the same kind for another step that must run one at a
    /// time across processes and waits on them as a task (`token setup-git`).
    package init(path: String, activity: String) {
        self.path = path
        self.activity = activity
    }

    /// Runs `body` holding the lock, waiting at most `timeout` for it;
    /// `prepare` runs first (creating the directory).
    package func withLock<Result: Sendable>(
        timeout: Duration, prepare: @Sendable () throws -> Void = {}, _ body: @Sendable () async throws -> Result
    ) async throws -> Result {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        let path = self.path
        let activity = self.activity
        // Made before the queue is keyed: the key resolves the directory's
        // links (``StoreLock/queueKey(for:)``), which needs the directory.
        try prepare()
        return try await KeyedAsyncLock.shared.withLock(StoreLock.queueKey(for: path), timeout: timeout, what: path) {
            let fd = try Self.openLock(path)
            defer { close(fd) }
            while flock(fd, LOCK_EX | LOCK_NB) != 0 {
                guard errno == EWOULDBLOCK || errno == EINTR else {
                    throw AuthKitError.store(
                        path: path,
                        reason: .init(.inaccessible, Self.refusal(locking: errno)))
                }
                guard ContinuousClock.now < deadline else {
                    // A refresh takes seconds: as with the store's lock, a
                    // stopped process is the likelier holder, and "try again"
                    // alone failed the same way while it stayed stopped.
                    throw AuthKitError.store(
                        path: path,
                        reason: .init(
                            .busy,
                            """
                            another process has been \(activity) for more than \(timeout.spoken), where that takes seconds: \
                            one stopped meanwhile may hold it (`fuser \(FileSystem.shellQuoted(path))` shows which). End it, then try again.
                            """))
                }
                // Cancelled while waiting: the same error as the other locks' waits.
                do { try await Task.sleep(for: .milliseconds(25)) } catch { throw AuthKitError.cancelled }
            }
            defer { flock(fd, LOCK_UN) }
            return try await body()
        }
    }

    /// Why a lock file could not be opened, and what to do: a file or
    /// directory left owned by root (`sudo authkit …`) is named with its
    /// owner; it said only "Permission denied".
    static func refusal(opening path: String, errno code: Int32, user: uid_t = geteuid()) -> String {
        let reason = "cannot be opened (\(String(cString: strerror(code))))"
        guard code == EACCES || code == EPERM else { return reason + "." }
        var info = stat()
        let owned =
            lstat(path, &info) == 0 ? path : String(path[..<(path.lastIndex(of: "/") ?? path.endIndex)])
        // Root's, left by `sudo authkit`: another user's is refused as such
        // elsewhere. Not a file with other names (a hard link someone made
        // to a system file, where others can write in the directory): the
        // advice would have changed the owner of that file.
        guard lstat(owned, &info) == 0, info.st_uid == 0, user != 0,
            info.st_mode & S_IFMT == S_IFDIR || (info.st_mode & S_IFMT == S_IFREG && info.st_nlink == 1)
        else { return reason + "." }
        let quoted = FileSystem.shellQuoted(owned)
        return reason
            + "; \(owned) is root's (left by `sudo authkit`?): "
            + "give it back with `sudo chown -R \(user) \(quoted)` or remove it."
    }

    /// Why a lock file could not be locked: a file system without `flock`
    /// (NFS mounted without locking) is named, with where the docs say more.
    static func refusal(locking code: Int32) -> String {
        let reason = "cannot be locked (\(String(cString: strerror(code))))"
        guard code == ENOLCK || code == EOPNOTSUPP else { return reason + "." }
        return reason
            + "; its file system does not carry locks (NFS without locking?): "
            + "keep AUTHKIT_HOME on a local disk (docs/credentials.md, \"Locks\")."
    }

    /// Opens (creating) the lock file at `path` for `flock`, never through a
    /// symbolic link: one placed there by someone else would make authkit
    /// create or lock a file of their choosing. The refresh, sign-in and
    /// store locks all open theirs so.
    package static func openLock(_ path: String) throws -> Int32 {
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else {
            // O_NOFOLLOW's refusal reads "Too many levels of symbolic links": say what it is.
            // A read-only or full file system is "nothing could be saved"
            // (`.notSaved`, what a caller catches for a full disk), found
            // here first by a save that opens the store's lock.
            let reason: AuthKitError.StoreProblem =
                switch errno {
                case ELOOP:
                    .init(
                        .notARegularFile,
                        "is a symbolic link, which is not followed (a lock file is only ever a file authkit made); remove it."
                    )
                // A directory where the lock file belongs: "Is a directory"
                // alone read as a file system problem, and a save's
                // caller advised making room.
                case EISDIR:
                    .init(
                        .notARegularFile,
                        "is a directory, where a lock file belongs (a lock file is only ever a file authkit made); move it aside."
                    )
                case EROFS, ENOSPC, EDQUOT:
                    .init(.notSaved, Self.refusal(opening: path, errno: errno))
                default:
                    .init(.inaccessible, Self.refusal(opening: path, errno: errno))
                }
            throw AuthKitError.store(path: path, reason: reason)
        }
        // Someone who can create files in the store's directory (a shared
        // one, mode 1777) could create the lock before authkit does and
        // hold it for ever, and every command would wait on it.
        var info = stat()
        if fstat(fd, &info) == 0, info.st_uid != geteuid(), info.st_uid != 0 {
            close(fd)
            throw AuthKitError.store(
                path: path,
                reason: .init(
                    .writableByOthers,
                    """
                    is owned by another user (uid \(info.st_uid)), who could hold it to stop every command; \
                    a lock file is only ever one authkit made as you. Remove it, and keep the store in a directory only you can write.
                    """))
        }
        return fd
    }
}
