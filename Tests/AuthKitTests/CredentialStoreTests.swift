import AuthKitTestSupport
import Foundation
import Testing

@testable import AuthKit

@Suite struct CredentialStoreTests {
    func temporaryHome() throws -> URL {
        TemporaryDirectory.url("authkit-store").appendingPathComponent("home")
    }

    func mode(_ path: String) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        return (attributes[.posixPermissions] as? NSNumber)?.intValue ?? -1
    }

    func credential(_ provider: String, _ label: String? = nil, token: String = "token") -> Credential {
        Credential(providerID: provider, label: label, accessToken: token, obtainedAt: fixedNow)
    }

    /// A refresh that finds the store lock held (a process stopped while
    /// holding it) waits as a task: cancelled, it ends at once. Its check
    /// that the store can be written waited with the thread blocked, until
    /// the lock's timeout, then said "busy" (each such refresh held one of
    /// the pool's threads, a thread per core, for that long).
    @Test func aRefreshWaitingForTheStoreLockEndsWhenCancelled() async throws {
        let home = try temporaryHome()
        defer { try? FileManager.default.removeItem(at: home.deletingLastPathComponent()) }
        var store = FileCredentialStore(environment: ["AUTHKIT_HOME": home.path])
        // Long: the wait must still be under way when it is cancelled, however
        // slowly this test is run; cancelled, it ends at once.
        store.lockTimeout = .seconds(60)
        try await store.save(credential("qiita"))
        let held = open(store.fileURL.path + ".lock", O_RDWR | O_CLOEXEC)
        #expect(held >= 0 && flock(held, LOCK_EX) == 0)
        defer { close(held) }
        let waiting = Task { [store] in
            try await store.withRefreshLock(for: CredentialKey(providerID: "qiita"), timeout: .seconds(60)) {}
        }
        // Cancelled once it waits for the file's lock (a cancellation before
        // that would end the wait before it began, passing by luck).
        try await Self.untilTheStoreLockIsWaitedFor(store)
        waiting.cancel()
        await #expect(throws: AuthKitError.cancelled) { try await waiting.value }
    }

    /// Two stores of one process reaching one directory by two paths (a
    /// link) wait in one queue for an account's refresh lock: keyed by the
    /// path as given, each took the file's lock, which on NFS (`flock` made
    /// of the process's `fcntl` locks) both held at once, and the first to
    /// close released it for other processes too.
    @Test func aRefreshLockReachedByTwoPathsIsOneQueue() async throws {
        let home = try temporaryHome()
        defer { try? FileManager.default.removeItem(at: home.deletingLastPathComponent()) }
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        chmod(home.path, 0o700)
        let link = home.deletingLastPathComponent().appendingPathComponent("link")
        try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: home.path)
        let direct = FileCredentialStore(file: home.appendingPathComponent("credentials.json"))
        let linked = FileCredentialStore(file: link.appendingPathComponent("credentials.json"))
        let key = CredentialKey(providerID: "qiita")
        let lockPath = link.appendingPathComponent(".refresh-\(FileCredentialStore.fileName(for: key)).lock").path
        let queue = StoreLock.queueKey(for: lockPath)
        #expect(queue.hasPrefix(home.path), "\(queue)")
        let release = AsyncStream<Void>.makeStream()
        let holder = Task {
            try await direct.withRefreshLock(for: key, timeout: .seconds(30)) {
                for await _ in release.stream { break }
            }
        }
        let end = ContinuousClock.now.advanced(by: .seconds(30))
        while await KeyedAsyncLock.shared.holders(of: queue) == 0, ContinuousClock.now < end {
            try await Task.sleep(for: .milliseconds(10))
        }
        let second = Task { try await linked.withRefreshLock(for: key, timeout: .seconds(30)) { 2 } }
        while await KeyedAsyncLock.shared.waiting(for: queue) == 0, ContinuousClock.now < end {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(await KeyedAsyncLock.shared.waiting(for: queue) == 1, "the linked store did not queue")
        release.continuation.yield()
        release.continuation.finish()
        try await holder.value
        #expect(try await second.value == 2)
    }

    /// Returns once a task of this process holds `store`'s in-process lock,
    /// so waits for the lock file (held elsewhere); at most 30 s (the suite
    /// runs 24 tests at once on two cores: a 5 s look missed a wait that
    /// began and timed out while this task was not run).
    static func untilTheStoreLockIsWaitedFor(_ store: FileCredentialStore) async throws {
        let key = StoreLock(path: store.fileURL.path + ".lock", timeout: .zero).queueKey
        let end = ContinuousClock.now.advanced(by: .seconds(30))
        while await KeyedAsyncLock.shared.holders(of: key) == 0, ContinuousClock.now < end {
            try await Task.sleep(for: .milliseconds(10))
        }
        try #require(await KeyedAsyncLock.shared.holders(of: key) == 1, "no task came to wait for the lock")
    }

    /// Only a store that is not there reads as empty. One that cannot be
    /// reached (a directory that cannot be searched, as after `sudo
    /// authkit`; here, a link looping on itself) read as "nothing stored",
    /// and a command asked to sign in again instead of saying why.
    @Test func aStoreThatCannotBeReachedIsAnErrorNotEmpty() async throws {
        let home = try temporaryHome()
        defer { try? FileManager.default.removeItem(at: home.deletingLastPathComponent()) }
        let loop = home.deletingLastPathComponent().appendingPathComponent("loop")
        try FileManager.default.createDirectory(at: home.deletingLastPathComponent(), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: loop.path, withDestinationPath: loop.path)
        let store = FileCredentialStore(environment: ["AUTHKIT_HOME": loop.path])
        await #expect {
            _ = try await store.credential(for: CredentialKey(providerID: "qiita"))
        } throws: { error in
            guard case .store(let path, _)? = error.authKitReason else { return false }
            return path == store.fileURL.path
        }
        // Not there at all: nothing stored.
        let absent = FileCredentialStore(environment: ["AUTHKIT_HOME": home.appendingPathComponent("none").path])
        #expect(try await absent.allCredentials().isEmpty)
    }

    /// A lock file left another user's (root's, after `sudo authkit`) or a
    /// file system without locks said only "Permission denied" or "No locks
    /// available": now whose it is and what to do.
    @Test func aLockThatCannotBeTakenSaysWhyAndWhatToDo() throws {
        let home = try temporaryHome().appendingPathComponent("it's here")
        defer { try? FileManager.default.removeItem(at: home.deletingLastPathComponent().deletingLastPathComponent()) }
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        let lock = home.appendingPathComponent(".refresh-qiita.lock").path
        #expect(FileManager.default.createFile(atPath: lock, contents: nil))
        // A user's process meeting root's lock file (the test runs as root or
        // not: the owner is read from the file, the user given).
        var info = stat()
        #expect(lstat(lock, &info) == 0)
        let opening = RefreshLockFile.refusal(opening: lock, errno: EACCES, user: 1000)
        if info.st_uid == 0 {
            #expect(opening.contains("is root's") && opening.contains(#"sudo chown -R 1000 '"#), "\(opening)")
            #expect(opening.contains(#"it'\''s here"#), "the path is quoted for the shell: \(opening)")
        } else {
            #expect(!opening.contains("chown"), "\(opening)")
        }
        // A lock file with another name too (a hard link to a system file,
        // made where others could write): no chown of it is advised.
        #expect(link(lock, home.appendingPathComponent("elsewhere").path) == 0)
        let linked = RefreshLockFile.refusal(opening: lock, errno: EACCES, user: 1000)
        #expect(!linked.contains("chown"), "\(linked)")
        #expect(RefreshLockFile.refusal(locking: ENOLCK).contains("NFS"))
    }

    #if os(Linux)
        /// A save to a store on a read-only file system is `.notSaved` (what
        /// docs/errors.md tells a caller to catch for a disk full or
        /// read-only), not `.inaccessible`: the lock file, opened first,
        /// failed with EROFS and was reported as a store that cannot be
        /// opened. Root only (mount(2)).
        @Test(.enabled(if: getuid() == 0, "mounting a file system needs root"))
        func aSaveOnAReadOnlyFileSystemIsNotSaved() async throws {
            let home = try temporaryHome()
            defer { try? FileManager.default.removeItem(at: home.deletingLastPathComponent()) }
            try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
            try #require(
                mount("tmpfs", home.path, "tmpfs", UInt(MS_RDONLY), "size=64k,mode=700") == 0,
                "mount: \(String(cString: strerror(errno)))")
            defer { _ = umount2(home.path, Int32(MNT_DETACH)) }
            let store = FileCredentialStore(environment: ["AUTHKIT_HOME": home.path])
            await #expect {
                try await store.save(credential("qiita"))
            } throws: { error in
                guard case .store(_, .notSaved(let detail))? = error.authKitReason else { return false }
                return detail.contains("Read-only file system")
            }
        }
    #endif

    /// `allCredentials()` lists by provider, then label, as the protocol
    /// says, whatever order the file holds them in (one edited by hand).
    @Test func aFileInAnotherOrderIsListedSorted() async throws {
        let home = try temporaryHome()
        defer { try? FileManager.default.removeItem(at: home.deletingLastPathComponent()) }
        let store = FileCredentialStore(environment: ["AUTHKIT_HOME": home.path])
        for id in ["github", "qiita"] { try await store.save(credential(id)) }
        let data = try Data(contentsOf: store.fileURL)
        var object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let entries = try #require(object["credentials"] as? [Any])
        object["credentials"] = Array(entries.reversed())
        try JSONSerialization.data(withJSONObject: object).write(to: store.fileURL)
        #expect(try await store.allCredentials().map(\.providerID) == ["github", "qiita"])
    }

    @Test func createsPrivateDirectoryAndFile() async throws {
        let home = try temporaryHome()
        defer { try? FileManager.default.removeItem(at: home.deletingLastPathComponent()) }
        let store = FileCredentialStore(environment: ["AUTHKIT_HOME": home.path])
        #expect(store.fileURL.path == home.appendingPathComponent("credentials.json").path)
        try await store.save(credential("qiita"))
        #expect(try mode(home.path) == 0o700)
        #expect(try mode(store.fileURL.path) == 0o600)
        #expect(store.permissionWarnings().isEmpty)

        chmod(store.fileURL.path, 0o644)
        let warnings = store.permissionWarnings()
        #expect(warnings.count == 1)
        #expect(warnings.first?.contains("chmod 600") == true)
    }

    /// A link or a directory in the file's place is refused when read, and
    /// gets no `chmod` advice: `chmod` follows the link, so the advice for a
    /// `credentials.json` linked to `/etc/passwd` would have changed that file.
    @Test func noChmodAdviceForALinkOrADirectoryInTheFilesPlace() async throws {
        let home = try temporaryHome()
        defer { try? FileManager.default.removeItem(at: home.deletingLastPathComponent()) }
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        chmod(home.path, 0o700)
        let store = FileCredentialStore(environment: ["AUTHKIT_HOME": home.path])
        // A whole credentials file, which would read if the link were followed.
        let elsewhere = home.deletingLastPathComponent().appendingPathComponent("elsewhere")
        let other = FileCredentialStore(environment: ["AUTHKIT_HOME": elsewhere.path])
        try await other.save(credential("qiita"))
        let target = other.fileURL
        chmod(target.path, 0o644)
        try FileManager.default.createSymbolicLink(atPath: store.fileURL.path, withDestinationPath: target.path)
        #expect(store.permissionWarnings().isEmpty)
        await #expect {
            try await store.allCredentials()
        } throws: { error in
            guard case .store(_, let reason)? = error.authKitReason else { return false }
            return reason.detail.contains("is a symbolic link")
        }
        #expect(try mode(target.path) == 0o644)

        try FileManager.default.removeItem(at: store.fileURL)
        try FileManager.default.createDirectory(at: store.fileURL, withIntermediateDirectories: false)
        chmod(store.fileURL.path, 0o755)
        #expect(store.permissionWarnings().isEmpty)
        // The directory holding the store still gets its advice.
        chmod(home.path, 0o755)
        #expect(
            store.permissionWarnings() == [
                "\(home.path) is accessible by other users (mode 755); run: chmod 700 '\(home.path)'"
            ])
        // A path with a quote in it gets a command a shell runs as written:
        // `'/…/it's here'` was cut at the quote.
        let quoted = home.appendingPathComponent("it's here")
        try FileManager.default.createDirectory(at: quoted, withIntermediateDirectories: false)
        chmod(quoted.path, 0o755)
        let inside = FileCredentialStore(file: quoted.appendingPathComponent("credentials.json"))
        #expect(
            inside.permissionWarnings() == [
                "\(quoted.path) is accessible by other users (mode 755); run: chmod 700 '\(home.path)/it'\\''s here'"
            ])
    }

    /// The rule for provider files holds for the store: a file or directory
    /// someone else could have written is refused, for reading and saving,
    /// and left untouched; so is a sticky directory others can write (1777),
    /// where another user could create the store first. The user's own files pass.
    @Test func aStoreAnotherUserCouldHaveWrittenIsRefused() async throws {
        let home = try temporaryHome()
        defer { try? FileManager.default.removeItem(at: home.deletingLastPathComponent()) }
        let store = FileCredentialStore(environment: ["AUTHKIT_HOME": home.path])
        try await store.save(credential("qiita", token: "mine"))
        let saved = try Data(contentsOf: store.fileURL)
        func refusal(_ body: () async throws -> Void) async -> String? {
            do {
                try await body()
                return nil
            } catch let error as AuthKitError {
                guard case .store(let path, let reason) = error.reason else {
                    return "\(error)"
                }
                return path == store.fileURL.path ? reason.detail : "another path: \(path)"
            } catch { return "\(error)" }
        }

        chmod(store.fileURL.path, 0o646)
        // The kind a caller switches on, beside the words.
        await #expect {
            _ = try await store.allCredentials()
        } throws: { error in
            guard case .store(_, let reason)? = error.authKitReason else { return false }
            return reason.kind == .writableByOthers
        }
        #expect(
            await refusal { _ = try await store.allCredentials() }
                == "every user can write to it (mode 0646), and so make it sign you in to someone else's account; it is not read. Run: chmod go-w '\(store.fileURL.path)'"
        )
        #expect(await refusal { try await store.save(credential("github")) } != nil)
        #expect(await refusal { _ = try await store.remove(CredentialKey(providerID: "qiita")) } != nil)
        #expect(await refusal { try await store.checkWritable() } != nil)
        #expect(try Data(contentsOf: store.fileURL) == saved, "a refused store is never rewritten")
        chmod(store.fileURL.path, 0o600)
        #expect(try await store.allCredentials().map(\.accessToken) == ["mine"])

        chmod(home.path, 0o777)
        #expect(
            await refusal { _ = try await store.allCredentials() }?.hasPrefix(
                "every user can write to its directory \(home.path) (mode 0777)") == true)
        chmod(home.path, 0o1777)
        #expect(
            await refusal { _ = try await store.allCredentials() }?.hasPrefix(
                "every user can write to its directory \(home.path) (mode 1777)") == true,
            "a sticky directory is no defence for the store's own directory")
        #expect(await refusal { try await store.checkWritable() } != nil)

        // No store yet: a sign-in is refused before it starts rather than
        // saving where others could replace the result.
        chmod(home.path, 0o777)
        try FileManager.default.removeItem(at: store.fileURL)
        #expect(
            await refusal { try await store.checkWritable() }?.contains(
                "nothing is saved there. Run: chmod go-w '\(home.path)'") == true)
        // Nor does a library's save, which checks nothing first: it wrote
        // the file there with a warning, and every read then refused it.
        #expect(
            await refusal { try await store.save(credential("github")) }?.contains(
                "nothing is saved there. Run: chmod go-w '\(home.path)'") == true)
        #expect(!FileManager.default.fileExists(atPath: store.fileURL.path), "nothing written where others can write")
        chmod(home.path, 0o700)
        try await store.checkWritable()

        if geteuid() == 0 { // only root can give a file away
            try await store.save(credential("qiita", token: "mine"))
            #expect(chown(store.fileURL.path, 4242, gid_t.max) == 0)
            #expect(
                await refusal { _ = try await store.allCredentials() }?.hasPrefix("belongs to another user (uid 4242)")
                    == true)
        }
    }

    /// Every directory above the store is held to the rule too (OpenSSH's
    /// for `authorized_keys`): whoever can rename entries in one could put
    /// another tree, with their own credentials, in the store's place.
    /// Sticky directories such as /tmp stay usable.
    @Test func aStoreUnderADirectoryOthersCanRenameInIsRefused() async throws {
        let home = try temporaryHome().appendingPathComponent("inner")
        let outer = home.deletingLastPathComponent()
        defer { try? FileManager.default.removeItem(at: outer.deletingLastPathComponent()) }
        let store = FileCredentialStore(environment: ["AUTHKIT_HOME": home.path])
        try await store.save(credential("qiita", token: "mine"))
        chmod(outer.path, 0o777)
        await #expect {
            _ = try await store.allCredentials()
        } throws: { error in
            guard case .store(_, let reason)? = error.authKitReason else { return false }
            return reason.kind == .writableByOthers
                && reason.detail.hasPrefix("every user can write to its directory \(outer.path) (mode 0777)")
        }
        // Checked before a sign-in too, with or without a file yet.
        await #expect(throws: AuthKitError.self) { try await store.checkWritable() }
        chmod(outer.path, 0o1777)
        #expect(try await store.allCredentials().map(\.accessToken) == ["mine"])
        try await store.checkWritable()
        chmod(outer.path, 0o755)
        if geteuid() == 0 {
            #expect(chown(outer.path, 4242, gid_t.max) == 0)
            await #expect {
                _ = try await store.allCredentials()
            } throws: { error in
                "\(error)".contains("is in \(outer.path), which belongs to another user (uid 4242)")
            }
            #expect(chown(outer.path, 0, 0) == 0)
        }
    }

    /// The owner and mode checked are those of the file that was opened
    /// (its descriptor's status), not of whatever the path names when the
    /// check runs: a directory another user can rename entries in could
    /// otherwise show the check one file and the read another.
    @Test(.enabled(if: geteuid() == 0, "chown needs root"))
    func theFileCheckedIsTheFileRead() throws {
        let folder = TemporaryDirectory.url("authkit-opened")
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let mine = folder.appendingPathComponent("mine.json")
        let theirs = folder.appendingPathComponent("theirs.json")
        try Data("{}".utf8).write(to: mine)
        try Data("{}".utf8).write(to: theirs)
        chmod(folder.path, 0o700)
        #expect(chown(theirs.path, 4242, gid_t.max) == 0)
        var opened = stat()
        #expect(stat(theirs.path, &opened) == 0)
        #expect(FileSystem.foreignWriteProblem(at: mine.path) == nil)
        #expect(
            FileSystem.foreignWriteProblem(at: mine.path, opened: opened)?.hasPrefix(
                "belongs to another user (uid 4242)") == true)
    }

    @Test func saveLoadReplaceRemove() async throws {
        let home = try temporaryHome()
        defer { try? FileManager.default.removeItem(at: home.deletingLastPathComponent()) }
        let store = FileCredentialStore(environment: ["AUTHKIT_HOME": home.path])
        #expect(try await store.allCredentials().isEmpty)
        try await store.save(credential("qiita", token: "one"))
        try await store.save(credential("qiita", "work", token: "two"))
        try await store.save(credential("github", token: "three"))
        try await store.save(credential("qiita", token: "four")) // replaces "one"
        let all = try await store.allCredentials()
        #expect(all.map(\.accessToken) == ["three", "four", "two"])
        #expect(
            try await store.credential(for: CredentialKey(providerID: "qiita", label: "work"))?.accessToken == "two")
        #expect(try await store.remove(CredentialKey(providerID: "qiita"))?.accessToken == "four")
        #expect(try await store.remove(CredentialKey(providerID: "qiita")) == nil)
        #expect(try await store.allCredentials().count == 2)
        // A second store instance (another process, in effect) reads the same data.
        let again = FileCredentialStore(file: store.fileURL)
        #expect(try await again.allCredentials().map(\.accessToken) == ["three", "two"])
    }

    /// The contract every store meets (AuthKitTestSupport), for the file
    /// store (two instances over one file) and the in-memory one.
    @Test func theStoresMeetTheContract() async throws {
        let home = try temporaryHome()
        defer { try? FileManager.default.removeItem(at: home.deletingLastPathComponent()) }
        let file = FileCredentialStore(environment: ["AUTHKIT_HOME": home.path])
        try await checkCredentialStoreContract(file, sameData: FileCredentialStore(file: file.fileURL))
        try await checkCredentialStoreContract(InMemoryCredentialStore())
    }

    /// An empty label is the default account, however it arrives: given to a
    /// key or a credential, set later, or read from a file an earlier library
    /// wrote with `"label": ""`. Before, it filed a second account that
    /// looked like the default one and that `--label ''` (refused) could not
    /// reach from the command line.
    @Test func anEmptyLabelIsTheDefaultAccount() async throws {
        #expect(CredentialKey(providerID: "qiita", label: "") == CredentialKey(providerID: "qiita"))
        #expect(Set([CredentialKey(providerID: "qiita", label: ""), CredentialKey(providerID: "qiita")]).count == 1)
        var key = CredentialKey(providerID: "qiita", label: "work")
        key.label = ""
        #expect(key.label == nil)
        var changed = credential("qiita", "work")
        changed.label = ""
        #expect(changed.label == nil && changed == credential("qiita"))

        let home = try temporaryHome()
        defer { try? FileManager.default.removeItem(at: home.deletingLastPathComponent()) }
        let store = FileCredentialStore(environment: ["AUTHKIT_HOME": home.path])
        try await store.save(credential("qiita", "", token: "empty"))
        #expect(try await store.credential(for: CredentialKey(providerID: "qiita"))?.accessToken == "empty")
        try await store.save(credential("qiita", token: "default"))
        #expect(try await store.allCredentials().map(\.accessToken) == ["default"])

        // A file written with an empty label, as an earlier library could.
        let file = try String(contentsOf: store.fileURL, encoding: .utf8)
        #expect(!file.contains("\"label\""))
        try file.replacingOccurrences(of: "\"providerID\"", with: "\"label\" : \"\", \"providerID\"")
            .write(to: store.fileURL, atomically: true, encoding: .utf8)
        chmod(store.fileURL.path, 0o600)
        #expect(try String(contentsOf: store.fileURL, encoding: .utf8).contains("\"label\" : \"\""))
        let read = try await store.credential(for: CredentialKey(providerID: "qiita"))
        #expect(read?.accessToken == "default" && read?.label == nil)
        #expect(try await store.remove(CredentialKey(providerID: "qiita"))?.accessToken == "default")
        #expect(try await store.allCredentials().isEmpty)
    }

    /// Dates the calendar has pass, whatever their form (a leap day, an
    /// offset, a fraction); ones it has not are named by the part out of range.
    @Test func aStoredDateIsCheckedAgainstTheCalendar() {
        for good in [
            "2024-02-29T23:59:59Z", "2026-12-31T00:00:00-09:30", "2026-11-24T10:00:00.5Z", "2000-02-29T00:00:00+23:59",
            "tomorrow",
        ] {
            #expect(StoredDate.problem(good) == nil, "\(good)")
        }
        for (bad, said) in [
            ("2026-02-29T00:00:00Z", "has day 29 of a month with 28 days"),
            ("1900-02-29T00:00:00Z", "has day 29 of a month with 28 days"),
            ("2026-04-31T00:00:00Z", "has day 31 of a month with 30 days"),
            ("2026-00-10T00:00:00Z", "has month 0; months run 1–12"),
            ("2026-11-24T24:00:00Z", "has hour 24; hours run 0–23"),
            ("2026-11-24T10:60:00Z", "has minute 60; minutes run 0–59"),
            ("2026-11-24T10:00:60Z", "has second 60; seconds run 0–59"),
            ("2026-11-24T10:00:00.25-00:60", "has the offset -00:60"),
        ] {
            #expect(StoredDate.problem(bad)?.hasPrefix(said) == true, "\(bad): \(StoredDate.problem(bad) ?? "nil")")
        }
    }

    /// A credentials file edited by hand is reported by field, in the
    /// file's terms: an unknown `kind` said "Cannot initialize ProtocolKind
    /// from invalid String value", and a date that does not parse named only
    /// `credentials[0]`.
    @Test func aBadFieldInTheFileIsNamedInItsTerms() async throws {
        let home = try temporaryHome()
        defer { try? FileManager.default.removeItem(at: home.deletingLastPathComponent()) }
        let store = FileCredentialStore(environment: ["AUTHKIT_HOME": home.path])
        try await store.save(credential("qiita"))
        let good = try String(contentsOf: store.fileURL, encoding: .utf8)
        for (from, to, expected) in [
            ("\"oauth2\"", "\"oauth9\"", "credentials[0].kind: unknown protocol; use \"oauth2\" or \"oauth1\"."),
            (
                "\"obtainedAt\" : \"", "\"expiresAt\" : \"tomorrow\", \"obtainedAt\" : \"",
                "credentials[0].expiresAt: is not a date and time in ISO 8601 form"
            ),
            // Rolled over by the parser (Feb 30 read as 2 March) and written back so.
            (
                "\"obtainedAt\" : \"", "\"expiresAt\" : \"2026-02-30T10:00:00Z\", \"obtainedAt\" : \"",
                "credentials[0].expiresAt: has day 30 of a month with 28 days, a date the calendar does not have"
            ),
            (
                "\"obtainedAt\" : \"", "\"expiresAt\" : \"2026-11-24T25:00:00+09:00\", \"obtainedAt\" : \"",
                "credentials[0].expiresAt: has hour 25; hours run 0–23"
            ),
            (
                "\"obtainedAt\" : \"", "\"expiresAt\" : \"2026-11-24T10:00:00+24:00\", \"obtainedAt\" : \"",
                "credentials[0].expiresAt: is not a date and time in ISO 8601 form"
            ),
        ] {
            #expect(good.contains(from))
            try good.replacingOccurrences(of: from, with: to).write(
                to: store.fileURL, atomically: false, encoding: .utf8)
            await #expect {
                _ = try await store.allCredentials()
            } throws: { error in
                guard case .store(_, let reason)? = error.authKitReason else { return false }
                return reason.detail.contains(expected) && !reason.detail.contains("ProtocolKind")
            }
        }
    }

    /// The file is read as strict JSON before it is decoded. Foundation's
    /// decoder kept the first of a member given twice (an editor, `jq` and
    /// Python show the last): with `"credentials"` twice, the store read as
    /// empty and the next save replaced the credentials the user could see.
    /// It also took a trailing comma and a byte-order mark, and reported a
    /// format version that is no `Int` as "not valid JSON", naming no field;
    /// version 0 and -1 were read, and rewritten as 1.
    @Test func aFileReadersDisagreeOnIsRefusedAndKept() async throws {
        let home = try temporaryHome()
        defer { try? FileManager.default.removeItem(at: home.deletingLastPathComponent()) }
        let store = FileCredentialStore(environment: ["AUTHKIT_HOME": home.path])
        try await store.save(credential("qiita"))
        let good = try String(contentsOf: store.fileURL, encoding: .utf8)
        let entry = try #require(good.range(of: "\"credentials\" : ").map { good[$0.upperBound...] }?.dropLast(2))
        let cases: [(String, String)] = [
            (
                "{\n\"credentials\" : [],\n\"credentials\" : \(entry),\n\"version\" : 1\n}",
                "credentials is given twice (lines 2 and 3). JSON readers disagree"
            ),
            ("{\"version\" : 1, \"credentials\" : \(entry), \"version\" : 2}", "version is given twice (lines 1 and"),
            (
                good.replacingOccurrences(
                    of: "\"accessToken\" : \"token\"", with: "\"accessToken\" : \"first\", \"accessToken\" : \"token\""),
                "credentials[0].accessToken is given twice"
            ),
            (good.replacingOccurrences(of: "\"version\" : 1", with: "\"version\" : 1,"), "is not valid JSON: line"),
            ("\u{FEFF}" + good, "byte-order mark"),
            (
                good.replacingOccurrences(of: "\"version\" : 1", with: "\"version\" : 1.5"),
                "version: is not a format version"
            ),
            (
                good.replacingOccurrences(of: "\"version\" : 1", with: "\"version\" : 99999999999999999999"),
                "version: is not a format version"
            ),
            (
                good.replacingOccurrences(of: "\"version\" : 1", with: "\"version\" : 0"),
                "version: 0 is no format version"
            ),
            (
                good.replacingOccurrences(of: "\"version\" : 1", with: "\"version\" : -1"),
                "version: -1 is no format version"
            ),
        ]
        for (text, expected) in cases {
            #expect(text != good)
            try Data(text.utf8).write(to: store.fileURL)
            await #expect {
                try await store.save(credential("github"))
            } throws: { error in
                guard case .store(let path, let reason)? = error.authKitReason else { return false }
                return path == store.fileURL.path && reason.detail.contains(expected)
                    && reason.detail.contains("left untouched")
            }
            #expect(try Data(contentsOf: store.fileURL) == Data(text.utf8), "\(expected)")
        }
    }

    /// A file edited by hand may hold one account twice (the store warns and
    /// uses the first). Deleting the account removed only the first, said
    /// "Deleted", and the other copy was then the account's credential.
    @Test func removingAnAccountHeldTwiceRemovesBoth() async throws {
        let home = try temporaryHome()
        defer { try? FileManager.default.removeItem(at: home.deletingLastPathComponent()) }
        let store = FileCredentialStore(environment: ["AUTHKIT_HOME": home.path])
        try await store.save(credential("qiita", "work", token: "one"))
        try await store.save(credential("gitlab"))
        var document = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: store.fileURL)) as? [String: Any])
        var entries = try #require(document["credentials"] as? [[String: Any]])
        var copy = try #require(entries.first { $0["accessToken"] as? String == "one" })
        copy["accessToken"] = "two"
        entries.append(copy)
        document["credentials"] = entries
        try JSONSerialization.data(withJSONObject: document).write(to: store.fileURL)
        #expect(try await store.allCredentials().map(\.accessToken).sorted() == ["one", "token", "two"])
        let removed = try await store.remove(CredentialKey(providerID: "qiita", label: "work"))
        #expect(removed?.accessToken == "one")
        #expect(try await store.allCredentials().map(\.providerID) == ["gitlab"])
    }

    /// An empty file and one of white space alone are alike no credentials
    /// (the second was refused as "not a valid credentials file", the first
    /// read as empty); a save then writes the file whole.
    @Test func anEmptyOrBlankFileHoldsNoCredentials() async throws {
        let home = try temporaryHome()
        defer { try? FileManager.default.removeItem(at: home.deletingLastPathComponent()) }
        let store = FileCredentialStore(environment: ["AUTHKIT_HOME": home.path])
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        chmod(home.path, 0o700)
        for blank in ["", "   \n", "\r\n\t"] {
            try Data(blank.utf8).write(to: store.fileURL)
            chmod(store.fileURL.path, 0o600)
            #expect(try await store.allCredentials().isEmpty, "\(blank.debugDescription)")
            try await store.save(credential("qiita"))
            #expect(try await store.allCredentials().map(\.providerID) == ["qiita"])
        }
    }

    /// Many writers at once, each with its own file handle and lock (as separate
    /// processes would have): nothing is lost and the file always parses.
    @Test func concurrentWritersLoseNothing() async throws {
        let home = try temporaryHome()
        defer { try? FileManager.default.removeItem(at: home.deletingLastPathComponent()) }
        let file = home.appendingPathComponent("credentials.json")
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<8 {
                group.addTask {
                    let store = FileCredentialStore(file: file)
                    for index in 0..<15 {
                        try await store.save(
                            Credential(providerID: "p\(writer)", label: "n\(index)", accessToken: "t\(writer)-\(index)")
                        )
                    }
                }
            }
            try await group.waitForAll()
        }
        let all = try await FileCredentialStore(file: file).allCredentials()
        #expect(all.count == 8 * 15)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: home.path).filter { $0.hasSuffix(".tmp") }
        #expect(leftovers.isEmpty)
    }

    /// A save removes the copies its own file's writers left when killed
    /// (they hold tokens), and only those: every store's were named
    /// `.credentials.json.…`, so a second store in the same directory
    /// deleted the copy another was about to rename, and that save failed.
    @Test func aSaveRemovesOnlyItsOwnFilesAbandonedCopies() async throws {
        let home = try temporaryHome()
        defer { try? FileManager.default.removeItem(at: home.deletingLastPathComponent()) }
        try FileManager.default.createDirectory(
            at: home, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let names = [
            ".work.json.4242.AbCd-_12.tmp", ".personal.json.4242.AbCd-_12.tmp", ".work.json.x.4242.AbCd-_12.tmp",
            ".work.json.notes.tmp",
        ]
        for name in names { try Data("{}".utf8).write(to: home.appendingPathComponent(name)) }
        try await FileCredentialStore(file: home.appendingPathComponent("work.json")).save(
            Credential(providerID: "p", accessToken: "t"))
        let left = Set(try FileManager.default.contentsOfDirectory(atPath: home.path).filter { $0.hasSuffix(".tmp") })
        #expect(left == Set(names.dropFirst()), "\(left)")
    }

    /// The store's lock is held for milliseconds; one held for longer (a
    /// process stopped while holding it, a lock taken by hand) is named
    /// after the wait, not waited on until the command is killed.
    @Test func aStoreLockHeldForeverIsNamedAfterTheWait() async throws {
        let home = try temporaryHome()
        defer { try? FileManager.default.removeItem(at: home.deletingLastPathComponent()) }
        var store = FileCredentialStore(file: home.appendingPathComponent("credentials.json"))
        try await store.save(Credential(providerID: "p", accessToken: "t"))
        let holder = open(home.appendingPathComponent("credentials.json.lock").path, O_RDWR)
        defer { close(holder) }
        #expect(flock(holder, LOCK_EX) == 0)
        store.lockTimeout = .milliseconds(300)
        let started = Date()
        await #expect {
            _ = try await store.allCredentials()
        } throws: { error in
            "\(error)".contains("credentials.json.lock: has been held by another process for more than 300 ms")
                && "\(error)".contains("fuser")
        }
        // A hang check (held for ever otherwise), not a speed test: a loaded
        // CI run's 300 ms wait took 7.5 s, its timers late on a busy pool.
        #expect(Date().timeIntervalSince(started) < 30)
        // A waiting task that is cancelled stops waiting at once.
        store.lockTimeout = .seconds(60)
        let waiter = Task { [store] in try await store.allCredentials() }
        try await Self.untilTheStoreLockIsWaitedFor(store)
        let cancelled = ContinuousClock.now
        waiter.cancel()
        await #expect(throws: AuthKitError.cancelled) { _ = try await waiter.value }
        // Well before the 60 s it would wait otherwise (a busy pool's timers are seconds late).
        #expect(ContinuousClock.now - cancelled < .seconds(30))
        flock(holder, LOCK_UN)
        #expect(try await store.allCredentials().count == 1)
    }

    /// A lock file another user made (in a shared directory, mode 1777)
    /// could be held by them to stop every command: refused, naming it.
    /// Needs root, to give the file to another user.
    @Test(.enabled(if: getuid() == 0, "chown needs root"))
    func aLockFileOfAnotherUserIsRefused() async throws {
        let home = try temporaryHome()
        defer { try? FileManager.default.removeItem(at: home.deletingLastPathComponent()) }
        let store = FileCredentialStore(file: home.appendingPathComponent("credentials.json"))
        try await store.save(Credential(providerID: "p", accessToken: "t"))
        let lock = home.appendingPathComponent("credentials.json.lock").path
        #expect(chown(lock, 65534, 65534) == 0)
        await #expect {
            _ = try await store.allCredentials()
        } throws: { error in
            "\(error)".contains(
                "credentials.json.lock: is owned by another user (uid 65534), who could hold it to stop every command")
        }
    }

    /// A file far larger than any store (a sparse gigabyte) is refused by
    /// its size, not read whole into memory first.
    @Test func aFileLargerThanAnyStoreIsNotRead() async throws {
        let home = try temporaryHome()
        defer { try? FileManager.default.removeItem(at: home.deletingLastPathComponent()) }
        try FileManager.default.createDirectory(
            at: home, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let file = home.appendingPathComponent("credentials.json")
        #expect(
            FileManager.default.createFile(atPath: file.path, contents: nil, attributes: [.posixPermissions: 0o600]))
        #expect(truncate(file.path, 1 << 30) == 0)
        await #expect {
            _ = try await FileCredentialStore(file: file).allCredentials()
        } throws: { error in
            "\(error)".contains(
                "is 1073741824 bytes, more than the 64 MiB a credentials file could hold; it was not read")
        }
        #expect(try FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int == 1 << 30)
    }

    /// A save that would make a file the store refuses to read (nested past
    /// its parser's depth, or past its size cap) is refused before anything
    /// is written, naming the credential: written, it made every account
    /// in the file unreadable, and the advice to move the file away lost
    /// them all. (A provider's answer is bounded before it gets here:
    /// `HostileServerTests.anAnswerBuiltToBreakTheStoreLeavesItReadable`;
    /// a caller can still build such a credential.)
    @Test func aFileThatCouldNotBeReadBackIsNotWritten() async throws {
        let home = try temporaryHome()
        defer { try? FileManager.default.removeItem(at: home.deletingLastPathComponent()) }
        let store = FileCredentialStore(environment: ["AUTHKIT_HOME": home.path])
        try await store.save(credential("qiita"))
        let before = try Data(contentsOf: store.fileURL)
        var deep = JSONValue.array([])
        for _ in 0..<126 { deep = .array([deep]) }
        var hostile = credential("hostile", "work")
        hostile.rawFields = ["n": deep]
        await #expect {
            try await store.save(hostile)
        } throws: { error in
            guard case .store(let path, .notSaved(let detail))? = error.authKitReason else { return false }
            return path == store.fileURL.path && detail.contains("the credential for hostile (work)")
                && detail.contains("nest deeper than the 128 levels") && detail.contains("left as it was")
        }
        #expect(try Data(contentsOf: store.fileURL) == before)
        #expect(try await store.allCredentials().map(\.providerID) == ["qiita"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: home.path).allSatisfy { !$0.hasSuffix(".tmp") })
        // The size cap the reader has, checked before the parser.
        let problem = FileCredentialStore.unreadableProblem(Data(count: FileCredentialStore.largestFile + 1))
        #expect(problem?.contains("more than the 64 MiB a credentials file is read up to") == true)
        #expect(FileCredentialStore.unreadableProblem(try JSONEncoder.credentials.encode(hostile)) != nil)
        hostile.rawFields = [:]
        #expect(FileCredentialStore.unreadableProblem(try JSONEncoder.credentials.encode(hostile)) == nil)
    }

    @Test func corruptFileIsReportedAndLeftUntouched() async throws {
        let home = try temporaryHome()
        defer { try? FileManager.default.removeItem(at: home.deletingLastPathComponent()) }
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        let file = home.appendingPathComponent("credentials.json")
        let garbage = Data(#"{"version":1,"credentials":[{"providerID":"qiita","#.utf8)
        try garbage.write(to: file)
        let store = FileCredentialStore(file: file)
        await #expect {
            try await store.save(credential("github"))
        } throws: { error in
            guard case .store(let path, let reason)? = error.authKitReason else { return false }
            return path == file.path && reason.detail.contains("left untouched")
        }
        #expect(try Data(contentsOf: file) == garbage)
        await #expect(throws: AuthKitError.self) { try await store.allCredentials() }
    }

    @Test func fileFromANewerVersionIsNotOverwritten() async throws {
        let home = try temporaryHome()
        defer { try? FileManager.default.removeItem(at: home.deletingLastPathComponent()) }
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        let file = home.appendingPathComponent("credentials.json")
        let future = Data(#"{"version":99,"credentials":[]}"#.utf8)
        try future.write(to: file)
        await #expect(throws: AuthKitError.self) { try await FileCredentialStore(file: file).save(credential("x")) }
        #expect(try Data(contentsOf: file) == future)
    }

    /// A newer format may change its entries' shape too. They were decoded
    /// before the version was looked at, so such a file was "not a valid
    /// credentials file … move it away to start afresh": advice that loses
    /// every credential a newer AuthKit wrote, where the answer is to upgrade.
    @Test func aNewerFormatWithEntriesOfAnotherShapeSaysUpgradeNotMoveAway() async throws {
        let home = try temporaryHome()
        defer { try? FileManager.default.removeItem(at: home.deletingLastPathComponent()) }
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        chmod(home.path, 0o700)
        let file = home.appendingPathComponent("credentials.json")
        let future = Data(#"{"version":2,"credentials":[{"grant":{"provider":"github","tokens":{}}}]}"#.utf8)
        try future.write(to: file)
        let error = await #expect(throws: AuthKitError.self) {
            try await FileCredentialStore(file: file).allCredentials()
        }
        let message = String(describing: try #require(error))
        #expect(message.contains("newer AuthKit (format version 2)"), "\(message)")
        #expect(!message.contains("move it away"), "\(message)")
        #expect(try Data(contentsOf: file) == future)
    }

    /// A later AuthKit may add optional members (the format stays version
    /// 1, which an older version may read). An older `authkit` saving
    /// another account, or removing one, must write them back: before, it
    /// decoded what it knew and dropped the rest, top level and per
    /// credential. The credential it replaces is replaced whole.
    @Test func membersThisVersionDoesNotKnowAreKept() async throws {
        let home = try temporaryHome()
        defer { try? FileManager.default.removeItem(at: home.deletingLastPathComponent()) }
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        chmod(home.path, 0o700)
        let file = home.appendingPathComponent("credentials.json")
        let store = FileCredentialStore(file: file)
        try await store.save(credential("qiita"))
        var gitlabSaved = credential("gitlab")
        gitlabSaved.identity = Identity(issuer: "https://gitlab.example", subject: "42")
        try await store.save(gitlabSaved)
        func object(_ data: Data) throws -> [String: Any] {
            try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        }
        var document = try object(Data(contentsOf: file))
        document["syncedFrom"] = ["host": "laptop", "at": 1_700_000_000_123]
        var entries = try #require(document["credentials"] as? [[String: Any]])
        for index in entries.indices {
            entries[index]["boundKey"] = "key-of-\(entries[index]["providerID"]!)"
            entries[index]["flags"] = [true, NSNull(), 2.5]
            // Nested in a member this version knows: lost before at every
            // save of another account, the entry being re-encoded.
            if var identity = entries[index]["identity"] as? [String: Any] {
                identity["verifiedAt"] = "2027-01-01"
                entries[index]["identity"] = identity
            }
        }
        document["credentials"] = entries
        try JSONSerialization.data(withJSONObject: document).write(to: file)

        try await store.save(credential("github"))
        _ = try await store.remove(CredentialKey(providerID: "github"))
        try await store.save(credential("qiita", token: "renewed"))

        let kept = try object(Data(contentsOf: file))
        let synced = try #require(kept["syncedFrom"] as? [String: Any])
        #expect(synced["host"] as? String == "laptop")
        #expect((synced["at"] as? NSNumber)?.int64Value == 1_700_000_000_123)
        let stored = try #require(kept["credentials"] as? [[String: Any]])
        #expect(stored.map { $0["providerID"] as? String } == ["gitlab", "qiita"])
        let gitlab = stored[0]
        let qiita = stored[1]
        #expect(gitlab["boundKey"] as? String == "key-of-gitlab")
        #expect((gitlab["flags"] as? [Any])?.count == 3)
        #expect((gitlab["identity"] as? [String: Any])?["verifiedAt"] as? String == "2027-01-01")
        // Named, the nested one by its path: `token move` refuses to drop them.
        #expect(
            try await store.unknownMembers(of: CredentialKey(providerID: "gitlab"))
                == ["boundKey", "flags", "identity.verifiedAt"])
        #expect(try await store.unknownMembers(of: CredentialKey(providerID: "qiita")).isEmpty)
        #expect(qiita["accessToken"] as? String == "renewed")
        #expect(qiita["boundKey"] == nil)
        // What this version reads is unchanged by what it keeps.
        #expect(try await store.credential(for: CredentialKey(providerID: "gitlab")) == gitlabSaved)
    }

    /// The names the store reads as a credential's own are exactly those a
    /// credential is written with: a name missing from the list would be
    /// written twice, once as "unknown".
    @Test func aCredentialsOwnMemberNamesAreTheOnesItIsWrittenWith() throws {
        let full = Credential(
            providerID: "p", label: "l", isOAuth1: true, accessToken: "a", tokenType: "OAuth", refreshToken: "r",
            tokenSecret: "s", expiresAt: fixedNow, scopes: ["x"], obtainedAt: fixedNow, rawFields: ["k": .null],
            endpointOrigins: ["https://example.com"], refreshTokenExpiresAt: fixedNow,
            identity: Identity(issuer: "https://op.example", subject: "s"))
        var bound = full
        bound.proofKey = ProofKey()
        bound.grantType = "client_credentials"
        bound.grantParameters = [["audience", "https://api.example"]]
        bound.account = "octocat (583231)"
        let written = try #require(
            try JSONSerialization.jsonObject(with: JSONEncoder.credentials.encode(bound)) as? [String: Any])
        #expect(Set(written.keys) == Credential.memberNames)
    }

    /// A named pipe or a directory where the file should be: every command
    /// waited on the pipe for a writer that never came. Now each read and
    /// save is refused at once, naming what stands there and the fix, and
    /// nothing replaces it.
    @Test(.timeLimit(.minutes(1))) func somethingOtherThanAFileInItsPlaceIsRefusedAtOnce() async throws {
        let home = try temporaryHome()
        defer { try? FileManager.default.removeItem(at: home.deletingLastPathComponent()) }
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        let file = home.appendingPathComponent("credentials.json")
        func refusal(_ operation: () async throws -> Void) async -> String? {
            do {
                try await operation()
                return nil
            } catch let error as AuthKitError {
                guard case .store(let path, let reason) = error.reason, path == file.path else { return "\(error)" }
                return reason.detail
            } catch { return "\(error)" }
        }
        #expect(mkfifo(file.path, 0o600) == 0)
        let store = FileCredentialStore(file: file)
        let pipe =
            "is a named pipe, not a regular file; AuthKit keeps credentials only in a file. Move it aside; the next sign-in creates the file."
        #expect(await refusal { _ = try await store.allCredentials() } == pipe)
        #expect(await refusal { try await store.save(credential("github")) } == pipe)
        var info = stat()
        #expect(stat(file.path, &info) == 0 && info.st_mode & S_IFMT == S_IFIFO, "the save replaced it")

        try FileManager.default.removeItem(at: file)
        try FileManager.default.createDirectory(at: file, withIntermediateDirectories: false)
        #expect(
            await refusal { _ = try await store.allCredentials() }?.hasPrefix("is a directory, not a regular file;")
                == true)
    }

    /// A lock file that is a symbolic link (placed by someone else: authkit
    /// makes only files) is not followed, and the error says what it is, not
    /// "Too many levels of symbolic links"; for each of the three locks.
    @Test func aLockFileThatIsALinkIsNamedOne() async throws {
        let home = try temporaryHome()
        defer { try? FileManager.default.removeItem(at: home.deletingLastPathComponent()) }
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        let store = FileCredentialStore(file: home.appendingPathComponent("credentials.json"))
        let key = CredentialKey(providerID: "qiita", label: nil)
        let target = home.appendingPathComponent("elsewhere").path
        for name in [".signin-qiita.lock", ".refresh-qiita.lock", "credentials.json.lock"] {
            try FileManager.default.createSymbolicLink(
                atPath: home.appendingPathComponent(name).path, withDestinationPath: target)
        }
        func reason(_ operation: () async throws -> Void) async -> String {
            do {
                try await operation()
                return "no error"
            } catch let error as AuthKitError {
                guard case .store(_, let reason) = error.reason else { return "\(error)" }
                return reason.detail
            } catch { return "\(error)" }
        }
        let link =
            "is a symbolic link, which is not followed (a lock file is only ever a file authkit made); remove it."
        #expect(await reason { _ = try store.beginSignIn(for: key) } == link)
        #expect(await reason { _ = try await store.withRefreshLock(for: key, timeout: .seconds(5)) { 1 } } == link)
        #expect(await reason { try await store.save(credential("qiita")) } == link)
        #expect(!FileManager.default.fileExists(atPath: target), "a lock was made through the link")
        // A directory in a lock file's place is named one, for each lock too.
        for name in [".signin-qiita.lock", ".refresh-qiita.lock", "credentials.json.lock"] {
            let path = home.appendingPathComponent(name)
            try FileManager.default.removeItem(at: path)
            try FileManager.default.createDirectory(at: path, withIntermediateDirectories: false)
        }
        let directory =
            "is a directory, where a lock file belongs (a lock file is only ever a file authkit made); move it aside."
        #expect(await reason { _ = try store.beginSignIn(for: key) } == directory)
        #expect(
            await reason { _ = try await store.withRefreshLock(for: key, timeout: .seconds(5)) { 1 } } == directory)
        #expect(await reason { try await store.save(credential("qiita")) } == directory)
    }

    /// A label of 300 characters (or 100 CJK ones, three bytes each) made a
    /// lock file's name longer than the 255 bytes a file name may hold:
    /// the sign-in failed with "File name too long", and so would a
    /// refresh. Long names are cut and end with a hash of the whole key.
    @Test func aLongLabelStillGetsItsLocks() async throws {
        let home = try temporaryHome()
        defer { try? FileManager.default.removeItem(at: home.deletingLastPathComponent()) }
        let store = FileCredentialStore(file: home.appendingPathComponent("credentials.json"))
        let long = CredentialKey(providerID: "qiita", label: String(repeating: "x", count: 300))
        let other = CredentialKey(providerID: "qiita", label: String(repeating: "x", count: 299) + "y")
        let wide = CredentialKey(providerID: "qiita", label: String(repeating: "仕", count: 100))
        for key in [long, other, wide] {
            let name = FileCredentialStore.fileName(for: key)
            #expect(name.utf8.count <= FileCredentialStore.longestFileName && name.hasPrefix("qiita."), "\(name)")
        }
        #expect(FileCredentialStore.fileName(for: long) != FileCredentialStore.fileName(for: other))
        #expect(FileCredentialStore.fileName(for: CredentialKey(providerID: "qiita", label: "work")) == "qiita.work")
        let lock = try store.beginSignIn(for: long)
        withExtendedLifetime(lock) {}
        #expect(try await store.withRefreshLock(for: wide, timeout: .seconds(5)) { 42 } == 42)
    }

    /// Labels that a file name would not tell apart have locks of their
    /// own: `a/b` and `a_b` shared one, so a sign-in to one was refused as
    /// "in progress" while the other's ran; `Work` and `work`, or a
    /// composed and a decomposed `é`, are one name on macOS's file systems.
    @Test func accountsAFileNameWouldConfuseHaveLocksOfTheirOwn() async throws {
        let home = try temporaryHome()
        defer { try? FileManager.default.removeItem(at: home.deletingLastPathComponent()) }
        let store = FileCredentialStore(file: home.appendingPathComponent("credentials.json"))
        let labels = ["a/b", "a_b", "a b", "Work", "work", "caf\u{E9}", "cafe\u{301}", "a.b"]
        let names = labels.map { FileCredentialStore.fileName(for: CredentialKey(providerID: "qiita", label: $0)) }
        #expect(Set(names.map { $0.lowercased() }).count == labels.count, "\(names)")
        #expect(names.allSatisfy { $0.hasPrefix("qiita.") && !$0.contains("/") && !$0.contains(" ") }, "\(names)")
        #expect(
            names[1] == "qiita.a_b" && names[4] == "qiita.work" && names[7] == "qiita.a.b",
            "plain names stay as they are")
        #expect(names[0].hasPrefix("qiita.a_b-") && names[3].hasPrefix("qiita.Work-"), "\(names)")
        // Composed and decomposed, two accounts to the locks and so to the
        // store: one to the store and two to its locks let two processes
        // refresh one credential at once.
        let (composed, decomposed) = (
            CredentialKey(providerID: "qiita", label: "caf\u{E9}"),
            CredentialKey(providerID: "qiita", label: "cafe\u{301}")
        )
        #expect(composed != decomposed && Set([composed, decomposed]).count == 2)
        try await store.save(Credential(providerID: "qiita", label: "caf\u{E9}", accessToken: "one"))
        try await store.save(Credential(providerID: "qiita", label: "cafe\u{301}", accessToken: "two"))
        #expect(try await store.credential(for: composed)?.accessToken == "one")
        #expect(try await store.credential(for: decomposed)?.accessToken == "two")
        let held = try store.beginSignIn(for: CredentialKey(providerID: "qiita", label: "a/b"))
        let other = try store.beginSignIn(for: CredentialKey(providerID: "qiita", label: "a_b"))
        withExtendedLifetime((held, other)) {}
    }

    @Test func inMemoryStoreKeepsAndRemoves() async throws {
        let memory = InMemoryCredentialStore([credential("a")])
        await memory.save(credential("b", "x"))
        #expect(await memory.allCredentials().map(\.providerID) == ["a", "b"])
        #expect(await memory.remove(CredentialKey(providerID: "a")) != nil)
        #expect(await memory.credential(for: CredentialKey(providerID: "b", label: "x")) != nil)
    }
}
