import AuthKit
import AuthKitTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// AuthKit's directory is the user's alone, and the sandbox's store stays
/// apart from the real one (issue 44, items 3 and 7).
@Suite struct HomeDirectoryTrustTests {
    let realToken = "real-qiita-token-0123456789"

    /// A home holding a real Qiita credential.
    func home(_ name: String) async throws -> URL {
        let home = try CLIProcess.home("authkit-home-\(name)")
        try await FileCredentialStore(file: home.appendingPathComponent("credentials.json"))
            .save(Credential(providerID: "qiita", accessToken: realToken))
        return home
    }

    /// A home others can write to — sticky (1777) or not, or another user's —
    /// is refused by every command, `providers override` included, with the
    /// fix; it was only warned about, and in a sticky home another user could
    /// place `sandbox/` as a link to the real store.
    @Test(arguments: [0o1777, 0o0777, 0o0775])
    func aHomeOthersCanWriteIsRefused(mode: Int) async throws {
        let home = try await home("mode-\(String(mode, radix: 8))")
        defer { try? FileManager.default.removeItem(at: home) }
        // A group of its own would be this user's (a user-private group): take another.
        if mode == 0o0775 { #expect(chown(home.path, geteuid(), 65534) == 0) }
        #expect(chmod(home.path, mode_t(mode)) == 0)
        for arguments in [
            ["token", "list"], ["token", "header", "--provider", "qiita"], ["providers", "override", "qiita"],
            ["request", "--provider", "qiita", "https://qiita.com/api/v2/authenticated_user"],
        ] {
            let result = try await CLIProcess.run(arguments, environment: ["AUTHKIT_HOME": home.path])
            #expect(result.status == 65, "\(arguments): \(result.status) \(result.stderr)")
            #expect(
                result.stderr.contains("can be written by") && result.stderr.contains("chmod 700 '\(home.path)'"),
                "\(arguments): \(result.stderr)")
            #expect(!result.stdout.contains(realToken) && !result.stderr.contains(realToken))
        }
        #expect(
            !FileManager.default.fileExists(atPath: home.appendingPathComponent("providers/qiita.json").path),
            "providers override wrote nothing")
    }

    @Test(.enabled(if: geteuid() == 0, "needs root to give the home to another user"))
    func anotherUsersHomeIsRefused() async throws {
        let home = try await home("foreign")
        defer { try? FileManager.default.removeItem(at: home) }
        #expect(chown(home.path, 65534, 65534) == 0)
        let result = try await CLIProcess.run(["token", "list"], environment: ["AUTHKIT_HOME": home.path])
        #expect(
            result.status == 65 && result.stderr.contains("belongs to another user (uid 65534)"), "\(result.stderr)")
    }

    /// `sandbox/` as a link to the home (or `sandbox/credentials.json` as a
    /// hard link to the real store) made `--sandbox` mode read the real
    /// store: `token header --sandbox` printed the real token, and `request
    /// --sandbox` sent it to the sandbox's URL. Refused before anything is read.
    @Test func theSandboxStoreIsNeverTheRealOne() async throws {
        let home = try await home("sandbox-link")
        defer { try? FileManager.default.removeItem(at: home) }
        let sandboxDirectory = home.appendingPathComponent("sandbox")
        let sandbox = "http://127.0.0.1:\(try RawHTTP.freePort())"
        let commands = [
            ["token", "header", "--provider", "qiita", "--sandbox", sandbox],
            ["token", "show", "--provider", "qiita", "--field", "access_token", "--sandbox", sandbox],
            ["request", "--provider", "qiita", "--sandbox", sandbox, "\(sandbox)/echo"],
        ]
        try FileManager.default.createSymbolicLink(atPath: sandboxDirectory.path, withDestinationPath: home.path)
        for arguments in commands {
            let result = try await CLIProcess.run(arguments, environment: ["AUTHKIT_HOME": home.path])
            #expect(
                result.status == 65 && result.stderr.contains("is a symbolic link, not a directory"),
                "\(arguments): \(result.stderr)")
            #expect(!result.stdout.contains(realToken) && !result.stderr.contains(realToken))
        }
        try FileManager.default.removeItem(at: sandboxDirectory)
        try FileManager.default.createDirectory(
            at: sandboxDirectory, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        #expect(
            link(
                home.appendingPathComponent("credentials.json").path,
                sandboxDirectory.appendingPathComponent("credentials.json").path) == 0)
        for arguments in commands {
            let result = try await CLIProcess.run(arguments, environment: ["AUTHKIT_HOME": home.path])
            #expect(
                result.status == 65 && result.stderr.contains("under another name"), "\(arguments): \(result.stderr)")
            #expect(!result.stdout.contains(realToken) && !result.stderr.contains(realToken))
        }
        // The real store is untouched.
        let stored = try await FileCredentialStore(file: home.appendingPathComponent("credentials.json"))
            .allCredentials()
        #expect(stored.map(\.accessToken) == [realToken])
    }
}
