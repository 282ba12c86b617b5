/// The authorization endpoint (RFC 6749 §3.1) and what to send there.
public struct AuthorizationEndpoint: Codable, Sendable, Hashable {
    public var url: String
    /// Send `redirect_uri`. Default `true`; Qiita uses the registered one and takes none.
    public var sendRedirectURI: Bool?
    /// Send `response_type=code`. Default `true`; Qiita takes none.
    public var sendResponseType: Bool?
    /// Extra fixed parameters, e.g. Google's `{"access_type": "offline"}`.
    public var parameters: [String: String]?

    public init(url: String, sendRedirectURI: Bool? = nil, sendResponseType: Bool? = nil, parameters: [String: String]? = nil) {
        self.url = url
        self.sendRedirectURI = sendRedirectURI
        self.sendResponseType = sendResponseType
        self.parameters = parameters
    }
}
