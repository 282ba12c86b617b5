/// The three OAuth 1.0a endpoints (RFC 5849 §2) and how this provider uses them.
///
/// Read by the `AuthKitOAuth1` module; declared here so one descriptor format
/// and one catalogue serve both protocols.
public struct OAuth1Endpoints: Codable, Sendable, Hashable {
    /// Temporary credential request endpoint (RFC 5849 §2.1).
    public var requestTokenURL: String
    /// Resource owner authorization endpoint (RFC 5849 §2.2); always asks the user.
    public var authorizeURL: String
    /// An alternative authorization endpoint that skips consent for returning
    /// users (Twitter's `/oauth/authenticate`), used when the caller asks for it.
    public var authenticateURL: String?
    /// Token request endpoint (RFC 5849 §2.3).
    public var accessTokenURL: String
    /// `HMAC-SHA1` (default; what Twitter requires), `HMAC-SHA256` or `PLAINTEXT`.
    public var signatureMethod: String?
    /// Extra parameters for the request-token call, e.g. `{"x_auth_access_type": "read"}`.
    public var requestTokenParameters: [String: String]?
    /// Require `oauth_callback_confirmed=true` in the request-token reply
    /// (RFC 5849 §2.1 makes it mandatory). Default `true`.
    public var requireCallbackConfirmed: Bool?
    /// An endpoint that invalidates an access token when called with a request
    /// signed by that token (Twitter's `POST /1.1/oauth/invalidate_token`).
    /// RFC 5849 defines no revocation; without this field `revoke` is unsupported.
    public var invalidateTokenURL: String?

    public init(
        requestTokenURL: String, authorizeURL: String, authenticateURL: String? = nil, accessTokenURL: String,
        signatureMethod: String? = nil, requestTokenParameters: [String: String]? = nil,
        requireCallbackConfirmed: Bool? = nil, invalidateTokenURL: String? = nil
    ) {
        self.requestTokenURL = requestTokenURL
        self.authorizeURL = authorizeURL
        self.authenticateURL = authenticateURL
        self.accessTokenURL = accessTokenURL
        self.signatureMethod = signatureMethod
        self.requestTokenParameters = requestTokenParameters
        self.requireCallbackConfirmed = requireCallbackConfirmed
        self.invalidateTokenURL = invalidateTokenURL
    }
}
