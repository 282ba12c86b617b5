import Crypto

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Access tokens that a refresh made because a resource server answered
/// `invalid_token` (RFC 6750 §3.1), and that the server refused as well,
/// with the server's origin (another API may take them).
///
/// Such a server refuses every token alike (an audience it was not given,
/// a clock that calls each new token not yet valid): refreshing on each of
/// its 401s spent one refresh per request, a rotation each at a provider
/// that rotates, until the token endpoint's rate limit refused everyone's.
/// For a while after, a 401 to one of these tokens is returned as it came,
/// without a refresh; a token that changes otherwise (due, another
/// process's refresh) is not held back. Process-wide, as a web backend
/// makes a ``CredentialSource`` per request. Held as SHA-256 digests of
/// the origin and the token.
enum RefusedRenewals {
    /// How long a refused renewal holds refreshes back.
    static let period: Duration = .seconds(300)
    /// At most this many are kept; the oldest go first.
    static let capacity = 256

    private static let held = LockedValue([SHA256.Digest: ContinuousClock.Instant]())

    static func contains(_ accessToken: String, at origin: String, now: ContinuousClock.Instant = .now) -> Bool {
        let digest = Self.digest(accessToken, origin)
        return held.withLock { $0[digest].map { $0 > now } ?? false }
    }

    static func insert(_ accessToken: String, at origin: String, now: ContinuousClock.Instant = .now) {
        let digest = Self.digest(accessToken, origin)
        held.withLock { held in
            held = held.filter { $0.value > now }
            if held.count >= capacity, let oldest = held.min(by: { $0.value < $1.value }) {
                held[oldest.key] = nil
            }
            held[digest] = now.advanced(by: period)
        }
    }

    private static func digest(_ accessToken: String, _ origin: String) -> SHA256.Digest {
        SHA256.hash(data: Data((origin + "\n" + accessToken).utf8))
    }
}
