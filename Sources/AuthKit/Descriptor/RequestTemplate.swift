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

    /// The parameters in a stable order (by name), as they are sent.
    package var orderedParameters: [(String, String)] {
        parameters.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }
}
