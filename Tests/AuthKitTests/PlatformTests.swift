import AuthKitTestSupport
import Foundation
import Testing

@testable import AuthKit

#if os(Linux)
    import CAuthKitLinux
#endif

/// AuthKit's modules import FoundationEssentials on Linux, not Foundation, and
/// do with the standard library and POSIX what Foundation did for them
/// (Sources/AuthKit/Platform). These tests hold each replacement to the
/// Foundation behaviour it replaces (the tests themselves may import Foundation).
@Suite struct PlatformTests {
    /// Directories AuthKit makes are 0700 from mkdir(2) on, each missing
    /// parent too; an existing one is left alone; a file in the way is named.
    @Test func privateDirectoriesAreMadeWithTheirMode() throws {
        let base = TemporaryDirectory.url("authkit-mkdir")
        defer { try? FileManager.default.removeItem(at: base) }
        let nested = base.appendingPathComponent("a/b/c")
        try FileSystem.createPrivateDirectory(nested.path)
        for path in [
            base.path, base.appendingPathComponent("a").path, base.appendingPathComponent("a/b").path, nested.path,
        ] {
            #expect(FileSystem.permissions(of: path).map { $0 & 0o777 } == 0o700, "\(path)")
        }
        try FileSystem.createPrivateDirectory(nested.path) // already there
        try Data().write(to: base.appendingPathComponent("file"))
        #expect(throws: FileSystem.DirectoryFailure.self) {
            try FileSystem.createPrivateDirectory(base.appendingPathComponent("file/d").path)
        }
    }

    /// A group-writable file is harmless only in the user's own private
    /// group: named as the user, nobody else listed. A shared primary group
    /// (macOS's `staff`, openSUSE's `users`) lets its other members write.
    @Test func onlyAUserPrivateGroupMayWrite() {
        #expect(FileSystem.isPrivateGroup(name: "alice", members: [], userName: "alice"))
        #expect(FileSystem.isPrivateGroup(name: "alice", members: ["alice"], userName: "alice"))
        #expect(!FileSystem.isPrivateGroup(name: "staff", members: [], userName: "alice"))
        #expect(!FileSystem.isPrivateGroup(name: "users", members: ["alice", "bob"], userName: "alice"))
        #expect(!FileSystem.isPrivateGroup(name: "alice", members: ["alice", "mallory"], userName: "alice"))
        // Another account's primary group too (`useradd -g alice bob`), which
        // the group's member list never names.
        #expect(
            FileSystem.isPrivateGroup(name: "alice", members: [], userName: "alice", primaryGroupOf: ["alice"]))
        #expect(
            !FileSystem.isPrivateGroup(
                name: "alice", members: [], userName: "alice", primaryGroupOf: ["alice", "bob"]))
        // Read from the system's databases: root's group on Linux is root,
        // its own; a group that is not the primary one never counts.
        #if os(Linux)
            // (Where another account has group 0 too, as Fedora's sync and
            // halt do, root's group is no private one.)
            let passwd = (try? String(contentsOfFile: "/etc/passwd", encoding: .utf8)) ?? ""
            let sharedRootGroup = passwd.split(separator: "\n").contains { line in
                let fields = line.split(separator: ":", omittingEmptySubsequences: false)
                return fields.count > 3 && fields[3] == "0" && fields[0] != "root"
            }
            if geteuid() == 0 { #expect(FileSystem.isOwnPrivateGroup(getegid()) == !sharedRootGroup) }
        #endif
        #expect(!FileSystem.isOwnPrivateGroup(getegid() &+ 4343))
    }

    /// A POSIX access ACL naming another user with write is another
    /// writer, though the mode bits (the ACL's mask in the group's place)
    /// read like a private group's `rw-rw-r--` (setfacl -m u:65534:rw).
    @Test func aUserNamedInAnAccessListIsAnotherWriter() throws {
        #if os(Linux)
            let base = TemporaryDirectory.url("authkit-acl")
            try FileManager.default.createDirectory(at: base, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: base) }
            let file = base.appendingPathComponent("qiita.json").path
            try Data("{}".utf8).write(to: URL(fileURLWithPath: file))
            chmod(base.path, 0o700)
            // version 2; user::rw-, user:<named>:<perm>, group::r--, mask::rw-, other::r--
            func setACL(named: UInt32, perm: UInt16, more: Int = 0, lastPerm: UInt16 = 4) throws {
                var blob: [UInt8] = [2, 0, 0, 0]
                func entry(_ tag: UInt16, _ perm: UInt16, _ id: UInt32) {
                    blob += [UInt8(tag & 0xff), UInt8(tag >> 8), UInt8(perm & 0xff), UInt8(perm >> 8)]
                    blob += (0..<4).map { UInt8((id >> (8 * $0)) & 0xff) }
                }
                entry(0x01, 6, .max)
                entry(0x02, perm, named)
                // Named users in ascending order, as the kernel requires.
                for index in 0..<more { entry(0x02, index == more - 1 ? lastPerm : 4, 100_000 + UInt32(index)) }
                entry(0x04, 4, .max)
                entry(0x10, 6, .max)
                entry(0x20, 4, .max)
                guard authkit_set_access_acl(file, blob, blob.count) == 0 else {
                    throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
                }
            }
            do {
                try setACL(named: 65534, perm: 6)
            } catch let error as POSIXError where error.code == .EOPNOTSUPP {
                // A file system without ACLs (tmpfs built without them): nothing to check.
                return
            }
            #expect(FileSystem.permissions(of: file).map { $0 & 0o777 } == 0o664)
            let problem = FileSystem.foreignWriteProblem(at: file)
            #expect(problem?.contains("user 65534, named in its access control list") == true, "\(problem ?? "nil")")
            // Named with read only, the mask's write is the private group's alone.
            try setACL(named: 65534, perm: 4)
            if FileSystem.isOwnPrivateGroup(getegid()) {
                #expect(FileSystem.foreignWriteProblem(at: file) == nil)
            }
            // A long list (100 users, more than a first guess at its size
            // holds) is read whole: a writer at its end is found, and none
            // in it is no writer.
            for writerAtTheEnd in [false, true] {
                try setACL(named: 65534, perm: 4, more: 100, lastPerm: writerAtTheEnd ? 6 : 4)
                let found = FileSystem.foreignWriteProblem(at: file)
                if writerAtTheEnd {
                    #expect(found?.contains("user 100099") == true, "\(found ?? "nil")")
                } else if FileSystem.isOwnPrivateGroup(getegid()) {
                    #expect(found == nil, "\(found ?? "nil")")
                }
            }
        #endif
    }

    /// Every Unicode scalar, against the `CharacterSet` each predicate replaces.
    /// The whitespace classes agree everywhere. The others agree on every
    /// scalar Foundation's tables know; where they do not (see TextTrimming),
    /// the differences are only of the documented kinds: a letter, mark or
    /// number Foundation's table lacks, or an unassigned scalar or variation
    /// selector of plane 14 that Foundation counts as control. A wrong
    /// category in the predicates shows up as any other difference.
    @Test func scalarClassesMatchFoundationsCharacterSets() {
        func differences(_ set: CharacterSet, _ predicate: (Unicode.Scalar) -> Bool) -> [Unicode.Scalar] {
            (UInt32(0)...0x10FFFF).compactMap(Unicode.Scalar.init).filter { set.contains($0) != predicate($0) }
        }
        #expect(differences(.whitespaces, { $0.isSpace }).isEmpty)
        #expect(differences(.whitespacesAndNewlines, { $0.isSpaceOrNewline }).isEmpty)

        let alphanumeric = differences(.alphanumerics, { $0.isAlphanumeric })
        let unexplained = alphanumeric.filter { CharacterSet.alphanumerics.contains($0) || !$0.isAlphanumeric }
        #expect(unexplained.isEmpty, "\(unexplained.prefix(10).map { String($0.value, radix: 16) })")
        #expect(
            alphanumeric.allSatisfy { $0.value > 0x7FF },
            "Foundation and AuthKit differ on a Latin, Greek or Cyrillic character")

        let control = differences(.controlCharacters, { $0.isControl })
        let unexplainedControl = control.filter {
            !($0.value >= 0xE0000 && $0.value <= 0xEFFFF && CharacterSet.controlCharacters.contains($0)
                && ($0.properties.generalCategory == .unassigned || $0.properties.isVariationSelector))
        }
        #expect(unexplainedControl.isEmpty, "\(unexplainedControl.prefix(10).map { String($0.value, radix: 16) })")
    }

    @Test func trimmingMatchesFoundation() {
        let samples = [
            "", " ", "\t\n", "  token ", "\u{3000}wide\u{3000}", "a b", "\n\rline\r\n", "\u{85}x\u{2028}",
            "\u{A0}nbsp\u{A0}", " e\u{301} ", "\u{200B}zero-width\u{200B}", "🙂 ", " \t 3600 \t ",
        ]
        for sample in samples {
            #expect(
                sample.trimmingSpaces() == sample.trimmingCharacters(in: .whitespaces), "\(sample.debugDescription)")
            #expect(
                sample.trimmingSpacesAndNewlines() == sample.trimmingCharacters(in: .whitespacesAndNewlines),
                "\(sample.debugDescription)")
            let sub = sample[...]
            #expect(sub.trimmingSpaces() == sample.trimmingCharacters(in: .whitespaces))
        }
    }

    @Test func threadLockExcludesAndConditionHandsOver() {
        let lock = ThreadLock()
        let total = LockedCounter()
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            for _ in 0..<10_000 { lock.withLock { total.value += 1 } }
        }
        #expect(total.value == 80_000)

        // One thread waits on the condition for a value another thread sets.
        let condition = ThreadLock.Condition()
        let box = LockedCounter()
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            let seen = condition.withLock { () -> Int in
                while box.value == 0 { condition.wait() }
                return box.value
            }
            box.seen = seen
            done.signal()
        }
        usleep(10_000)
        condition.withLock {
            box.value = 42
            condition.signal()
        }
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(box.seen == 42)
    }

    /// Unsynchronised on purpose: the lock under test guards it.
    final class LockedCounter: @unchecked Sendable {
        var value = 0
        var seen = 0
    }

    @Test func fileSystemAnswersAsPOSIXDoes() throws {
        let dir = TemporaryDirectory.url("authkit-platform")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("big.bin")
        let bytes = Data((0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }) // more than one read
        try bytes.write(to: file)
        let link = dir.appendingPathComponent("link")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: dir)

        #expect(FileSystem.isDirectory(dir.path))
        #expect(FileSystem.isDirectory(link.path)) // followed, as FileManager.fileExists(atPath:isDirectory:) does
        #expect(!FileSystem.isDirectory(file.path))
        #expect(!FileSystem.isDirectory(dir.appendingPathComponent("missing").path))

        let fd = open(file.path, O_RDONLY)
        #expect(fd >= 0)
        defer { close(fd) }
        #expect(try FileSystem.readToEnd(fd) == bytes)
        // A directory cannot be read: the POSIX error comes back, not a crash or empty data.
        let dirFD = open(dir.path, O_RDONLY)
        defer { close(dirFD) }
        #expect(throws: POSIXError.self) { _ = try FileSystem.readToEnd(dirFD) }
    }

    /// What `FileSystem.contents(of:accepting:limit:)` refuses, each with
    /// words that say why: a named pipe where only a file will do (opening
    /// it must not wait for a writer), a device, a directory, and more bytes
    /// than the limit, whether the size is known up front or only as a pipe
    /// delivers it. Foundation read a pipe as "Permission denied".
    @Test func boundedReadsRefuseWhatCouldHangOrFlood() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bounded-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        func failure(_ path: String, _ accepting: FileSystem.Readable, limit: Int = 64) -> String? {
            do {
                _ = try FileSystem.contents(of: path, accepting: accepting, limit: limit)
                return nil
            } catch { return error.description }
        }

        let file = dir.appendingPathComponent("small.json").path
        try Data("{}".utf8).write(to: URL(fileURLWithPath: file))
        #expect(try FileSystem.contents(of: file, accepting: .regularFile, limit: 2) == Data("{}".utf8))
        #expect(failure(file, .regularFile, limit: 1) == "is 2 bytes, more than the 1 allowed; it is not read.")
        #expect(
            failure(dir.appendingPathComponent("none").path, .fileOrPipe)
                == "cannot be read (No such file or directory).")
        #expect(failure(dir.path, .fileOrPipe) == "is a directory.")
        #expect(failure("/dev/zero", .fileOrPipe) == "is a device, not a regular file; it is not read.")

        let fifo = dir.appendingPathComponent("fifo.json").path
        #expect(mkfifo(fifo, 0o600) == 0)
        // No writer ever comes: a refusal, at once, not a wait.
        #expect(failure(fifo, .regularFile) == "is a named pipe, not a regular file; it is not read.")

        // A pipe the user named is read as its writer writes, and held to the limit.
        let writer = Thread {
            let fd = open(fifo, O_WRONLY)
            guard fd >= 0 else { return }
            let bytes = [UInt8](repeating: UInt8(ascii: " "), count: 100)
            _ = bytes.withUnsafeBytes { FileSystem.writeAll(fd, $0) }
            close(fd)
        }
        writer.start()
        #expect(failure(fifo, .fileOrPipe) == "holds more than the 64 bytes allowed; it is not read.")

        // Standard input (`request -d @-`) is held to a limit the same way.
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        let bytes = [UInt8](repeating: UInt8(ascii: "x"), count: 100)
        _ = bytes.withUnsafeBytes { FileSystem.writeAll(ends[1], $0) }
        close(ends[1])
        defer { close(ends[0]) }
        #expect(throws: FileSystem.ReadFailure(description: "holds more than the 99 bytes allowed; it is not read.")) {
            _ = try FileSystem.readToEnd(ends[0], limit: 99)
        }
    }

    /// A named pipe the user named is read whole whichever comes first, the
    /// writer or AuthKit. A writer already waiting in open(2) is let go by
    /// AuthKit's first open and may write and hang up at once: reading by
    /// opening the path a second time then waited forever for a writer that
    /// had come and gone (`request -d @fifo` hung; so did this suite, on a
    /// busy machine). Each read runs on a thread of its own, watched: one
    /// that does not end in 10 s is a failure, and is let go by opening the
    /// pipe for writing, so the suite does not hang with it.
    @Test func aNamedPipeIsReadWhicheverOfReaderAndWriterComesFirst() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("fifo-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let fifo = dir.appendingPathComponent("body.json").path
        #expect(mkfifo(fifo, 0o600) == 0)

        final class Outcome: @unchecked Sendable { var read: Result<Data, FileSystem.ReadFailure>? }
        for round in 0..<100 {
            let message = Data("{\"round\": \(round)}".utf8)
            let writerWaiting = DispatchSemaphore(value: 0)
            let writer = Thread {
                writerWaiting.signal()
                let fd = open(fifo, O_WRONLY)
                guard fd >= 0 else { return }
                _ = message.withUnsafeBytes { FileSystem.writeAll(fd, $0) }
                close(fd)
            }
            let outcome = Outcome()
            let readerDone = DispatchSemaphore(value: 0)
            let reader = Thread {
                outcome.read = Result { () throws(FileSystem.ReadFailure) in
                    try FileSystem.contents(of: fifo, accepting: .fileOrPipe, limit: 1024)
                }
                readerDone.signal()
            }
            // Even rounds: the writer is waiting in open(2) before the read
            // starts. Odd rounds: the reader waits for a writer to come.
            if round.isMultiple(of: 2) {
                writer.start()
                writerWaiting.wait()
                usleep(1_000)
                reader.start()
            } else {
                reader.start()
                usleep(1_000)
                writer.start()
            }
            guard readerDone.wait(timeout: .now() + 10) == .success else {
                Issue.record("round \(round): the read of a named pipe was still waiting after 10 s")
                let release = open(fifo, O_WRONLY | O_NONBLOCK)
                if release >= 0 { close(release) }
                _ = readerDone.wait(timeout: .now() + 10)
                return
            }
            #expect(try outcome.read?.get() == message, "round \(round)")
        }
    }

    /// `--manual`'s line: `\n` or `\r\n` stripped, the input's end told
    /// apart from an empty line, and a line past the limit refused with
    /// no more than the limit (and the byte that passed it) taken.
    @Test func aLineIsReadToItsBreakAndNoFurtherThanTheLimit() throws {
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        defer { close(ends[0]) }
        let written = "one\r\n\ntwo\n0123456789abc\nthree"
        #expect(written.utf8.count == write(ends[1], written, written.utf8.count))
        close(ends[1])
        #expect(FileSystem.readLine(ends[0], limit: 8) == .line("one"))
        #expect(FileSystem.readLine(ends[0], limit: 8) == .line(""))
        #expect(FileSystem.readLine(ends[0], limit: 8) == .line("two"))
        #expect(FileSystem.readLine(ends[0], limit: 8) == .tooLong(limit: 8))
        #expect(
            FileSystem.readLine(ends[0], limit: 8) == .line("9abc"), "read past the limit and the byte that passed it")
        #expect(FileSystem.readLine(ends[0], limit: 8) == .line("three"))
        #expect(FileSystem.readLine(ends[0], limit: 8) == .end)
    }

    /// Malformed JSON is located by AuthKit's parser, as a line and column.
    @Test func syntaxErrorsAreLocatedByLineAndColumn() {
        let text = "{\n  \"id\": \"x\",\n  \"name\": ,\n}"
        #expect(DescriptorLoader.syntaxError(in: Data(text.utf8)) == "line 3, column 11: unexpected character: ','")
        #expect(DescriptorLoader.syntaxError(in: Data("[1, 2".utf8)).hasPrefix("line 1, column 6: "))
    }

    /// What a failed read or decode says: words, not a type dump.
    @Test func reasonsAreWords() throws {
        let missing = URL(fileURLWithPath: "/nonexistent-\(UUID().uuidString)/file.json")
        #expect(throws: (any Error).self) { _ = try Data(contentsOf: missing) }
        do { _ = try Data(contentsOf: missing) } catch {
            #expect(DescriptorLoader.reason(error) == "No such file or directory")
        }
        struct Shape: Decodable { var providerID: String }
        struct File: Decodable { var credentials: [Shape] }
        do { _ = try JSONDecoder().decode(File.self, from: Data(#"{"credentials": [{}]}"#.utf8)) } catch {
            #expect(DescriptorLoader.reason(error) == "credentials[0].providerID: required field is missing.")
        }
        // Foundation's file errors without the system's error under them.
        #expect(DescriptorLoader.reason(CocoaError(.fileReadNoPermission)) == "Permission denied")
        #expect(
            DescriptorLoader.reason(CocoaError(.fileReadInapplicableStringEncoding)) == "the file is not UTF-8 text")
        #expect(
            DescriptorLoader.reason(CocoaError(.featureUnsupported))
                == "file error \(CocoaError.Code.featureUnsupported.rawValue) (CocoaError)")
        #expect(!DescriptorLoader.reason(CocoaError(.fileReadTooLarge)).contains("rawValue"))
    }

    /// The modules the `authkit` command links import FoundationEssentials on
    /// Linux, never the whole of Foundation: one unconditional
    /// `import Foundation` would link Foundation, FoundationInternationalization
    /// and ICU back into every start (README, "Benchmarks"). The two files that
    /// need FoundationNetworking compile into AuthKitFoundationNetworking there.
    @Test func theCommandsModulesImportFoundationEssentialsOnLinux() throws {
        let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
            "../../Sources"
        ).standardized
        let exempt: Set = ["URLSessionHTTPClient.swift", "URLRequestAuthorization.swift"]
        var offenders: [String] = []
        for module in ["AuthKit", "AuthKitOAuth1", "AuthKitLoopback", "AuthKitSandbox", "AuthKitCLI"] {
            let root = sources.appendingPathComponent(module)
            let files = FileManager.default.enumerator(atPath: root.path)?.compactMap { $0 as? String } ?? []
            #expect(!files.isEmpty, "\(module): no sources found")
            for file in files
            where file.hasSuffix(".swift") && !exempt.contains(URL(fileURLWithPath: file).lastPathComponent) {
                let lines = try String(contentsOf: root.appendingPathComponent(file), encoding: .utf8).split(
                    separator: "\n", omittingEmptySubsequences: false)
                for (index, line) in lines.enumerated() {
                    let code = line.trimmingCharacters(in: .whitespaces)
                    guard code == "import Foundation" || code.hasSuffix(" import Foundation") else { continue }
                    // Allowed only as the Apple-platform branch of the usual pair.
                    let above = { lines[index - $0].trimmingCharacters(in: .whitespaces) }
                    let guarded =
                        index >= 3 && above(1) == "#else" && above(2) == "import FoundationEssentials"
                        && above(3) == "#if canImport(FoundationEssentials)"
                    if !guarded { offenders.append("\(module)/\(file):\(index + 1)") }
                }
            }
        }
        #expect(offenders.isEmpty, "import FoundationEssentials where it exists: \(offenders)")
    }
}
