import Crypto
import JWTKit

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The key pair a DPoP-bound credential is bound to (RFC 9449): P-256, for
/// ES256 proofs, the one algorithm every DPoP server supports.
///
/// One key per credential, made when the sign-in starts (so that `dpop_jkt`
/// can bind the authorization code to it, §10) and kept with the credential
/// in its store, so that a refresh in another process proves possession of
/// the same key (§5: a public client's refresh token is bound to it). The
/// private half is a secret like a refresh token: stores keep it as they keep
/// tokens (the file store at 0600, PostgreSQL sealed with AES-GCM), and
/// nothing prints it.
///
/// Stored as a private JWK (RFC 7517 §6.2: `kty`, `crv`, `x`, `y`, `d`).
package struct ProofKey: Sendable, Hashable, Codable {
    package let privateKey: P256.Signing.PrivateKey
    /// What signs this key's proofs (jwt-kit's key, in a key collection of
    /// its own), made once with the key: made for each proof, jwt-kit
    /// imported the raw key again, derived its public point and made a
    /// collection. (nil only if jwt-kit refused the key, which each proof
    /// then reports.)
    let signer: ProofSigner?
    /// The public half as a JWK (RFC 7518 §6.2.1): what each proof's header
    /// carries, made once with the key.
    package let publicJWK: [String: String]
    /// ``publicJWK`` as a JWT header holds it.
    let publicJWKFields: [String: JWTHeaderField]

    /// A fresh key from the system's secure random source.
    package init() {
        self.init(P256.Signing.PrivateKey())
    }

    package init(_ privateKey: P256.Signing.PrivateKey) {
        self.privateKey = privateKey
        let point = privateKey.publicKey.x963Representation // 0x04 ‖ x ‖ y
        let publicJWK = [
            "kty": "EC", "crv": "P-256",
            "x": point[1..<33].withUnsafeBytes { Base64URL.encode($0) },
            "y": point[33..<65].withUnsafeBytes { Base64URL.encode($0) },
        ]
        self.publicJWK = publicJWK
        self.signer = (try? ES256PrivateKey(backing: privateKey)).map { ProofSigner($0, publicJWK: publicJWK) }
        self.publicJWKFields = publicJWK.mapValues { .string($0) }
    }

    /// The JWK SHA-256 thumbprint (RFC 7638 §3): the `jkt` a server binds
    /// tokens to (`cnf.jkt`, RFC 9449 §6) and `dpop_jkt` names (§10). The
    /// required members in lexicographic order, no white space.
    package var thumbprint: String {
        let jwk = publicJWK
        let canonical = #"{"crv":"P-256","kty":"EC","x":""# + jwk["x"]! + #"","y":""# + jwk["y"]! + #""}"#
        return SHA256.hash(data: Array(canonical.utf8)).withUnsafeBytes { Base64URL.encode($0) }
    }

    package static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.privateKey.rawRepresentation == rhs.privateKey.rawRepresentation
    }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(privateKey.publicKey.x963Representation)
    }

    private enum CodingKeys: String, CodingKey { case kty, crv, x, y, d }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        guard try container.decode(String.self, forKey: .kty) == "EC",
            try container.decode(String.self, forKey: .crv) == "P-256",
            let d = Base64URL.decode(Substring(try container.decode(String.self, forKey: .d))),
            let key = try? P256.Signing.PrivateKey(rawRepresentation: d)
        else {
            throw DecodingError.dataCorruptedError(
                forKey: .d, in: container, debugDescription: "is not a P-256 private key (RFC 7518 §6.2)")
        }
        self.init(key)
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        let jwk = publicJWK
        try container.encode("EC", forKey: .kty)
        try container.encode("P-256", forKey: .crv)
        try container.encode(jwk["x"], forKey: .x)
        try container.encode(jwk["y"], forKey: .y)
        try container.encode(privateKey.rawRepresentation.withUnsafeBytes { Base64URL.encode($0) }, forKey: .d)
    }
}
