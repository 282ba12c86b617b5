import AuthKit
import Crypto
import JWTKit

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A JWS whose signature the sandbox checked before routing: the value it
/// carries, or why it was refused.
enum SignatureCheck<Value: Sendable>: Sendable {
    case verified(Value)
    case refused(String)
}

/// An authorization request's parameters (the pushed ones its `request_uri`
/// names, or its query), or why there are none to use.
enum PushedParameters {
    case pairs([(String, String)])
    case refused(String)
}

/// A DPoP proof's claims (RFC 9449 §4.2) and its key's thumbprint.
struct VerifiedProof: Sendable {
    var jti: String
    var htm: String
    var htu: String
    var iat: Int
    var nonce: String?
    var ath: String?
    var jkt: String
}

/// A client assertion's claims (RFC 7523 §3).
struct VerifiedAssertion: Sendable {
    var iss: String
    var sub: String
    var aud: [String]
    var jti: String
    var exp: Int
}

/// DPoP (RFC 9449), pushed authorization requests (RFC 9126), client
/// assertions (RFC 7523), and the grants for machines: client credentials
/// (RFC 6749 §4.4) and token exchange (RFC 8693), as a strict server has them.
extension Emulator {
    static let tokenExchangeGrantType = "urn:ietf:params:oauth:grant-type:token-exchange"

    // MARK: - Signatures, checked by jwt-kit before the lock

    /// `request` with its DPoP proof's and client assertion's signatures
    /// checked. jwt-kit verifies asynchronously, so this runs before the
    /// emulation takes its lock; the claims are checked under it, by the
    /// step that uses them.
    func verifySignatures(of request: SandboxRequest) async -> SandboxRequest {
        var request = request
        if let proof = request.header("dpop") { request.proof = await Self.verifyProof(proof) }
        if let assertion = request.clientAssertion { request.assertion = await verifyAssertion(assertion) }
        return request
    }

    /// The JOSE header of a compact JWS, read (not trusted) to pick the key.
    private static func header(of compact: String) -> [String: JSONValue]? {
        let parts = compact.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let bytes = Base64URL.decode(parts[0]),
            case .object(let header)? = try? JSONParser.parse(bytes)
        else { return nil }
        return header
    }

    /// The public key of a proof's header, or why the proof is refused
    /// before its signature is checked (RFC 9449 §4.3's checks of the header).
    private static func proofKey(_ compact: String) -> Result<(x: String, y: String), Refused> {
        guard let header = header(of: compact) else { return .failure(Refused("the proof is not a compact JWS")) }
        guard header["typ"] == .string("dpop+jwt") else {
            return .failure(Refused("typ is not dpop+jwt (RFC 9449 §4.2)"))
        }
        guard header["alg"] == .string("ES256") else { return .failure(Refused("the sandbox takes ES256 proofs only")) }
        guard case .object(let jwk)? = header["jwk"], jwk["kty"] == .string("EC"), jwk["crv"] == .string("P-256"),
            case .string(let x)? = jwk["x"], case .string(let y)? = jwk["y"]
        else { return .failure(Refused("jwk is not a P-256 public key")) }
        guard jwk["d"] == nil else { return .failure(Refused("jwk holds a private key (RFC 9449 §4.3)")) }
        return .success((x, y))
    }

    /// Why the proof is refused without a signature check, or `nil` when
    /// jwt-kit has to verify it.
    static func proofProblem(_ compact: String) -> String? {
        if case .failure(let refused) = proofKey(compact) { return refused.reason }
        return nil
    }

    /// A reason to refuse, as an error.
    struct Refused: Error {
        var reason: String
        init(_ reason: String) { self.reason = reason }
    }

    static func verifyProof(_ compact: String) async -> SignatureCheck<VerifiedProof> {
        let x: String
        let y: String
        switch proofKey(compact) {
        case .success(let key): (x, y) = key
        case .failure(let refused): return .refused(refused.reason)
        }
        struct Claims: JWTPayload {
            var jti: String
            var htm: String
            var htu: String
            var iat: Int
            var nonce: String?
            var ath: String?
            func verify(using algorithm: some JWTAlgorithm) async throws {}
        }
        do {
            let keys = JWTKeyCollection()
            await keys.add(ecdsa: try ES256PublicKey(parameters: (x, y)))
            let claims = try await keys.verify(compact, as: Claims.self)
            let canonical = #"{"crv":"P-256","kty":"EC","x":""# + x + #"","y":""# + y + #""}"#
            let jkt = SHA256.hash(data: Array(canonical.utf8)).withUnsafeBytes { Base64URL.encode($0) }
            return .verified(
                VerifiedProof(
                    jti: claims.jti, htm: claims.htm, htu: claims.htu, iat: claims.iat, nonce: claims.nonce,
                    ath: claims.ath, jkt: jkt))
        } catch {
            return .refused("the proof's signature does not verify with its jwk, or its claims are malformed")
        }
    }

