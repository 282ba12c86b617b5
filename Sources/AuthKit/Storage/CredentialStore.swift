/// Where credentials live between runs.
///
/// ``FileCredentialStore`` keeps them in a JSON file under `$AUTHKIT_HOME`;
/// ``InMemoryCredentialStore`` keeps them for the life of the process (tests,
/// servers that persist elsewhere). An app can conform its own (Keychain, a database).
public protocol CredentialStore: Sendable {
    /// The credential filed under `key`, or `nil`.
    func credential(for key: CredentialKey) async throws -> Credential?
    /// Every stored credential, sorted by provider then label.
    func allCredentials() async throws -> [Credential]
    /// Stores `credential` under its ``Credential/key``, replacing any previous one.
    func save(_ credential: Credential) async throws
    /// Removes the credential under `key`; returns it, or `nil` if there was none.
    @discardableResult
    func remove(_ key: CredentialKey) async throws -> Credential?
}
