import Crypto
import Foundation

/// Cryptographically secure random bytes from swift-crypto.
///
/// `state` and PKCE verifiers must be unguessable (RFC 6749 §10.10, RFC 7636
/// §7.1); a `SymmetricKey` is generated from the platform's CSPRNG.
package enum SecureRandom {
    /// `count` random bytes; `count` must be a multiple of 8 bits' worth (any byte count works).
    package static func bytes(_ count: Int) -> [UInt8] {
        let key = SymmetricKey(size: SymmetricKeySize(bitCount: count * 8))
        return key.withUnsafeBytes { Array($0) }
    }

    /// 32 random bytes as base64url without padding: 43 characters, 256 bits.
    package static func token() -> String {
        Base64URL.encode(bytes(32))
    }
}

/// Base64url without padding (RFC 4648 §5), as RFC 7636 §3 specifies for PKCE.
package enum Base64URL {
    package static func encode<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
