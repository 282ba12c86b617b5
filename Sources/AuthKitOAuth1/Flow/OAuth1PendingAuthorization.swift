#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What must be kept between sending the user to the provider and their
/// return: the temporary credentials of RFC 5849 §2.1 and the callback they
/// were registered with.
///
/// A web backend stores it in the user's server-side session (it is `Codable`);
/// it holds the request token's secret, so it must not go into a cookie or a URL.
/// `description` masks the secret.
public struct OAuth1PendingAuthorization: Codable, Sendable, Hashable, CustomStringConvertible {
    public var providerID: String
    /// `oauth_token` from the request-token reply; the callback must carry the same value.
    public var requestToken: String
    /// `oauth_token_secret` from the request-token reply; signs the access-token request.
    public var requestTokenSecret: String
    /// The `oauth_callback` sent: a URL, or `oob` for the PIN flow.
    public var redirectURI: String
    public var createdAt: Date
    /// The consumer key (client id) that got the request token, and the
    /// access-token endpoint it is to be redeemed at: another client's
    /// ``OAuth1Client`` refuses the attempt rather than send its request
    /// token and verifier. `nil` in an attempt an older version kept.
    public var consumerKey: String?
    public var accessTokenURL: String?

    public init(
        providerID: String, requestToken: String, requestTokenSecret: String, redirectURI: String, createdAt: Date,
        consumerKey: String? = nil, accessTokenURL: String? = nil
    ) {
        self.providerID = providerID
        self.requestToken = requestToken
        self.requestTokenSecret = requestTokenSecret
        self.redirectURI = redirectURI
        self.createdAt = createdAt
        self.consumerKey = consumerKey
        self.accessTokenURL = accessTokenURL
    }

    /// True for the out-of-band (PIN) flow.
    public var isOutOfBand: Bool { redirectURI == OAuth1Client.outOfBand }

    public var description: String {
        "OAuth1PendingAuthorization(provider: \(providerID), redirect: \(isOutOfBand ? "oob" : URL(string: redirectURI)?.redactedForLogs ?? "(invalid)"), request token secret: ••••)"
    }
}

/// `dump`, `Mirror` and a debugger list stored properties, not `description`:
/// the request token secret would show there.
extension OAuth1PendingAuthorization: CustomReflectable {
    public var customMirror: Mirror { Mirror(self, children: ["description": description]) }
}
