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

/// A file replaced whole: a crash, a full disk or a killed process leaves the
/// old content or the new, never half of either.
///
/// The new content is written to a temporary file beside the old one (mode
/// `0600`, created exclusively), `fsync`ed, and `rename`d over it; then the
/// directory is `fsync`ed so the rename itself is durable. The caller holds a
/// lock that keeps other writers out (``StoreLock``), so a temporary file of
/// this file's that already exists was left by a writer that was killed, and
/// is deleted: it holds tokens.
package struct AtomicFile {
    /// What failed, completing "its new copy …", for the caller's message;
    /// `errno` is read into `reason` where it happened.
    package struct Failure: Error {
        package var what: String
        package var reason: String
    }

    package let path: String

    package init(path: String) {
        self.path = path
    }
    private var directory: String { URL(fileURLWithPath: path).deletingLastPathComponent().path }
    /// The file's own name (`credentials.json`), which its temporary copies carry.
    private var name: String { URL(fileURLWithPath: path).lastPathComponent }

    /// Replaces the file with `data`.
    package func replace(with data: Data) throws(Failure) {
        removeAbandonedTemporaryFiles()
        let temporary = directory + "/.\(name).\(getpid()).\(SecureRandom.token().prefix(8)).tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw Self.failure("its new copy cannot be created") }
        var succeeded = false
        defer {
            if !succeeded { unlink(temporary) }
        }
        var failure: Failure?
        data.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = Self.systemWrite(fd, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    failure = Self.failure("writing its new copy failed")
                    return
                }
                // Nothing written and no error (a FUSE file system can): the
                // loop would spin for ever, holding the store's lock.
                if written == 0 {
                    failure = Self.failure("writing its new copy made no progress")
                    return
                }
                offset += written
            }
        }
        if failure == nil, !FileSystem.flushToDisk(fd) {
            failure = Self.failure("its new copy could not be flushed to disk")
        }
        close(fd)
        if let failure { throw failure }
        guard rename(temporary, path) == 0 else { throw Self.failure("its new copy could not replace it") }
        succeeded = true
        // The rename made durable, as the copy was (F_FULLFSYNC on Darwin,
        // whose fsync leaves it in the drive's cache). Its failure is not
        // the save's: the file is replaced by now, and some file systems
        // refuse to sync a directory (EINVAL) whatever was written.
        let directoryFD = open(directory, O_RDONLY | O_CLOEXEC)
        if directoryFD >= 0 {
            _ = FileSystem.flushToDisk(directoryFD)
            close(directoryFD)
        }
    }

    /// Deletes temporary files a writer left when it was killed between
    /// creating one and renaming it.
    ///
    /// Only this file's: `.work.json.<pid>.<8 characters>.tmp` for
    /// `work.json`. The name was `.credentials.json.…` whatever the file,
    /// so a second store in the same directory deleted the copy another was
    /// about to rename, and that save (a refresh's renewal) failed.
    private func removeAbandonedTemporaryFiles() {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return }
        let prefix = ".\(name)."
        for entry in names where entry.hasPrefix(prefix) && entry.hasSuffix(".tmp") {
            let parts = entry.dropFirst(prefix.count).dropLast(4).split(
                separator: ".", omittingEmptySubsequences: false)
            guard parts.count == 2, !parts[0].isEmpty, parts[0].allSatisfy({ ("0"..."9").contains($0) }),
                parts[1].count == 8
            else { continue }
            unlink(directory + "/" + entry)
        }
    }

    private static func failure(_ what: String) -> Failure {
        Failure(what: what, reason: String(cString: strerror(errno)))
    }

    /// The C `write`, named apart from Swift's `write` overloads.
    private static func systemWrite(_ fd: Int32, _ pointer: UnsafeRawPointer, _ count: Int) -> Int {
        #if canImport(Glibc)
            return Glibc.write(fd, pointer, count)
        #elseif canImport(Musl)
            return Musl.write(fd, pointer, count)
        #else
            return Darwin.write(fd, pointer, count)
        #endif
    }
}