    /// Why the assertion is refused before its signature is checked (not a
    /// JWS, an algorithm not taken, no key or secret to check it with), or
    /// `nil` when jwt-kit has to verify it.
    func assertionProblem(_ compact: String) -> String? {
        guard let header = Self.header(of: compact), case .string(let alg)? = header["alg"] else {
            return "the assertion is not a compact JWS"
        }
        switch alg {
        case "HS256":
            guard let secret = options.clientSecret else { return "the client has no secret" }
            // RFC 7518 §3.2: an HS256 key is at least 256 bits. jwt-kit
            // asserts it when the key is made (a debug build stopped on
            // one request whose header said HS256), so a shorter secret
            // never reaches it: no assertion is taken with it, as the
            // client refuses to sign one.
            if ClientAssertion.secretProblem(secret) != nil {
                return
                    "the sandbox's client secret is \(secret.utf8.count) bytes, too short to be an HS256 key (at least \(ClientAssertion.minimumSecretBytes), RFC 7518 §3.2): it takes no client_secret_jwt assertion; give it a longer secret (SandboxOptions.clientSecret)"
            }
            return nil
        case "ES256", "RS256", "PS256":
            return options.clientKey == nil ? "the sandbox was given no client key" : nil
        default:
            return "alg \(DisplayText.sanitized(alg, limit: 20)) is not taken (HS256, ES256, RS256, PS256)"
        }
    }

    func verifyAssertion(_ compact: String) async -> SignatureCheck<VerifiedAssertion> {
        if let problem = assertionProblem(compact) { return .refused(problem) }
        guard let header = Self.header(of: compact), case .string(let alg)? = header["alg"] else {
            return .refused("the assertion is not a compact JWS")
        }
        struct Claims: JWTPayload {
            var iss: String
            var sub: String
            var aud: AudienceClaim
            var jti: String
            var exp: Int
            func verify(using algorithm: some JWTAlgorithm) async throws {}
        }
        let keys = JWTKeyCollection()
        do {
            switch alg {
            case "HS256":
                // Long enough (assertionProblem): jwt-kit asserts on a shorter key.
                guard let secret = options.clientSecret else { return .refused("the client has no secret") }
                await keys.add(hmac: HMACKey(from: Array(secret.utf8)), digestAlgorithm: .sha256)
            case "ES256", "RS256", "PS256":
                // PS256: what AuthKit signs with an RSA JWK whose alg says so (FAPI 2.0).
                guard let key = options.clientKey else { return .refused("the sandbox was given no client key") }
                try await Self.add(clientKey: key, algorithm: alg, to: keys)
            default:
                return .refused("alg \(alg) is not taken (HS256, ES256, RS256, PS256)")
            }
            let claims = try await keys.verify(compact, as: Claims.self)
            return .verified(
                VerifiedAssertion(
                    iss: claims.iss, sub: claims.sub, aud: claims.aud.value, jti: claims.jti, exp: claims.exp))
        } catch {
            return .refused("the assertion's signature does not verify with the client's \(alg) key")
        }
    }

    /// Whether `text` is a key the sandbox can verify assertions with (an
    /// EC or RSA key, PEM or JWK, public or private): `sandbox serve
    /// --client-key` checks its file at start, where a file of anything
    /// else was taken, and every assertion was then refused as if its
    /// signature were wrong.
    package static func isReadableClientKey(_ text: String) async -> Bool {
        for algorithm in ["ES256", "RS256"] {
            if (try? await add(clientKey: text, algorithm: algorithm, to: JWTKeyCollection())) != nil { return true }
        }
        return false
    }

