import Crypto
import CryptoExtras
import Foundation
import Testing

@testable import AuthKit

/// ID tokens from a hostile OpenID provider (issue 46): each must be refused
/// with the check it fails, and the genuine one accepted. The provider's keys
/// and signatures are made here with swift-crypto directly, not with the
/// verifier's jwt-kit, so a shared mistake cannot pass unnoticed.
@Suite struct IDTokenVerifierTests {
    static let issuer = "https://op.example"
    static let clientID = "client-1"
    static let nonce = "n-0S6_WzA2Mj"
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    /// A provider with an EC P-256 key, an RSA key and an Ed25519 key.
    struct Provider {
        let ec = P256.Signing.PrivateKey()
        let ed = Curve25519.Signing.PrivateKey()
        let rsa: _RSA.Signing.PrivateKey

        init() throws { rsa = try _RSA.Signing.PrivateKey(keySize: .bits2048) }

        var publicKeys: [[String: Any]] {
            let point = ec.publicKey.x963Representation
            let rsaPublic = try! rsa.publicKey.getKeyPrimitives()
            return [
                [
                    "kty": "EC", "crv": "P-256", "kid": "ec-1", "use": "sig",
                    "x": b64(point[1..<33]), "y": b64(point[33..<65]),
                ],
                ["kty": "RSA", "kid": "rsa-1", "n": b64(rsaPublic.modulus), "e": b64(rsaPublic.publicExponent)],
                ["kty": "OKP", "crv": "Ed25519", "kid": "ed-1", "x": b64(ed.publicKey.rawRepresentation)],
            ]
        }

        func keySet(_ extra: [[String: Any]] = []) throws -> JSONWebKeySet {
            try JSONWebKeySet.parse(try JSONSerialization.data(withJSONObject: ["keys": publicKeys + extra]))
        }

        /// A token signed as the header says (`alg` ES256, RS256, PS256 or EdDSA).
        func token(_ claims: [String: Any], header: [String: Any] = ["alg": "ES256", "kid": "ec-1"]) throws -> String {
            let input =
                b64(try JSONSerialization.data(withJSONObject: header)) + "."
                + b64(try JSONSerialization.data(withJSONObject: claims))
            let signature: Data
            switch header["alg"] as? String {
            case "ES256": signature = try ec.signature(for: Data(input.utf8)).rawRepresentation
            case "RS256":
                signature = try rsa.signature(for: Data(input.utf8), padding: .insecurePKCS1v1_5).rawRepresentation
            case "PS256": signature = try rsa.signature(for: Data(input.utf8), padding: .PSS).rawRepresentation
            case "EdDSA": signature = try ed.signature(for: Data(input.utf8))
            default: signature = Data()
            }
            return input + "." + b64(signature)
        }

        /// Times the verifier asked for the key set.
        let keyLookups = LockedValue(0)

        func verifier(_ keys: JSONWebKeySet? = nil, algorithms: Set<IDTokenAlgorithm> = Set(IDTokenAlgorithm.allCases))
            throws -> IDTokenVerifier
        {
            let set = try keys ?? keySet()
            return IDTokenVerifier(
                issuer: IDTokenVerifierTests.issuer, clientID: IDTokenVerifierTests.clientID,
                algorithms: algorithms,
                keys: { [keyLookups] _ in
                    keyLookups.withLock { $0 += 1 }
                    return set
                })
        }
    }

    static func b64(_ bytes: some DataProtocol) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    /// ``claims`` as a provider at `issuer` issues them now, for `nonce`.
    static func claims(issuedNowBy issuer: String, nonce: String?) -> [String: Any] {
        var claims = Self.claims
        claims["iss"] = issuer
        claims["nonce"] = nonce
        claims["exp"] = Int(Date().timeIntervalSince1970) + 600
        claims["iat"] = Int(Date().timeIntervalSince1970)
        return claims
    }

    static var claims: [String: Any] {
        [
            "iss": issuer, "sub": "248289761001", "aud": clientID, "exp": Int(now.timeIntervalSince1970) + 600,
            "iat": Int(now.timeIntervalSince1970) - 5, "nonce": nonce, "email": "alice@example.com",
            "email_verified": true,
        ]
    }

