/// A request the emulation refuses, as an OAuth error (RFC 6749 §5.2,
/// RFC 6750 §3.1, RFC 8628 §3.5): written in the provider's shape by
/// ``ProviderShape`` with the status a standard server uses.
struct Refusal: Error, Sendable {
    var code: String
    var description: String
    var status: Int
    /// Headers the answer carries (a `DPoP-Nonce`).
    var headers: [(String, String)] = []

    init(_ code: String, _ description: String, status: Int? = nil) {
        self.code = code
        self.description = description
        self.status = status ?? (code == "invalid_client" || code == "invalid_token" ? 401 : 400)
    }

    static func invalidRequest(_ description: String) -> Refusal { Refusal("invalid_request", description) }
    static func invalidGrant(_ description: String) -> Refusal { Refusal("invalid_grant", description) }
    static func invalidClient(_ description: String) -> Refusal { Refusal("invalid_client", description) }
}
