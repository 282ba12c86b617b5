import AuthKit

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// An OAuth 1.0a attempt is a ``AuthKit/PendingAuthorization`` too: what
/// must be kept between sending the user to the provider and their return,
/// the temporary credentials of RFC 5849 §2.1 and the callback they were
/// registered with. Its `state` is the request token; the request token's
/// secret is kept as a PKCE verifier is (never printed, never in a cookie or
/// a URL); `redirectURI` is the callback, or `oob` for the PIN flow.
extension PendingAuthorization {
    package init(
        providerID: String, requestToken: String, requestTokenSecret: String, redirectURI: String, createdAt: Date,
        consumerKey: String? = nil, accessTokenURL: String? = nil
    ) {
        self.init(
            providerID: providerID, state: requestToken, codeVerifier: nil, redirectURI: redirectURI,
            expectedIssuer: nil, issuerRequired: false, scopes: [], createdAt: createdAt)
        self.requestTokenSecret = requestTokenSecret
        self.clientID = consumerKey
        self.tokenEndpoint = accessTokenURL
    }

    /// The request token (RFC 5849 §2.1) of an OAuth 1.0a attempt: its `state`.
    public var requestToken: String { state }

    /// Whether the attempt uses the out-of-band (PIN) flow.
    public var isOutOfBand: Bool { redirectURI == OAuth1Client.outOfBand }

    /// The consumer key and access token endpoint of the client that
    /// started it (`nil` in an attempt stored by an earlier version).
    var consumerKey: String? { clientID }
    var accessTokenURL: String? { tokenEndpoint }
}
