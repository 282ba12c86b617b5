/// Where a token endpoint puts each field of its answer, and how strict to be.
///
/// Every member is optional in JSON; the defaults are RFC 6749 §5.1 and §5.2.
/// Qiita, for example, needs only `{"accessToken": "token", "scope": "scopes",
/// "requireTokenType": false}`.
public struct TokenResponseMapping: Codable, Sendable, Hashable {
    public var accessToken: FieldPaths?
    public var tokenType: FieldPaths?
    public var expiresIn: FieldPaths?
    public var refreshToken: FieldPaths?
    public var scope: FieldPaths?
    /// RFC 6749 §5.1 makes `token_type` required; some providers omit it
    /// (Qiita, Instagram), and then `Bearer` is assumed. Default `true`.
    public var requireTokenType: Bool?
    /// The member(s) holding an error code. A response containing one is an
    /// error even with HTTP 200 (GitHub, Slack). Default `error`.
    public var errorCode: FieldPaths?
    /// Default `error_description`.
    public var errorDescription: FieldPaths?
    /// Default `error_uri`.
    public var errorURI: FieldPaths?

    public init(
        accessToken: FieldPaths? = nil, tokenType: FieldPaths? = nil, expiresIn: FieldPaths? = nil,
        refreshToken: FieldPaths? = nil, scope: FieldPaths? = nil, requireTokenType: Bool? = nil,
        errorCode: FieldPaths? = nil, errorDescription: FieldPaths? = nil, errorURI: FieldPaths? = nil
    ) {
        self.accessToken = accessToken
        self.tokenType = tokenType
        self.expiresIn = expiresIn
        self.refreshToken = refreshToken
        self.scope = scope
        self.requireTokenType = requireTokenType
        self.errorCode = errorCode
        self.errorDescription = errorDescription
        self.errorURI = errorURI
    }

    var accessTokenPaths: FieldPaths { accessToken ?? "access_token" }
    var tokenTypePaths: FieldPaths { tokenType ?? "token_type" }
    var expiresInPaths: FieldPaths { expiresIn ?? "expires_in" }
    var refreshTokenPaths: FieldPaths { refreshToken ?? "refresh_token" }
    var scopePaths: FieldPaths { scope ?? "scope" }
    var tokenTypeIsRequired: Bool { requireTokenType ?? true }
    var errorCodePaths: FieldPaths { errorCode ?? "error" }
    var errorDescriptionPaths: FieldPaths { errorDescription ?? "error_description" }
    var errorURIPaths: FieldPaths { errorURI ?? "error_uri" }
}
