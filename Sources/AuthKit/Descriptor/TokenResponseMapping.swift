/// Where a token endpoint puts each field of its answer, and how strict to be
/// (RFC 6749 §5.1 and §5.2 names unless the descriptor says otherwise: Qiita
/// puts the token at `token`, Instagram at `access_token` or `data[0].access_token`).
///
/// A class, immutable: every token call's parser holds the endpoint's
/// mapping, and a struct of eleven members was copied whole (eleven
/// reference counts raised, then dropped) each time a parser was made or
/// passed into a closure, several times per refresh (counted with a uprobe
/// on `swift_retain`); a reference is one count. Equal by value.
package final class TokenResponseMapping: Sendable, Hashable {
    package let accessToken: FieldPaths
    package let tokenType: FieldPaths
    package let expiresIn: FieldPaths
    package let refreshToken: FieldPaths
    /// Seconds the refresh token lives (GitHub: `refresh_token_expires_in`,
    /// six months): when the user will have to sign in again.
    package let refreshTokenExpiresIn: FieldPaths
    package let scope: FieldPaths
    /// RFC 6749 §5.1 makes `token_type` required; some providers omit it
    /// (Qiita, Instagram), and then `Bearer` is assumed.
    package let requireTokenType: Bool
    /// The token is sent as a Bearer token whatever `token_type` says: a
    /// provider that names its token kind there (Slack: `user`, `bot`) rather
    /// than how to present it.
    package let assumeBearer: Bool
    /// The member(s) holding an error code. A response containing one is an
    /// error even with HTTP 200 (GitHub, Slack).
    package let errorCode: FieldPaths
    package let errorDescription: FieldPaths
    package let errorURI: FieldPaths
    /// The HTTP status the provider answers errors with, when it is not
    /// RFC 6749 §5.2's 400 (401 for `invalid_client`): GitHub and Slack answer
    /// 200 with an error field. AuthKit reads an error code whatever the
    /// status; the sandbox answers with this one. `nil`: RFC 6749.
    package let errorStatus: Int?

    package init(
        accessToken: FieldPaths, tokenType: FieldPaths, expiresIn: FieldPaths, refreshToken: FieldPaths,
        refreshTokenExpiresIn: FieldPaths, scope: FieldPaths, requireTokenType: Bool, assumeBearer: Bool,
        errorCode: FieldPaths, errorDescription: FieldPaths, errorURI: FieldPaths, errorStatus: Int?
    ) {
        (self.accessToken, self.tokenType, self.expiresIn) = (accessToken, tokenType, expiresIn)
        (self.refreshToken, self.refreshTokenExpiresIn, self.scope) = (refreshToken, refreshTokenExpiresIn, scope)
        (self.requireTokenType, self.assumeBearer) = (requireTokenType, assumeBearer)
        (self.errorCode, self.errorDescription, self.errorURI) = (errorCode, errorDescription, errorURI)
        self.errorStatus = errorStatus
    }

    /// This mapping with `requireTokenType` set to `required`.
    package func requiringTokenType(_ required: Bool) -> TokenResponseMapping {
        TokenResponseMapping(
            accessToken: accessToken, tokenType: tokenType, expiresIn: expiresIn, refreshToken: refreshToken,
            refreshTokenExpiresIn: refreshTokenExpiresIn, scope: scope, requireTokenType: required,
            assumeBearer: assumeBearer, errorCode: errorCode, errorDescription: errorDescription,
            errorURI: errorURI, errorStatus: errorStatus)
    }

    package static func == (a: TokenResponseMapping, b: TokenResponseMapping) -> Bool {
        a === b
            || (a.accessToken == b.accessToken && a.tokenType == b.tokenType && a.expiresIn == b.expiresIn
                && a.refreshToken == b.refreshToken && a.refreshTokenExpiresIn == b.refreshTokenExpiresIn
                && a.scope == b.scope && a.requireTokenType == b.requireTokenType && a.assumeBearer == b.assumeBearer
                && a.errorCode == b.errorCode && a.errorDescription == b.errorDescription && a.errorURI == b.errorURI
                && a.errorStatus == b.errorStatus)
    }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(accessToken)
        hasher.combine(tokenType)
        hasher.combine(expiresIn)
        hasher.combine(refreshToken)
        hasher.combine(refreshTokenExpiresIn)
        hasher.combine(scope)
        hasher.combine(requireTokenType)
        hasher.combine(assumeBearer)
        hasher.combine(errorCode)
        hasher.combine(errorDescription)
        hasher.combine(errorURI)
        hasher.combine(errorStatus)
    }

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
