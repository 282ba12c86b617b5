import Crypto
import JWTKit

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Client authentication with a JWT instead of a secret sent as it is
/// (RFC 7523 §2.2, OpenID Connect Core §9): `private_key_jwt`, signed with the
/// client's private key, whose public half the provider holds, and
/// `client_secret_jwt`, an HMAC with the client secret, which then never
/// travels.
///
/// Each assertion is made for one request: `iss` and `sub` are the client id,
/// `aud` the token endpoint's URL (Core §9; RFC 7523 §3 lets the server
/// accept it), or the issuer where the descriptor's `token.assertionAudience`
/// says so, `exp` a minute after `iat`, and `jti` fresh, since servers
/// refuse one they have seen (RFC 7523 §3 item 7).
package enum ClientAssertion {
    /// `client_assertion_type` (RFC 7523 §2.2).
    package static let type = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
    /// How long an assertion is good for: long enough for a slow link, short
    /// enough that a copy is of no use later.
    static let lifetime: TimeInterval = 60

    /// The shortest client secret that signs a `client_secret_jwt`
    /// assertion: RFC 7518 §3.2 says an HS256 key "of the same size as the
    /// hash output (for instance, 256 bits for "HS256") or larger MUST be
    /// used". jwt-kit asserts it (a debug build stopped with SIGILL on a
    /// shorter one), so it is checked before jwt-kit sees the key.
    package static let minimumSecretBytes = 32

    /// Why `secret` cannot sign a `client_secret_jwt` assertion (it is too
    /// short for HS256), or `nil`. Names neither the secret nor any of it.
    package static func secretProblem(_ secret: String) -> String? {
        let count = secret.utf8.count
        guard count < minimumSecretBytes else { return nil }
        return
            "it is \(count) bytes, and client_secret_jwt signs with it as an HS256 key, which must be at least \(minimumSecretBytes) bytes (256 bits, RFC 7518 §3.2). Use the secret the provider issued for this client (such providers issue longer ones), or a private key (private_key_jwt)."
    }

    /// Whether `descriptor` has the client authenticate with
    /// `client_secret_jwt` anywhere: at the token or device endpoint, or in
    /// a follow-up, refresh or revocation call.
    package static func isUsed(by descriptor: ProviderDescriptor) -> Bool {
        let templates = [descriptor.followUp, descriptor.refresh, descriptor.revocation].compactMap { $0 }
        return descriptor.token?.clientAuthentication == .clientSecretJWT
            || descriptor.device?.clientAuthentication == .clientSecretJWT
            || templates.contains { $0.clientAuthentication == .clientSecretJWT }
    }

    /// The parameters that authenticate the client: `client_id`,
    /// `client_assertion_type` and `client_assertion`.
    /// - Throws: ``AuthKitError/Code/invalidSetting`` with
    ///   `clientSecret` for a secret too short to be
    ///   an HS256 key (``secretProblem(_:)``), before anything is signed.
    package static func parameters(
        clientID: String, audience: String, signer: Signer, providerID: String, now: Date = Date()
    ) async throws -> [(String, String)] {
        let issued = Int(now.timeIntervalSince1970)
        let claims = Claims(
            iss: clientID, sub: clientID, aud: audience, jti: SecureRandom.token(), iat: issued,
            exp: issued + Int(lifetime))
        let keys = JWTKeyCollection()
        var header = JWTHeader()
        switch signer {
        case .privateKey(let key):
            switch key.material {
            case .p256(let privateKey): await keys.add(ecdsa: try ES256PrivateKey(backing: privateKey))
            case .rsa(let privateKey, pss: false): await keys.add(rsa: privateKey, digestAlgorithm: .sha256)
            case .rsa(let privateKey, pss: true): await keys.add(pss: privateKey, digestAlgorithm: .sha256)
            }
            if let keyID = key.keyID { header.kid = keyID }
        case .secret(let secret):
            if let problem = secretProblem(secret) {
                throw AuthKitError.invalidSetting(providerID: providerID, .clientSecret, problem: problem)
            }
            await keys.add(hmac: HMACKey(from: Array(secret.utf8)), digestAlgorithm: .sha256)
        }
        let assertion = try await keys.sign(claims, header: header)
        return [("client_id", clientID), ("client_assertion_type", type), ("client_assertion", assertion)]
    }

    /// What signs an assertion.
    package enum Signer: Sendable {
        /// `private_key_jwt`: the client's key (ES256, RS256 or PS256).
        case privateKey(ClientKey)
        /// `client_secret_jwt`: HS256 with the client secret.
        case secret(String)
    }

    private struct Claims: JWTPayload {
        var iss: String
        var sub: String
        var aud: String
        var jti: String
        var iat: Int
        var exp: Int

        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }
}