    /// The public half of `text` (PEM or JWK, public or private) as a verifier.
    private static func add(clientKey text: String, algorithm: String, to keys: JWTKeyCollection) async throws {
        let trimmed = text.trimmingSpacesAndNewlines()
        if trimmed.hasPrefix("{") {
            try await keys.add(jwk: try JSONDecoder().decode(JWK.self, from: Data(trimmed.utf8)))
        } else if algorithm == "ES256" {
            let key = try (try? ES256PublicKey(pem: trimmed)) ?? ES256PrivateKey(pem: trimmed).publicKey
            await keys.add(ecdsa: key)
        } else {
            let key =
                try (try? JWTKit.Insecure.RSA.PublicKey(pem: trimmed))
                ?? JWTKit.Insecure.RSA.PrivateKey(pem: trimmed).publicKey
            if algorithm == "PS256" {
                await keys.add(pss: key, digestAlgorithm: .sha256)
            } else {
                await keys.add(rsa: key, digestAlgorithm: .sha256)
            }
        }
    }

    // MARK: - Claims, under the lock

    /// RFC 7523 §3: the assertion's claims, each `jti` once, of the kind
    /// the client registered: `client_secret_jwt` (HS256) only where the
    /// descriptor says so (`expected`), `private_key_jwt` where it says so
    /// or the sandbox was given the client's key (a client with a key signs
    /// with it wherever it authenticates, as AuthKit's does). RFC 6749 §2.3:
    /// a client authenticates the one way it registered, not any it likes.
    func authenticateByAssertion(
        _ request: SandboxRequest, _ parameters: Parameters, as expected: ClientAuthentication
    ) throws -> String {
        guard parameters["client_assertion_type"] == "urn:ietf:params:oauth:client-assertion-type:jwt-bearer" else {
            throw Refusal.invalidClient("client_assertion_type is not jwt-bearer (RFC 7523 §2.2)")
        }
        guard request.header("authorization") == nil, !parameters.has("client_secret") else {
            throw Refusal.invalidRequest("the client authenticated in more than one way (RFC 6749 §2.3)")
        }
        if let compact = parameters["client_assertion"], case .string(let alg)? = Self.header(of: compact)?["alg"] {
            if alg == "HS256", expected != .clientSecretJWT {
                throw Refusal.invalidClient(
                    "a client_secret_jwt assertion (HS256), but \(descriptor.name) authenticates this client with \(expected.rawValue) here (the descriptor's clientAuthentication; RFC 6749 §2.3)"
                )
            }
            if alg != "HS256", expected != .privateKeyJWT, options.clientKey == nil {
                throw Refusal.invalidClient(
                    "a private_key_jwt assertion (\(DisplayText.sanitized(alg, limit: 20))), but the client registered no key (SandboxOptions.clientKey, sandbox serve --client-key) and the descriptor's clientAuthentication here is \(expected.rawValue) (RFC 6749 §2.3)"
                )
            }
        }
        switch request.assertion {
        case .verified(let claims)?:
            guard ExactText.same(claims.iss, options.clientID), ExactText.same(claims.sub, options.clientID) else {
                throw Refusal.invalidClient("iss and sub must both be the client id")
            }
            if let id = parameters["client_id"], !ExactText.same(id, options.clientID) {
                throw Refusal.invalidClient("client_id is not the assertion's sub")
            }
            let audiences = [address.rewrite(descriptor.token!.url), issuer, request.origin + request.path]
            guard claims.aud.contains(where: { aud in audiences.contains { ExactText.same($0, aud) } }) else {
                throw Refusal.invalidClient("aud names neither the token endpoint nor the issuer")
            }
            guard TimeInterval(claims.exp) > now.timeIntervalSince1970 else {
                throw Refusal.invalidClient("the assertion has expired")
            }
            // Its jti is remembered until it expires: no longer than an hour
            // ahead, as servers bound what they keep (RFC 7523 §3 lets them).
            guard TimeInterval(claims.exp) <= now.timeIntervalSince1970 + 3600 else {
                throw Refusal.invalidClient("the assertion expires more than an hour from now")
            }
            switch ledger.firstUse(
                ofJTI: "assertion " + claims.jti,
                refusedAnywayAfter: Date(timeIntervalSince1970: TimeInterval(claims.exp)),
                now: now)
            {
            case true?: break
            case false?: throw Refusal.invalidClient("the assertion's jti was used before (RFC 7523 §3)")
            case nil:
                throw Refusal(
                    "temporarily_unavailable",
                    "the sandbox holds as many unexpired assertions as it keeps; try again later")
            }
            return options.clientID
        case .refused(let reason)?:
            throw Refusal.invalidClient(reason)
        case nil:
            throw Refusal.invalidClient("client_assertion is missing")
        }
    }

