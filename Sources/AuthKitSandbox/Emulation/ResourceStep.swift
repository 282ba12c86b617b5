import AuthKit

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A protected resource, so a signed-in client has something to call
/// (`/whoami`: the account and scopes; `/echo`: what arrived), and the
/// server's metadata (RFC 8414).
extension Emulator {
    func resource(_ request: SandboxRequest) -> SandboxResponse {
        let account: String
        let scopes: [String]
        if descriptor.protocol == .oauth1 {
            switch verifyOAuth1(request, tokenKind: .access) {
            case .failure(let refusal):
                return .json(
                    .object(["error": .string(refusal.code), "error_description": .string(refusal.description)]),
                    status: 401, step: "resource", summary: "\(refusal.code): \(refusal.description)",
                    headers: [("WWW-Authenticate", "OAuth realm=\"sandbox\"")])
            case .success(let verified):
                account = verified.account ?? "?"
                scopes = []
            }
        } else {
            // RFC 6750 §2.1: the Bearer header (§2.2's form body and §2.3's
            // query are not accepted: the query leaks into logs).
            // RFC 9449 §7.1: a DPoP-bound token comes as `DPoP <token>` with a proof for it.
            if let access = dpopAccess(request) {
                switch access {
                case .refused(let refusal): return refusal
                case .grant(let grant): (account, scopes) = (grant.account, grant.scopes)
                }
            } else {
                guard let header = request.header("authorization"), header.lowercased().hasPrefix("bearer ") else {
                    return bearerChallenge(nil, "no Bearer token (RFC 6750 §2.1)")
                }
                let token = String(header.dropFirst(7)).trimmingSpaces()
                guard let (_, grant) = ledger.liveGrant(ofAccessToken: token, at: now) else {
                    return bearerChallenge("invalid_token", "the access token is unknown, expired or revoked")
                }
                // RFC 9449 §7.2: a bound token sent as a Bearer token is refused.
                if ledger.accessTokens[token]?.jkt != nil {
                    return dpopChallenge("invalid_token", "the token is DPoP-bound: send it as DPoP with a proof")
                }
                account = grant.account
                scopes = grant.scopes
            }
        }
        if request.path == "/whoami" {
            return .json(
                .object([
                    "account": .string(account), "provider": .string(descriptor.id),
                    "scopes": .array(scopes.map(JSONValue.string)), "client_id": .string(options.clientID),
                ]), step: "resource", summary: "whoami for account \(account)")
        }
        // The echo shows what arrived, except the credential itself.
        let headers = request.headers.map { name, value in
            JSONValue.array([
                .string(name),
                .string(name == "authorization" ? String(value.prefix { $0 != " " }) + " (hidden)" : value),
            ])
        }
        return .json(
            .object([
                "method": .string(request.method), "path": .string(request.path),
                "query": .string(request.rawQuery ?? ""),
                "headers": .array(headers), "body": .string(String(decoding: request.body, as: UTF8.self)),
                "account": .string(account),
            ]), step: "resource", summary: "echo for account \(account)")
    }

    /// The descriptor's `whoAmI` call: the account, at the paths the
    /// descriptor reads (`id` → `sandbox-user-alice`, `login` → `alice`).
    /// What a `DPoP <token>` request may use (RFC 9449 §7.1): the grant of
    /// a live token bound to the key its proof is signed with, or the
    /// refusal to answer; `nil` for a request of another scheme.
    enum DPoPAccess {
        case grant(GrantLedger.Grant)
        case refused(SandboxResponse)
    }

