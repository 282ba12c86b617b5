import AuthKit
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
/// rule whatever the umask: a new directory is made 0700, and the file ends
/// 0644. The file is written beside its place and renamed over it, so there
/// is never a half-written descriptor.
enum UserProviderFile {
    static func write(_ data: Data, to target: URL) throws {
        let directory = target.deletingLastPathComponent()
        if !FileSystem.isDirectory(directory.path) {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
        try data.write(to: target, options: .atomic)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: target.path)
    }
}
