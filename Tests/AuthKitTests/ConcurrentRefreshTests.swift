import AuthKit
import AuthKitTestSupport
import Foundation
import Testing

/// One refresh across processes: eight library processes (`AuthKitStoreStress
/// current`, a `CredentialSource` on a `FileCredentialStore`) ask for the same
/// expired credential at once, against a server that revokes the grant when a
/// refresh token is used twice.
@Suite struct ConcurrentRefreshTests {
    @Test func eightLibraryProcessesRefreshOnce() async throws {
        try await eightProcessesRefreshOnce(keyringSchema: nil)
    }

    /// The same with the credential in the keyring (a real Secret Service):
    /// the keyring has no locks, and the refresh lock file beside AuthKit's
    /// other files is what keeps the eight apart.
    @Test(.enabled("no Secret Service answers (.ci/run starts one)") { await TestKeyring.shouldRun() })
    func eightLibraryProcessesRefreshOnceThroughTheKeyring() async throws {
        #if os(Linux)
            try await eightProcessesRefreshOnce(keyringSchema: TestKeyring.freshSchema("refresh"))
        #endif
    }

    func eightProcessesRefreshOnce(keyringSchema: String?) async throws {
        try await withServer { server in
            let grant = RotatingGrant(on: server)
            let home = TemporaryDirectory.url("authkit-refresh")
            defer { try? FileManager.default.removeItem(at: home) }
            try FileManager.default.createDirectory(
                at: home.appendingPathComponent("providers"), withIntermediateDirectories: true)
            try Data(RotatingGrant.descriptor(id: "rotating", server: server).utf8).write(
                to: home.appendingPathComponent("providers/rotating.json"))
            try Data(RotatingGrant.expiredCredential(id: "rotating").utf8).write(
                to: home.appendingPathComponent("credentials.json"))
            var keyring: (any CredentialStore)?
            #if os(Linux)
                if let keyringSchema {
                    // The same credential, moved into the keyring.
                    let file = FileCredentialStore(environment: ["AUTHKIT_HOME": home.path])
                    let expired = try #require(await file.allCredentials().first)
                    try FileManager.default.removeItem(at: file.fileURL)
                    keyring = SecretServiceCredentialStore(schema: keyringSchema, lockDirectory: home)
                    try await keyring!.save(expired)
                }
            #endif

            var environment = ProcessInfo.processInfo.environment
            environment["AUTHKIT_ROTATING_CLIENT_ID"] = "app"
            environment["AUTHKIT_ROTATING_CLIENT_SECRET"] = "secret"
            environment["AUTHKIT_STRESS_KEYRING_SCHEMA"] = keyringSchema
            var children = [ChildProcess]()
            for _ in 0..<8 {
                let child = try await ChildProcess.start(
                    CrossProcessStoreTests.binary.path, ["current", home.path, "rotating"], environment: environment)
                child.closeInput()
                children.append(child)
            }
            var tokens = [String]()
            for child in children {
                let exit = try await child.exit()
                #expect(exit.status == 0, "\(child.standardError)")
                tokens.append(child.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines))
            }
            #expect(grant.refreshCount == 1, "the refresh token was sent \(grant.refreshCount) times")
            #expect(!grant.isRevoked)
            #expect(Set(tokens) == ["at-1"], "\(tokens)")
            if let keyring {
                let stored = try await keyring.credential(for: CredentialKey(providerID: "rotating"))
                #expect(stored?.accessToken == "at-1" && stored?.refreshToken == "rt-1")
                #expect(!FileManager.default.fileExists(atPath: home.appendingPathComponent("credentials.json").path))
                try await keyring.remove(CredentialKey(providerID: "rotating"))
            } else {
                let stored = try String(contentsOf: home.appendingPathComponent("credentials.json"), encoding: .utf8)
                #expect(stored.contains("\"rt-1\"") && stored.contains("\"at-1\""))
            }
        }
    }
}