    /// RFC 9449 §4.3: the request's proof, for `request` (and, at a
    /// resource, for `accessToken`), carrying `nonce`. Returns the key's thumbprint.
    func checkProof(_ request: SandboxRequest, nonce: String, accessToken: String? = nil, status: Int = 400) throws
        -> String
    {
        func refuse(_ code: String, _ text: String) -> Refusal {
            var refusal = Refusal(code, text, status: status)
            refusal.headers = [("DPoP-Nonce", nonce)]
            return refusal
        }
        let proof: VerifiedProof
        switch request.proof {
        case .verified(let verified)?: proof = verified
        case .refused(let reason)?: throw refuse("invalid_dpop_proof", reason)
        case nil: throw refuse("invalid_dpop_proof", "a DPoP proof is required (RFC 9449 §5)")
        }
        // Compared byte for byte, as RFC 9449 §4.3 has a server do: Swift's
        // == would take a canonically equivalent text (U+212A for K) as equal.
        guard ExactText.same(proof.htm, request.method) else {
            throw refuse("invalid_dpop_proof", "htm is not the method")
        }
        guard ExactText.same(proof.htu, request.origin + request.path) else {
            throw refuse("invalid_dpop_proof", "htu is not this URL without query and fragment")
        }
        guard abs(TimeInterval(proof.iat) - now.timeIntervalSince1970) <= 60 else {
            throw refuse("invalid_dpop_proof", "iat is more than 60 s from now")
        }
        if let accessToken {
            let ath = SHA256.hash(data: Array(accessToken.utf8)).withUnsafeBytes { Base64URL.encode($0) }
            guard ExactText.same(proof.ath ?? "", ath) else {
                throw refuse("invalid_dpop_proof", "ath is not the token's hash")
            }
        }
        guard ExactText.same(proof.nonce ?? "", nonce) else {
            throw refuse("use_dpop_nonce", "the proof must carry the server's DPoP-Nonce (RFC 9449 §8)")
        }
        switch ledger.firstUse(
            ofJTI: "proof " + proof.jti, refusedAnywayAfter: Date(timeIntervalSince1970: TimeInterval(proof.iat) + 60),
            now: now)
        {
        case true?: break
        case false?: throw refuse("invalid_dpop_proof", "the proof's jti was used before (RFC 9449 §11.1)")
        case nil:
            throw refuse(
                "invalid_dpop_proof", "the sandbox holds as many proofs of the last minute as it keeps; try again")
        }
        return proof.jkt
    }

    // MARK: - Pushed authorization requests

    /// The most bytes of parameters one pushed request may hold: they are
    /// kept for 60 s, ten thousand requests at most, and stand for a query
    /// (which RFC 9110 §4.1 has servers take up to 8,000 octets of).
    static let maxPushedBytes = 8000
    /// The most parameters one pushed request may hold: each costs its
    /// storage beside its bytes, and 8,000 bytes of one-letter names made
    /// about 4,000 of them, fifteen times what the byte bound allows for.
    /// RFC 9126's requests carry a dozen or so.
    static let maxPushedParameters = 64

