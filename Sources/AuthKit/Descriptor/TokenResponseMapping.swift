/// Where a token endpoint puts each field of its answer, and how strict to be
/// (RFC 6749 §5.1 and §5.2 names unless the descriptor says otherwise: Qiita
/// puts the token at `token`, Instagram at `access_token` or `data[0].access_token`).
package struct TokenResponseMapping: Sendable, Hashable {
    package var accessToken: FieldPaths
    package var tokenType: FieldPaths
    package var expiresIn: FieldPaths
    package var refreshToken: FieldPaths
    /// Seconds the refresh token lives (GitHub: `refresh_token_expires_in`,
    /// six months): when the user will have to sign in again.
    package var refreshTokenExpiresIn: FieldPaths
    package var scope: FieldPaths
    /// RFC 6749 §5.1 makes `token_type` required; some providers omit it
    /// (Qiita, Instagram), and then `Bearer` is assumed.
    package var requireTokenType: Bool
    /// The token is sent as a Bearer token whatever `token_type` says: a
    /// provider that names its token kind there (Slack: `user`, `bot`) rather
    /// than how to present it.
    package var assumeBearer: Bool
    /// The member(s) holding an error code. A response containing one is an
    /// error even with HTTP 200 (GitHub, Slack).
    package var errorCode: FieldPaths
    package var errorDescription: FieldPaths
    package var errorURI: FieldPaths
    /// The HTTP status the provider answers errors with, when it is not
    /// RFC 6749 §5.2's 400 (401 for `invalid_client`): GitHub and Slack answer
    /// 200 with an error field. AuthKit reads an error code whatever the
    /// status; the sandbox answers with this one. `nil`: RFC 6749.
    package var errorStatus: Int?

    /// Where this mapping reads what describes a token (RFC 6749 §5.1: the
    /// token, its type, its lifetime, the refresh token and its lifetime,
    /// the scope): a later answer that does not repeat one of them must not
    /// inherit the earlier answer's (``TokenEndpointCalls``).
    package var tokenDescriptionPaths: [FieldPath] {
        [accessToken, tokenType, expiresIn, refreshToken, refreshTokenExpiresIn, scope].flatMap(\.paths)
    }

    /// RFC 6749's own names: what a descriptor without a `response` gets.
    /// (Made by the same resolution as a file's, so the defaults stay in one place.)
    package static let standard = DescriptorFile.resolve(nil, over: nil)
}
