import Crypto
import JWTKit

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Checks an ID token as OpenID Connect Core §3.1.3.7 asks, and says who
/// signed in: the token's signature against the provider's published key
/// (verified by jwt-kit), and every claim AuthKit relies on (checked here, so
/// that each refusal is a case of `AuthKitError.IDTokenProblem`).
///
/// The order matters: the header is read and its algorithm checked before any
/// key is looked up, and no claim is read before the signature verifies.
package struct IDTokenVerifier: Sendable {
    /// The provider's issuer identifier, which `iss` must equal byte for byte.
    package var issuer: ExpectedIssuer
    /// This client's id, which `aud` must be (and `azp`, when present).
    package var clientID: String
    /// The algorithms the provider signs with (its metadata's
    /// `id_token_signing_alg_values_supported`), meet AuthKit's own set.
    package var algorithms: Set<IDTokenAlgorithm>
    /// Clock skew allowed on `exp`, `iat` and `nbf`.
    package var leeway: TimeInterval = 60
    /// The provider's keys; `true` asks for a fresh copy (a key id not in
    /// the set at hand: the provider may have rotated its keys).
    package var keys: @Sendable (_ refetch: Bool) async throws -> JSONWebKeySet

    /// What `iss` must be.
    package enum ExpectedIssuer: Sendable {
        /// One issuer identifier, for every token.
        case exact(String)
        /// The issuer of the tenant the token's `claim` names, unless that
        /// tenant is one of `excluding`, or is not `only` (an alias's one
        /// tenant), compared byte for byte (``MultiTenantIssuer``).
        case perTenant(
            claim: String, excluding: [String] = [], only: String? = nil, issuer: @Sendable (String) -> String)
    }

    package init(
        issuer: String, clientID: String, algorithms: Set<IDTokenAlgorithm>,
        keys: @escaping @Sendable (_ refetch: Bool) async throws -> JSONWebKeySet
    ) {
        self.init(issuer: .exact(issuer), clientID: clientID, algorithms: algorithms, keys: keys)
    }

    package init(
        issuer: ExpectedIssuer, clientID: String, algorithms: Set<IDTokenAlgorithm>,
        keys: @escaping @Sendable (_ refetch: Bool) async throws -> JSONWebKeySet
    ) {
        self.issuer = issuer
        self.clientID = clientID
        self.algorithms = algorithms
        self.keys = keys
    }

    /// What the token must match besides the provider and the client.
    package struct Expectations: Sendable {
        /// The nonce this sign-in sent; `nil` on a refresh (Core §12.2: a
        /// refreshed token need not carry one).
        package var nonce: String?
        /// The access token it came with, for `at_hash`.
        package var accessToken: String?
        /// The authorization code, for `c_hash`.
        package var code: String?
        /// On a refresh, who signed in: `iss`, `sub` and `aud` must not change.
        package var previous: Identity?
        /// The `max_age` the request sent: `auth_time` must be within it.
        package var maxAge: Int?

        package init(
            nonce: String?, accessToken: String? = nil, code: String? = nil, previous: Identity? = nil,
            maxAge: Int? = nil
        ) {
            self.maxAge = maxAge
            self.nonce = nonce
            self.accessToken = accessToken
            self.code = code
            self.previous = previous
        }
    }

    /// The verified identity, or `AuthKitError.IDTokenProblem`.
    package func verify(_ token: String, _ expected: Expectations, now: Date = Date()) async throws -> Identity {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else {
            throw AuthKitError.IDTokenProblem.malformed("it has \(parts.count) parts, not header.claims.signature")
        }
        let header = try Self.object(parts[0], "header")
        // §3.1.3.7 step 6-7: the algorithm first, from the provider's list.
        guard let name = header.text("alg") else {
            throw AuthKitError.IDTokenProblem.malformed("its header has no alg")
        }
        guard let algorithm = IDTokenAlgorithm(rawValue: name), algorithms.contains(algorithm) else {
            throw AuthKitError.IDTokenProblem.algorithmNotAllowed(name)
        }
        if let critical = header["crit"] {
            let names = if case .array(let values) = critical { values.compactMap(\.scalarText) } else { ["?"] }
            throw AuthKitError.IDTokenProblem.criticalHeader(names)
        }
        // RFC 8725 §3.11: a JWT of another kind is typed so (`at+jwt`,
        // `logout+jwt`, `dpop+jwt`, RFC 9068, OpenID Back-Channel Logout,
        // RFC 9449): such a token from the same issuer and key, its `aud`
        // this client, is not an ID token. ID tokens carry `JWT` or nothing.
        if let type = header["typ"] {
            guard let text = type.scalarText, !text.lowercased().hasSuffix("+jwt") else {
                throw AuthKitError.IDTokenProblem.malformed(
                    "its header's typ '\(DisplayText.sanitized(type.scalarText ?? "?", limit: 40))' names another kind of JWT than an ID token (RFC 8725 §3.11)"
                )
            }
        }
        if header["kid"] != nil, header.text("kid") == nil {
            throw AuthKitError.IDTokenProblem.malformed("its header's kid is not a string")
        }
        let key = try await self.key(for: algorithm, kid: header.text("kid"))
        try await Self.checkSignature(token, key: key, algorithm: algorithm)

        let claims = try Self.object(parts[1], "claims")
        // Before the claims' checks, which end with the clock's: a token the
        // clock alone refuses has had its key vouch for its issuer too.
        if let iss = claims.text("iss") { try checkKeyIssuer(key, issuer: iss, claims: claims) }
        return try check(claims, algorithm: algorithm, expected, now: now)
    }

    /// A multi-tenant provider publishes every tenant's keys in one set, each
    /// with the issuer it signs for (Microsoft: `issuer` with a `{tenantid}`
    /// template; its "Validate the signing key issuer"): a key of one
    /// tenant must not vouch for another tenant's token.
    func checkKeyIssuer(_ key: [String: JSONValue], issuer tokenIssuer: String, claims: [String: JSONValue]) throws {
        guard case .perTenant(let claim, _, _, _) = issuer, let tenant = claims.text(claim) else { return }
        // A key whose `issuer` is there but no string vouches for no tenant
        // (it vouched for every one); a key without one is the provider's
        // own for all of them, as Microsoft's common keys are.
        if key["issuer"] != nil, key.text("issuer") == nil {
            // Not `keySetUnusable`, which a refresh tolerates as a set it cannot fetch.
            throw AuthKitError.IDTokenProblem.malformed(
                "its key has an 'issuer' that is not a string, so the key names no tenant it signs for")
        }
        guard let template = key.text("issuer") else { return }
        var keyIssuer = template
        if let open = template.firstIndex(of: "{"), let close = template[open...].firstIndex(of: "}") {
            keyIssuer.replaceSubrange(open...close, with: tenant)
        }
        guard ExactText.same(keyIssuer, tokenIssuer) else {
            throw AuthKitError.IDTokenProblem.issuerMismatch(expected: keyIssuer, received: tokenIssuer)
        }
    }

    /// The one key the token can have been signed with: by `kid` (fetching
    /// the set again once when it is not there), or the only key that fits
    /// when the token names none (Core §10.1: with several keys, a `kid` MUST
    /// be given).
    func key(for algorithm: IDTokenAlgorithm, kid: String?) async throws -> [String: JSONValue] {
        var set = try await keys(false)
        var candidates = set.candidates(for: algorithm, kid: kid)
        if candidates.isEmpty {
            set = try await keys(true)
            candidates = set.candidates(for: algorithm, kid: kid)
        }
        if candidates.count == 1, let key = candidates.first { return key }
        // Said as what it is: "no key has the key id k1" misled whoever
        // looked for a rotation where the set held k1 twice, or for another use.
        let shown = kid.map { "'\(DisplayText.sanitized($0, limit: 80))'" }
        if candidates.count > 1 {
            throw AuthKitError.IDTokenProblem.keySetUnusable(
                shown.map { "\(candidates.count) of its keys have the key id \($0)" }
                    ?? "\(candidates.count) of its keys fit the ID token, which names no key id (Core §10.1)")
        }
        if let kid, let shown, set.keys.contains(where: { $0.text("kid").map { ExactText.same($0, kid) } ?? false }) {
            throw AuthKitError.IDTokenProblem.keySetUnusable(
                "its key \(shown) is not one for \(algorithm.rawValue) signatures (its kty, crv, alg, use or key_ops)")
        }
        throw AuthKitError.IDTokenProblem.unknownKey(kid: kid)
    }

    /// jwt-kit verifies the signature, with a collection holding that key
    /// alone, for that algorithm alone.
    static func checkSignature(_ token: String, key: [String: JSONValue], algorithm: IDTokenAlgorithm) async throws {
        let unreadable = AuthKitError.IDTokenProblem.keySetUnusable("its key for \(algorithm.rawValue) cannot be read")
        guard let jwk = publicJWK(key, algorithm: algorithm) else { throw unreadable }
        let collection = JWTKeyCollection()
        do {
            try await collection.add(jwk: jwk, isDefault: true)
        } catch {
            throw unreadable
        }
        do {
            _ = try await collection.verify(token, as: AnyClaims.self)
        } catch let error as JWTError where error.errorType == .signatureVerificationFailed {
            throw AuthKitError.IDTokenProblem.signatureInvalid
        } catch {
            // jwt-kit's other refusals (a signature of the wrong length, a
            // payload that is not JSON) name the token's parts: not repeated.
            throw AuthKitError.IDTokenProblem.signatureInvalid
        }
    }

    /// jwt-kit's key made from the published one's public parameters alone
    /// (RFC 7518 §6.2.1 `crv`/`x`/`y`, §6.3.1 `n`/`e`; RFC 8037 §2 `crv`/`x`),
    /// for the algorithm the token names; nil when one is missing or the
    /// curve is not the algorithm's. Made directly: a round trip through
    /// JSON took a fifth of an ES256 verification.
    static func publicJWK(_ key: [String: JSONValue], algorithm: IDTokenAlgorithm) -> JWK? {
        guard let alg = JWK.Algorithm(rawValue: algorithm.rawValue) else { return nil }
        let kid = JWKIdentifier(string: "verifying")
        switch algorithm.family {
        case .rsa:
            guard let modulus = key.text("n"), let exponent = key.text("e") else { return nil }
            return .rsa(alg, identifier: kid, modulus: modulus, exponent: exponent)
        case .p256, .p384:
            let curve: ECDSACurve = algorithm.family == .p256 ? .p256 : .p384
            guard key.text("crv") == curve.rawValue, let x = key.text("x"), let y = key.text("y") else { return nil }
            return .ecdsa(alg, identifier: kid, x: x, y: y, curve: curve)
        case .ed25519:
            guard key.text("crv") == EdDSACurve.ed25519.rawValue, let x = key.text("x") else { return nil }
            return .octetKeyPair(alg, identifier: kid, x: x, y: nil, curve: .ed25519)
        }
    }

    /// The claims, in Core §3.1.3.7's order, but for those this machine's
    /// clock judges (steps 9, 10 and 13), which come last.
    func check(_ claims: [String: JSONValue], algorithm: IDTokenAlgorithm, _ expected: Expectations, now: Date) throws
        -> Identity
    {
        typealias Problem = AuthKitError.IDTokenProblem
        // Step 2: iss, byte for byte (a look-alike in another script is another issuer).
        guard let iss = claims.text("iss") else { throw Problem.missingClaim("iss") }
        let issuer = try expectedIssuer(claims)
        guard ExactText.same(iss, issuer) else { throw Problem.issuerMismatch(expected: issuer, received: iss) }
        guard let sub = claims.text("sub"), !sub.isEmpty else { throw Problem.missingClaim("sub") }
        // Core §2: "It MUST NOT exceed 255 ASCII characters in length"
        // (counted in bytes, so that a non-ASCII one is held to it too).
        guard sub.utf8.count <= 255 else { throw Problem.malformed("its sub is longer than 255 characters") }
        // Step 3-5: aud names this client, and no one else it could be meant for.
        guard claims["aud"] != nil else { throw Problem.missingClaim("aud") }
        guard let audiences = Self.audiences(claims["aud"]) else {
            throw Problem.malformed("its aud is neither a string nor an array of strings")
        }
        guard audiences.count == 1, ExactText.same(audiences[0], clientID) else {
            throw Problem.audienceMismatch(clientID: clientID, received: audiences)
        }
        if claims["azp"] != nil {
            guard let azp = claims.text("azp") else { throw Problem.missingClaim("azp") }
            guard ExactText.same(azp, clientID) else {
                throw Problem.authorizedPartyMismatch(clientID: clientID, received: azp)
            }
        }
        // Step 9-10's claims are there (judged last, below).
        guard let expiry = Self.date(claims["exp"]) else { throw Problem.missingClaim("exp") }
        guard let issued = Self.date(claims["iat"]) else { throw Problem.missingClaim("iat") }
        if claims["nbf"] != nil, Self.date(claims["nbf"]) == nil { throw Problem.missingClaim("nbf") }
        if expected.maxAge != nil, Self.date(claims["auth_time"]) == nil { throw Problem.missingClaim("auth_time") }
        // Step 11: the nonce this sign-in sent, and no other.
        if let nonce = expected.nonce {
            guard let received = claims.text("nonce"), ExactText.same(received, nonce) else {
                throw Problem.nonceMismatch
            }
        }
        // §3.1.3.8 and §3.3.2.11: the hashes bind the token to what came with it.
        if let accessToken = expected.accessToken, claims["at_hash"] != nil {
            guard let hash = claims.text("at_hash"), ExactText.same(hash, Self.halfHash(accessToken, algorithm)) else {
                throw Problem.accessTokenHashMismatch
            }
        }
        if let code = expected.code, claims["c_hash"] != nil {
            guard let hash = claims.text("c_hash"), ExactText.same(hash, Self.halfHash(code, algorithm)) else {
                throw Problem.codeHashMismatch
            }
        }
        // §12.2: a refresh does not change who signed in, for whom, or when.
        if let previous = expected.previous {
            if !ExactText.same(previous.issuer, iss) { throw Problem.identityChanged("iss") }
            if !ExactText.same(previous.subject, sub) { throw Problem.identityChanged("sub") }
            // The same audience, however it is written ("c" or ["c"]).
            if let before = previous.claims["aud"], !Self.sameBytes(Self.audiences(before), audiences) {
                throw Problem.identityChanged("aud")
            }
            // azp as before, and absent if it was; auth_time, if given, the
            // original sign-in's; a nonce, if given, the original one.
            // Compared byte for byte: Swift's `==` takes canonically
            // equivalent text (`K` and U+212A) for the same.
            if !Self.sameBytes(previous.claims["azp"], claims["azp"]) { throw Problem.identityChanged("azp") }
            if let time = claims["auth_time"], let before = previous.claims["auth_time"],
                Self.date(time) != Self.date(before)
            {
                throw Problem.identityChanged("auth_time")
            }
            if let nonce = claims["nonce"], !Self.sameBytes(nonce, previous.claims["nonce"]) {
                throw Problem.identityChanged("nonce")
            }
        }
        // Step 9-10: the lifetime, and step 13, last: what this machine's
        // clock judges (minutes off, it refuses a right token) comes after
        // every check it plays no part in, so a token it alone refuses has
        // passed the others. A refresh keeps its answer then
        // (``TokenEndpointCalls``); checked as of some moment instead, a
        // token whose `nbf` or `exp` made that moment wrong again skipped
        // the comparison with who signed in (§12.2).
        if now.timeIntervalSince(expiry) > leeway { throw Problem.expired(at: expiry) }
        if issued.timeIntervalSince(now) > leeway { throw Problem.notYetValid(until: issued) }
        if let notBefore = Self.date(claims["nbf"]), notBefore.timeIntervalSince(now) > leeway {
            throw Problem.notYetValid(until: notBefore)
        }
        // Step 13: with max_age, auth_time must say the user signed in recently enough.
        if let maxAge = expected.maxAge, let authenticated = Self.date(claims["auth_time"]),
            now.timeIntervalSince(authenticated) > TimeInterval(maxAge) + leeway
        {
            throw Problem.authenticationTooOld(at: authenticated, maxAge: maxAge)
        }
        return Identity(verifiedClaims: claims, issuer: iss, subject: sub)
    }

    /// Two claim values as the same bytes: strings byte for byte, other
    /// values as `==` has them.
    static func sameBytes(_ a: JSONValue?, _ b: JSONValue?) -> Bool {
        if case .string(let x)? = a, case .string(let y)? = b { return ExactText.same(x, y) }
        return a == b
    }

    /// Two audience lists as the same strings, byte for byte, in order.
    static func sameBytes(_ a: [String]?, _ b: [String]?) -> Bool {
        guard let a, let b else { return a == nil && b == nil }
        return a.count == b.count && zip(a, b).allSatisfy { ExactText.same($0, $1) }
    }

    /// `aud` as a list (Core §2: one string, or an array of strings); nil
    /// when it is anything else, or an array holding anything but strings.
    static func audiences(_ value: JSONValue?) -> [String]? {
        switch value {
        case .string(let one)?: return [one]
        case .array(let many)?:
            let texts = many.compactMap { if case .string(let text) = $0 { text } else { nil } }
            return texts.count == many.count ? texts : nil
        default: return nil
        }
    }

    /// The issuer `claims` must name: the descriptor's, or, for a
    /// multi-tenant endpoint, that of the tenant the (signed) token names,
    /// which must be a plain identifier (letters, digits, `-`), so that it
    /// cannot reshape the issuer URL it is put into, and not one the
    /// endpoint excludes (`organizations` takes no personal account).
    func expectedIssuer(_ claims: [String: JSONValue]) throws -> String {
        switch issuer {
        case .exact(let issuer):
            return issuer
        case .perTenant(let claim, let excluding, let only, let issuer):
            guard let tenant = claims.text(claim), !tenant.isEmpty, tenant.utf8.count <= 100,
                tenant.unicodeScalars.allSatisfy(DescriptorValidator.isTenantCharacter)
            else { throw AuthKitError.IDTokenProblem.missingClaim(claim) }
            if let only, !ExactText.same(tenant, only) {
                throw AuthKitError.IDTokenProblem.issuerMismatch(
                    expected: issuer(only), received: claims.text("iss") ?? "")
            }
            if excluding.contains(where: { ExactText.same($0, tenant) }) {
                throw AuthKitError.IDTokenProblem.issuerMismatch(
                    expected: issuer("{\(claim) other than \(tenant)}"), received: claims.text("iss") ?? "")
            }
            return issuer(tenant)
        }
    }

    /// The left half of the token's hash, base64url (Core §3.1.3.6).
    package static func halfHash(_ value: String, _ algorithm: IDTokenAlgorithm) -> String {
        let digest: [UInt8] =
            switch algorithm.hashBits {
            case 256: Array(SHA256.hash(data: Data(value.utf8)))
            case 384: Array(SHA384.hash(data: Data(value.utf8)))
            default: Array(SHA512.hash(data: Data(value.utf8)))
            }
        return Base64URL.encode(digest.prefix(digest.count / 2))
    }

    /// A NumericDate (RFC 7519 §2): seconds since the epoch, integer or not.
    static func date(_ value: JSONValue?) -> Date? {
        switch value {
        case .integer(let seconds)?: Date(timeIntervalSince1970: TimeInterval(seconds))
        case .number(let seconds)? where seconds.isFinite: Date(timeIntervalSince1970: seconds)
        default: nil
        }
    }

    /// One base64url part of the token as a JSON object.
    static func object(_ part: Substring, _ name: String) throws -> [String: JSONValue] {
        guard let bytes = Base64URL.decode(part) else {
            throw AuthKitError.IDTokenProblem.malformed("its \(name) is not base64url")
        }
        guard case .object(let object)? = try? JSONParser.parse(bytes, repeatedNames: .refused) else {
            throw AuthKitError.IDTokenProblem.malformed("its \(name) is not a JSON object")
        }
        return object
    }
}

/// What jwt-kit decodes the claims as: nothing, since AuthKit reads them
/// itself with its own strict parser once the signature has verified.
private struct AnyClaims: JWTPayload {
    init(from decoder: any Decoder) throws {}
    func encode(to encoder: any Encoder) throws {}
    func verify(using algorithm: some JWTAlgorithm) async throws {}
}
