import AuthKit
import Foundation
import Testing

@testable import authkit

/// The exit-code table (docs/command-line.md, "Exit codes") is what scripts
/// read: it lists every status `authkit` can end with, and no other.
@Suite struct ExitCodeTableTests {
    @Test func readmeListsEveryExitStatus() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..")
            .standardized
        let readme = try String(contentsOf: root.appendingPathComponent("docs/command-line.md"), encoding: .utf8)
        let section = try #require(readme.components(separatedBy: "### Exit codes").dropFirst().first)
        let table = section.components(separatedBy: "\n## ").first ?? section
        let documented = table.split(separator: "\n").compactMap { line -> Int32? in
            guard line.hasPrefix("| ") else { return nil }
            return Int32(line.dropFirst(2).prefix { $0.isNumber })
        }
        #expect(documented == ExitStatus.allCases.map(\.rawValue), "docs/command-line.md: \(documented)")
    }

    /// A locked store (the Keychain over SSH) is "try again once unlocked"
    /// (75), not bad input; a store that could not be written is 74.
    @Test func aLockedStoreIsATemporaryFailure() {
        #expect(ExitStatus(for: AuthKitError.store(path: "Keychain", reason: .locked("unlock it"))) == .storeLocked)
        #expect(ExitStatus.storeLocked.rawValue == 75)
        #expect(ExitStatus(for: AuthKitError.store(path: "f", reason: .notSaved("full"))) == .outputFailed)
        #expect(ExitStatus(for: AuthKitError.store(path: "f", reason: .invalidContents("x"))) == .badInput)
    }
}
