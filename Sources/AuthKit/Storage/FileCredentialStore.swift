import Crypto
import Logging

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

/// Credentials in one JSON file, `$AUTHKIT_HOME/credentials.json` by default.
///
/// Guarantees:
/// - **Private**: the directory is created `0700` and the file `0600`; a file
///   others can read is reported with a warning that says how to fix it.
/// - **Atomic**: each change writes a new file beside the old one, `fsync`s it
///   and `rename`s it over, so a crash leaves the old or the new content, never half;
///   the next save deletes the temporary file a killed writer left (``AtomicFile``).
/// - **Safe across processes**: every read-modify-write holds an exclusive
///   `flock` on `credentials.json.lock`, so two `authkit` processes saving
///   different credentials at once both land (``StoreLock``).
/// - **Never destroys what it cannot read**: a corrupt file is reported with its
///   path and left untouched; nothing is saved until the user fixes or moves it.
/// - **Keeps what it does not know**: members a later version added are
///   written back unchanged (see ``CredentialFile``).
/// - **Follows no links**: the store and its lock are opened with `O_NOFOLLOW`,
///   so a symbolic link someone placed cannot redirect tokens to another file.
/// - **Reads no file another user could have written**: the rule for provider
///   files (``FileSystem/foreignWriteProblem(at:harm:allowingSticky:)``, OpenSSH's
///   StrictModes), without its exception for a sticky directory: in one
///   (`/tmp`), another user could still create the store before its owner. A credential planted by someone else would sign the user
///   in to that person's account, and what the user then uploads goes there
///   (a login CSRF, RFC 6749 §10.12, by file). The store is refused with the
///   fix, not rewritten: it may still hold the user's own credentials.
public struct FileCredentialStore: CredentialStore {
    public let fileURL: URL
    private let logger: Logger

    /// A store at `file`, or at `credentials.json` in ``AuthKitHome``.
    public init(
        file: URL? = nil, environment: [String: String] = ProcessInfo.processInfo.environment,
        logger: Logger = Logger(label: "authkit.store")
    ) {
        self.fileURL =
            file ?? AuthKitHome.directory(environment: environment).appendingPathComponent("credentials.json")
        self.logger = logger
    }

    private var path: String { fileURL.path }
    private var directory: URL { fileURL.deletingLastPathComponent() }

    public func credential(for key: CredentialKey) async throws -> Credential? {
        try await allCredentials().first { $0.key == key }
    }

    /// Reading creates nothing: with no store yet, there is nothing to lock.
    ///
    /// Nor can a lock be taken in a store this process cannot write (a
    /// read-only mount of secrets in CI, a directory of another user's),
    /// and none is needed to read: every save replaces the file whole by a
    /// rename, so it is never seen half written. Such a store is read as it
    /// is; before, every command failed there, `token show` too, as the
    /// lock file could not be opened for writing.
    public func allCredentials() async throws -> [Credential] {
        // Only a name that is not there means no store: `fileExists` said
        // false for a directory that cannot be searched too (EACCES), and a
        // store made by `sudo authkit` read as "nothing stored", not as the
        // error that says whose it is.
        if FileSystem.isAbsent(path) { return [] }
        if access(path + ".lock", W_OK) != 0, access(directory.path, W_OK) != 0 {
            // Warned about as a writable store is (a read-only mount of a
            // mode-0644 file is the usual CI secret), creating nothing.
            warnAboutPermissions()
            return try read()
        }
        return try await withLockWaitingAsTask { try read() }
    }

    /// What the file holds now, read without the lock and without creating
    /// the directory or the lock file: for shell completion, which must
    /// neither wait on another process nor write. The file is only ever
    /// replaced whole (a rename), so it is never seen half written.
    package func unlockedSnapshot() throws -> [Credential] {
        try read()
    }

    /// The names of the members of `key`'s entry this version does not know
    /// (``CredentialFile``: a later AuthKit's), which a copy of its
    /// ``Credential`` elsewhere would not carry; empty when there are none
    /// or no entry.
    package func unknownMembers(of key: CredentialKey) async throws -> [String] {
        try await withLockWaitingAsTask { try readFile() }.entries.first { $0.credential.key == key }?
            .unknownMemberPaths ?? []
    }

