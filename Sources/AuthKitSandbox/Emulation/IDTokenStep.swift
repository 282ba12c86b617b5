import AuthKit
import Crypto
import CryptoExtras

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The sandbox as an OpenID provider (OpenID Connect Core §3.1.3.3): for a
/// descriptor with an `openid` part, a grant that includes the `openid`
/// scope gets an ID token with its tokens, signed with a key made when the
/// sandbox starts and published at the descriptor's key-set URL.
///
/// The key's algorithm is one the descriptor lists, so the client verifies
/// the sandbox's tokens exactly as it would the provider's: ES256, else
/// EdDSA, else RS256/PS256 with a 2048-bit RSA key (the slowest to make,
/// so only for a descriptor that lists nothing else, Google's among them).
struct IDTokenSigner: Sendable {
    private enum Key: @unchecked Sendable {
        case p256(P256.Signing.PrivateKey)
        case ed25519(Curve25519.Signing.PrivateKey)
        case rsa(_RSA.Signing.PrivateKey, pss: Bool)
    }

    private let key: Key
    /// `alg` in the header.
    let algorithm: IDTokenAlgorithm
    /// `kid`: a new one for every sandbox run, as a provider rotates keys.
    let keyID: String

    /// A signer for the first algorithm of `algorithms` the sandbox can sign with.
    init?(algorithms: Set<IDTokenAlgorithm>) {
        keyID = "sandbox-" + String(SecureRandom.token().prefix(8))
        if algorithms.contains(.es256) {
            (key, algorithm) = (.p256(P256.Signing.PrivateKey()), .es256)
        } else if algorithms.contains(.edDSA) {
            (key, algorithm) = (.ed25519(Curve25519.Signing.PrivateKey()), .edDSA)
        } else if algorithms.contains(.rs256) || algorithms.contains(.ps256),
            let rsa = try? _RSA.Signing.PrivateKey(keySize: .bits2048)
        {
            let pss = !algorithms.contains(.rs256)
            (key, algorithm) = (.rsa(rsa, pss: pss), pss ? .ps256 : .rs256)
        } else {
            return nil
        }
    }

    /// The JWK Set the key is published in (RFC 7517 §5): its public half only.
    var keySet: JSONValue {
        var jwk: [String: JSONValue] = [
            "kid": .string(keyID), "use": .string("sig"), "alg": .string(algorithm.rawValue),
        ]
        switch key {
        case .p256(let key):
            let point = key.publicKey.x963Representation
            jwk["kty"] = .string("EC")
            jwk["crv"] = .string("P-256")
            jwk["x"] = .string(Base64URL.encode(point[1..<33]))
            jwk["y"] = .string(Base64URL.encode(point[33..<65]))
        case .ed25519(let key):
            jwk["kty"] = .string("OKP")
            jwk["crv"] = .string("Ed25519")
            jwk["x"] = .string(Base64URL.encode(key.publicKey.rawRepresentation))
        case .rsa(let key, _):
            let primitives = try? key.publicKey.getKeyPrimitives()
            jwk["kty"] = .string("RSA")
            jwk["n"] = .string(Base64URL.encode(primitives?.modulus ?? Data()))
            jwk["e"] = .string(Base64URL.encode(primitives?.publicExponent ?? Data()))
        }
        return .object(["keys": .array([.object(jwk)])])
    }

    /// A compact JWS of `claims` (RFC 7515 §7.1).
    func sign(_ claims: [String: JSONValue]) -> String {
        let header: JSONValue = .object([
            "alg": .string(algorithm.rawValue), "kid": .string(keyID), "typ": .string("JWT"),
        ])
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let input =
            Base64URL.encode((try? encoder.encode(header)) ?? Data()) + "."
            + Base64URL.encode((try? encoder.encode(JSONValue.object(claims))) ?? Data())
        let signature: Data
        switch key {
        case .p256(let key): signature = (try? key.signature(for: Data(input.utf8)).rawRepresentation) ?? Data()
        case .ed25519(let key): signature = (try? key.signature(for: Data(input.utf8))) ?? Data()
        case .rsa(let key, let pss):
            signature =
                (try? key.signature(for: Data(input.utf8), padding: pss ? .PSS : .insecurePKCS1v1_5).rawRepresentation)
                ?? Data()
        }
        return input + "." + Base64URL.encode(signature)
    }
}

extension Emulator {
    /// The ID token for `grant`'s account, for `audience`, or `nil` when the
    /// descriptor is not an OpenID provider's or `openid` was not granted.
    func idToken(grant: GrantLedger.Grant, scopes: [String], nonce: String?, accessToken: String) -> String? {
        guard scopes.contains("openid"), let signer = idTokenSigner else { return nil }
        let issued = Int64(now.timeIntervalSince1970)
        var claims: [String: JSONValue] = [
            "iss": .string(issuer), "sub": .string("sandbox-user-" + grant.account), "aud": .string(options.clientID),
            "iat": .integer(issued), "exp": .integer(issued + 3600), "auth_time": .integer(issued),
            "at_hash": .string(IDTokenVerifier.halfHash(accessToken, signer.algorithm)),
        ]
        if let nonce { claims["nonce"] = .string(nonce) }
        if scopes.contains("email") {
            claims["email"] = .string("\(grant.account)@sandbox.example")
            claims["email_verified"] = .bool(true)
        }
        if scopes.contains("profile") {
            claims["name"] = .string(grant.account.prefix(1).uppercased() + grant.account.dropFirst())
            claims["preferred_username"] = .string(grant.account)
        }
        return signer.sign(claims)
    }

    /// GET on the descriptor's key-set URL: the sandbox's public key.
    func keySet(_ request: SandboxRequest) -> SandboxResponse {
        guard let signer = idTokenSigner else {
            return .json(.object(["keys": .array([])]), status: 200, step: "keys", summary: "no signing key")
        }
        return .json(signer.keySet, status: 200, step: "keys", summary: "signing key \(signer.keyID)")
    }
}
