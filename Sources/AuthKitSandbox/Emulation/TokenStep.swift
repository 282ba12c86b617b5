import AuthKit

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The token endpoint (RFC 6749 §3.2): the code exchange (§4.1.3), refresh
/// (§6) with rotation and reuse detection, and device-code polls (RFC 8628 §3.4).
extension Emulator {
    static let deviceGrantType = "urn:ietf:params:oauth:grant-type:device_code"

    /// - Parameter captures: the placeholders of the token URL's path, as
    ///   the request filled them in (Microsoft's `{tenant}`): an ID token's
    ///   issuer names them.
    func token(_ request: SandboxRequest, captures: [String: String] = [:]) -> SandboxResponse {
        let endpoint = descriptor.token!
        do {
            let parameters = try parameters(of: request, endpoint.encoding)
            let grantType =
                parameters["grant_type"]
                ?? (endpoint.sendGrantType ? nil : (parameters.has("code") ? "authorization_code" : nil))
            guard let grantType else { throw Refusal.invalidRequest("grant_type is missing") }
            // RFC 9449 §5: every token request proves the key, with the nonce.
            let jkt = descriptor.dpop == .on ? try checkProof(request, nonce: ledger.tokenNonce) : nil
            switch grantType {
            case "authorization_code":
                _ = try authenticateClient(
                    request, parameters, as: endpoint.clientAuthentication,
                    secretRequired: endpoint.requiresClientSecret)
                return try exchangeCode(parameters, captures: captures, jkt: jkt)
            case "refresh_token":
                _ = try authenticateClient(
                    request, parameters, as: endpoint.clientAuthentication,
                    secretRequired: endpoint.refreshRequiresClientSecret)
                return try refresh(parameters, captures: captures, jkt: jkt)
            case Self.deviceGrantType where descriptor.device != nil:
                _ = try authenticateClient(
                    request, parameters, as: descriptor.device!.clientAuthentication,
                    secretRequired: descriptor.device!.requiresClientSecret)
                return try pollDevice(parameters, jkt: jkt)
            case "client_credentials":
                return try clientCredentials(request, parameters, jkt: jkt)
            case Self.tokenExchangeGrantType:
                return try exchangeToken(request, parameters, jkt: jkt)
            default:
                throw Refusal("unsupported_grant_type", "grant_type '\(grantType)' is not supported here")
            }
        } catch var refusal as Refusal {
            // GitHub and Slack answer token errors with 200 (descriptor: errorStatus).
            if let status = endpoint.response.errorStatus { refusal.status = status }
            return shaped(refusal, mapping: endpoint.response, step: "token")
        } catch {
            return shaped(Refusal("server_error", "\(error)", status: 500), mapping: endpoint.response, step: "token")
        }
    }

    private func exchangeCode(_ parameters: Parameters, captures: [String: String], jkt: String?) throws
        -> SandboxResponse
    {
        guard let code = parameters["code"] else { throw Refusal.invalidRequest("code is missing") }
        guard var record = ledger.codes[code] else { throw Refusal.invalidGrant("the code is unknown") }
        if record.used {
            // §4.1.2: a code used twice revokes what it gave (the first use may have been the attacker's).
            ledger.revoke(grant: record.grant)
            throw Refusal.invalidGrant("the code was already used; every token issued from it is revoked")
        }
        record.used = true
        ledger.codes[code] = record
        guard record.expiresAt > now else { throw Refusal.invalidGrant("the code has expired") }
        if record.sentRedirectURI {
            guard ExactText.same(parameters.values["redirect_uri"] ?? "", record.redirectURI),
                parameters.values["redirect_uri"] != nil
            else {
                throw Refusal.invalidGrant(
                    "redirect_uri must be identical to the one in the authorization request (RFC 6749 §4.1.3)")
            }
        } else if let sent = parameters["redirect_uri"], !ExactText.same(sent, record.redirectURI) {
            throw Refusal.invalidGrant("redirect_uri does not match the redirect the code was sent to")
        }
        if let challenge = record.challenge {
            guard let verifier = parameters["code_verifier"] else {
                throw Refusal.invalidGrant("code_verifier is missing (the request had a code_challenge)")
            }
            guard Self.verifies(verifier: verifier, challenge: challenge, method: record.challengeMethod ?? "plain")
            else {
                throw Refusal.invalidGrant("code_verifier does not match the code_challenge (RFC 7636 §4.6)")
            }
        } else if descriptor.pkce.isEnabled, parameters.has("code_verifier") {
            throw Refusal.invalidGrant("code_verifier sent, but the authorization request had no code_challenge")
        }
        guard let grant = ledger.grants[record.grant], !grant.revoked else {
            throw Refusal.invalidGrant("the grant was revoked")
        }
        if let bound = record.dpopJKT, bound != jkt {
            throw Refusal("invalid_dpop_proof", "the code is bound to another key (dpop_jkt, RFC 9449 §10)")
        }
        return issue(
            grant: record.grant, scopes: grant.scopes, step: "token",
            summary: "code exchanged for account \(grant.account)", nonce: record.nonce, captures: captures, jkt: jkt)
    }