    public func save(_ credential: Credential) async throws {
        try await withLockWaitingAsTask {
            var file = try readFile()
            file.entries.removeAll { $0.credential.key == credential.key }
            file.entries.append(CredentialFile.Entry(credential))
            try write(file, saving: credential.key)
        }
    }

    @discardableResult
    public func remove(_ key: CredentialKey) async throws -> Credential? {
        try await withLockWaitingAsTask {
            // Every copy: a file edited by hand may hold the account twice,
            // and "deleted" must mean no credential for it is left.
            var file = try readFile()
            guard let removed = file.entries.first(where: { $0.credential.key == key }) else { return nil }
            file.entries.removeAll { $0.credential.key == key }
            try write(file)
            return removed.credential
        }
    }

    /// Holds `key`'s refresh against other tasks of this process and against
    /// other processes using this file (an `flock` on `.refresh-<key>.lock`
    /// beside it), waiting at most `timeout`.
    public func withRefreshLock<Result: Sendable>(
        for key: CredentialKey, timeout: Duration, _ body: @Sendable () async throws -> Result
    ) async throws -> Result {
        // Whoever takes this lock is about to save (a refresh's renewal, a
        // sign-in) or remove (a sign-out): a store that cannot be written is
        // said before the provider is asked, not after it has spent the
        // refresh token whose renewal could then not be kept.
        // The directory's writability first: on a read-only mount the lock
        // file itself cannot be made, which read as a bad lock file.
        let prepare: @Sendable () throws -> Void = {
            try ensureDirectory()
            try checkDirectoryWritable()
        }
        return try await RefreshLockFile(directory: directory, key: key).withLock(timeout: timeout, prepare: prepare) {
            try await checkWritable()
            return try await body()
        }
    }

    /// `qiita` or `qiita.work`: the part of a lock file's name that says
    /// whose it is, one name per account.
    ///
    /// A key of anything but ASCII lowercase letters, digits, `-`, `_` and
    /// `.` (provider ids have no `.`, so the first one ends the id) keeps its
    /// letters and digits (of any script, so `仕事` stays readable), has its
    /// other characters written as `_`, and ends with a hash of the whole key:
    /// labels `a/b` and `a_b` shared one name, so a sign-in to one was
    /// refused as "in progress" while the other signed in; and `Work` and
    /// `work`, or a label's composed and decomposed `é`, are one file name
    /// on macOS's case-insensitive, normalizing file systems.
    ///
    /// A file name holds at most 255 bytes (NAME_MAX on Linux and macOS), and
    /// a label may be longer (or hold letters of three UTF-8 bytes each): a
    /// name past ``longestFileName`` bytes is cut and ends with the hash
    /// too. Before, a sign-in with a 300-character label failed with "File
    /// name too long".
    package static func fileName(for key: CredentialKey) -> String {
        let whole = key.providerID + (key.label.map { "." + $0 } ?? "")
        func isPlain(_ scalar: Unicode.Scalar) -> Bool {
            ("a"..."z").contains(scalar) || ("0"..."9").contains(scalar) || scalar == "-" || scalar == "_"
                || scalar == "."
        }
        guard whole.utf8.count > longestFileName || !whole.unicodeScalars.allSatisfy(isPlain) else { return whole }
        let readable = whole.unicodeScalars.map { $0.isAlphanumeric || isPlain($0) ? String($0) : "_" }.joined()
        var kept = String.UnicodeScalarView()
        var bytes = 0
        for scalar in readable.unicodeScalars {
            bytes += String(scalar).utf8.count
            if bytes > longestFileName - 17 { break }
            kept.append(scalar)
        }
        let digest = SHA256.hash(data: Data((key.providerID + "\u{0}" + (key.label ?? "")).utf8))
        let hex = digest.prefix(8).map { ($0 < 0x10 ? "0" : "") + String($0, radix: 16) }.joined()
        return String(kept) + "-" + hex
    }

    /// The most bytes ``fileName(for:)`` returns: with `.refresh-` and
    /// `.lock` around it, well within a file name's 255.
    package static let longestFileName = 128