    func dpopAccess(_ request: SandboxRequest) -> DPoPAccess? {
        guard let header = request.header("authorization"), header.lowercased().hasPrefix("dpop ") else { return nil }
        let token = String(header.dropFirst(5)).trimmingSpaces()
        guard let (_, grant) = ledger.liveGrant(ofAccessToken: token, at: now),
            let bound = ledger.accessTokens[token]?.jkt
        else {
            return .refused(
                dpopChallenge("invalid_token", "the access token is unknown, expired, revoked or not bound"))
        }
        do {
            let jkt = try checkProof(request, nonce: ledger.resourceNonce, accessToken: token, status: 401)
            guard jkt == bound else {
                return .refused(
                    dpopChallenge("invalid_dpop_proof", "the proof's key is not the one the token is bound to"))
            }
        } catch let refusal as Refusal {
            return .refused(dpopChallenge(refusal.code, refusal.description))
        } catch {
            return .refused(dpopChallenge("invalid_dpop_proof", "\(error)"))
        }
        return .grant(grant)
    }

    func whoAmI(_ request: SandboxRequest) -> SandboxResponse {
        if let access = dpopAccess(request), let settings = descriptor.whoAmI {
            switch access {
            case .refused(let refusal): return refusal
            case .grant(let grant): return whoAmIAnswer(grant, settings)
            }
        }
        guard let header = request.header("authorization"), header.lowercased().hasPrefix("bearer ") else {
            return bearerChallenge(nil, "no Bearer token (RFC 6750 §2.1)")
        }
        let token = String(header.dropFirst(7)).trimmingSpaces()
        guard let (_, grant) = ledger.liveGrant(ofAccessToken: token, at: now), let settings = descriptor.whoAmI else {
            return bearerChallenge("invalid_token", "the access token is unknown, expired or revoked")
        }
        if ledger.accessTokens[token]?.jkt != nil {
            return dpopChallenge("invalid_token", "the token is DPoP-bound: send it as DPoP with a proof")
        }
        return whoAmIAnswer(grant, settings)
    }

    private func whoAmIAnswer(_ grant: GrantLedger.Grant, _ settings: WhoAmISettings) -> SandboxResponse {
        var answer = JSONValue.object([:])
        Self.put(.string(subject(of: grant)), at: settings.subject, in: &answer)
        if let name = settings.name { Self.put(.string(grant.account), at: name, in: &answer) }
        return .json(answer, step: "whoami", summary: "who am I for account \(grant.account)")
    }

    /// Writes `value` at `path`, making the objects and arrays on the way.
    static func put(_ value: JSONValue, at path: FieldPath, in root: inout JSONValue) {
        func put(_ components: ArraySlice<FieldPath.Component>, into node: inout JSONValue) {
            guard let first = components.first else {
                node = value
                return
            }
            switch first {
            case .member(let name):
                var members: [String: JSONValue] = if case .object(let existing) = node { existing } else { [:] }
                var child = members[name] ?? .null
                put(components.dropFirst(), into: &child)
                members[name] = child
                node = .object(members)
            case .index(let index):
                // As ProviderShape: `data[99999999]` in a descriptor must not allocate the machine away.
                guard index < 64 else { return }
                var elements: [JSONValue] = if case .array(let existing) = node { existing } else { [] }
                while elements.count <= index { elements.append(.object([:])) }
                put(components.dropFirst(), into: &elements[index])
                node = .array(elements)
            }
        }
        put(path.components[...], into: &root)
    }

    /// RFC 9449 §7.1: a refusal of a DPoP request, with the resource's nonce.
    func dpopChallenge(_ code: String, _ text: String) -> SandboxResponse {
        .json(
            .object(["error": .string(code), "error_description": .string(text)]), status: 401, step: "resource",
            summary: "\(code): \(text)",
            headers: [
                ("WWW-Authenticate", "DPoP algs=\"ES256\", error=\"\(code)\""), ("DPoP-Nonce", ledger.resourceNonce),
            ])
    }

    private func bearerChallenge(_ code: String?, _ text: String) -> SandboxResponse {
        let challenge = "Bearer realm=\"sandbox\"" + (code.map { ", error=\"\($0)\"" } ?? "")
        return .json(
            .object(["error": .string(code ?? "invalid_request"), "error_description": .string(text)]),
            status: 401, step: "resource", summary: text, headers: [("WWW-Authenticate", challenge)])
    }

