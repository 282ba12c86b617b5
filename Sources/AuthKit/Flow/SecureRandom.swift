import Crypto
import Foundation

/// Cryptographically secure random bytes from swift-crypto.
///
/// `state` and PKCE verifiers must be unguessable (RFC 6749 §10.10, RFC 7636
/// §7.1); a `SymmetricKey` is generated from the platform's CSPRNG.
public enum SecureRandom {
    /// `count` random bytes; `count` must be a multiple of 8 bits' worth (any byte count works).
    public static func bytes(_ count: Int) -> [UInt8] {
        let key = SymmetricKey(size: SymmetricKeySize(bitCount: count * 8))
        return key.withUnsafeBytes { Array($0) }
    }

    /// 32 random bytes as base64url without padding: 43 characters, 256 bits.
    public static func token() -> String {
        Base64URL.encode(bytes(32))
    }
}
