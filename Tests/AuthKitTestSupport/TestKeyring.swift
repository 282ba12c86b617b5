import AuthKit
import Foundation

/// The Secret Service the keyring tests use: the session bus of the test
/// process (`.ci/run` starts a private one with scripts/throwaway-keyring).
public enum TestKeyring {
    /// `AUTHKIT_REQUIRE_KEYRING=1` (as `.ci/run` sets): a missing keyring
    /// fails the keyring tests instead of skipping them.
    public static var isRequired: Bool { ProcessInfo.processInfo.environment["AUTHKIT_REQUIRE_KEYRING"] == "1" }

    /// Whether the keyring tests run: a Secret Service answers, or one is required
    /// (and the tests then fail saying why).
    public static func shouldRun() async -> Bool {
        #if os(Linux)
            if isRequired { return true }
            return await SecretServiceCredentialStore.unavailableReason() == nil
        #else
            return false
        #endif
    }

    /// The bus address to hand to a child process.
    public static var busEnvironment: [String: String] {
        ProcessInfo.processInfo.environment["DBUS_SESSION_BUS_ADDRESS"].map { ["DBUS_SESSION_BUS_ADDRESS": $0] } ?? [:]
    }

    /// A schema name of its own for one test, so tests sharing the keyring never see each other's items.
    public static func freshSchema(_ name: String) -> String {
        "dev.authkit.Test.\(name).\(UUID().uuidString.prefix(8))"
    }
}
