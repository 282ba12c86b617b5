/// The three OAuth 1.0a endpoints (RFC 5849 §2) and how this provider uses them.
///
/// Read by the `AuthKitOAuth1` module; declared here so one descriptor format
/// and one catalogue serve both protocols.
package struct OAuth1Endpoints: Sendable, Hashable {
    /// Temporary credential request endpoint (RFC 5849 §2.1).
    package var requestTokenURL: String
    /// Resource owner authorization endpoint (RFC 5849 §2.2); always asks the user.
    package var authorizeURL: String
    /// An alternative authorization endpoint that skips consent for returning
    /// users (Twitter's `/oauth/authenticate`), used when the caller asks for it.
    package var authenticateURL: String?
    /// Token request endpoint (RFC 5849 §2.3).
    package var accessTokenURL: String
    /// The HTTP method of the request-token call: `POST` (RFC 5849 §2.1's
    /// example, and what peers such as go-oauth and league/oauth1-client
    /// default to) or `GET`, for a server that documents only `GET`. The
    /// method is part of the signature base string (§3.4.1.1), so a server
    /// that refuses the one it was not written for refuses the signature.
    package var requestTokenMethod: String
    /// The HTTP method of the access-token call (§2.3), as for ``requestTokenMethod``.
    package var accessTokenMethod: String

    /// Why `method` cannot be a token call's, or `nil`: checked by the
    /// validator for files and by `OAuth1Client` for a descriptor built in code.
    package static func tokenCallMethodProblem(_ method: String) -> String? {
        ["GET", "POST"].contains(method)
            ? nil
            : "'\(method)' is not supported; use POST (the default) or GET, as the provider's documentation shows the call."
    }
    /// `HMAC-SHA1` (what Twitter requires), `HMAC-SHA256` or `PLAINTEXT`.
    package var signatureMethod: String
    /// Extra parameters for the request-token call, e.g. `{"x_auth_access_type": "read"}`.
    package var requestTokenParameters: [String: String]
    /// Require `oauth_callback_confirmed=true` in the request-token reply
    /// (RFC 5849 §2.1 makes it mandatory).
    package var requireCallbackConfirmed: Bool
    /// An endpoint that invalidates an access token when called with a request
    /// signed by that token (Twitter's `POST /1.1/oauth/invalidate_token`).
    /// RFC 5849 defines no revocation; without it revocation is not possible.
    package var invalidateTokenURL: String?
}
