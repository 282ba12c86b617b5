import Crypto

/// A PKCE verifier and its S256 challenge (RFC 7636 §4.1, §4.2).
///
/// The verifier is 32 random bytes in base64url: 43 characters from
/// `[A-Z a-z 0-9 - _]`, inside §4.1's 43–128 range. The challenge is
/// `BASE64URL(SHA256(ASCII(verifier)))`; `plain` is never used (RFC 9700 §2.1.1).
package struct PKCE: Sendable, Hashable {
    package let verifier: String
    package let challenge: String
    /// Always `S256`; sent explicitly because an absent method means `plain` (RFC 7636 §4.3).
    package let method = "S256"

    /// A fresh random verifier.
    package init() {
        self.init(verifier: SecureRandom.token())
    }

    /// A known verifier, for tests and for re-deriving the challenge.
    package init(verifier: String) {
        self.verifier = verifier
        self.challenge = Self.challenge(for: verifier)
    }

    package static func challenge(for verifier: String) -> String {
        SHA256.hash(data: Array(verifier.utf8)).withUnsafeBytes { Base64URL.encode($0) }
    }
}
