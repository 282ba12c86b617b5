import AuthKit
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A descriptor file that `providers add` and `providers override` write into
/// `$AUTHKIT_HOME/providers`.
///
/// authkit refuses a provider file that others could have written
/// (`FileSystem.foreignWriteProblem`), so what it writes itself must pass that
/// rule whatever the umask: a new directory is made 0700, and the file is
/// 0644 before it takes its place. It is written beside its place and then
/// renamed over it (`replacing`) or linked there only if nothing is there
/// yet, so there is never a half-written descriptor, and a file that appeared
/// meanwhile (another `providers add`, the user's editor, during the seconds
/// discovery takes) is never replaced without `--force`.
enum UserProviderFile {
    /// - Returns: `false`, writing nothing, when not `replacing` and a file
    ///   is already at `target`.
    static func write(_ data: Data, to target: URL, replacing: Bool) throws -> Bool {
        let directory = target.deletingLastPathComponent()
        if !FileSystem.isDirectory(directory.path) {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
        let temporary = directory.appendingPathComponent(".\(target.lastPathComponent).\(UUID().uuidString).tmp")
        try data.write(to: temporary)
        defer { unlink(temporary.path) }
        guard chmod(temporary.path, 0o644) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        if replacing {
            guard rename(temporary.path, target.path) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
            return true
        }
        if link(temporary.path, target.path) == 0 { return true }
        if errno == EEXIST { return false }
        // A file system without hard links: check, then rename (the check
        // and the rename are then two steps).
        if FileManager.default.fileExists(atPath: target.path) { return false }
        guard rename(temporary.path, target.path) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        return true
    }
}