/// A client's private key for `private_key_jwt`, read from the file the
/// settings name (``ClientSettings/privateKeyFile``): PEM (PKCS #8, or SEC 1
/// for EC, PKCS #1 for RSA) or a private JWK (RFC 7517), P-256 (signing ES256)
/// or RSA (RS256, or PS256 when the JWK's `alg` says so: FAPI 2.0's Security
/// Profile §5.4 allows PS256 and not RS256). A PEM file may hold the key's
/// certificate too (a bundle, as mTLS tools write them): its private key is used.
///
/// The file must be readable by its owner alone, as OpenSSH requires of an
/// identity file: a key others can read is no longer the client's alone, and
/// the provider would take whatever signs with it for the client.
package struct ClientKey: Sendable {
    package enum Material: Sendable {
        case p256(P256.Signing.PrivateKey)
        /// RSA, signing PS256 (RSASSA-PSS) when `pss`, else RS256.
        case rsa(JWTKit.Insecure.RSA.PrivateKey, pss: Bool)
    }

    package let material: Material
    /// The JWK's `kid`, sent in the assertion's header so that a provider
    /// holding several keys for the client knows which one signed.
    package let keyID: String?

    /// The JWS algorithm this key signs with.
    package var algorithm: String {
        switch material {
        case .p256: "ES256"
        case .rsa(_, let pss): pss ? "PS256" : "RS256"
        }
    }

    package init(material: Material, keyID: String?) {
        self.material = material
        self.keyID = keyID
    }

    /// Reads and checks the key file at `path`.
    /// - Throws: ``AuthKitError/Code/invalidSetting`` with
    ///   `privateKey`, naming the file and what to do:
    ///   unreadable, readable by others, or no key AuthKit can sign with.
    package static func load(path: String, providerID: String) throws -> ClientKey {
        func refuse(_ problem: String) -> AuthKitError {
            .invalidSetting(providerID: providerID, .privateKey, problem: "\(path) \(problem)")
        }
        let (data, mode): (Data, Int)
        do {
            (data, mode) = try FileSystem.contentsAndMode(of: path, accepting: .regularFile, limit: 64 << 10)
        } catch {
            throw refuse(error.description)
        }
        // The mode of the file whose bytes were read (its descriptor's).
        if mode & 0o077 != 0 {
            throw refuse(
                "can be read or written by others (mode \(String(mode & 0o777, radix: 8))): a private key must be its owner's alone. Run: chmod 600 \(FileSystem.shellQuoted(path))"
            )
        }
        guard let text = String(data: data, encoding: .utf8) else { throw refuse("is not text (PEM or JSON).") }
        let trimmed = text.trimmingSpacesAndNewlines()
        if trimmed.hasPrefix("{") { return try fromJWK(Data(trimmed.utf8), refuse: refuse) }
        if trimmed.contains("-----BEGIN") {
            let blocks = privateKeyBlocks(in: trimmed)
            guard blocks.count == 1, let block = blocks.first else {
                if blocks.count > 1 {
                    throw refuse(
                        "holds \(blocks.count) private keys; keep the one whose public half the provider has (one key per file)."
                    )
                }
                if trimmed.contains("PUBLIC KEY-----") || trimmed.contains("CERTIFICATE-----") {
                    throw refuse("holds a public key or certificate alone; private_key_jwt signs with the private key.")
                }
                throw refuse("holds no PEM private key block (-----BEGIN PRIVATE KEY-----).")
            }
            if block.contains("ENCRYPTED") {
                throw refuse(
                    "holds an encrypted private key; AuthKit reads unencrypted ones (decrypt it: openssl pkey -in key.pem -out plain.pem, then chmod 600)."
                )
            }
            if let key = try? P256.Signing.PrivateKey(pemRepresentation: block) {
                return ClientKey(material: .p256(key), keyID: nil)
            }
            if let key = try? JWTKit.Insecure.RSA.PrivateKey(pem: block) {
                return ClientKey(material: .rsa(key, pss: false), keyID: nil)
            }
            throw refuse("holds no P-256 or RSA private key in PEM form (PKCS #8, SEC 1 or PKCS #1).")
        }
        throw refuse("is neither PEM (-----BEGIN PRIVATE KEY-----) nor a JWK (a JSON object).")
    }

    /// The `-----BEGIN … PRIVATE KEY-----` blocks of `text` (PKCS #8, SEC
    /// 1's `EC`, PKCS #1's `RSA`, or an encrypted one), each with its END
    /// line. One is used; more would be a guess.
    static func privateKeyBlocks(in text: String) -> [String] {
        var blocks = [String]()
        var rest = Substring(text)
        while let begin = rest.firstRange(of: "-----BEGIN ") {
            guard let labelEnd = rest[begin.upperBound...].firstRange(of: "-----") else { break }
            let label = rest[begin.upperBound..<labelEnd.lowerBound]
            guard let end = rest[labelEnd.upperBound...].firstRange(of: "-----END \(label)-----") else { break }
            if label.hasSuffix("PRIVATE KEY") { blocks.append(String(rest[begin.lowerBound..<end.upperBound])) }
            rest = rest[end.upperBound...]
        }
        return blocks
    }

    private struct JWKFile: Decodable {
        var kty: String?
        var crv: String?
        var alg: String?
        var kid: String?
        var d: String?
        var n: String?
        var e: String?
        var p: String?
        var q: String?
    }

    private static func fromJWK(_ data: Data, refuse: (String) -> AuthKitError) throws -> ClientKey {
        guard let jwk = try? JSONDecoder().decode(JWKFile.self, from: data) else {
            throw refuse("is not a JWK (RFC 7517): a JSON object with kty and the key's members.")
        }
        guard let d = jwk.d else {
            throw refuse("holds a public JWK (no \"d\"); private_key_jwt signs with the private key.")
        }
        switch (jwk.kty, jwk.crv) {
        case ("EC", "P-256"):
            if let alg = jwk.alg, alg != "ES256" {
                throw refuse(
                    "is a P-256 JWK with alg \"\(DisplayText.sanitized(alg, limit: 20))\"; a P-256 key signs ES256.")
            }
            guard let raw = Base64URL.decode(Substring(d)),
                let key = try? P256.Signing.PrivateKey(rawRepresentation: raw)
            else { throw refuse("has a \"d\" that is no P-256 private key.") }
            return ClientKey(material: .p256(key), keyID: jwk.kid)
        case ("RSA", _):
            guard let n = jwk.n, let e = jwk.e else { throw refuse("is an RSA JWK without \"n\" and \"e\".") }
            guard jwk.alg == nil || jwk.alg == "RS256" || jwk.alg == "PS256" else {
                throw refuse(
                    "is an RSA JWK with alg \"\(DisplayText.sanitized(jwk.alg ?? "", limit: 20))\"; AuthKit signs RS256, or PS256 when alg says so."
                )
            }
            let key: JWTKit.Insecure.RSA.PrivateKey
            do {
                if let p = jwk.p, let q = jwk.q {
                    key = try JWTKit.Insecure.RSA.PrivateKey(
                        modulus: n, exponent: e, privateExponent: d, prime1: p, prime2: q)
                } else {
                    key = try JWTKit.Insecure.RSA.PrivateKey(modulus: n, exponent: e, privateExponent: d)
                }
            } catch {
                throw refuse("is an RSA JWK AuthKit cannot use (\(error)); RSA keys need at least 2048 bits.")
            }
            return ClientKey(material: .rsa(key, pss: jwk.alg == "PS256"), keyID: jwk.kid)
        default:
            throw refuse(
                "is a \(DisplayText.sanitized(jwk.kty ?? "typeless", limit: 40)) \(DisplayText.sanitized(jwk.crv ?? "", limit: 40)) key; AuthKit signs with P-256 (ES256) or RSA (RS256, PS256) keys."
            )
        }
    }
}
