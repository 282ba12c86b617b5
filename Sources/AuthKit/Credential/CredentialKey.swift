/// Identifies one stored credential: a provider and an optional account label.
public struct CredentialKey: Hashable, Sendable, Codable, CustomStringConvertible {
    public var providerID: String
    /// `nil` is the provider's default account.
    public var label: String?

    public init(providerID: String, label: String? = nil) {
        self.providerID = providerID
        self.label = label
    }

    public var description: String {
        label.map { "\(providerID) (\($0))" } ?? providerID
    }
}
