import AuthKit

/// The command's credential store, with each refresh shielded from Ctrl-C,
/// SIGTERM and SIGHUP until its result is saved (``Interrupt/shielding(_:)``).
///
/// A refresh runs inside the store's refresh lock: read, request, save. That
/// span is where a killed process loses the grant with a rotating refresh
/// token, so the shield is put around exactly the lock's body; waiting for
/// another process's refresh stays interruptible.
struct ShieldedCredentialStore: CredentialStore {
    let base: any CredentialStore

    func credential(for key: CredentialKey) async throws -> Credential? { try await base.credential(for: key) }
    func allCredentials() async throws -> [Credential] { try await base.allCredentials() }
    func save(_ credential: Credential) async throws { try await base.save(credential) }
    @discardableResult
    func remove(_ key: CredentialKey) async throws -> Credential? { try await base.remove(key) }

    func withRefreshLock<Result: Sendable>(
        for key: CredentialKey, timeout: Duration, _ body: @Sendable () async throws -> Result
    ) async throws -> Result {
        Interrupt.installShield()
        return try await base.withRefreshLock(for: key, timeout: timeout) {
            try await Interrupt.shielding(body)
        }
    }
}
