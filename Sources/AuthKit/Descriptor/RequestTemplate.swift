/// A provider-specific HTTP call described as data: Instagram's long-lived
/// token exchange, its refresh, Qiita's `DELETE` revocation.
///
/// Parameter values, header values and the URL may contain variables in braces,
/// filled in when the call is made: `{access_token}`, `{refresh_token}`,
/// `{client_id}`, `{client_secret}`, `{redirect_uri}`, and the descriptor's
/// host placeholders (`{team}`). Only descriptor text is ever rendered; values
/// substituted into it are not scanned again.
package struct RequestTemplate: Sendable, Hashable {
    package var url: String
    /// `POST`, or `GET` when `encoding` is `query` (unless the file says otherwise).
    package var method: String
    package var encoding: BodyEncoding
    package var parameters: [String: String]
    package var headers: [String: String]
    /// `nil`: no client authentication is added (the template's own
    /// parameters carry what the provider wants).
    package var clientAuthentication: ClientAuthentication?
    /// HTTP statuses that mean success.
    package var successStatus: [Int]
    /// Where the answer's fields are, when the call returns a token (or an error).
    package var response: TokenResponseMapping
    /// The file says the provider takes the template's secrets only in the
    /// URL (`encoding` `query`: Instagram's Graph API); without it, such a
    /// template is refused when the file is read.
    package var secretsInURL = false
    /// A `revocation` that named no parameters of its own, so RFC 7009's:
    /// revoking a credential then revokes its refresh token first, where it
    /// has one (``OAuth2Client/revoke(_:)``). One that names its own is sent as named.
    package var isRFC7009Revocation = false

    /// RFC 7009 §2.1's revocation of the access token: what a descriptor's
    /// `revocation` sends when it names no parameters of its own.
    package static let revokingAccessToken = ["token": "{access_token}", "token_type_hint": "access_token"]
    /// The same for the refresh token, which RFC 7009 §2.1 says also ends
    /// the access tokens of its grant where the server can revoke them.
    package static let revokingRefreshToken = ["token": "{refresh_token}", "token_type_hint": "refresh_token"]

    /// This RFC 7009 revocation, for the refresh token.
    package var revokingRefreshToken: RequestTemplate {
        var template = self
        template.parameters = Self.revokingRefreshToken
        return template
    }

    /// Whether the call sends the access token and not the refresh token
    /// (Twitch's and Dropbox's revocations): an expired access token is then
    /// refused, where a refresh token would still be taken.
    package var sendsOnlyTheAccessToken: Bool {
        let texts = [url] + Array(parameters.values) + Array(headers.values)
        return texts.contains { $0.contains("{access_token}") } && !texts.contains { $0.contains("{refresh_token}") }
    }

    /// The parameters in a stable order (by name), as they are sent.
    package var orderedParameters: [(String, String)] {
        parameters.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }
}
