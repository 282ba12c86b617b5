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

    /// The key as a JWK Set member (RFC 7517 §4): its public half only.
    var publicKey: JSONValue {
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
        return .object(jwk)
    }

    /// A compact JWS of `claims` (RFC 7515 §7.1); `unsigned`: an unsecured
    /// JWS (`alg: none`, an empty signature, RFC 7515 §A.5), which no
    /// client may accept.
    func sign(_ claims: [String: JSONValue], unsigned: Bool = false) -> String {
        let header: JSONValue = .object(
            unsigned
                ? ["alg": .string("none"), "typ": .string("JWT")]
                : ["alg": .string(algorithm.rawValue), "kid": .string(keyID), "typ": .string("JWT")])
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let input =
            Base64URL.encode((try? encoder.encode(header)) ?? Data()) + "."
            + Base64URL.encode((try? encoder.encode(JSONValue.object(claims))) ?? Data())
        if unsigned { return input + "." }
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
    /// Its issuer names the tenant of a multi-tenant provider: the one the
    /// token request's path names, or the sandbox's own for an "any tenant"
    /// value (`common`), in `tid` too, as Microsoft's tokens do.
    func idToken(
        grant id: Int, _ grant: GrantLedger.Grant, scopes: [String], nonce: String?, accessToken: String,
        captures: [String: String]
    ) -> String? {
        guard scopes.contains("openid"), let signer = signingKeys.last else { return nil }
        let fault = options.fault
        let issued = Int64(now.timeIntervalSince1970) - (fault == .expired ? 7200 : 0)
        var claims: [String: JSONValue] = [
            "iss": .string(fault == .wrongIssuer ? issuer + ".example" : idTokenIssuer(captures: captures)),
            "sub": .string(subject(of: grant)),
            "aud": .string(fault == .wrongAudience ? "another-client" : options.clientID),
            "iat": .integer(issued), "exp": .integer(issued + 3600),
            "auth_time": .integer(min(issued, Int64(grant.authenticatedAt.timeIntervalSince1970))),
            "at_hash": .string(IDTokenVerifier.halfHash(accessToken, signer.algorithm)),
        ]
        if let tenants = descriptor.openID?.multiTenantIssuer { claims[tenants.claim] = .string(tenant(captures)) }
        if let nonce { claims["nonce"] = .string(fault == .wrongNonce ? SecureRandom.token() : nonce) }
        for (name, value) in standardClaims(of: grant, scopes: scopes) { claims[name] = value }
        let token: String
        switch fault {
        case .unsigned: token = signer.sign(claims, unsigned: true)
        case .unknownKey: token = (IDTokenSigner(algorithms: [signer.algorithm]) ?? signer).sign(claims)
        default: token = signer.sign(claims)
        }
        ledger.idTokens[token] = id
        return token
    }

    /// The `sub` of `grant`: the same in the ID token, at UserInfo, in
    /// introspection and at the descriptor's "who am I" call (OpenID Connect
    /// Core §5.3.2: UserInfo's must be the ID token's). `sandbox-user-ACCOUNT`,
    /// or for the client's own grant the client id (RFC 9068 §2.2: with no
    /// resource owner, `sub` names the client).
    func subject(of grant: GrantLedger.Grant) -> String {
        grant.ofClient ? options.clientID : Self.subjectPrefix + grant.account
    }

    /// OpenID Connect Core §5.4: what `email` and `profile` give.
    func standardClaims(of grant: GrantLedger.Grant, scopes: [String]) -> [String: JSONValue] {
        var claims = [String: JSONValue]()
        if scopes.contains("email") {
            claims["email"] = .string("\(grant.account)@sandbox.example")
            claims["email_verified"] = .bool(true)
        }
        if scopes.contains("profile") {
            claims["name"] = .string(grant.account.prefix(1).uppercased() + grant.account.dropFirst())
            claims["preferred_username"] = .string(grant.account)
        }
        return claims
    }

    /// The tenant a multi-tenant provider's token names: the one asked for,
    /// the one an alias stands for (`consumers`), or the sandbox's own.
    private func tenant(_ captures: [String: String]) -> String {
        guard let tenants = descriptor.openID?.multiTenantIssuer, let asked = captures[tenants.placeholder],
            !tenants.values.contains(asked), !asked.isEmpty
        else { return "00000000-0000-0000-0000-5a4db0c5e7e1" }
        return tenants.issuerValue(for: asked)
    }

    /// The `iss` of an authorization response (RFC 9207 §2): the issuer
    /// with the request's placeholders filled in; none from an "any tenant"
    /// endpoint of a multi-tenant provider, which stands for many issuers
    /// (Microsoft's sends none).
    func responseIssuer(captures: [String: String]) -> String? {
        guard descriptor.issuer != nil else { return nil }
        if let tenants = descriptor.openID?.multiTenantIssuer,
            tenants.values.contains(captures[tenants.placeholder] ?? tenants.values[0])
        {
            return nil
        }
        return idTokenIssuer(captures: captures)
    }

    /// The issuer, its placeholders filled as the token request's path did.
    private func idTokenIssuer(captures: [String: String]) -> String {
        var text = issuer
        let tenantPlaceholder = descriptor.openID?.multiTenantIssuer?.placeholder
        for (name, value) in captures where name != tenantPlaceholder {
            text = text.replacing("{\(name)}", with: value)
        }
        if let tenantPlaceholder { text = text.replacing("{\(tenantPlaceholder)}", with: tenant(captures)) }
        return text
    }

    /// GET on the descriptor's key-set URL: the sandbox's public keys.
    func keySet(_ request: SandboxRequest) -> SandboxResponse {
        .json(
            .object(["keys": .array(signingKeys.map(\.publicKey))]), status: 200, step: "keys",
            summary: signingKeys.isEmpty
                ? "no signing key" : "signing keys " + signingKeys.map(\.keyID).joined(separator: ", "))
    }

    /// `POST /rotate-keys`: a new signing key, published beside the one
    /// before it (which is then dropped at the next rotation), so a client's
    /// kept copy of the key set lacks the key new tokens name (Core §10.1.1).
    func rotateKeys() -> SandboxResponse {
        guard let newest = signingKeys.last, let next = IDTokenSigner(algorithms: [newest.algorithm]) else {
            return .json(
                .object([
                    "error": .string("not_found"), "error_description": .string("this provider signs no ID tokens"),
                ]),
                status: 404, step: "keys", summary: "no keys to rotate")
        }
        signingKeys = [newest, next]
        return .json(
            .object(["keys": .array(signingKeys.map { .string($0.keyID) })]), step: "keys",
            summary: "rotated: signing with \(next.keyID), still publishing \(newest.keyID)")
    }

    /// The UserInfo endpoint (Core §5.3): the standard claims the grant's
    /// scopes give, for a Bearer access token granted `openid`.
    func userInfo(_ request: SandboxRequest) -> SandboxResponse {
        // RFC 9449 §7.1: a DPoP-bound token with its proof.
        if let access = dpopAccess(request) {
            switch access {
            case .refused(let refusal): return refusal
            case .grant(let grant): return userInfoAnswer(grant)
            }
        }
        guard let header = request.header("authorization"), header.lowercased().hasPrefix("bearer ") else {
            return userInfoRefusal(nil, "no Bearer token (RFC 6750 §2.1)")
        }
        let token = String(header.dropFirst(7)).trimmingSpaces()
        guard let (_, grant) = ledger.liveGrant(ofAccessToken: token, at: now) else {
            return userInfoRefusal("invalid_token", "the access token is unknown, expired or revoked")
        }
        // RFC 9449 §7.2: a bound token sent as a Bearer token is refused,
        // here as at /whoami (the proof is what makes a stolen copy useless).
        if ledger.accessTokens[token]?.jkt != nil {
            var refusal = dpopChallenge("invalid_token", "the token is DPoP-bound: send it as DPoP with a proof")
            refusal.step = "userinfo"
            return refusal
        }
        return userInfoAnswer(grant)
    }

    private func userInfoAnswer(_ grant: GrantLedger.Grant) -> SandboxResponse {
        // §5.3.3: an access token without openid is refused.
        guard grant.scopes.contains("openid") else {
            return userInfoRefusal("insufficient_scope", "the access token was not granted openid", status: 403)
        }
        var claims = standardClaims(of: grant, scopes: grant.scopes)
        claims["sub"] = .string(subject(of: grant))
        return .json(.object(claims), step: "userinfo", summary: "userinfo for account \(grant.account)")
    }

    private func userInfoRefusal(_ code: String?, _ text: String, status: Int = 401) -> SandboxResponse {
        let challenge = "Bearer realm=\"sandbox\"" + (code.map { ", error=\"\($0)\"" } ?? "")
        return .json(
            .object(["error": .string(code ?? "invalid_request"), "error_description": .string(text)]),
            status: status, step: "userinfo", summary: text, headers: [("WWW-Authenticate", challenge)])
    }

    /// RP-Initiated Logout 1.0 §2-3: the hint (when sent) must be an ID
    /// token the sandbox issued to this client; the return address one the
    /// client registered (the redirect URIs' rules); `state` comes back
    /// with the user. Without a return address, a page says the user is
    /// signed out. The sandbox keeps no browser session, so nothing else ends.
    func endSession(_ request: SandboxRequest) -> SandboxResponse {
        let parameters: Parameters
        do {
            parameters = try self.parameters(of: request, request.method == "POST" ? .form : .query)
        } catch let refusal as Refusal {
            return endSessionPage(refusal.description, status: 400)
        } catch {
            return endSessionPage("\(error)", status: 400)
        }
        if let client = parameters["client_id"], !ExactText.same(client, options.clientID) {
            return endSessionPage("unknown client_id", status: 400)
        }
        var account: String?
        if let hint = parameters["id_token_hint"] {
            guard let grant = ledger.idTokens[hint].flatMap({ ledger.grants[$0] }) else {
                return endSessionPage("id_token_hint is not an ID token this sandbox issued", status: 400)
            }
            account = grant.account
        }
        guard let target = parameters["post_logout_redirect_uri"] else {
            return .html(
                ConsentPage.page(
                    title: "Signed out",
                    body: "<p>Signed out of \(ConsentPage.escape(descriptor.name)) (sandbox)"
                        + (account.map { " as <b>\(ConsentPage.escape($0))</b>" } ?? "") + ".</p>"),
                step: "end session", summary: "signed out \(account ?? "(no hint)")")
        }
        // §3: the return address must have been registered, as a redirect URI is.
        guard isRegistered(target), parameters["id_token_hint"] != nil || parameters["client_id"] != nil else {
            return endSessionPage(
                "post_logout_redirect_uri is not registered for this client (or neither id_token_hint nor client_id was sent)",
                status: 400)
        }
        let back =
            URL(string: target)?.appendingQuery(parameters["state"].map { [("state", $0)] } ?? []) ?? URL(
                string: target)!
        return .redirect(
            back.absoluteString, step: "end session", summary: "signed out \(account ?? "(no hint)"), back to the app")
    }

    private func endSessionPage(_ problem: String, status: Int) -> SandboxResponse {
        .html(
            ConsentPage.page(title: "Sign-out refused", body: "<p>\(ConsentPage.escape(problem))</p>"), status: status,
            step: "end session", summary: problem)
    }
}