    private func refresh(_ parameters: Parameters, captures: [String: String], jkt: String?) throws -> SandboxResponse {
        guard let token = parameters["refresh_token"] else { throw Refusal.invalidRequest("refresh_token is missing") }
        if let bound = ledger.refreshTokens[token]?.jkt, bound != jkt {
            throw Refusal.invalidGrant("the refresh token is bound to another DPoP key (RFC 9449 §5)")
        }
        let (grantID, grant): (Int, GrantLedger.Grant)
        do {
            (grantID, grant) = try liveRefreshToken(token)
        } catch var refusal as Refusal {
            // Said as the provider says it (GitHub's bad_refresh_token,
            // `token.refreshRefusedErrors`), where the descriptor names its own.
            if let own = descriptor.token?.refreshRefusedErrors.dropFirst().first { refusal.code = own }
            throw refusal
        }
        var scopes = grant.scopes
        if let asked = parameters["scope"] {
            // §6: the scope may narrow, never widen.
            scopes = splitScopes(asked)
            if let extra = scopes.first(where: { !grant.scopes.contains($0) }) {
                throw Refusal("invalid_scope", "'\(DisplayText.sanitized(extra, limit: 80))' was not granted")
            }
        }
        // Spent only now that the request is good: a refused one (§5.2)
        // leaves the token as it was, and the client's retry is no reuse.
        spendRefreshToken(token)
        return issue(
            grant: grantID, scopes: scopes, step: "refresh", summary: "refreshed for account \(grant.account)",
            captures: captures, jkt: jkt)
    }

    /// The grant of `token`, a live refresh token, without spending it:
    /// the request's other checks come first (RFC 6749 §5.2: a refused
    /// request leaves the token valid, so a retry is not a reuse). A rotated
    /// token used again means two parties hold it: the whole grant is
    /// revoked (RFC 9700 §4.14.2).
    func liveRefreshToken(_ token: String) throws -> (Int, GrantLedger.Grant) {
        guard let record = ledger.refreshTokens[token] else {
            throw Refusal.invalidGrant("the refresh token is unknown")
        }
        guard let grant = ledger.grants[record.grant], !grant.revoked else {
            throw Refusal.invalidGrant("the refresh token was revoked")
        }
        if record.rotated {
            ledger.revoke(grant: record.grant)
            throw Refusal.invalidGrant("refresh token reused after rotation: every token of this grant is revoked")
        }
        return (record.grant, grant)
    }

    /// Marks `token` used, once the refresh it came with is granted: rotated
    /// away when the sandbox issues a new one each time.
    func spendRefreshToken(_ token: String) {
        if options.issuesRefreshTokens { ledger.refreshTokens[token]?.rotated = true }
    }

    /// A new access token (and, when configured, a new refresh token) for
    /// `grant`, written in the descriptor's shape with its success status.
    func issue(
        grant: Int, scopes: [String], step: String, summary: String,
        mapping: TokenResponseMapping? = nil, status: Int? = nil, lifetime: TimeInterval? = nil, refresh: Bool = true,
        nonce: String? = nil, captures: [String: String] = [:], jkt: String? = nil, idToken withIDToken: Bool = true,
        extra: [String: JSONValue] = [:]
    ) -> SandboxResponse {
        let endpoint = descriptor.token!
        let access = ledger.mint("access")
        let lifetime = lifetime ?? options.accessTokenLifetime
        ledger.accessTokens[access] = GrantLedger.AccessToken(
            grant: grant, expiresAt: lifetime.map { now.addingTimeInterval($0) }, jkt: jkt, scopes: scopes)
        var refreshToken: String?
        if refresh, options.issuesRefreshTokens {
            refreshToken = ledger.mint("refresh")
            // RFC 9449 §5: a public client's refresh token is bound to the
            // proof's key; a confidential client's is not (its
            // authentication constrains it), and a refresh with a new key
            // binds the new access token to that key.
            let isPublic = options.isPublicClient
            ledger.refreshTokens[refreshToken!] = GrantLedger.RefreshToken(grant: grant, jkt: isPublic ? jkt : nil)
        }
        // A descriptor that assumes a lifetime (`refreshPolicy.assumedLifetimeSeconds`)
        // describes a provider that does not tell it (Salesforce): the token
        // still expires, but the answer has no `expires_in`.
        let told = descriptor.refreshPolicy.assumedLifetime > 0 ? nil : lifetime
        var body = ProviderShape(mapping: mapping ?? endpoint.response).token(
            .init(
                accessToken: access, expiresIn: told.map { Int($0) }, refreshToken: refreshToken,
                scope: scopeText(scopes)))
        // OpenID Connect Core §3.1.3.3: the ID token beside the tokens.
        if withIDToken, let account = ledger.grants[grant], !account.ofClient,
            let idToken = idToken(
                grant: grant, account, scopes: scopes, nonce: nonce, accessToken: access, captures: captures),
            case .object(var members) = body
        {
            members["id_token"] = .string(idToken)
            body = .object(members)
        }
        if case .object(var members) = body, jkt != nil || !extra.isEmpty {
            // RFC 9449 §5: a bound token says so.
            if jkt != nil { members["token_type"] = .string("DPoP") }
            for (name, value) in extra { members[name] = value }
            body = .object(members)
        }
        return .json(body, status: status ?? endpoint.successStatus.first ?? 200, step: step, summary: summary)
    }
}
