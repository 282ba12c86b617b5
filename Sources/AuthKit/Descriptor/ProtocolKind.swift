/// The protocol a provider speaks; chooses the flow engine that runs it.
public enum ProtocolKind: String, Codable, Sendable, Hashable, CaseIterable {
    /// OAuth 2.0 authorization code grant (RFC 6749 §4.1), with PKCE (RFC 7636) where supported.
    case oauth2
    /// OAuth 1.0a three-legged flow (RFC 5849), as Twitter/X uses it.
    case oauth1
}
