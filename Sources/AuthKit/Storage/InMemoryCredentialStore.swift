/// A ``CredentialStore`` that forgets everything when the process ends, for
/// tests and short-lived tools: `credentials` to begin with (the last of
/// two under one key wins). Its API is the protocol's, so it is reached
/// through this function, as transports are through `platformHTTPClient(timeout:)`.
public func inMemoryCredentialStore(_ credentials: [Credential] = []) -> any CredentialStore {
    InMemoryCredentialStore(credentials)
}

/// What ``inMemoryCredentialStore(_:)`` returns.
package actor InMemoryCredentialStore: CredentialStore {
    private var credentials: [CredentialKey: Credential]

    package init(_ credentials: [Credential] = []) {
        self.credentials = Dictionary(credentials.map { ($0.key, $0) }, uniquingKeysWith: { _, last in last })
    }

    package func credential(for key: CredentialKey) -> Credential? { credentials[key] }

    package func allCredentials() -> [Credential] {
        credentials.values.sorted(by: CredentialFile.order)
    }

    package func save(_ credential: Credential) { credentials[credential.key] = credential }

    @discardableResult
    package func remove(_ key: CredentialKey) -> Credential? { credentials.removeValue(forKey: key) }
}