    /// RFC 8414 §3: at `/.well-known/oauth-authorization-server` followed by
    /// the issuer's path (the sandbox's issuer is `BASE/HOST`), and at the bare location.
    func metadata(path: String) -> SandboxResponse {
        let issuerPath = String(issuer.dropFirst(address.base.count))
        guard descriptor.protocol == .oauth2,
            path == "/.well-known/oauth-authorization-server" + issuerPath
                || path == "/.well-known/oauth-authorization-server"
        else {
            return .json(
                .object(["error": .string("not_found")]), status: 404, step: "metadata", summary: "no metadata here")
        }
        var members: [String: JSONValue] = [
            "issuer": .string(issuer),
            "token_endpoint": .string(address.rewrite(descriptor.token!.url)),
            // The grants the emulation takes of this client (RFC 8414 §2):
            // refresh where it issues refresh tokens; the grants for
            // machines only for a client that can authenticate.
            "grant_types_supported": .array(
                ((descriptor.authorization == nil ? [] : ["authorization_code"])
                    + (options.issuesRefreshTokens ? ["refresh_token"] : [])
                    + (descriptor.device == nil ? [] : [Self.deviceGrantType])
                    + (hasMachineGrants ? ["client_credentials", Self.tokenExchangeGrantType] : []))
                    .map(JSONValue.string)),
            "authorization_response_iss_parameter_supported": .bool(descriptor.issuer != nil),
        ]
        // A device-only provider has no authorization endpoint, and so no
        // response types (RFC 8414 §2: both are left out).
        if let authorization = descriptor.authorization {
            members["authorization_endpoint"] = .string(address.rewrite(authorization.url))
            members["response_types_supported"] = .array([.string("code")])
        }
        let methods: [String: String] = [
            "basic": "client_secret_basic", "post": "client_secret_post", "none": "none",
            "client_secret_jwt": "client_secret_jwt", "private_key_jwt": "private_key_jwt",
        ]
        members["token_endpoint_auth_methods_supported"] = .array(
            Set(
                [methods[descriptor.token!.clientAuthentication.rawValue]!]
                    + (options.clientKey == nil ? [] : ["private_key_jwt"])
            )
            .sorted().map(JSONValue.string))
        if let par = descriptor.authorization?.pushedRequestURL {
            members["pushed_authorization_request_endpoint"] = .string(address.rewrite(par))
            members["require_pushed_authorization_requests"] = .bool(true)
        }
        if descriptor.dpop == .on { members["dpop_signing_alg_values_supported"] = .array([.string("ES256")]) }
        if let url = descriptor.introspectionURL { members["introspection_endpoint"] = .string(address.rewrite(url)) }
        if descriptor.pkce.isEnabled { members["code_challenge_methods_supported"] = .array([.string("S256")]) }
        if !descriptor.scopes.known.isEmpty {
            members["scopes_supported"] = .array(descriptor.scopes.known.map(JSONValue.string))
        }
        if let device = descriptor.device {
            members["device_authorization_endpoint"] = .string(address.rewrite(device.url))
        }
        // Only an RFC 7009 revocation fits the metadata's single URL.
        if let revocation = descriptor.revocation, revocation.method == "POST", revocation.parameters["token"] != nil {
            members["revocation_endpoint"] = .string(address.rewrite(revocation.url))
        }
        // OpenID Connect Discovery 1.0 §3, for a descriptor with an openid part.
        if let openID = descriptor.openID {
            members["jwks_uri"] = .string(address.rewrite(openID.keySetURL))
            members["id_token_signing_alg_values_supported"] = .array(
                openID.algorithms.map(\.rawValue).sorted().map(JSONValue.string))
            members["userinfo_endpoint"] = openID.userInfoURL.map { .string(address.rewrite($0)) }
            members["end_session_endpoint"] = openID.endSessionURL.map { .string(address.rewrite($0)) }
            members["subject_types_supported"] = .array([.string("public")])
        }
        return .json(.object(members), step: "metadata", summary: "server metadata (RFC 8414)")
    }
}
