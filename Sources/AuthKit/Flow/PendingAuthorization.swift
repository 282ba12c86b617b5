#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// One authorization attempt between "send the user to the provider" and
/// "the provider sent the user back", OAuth 2.0's or OAuth 1.0a's (whose
/// request token is its `state`, and whose request token secret it keeps
/// as it keeps a PKCE verifier).
///
/// `Codable` and `Sendable` so a web backend can keep it in its session store
/// between the two requests, even across server instances: in the session of
/// the browser that started it, found by `state` there. Found by `state`
/// alone, any browser could finish it, and a victim sent the callback link
/// of someone else's sign-in is signed in as them (login CSRF, RFC 6749
/// §10.12); `AuthKitServer` binds each attempt to its browser's cookie.
/// It holds the PKCE verifier, which is a secret: store it server-side only,
/// never in a cookie the browser can read. Delete it once used: `state` is single-use.
public struct PendingAuthorization: Codable, Sendable, Hashable {
    /// The descriptor id the attempt was started with (RFC 9700 §4.4 mix-up defence).
    public var providerID: String
    /// The CSRF token sent as `state` (RFC 6749 §10.12): 256 random bits.
    public var state: String
    /// The PKCE verifier (RFC 7636 §4.1), when PKCE is used.
    public var codeVerifier: String?
    /// The exact `redirect_uri` sent; the token request repeats it (RFC 6749 §4.1.3).
    public var redirectURI: String
    /// The issuer the response's `iss` must equal (RFC 9207 §2.4).
    public var expectedIssuer: String?
    /// Reject a response without `iss` (the provider always sends it).
    public var issuerRequired: Bool
    /// Scopes requested, used when the token response does not list the granted ones.
    public var scopes: [String]
    public var createdAt: Date
    /// The OpenID Connect `nonce` sent with the request (Core §3.1.2.1), which
    /// the ID token must carry back; `nil` when no ID token was asked for.
    public var nonce: String?
    /// The `max_age` the request sent (Core §3.1.2.1), in seconds: the ID
    /// token's `auth_time` must then be present and no older (§3.1.3.7 step 13).
    public var maxAge: Int?
    /// The key the token request will prove and the token be bound to
    /// (DPoP, RFC 9449), made with the attempt so that `dpop_jkt` can bind
    /// the code to it (§10). A secret, as the PKCE verifier is.
    package var proofKey: ProofKey?
    /// The client id and token endpoint (placeholders filled) of the client
    /// that started the attempt: the provider id alone let another client
    /// of the same descriptor (another tenant's `{host}`, another client
    /// id) exchange the code, sending it and the PKCE verifier to its own
    /// token endpoint (the outcome of a mix-up, RFC 9700 §4.4). `nil` in an
    /// attempt stored by an earlier version, which is not held to them.
    package var clientID: String?
    package var tokenEndpoint: String?
    /// For an "any tenant" endpoint (no ``expectedIssuer``), what a present
    /// `iss` must begin and end with, one tenant between them.
    package var issuerPrefix: String?
    package var issuerSuffix: String?
    /// OAuth 1.0a: the request token's secret (RFC 5849 §2.1), which signs
    /// the access token request; the request token itself is ``state``,
    /// which the callback's `oauth_token` must equal. A secret, as the
    /// PKCE verifier is.
    package var requestTokenSecret: String?

    public init(
        providerID: String, state: String, codeVerifier: String?, redirectURI: String,
        expectedIssuer: String?, issuerRequired: Bool, scopes: [String], createdAt: Date, nonce: String? = nil,
        maxAge: Int? = nil
    ) {
        self.nonce = nonce
        self.maxAge = maxAge
        self.providerID = providerID
        self.state = state
        self.codeVerifier = codeVerifier
        self.redirectURI = redirectURI
        self.expectedIssuer = expectedIssuer
        self.issuerRequired = issuerRequired
        self.scopes = scopes
        self.createdAt = createdAt
    }
}

/// `print(pending)`, `"\(pending)"` and `dump(pending)` in a log show what
/// identifies the attempt, not its secrets: the PKCE verifier, `state` and
/// `nonce` are masked, the DPoP key is only said to be there.
extension PendingAuthorization: CustomStringConvertible, CustomReflectable {
    public var description: String {
        var parts = ["provider: \(providerID)", "redirect URI: \(redirectURI)", "state: ••••"]
        if codeVerifier != nil { parts.append("code verifier: ••••") }
        if nonce != nil { parts.append("nonce: ••••") }
        if proofKey != nil { parts.append("bound to a DPoP key") }
        if !scopes.isEmpty { parts.append("scopes: \(scopes.joined(separator: " "))") }
        return "PendingAuthorization(" + parts.joined(separator: ", ") + ")"
    }

    public var customMirror: Mirror { Mirror(self, children: ["description": description]) }
}
