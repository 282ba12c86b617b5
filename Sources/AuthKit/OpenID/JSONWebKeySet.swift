#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A provider's published signing keys (RFC 7517 §5), as read from its
/// `jwks_uri`: the public keys AuthKit can verify an ID token with, each kept
/// as the JSON object it was published as.
///
/// Read strictly, because the set decides whose signatures are believed:
/// - a set that lists private key material (`d`, or RSA's primes) is refused
///   whole: a provider that publishes its private key has no key worth trusting;
/// - keys AuthKit does not verify with (`oct` secrets, encryption keys with
///   `use: enc`, unknown types or curves) are left out, so no token can name
///   them (an HMAC "key" made of a public key is the classic confusion attack);
/// - a member name given twice is refused, as in a descriptor file.
package struct JSONWebKeySet: Sendable, Hashable {
    /// The usable public keys, in the order published.
    package var keys: [[String: JSONValue]]

    package init(keys: [[String: JSONValue]]) {
        self.keys = keys
    }

    /// The largest key set read (a JWKS of a few dozen RSA keys is under 20 KB).
    package static let maximumSize = 256 * 1024

    /// Reads a JWKS document. Throws `AuthKitError.IDTokenProblem` (`.keySetUnusable`).
    package static func parse(_ data: Data) throws(AuthKitError.IDTokenProblem) -> JSONWebKeySet {
        let value: JSONValue
        do {
            value = try JSONParser.parse(data, repeatedNames: .refused)
        } catch {
            throw .keySetUnusable("it is not JSON (\((error as? JSONParser.Failure)?.reason ?? "unreadable"))")
        }
        guard case .object(let document) = value, case .array(let entries)? = document["keys"] else {
            throw .keySetUnusable("it is not a JWK Set: no \"keys\" array")
        }
        var keys: [[String: JSONValue]] = []
        for entry in entries {
            guard case .object(let key) = entry else { continue }
            let privateMembers = ["d", "p", "q", "dp", "dq", "qi", "oth", "k"].filter { key[$0] != nil }
            if !privateMembers.isEmpty, key["kty"] != .string("oct") {
                throw .keySetUnusable(
                    "it lists private key material (\(privateMembers.joined(separator: ", "))"
                        + (key.text("kid").map { " in the key \(DisplayText.sanitized($0, limit: 80))" } ?? "") + ")")
            }
            if Self.family(of: key) != nil { keys.append(key.filter { Self.membersRead.contains($0.key) }) }
        }
        return JSONWebKeySet(keys: keys)
    }

    /// What is kept of a usable key: what choosing and building it reads
    /// (RFC 7517 §4, RFC 7518 §6, Microsoft's `issuer`). The rest (`x5c`,
    /// anything a server adds) is dropped: the cache keeps up to 256 sets,
    /// and a 256 KiB set of small keys padded with nested members took
    /// several times its size once parsed, for each set kept.
    static let membersRead: Set<String> = ["kty", "crv", "n", "e", "x", "y", "kid", "alg", "use", "key_ops", "issuer"]

    /// The keys that could have made a signature with `algorithm`, and have
    /// the id `kid` when one is given (compared byte for byte).
    package func candidates(for algorithm: IDTokenAlgorithm, kid: String?) -> [[String: JSONValue]] {
        keys.filter { key in
            guard Self.family(of: key) == algorithm.family else { return false }
            // A key that names its algorithm is used with that one only (RFC 7517 §4.4).
            if let declared = key.text("alg"), !ExactText.same(declared, algorithm.rawValue) { return false }
            if let kid { return key.text("kid").map { ExactText.same($0, kid) } ?? false }
            return true
        }
    }

    /// Which algorithms a published key can verify: RSA, an EC key on P-256
    /// or P-384, an Ed25519 key; `nil` for anything else, for a key
    /// published for another use than signatures (`use` other than `sig`,
    /// RFC 7517 §4.2), for one whose `key_ops` (§4.3) do not include
    /// `verify`, and for one whose `use` or `key_ops` is not what the RFC
    /// says it is (a string; an array of strings): a member AuthKit cannot
    /// read does not count as absent.
    static func family(of key: [String: JSONValue]) -> IDTokenAlgorithm.Family? {
        if key["use"] != nil, key.text("use") != "sig" { return nil }
        if let operations = key["key_ops"] {
            guard case .array(let values) = operations, values.contains(.string("verify")) else { return nil }
        }
        if key["alg"] != nil, key.text("alg") == nil { return nil }
        switch (key.text("kty"), key.text("crv")) {
        case ("RSA", _): return key.text("n") != nil && key.text("e") != nil ? .rsa : nil
        case ("EC", "P-256"): return key.text("x") != nil && key.text("y") != nil ? .p256 : nil
        case ("EC", "P-384"): return key.text("x") != nil && key.text("y") != nil ? .p384 : nil
        case ("OKP", "Ed25519"): return key.text("x") != nil ? .ed25519 : nil
        default: return nil
        }
    }
}

extension Dictionary where Key == String, Value == JSONValue {
    /// The member `name` when it is a string.
    package func text(_ name: String) -> String? {
        if case .string(let value)? = self[name] { return value }
        return nil
    }
}

/// The signature algorithms AuthKit verifies ID tokens with (RFC 7518 §3,
/// RFC 8037 §3.1). `none` and the HMAC algorithms are not among them: an ID
/// token from the token endpoint over TLS could be taken unsigned (Core
/// §3.1.3.7 step 6), but AuthKit does not, and an HMAC needs the client
/// secret as its key, which AuthKit never hands to a verifier.
package enum IDTokenAlgorithm: String, Sendable, CaseIterable {
    case rs256 = "RS256"
    case rs384 = "RS384"
    case rs512 = "RS512"
    case ps256 = "PS256"
    case ps384 = "PS384"
    case ps512 = "PS512"
    case es256 = "ES256"
    case es384 = "ES384"
    case edDSA = "EdDSA"

    package enum Family: Sendable, Hashable { case rsa, p256, p384, ed25519 }

    package var family: Family {
        switch self {
        case .rs256, .rs384, .rs512, .ps256, .ps384, .ps512: .rsa
        case .es256: .p256
        case .es384: .p384
        case .edDSA: .ed25519
        }
    }

    /// The hash `at_hash` and `c_hash` use (Core §3.1.3.6): the one of the
    /// signature, SHA-512 for Ed25519.
    package var hashBits: Int {
        switch self {
        case .rs256, .ps256, .es256: 256
        case .rs384, .ps384, .es384: 384
        case .rs512, .ps512, .edDSA: 512
        }
    }
}
