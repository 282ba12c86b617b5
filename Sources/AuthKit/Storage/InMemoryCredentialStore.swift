/// A ``CredentialStore`` that forgets everything when the process ends.
public actor InMemoryCredentialStore: CredentialStore {
    private var credentials: [CredentialKey: Credential]

    public init(_ credentials: [Credential] = []) {
        self.credentials = Dictionary(credentials.map { ($0.key, $0) }, uniquingKeysWith: { _, last in last })
    }

    public func credential(for key: CredentialKey) -> Credential? { credentials[key] }

    public func allCredentials() -> [Credential] {
        credentials.values.sorted(by: CredentialFile.order)
    }

    public func save(_ credential: Credential) { credentials[credential.key] = credential }

    @discardableResult
    public func remove(_ key: CredentialKey) -> Credential? { credentials.removeValue(forKey: key) }
}
