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
    /// - Throws: a ``CLIError`` (exit 74) naming `target` and the system's
    ///   reason when it cannot be written (a full disk); nothing is left behind.
    ///   Exit 65, writing nothing, where other users can write in the
    ///   directory (the catalogue would read nothing from it).
    static func write(_ data: Data, to target: URL, replacing: Bool) throws -> Bool {
        func failure(_ what: String) -> CLIError {
            CLIError(
                "\(target.path) could not be written: \(what) (\(String(cString: strerror(errno)))). Nothing was changed.",
                status: .outputFailed)
        }
        let directory = target.deletingLastPathComponent()
        if !FileSystem.isDirectory(directory.path) {
            // "cannot be created (File exists)" left the reader to find that
            // a file stands where the directory belongs.
            if let kind = FileSystem.kindUnlessDirectory(directory.path) {
                throw CLIError(
                    "\(target.path) could not be written: \(directory.path) is \(kind), not a directory. Move it aside; the directory is then created. Nothing was changed.",
                    status: .outputFailed)
            }
            do {
                try FileSystem.createPrivateDirectory(directory.path)
            } catch {
                throw CLIError(
                    "\(target.path) could not be written: its directory cannot be created (\(DescriptorLoader.reason(error))). Nothing was changed.",
                    status: .outputFailed)
            }
        }
        // A directory others can write in is one the catalogue reads nothing
        // from: written there, the file was reported written and then
        // refused, and an override hid the bundled provider it copies.
        if let problem = FileSystem.foreignWriteProblem(
            inDirectory: directory.path, harm: "send your sign-ins elsewhere", refusal: "no file in it is read")
        {
            // The problem is said of the file ("is in /dir, which belongs to
            // another user…") or of who can write ("every user can write…").
            let subject = problem.hasPrefix("is ") ? "it " : ""
            throw CLIError("\(target.path) was not written: \(subject)\(problem)", status: .badInput)
        }
        let temporary = directory.appendingPathComponent(".\(target.lastPathComponent).\(UUID().uuidString).tmp")
        let fd = open(temporary.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw failure("a new file beside it cannot be created") }
        defer { unlink(temporary.path) }
        // Flushed before it is linked in: after a power loss the name must
        // not point at an empty file, which would hide the bundled provider.
        // 0644 whatever the umask (the rule for provider files wants no group
        // or other write), set on the file opened, not by its name.
        guard fchmod(fd, 0o644) == 0 else {
            close(fd)
            throw failure("its mode cannot be set")
        }
        let written = data.withUnsafeBytes { FileSystem.writeAll(fd, $0) } && FileSystem.flushToDisk(fd)
        let error = errno
        close(fd)
        errno = error
        guard written else { throw failure("writing it failed") }
        if replacing {
            guard rename(temporary.path, target.path) == 0 else { throw failure("it cannot be replaced") }
        } else if link(temporary.path, target.path) != 0 {
            if errno == EEXIST { return false }
            // A file system without hard links: check, then rename (the check
            // and the rename are then two steps).
            if !FileSystem.isAbsent(target.path) { return false }
            guard rename(temporary.path, target.path) == 0 else { throw failure("it cannot be put in place") }
        }
        // The new name made durable too: "written", then gone after a power
        // loss, the provider it adds was missing and its override unapplied.
        let directoryFD = open(directory.path, O_RDONLY | O_CLOEXEC)
        if directoryFD >= 0 {
            _ = FileSystem.flushToDisk(directoryFD)
            close(directoryFD)
        }
        return true
    }
}