    static func changed(_ changes: [String: Any?]) -> [String: Any] {
        var result = claims
        for (name, value) in changes { result[name] = value }
        return result
    }

    func refusal(_ verifier: IDTokenVerifier, _ token: String, _ expected: IDTokenVerifier.Expectations? = nil)
        async -> AuthKitError.IDTokenProblem?
    {
        do {
            _ = try await verifier.verify(token, expected ?? .init(nonce: Self.nonce), now: Self.now)
            return nil
        } catch let problem as AuthKitError.IDTokenProblem {
            return problem
        } catch {
            Issue.record("not an IDTokenProblem: \(error)")
            return nil
        }
    }

    @Test(arguments: [
        ["alg": "ES256", "kid": "ec-1"], ["alg": "RS256", "kid": "rsa-1"], ["alg": "PS256", "kid": "rsa-1"],
        ["alg": "EdDSA", "kid": "ed-1"],
    ])
    func theGenuineTokenSaysWhoSignedIn(header: [String: String]) async throws {
        let provider = try Provider()
        let token = try provider.token(Self.claims, header: header)
        let identity = try await provider.verifier().verify(token, .init(nonce: Self.nonce), now: Self.now)
        #expect(identity.issuer == Self.issuer && identity.subject == "248289761001")
        #expect(identity.email == "alice@example.com" && identity.emailVerified == true)
        #expect(identity.displayName == "alice@example.com")
    }

