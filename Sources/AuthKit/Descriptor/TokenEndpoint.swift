/// The token endpoint (RFC 6749 §3.2) and how this provider wants to be asked.
public struct TokenEndpoint: Codable, Sendable, Hashable {
    public var url: String
    /// Body encoding. Default `form` (RFC 6749 §4.1.3); Qiita takes `json`.
    public var encoding: BodyEncoding?
    /// Default `basic` (RFC 6749 §2.3.1: servers MUST support it), unless the
    /// client has no secret, in which case `none`.
    public var clientAuthentication: ClientAuthentication?
    /// Send `grant_type`. Default `true`; Qiita takes none.
    public var sendGrantType: Bool?
    /// Send `redirect_uri` (RFC 6749 §4.1.3 requires it when it was in the
    /// authorization request). Default: the same as the authorization endpoint's setting.
    public var sendRedirectURI: Bool?
    /// Extra headers, e.g. GitHub's `{"Accept": "application/json"}`.
    public var headers: [String: String]?
    /// HTTP statuses that mean success. Default `[200]`; Qiita answers `201`.
    public var successStatus: [Int]?
    public var response: TokenResponseMapping?

    public init(
        url: String, encoding: BodyEncoding? = nil, clientAuthentication: ClientAuthentication? = nil,
        sendGrantType: Bool? = nil, sendRedirectURI: Bool? = nil, headers: [String: String]? = nil,
        successStatus: [Int]? = nil, response: TokenResponseMapping? = nil
    ) {
        self.url = url
        self.encoding = encoding
        self.clientAuthentication = clientAuthentication
        self.sendGrantType = sendGrantType
        self.sendRedirectURI = sendRedirectURI
        self.headers = headers
        self.successStatus = successStatus
        self.response = response
    }
}
