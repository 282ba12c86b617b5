import AuthKit
import AuthKitTestSupport
import Foundation
import Testing

/// FileCredentialStore used by separate processes (the test-only
/// `AuthKitStoreStress` executable), as several `authkit` runs would use it.
@Suite struct CrossProcessStoreTests {
    /// `AuthKitStoreStress` sits beside the test bundle in the build directory.
    static var binary: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(
            "AuthKitStoreStress")
    }

    func temporaryDirectory() -> URL {
        TemporaryDirectory.url("authkit-xproc").appendingPathComponent("home")
    }

    func mode(_ path: String) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        return (attributes[.posixPermissions] as? NSNumber)?.intValue ?? -1
    }

    func stress(_ arguments: [String]) async throws -> ChildProcess {
        let child = try await ChildProcess.start(Self.binary.path, arguments)
        child.closeInput()
        return child
    }

    @Test func eightProcessesWritingAtOnceLoseNothing() async throws {
        let home = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: home.deletingLastPathComponent()) }
        let file = home.appendingPathComponent("credentials.json")
        let started = Date()
        var writers = [ChildProcess]()
        for index in 0..<8 { writers.append(try await stress(["save", file.path, "w\(index)", "50"])) }
        for writer in writers {
            let exit = try await writer.exit()
            #expect(exit.status == 0, "\(writer.standardError)")
        }
        print("8 processes × 50 saves: \(String(format: "%.1f", Date().timeIntervalSince(started))) s")

        let all = try await FileCredentialStore(file: file).allCredentials()
        #expect(all.count == 400)
        let expected = Set((0..<8).flatMap { writer in (0..<50).map { "w\(writer)-\($0)" } })
        #expect(Set(all.map(\.providerID)) == expected)
        #expect(all.allSatisfy { $0.accessToken == "token-\($0.providerID)" })
        #expect(try mode(home.path) == 0o700)
        #expect(try mode(file.path) == 0o600)
        #expect(try mode(file.path + ".lock") == 0o600)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: home.path).filter { $0.hasSuffix(".tmp") }
        #expect(leftovers.isEmpty)
    }

    /// A writer killed at random moments leaves the file readable, holding the
    /// last generation it reported saved or the one it was writing — never a mix.
    @Test func sigkillMidWriteLeavesOldOrNewContent() async throws {
        let home = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: home.deletingLastPathComponent()) }
        let file = home.appendingPathComponent("credentials.json")
        var generator = SystemRandomNumberGenerator()
        var killedBeforeReport = 0
        var killedMidWrite = 0
        for round in 0..<12 {
            let writer = try await stress(["loop", file.path, "20000"])
            // Let it get going (the first round must have saved at least once).
            try await Task.sleep(for: .milliseconds(Int.random(in: 30...250, using: &generator)))
            if round == 0 {
                while writer.standardOutput.isEmpty && !writer.hasExited {
                    try await Task.sleep(for: .milliseconds(10))
                }
            }
            writer.send(SIGKILL)
            #expect(try await writer.exit().signal == SIGKILL)
            let printed = writer.standardOutput
            let lastSaved = printed.split(separator: "\n").last.flatMap { Int64($0.dropFirst("saved ".count)) }

            // A temporary file left behind means the kill landed mid-write.
            if try FileManager.default.contentsOfDirectory(atPath: home.path).contains(where: { $0.hasSuffix(".tmp") })
            {
                killedMidWrite += 1
            }
            let all = try await FileCredentialStore(file: file).allCredentials()
            try #require(all.count == 1, "round \(round): \(all.count) credentials")
            guard case .integer(let generation) = all[0].rawFields["generation"] else {
                Issue.record("round \(round): no generation")
                continue
            }
            #expect(
                all[0].accessToken == String(repeating: "gen\(generation)-", count: 20000), "round \(round): torn token"
            )
            if let lastSaved {
                // The process restarts at generation 1 each round, so only
                // this round's report bounds the file.
                #expect(
                    generation == lastSaved || generation == lastSaved + 1,
                    "round \(round): file has \(generation), last saved \(lastSaved)")
                if generation == lastSaved + 1 { killedBeforeReport += 1 }
            }
            #expect(try mode(file.path) == 0o600)
        }
        let abandoned = try FileManager.default.contentsOfDirectory(atPath: home.path).filter { $0.hasSuffix(".tmp") }
        print(
            "SIGKILL rounds: 12, killed mid-write (temporary file left): \(killedMidWrite), killed between replacing the file and reporting it: \(killedBeforeReport)"
        )
        #expect(abandoned.count <= 1) // each save clears those earlier kills left
        #expect(try mode(home.path) == 0o700)
        // The next save removes the temporary files killed writers left (they hold tokens).
        try await FileCredentialStore(file: file).save(Credential(providerID: "after", accessToken: "t"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: home.path).filter { $0.hasSuffix(".tmp") }.isEmpty)
    }
}
