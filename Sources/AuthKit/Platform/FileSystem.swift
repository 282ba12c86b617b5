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
#if os(Linux)
    import CAuthKitLinux
#endif

/// File-system questions answered with POSIX calls, the same on Linux
/// (FoundationEssentials) and Apple platforms (Foundation).
package enum FileSystem {
    /// Whether the file at `path` is a mount point of its own: a single file
    /// bind-mounted (`docker run -v ~/.config/authkit/credentials.json:…`).
    /// A rename onto it fails with EBUSY, so a file only ever replaced whole
    /// (``AtomicFile``) can be read there and never saved. Linux only, from
    /// `/proc/self/mountinfo` (its fifth field, with `\040`-style escapes);
    /// false elsewhere and when that cannot be read.
    package static func isMountPoint(_ path: String) -> Bool {
        #if os(Linux)
            guard let resolved = realpath(path, nil) else { return false }
            let target = String(cString: resolved)
            free(resolved)
            guard let data = try? contents(of: "/proc/self/mountinfo", accepting: .regularFile, limit: 4 << 20) else {
                return false
            }
            for line in data.split(separator: UInt8(ascii: "\n")) {
                let fields = line.split(separator: UInt8(ascii: " "), maxSplits: 5, omittingEmptySubsequences: false)
                guard fields.count > 4 else { continue }
                if unescapedMountPath(fields[4]) == target { return true }
            }
            return false
        #else
            return false
        #endif
    }

    /// A mountinfo path: a space, tab, newline or backslash is written as
    /// three octal digits after a backslash.
    static func unescapedMountPath(_ field: some Collection<UInt8>) -> String {
        var bytes = [UInt8]()
        var rest = Array(field)[...]
        while let byte = rest.popFirst() {
            let digits = rest.prefix(3)
            if byte == UInt8(ascii: "\\"), digits.count == 3,
                digits.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "7")).contains($0) })
            {
                bytes.append(digits.reduce(0) { $0 &* 8 &+ ($1 - UInt8(ascii: "0")) })
                rest = rest.dropFirst(3)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Whether nothing stands at `path`: its name is not there. Not
    /// `FileManager.fileExists`, which follows links and says false for a
    /// dangling one, so a settings file behind a link not made yet (a
    /// dotfiles checkout) read as no settings, silently; and false for a
    /// directory that cannot be searched, which is an error to say.
    package static func isAbsent(_ path: String) -> Bool {
        var entry = stat()
        return lstat(path, &entry) != 0 && (errno == ENOENT || errno == ENOTDIR)
    }

    /// Whether `path` is a symbolic link whose target is not there.
    package static func isDanglingLink(_ path: String) -> Bool {
        var entry = stat()
        guard lstat(path, &entry) == 0, entry.st_mode & S_IFMT == S_IFLNK else { return false }
        return stat(path, &entry) != 0 && errno == ENOENT
    }

    /// The file a symbolic link at `path` leads to, through any further
    /// links; nil when `path` is no link (or leads nowhere).
    package static func linkTarget(of path: String) -> String? {
        var entry = stat()
        guard lstat(path, &entry) == 0, entry.st_mode & S_IFMT == S_IFLNK, let resolved = realpath(path, nil) else {
            return nil
        }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// Whether `path` names a directory (following a symbolic link).
    package static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
    }

    /// What stands at `path` when it is not a directory ("a regular file"),
    /// following a symbolic link; `nil` for a directory or for nothing there.
    package static func kindUnlessDirectory(_ path: String) -> String? {
        var info = stat()
        guard stat(path, &info) == 0, info.st_mode & S_IFMT != S_IFDIR else { return nil }
        return kind(info.st_mode & S_IFMT)
    }

    /// What a file of type `type` (`st_mode & S_IFMT`) is, for messages:
    /// "a named pipe".
    package static func kind(_ type: mode_t) -> String {
        switch type {
        case S_IFREG: "a regular file"
        case S_IFDIR: "a directory"
        case S_IFIFO: "a named pipe"
        case S_IFCHR, S_IFBLK: "a device"
        case S_IFSOCK: "a socket"
        case S_IFLNK: "a symbolic link"
        default: "a file of unknown type"
        }
    }

    /// Whether `path` names a regular file (following a symbolic link).
    package static func isRegularFile(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG
    }

    /// The permission bits of `path` (following a symbolic link), or `nil`.
    package static func permissions(of path: String) -> Int? {
        var info = stat()
        return stat(path, &info) == 0 ? Int(info.st_mode) & 0o7777 : nil
    }

    /// Why a file that decides where sign-ins go (a provider descriptor,
    /// `config.json`) must not be read, or `nil` when only this user (or
    /// root) can have written it.
    ///
    /// The rule is OpenSSH's for its configuration (StrictModes): the file and
    /// the directory it is in (whoever can write the directory can replace
    /// the file) belong to this user or root, and no one else can write them.
    /// Two exceptions keep it from refusing safe set-ups: a group-writable
    /// file or directory whose group is this user's own primary group (a
    /// user-private group, as umask 002 systems use), and a sticky directory
    /// such as /tmp, in which others cannot replace a file they do not own.
    ///
    /// A symbolic link is followed: the file it names and that file's
    /// directory are held to the rule, and so is the link's own directory.
    ///
    /// `harm` completes "who could make it …": what a writer could do with
    /// this file (the credential store passes its own).
    /// - Parameters:
    ///   - opened: the status of the file as read (`fstat` of the descriptor
    ///     its bytes came from). Given, the file's owner and mode are that
    ///     file's, not whatever `path` names a moment later: a directory
    ///     another user can rename entries in could otherwise show one file
    ///     to the check and another to the read.
    ///   - ancestors: also hold every directory above the file's to the rule
    ///     (owned by this user or root, writable by no one else unless
    ///     sticky), as OpenSSH does for `authorized_keys`: whoever can rename
    ///     a directory on the way could put another tree in its place.
    package static func foreignWriteProblem(
        at path: String, harm: String = "send your sign-ins elsewhere",
        allowingSticky: Bool = true, opened: stat? = nil, ancestors: Bool = false
    ) -> String? {
        func directory(of path: String) -> String {
            path.lastIndex(of: "/").map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
        }
        var file = stat()
        if let opened {
            file = opened
        } else {
            guard stat(path, &file) == 0 else { return nil } // unreadable: reading it reports why
        }
        // A device, a pipe or a directory is refused by the read, which says
        // what it is; "Run: chmod go-w" would be wrong advice for one (through
        // a link named like a provider file, it would change /dev/zero).
        guard file.st_mode & S_IFMT == S_IFREG else { return nil }
        if let problem = problem(file, path, isDirectory: false, harm: harm, refusal: "it is not read") {
            return problem
        }
        var directories = [directory(of: path)]
        if let resolved = realpath(path, nil) {
            defer { free(resolved) }
            let target = directory(of: String(cString: resolved))
            if target != directories[0] { directories.append(target) }
        }
        for folder in directories {
            var info = stat()
            if stat(folder, &info) == 0,
                let problem = problem(
                    info, folder, isDirectory: true, harm: harm, refusal: "it is not read",
                    allowingSticky: allowingSticky)
            {
                return problem
            }
        }
        return ancestors ? ancestorProblem(of: directories.last!, harm: harm, refusal: "it is not read") : nil
    }

    /// The first directory above `folder` (resolved) that another user owns
    /// or could rename entries in (unless sticky), as a problem, or `nil`.
    private static func ancestorProblem(of folder: String, harm: String, refusal: String) -> String? {
        guard let resolved = realpath(folder, nil) else { return nil }
        var current = String(cString: resolved)
        free(resolved)
        while current != "/" {
            current = current.lastIndex(of: "/").map { $0 == current.startIndex ? "/" : String(current[..<$0]) } ?? "/"
            var info = stat()
            if stat(current, &info) == 0,
                let problem = problem(info, current, isDirectory: true, harm: harm, refusal: refusal)
            {
                return problem
            }
        }
        return nil
    }

    /// The directory half of ``foreignWriteProblem(at:harm:)``, for a file
    /// not written yet: whoever else can write `folder` could replace what
    /// is saved there. `refusal` says what is not done because of it.
    ///
    /// `allowingSticky: false` is for a directory AuthKit keeps its own files
    /// in (its home, the store's directory): there a sticky bit is no
    /// defence, since another user could still create the names AuthKit has
    /// not made yet, or a link at `sandbox/`.
    /// - Parameter ancestors: also every directory above it, as
    ///   ``foreignWriteProblem(at:harm:allowingSticky:opened:ancestors:)`` holds them.
    package static func foreignWriteProblem(
        inDirectory folder: String, harm: String, refusal: String,
        allowingSticky: Bool = true, ancestors: Bool = false
    ) -> String? {
        var info = stat()
        guard stat(folder, &info) == 0 else { return nil }
        if let problem = problem(
            info, folder, isDirectory: true, harm: harm, refusal: refusal, allowingSticky: allowingSticky)
        {
            return problem
        }
        return ancestors ? ancestorProblem(of: folder, harm: harm, refusal: refusal) : nil
    }

    private static func problem(
        _ info: stat, _ path: String, isDirectory: Bool, harm: String, refusal: String,
        allowingSticky: Bool = true
    ) -> String? {
        if info.st_uid != geteuid() && info.st_uid != 0 {
            return isDirectory
                ? "is in \(path), which belongs to another user (uid \(info.st_uid)), who could replace it to \(harm); \(refusal). Move it to a directory of your own."
                : "belongs to another user (uid \(info.st_uid)), who could make it \(harm); \(refusal). If you trust it, copy it to a file of your own; else remove it."
        }
        guard let who = otherWriters(info, path: path, allowingSticky: allowingSticky && isDirectory) else {
            return nil
        }
        let shown = "(\(modeText(info)))"
        return isDirectory
            ? "\(who) can write to its directory \(path) \(shown), and so replace it to \(harm); \(refusal). Run: chmod go-w \(shellQuoted(path))"
            : "\(who) can write to it \(shown), and so make it \(harm); \(refusal). Run: chmod go-w \(shellQuoted(path))"
    }

    /// Who besides the owner can write what `info` describes ("every user",
    /// "the members of group 100"), or `nil`: the rule above, a group being
    /// harmless when it is the user's own private group, and a sticky
    /// directory's others harmless where `allowingSticky` says so.
    ///
    /// With `path`, a POSIX access control list is read too (Linux): where a
    /// file has one, its group bits are the list's mask, not the group's,
    /// so `rw-rw-r--` of a private group could still let a user the list
    /// names write it (`setfacl -m u:bob:rw`).
    package static func otherWriters(_ info: stat, path: String? = nil, allowingSticky: Bool) -> String? {
        let mode = Int(info.st_mode) & 0o7777
        let sticky = allowingSticky && mode & 0o1000 != 0
        if mode & 0o002 != 0 && !sticky { return "every user" }
        if mode & 0o020 != 0 && !sticky {
            if let path, let named = accessListWriters(path) { return named }
            if !isOwnPrivateGroup(info.st_gid) { return "the members of group \(info.st_gid)" }
        }
        return nil
    }

    /// The users and groups other than this user (and its private group)
    /// that `path`'s POSIX access ACL lets write it, as words, or `nil`.
    /// The list is the `system.posix_acl_access` attribute: a version (2),
    /// then entries of a tag, permissions and an id, little-endian (Linux's
    /// `posix_acl_xattr_entry`). Anything unreadable counts as no list: the
    /// mode bits then say what they say.
    static func accessListWriters(_ path: String) -> String? {
        #if os(Linux)
            // Its size first (0 bytes asked for), then the list itself; one
            // grown in between (ERANGE) is read at its new size.
            var size = -1
            var buffer: [UInt8] = []
            for _ in 0..<3 {
                let needed = authkit_access_acl(path, nil, 0)
                guard needed > 0, needed <= 1 << 20 else { return nil } // no list (ENODATA), or none readable
                buffer = [UInt8](repeating: 0, count: needed)
                size = authkit_access_acl(path, &buffer, buffer.count)
                if size >= 0 || errno != ERANGE { break }
            }
            guard size >= 4, (size - 4) % 8 == 0 else { return nil }
            func number(_ offset: Int, _ bytes: Int) -> UInt32 {
                (0..<bytes).reduce(UInt32(0)) { $0 | UInt32(buffer[offset + $1]) << (8 * $1) }
            }
            guard number(0, 4) == 2 else { return nil }
            var writers: [String] = []
            for offset in stride(from: 4, to: size, by: 8) where number(offset + 2, 2) & 2 != 0 {
                let tag = number(offset, 2)
                let id = number(offset + 4, 4)
                if tag == 0x02, id != geteuid() { writers.append("user \(id)") }
                if tag == 0x08, !isOwnPrivateGroup(gid_t(id)) { writers.append("the members of group \(id)") }
            }
            return writers.isEmpty
                ? nil : writers.joined(separator: ", ") + ", named in its access control list (getfacl '\(path)')"
        #else
            return nil
        #endif
    }

    /// Whether `gid` is the user's own group in the user-private-group way
    /// (Debian, Fedora): the user's primary group, named as the user, with
    /// no other member listed, and no other account's primary group (which
    /// the group's member list never names: `useradd -g alice bob`). A
    /// primary group others share (macOS's `staff`, openSUSE's `users`) is
    /// not: its other members could write what is group-writable, as
    /// OpenSSH's permission checks hold too (Debian's walks the accounts so).
    package static func isOwnPrivateGroup(_ gid: gid_t) -> Bool {
        guard gid == getegid(), let user = userName(geteuid()), let (name, members) = groupEntry(gid),
            isPrivateGroup(name: name, members: members, userName: user)
        else { return false }
        return isPrivateGroup(
            name: name, members: members, userName: user, primaryGroupOf: accounts(withPrimaryGroup: gid))
    }

    /// - Parameter primaryGroupOf: the accounts whose primary group it is.
    package static func isPrivateGroup(
        name: String, members: [String], userName: String, primaryGroupOf: [String] = []
    ) -> Bool {
        name == userName && members.allSatisfy { $0 == userName } && primaryGroupOf.allSatisfy { $0 == userName }
    }

    /// The accounts whose primary group is `gid`, read from the account
    /// database once per process (getpwent: its cursor is the process's, so
    /// one walk at a time). Only asked of a file or directory that is
    /// group-writable in what is otherwise the user's private group.
    private static func accounts(withPrimaryGroup gid: gid_t) -> [String] {
        accountWalk.withLock {
            if let known = primaryGroupMembers[gid] { return known }
            setpwent()
            defer { endpwent() }
            var names = [String]()
            while let entry = getpwent() {
                if entry.pointee.pw_gid == gid, let name = entry.pointee.pw_name { names.append(String(cString: name)) }
            }
            primaryGroupMembers[gid] = names
            return names
        }
    }

    private static let accountWalk = ThreadLock()
    /// Guarded by ``accountWalk``.
    nonisolated(unsafe) private static var primaryGroupMembers: [gid_t: [String]] = [:]

    /// The entry's strings live in the buffer: read inside its closure.
    private static func userName(_ uid: uid_t) -> String? {
        var entry = passwd()
        var found: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 16 << 10)
        return buffer.withUnsafeMutableBufferPointer { storage -> String? in
            guard getpwuid_r(uid, &entry, storage.baseAddress!, storage.count, &found) == 0, found != nil,
                let name = entry.pw_name
            else { return nil }
            return String(cString: name)
        }
    }

    private static func groupEntry(_ gid: gid_t) -> (name: String, members: [String])? {
        var entry = group()
        var found: UnsafeMutablePointer<group>?
        var buffer = [CChar](repeating: 0, count: 64 << 10)
        return buffer.withUnsafeMutableBufferPointer { storage -> (String, [String])? in
            guard getgrgid_r(gid, &entry, storage.baseAddress!, storage.count, &found) == 0, found != nil,
                let name = entry.gr_name
            else { return nil }
            var members = [String]()
            var cursor = entry.gr_mem
            while let member = cursor?.pointee {
                members.append(String(cString: member))
                cursor = cursor! + 1
            }
            return (String(cString: name), members)
        }
    }

    /// `mode 0755`, as messages show permissions.
    package static func modeText(_ info: stat) -> String {
        let octal = String(Int(info.st_mode) & 0o7777, radix: 8)
        return "mode \(octal.count < 4 ? "0" + octal : octal)"
    }

    /// Writes all of `bytes` to `fd` with write(2), retrying interrupted
    /// writes. Not `FileHandle.write`, which traps on Linux when the reader has
    /// gone (a pipe into `head` that closed, with SIGPIPE ignored as SwiftNIO
    /// does). Returns false when the reader is gone or the write fails.
    @discardableResult
    package static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let written = write(fd, bytes.baseAddress! + offset, bytes.count - offset)
            if written > 0 {
                offset += written
            } else if written < 0 && errno == EINTR {
                continue
            } else {
                return false
            }
        }
        return true
    }

    /// What may be read by ``contents(of:accepting:limit:)``.
    package enum Readable: Sendable {
        /// Only a regular file: for files AuthKit finds by itself (a
        /// providers directory, `config.json`), where a named pipe would make
        /// every command wait for a writer that never comes.
        case regularFile
        /// A regular file or a pipe: for a file the user named on the command
        /// line, which may be a shell's `<(…)`.
        case fileOrPipe
    }

    /// Asks for `fd`'s written data to be on the disk before it returns, as
    /// a replace-by-rename needs (the old content or the new after a power
    /// loss, never half). On Apple platforms `fsync(2)` leaves the data in
    /// the drive's cache, which may write it out of order; `F_FULLFSYNC`
    /// flushes that cache too (Apple's fsync(2) man page), with `fsync` as
    /// the fallback where the file system does not support it.
    ///
    /// Only where `F_FULLFSYNC` is not supported: after another failure (an
    /// I/O error flushing the drive's cache), `fsync` has nothing left to
    /// write, succeeds, and a copy that is not on the disk was said to be.
    package static func flushToDisk(_ fd: Int32) -> Bool {
        #if canImport(Darwin)
            if fcntl(fd, F_FULLFSYNC) == 0 { return true }
            guard [ENOTSUP, ENOTTY, EINVAL].contains(errno) else { return false }
        #endif
        return fsync(fd) == 0
    }

    /// `path` as one word for a shell, in single quotes (a `'` inside
    /// written `'\''`): a command a message suggests, which a path such as
    /// `/Volumes/Bob's Drive` broke.
    package static func shellQuoted(_ path: String) -> String {
        "'" + path.replacing("'", with: #"'\''"#) + "'"
    }

    /// Creates the directory at `path`, and any missing parent, with mode
    /// 0700 from the start: mkdir(2) with that mode, not FileManager's
    /// `createDirectory(…, attributes:)`, which makes it 0777 (less the
    /// umask) and then changes the mode, leaving a moment in which others
    /// could add an entry (a lock file of theirs, say). An existing
    /// directory is left as it is.
    package static func createPrivateDirectory(_ path: String) throws {
        var prefix = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/") {
            prefix += "/" + component
            if mkdir(prefix, 0o700) == 0 { continue }
            let code = errno
            guard code == EEXIST else { throw DirectoryFailure(description: String(cString: strerror(code))) }
            var info = stat()
            guard stat(prefix, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else {
                throw DirectoryFailure(description: "\(prefix) exists and is not a directory")
            }
        }
    }

    /// Why ``createPrivateDirectory(_:)`` failed, in words ("Permission denied").
    package struct DirectoryFailure: Error, Sendable, Hashable, CustomStringConvertible {
        package let description: String
    }

    /// Why ``contents(of:accepting:limit:)`` could not read a file, as words that
    /// complete "PATH …": "cannot be read (No such file or directory)".
    package struct ReadFailure: Error, Sendable, Hashable, CustomStringConvertible {
        package let description: String
    }

    /// The bytes of `path`, refusing what could hang the process or exhaust
    /// its memory: a device or socket (and a pipe, unless `accepting`
    /// allows it), and more than `limit` bytes, however large the file
    /// claims to be. Foundation's `Data(contentsOf:)` reports a pipe as
    /// "Permission denied" and reads any size.
    package static func contents(of path: String, accepting: Readable, limit: Int) throws(ReadFailure) -> Data {
        try contentsAndMode(of: path, accepting: accepting, limit: limit).data
    }

    /// ``contents(of:accepting:limit:)``, with the permission bits of the
    /// file that was read: taken from the open descriptor (fstat), so a
    /// check of them is about those bytes, not about whatever the path
    /// names a moment later (a private key swapped between a `stat` and the
    /// read would pass a check of the first file's mode).
    package static func contentsAndMode(of path: String, accepting: Readable, limit: Int) throws(ReadFailure) -> (
        data: Data, mode: Int
    ) {
        let (data, info) = try contentsAndStatus(of: path, accepting: accepting, limit: limit)
        return (data, Int(info.st_mode & 0o7777))
    }

    /// ``contents(of:accepting:limit:)``, with the status (`fstat`) of the
    /// descriptor the bytes were read from: what a check of the file's owner
    /// and mode must look at (``foreignWriteProblem(at:harm:allowingSticky:opened:ancestors:)``).
    package static func contentsAndStatus(of path: String, accepting: Readable, limit: Int) throws(ReadFailure) -> (
        data: Data, info: stat
    ) {
        // O_NONBLOCK: opening a named pipe must not wait for its writer
        // before its type can be checked.
        var fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)
        guard fd >= 0 else { throw ReadFailure(description: "cannot be read (\(String(cString: strerror(errno)))).") }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            throw ReadFailure(description: "cannot be read (\(String(cString: strerror(errno)))).")
        }
        let type = info.st_mode & S_IFMT
        var waitsInPoll = false
        switch type {
        case S_IFREG:
            break
        case S_IFIFO where accepting == .fileOrPipe:
            #if os(Linux)
                // Read from this same descriptor, waiting in poll(2): a
                // non-blocking reader of a FIFO is not told of a hang-up
                // until a writer has come and gone since it opened (Linux
                // fs/pipe.c), so a writer that has not come yet is waited
                // for, as `cat` would. Not by opening the path again,
                // blocking: a writer already waiting in open(2) is let go by
                // the first open, may write and close before the second, and
                // the second then waits for another writer, forever.
                waitsInPoll = true
            #else
                // A BSD FIFO reads as ended while it has no writer, so the
                // path is opened again, blocking, to wait for one. This has
                // the race that Linux avoids above (a writer that was waiting
                // and has already finished is not seen); no poll(2) semantics
                // that avoid it are documented on Darwin.
                let blocking = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY)
                guard blocking >= 0 else {
                    throw ReadFailure(description: "cannot be read (\(String(cString: strerror(errno)))).")
                }
                close(fd)
                fd = blocking
            #endif
        case S_IFDIR:
            throw ReadFailure(description: "is a directory.")
        default:
            throw ReadFailure(description: "is \(kind(type)), not a regular file; it is not read.")
        }
        if type == S_IFREG, Int(info.st_size) > limit {
            throw ReadFailure(description: "is \(info.st_size) bytes, more than the \(limit) allowed; it is not read.")
        }
        // A file that grew after fstat, or a pipe, is held to the limit too.
        do {
            return (try readToEnd(fd, limit: limit, waitingInPoll: waitsInPoll), info)
        } catch let failure as ReadFailure {
            throw failure
        } catch {
            throw ReadFailure(description: "cannot be read (\(DescriptorLoader.reason(error))).")
        }
    }

    /// Reads `fd` to its end (retrying interrupted reads), refusing more
    /// than `limit` bytes as they arrive.
    /// - Parameter waitingInPoll: for a descriptor opened non-blocking
    ///   (a named pipe, on Linux): each read waits in poll(2) until there
    ///   is something to read or the writer has hung up, since a
    ///   non-blocking read would find "no data yet" (EAGAIN), or, before
    ///   any writer has come, the end.
    /// - Throws: the `errno` of a failed read, as a `POSIXError`; past
    ///   `limit`, a ``ReadFailure`` ("holds more than the N bytes allowed").
    package static func readToEnd(_ fd: Int32, limit: Int = .max, waitingInPoll: Bool = false) throws -> Data {
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            if waitingInPoll {
                var wanted = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                if poll(&wanted, 1, -1) < 0 {
                    if errno == EINTR { continue }
                    throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
                }
            }
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count > 0 {
                guard count <= limit - data.count else {
                    throw ReadFailure(description: "holds more than the \(limit) bytes allowed; it is not read.")
                }
                data.append(contentsOf: buffer[..<count])
            } else if count == 0 {
                return data
            } else if errno == EAGAIN && waitingInPoll {
                continue
            } else if errno != EINTR {
                throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
            }
        }
    }

    /// One line read from `fd` (without its line break, `\n` or `\r\n`, as
    /// `Swift.readLine` strips them), or what ended the read.
    package enum Line: Equatable, Sendable {
        case line(String)
        /// The input ended with nothing read.
        case end
        /// More than the limit came before a line break: the rest of the line
        /// was not read.
        case tooLong(limit: Int)
    }

    /// Reads one line from `fd` with `read(2)`, a byte at a time, so nothing
    /// after the line break is taken from a descriptor another reader may
    /// share, and at most `limit` bytes are held.
    ///
    /// Not `Swift.readLine`: it holds standard input's `FILE` lock while it
    /// blocks, and `fflush(NULL)`, which glibc's `exit` and a signal's
    /// clean-up call, then waits for that lock, so a process waiting for a
    /// paste could not be stopped; nor is its line bounded (an endless line
    /// grew it to gigabytes). Invalid UTF-8 is repaired, as `readLine` does.
    package static func readLine(_ fd: Int32, limit: Int) -> Line {
        var bytes = [UInt8]()
        var byte: UInt8 = 0
        while true {
            let count = read(fd, &byte, 1)
            if count == 1 {
                if byte == UInt8(ascii: "\n") { break }
                guard bytes.count < limit else { return .tooLong(limit: limit) }
                bytes.append(byte)
            } else if count == 0 {
                if bytes.isEmpty { return .end }
                break
            } else if errno != EINTR {
                // A read error ends the input, as it ends readLine's.
                if bytes.isEmpty { return .end }
                break
            }
        }
        if bytes.last == UInt8(ascii: "\r") { bytes.removeLast() }
        return .line(String(decoding: bytes, as: UTF8.self))
    }
}