    /// Problems with the store's permissions, each with the command that fixes it.
    ///
    /// Only for what is what it should be: the file itself (`lstat`, so not
    /// through a symbolic link) and a directory. A link or a directory in the
    /// file's place is refused when read, and `chmod` follows links: the
    /// advice for `credentials.json` linked to `/etc/passwd` would have
    /// changed `/etc/passwd`.
    /// On a read-only mount (the directory's, or the file's own, as `docker
    /// run -v FILE:…:ro` makes) a `chmod` fails: the advice is then to fix
    /// the mode where the file comes from.
    package func permissionWarnings() -> [String] {
        var warnings = [String]()
        for (target, expected, type, follow) in [(directory.path, 0o700, S_IFDIR, true), (path, 0o600, S_IFREG, false)]
        {
            var info = stat()
            guard (follow ? stat(target, &info) : lstat(target, &info)) == 0, info.st_mode & S_IFMT == type else {
                continue
            }
            if Int(info.st_mode) & 0o077 != 0 {
                let mode = String(Int(info.st_mode) & 0o7777, radix: 8)
                var disk = statvfs()
                let readOnly = statvfs(target, &disk) == 0 && disk.f_flag & UInt(ST_RDONLY) != 0
                warnings.append(
                    readOnly
                        ? "\(target) is accessible by other users (mode \(mode)) and read-only here; give it mode \(String(expected, radix: 8)) where it comes from (the mounted file or directory, or the mount's options)"
                        : "\(target) is accessible by other users (mode \(mode)); run: chmod \(String(expected, radix: 8)) \(FileSystem.shellQuoted(target))"
                )
            }
        }
        return warnings
    }

    /// Checks, before a sign-in asks anything of the user, that its result can
    /// be saved: the directory can be made and written, the file (if any)
    /// is a readable credentials file, and the disk has room for its new
    /// copy. A problem found after the user consented would cost them the
    /// grant; found after a refresh, it costs the rotated refresh token
    /// (``withRefreshLock(for:timeout:_:)`` checks this first).
    ///
    /// The store lock is waited for as a task: a stopped process holding it
    /// had each refresh block a thread of Swift's pool for up to 30 s.
    package func checkWritable() async throws {
        // Before the lock: on a read-only mount its file cannot be made,
        // which read as a bad lock file (exit 65, not 74).
        try ensureDirectory()
        try checkDirectoryWritable()
        let removing = Self.removing
        try await withLockWaitingAsTask {
            _ = try read()
            if FileSystem.isMountPoint(path) {
                throw AuthKitError.store(
                    path: path,
                    reason: .init(
                        .notSaved,
                        """
                        \(Self.notSavedReason)it is a file mounted on its own (a bind mount, as `docker run -v FILE:…` makes), which \
                        cannot be replaced (rename: Device or resource busy), and every save replaces it whole. Mount its directory \
                        instead (which also shares the locks beside it).
                        """))
            }
            if let problem = FileSystem.foreignWriteProblem(
                inDirectory: directory.path, harm: Self.plantedHarm,
                refusal: "nothing is saved there", allowingSticky: false, ancestors: true)
            {
                throw AuthKitError.store(path: path, reason: .init(.writableByOthers, problem))
            }
            // The new copy is written whole beside the old one before the
            // rename: room for the file as it is, and 2 MiB for what a
            // save adds, is needed on top of it (about the most one
            // credential holds: its tokens and ID token from an answer of
            // at most 1 MiB, up to 512 KiB of members kept from earlier
            // answers, pretty-printed; with 64 KiB, a save could still fail
            // after the provider had spent the refresh token). A removal spends nothing
            // at the provider and shrinks the file: on a full disk, its
            // write fails with the old file kept, and the check only stood
            // between the user and `token delete`.
            var disk = statvfs()
            if !removing, statvfs(directory.path, &disk) == 0 {
                let free = UInt64(disk.f_bavail) * UInt64(disk.f_frsize)
                var file = stat()
                let needed = (lstat(path, &file) == 0 ? UInt64(max(0, file.st_size)) : 0) + (2 << 20)
                if free < needed {
                    throw AuthKitError.store(
                        path: path,
                        reason: .init(
                            .notSaved,
                            """
                            \(Self.notSavedReason)the disk holding it is full (\(free / 1024) KiB free; a new copy of the file needs about \
                            \(needed / 1024) KiB). Free some space, then try again.
                            """))
                }
            }
        }
    }