    /// RFC 9126 §2: the parameters kept under a `request_uri` for 60 s, once
    /// checked as the authorization endpoint checks them (§2.1: an
    /// unregistered redirect URI or an unknown scope is refused here, not
    /// after the user was sent to the authorization endpoint).
    ///
    /// A DPoP proof sent here binds the code as `dpop_jkt` does (RFC 9449
    /// §10.1), and one whose key is not the `dpop_jkt` sent with it is refused.
    func pushAuthorization(_ request: SandboxRequest) -> SandboxResponse {
        let endpoint = descriptor.token!
        do {
            let parameters = try parameters(of: request, .form)
            _ = try authenticateClient(request, parameters, as: endpoint.clientAuthentication)
            guard !parameters.has("request_uri") else {
                throw Refusal.invalidRequest("request_uri cannot be pushed (RFC 9126 §2.1)")
            }
            // The client's credentials are not authorization parameters; its id is added once.
            var pairs =
                parameters.values.filter {
                    !$0.key.hasPrefix("client_assertion") && !["client_secret", "client_id"].contains($0.key)
                }.map { ($0.key, $0.value) } + [("client_id", options.clientID)]
            guard pairs.count <= Self.maxPushedParameters else {
                throw Refusal.invalidRequest(
                    "the pushed request has \(pairs.count) parameters; the sandbox keeps at most \(Self.maxPushedParameters)"
                )
            }
            let size = pairs.reduce(0) { $0 + $1.0.utf8.count + $1.1.utf8.count }
            guard size <= Self.maxPushedBytes else {
                throw Refusal.invalidRequest(
                    "the pushed parameters are \(size) bytes; the sandbox keeps at most \(Self.maxPushedBytes)")
            }
            // Only where the descriptor's tokens are DPoP-bound, as at the
            // token endpoint: elsewhere a client's header is ignored.
            if descriptor.dpop == .on, request.header("dpop") != nil {
                let jkt = try checkProof(request, nonce: ledger.tokenNonce)
                if let sent = parameters["dpop_jkt"] {
                    guard ExactText.same(sent, jkt) else {
                        throw Refusal.invalidRequest(
                            "dpop_jkt is not the thumbprint of the DPoP proof's key (RFC 9449 §10.1)")
                    }
                } else {
                    pairs.append(("dpop_jkt", jkt))
                }
            }
            if let authorization = descriptor.authorization {
                switch checkAuthorization(Parameters(pairs), endpoint: authorization, issuer: nil) {
                case .accepted: break
                case .page(let problem): throw Refusal.invalidRequest(problem)
                case .redirect(let code, let text, _, _): throw Refusal(code, text)
                }
            }
            let uri = "urn:ietf:params:oauth:request_uri:" + ledger.mint("request")
            ledger.pushedRequests[uri] = GrantLedger.PushedRequest(
                parameters: pairs, expiresAt: now.addingTimeInterval(60))
            return .json(
                .object(["request_uri": .string(uri), "expires_in": .integer(60)]), status: 201, step: "par",
                summary: "authorization request pushed")
        } catch let refusal as Refusal {
            return shaped(refusal, mapping: endpoint.response, step: "par")
        } catch {
            return shaped(Refusal("server_error", "\(error)", status: 500), mapping: endpoint.response, step: "par")
        }
    }

    /// The authorization request's parameters: the pushed ones its
    /// `request_uri` names (used once, RFC 9126 §4), or its query. A provider
    /// with a pushed endpoint takes nothing else.
    func authorizationParameters(_ query: [(String, String)]) -> PushedParameters {
        let sent = Parameters(query)
        // Checked before a pushed request is used up: a second `request_uri`
        // (the last one was taken), or a request with no client id, spent it.
        if let repeated = sent.repeated {
            return .refused("'\(repeated)' is sent more than once (RFC 6749 §3.1).")
        }
        guard let uri = sent["request_uri"] else {
            return descriptor.authorization?.pushedRequestURL == nil
                ? .pairs(query) : .refused("this provider takes pushed requests only: request_uri is missing.")
        }
        guard let id = sent["client_id"], ExactText.same(id, options.clientID) else {
            return .refused("client_id is not the one that pushed the request.")
        }
        guard let pushed = ledger.pushedRequests.removeValue(forKey: uri), pushed.expiresAt > now else {
            return .refused("request_uri is unknown, used or expired (RFC 9126 §4).")
        }
        return .pairs(pushed.parameters)
    }

    // MARK: - Introspection

    /// RFC 7662 §2: whether a token of this sandbox is live, for an
    /// authenticated client; `{"active": false}` for any other.
    func introspect(_ request: SandboxRequest) -> SandboxResponse {
        let endpoint = descriptor.token!
        do {
            let parameters = try parameters(of: request, .form)
            _ = try authenticateClient(request, parameters, as: endpoint.clientAuthentication)
            guard let token = parameters["token"] else { throw Refusal.invalidRequest("token is missing") }
            // RFC 7662 §2.1: an access token or a refresh token (a live one:
            // issued, not rotated away, its grant not revoked).
            let grant: GrantLedger.Grant
            let jkt: String?
            var members: [String: JSONValue] = [:]
            if let (_, live) = ledger.liveGrant(ofAccessToken: token, at: now) {
                grant = live
                jkt = ledger.accessTokens[token]?.jkt
                members["token_type"] = .string(jkt == nil ? "Bearer" : "DPoP")
                if let expiry = ledger.accessTokens[token]?.expiresAt {
                    members["exp"] = .integer(Int64(expiry.timeIntervalSince1970))
                }
            } else if let record = ledger.refreshTokens[token], !record.rotated, let live = ledger.grants[record.grant],
                !live.revoked
            {
                grant = live
                jkt = record.jkt
            } else {
                return .json(.object(["active": .bool(false)]), step: "introspection", summary: "inactive token")
            }
            members["active"] = .bool(true)
            members["scope"] = .string(grant.scopes.joined(separator: " "))
            members["client_id"] = .string(options.clientID)
            // The sub the ID token and UserInfo give (RFC 7662 §2.2).
            members["sub"] = .string(subject(of: grant))
            // RFC 9449 §6.2: a bound token's key, as cnf.jkt.
            if let jkt { members["cnf"] = .object(["jkt": .string(jkt)]) }
            return .json(.object(members), step: "introspection", summary: "active token of \(grant.account)")
        } catch let refusal as Refusal {
            return shaped(refusal, mapping: endpoint.response, step: "introspection")
        } catch {
            return shaped(
                Refusal("server_error", "\(error)", status: 500), mapping: endpoint.response, step: "introspection")
        }
    }

