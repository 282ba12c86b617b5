#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// When a credential is refreshed: a provider's own rules, as data.
///
/// - ``margin``: refresh when the access token expires within this many
///   seconds, so a request never carries a token that dies in flight (default 60).
///   A token issued for no longer than the margin is refreshed at half its
///   lifetime instead, whoever set the margin: otherwise every use would
///   refresh it.
/// - ``ahead``: refresh when less than this much of the token's life remains,
///   for long-lived tokens that die unless refreshed in time (Instagram's live
///   60 days and must be refreshed before they expire); 0 for none.
/// - ``minimumAge``: a token younger than this is not refreshed ahead of time
///   (Instagram refuses to refresh a token less than 24 hours old); a token
///   about to expire (within ``margin``) is refreshed whatever its age.
/// - ``assumedLifetime``: for a token whose answer gave no expiry (no
///   `expires_in`, RFC 6749 §5.1 makes it optional), a refresh is due once
///   it is this old (less ``margin``), when it can be refreshed: Salesforce's
///   tokens last the org's session timeout, which the client is never told,
///   and without this they were used until refused; 0 for none. Due, not
///   required: if that refresh fails, the token is still used.
///
/// A descriptor states them under `refreshPolicy` (`marginSeconds`,
/// `aheadSeconds`, `minimumAgeSeconds`, `assumedLifetimeSeconds`); a caller
/// can change the margin.
public struct RefreshPolicy: Sendable, Hashable {
    public var margin: TimeInterval
    public var ahead: TimeInterval
    public var minimumAge: TimeInterval
    public var assumedLifetime: TimeInterval

    public init(
        margin: TimeInterval = 60, ahead: TimeInterval = 0, minimumAge: TimeInterval = 0,
        assumedLifetime: TimeInterval = 0
    ) {
        self.margin = margin
        self.ahead = ahead
        self.minimumAge = minimumAge
        self.assumedLifetime = assumedLifetime
    }

    /// The token is about to expire (or has): it must be refreshed before use.
    public func mustRefresh(_ credential: Credential, at now: Date = Date()) -> Bool {
        credential.isExpired(at: now, margin: margin(for: credential))
    }

    /// ``margin``, or half the token's lifetime for a token issued for no
    /// longer than the margin (`expires_in` 30 against 60): such a token was
    /// otherwise about to expire from the moment it arrived, so every use
    /// refreshed it again (rotating the refresh token each time), and a
    /// failed refresh refused a token that still worked. A longer-lived
    /// token keeps the whole margin (64 s against 60: due after 4).
    func margin(for credential: Credential) -> TimeInterval {
        guard let expiresAt = credential.expiresAt else { return margin }
        let lifetime = expiresAt.timeIntervalSince(credential.obtainedAt)
        return lifetime > 0 && lifetime <= margin ? lifetime / 2 : margin
    }

    /// Refreshing now is due: it must, or it is inside the refresh-ahead
    /// window and old enough to be refreshed.
    public func isDue(_ credential: Credential, at now: Date = Date()) -> Bool {
        if mustRefresh(credential, at: now) { return true }
        guard let expiresAt = credential.expiresAt else {
            return assumedLifetime > 0 && credential.isRenewable
                && now.timeIntervalSince(credential.obtainedAt) >= assumedLifetime - margin
        }
        guard ahead > 0 else { return false }
        return expiresAt.timeIntervalSince(now) <= ahead && now.timeIntervalSince(credential.obtainedAt) >= minimumAge
    }
}
