import AuthKit

/// The command's credential store, with each refresh shielded from Ctrl-C,
/// SIGTERM and SIGHUP until its result is saved (``Interrupt/shielding(_:)``).
///
/// A refresh runs inside the store's refresh lock: read, request, save. That
/// span is where a killed process loses the grant with a rotating refresh
/// token, so the shield is put around exactly the lock's body; waiting for
/// another process's refresh stays interruptible.
///
/// It also notes which accounts this command saved: `request` tells a
/// renewed token the API refused as well from a refresh that failed.
struct ShieldedCredentialStore: CredentialStore {
    let base: FileCredentialStore
    private let savedKeys = LockedValue<Set<CredentialKey>>([])

    init(base: FileCredentialStore) { self.base = base }

    func credential(for key: CredentialKey) async throws -> Credential? { try await base.credential(for: key) }
    func allCredentials() async throws -> [Credential] { try await base.allCredentials() }
    func save(_ credential: Credential) async throws {
        try await base.save(credential)
        savedKeys.withLock { _ = $0.insert(credential.key) }
    }

    /// Whether this command saved a credential under `key` (a refresh's renewal).
    func saved(_ key: CredentialKey) -> Bool { savedKeys.withLock { $0.contains(key) } }
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