    @Test func unsignedAndHMACTokensAreRefusedBeforeAnyKeyIsUsed() async throws {
        let provider = try Provider()
        let none = try provider.token(Self.claims, header: ["alg": "none"])
        #expect(await refusal(try provider.verifier(), none) == .algorithmNotAllowed("none"))
        // HS256 with the provider's own RSA public key as the secret: the classic confusion.
        let input =
            Self.b64(try JSONSerialization.data(withJSONObject: ["alg": "HS256", "kid": "rsa-1"])) + "."
            + Self.b64(try JSONSerialization.data(withJSONObject: Self.claims))
        let secret = SymmetricKey(data: provider.rsa.publicKey.derRepresentation)
        let mac = HMAC<SHA256>.authenticationCode(for: Data(input.utf8), using: secret)
        #expect(
            await refusal(try provider.verifier(), input + "." + Self.b64(Data(mac))) == .algorithmNotAllowed("HS256"))
        // An algorithm the provider does not list.
        let rs = try provider.token(Self.claims, header: ["alg": "RS256", "kid": "rsa-1"])
        #expect(await refusal(try provider.verifier(algorithms: [.es256]), rs) == .algorithmNotAllowed("RS256"))
        // Refused by the header alone: no key set asked for (a fetch an
        // unsigned token could trigger, a key it could be checked against).
        #expect(provider.keyLookups.current == 0)
        _ = try await provider.verifier().verify(
            try provider.token(Self.claims), .init(nonce: Self.nonce), now: Self.now)
        #expect(provider.keyLookups.current == 1, "the count would show a lookup")
    }

    @Test func aChangedByteOrAnotherKeysSignatureIsRefused() async throws {
        let provider = try Provider()
        let token = try provider.token(Self.claims)
        var bytes = Array(token.utf8)
        let index = bytes.count - 10
        bytes[index] = bytes[index] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        #expect(await refusal(try provider.verifier(), String(decoding: bytes, as: UTF8.self)) == .signatureInvalid)
        // Claims changed after signing.
        let parts = token.split(separator: ".")
        let forged =
            parts[0] + "." + Self.b64(try JSONSerialization.data(withJSONObject: Self.changed(["sub": "admin"])))
            + "." + parts[2]
        #expect(await refusal(try provider.verifier(), String(forged)) == .signatureInvalid)
        // Signed by a key of another provider under this provider's kid.
        let other = try Provider().token(Self.claims)
        #expect(await refusal(try provider.verifier(), other) == .signatureInvalid)
    }

    @Test func keysTheSetDoesNotHoldOrShouldNotHoldAreRefused() async throws {
        let provider = try Provider()
        let unknown = try provider.token(Self.claims, header: ["alg": "ES256", "kid": "ec-2"])
        #expect(await refusal(try provider.verifier(), unknown) == .unknownKey(kid: "ec-2"))
        // A kid naming an oct (HMAC) key the set lists: such keys are left out.
        let withSecret = try provider.keySet([["kty": "oct", "kid": "hmac-1", "k": "c2VjcmV0"]])
        #expect(withSecret.keys.count == 3)
        let oct = try provider.token(Self.claims, header: ["alg": "ES256", "kid": "hmac-1"])
        #expect(await refusal(try provider.verifier(withSecret), oct) == .unknownKey(kid: "hmac-1"))
        // An RSA kid for an EC algorithm.
        let mismatched = try provider.token(Self.claims, header: ["alg": "ES256", "kid": "rsa-1"])
        // Said as such (it was "no key has the key id rsa-1", which the set holds).
        #expect(
            await refusal(try provider.verifier(), mismatched)
                == .keySetUnusable(
                    "its key 'rsa-1' is not one for ES256 signatures (its kty, crv, alg, use or key_ops)"))
        // No kid, and more than one key fits (Core §10.1 requires a kid then)…
        let twoEC = try provider.keySet([["kty": "EC", "crv": "P-256", "kid": "ec-9", "x": "AAAA", "y": "AAAA"]])
        let noKid = try provider.token(Self.claims, header: ["alg": "ES256"])
        #expect(
            await refusal(try provider.verifier(twoEC), noKid)
                == .keySetUnusable("2 of its keys fit the ID token, which names no key id (Core §10.1)"))
        // …but with one key that fits, it is that one.
        #expect(await refusal(try provider.verifier(), noKid) == nil)
        // The EC key again under other kids: for encryption only by its
        // key_ops, with a use that is not a string, or for verifying.
        var ec = try #require(provider.publicKeys.first)
        ec["use"] = nil
        let variants: [(String, [String: Any])] = [
            ("ops-encrypt", ["key_ops": ["encrypt"]]), ("ops-text", ["key_ops": "verify"]),
            ("use-array", ["use": ["sig"]]), ("alg-number", ["alg": 7]), ("ops-verify", ["key_ops": ["verify"]]),
        ]
        let set = try provider.keySet(
            variants.map { kid, members in ec.merging(members) { $1 }.merging(["kid": kid]) { $1 } })
        for (kid, _) in variants {
            let token = try provider.token(Self.claims, header: ["alg": "ES256", "kid": kid])
            let refused = await refusal(try provider.verifier(set), token)
            #expect(refused == (kid == "ops-verify" ? nil : .unknownKey(kid: kid)), "\(kid)")
        }
    }

    /// Core §2: `sub` is at most 255 characters.
    @Test func aSubjectLongerThan255CharactersIsRefused() async throws {
        let provider = try Provider()
        let verifier = try provider.verifier()
        let longest = try provider.token(Self.changed(["sub": String(repeating: "s", count: 255)]))
        #expect(await refusal(verifier, longest) == nil)
        let longer = try provider.token(Self.changed(["sub": String(repeating: "s", count: 256)]))
        #expect(await refusal(verifier, longer) == .malformed("its sub is longer than 255 characters"))
    }

    @Test func aKeySetListingAPrivateKeyOrNotJSONIsRefusedWhole() throws {
        let provider = try Provider()
        #expect(throws: AuthKitError.IDTokenProblem.self) {
            try provider.keySet([["kty": "EC", "crv": "P-256", "kid": "leak", "x": "AA", "y": "AA", "d": "AA"]])
        }
        for body in ["<html>keys</html>", #"{"keys": "none"}"#, #"{"keys": [], "keys": []}"#, "[]"] {
            #expect(throws: AuthKitError.IDTokenProblem.self, "\(body)") { try JSONWebKeySet.parse(Data(body.utf8)) }
        }
    }

    /// Only what choosing and building a key reads is kept of it: members
    /// a server adds (nested padding, a certificate chain) took several
    /// times the set's size in memory, for each of the 256 sets cached.
    /// The key still verifies.
    @Test func aKeyKeepsOnlyTheMembersRead() async throws {
        let provider = try Provider()
        var padded = provider.publicKeys
        padded[0]["x5c"] = ["MIIB…"]
        padded[0]["padding"] = [[[[["deep"]]]]]
        let keys = try JSONWebKeySet.parse(try JSONSerialization.data(withJSONObject: ["keys": padded]))
        let ec = try #require(keys.keys.first { $0.text("kid") == "ec-1" })
        #expect(Set(ec.keys) == ["kty", "crv", "kid", "use", "x", "y"], "\(ec.keys)")
        #expect(await refusal(try provider.verifier(keys), try provider.token(Self.claims)) == nil)
    }

    @Test func aRotatedKeyIsFetchedOnceMore() async throws {
        let provider = try Provider()
        let old = try JSONWebKeySet.parse(Data(#"{"keys": []}"#.utf8))
        let current = try provider.keySet()
        let fetches = LockedCounter()
        let verifier = IDTokenVerifier(issuer: Self.issuer, clientID: Self.clientID, algorithms: [.es256]) { refetch in
            fetches.add()
            return refetch ? current : old
        }
        _ = try await verifier.verify(try provider.token(Self.claims), .init(nonce: Self.nonce), now: Self.now)
        #expect(fetches.value == 2)
    }

    @Test func claimsAreCheckedExactly() async throws {
        let provider = try Provider()
        let verifier = try provider.verifier()
        let exp = Int(Self.now.timeIntervalSince1970)
        let cases: [([String: Any?], AuthKitError.IDTokenProblem)] = [
            (["iss": "https://op.example/"], .issuerMismatch(expected: Self.issuer, received: "https://op.example/")),
            // Cyrillic "е" in "example": a look-alike is another issuer.
            (
                ["iss": "https://op.\u{0435}xample"],
                .issuerMismatch(expected: Self.issuer, received: "https://op.\u{0435}xample")
            ),
            (["iss": nil], .missingClaim("iss")),
            (["sub": nil], .missingClaim("sub")),
            (["sub": ""], .missingClaim("sub")),
            (["aud": "client-2"], .audienceMismatch(clientID: Self.clientID, received: ["client-2"])),
            (["aud": "CLIENT-1"], .audienceMismatch(clientID: Self.clientID, received: ["CLIENT-1"])),
            (
                ["aud": [Self.clientID, "client-2"]],
                .audienceMismatch(clientID: Self.clientID, received: [Self.clientID, "client-2"])
            ),
            (["aud": nil], .missingClaim("aud")),
            (["azp": "client-2"], .authorizedPartyMismatch(clientID: Self.clientID, received: "client-2")),
            (["exp": exp - 61], .expired(at: Date(timeIntervalSince1970: TimeInterval(exp - 61)))),
            (["exp": "tomorrow"], .missingClaim("exp")),
            (["iat": nil], .missingClaim("iat")),
            (["iat": exp + 3600], .notYetValid(until: Date(timeIntervalSince1970: TimeInterval(exp + 3600)))),
            (["nbf": exp + 3600], .notYetValid(until: Date(timeIntervalSince1970: TimeInterval(exp + 3600)))),
            (["nonce": nil], .nonceMismatch),
            (["nonce": "another"], .nonceMismatch),
        ]
        for (changes, problem) in cases {
            let token = try provider.token(Self.changed(changes))
            #expect(await refusal(verifier, token) == problem, "\(changes)")
        }
        // Within the minute of skew allowed, and one audience in an array, is fine.
        let lenient = try provider.token(Self.changed(["exp": exp - 30, "aud": [Self.clientID], "azp": Self.clientID]))
        #expect(await refusal(verifier, lenient) == nil)
    }

    @Test func hashesBindTheTokenToWhatCameWithIt() async throws {
        let provider = try Provider()
        let verifier = try provider.verifier()
        // Core §3.3.2.11's example: left half of SHA-256, base64url.
        let accessToken = "jHkWEdUXMU1BwAsC4vtUsZwnNvTIxEl0z9K3vx5KF0Y"
        let atHash = Self.b64(Array(SHA256.hash(data: Data(accessToken.utf8))).prefix(16))
        let bound = try provider.token(Self.changed(["at_hash": atHash]))
        #expect(await refusal(verifier, bound, .init(nonce: Self.nonce, accessToken: accessToken)) == nil)
        #expect(
            await refusal(verifier, bound, .init(nonce: Self.nonce, accessToken: "another")) == .accessTokenHashMismatch
        )
        let code = "Qcb0Orv1zh30vL1MPRsbm-diHiMwcLyZvn1arpZv-Jxf_11jnpEX3Tgfvk"
        let cHash = Self.b64(Array(SHA256.hash(data: Data(code.utf8))).prefix(16))
        let withCode = try provider.token(Self.changed(["c_hash": cHash]))
        #expect(await refusal(verifier, withCode, .init(nonce: Self.nonce, code: code)) == nil)
        #expect(await refusal(verifier, withCode, .init(nonce: Self.nonce, code: "other")) == .codeHashMismatch)
    }

    /// Microsoft's `common` endpoint: each token names its tenant (`tid`)
    /// and is issued under that tenant's issuer; a key of the shared set
    /// names the issuer it signs for.
    @Test func aMultiTenantIssuerIsTheTokensTenantsAndItsKeysMustSaySo() async throws {
        let provider = try Provider()
        let template = "https://login.example/{tenantid}/v2.0"
        let keys = try JSONWebKeySet.parse(
            try JSONSerialization.data(withJSONObject: [
                "keys": provider.publicKeys.map { key in
                    var key = key
                    // The RSA key belongs to one tenant alone.
                    key["issuer"] = key["kid"] as? String == "rsa-1" ? "https://login.example/tenant-b/v2.0" : template
                    return key
                }
            ]))
        let verifier = IDTokenVerifier(
            issuer: .perTenant(claim: "tid") { "https://login.example/\($0)/v2.0" }, clientID: Self.clientID,
            algorithms: Set(IDTokenAlgorithm.allCases), keys: { _ in keys })
        let tenantA = try provider.token(
            Self.changed(["iss": "https://login.example/tenant-a/v2.0", "tid": "tenant-a"]))
        #expect(await refusal(verifier, tenantA) == nil)
        let cases: [([String: Any?], AuthKitError.IDTokenProblem)] = [
            // Another tenant's issuer than the token's own tid.
            (
                ["iss": "https://login.example/tenant-b/v2.0", "tid": "tenant-a"],
                .issuerMismatch(
                    expected: "https://login.example/tenant-a/v2.0", received: "https://login.example/tenant-b/v2.0")
            ),
            (["iss": "https://login.example/tenant-a/v2.0", "tid": nil], .missingClaim("tid")),
            // A tid that would reshape the issuer URL.
            (["iss": "https://login.example/a/b/v2.0", "tid": "a/b"], .missingClaim("tid")),
            (["iss": "https://login.example//v2.0", "tid": ""], .missingClaim("tid")),
        ]
        for (changes, problem) in cases {
            #expect(await refusal(verifier, try provider.token(Self.changed(changes))) == problem, "\(changes)")
        }
        // Tenant B's RSA key does not vouch for tenant A's token.
        let signedByB = try provider.token(
            Self.changed(["iss": "https://login.example/tenant-a/v2.0", "tid": "tenant-a"]),
            header: ["alg": "RS256", "kid": "rsa-1"])
        #expect(
            await refusal(verifier, signedByB)
                == .issuerMismatch(
                    expected: "https://login.example/tenant-b/v2.0", received: "https://login.example/tenant-a/v2.0"))
        // A key whose issuer is no string names no tenant: it vouched for every one.
        let oddKeys = try JSONWebKeySet.parse(
            try JSONSerialization.data(withJSONObject: [
                "keys": provider.publicKeys.map { key in
                    var key = key
                    key["issuer"] = key["kid"] as? String == "rsa-1" ? 7 : template
                    return key
                }
            ]))
        let odd = IDTokenVerifier(
            issuer: .perTenant(claim: "tid") { "https://login.example/\($0)/v2.0" }, clientID: Self.clientID,
            algorithms: Set(IDTokenAlgorithm.allCases), keys: { _ in oddKeys })
        guard case .malformed(let why)? = await refusal(odd, signedByB) else {
            Issue.record("a key with a numeric issuer vouched for a tenant")
            return
        }
        #expect(why.contains("'issuer' that is not a string"))
    }

    /// RFC 8725 §3.11: a JWT typed as another kind (an access token, a
    /// logout token, a DPoP proof) from the same issuer and key is no ID
    /// token; `JWT` or no `typ` is. And a key whose own `alg` is another
    /// algorithm than the token's does not verify it (RFC 7517 §4.4).
    @Test func tokensTypedAsAnotherKindAndKeysOfAnotherAlgorithmAreRefused() async throws {
        let provider = try Provider()
        for type in ["at+jwt", "application/logout+JWT", "dpop+jwt"] {
            let token = try provider.token(Self.claims, header: ["alg": "ES256", "kid": "ec-1", "typ": type])
            guard case .malformed(let why)? = await refusal(try provider.verifier(), token) else {
                Issue.record("typ \(type) was taken for an ID token")
                continue
            }
            #expect(why.contains("another kind of JWT"), "\(why)")
        }
        for type in ["JWT", "jwt"] {
            let token = try provider.token(Self.claims, header: ["alg": "ES256", "kid": "ec-1", "typ": type])
            #expect(await refusal(try provider.verifier(), token) == nil, "\(type)")
        }
        var ec = try #require(provider.publicKeys.first)
        ec["alg"] = "ES384"
        ec["kid"] = "ec-384"
        let token = try provider.token(Self.claims, header: ["alg": "ES256", "kid": "ec-384"])
        #expect(
            await refusal(try provider.verifier(try provider.keySet([ec])), token)
                == .keySetUnusable(
                    "its key 'ec-384' is not one for ES256 signatures (its kty, crv, alg, use or key_ops)"))
    }

    /// Microsoft's three tenant-independent values, as the bundled
    /// descriptor resolves them: `common` takes any tenant, `organizations`
    /// any but the personal accounts' one, and `consumers` that one alone
    /// (its tokens carry that tenant's issuer, never `/consumers/`).
    @Test func microsoftsTenantIndependentValuesEachTakeTheirOwnTenants() async throws {
        let provider = try Provider()
        let descriptor = try ProviderCatalog(includeBundled: true, directories: []).descriptor(id: "microsoft")
        let personal = "9188040d-6c67-4c5b-b112-36a304b66dad"
        let work = "72f988bf-86f1-41af-91ab-2d7cd011db47"
        func issuer(_ tenant: String) -> String { "https://login.microsoftonline.com/\(tenant)/v2.0" }
        func verifier(tenant: String, keysFor keyTenant: String? = nil) throws -> IDTokenVerifier {
            let client = try ResolvedClient(
                descriptor: descriptor,
                settings: ClientSettings(clientID: Self.clientID, placeholders: ["tenant": tenant]))
            let openID = try #require(client.openID)
            // Microsoft's keys name the issuer they sign for: a template, or one tenant's.
            let published = provider.publicKeys.map { key in
                var key = key
                key["issuer"] = keyTenant.map(issuer) ?? "https://login.microsoftonline.com/{tenantid}/v2.0"
                return key
            }
            let keys = try JSONWebKeySet.parse(try JSONSerialization.data(withJSONObject: ["keys": published]))
            return IDTokenVerifier(
                issuer: openID.issuer, clientID: Self.clientID, algorithms: Set(IDTokenAlgorithm.allCases),
                keys: { _ in keys })
        }
        func token(_ tenant: String, issuedBy iss: String? = nil) throws -> String {
            try provider.token(Self.changed(["iss": iss ?? issuer(tenant), "tid": tenant]))
        }
        let common = try verifier(tenant: "common")
        #expect(await refusal(common, try token(personal)) == nil)
        #expect(await refusal(common, try token(work)) == nil)

        let organizations = try verifier(tenant: "organizations")
        #expect(await refusal(organizations, try token(work)) == nil)
        #expect(
            await refusal(organizations, try token(personal))
                == .issuerMismatch(expected: issuer("{tid other than \(personal)}"), received: issuer(personal)))

        let consumers = try verifier(tenant: "consumers")
        #expect(await refusal(consumers, try token(personal)) == nil)
        #expect(
            await refusal(consumers, try token(work))
                == .issuerMismatch(expected: issuer(personal), received: issuer(work)))
        #expect(
            await refusal(consumers, try token(personal, issuedBy: issuer("consumers")))
                == .issuerMismatch(expected: issuer(personal), received: issuer("consumers")))

        // consumers is held to its keys' issuers too (an alias is checked as the other tenants are).
        #expect(
            await refusal(try verifier(tenant: "consumers", keysFor: work), try token(personal))
                == .issuerMismatch(expected: issuer(work), received: issuer(personal)))

        // One tenant by its id: that tenant's tokens alone, as before.
        let one = try verifier(tenant: work)
        #expect(await refusal(one, try token(work)) == nil)
        #expect(
            await refusal(one, try token(personal))
                == .issuerMismatch(expected: issuer(work), received: issuer(personal)))
    }

    /// Core §3.1.3.7 step 13: with `max_age`, `auth_time` must be there and recent enough.
    @Test func maxAgeNeedsARecentEnoughAuthTime() async throws {
        let provider = try Provider()
        let verifier = try provider.verifier()
        let now = Int(Self.now.timeIntervalSince1970)
        let recent = try provider.token(Self.changed(["auth_time": now - 100]))
        #expect(await refusal(verifier, recent, .init(nonce: Self.nonce, maxAge: 300)) == nil)
        let old = try provider.token(Self.changed(["auth_time": now - 1000]))
        #expect(
            await refusal(verifier, old, .init(nonce: Self.nonce, maxAge: 300))
                == .authenticationTooOld(at: Date(timeIntervalSince1970: TimeInterval(now - 1000)), maxAge: 300))
        #expect(
            await refusal(verifier, try provider.token(Self.claims), .init(nonce: Self.nonce, maxAge: 300))
                == .missingClaim("auth_time"))
        // Without max_age, an old sign-in is the provider's business.
        #expect(await refusal(verifier, old) == nil)
    }

    @Test func aRefreshMustNameTheSameUser() async throws {
        let provider = try Provider()
        let verifier = try provider.verifier()
        let first = try await verifier.verify(try provider.token(Self.claims), .init(nonce: Self.nonce), now: Self.now)
        let refreshed = try provider.token(Self.changed(["nonce": nil]))
        #expect(await refusal(verifier, refreshed, .init(nonce: nil, previous: first)) == nil)
        let other = try provider.token(Self.changed(["nonce": nil, "sub": "someone-else"]))
        #expect(await refusal(verifier, other, .init(nonce: nil, previous: first)) == .identityChanged("sub"))
        // The same audience written the other way is the same audience.
        let asArray = try provider.token(Self.changed(["nonce": nil, "aud": [Self.clientID]]))
        #expect(await refusal(verifier, asArray, .init(nonce: nil, previous: first)) == nil)
        let firstAsArray = try await verifier.verify(asArray, .init(nonce: nil), now: Self.now)
        #expect(await refusal(verifier, refreshed, .init(nonce: nil, previous: firstAsArray)) == nil)
        // §12.2: azp as before (and absent if it was), auth_time the original
        // sign-in's, a nonce only the original one.
        let now = Int(Self.now.timeIntervalSince1970)
        let withAZP = try provider.token(Self.changed(["nonce": nil, "azp": Self.clientID]))
        #expect(await refusal(verifier, withAZP, .init(nonce: nil, previous: first)) == .identityChanged("azp"))
        let signedIn = try await verifier.verify(
            try provider.token(Self.changed(["auth_time": now - 100])), .init(nonce: Self.nonce), now: Self.now)
        let sameTime = try provider.token(Self.changed(["nonce": nil, "auth_time": now - 100]))
        #expect(await refusal(verifier, sameTime, .init(nonce: nil, previous: signedIn)) == nil)
        let laterTime = try provider.token(Self.changed(["nonce": nil, "auth_time": now - 5]))
        #expect(
            await refusal(verifier, laterTime, .init(nonce: nil, previous: signedIn)) == .identityChanged("auth_time"))
        #expect(await refusal(verifier, try provider.token(Self.claims), .init(nonce: nil, previous: first)) == nil)
        let otherNonce = try provider.token(Self.changed(["nonce": "another"]))
        #expect(await refusal(verifier, otherNonce, .init(nonce: nil, previous: first)) == .identityChanged("nonce"))
    }

    /// `aud` is a string or an array of strings (Core §2): an array holding
    /// anything else is refused, not read for its strings.
    @Test func anAudienceOfOtherThanStringsIsRefused() async throws {
        let provider = try Provider()
        let verifier = try provider.verifier()
        for audience: Any in [[Self.clientID, 42], [Self.clientID, [Self.clientID]], 7, ["client": Self.clientID]] {
            let token = try provider.token(Self.changed(["aud": audience]))
            #expect(
                await refusal(verifier, token) == .malformed("its aud is neither a string nor an array of strings"),
                "\(audience)")
        }
    }

    @Test func malformedTokensSayWhyWithoutRepeatingThem() async throws {
        let provider = try Provider()
        let verifier = try provider.verifier()
        let good = try provider.token(Self.claims)
        let cases: [String: AuthKitError.IDTokenProblem] = [
            good + ".extra": .malformed("it has 4 parts, not header.claims.signature"),
            "a.b": .malformed("it has 2 parts, not header.claims.signature"),
            "!!!." + good.split(separator: ".")[1] + ".x": .malformed("its header is not base64url"),
            Self.b64(Data("[1]".utf8)) + ".e30.x": .malformed("its header is not a JSON object"),
            Self.b64(Data(#"{"alg":"ES256","alg":"none"}"#.utf8)) + ".e30.x": .malformed(
                "its header is not a JSON object"),
        ]
        for (token, problem) in cases {
            let refused = await refusal(verifier, token)
            #expect(refused == problem, "\(token.prefix(40))")
            #expect(!(refused?.description.contains(good.suffix(20)) ?? false))
        }
        let critical = try provider.token(
            Self.claims, header: ["alg": "ES256", "kid": "ec-1", "crit": ["exp"], "exp": 1])
        #expect(await refusal(verifier, critical) == .criticalHeader(["exp"]))
    }

    @Test func base64URLDecodesWhatItEncodesAndNothingElse() {
        for length in 0..<40 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
            #expect(Base64URL.decode(Substring(Base64URL.encode(bytes))) == bytes)
        }
        for text in ["a", "ab=c", "a+b/", "ab c", "abcde"] {
            #expect(Base64URL.decode(Substring(text)) == nil, "\(text)")
        }
    }

    /// A refresh's claims are compared with the sign-in's byte for byte
    /// (Core §12.2): Swift's `==` takes `K` and U+212A KELVIN SIGN, or `é`
    /// composed and decomposed, for the same string.
    @Test func claimsAreComparedByteForByte() {
        #expect(IDTokenVerifier.sameBytes(.string("nonce-K"), .string("nonce-K")))
        #expect(!IDTokenVerifier.sameBytes(.string("nonce-K"), .string("nonce-\u{212A}")))
        #expect(!IDTokenVerifier.sameBytes(.string("caf\u{E9}"), .string("cafe\u{301}")))
        #expect(!IDTokenVerifier.sameBytes(.string("a"), nil))
        #expect(IDTokenVerifier.sameBytes(nil as JSONValue?, nil))
        #expect(IDTokenVerifier.sameBytes(["client-K"], ["client-K"]))
        #expect(!IDTokenVerifier.sameBytes(["client-K"], ["client-\u{212A}"]))
        #expect(!IDTokenVerifier.sameBytes(["a"], ["a", "b"]))
    }
}

/// A count several tasks may add to.
final class LockedCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func add() { lock.withLock { count += 1 } }
    var value: Int { lock.withLock { count } }
}
