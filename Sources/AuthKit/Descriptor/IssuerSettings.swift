/// The authorization server's issuer identifier, for mix-up protection (RFC 9207).
public struct IssuerSettings: Codable, Sendable, Hashable {
    /// The issuer identifier (RFC 8414 §2 `issuer`), compared by simple string comparison.
    public var identifier: String
    /// The server sends `iss` in every authorization response
    /// (`authorization_response_iss_parameter_supported`); a response without one is rejected.
    public var includedInResponse: Bool?

    public init(identifier: String, includedInResponse: Bool? = nil) {
        self.identifier = identifier
        self.includedInResponse = includedInResponse
    }
}
