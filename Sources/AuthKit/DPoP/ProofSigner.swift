import JWTKit

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Signs a ``ProofKey``'s proofs through jwt-kit (RFC 7515's compact JWS):
/// one key collection per key, made once, instead of one per proof.
///
/// jwt-kit signs; only the two small JSON objects a proof holds are written
/// by AuthKit (``ProofSerializer``), as Foundation's `JSONEncoder` was a fifth
/// of a proof's cost and a proof is made for every request.
final class ProofSigner: Sendable {
    private let key: ES256PrivateKey
    private let keys: JWTKeyCollection
    private let serializer: ProofSerializer
    /// jwt-kit adds a key only asynchronously, so the first proof adds it
    /// (two first proofs at once both add it: the second replaces the same key).
    private let added = LockedValue(false)

    /// - Parameter publicJWK: the key's public half, as every proof's header carries it.
    init(_ key: ES256PrivateKey, publicJWK: [String: String]) {
        self.key = key
        self.serializer = ProofSerializer(publicJWK: publicJWK)
        self.keys = JWTKeyCollection(defaultJWTSerializer: serializer)
    }

    func sign(_ claims: DPoPProof.Claims, header: JWTHeader) async throws -> String {
        if !added.current {
            await keys.add(ecdsa: key, serializer: serializer)
            added.withLock { $0 = true }
        }
        return try await keys.sign(claims, header: header)
    }
}

/// jwt-kit's serializer for proofs: the header and the claims written with
/// ``JSONText``; anything else (never a proof's) through `JSONEncoder`.
struct ProofSerializer: JWTSerializer {
    /// A proof's header (RFC 9449 §4.2: `typ`, `alg`, `jwk`), the same for
    /// every proof of one key: written once.
    let headerJSON: Data?
    let encoder: ProofJSONEncoder

    init(publicJWK: [String: String]? = nil) {
        var headerJSON: Data?
        if let publicJWK {
            var header = JWTHeader()
            header.alg = "ES256"
            header.typ = "dpop+jwt"
            header.jwk = publicJWK.mapValues { .string($0) }
            var json = JSONText()
            if ProofJSONEncoder.write(.object(header.fields), into: &json) { headerJSON = Data(json.bytes) }
        }
        self.headerJSON = headerJSON
        self.encoder = ProofJSONEncoder(headerJSON: headerJSON)
    }

    var jsonEncoder: any JWTJSONEncoder { encoder }

    /// The payload's part of the token: its JSON, base64url-encoded (RFC 7515 §7.1).
    func serialize(_ payload: some JWTPayload, header: JWTHeader) throws -> Data {
        let json = try encoder.encode(payload)
        return Data(json.withUnsafeBytes { Base64URL.encode($0) }.utf8)
    }
}

struct ProofJSONEncoder: JWTJSONEncoder {
    /// The key's proof header as written once (``ProofSerializer``): a
    /// header of three members, `typ` `dpop+jwt` and `alg` `ES256`, is that
    /// one, as a signer serves one key and sets `jwk` from it.
    var headerJSON: Data? = nil

    func encode<T: Encodable>(_ value: T) throws -> Data {
        if let claims = value as? DPoPProof.Claims {
            return Data(claims.json.bytes)
        }
        if let header = value as? JWTHeader {
            if let headerJSON, header.fields.count == 3, header.typ == "dpop+jwt", header.alg == "ES256",
                header.jwk != nil
            {
                return headerJSON
            }
            var json = JSONText()
            if Self.write(.object(header.fields), into: &json) { return Data(json.bytes) }
        }
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        return try encoder.encode(value)
    }

    /// Writes `field`; false for a number with a fraction or an array, which
    /// no proof's header holds (the caller then uses `JSONEncoder`).
    static func write(_ field: JWTHeaderField, into json: inout JSONText) -> Bool {
        switch field {
        case .null: json.null()
        case .bool(let value): json.boolean(value)
        case .int(let value): json.integer(value)
        case .string(let value): json.string(value)
        case .object(let members):
            json.beginObject()
            for (name, value) in members.sorted(by: { $0.key < $1.key }) {
                json.member(name)
                guard write(value, into: &json) else { return false }
            }
            json.endObject()
        case .decimal, .array: return false
        }
        return true
    }
}
