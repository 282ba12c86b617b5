/// A provider-specific HTTP call described as data: Instagram's long-lived
/// token exchange, its refresh, Qiita's `DELETE` revocation.
///
/// Parameter values, header values and the URL may contain variables in braces,
/// filled in when the call is made:
/// `{access_token}`, `{refresh_token}`, `{client_id}`, `{client_secret}`,
/// `{redirect_uri}`, and the descriptor's host placeholders (`{team}`).
/// Every member but `url` is optional; the context (refresh, revocation,
/// follow-up) supplies the defaults documented on the descriptor field.
public struct RequestTemplate: Codable, Sendable, Hashable {
    public var url: String
    /// HTTP method. Default `POST`, or `GET` when `encoding` is `query`.
    public var method: String?
    /// Where the parameters go. Default `form`.
    public var encoding: BodyEncoding?
    public var parameters: [String: String]?
    public var headers: [String: String]?
    /// Default: the token endpoint's client authentication.
    public var clientAuthentication: ClientAuthentication?
    /// HTTP statuses that mean success. Default `[200]`.
    public var successStatus: [Int]?
    /// Where the answer's fields are, when the call returns a token.
    public var response: TokenResponseMapping?

    public init(
        url: String, method: String? = nil, encoding: BodyEncoding? = nil, parameters: [String: String]? = nil,
        headers: [String: String]? = nil, clientAuthentication: ClientAuthentication? = nil,
        successStatus: [Int]? = nil, response: TokenResponseMapping? = nil
    ) {
        self.url = url
        self.method = method
        self.encoding = encoding
        self.parameters = parameters
        self.headers = headers
        self.clientAuthentication = clientAuthentication
        self.successStatus = successStatus
        self.response = response
    }

    var resolvedEncoding: BodyEncoding { encoding ?? .form }
    var resolvedMethod: String { (method ?? (resolvedEncoding == .query ? "GET" : "POST")).uppercased() }
}
