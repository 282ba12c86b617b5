/// Whether the provider supports Proof Key for Code Exchange (RFC 7636).
///
/// AuthKit only ever sends `S256`: RFC 9700 §2.1.1 says clients SHOULD NOT use
/// `plain` when S256 is possible, and every PKCE server supports S256.
public enum PKCEMode: String, Codable, Sendable, Hashable {
    /// The provider does not support PKCE; no challenge is sent.
    case none
    /// S256 is supported and used.
    case s256 = "S256"
    /// S256 is required by the provider; used as with `S256`.
    case required

    public var isEnabled: Bool { self != .none }
}
