import AuthKit

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Where `oauth_nonce` and `oauth_timestamp` come from (RFC 5849 §3.3).
///
/// Injectable so tests can reproduce published signatures byte for byte; in
/// production use ``live``: "the nonce value MUST be unique across all requests
/// with the same timestamp" and the timestamp is "the number of seconds since
/// January 1, 1970 00:00:00 GMT".
///
/// Not part of the stable API: `@_spi(Reproducible) import AuthKitOAuth1`
/// reaches it, for a test or benchmark that must reproduce a published
/// signature (`authkit sign --nonce --timestamp` does the same).
@_spi(Reproducible) public struct NonceAndTimestamp: Sendable {
    public var nonce: @Sendable () -> String
    public var timestamp: @Sendable () -> String

    public init(nonce: @escaping @Sendable () -> String, timestamp: @escaping @Sendable () -> String) {
        self.nonce = nonce
        self.timestamp = timestamp
    }

    /// 128 random bits from the system's CSPRNG (``SecureRandom``) as 32 hex digits, and the current time.
    ///
    /// Hex keeps the nonce to letters and digits, which every server accepts
    /// (oauthlib's default validator, for one, rejects other characters).
    public static let live = NonceAndTimestamp(
        nonce: { randomNonce() },
        timestamp: { String(time(nil)) })

    /// The same nonce and timestamp for every request: for tests and published examples only.
    public static func fixed(nonce: String, timestamp: String) -> NonceAndTimestamp {
        NonceAndTimestamp(nonce: { nonce }, timestamp: { timestamp })
    }

    static func randomNonce() -> String {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 16) { random in
            SecureRandom.fillFromPool(UnsafeMutableRawBufferPointer(random))
            return String(unsafeUninitializedCapacity: 32) { text in
                for (index, byte) in random.enumerated() {
                    text[2 * index] = hexDigits[Int(byte >> 4)]
                    text[2 * index + 1] = hexDigits[Int(byte & 0x0F)]
                }
                return 32
            }
        }
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)
}