    /// Holds the sign-in of `key` for this process: a second sign-in for the
    /// same provider and label at once (another terminal, a script) fails at
    /// once instead of silently overwriting the first one's credential.
    /// Released when the returned value is released.
    package func beginSignIn(for key: CredentialKey) throws -> SignInLock {
        try ensureDirectory()
        return try Self.beginSignIn(for: key, in: directory)
    }

    /// ``beginSignIn(for:)`` with its lock file in `directory`, which exists:
    /// any store whose processes share that directory (the keyring's).
    package static func beginSignIn(for key: CredentialKey, in directory: URL) throws -> SignInLock {
        let lockPath = directory.appendingPathComponent(".signin-\(Self.fileName(for: key)).lock").path
        let fd = try RefreshLockFile.openLock(lockPath)
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            close(fd)
            throw AuthKitError.store(
                path: lockPath,
                reason: .init(.busy, "another sign-in to \(key) is in progress; finish or cancel it first."))
        }
        return SignInLock(fd: fd)
    }

    /// A held sign-in (``beginSignIn(for:)``); closing the descriptor releases the lock.
    package final class SignInLock: @unchecked Sendable {
        private let fd: Int32
        init(fd: Int32) { self.fd = fd }
        deinit { close(fd) }
    }

    // MARK: - File operations (callers hold the lock)

    /// Sorted by provider then label, as the protocol says: the file keeps
    /// the order it was written in, and one edited or merged by hand need
    /// not be in it.
    private func read() throws -> [Credential] {
        try readFile().credentials.sorted(by: CredentialFile.order)
    }

    /// The file as read, with the members this version does not know (see ``CredentialFile``).
    private func readFile() throws -> CredentialFile {
        // O_NONBLOCK: a named pipe in the file's place must be refused, not
        // waited on by every command (it does not change reading a file).
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY)
        guard fd >= 0 else {
            if errno == ENOENT { return CredentialFile(entries: []) }
            if errno == ELOOP {
                throw AuthKitError.store(
                    path: path,
                    reason: .init(
                        .notARegularFile,
                        "is a symbolic link; AuthKit does not follow links for its credentials (one could send them elsewhere). Replace it with the file itself."
                    ))
            }
            throw AuthKitError.store(
                path: path, reason: .init(.inaccessible, "cannot be read (\(String(cString: strerror(errno))))."))
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            throw AuthKitError.store(
                path: path, reason: .init(.inaccessible, "cannot be read (\(String(cString: strerror(errno))))."))
        }
        if info.st_mode & S_IFMT != S_IFREG {
            throw AuthKitError.store(
                path: path,
                reason: .init(
                    .notARegularFile,
                    "is \(FileSystem.kind(info.st_mode & S_IFMT)), not a regular file; AuthKit keeps credentials only in a file. Move it aside; the next sign-in creates the file."
                ))
        }
        // The owner and mode of the file opened, not of what the path names
        // by now; and every directory above it.
        if let problem = FileSystem.foreignWriteProblem(
            at: path, harm: Self.plantedHarm, allowingSticky: false, opened: info, ancestors: true)
        {
            throw AuthKitError.store(path: path, reason: .init(.writableByOthers, problem))
        }
        // Read whole: a 1 GB file took a gigabyte of memory before it was
        // found not to be JSON. Thousands of credentials take a few MiB.
        if info.st_size > Self.largestFile {
            throw AuthKitError.store(
                path: path,
                reason: .init(
                    .invalidContents,
                    """
                    is \(info.st_size) bytes, more than the \(Self.largestFile >> 20) MiB a credentials file could hold; it was not read, \
                    and left untouched. Move it away to start afresh.
                    """))
        }
        let data: Data
        do {
            data = try FileSystem.readToEnd(fd, limit: Self.largestFile)
        } catch {
            // An I/O error (EIO, a FUSE mount's EAGAIN) is the store's, named by its path.
            throw AuthKitError.store(path: path, reason: .init(.inaccessible, "cannot be read (\(error))."))
        }
        // An empty file (`touch`, or only white space) holds nothing to keep:
        // no credentials, as for no file; one with anything else must parse.
        if data.allSatisfy(JSONParser.isWhitespace) { return CredentialFile(entries: []) }
        func invalid(_ what: String) -> AuthKitError {
            AuthKitError.store(
                path: path,
                reason: .init(
                    .invalidContents,
                    "is not a valid credentials file (\(what)). It was left untouched; fix it, or move it away to start afresh."
                ))
        }
        // Strict JSON first (RFC 8259, AuthKit's own parser): Foundation's
        // decoder takes a trailing comma and a byte-order mark, and of a
        // member given twice keeps the first, where an editor, `jq` or
        // Python keep the last. A file with `"credentials"` twice showed no
        // credentials, and the next save replaced the ones the user saw.
        do {
            _ = try JSONParser.parse(data, repeatedNames: .refused)
        } catch let failure as JSONParser.Failure {
            let issue = DescriptorLoader.issue(failure, in: data, file: path)
            throw invalid(issue.field.isEmpty ? issue.problem : "\(issue.field) \(issue.problem)")
        }
        do {
            let file = try JSONDecoder.credentials.decode(CredentialFile.self, from: data)
            guard file.version >= 1 else {
                throw invalid(
                    "version: \(file.version) is no format version; AuthKit writes \(CredentialFile.currentVersion)")
            }
            warnAboutRepeatedAccounts(in: file.credentials)
            return file
        } catch let error as AuthKitError {
            throw error
        } catch let newer as CredentialFile.NewerVersion {
            throw AuthKitError.store(
                path: path,
                reason: .init(
                    .invalidContents,
                    "was written by a newer AuthKit (format version \(newer.version)); upgrade AuthKit to use it. It was left untouched."
                ))
        } catch {
            // The JSON is well formed (checked above): what is wrong is named by field.
            throw invalid(DescriptorLoader.reason(error))
        }
    }

    /// Writes `file` as the current version, its credentials in order, whole
    /// (``AtomicFile``).
    ///
    /// A file this store would refuse to read (``readFile()``: past
    /// ``largestFile``, or nested past ``JSONParser/maximumDepth``) is not
    /// written: nothing on disk changes, and the error names the credential
    /// being saved. Written, one credential too large or too deep (a
    /// provider's answer kept whole, before ``KeptMembers``) made every
    /// credential in the file unreadable, and the advice ("move it away")
    /// lost them all.
    private func write(_ file: CredentialFile, saving key: CredentialKey? = nil) throws {
        let data = try JSONEncoder.credentials.encode(
            CredentialFile(entries: file.entries, otherMembers: file.otherMembers))
        if let problem = Self.unreadableProblem(data) {
            let culprit = key.map { "with the credential for \($0), " } ?? ""
            throw AuthKitError.store(
                path: path,
                reason: .init(
                    .notSaved,
                    """
                    \(Self.notSavedReason)\(culprit)the file would \(problem), and could not be read back. It was \
                    left as it was. What a credential holds beside its tokens (its rawFields and identity claims) is \
                    what grows: save one that holds less, or remove credentials no longer needed.
                    """))
        }
        // Where others can write, the file written could be replaced or
        // removed by them, and it would be refused at the next read: a first
        // save, with no file to check yet, went ahead with a warning. Said
        // here for every save and removal, not only by ``checkWritable()``.
        if let problem = FileSystem.foreignWriteProblem(
            inDirectory: directory.path, harm: Self.plantedHarm,
            refusal: "nothing is saved there", allowingSticky: false, ancestors: true)
        {
            throw AuthKitError.store(path: path, reason: .init(.writableByOthers, problem))
        }
        do {
            try AtomicFile(path: path).replace(with: data)
        } catch {
            // Named by the store's own path (not the temporary copy's, which
            // is gone by the time anyone reads the message), with the
            // system's reason and what became of the file: nothing.
            throw AuthKitError.store(
                path: path,
                reason: .init(
                    .notSaved, "\(Self.notSavedReason)\(error.what) (\(error.reason)). The file was left as it was."))
        }
    }

    /// How the reason of a failed save begins, also of a directory that
    /// cannot be made or written (a read-only file system): the command line
    /// tells these (exit 74) from a damaged file (65) by it.
    package static let notSavedReason = "could not be saved: "

    /// `directory`, made `0700` when missing; a file in its place is refused.
    /// Also where the keyring store keeps its lock files.
    package static func ensurePrivateDirectory(_ directory: URL) throws {
        if FileManager.default.fileExists(atPath: directory.path) {
            guard FileSystem.isDirectory(directory.path) else {
                throw AuthKitError.store(
                    path: directory.path, reason: .init(.notARegularFile, "exists but is not a directory."))
            }
            return
        }
        do {
            try FileSystem.createPrivateDirectory(directory.path)
        } catch {
            throw AuthKitError.store(
                path: directory.path,
                reason: .init(
                    .notSaved, "\(notSavedReason)this directory cannot be created (\(DescriptorLoader.reason(error))).")
            )
        }
    }

    /// The largest credentials file read.
    static let largestFile = 64 << 20

    /// Why `data` would not be read back (``readFile()``), or `nil`: the
    /// same size cap and the same parser.
    static func unreadableProblem(_ data: Data) -> String? {
        if data.count > largestFile {
            return "be \(data.count) bytes, more than the \(largestFile >> 20) MiB a credentials file is read up to"
        }
        do {
            _ = try JSONParser.parse(data, repeatedNames: .refused)
        } catch let failure as JSONParser.Failure {
            return failure.reason == JSONParser.nestedTooDeeply
                ? "nest deeper than the \(JSONParser.maximumDepth) levels a credentials file is read to"
                : "not be valid JSON (\(failure.reason) at byte \(failure.offset))"
        } catch {
            return "not be valid JSON"
        }
        return nil
    }

    /// A file edited by hand (or merged from two machines) may hold one
    /// account twice: the first is used, silently before, though the other
    /// may be the newer one. Said once per process; the next save for that
    /// account keeps only what it saves.
    private func warnAboutRepeatedAccounts(in credentials: [Credential]) {
        guard credentials.count > 1 else { return }
        var seen = Set<CredentialKey>()
        for credential in credentials where !seen.insert(credential.key).inserted {
            let warning =
                "\(path) holds more than one credential for \(credential.key); the first is used. Sign in again (which keeps one), or remove the other in an editor."
            if Self.warned.withLock({ $0.insert(warning).inserted }) { logger.warning("\(warning)") }
        }
    }

    /// How long a read or a save waits for the store's lock (set shorter by tests).
    package var lockTimeout: Duration = .seconds(30)

    /// Runs `body` holding the store's lock (``StoreLock``), shared by every
    /// process using this file, waiting as a task, not a thread
    /// (``StoreLock/withLockWaitingAsTask(_:)``): every wait is, since a
    /// thread blocked for the lock's timeout is one of the pool's few.
    private func withLockWaitingAsTask<Result>(_ body: () throws -> Result) async throws -> Result {
        try ensureDirectory()
        return try await StoreLock(path: path + ".lock", timeout: lockTimeout).withLockWaitingAsTask(body)
    }

    /// A directory this process cannot write to (its mode, a read-only
    /// mount) is said as a store that cannot be saved (exit 74 in the CLI).
    private func checkDirectoryWritable() throws {
        guard access(directory.path, W_OK) == 0 else {
            throw AuthKitError.store(
                path: directory.path,
                reason: .init(
                    .notSaved,
                    "\(Self.notSavedReason)this directory is not writable (\(String(cString: strerror(errno))))."))
        }
    }

    private func ensureDirectory() throws {
        try Self.ensurePrivateDirectory(directory)
        warnAboutPermissions()
    }

    /// ``permissionWarnings()`` logged, each once per process.
    private func warnAboutPermissions() {
        for warning in permissionWarnings()
        where Self.warned.withLock({ $0.insert(warning).inserted }) {
            logger.warning("\(warning)")
        }
    }

    /// Set while ``CredentialSource`` removes a credential under the
    /// refresh lock: ``checkWritable()`` then asks for no free space.
    @TaskLocal package static var removing = false

    /// What someone else who could write the store could do: put their own
    /// account's tokens in it, so that the user's requests (and what they
    /// upload) go to that account. Completes "who could make it …".
    private static let plantedHarm = "sign you in to someone else's account"

    /// Warnings already given by this process: a sign-in touches the store three
    /// times (check, sign-in lock, save), and one problem is said once.
    private static let warned = LockedValue<Set<String>>([])
}

extension JSONEncoder {
    /// How credentials are written (dates to the whole second, as ISO 8601).
    package static var credentials: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        encoder.dateEncodingStrategy = .iso8601
        return encoder
    }
}

extension JSONDecoder {
    package static var credentials: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }
}