    // MARK: - Grants for machines

    /// Whether the sandbox's client can authenticate (a secret or a key):
    /// only such a client has the grants for machines (RFC 6749 §4.4.1: "MUST
    /// only be used by confidential clients"), and the metadata lists them
    /// only then.
    var hasMachineGrants: Bool { options.clientSecret != nil || options.clientKey != nil }

    /// RFC 6749 §4.4: a confidential client's token for itself, for scopes
    /// the provider knows (as at the authorization endpoint). No ID token:
    /// nobody signed in (OpenID Connect Core §2: an ID token is about an
    /// authentication of an end-user).
    func clientCredentials(_ request: SandboxRequest, _ parameters: Parameters, jkt: String?) throws
        -> SandboxResponse
    {
        guard hasMachineGrants else {
            throw Refusal("unauthorized_client", "a public client has no client credentials grant (RFC 6749 §4.4)")
        }
        _ = try authenticateClient(request, parameters, as: descriptor.token!.clientAuthentication)
        var scopes = parameters["scope"].map(splitScopes) ?? descriptor.scopes.default
        if scopes.isEmpty { scopes = descriptor.scopes.default }
        if let problem = scopeProblem(parameters["scope"], scopes) { throw Refusal("invalid_scope", problem) }
        let grant = ledger.newGrant(account: "client:" + options.clientID, scopes: scopes, at: now, ofClient: true)
        return issue(
            grant: grant, scopes: scopes, step: "client credentials", summary: "token for the client itself",
            refresh: false, jkt: jkt, idToken: false)
    }

    /// RFC 8693 §2: a live access token of this sandbox traded for another,
    /// by a client that authenticates (the metadata lists the grant only for
    /// one). The answer is an access token alone (§2.2.1), no ID token.
    func exchangeToken(_ request: SandboxRequest, _ parameters: Parameters, jkt: String?) throws -> SandboxResponse {
        guard hasMachineGrants else {
            throw Refusal("unauthorized_client", "a public client has no token exchange here (RFC 8693 §2.1)")
        }
        _ = try authenticateClient(request, parameters, as: descriptor.token!.clientAuthentication)
        guard let subject = parameters["subject_token"] else {
            throw Refusal.invalidRequest("subject_token is missing")
        }
        guard parameters["subject_token_type"] == OAuth2Client.accessTokenType else {
            throw Refusal.invalidRequest("subject_token_type must be \(OAuth2Client.accessTokenType)")
        }
        guard let (_, grant) = ledger.liveGrant(ofAccessToken: subject, at: now) else {
            throw Refusal.invalidRequest("the subject_token is unknown, expired or revoked (RFC 8693 §2.2.2)")
        }
        var scopes = grant.scopes
        if let asked = parameters["scope"] {
            scopes = splitScopes(asked)
            if let extra = scopes.first(where: { !grant.scopes.contains($0) }) {
                throw Refusal("invalid_scope", "'\(extra)' is more than the subject token has")
            }
        }
        let exchanged = ledger.newGrant(account: grant.account, scopes: scopes, at: now, ofClient: grant.ofClient)
        return issue(
            grant: exchanged, scopes: scopes, step: "token exchange", summary: "token exchanged for \(grant.account)",
            refresh: false, jkt: jkt, idToken: false,
            extra: ["issued_token_type": .string(OAuth2Client.accessTokenType)])
    }
}
