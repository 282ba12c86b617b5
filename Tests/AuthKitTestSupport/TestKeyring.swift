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

    /// The pid of the process that owns `org.freedesktop.secrets` on `bus`
    /// (the session bus of this process by default), asked of the bus itself.
    public static func daemonPID(bus: String? = nil) async throws -> Int32? {
        let address = bus ?? ProcessInfo.processInfo.environment["DBUS_SESSION_BUS_ADDRESS"] ?? ""
        let owner = try await ChildProcess.run(
            "/usr/bin/dbus-send",
            [
                "--bus=\(address)", "--print-reply", "--dest=org.freedesktop.DBus", "/",
                "org.freedesktop.DBus.GetConnectionUnixProcessID", "string:org.freedesktop.secrets",
            ])
        return owner.standardOutput.split(whereSeparator: \.isWhitespace).last.flatMap { Int32($0) }
    }

    /// A schema name of its own for one test, so tests sharing the keyring never see each other's items.
    public static func freshSchema(_ name: String) -> String {
        "dev.authkit.Test.\(name).\(UUID().uuidString.prefix(8))"
    }
}
