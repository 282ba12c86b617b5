/// The endpoints of an OAuth 2.0 descriptor and the closed choices they use.

/// The token endpoint (RFC 6749 §3.2) and how this provider wants to be asked.
package struct TokenEndpoint: Sendable, Hashable {
    package var url: String
    /// Body encoding: `form` (RFC 6749 §4.1.3); Qiita takes `json`.
    package var encoding: BodyEncoding
    /// How a client with a secret authenticates.
    package var clientAuthentication: ClientAuthentication
    /// The `aud` of a client assertion (`client_secret_jwt`,
    /// `private_key_jwt`): the token endpoint's URL (RFC 7523 §3 allows it,
    /// Okta requires it), or the issuer identifier, which
    /// draft-ietf-oauth-rfc7523bis makes the sole audience and FAPI 2.0 and
    /// strict servers (Connect2id's) require.
    package var assertionAudience: AssertionAudience
    /// How a client without one (a public client) identifies itself, here
    /// and wherever else it authenticates (device grant, refresh,
    /// revocation): `none`, only `client_id` in the body (RFC 6749 §3.2.1),
    /// or `basic`, HTTP Basic with the id and an empty password, which
    /// Reddit requires of its installed apps (a request without Basic gets 401).
    package var publicClientAuthentication: ClientAuthentication
    /// The provider has no public clients (RFC 6749 §2.1): it refuses a code
    /// exchange or a refresh without the client secret. A sign-in without
    /// one is then refused before the browser opens, where the provider
    /// would refuse it only after the user had approved. `false` where
    /// public clients exist, and where the documentation does not say.
    package var requiresClientSecret: Bool
    /// The same, for a refresh (RFC 6749 §6) at the token endpoint: Twitch
    /// refuses a code exchange without the secret, but refreshes a public
    /// client's (device-grant) token without one.
    package var refreshRequiresClientSecret: Bool
    /// The error codes with which the provider refuses a refresh token
    /// that no longer works, so the user must sign in again
    /// (``AuthKitError/Code/signInRequired``): RFC 6749 §5.2's
    /// `invalid_grant`, and the descriptor's own (GitHub answers an expired
    /// or spent one with `bad_refresh_token`, said as a provider error until
    /// then, and nobody was asked to sign in again).
    package var refreshRefusedErrors: [String]
    /// Send `grant_type`; Qiita takes none.
    package var sendGrantType: Bool
    /// Send `redirect_uri` (RFC 6749 §4.1.3 requires it when it was in the authorization request).
    package var sendRedirectURI: Bool
    /// Extra headers, e.g. GitHub's `{"Accept": "application/json"}`.
    package var headers: [String: String]
    /// HTTP statuses that mean success; Qiita answers `201`.
    package var successStatus: [Int]
    package var response: TokenResponseMapping
}

/// The device authorization endpoint (RFC 8628 §3.1), for signing in where
/// no browser can reach a redirect: the device shows a code, the user enters it
/// on another device. Polling happens at the token endpoint.
package struct DeviceEndpoint: Sendable, Hashable {
    package var url: String
    /// Body encoding of the device authorization request and of the polls;
    /// the token endpoint's unless the descriptor says otherwise.
    package var encoding: BodyEncoding
    /// How the client authenticates in both; the token endpoint's unless the
    /// descriptor says otherwise (GitHub's device flow takes the client id alone).
    package var clientAuthentication: ClientAuthentication
    /// As ``TokenEndpoint/requiresClientSecret``, for this grant; the token
    /// endpoint's unless the descriptor says otherwise (GitHub's device flow
    /// needs no secret, its code exchange does).
    package var requiresClientSecret: Bool
    /// The parameter that carries the requested scopes in the device
    /// authorization request: `scope` (RFC 8628 §3.1), or Twitch's `scopes`.
    package var scopeParameter: String
    /// Send the scopes again in each poll of the token endpoint, as Twitch
    /// lists them there; RFC 8628 §3.4 has none.
    package var sendScopesWhenPolling: Bool
}

/// How the client proves its identity to the token endpoint (RFC 6749 §2.3).
package enum ClientAuthentication: String, Codable, Sendable, Hashable, CaseIterable {
    /// HTTP Basic with the form-urlencoded id and secret (RFC 6749 §2.3.1) — `client_secret_basic`.
    case basic
    /// `client_id` and `client_secret` in the request body — `client_secret_post`.
    case post
    /// A public client: only `client_id` is sent, in the body (RFC 6749 §3.2.1); PKCE protects the code.
    case none
    /// A JWT signed with the client secret (HS256; RFC 7523 §2.2, OpenID
    /// Connect Core §9), so that the secret itself never travels.
    case clientSecretJWT = "client_secret_jwt"
    /// A JWT signed with the client's private key (RFC 7523 §2.2, Core §9).
    /// A client whose settings name a private key file authenticates this
    /// way wherever it authenticates, whatever the descriptor prefers.
    case privateKeyJWT = "private_key_jwt"
}

/// What a client assertion names as its audience (RFC 7523 §3).
package enum AssertionAudience: String, Codable, Sendable, Hashable, CaseIterable {
    /// The token endpoint's URL.
    case tokenEndpoint
    /// The descriptor's `issuer.identifier`.
    case issuer
}

/// Whether tokens are bound to a key the client holds (DPoP, RFC 9449).
package enum DPoPMode: String, Codable, Sendable, Hashable, CaseIterable {
    /// Bearer tokens (RFC 6750).
    case off
    /// Every token request carries a DPoP proof and asks for a DPoP-bound
    /// token; an answer of another type is refused (RFC 9449 §5).
    case on
}

/// How request parameters are carried.
package enum BodyEncoding: String, Codable, Sendable, Hashable, CaseIterable {
    /// `application/x-www-form-urlencoded` body (RFC 6749 §4.1.3, the standard).
    case form
    /// `application/json` body (Qiita's token endpoint).
    case json
    /// In the URL's query string, no body (Instagram's GET long-lived token exchange).
    case query
}

/// The authorization endpoint (RFC 6749 §3.1) and what to send there.
package struct AuthorizationEndpoint: Sendable, Hashable {
    package var url: String
    /// Send `redirect_uri`; Qiita uses the registered one and takes none.
    package var sendRedirectURI: Bool
    /// Send `response_type=code`; Qiita takes none.
    package var sendResponseType: Bool
    /// The parameter that carries the requested scopes: `scope` (RFC 6749
    /// §3.3), or Slack's `user_scope`, where `scope` asks for bot scopes.
    package var scopeParameter: String
    /// The redirect's parameter that names the scopes the user granted, for
    /// a provider whose token answer does not (Strava lets the user untick
    /// some, and says which in `scope`); the credential records those.
    package var grantedScopesParameter: String?
    /// Extra fixed parameters, e.g. Google's `{"access_type": "offline"}`.
    package var parameters: [String: String]
    /// The pushed authorization request endpoint (RFC 9126 §2): when the
    /// descriptor names one, every sign-in posts its parameters there first
    /// and the browser gets only `client_id` and the `request_uri` it answers.
    package var pushedRequestURL: String?
}
