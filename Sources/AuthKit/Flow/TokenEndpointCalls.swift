import HTTPTypes

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The token-endpoint machinery behind ``OAuth2Client``: requests built from
/// the descriptor (the code exchange, RFC 6749 §6 refresh, and the
/// descriptor's follow-up, refresh and revocation templates), sent, and their
/// answers turned into credentials.
///
/// `OAuth2Client` holds the public flow and decides *what* to call; this type
/// knows *how*: encodings, client authentication, template variables.
final class TokenEndpointCalls: Sendable {
    /// The client as resolved once by ``OAuth2Client``.
    let client: ResolvedClient
    let transport: FlowTransport
    let now: @Sendable () -> Date

    init(client: ResolvedClient, transport: FlowTransport, now: @escaping @Sendable () -> Date) {
        self.client = client
        self.transport = transport
        self.now = now
    }

    // Read often below; each is the resolved client's.
    var descriptor: ProviderDescriptor { client.descriptor }
    var token: TokenEndpoint { client.token }
    private var clientID: String { client.clientID }
    var clientSecret: String? { client.clientSecret }

    /// Refuses to send `credential`'s tokens to an origin it was not issued for.
    /// A credential stored before AuthKit recorded its origins is sent only
    /// where a descriptor without placeholders in its hosts points: a
    /// placeholder's value given now could name any host.
    func checkOrigin(of request: OutgoingRequest, for credential: Credential) throws {
        if let allowed = credential.endpointOrigins {
            guard !allowed.contains(request.target.origin) else { return }
        } else if !descriptor.endpointHosts.contains(where: { $0.contains("{") }) {
            return
        }
        throw AuthKitError.signInRequired(credential.key, reason: .endpointChanged(origin: request.target.origin))
    }

    // MARK: - Calls

    /// The access token request (RFC 6749 §4.1.3), then the descriptor's follow-up exchange, if any.
    func exchange(code: String, pending: PendingAuthorization, label: String?, grantedScopes: [String]?) async throws
        -> Credential
    {
        // The descriptor asks for bound tokens: a sign-in started without a
        // key (a PendingAuthorization rebuilt without it) would send no proof,
        // and a server ignoring dpop_jkt would answer a Bearer token.
        if descriptor.dpop == .on, pending.proofKey == nil {
            throw AuthKitError.misuse(
                .invalidParameter(
                    name: "pending",
                    "has no DPoP key, and the descriptor (\(descriptor.source)) says dpop on: pass the PendingAuthorization startAuthorization returned, whole (it is Codable), so the exchange proves its key"
                ))
        }
        var parameters = [(String, String)]()
        if token.sendGrantType { parameters.append(("grant_type", "authorization_code")) }
        parameters.append(("code", code))
        if token.sendRedirectURI { parameters.append(("redirect_uri", pending.redirectURI)) }
        if let verifier = pending.codeVerifier { parameters.append(("code_verifier", verifier)) }
        var credential = try await callTokenEndpoint(
            parameters, secrets: [code, pending.codeVerifier ?? ""], step: .tokenExchange,
            previous: nil, requestedScopes: grantedScopes ?? pending.scopes, label: label, proofKey: pending.proofKey)
        // The sign-in asked for an ID token: it is verified before anything
        // else is done with the answer (OpenID Connect Core §3.1.3.7).
        var identity: Identity?
        if let nonce = pending.nonce {
            identity = try await verifiedIdentity(
                in: credential, nonce: nonce, code: code, previous: nil, required: true, maxAge: pending.maxAge,
                secrets: [pending.codeVerifier ?? ""])
        } else if client.openID != nil {
            // An attempt without its nonce (a PendingAuthorization built or
            // kept by a caller without it, or from before the descriptor had
            // an openid part): an ID token that comes is verified all the
            // same, as the device grant's is, but for the nonce. It was kept
            // unverified, without a word, and later sent as id_token_hint.
            identity = try await verifiedIdentity(
                in: credential, nonce: nil, code: code, previous: nil, required: false, maxAge: pending.maxAge,
                secrets: [pending.codeVerifier ?? ""])
        } else {
            warnIfUnverifiable(credential)
        }
        if let followUp = descriptor.followUp {
            let first = credential.rawFields["id_token"]
            credential = try await run(followUp, step: .followUpExchange, for: credential)
            // The ID token kept is the first answer's, verified or said to be
            // unverifiable: a follow-up's answer naming another replaced it
            // unverified, later sent as id_token_hint and compared with at
            // each refresh.
            credential.rawFields["id_token"] = first
        }
        credential.identity = identity
        try requireBearer(
            credential, step: descriptor.followUp == nil ? .tokenExchange : .followUpExchange,
            secrets: [code, pending.codeVerifier ?? "", clientSecret ?? ""])
        return credential
    }

    /// The identity of the ID token in `credential`'s answer, verified; `nil`
    /// when the descriptor has no OpenID Connect part. With `required`, an
    /// answer without an ID token is refused (the sign-in asked for one).
    /// - Parameter moment: the time the token's times are judged at (now,
    ///   unless a refresh checks the rest of a token the clock refused).
    /// - Parameter secrets: what the request sent beyond the client secret
    ///   and the code (a PKCE verifier, a device code, a spent refresh
    ///   token): masked in a refusal, which quotes the token's header.
    func verifiedIdentity(
        in credential: Credential, nonce: String?, code: String?, previous: Identity?, required: Bool,
        maxAge: Int? = nil, secrets: [String] = []
    ) async throws -> Identity? {
        guard let openID = client.openID else {
            warnIfUnverifiable(credential)
            return nil
        }
        guard case .string(let token)? = credential.rawFields["id_token"] else {
            if required { throw AuthKitError.idTokenRejected(providerID: descriptor.id, reason: .missing) }
            return nil
        }
        let transport = self.transport
        let verifier = IDTokenVerifier(
            issuer: openID.issuer, clientID: client.clientID, algorithms: openID.algorithms
        ) { refetch in
            try await KeySetCache.inUse.keys(at: openID.keySet, refetch: refetch, transport: transport)
        }
        var identity: Identity
        do {
            identity = try await verifier.verify(
                token,
                .init(
                    nonce: nonce, accessToken: credential.accessToken, code: code, previous: previous, maxAge: maxAge),
                now: now())
        } catch let problem as AuthKitError.IDTokenProblem {
            throw SecretMask(
                secrets + [clientSecret, code, credential.accessToken, credential.refreshToken].compactMap { $0 }
            ).apply(AuthKitError.idTokenRejected(providerID: descriptor.id, reason: problem))
        }
        // Its claims are kept within bounds, as an answer's members are
        // (``KeptMembers``): signed, they are still the provider's to make
        // as deep and as large as it likes, and they sit deeper in the store.
        let bounded = KeptMembers.bounded(identity.claims, preferring: Self.claimsCompared, level: 5)
        if !bounded.dropped.isEmpty {
            let mask = SecretMask(
                [clientSecret, code, credential.accessToken, credential.refreshToken, token].compactMap { $0 })
            for claim in bounded.dropped {
                let name = mask.apply(DisplayText.sanitized(claim.name, limit: 60))
                transport.logger.warning(
                    "\(descriptor.name)'s ID token: the claim '\(name)' was not kept: \(claim.reason).")
            }
            identity.claims = bounded.kept
        }
        return identity
    }

    /// The claims a refresh's ID token is compared with (OpenID Connect
    /// Core §12.2, ``IDTokenVerifier``): kept before any other.
    static let claimsCompared: Set<String> = ["iss", "sub", "aud", "azp", "auth_time", "nonce", "exp", "iat"]

    /// Who a refreshed credential belongs to (OpenID Connect Core §12.2).
    ///
    /// - An answer without an ID token keeps the sign-in's: the merged
    ///   fields still hold the sign-in's `id_token`, which is not verified
    ///   again (it has expired by then, and its `at_hash` names the old
    ///   access token), and the user is still the one who signed in.
    /// - A new ID token is verified, and must name the same user.
    /// - A new ID token that cannot be checked because the provider's key
    ///   set cannot be fetched (the network, the key set endpoint down) or
    ///   lacks its key (a rotation not yet seen), or that this machine's
    ///   clock calls expired or not yet valid, does not cost the refresh:
    ///   the provider has answered, and a rotating refresh token is spent
    ///   (RFC 9700 §4.14.2). The sign-in's identity
    ///   and ID token are kept, and a warning says why. A token that was
    ///   checked and failed is refused, as at the sign-in.
    /// - With no `previous` identity (a device sign-in answered without an
    ///   ID token), a new one is verified as a sign-in's, but for the nonce,
    ///   and becomes the credential's identity.
    /// - A new `id_token` that is not verified at all (not a string, or the
    ///   descriptor has no OpenID Connect part now) leaves the sign-in's
    ///   identity and ID token as they were.
    func refreshedIdentity(of refreshed: inout Credential, previous: Identity?, before: Credential) async throws
        -> Identity?
    {
        let earlierToken = before.rawFields["id_token"]
        guard let newToken = refreshed.rawFields["id_token"], !IDTokenVerifier.sameBytes(newToken, earlierToken) else {
            return previous
        }
        do {
            if let identity = try await verifiedIdentity(
                in: refreshed, nonce: nil, code: nil, previous: previous, required: false,
                secrets: [before.refreshToken ?? ""])
            {
                return identity
            }
            // Not verified: the descriptor has no OpenID Connect part now
            // (an override without it), or the answer's `id_token` is no
            // string. A verified identity keeps the ID token it was verified
            // from: the unchecked one took its place, and a logout sent it
            // as `id_token_hint` (or, not a string, sent none).
            if previous != nil {
                if client.openID != nil { // (without, warnIfUnverifiable has said so)
                    transport.logger.warning(
                        "\(descriptor.name)'s refresh answer has an id_token that is not a string; the sign-in's is kept."
                    )
                }
                refreshed.rawFields["id_token"] = earlierToken
            }
            return previous
        } catch let error where Self.isUncheckable(error) {
            // Refused by the clock alone, the token has passed every other
            // check, the comparison with who signed in (Core §12.2) among
            // them (``IDTokenVerifier``'s clock comes last), so one naming
            // another user is refused there, not here.
            let why = Self.isJudgedByTheClock(error) ? "\(error); is this machine's clock right?" : "\(error)"
            guard previous != nil else {
                // No verified identity to keep: the unchecked token is not kept either.
                transport.logger.warning(
                    "\(descriptor.name)'s new ID token could not be checked (\(why)); the renewed credential is kept without it."
                )
                refreshed.rawFields["id_token"] = nil
                return nil
            }
            transport.logger.warning(
                "\(descriptor.name)'s new ID token could not be checked (\(why)); the renewed credential is kept with the sign-in's identity and ID token."
            )
            refreshed.rawFields["id_token"] = earlierToken
            return previous
        }
    }

    /// Whether `error` says the ID token could not be checked, rather than
    /// that it was checked and failed.
    private static func isUncheckable(_ error: any Error) -> Bool {
        switch error.authKitReason {
        case .idTokenRejected(_, .keySetUnusable)?: return true
        // A key the set does not hold yet: the provider rotated its keys and
        // the set was fetched too recently to be fetched again (30 s), or a
        // copy of it lags. Nothing of the token is taken; refused, the
        // rotated refresh token was lost (every user's, in a web backend,
        // for those 30 s).
        case .idTokenRejected(_, .unknownKey)?: return true
        // Judged by this machine's clock, which may be minutes off (§3.1.3.7
        // items 9 and 10 leave the skew to the client): nothing of the
        // token is taken, and refused, a right answer cost the rotated
        // refresh token.
        case _ where isJudgedByTheClock(error): return true
        case .network?, .invalidResponse?, .responseTooLarge?: return true
        default: return false
        }
    }

    private static func isJudgedByTheClock(_ error: any Error) -> Bool {
        switch error.authKitReason {
        case .idTokenRejected(_, .expired)?, .idTokenRejected(_, .notYetValid)?: true
        default: false
        }
    }

    /// An ID token from a provider whose descriptor has no `openid` part
    /// cannot be verified (no keys, no issuer): it is kept as received, as
    /// any provider field is, and a warning says it proves nothing, so that
    /// no one reads a user out of it unawares. A member that is not a
    /// string is no token (Tumblr answers `"id_token": false`): nothing to
    /// warn of.
    private func warnIfUnverifiable(_ credential: Credential) {
        guard case .string = credential.rawFields["id_token"] else { return }
        transport.logger.warning(
            "\(descriptor.name)'s answer has an id_token, which AuthKit did not verify: the descriptor (\(descriptor.source)) has no openid part. It is kept as received, and says nothing verified about who signed in."
        )
    }

    /// Refuses a sign-in's token of a type AuthKit cannot send, before it
    /// is stored: RFC 6749 §7.1 has a client not use an access token whose
    /// type it does not understand, and AuthKit sends Bearer tokens only
    /// (RFC 6750 §2.1). Stored, it would look signed in and fail every
    /// request. A refresh's answer is not refused here: its rotated refresh
    /// token must be kept (RFC 9700 §4.14.2), and using the token names the
    /// type and the fix (``AuthKitError/Code/misuse``).
    /// - Parameter rotated: a refresh whose answer carried a new refresh
    ///   token: the provider may have spent the one it was sent (RFC 9700
    ///   §4.14.2), which the refusal then says, as the stored credential's
    ///   next refresh may be refused.
    func requireBearer(_ credential: Credential, step: FlowStep, secrets: [String], rotated: Bool = false) throws {
        if credential.proofKey != nil {
            // RFC 9449 §5: the answer to a proof is `token_type` DPoP. A
            // Bearer token in its place is not bound to the key (the server
            // ignored the proof, or something between stripped it) and works
            // for whoever holds it; the descriptor asked for bound tokens.
            guard !credential.isDPoP else { return }
            throw SecretMask(secrets).apply(
                AuthKitError.invalidResponse(
                    step: step,
                    reason: .init(
                        .invalidField("token_type"),
                        """
                        its token is of type '\(DisplayText.sanitized(credential.tokenType, limit: 100))', not DPoP: it is not bound \
                        to the key AuthKit proved (RFC 9449 §5) and would work for whoever holds it, so it was not stored.
                        """
                            + (descriptor.dpop == .on
                                ? " The descriptor (\(descriptor.source)) says dpop on; if the provider does not support DPoP, set it to off."
                                : " The stored credential is bound to a key (it was obtained while the descriptor said dpop on), and stays bound: sign in again for one that is not.")
                            + (rotated
                                ? " The answer carried a new refresh token, so the provider may have spent the stored one: if its next refresh is refused, sign in again."
                                : ""))))
        }
        guard !credential.isBearer else { return }
        throw SecretMask(secrets).apply(
            AuthKitError.invalidResponse(
                step: step,
                reason: .init(
                    .invalidField("token_type"),
                    """
                    its token is of type '\(DisplayText.sanitized(credential.tokenType, limit: 100))', which AuthKit cannot send \
                    (it sends Bearer tokens, RFC 6750); nothing was stored. If this provider's tokens are used as Bearer tokens \
                    whatever their type says, set token.response.assumeBearer to true in its descriptor (\(descriptor.source)) \
                    and sign in again.
                    """)))
    }

    /// Says at once when a refresh brought a token of a type AuthKit cannot
    /// send. It is kept, not refused (see ``requireBearer(_:step:secrets:)``:
    /// its rotated refresh token must not be lost), but without this the
    /// refresh would look like a success and only the next request would
    /// fail. Secrets the request carried are masked, as in the sign-in's refusal.
    func warnIfUnusable(_ refreshed: Credential, refreshedFrom previous: Credential) {
        guard !refreshed.isBearer, !refreshed.isDPoP else { return }
        let type = SecretMask([previous.refreshToken ?? "", previous.accessToken, clientSecret ?? ""])
            .apply(DisplayText.sanitized(refreshed.tokenType, limit: 100))
        transport.logger.warning(
            """
            \(descriptor.name)'s answer to the refresh: its new token is of type '\(type)', which AuthKit cannot send \
            (it sends Bearer tokens, RFC 6750). It was stored for the refresh token it carries; requests with it will fail. \
            If this provider's tokens are used as Bearer tokens whatever their type says, set token.response.assumeBearer \
            to true in its descriptor (\(descriptor.source)) and refresh again.
            """)
    }

    /// RFC 6749 §6 at the token endpoint. The old refresh token is kept when
    /// the answer has none (the server MAY issue a new one).
    ///
    /// A credential that should be bound and carries no key (a store that
    /// kept only its public fields; `token show --json` imported elsewhere)
    /// is refreshed with a new key, and its answer must be DPoP: sent
    /// without a proof, a confidential client's refresh token (not bound,
    /// RFC 9449 §5) brought a Bearer token, stored in place of the bound one
    /// and sent as Bearer from then on. A public client's refresh token is
    /// bound to the key it lost; the provider refuses the new one, and the
    /// user signs in again.
    nonisolated(nonsending) func refreshAtTokenEndpoint(_ credential: Credential, refreshToken: String) async throws
        -> Credential
    {
        let proofKey =
            credential.proofKey
            ?? (credential.tokenType.lowercased() == "dpop" || descriptor.dpop == .on ? ProofKey() : nil)
        let refreshed = try await callTokenEndpoint(
            [("grant_type", "refresh_token"), ("refresh_token", refreshToken)], secrets: [],
            step: .refresh, previous: credential, requestedScopes: credential.scopes, label: credential.label,
            proofKey: proofKey)
        // A bound credential stays bound: a Bearer answer is refused as at
        // the sign-in, and the stored credential is left as it was.
        if refreshed.proofKey != nil {
            try requireBearer(
                refreshed, step: .refresh, secrets: [refreshToken, credential.accessToken],
                rotated: refreshed.refreshToken != nil && refreshed.refreshToken != refreshToken)
        }
        return refreshed
    }

    /// The client credentials grant (RFC 6749 §4.4): a token for the client
    /// itself, no user involved. The credential records the grant and its
    /// extra parameters, so that it is renewed by asking again (§4.4.3
    /// issues no refresh token) for the same audience; a renewal (`previous`)
    /// keeps where the credential was issued, checked as a refresh is.
    nonisolated(nonsending) func clientCredentials(
        scopes: [String], parameters extra: [(String, String)], label: String?, previous: Credential?
    )
        async throws -> Credential
    {
        var parameters = [("grant_type", "client_credentials")]
        if !scopes.isEmpty { parameters.append(("scope", scopes.joined(separator: descriptor.scopes.separator))) }
        parameters += extra
        var credential = try await callTokenEndpoint(
            parameters, secrets: [], step: .clientCredentials, previous: previous, requestedScopes: scopes,
            label: label, proofKey: descriptor.dpop == .on ? previous?.proofKey ?? ProofKey() : nil)
        credential.grantType = "client_credentials"
        credential.grantParameters = extra.isEmpty ? nil : extra.map { [$0.0, $0.1] }
        // No user takes part in this grant (§4.4), so an `id_token` in its
        // answer says nothing of one who signed in here, and nothing could
        // verify it as such (no authorization request, no nonce): not kept,
        // where it was stored unverified for a caller to read a user from.
        if credential.rawFields["id_token"] != nil {
            credential.rawFields["id_token"] = nil
            transport.logger.warning(
                "\(descriptor.name)'s answer to the client credentials grant has an id_token; no user signs in with that grant, so it was not kept."
            )
        }
        // Each renewal is a new grant (§4.4), bound as the descriptor says
        // now: a renewal sent without a proof (dpop turned off, or a
        // discovery that no longer lists ES256) must not carry the old key
        // onto its Bearer token, which would then be refused as unbound.
        if descriptor.dpop != .on { credential.proofKey = nil }
        try requireBearer(credential, step: .clientCredentials, secrets: [clientSecret ?? ""])
        return credential
    }

    /// Runs a follow-up or refresh ``RequestTemplate`` and merges its answer into `previous`.
    nonisolated(nonsending) func run(_ template: RequestTemplate, step: FlowStep, for previous: Credential) async throws
        -> Credential
    {
        let request = try await makeRequest(template, for: previous)
        try checkOrigin(of: request, for: previous)
        let parser = TokenResponseParser(
            mapping: template.response, successStatus: template.successStatus,
            scopeSeparator: descriptor.scopes.separator, step: step)
        let receivedAt = now()
        let fields = try parse(
            try await transport.send(request, step: step), with: parser, mapping: template.response, previous: previous)
        warnAboutDropped(fields, step: step, previous: previous)
        var credential = makeCredential(
            fields, step: step, receivedAt: receivedAt, previous: previous, requestedScopes: previous.scopes,
            label: previous.label)
        // A template's call carries no DPoP proof (RFC 9449 §5), so what it
        // brings is not bound to the earlier key (a credential bound before
        // the descriptor turned `dpop` off): kept, the key and the earlier
        // `DPoP` type had an unbound token sent as `Authorization: DPoP`.
        if previous.proofKey != nil {
            credential.proofKey = nil
            if fields.tokenType == nil { credential.tokenType = "Bearer" }
        }
        return credential
    }

    /// How long `credential`'s token was given to live (its expiry less when
    /// it was obtained), or `nil` when that is not known. A refresh answer
    /// whose `expires_in` cannot be read (`-1`, `"abc"`) renews a token
    /// that does expire: with no expiry, it was never found due again (no
    /// assumed lifetime), and only an API's 401 `invalid_token` renewed it,
    /// a dead token sent until then. The earlier token's lifetime is taken.
    static func lifetime(of credential: Credential?) -> TimeInterval? {
        guard let credential, let expiresAt = credential.expiresAt else { return nil }
        let lifetime = expiresAt.timeIntervalSince(credential.obtainedAt)
        return lifetime > 0 ? lifetime : nil
    }

    /// Says which side fields of a refresh answer were left out, and why the
    /// answer was kept anyway (``TokenResponseParser/Fields/dropped``), and
    /// which members were not kept (``TokenResponseParser/Fields/notKept``).
    private func warnAboutDropped(_ fields: TokenResponseParser.Fields, step: FlowStep, previous: Credential?) {
        for member in fields.notKept {
            transport.logger.warning("\(descriptor.name)'s answer to the \(step.rawValue): \(member).")
        }
        for reason in fields.dropped {
            // "the rotated refresh token" only where there is one.
            let kept =
                fields.refreshToken == nil
                ? "for the new token it carries" : "for the new token and the rotated refresh token it carries"
            let lifetime =
                fields.expiresInUnusable && reason.contains("expires_in") && Self.lifetime(of: previous) != nil
                ? " (the new token is taken to live as long as the one it replaces)" : ""
            transport.logger.warning(
                "\(descriptor.name)'s answer to the \(step.rawValue): \(reason). It was kept without it\(lifetime), \(kept)."
            )
        }
    }

    /// Sends the revocation template. A 200 for an unknown token is success
    /// (RFC 7009 §2.2); 503 is reported as `temporarily_unavailable`, to retry later.
    func revoke(_ credential: Credential, using template: RequestTemplate) async throws {
        let request = try await makeRequest(template, for: credential)
        try checkOrigin(of: request, for: credential)
        let response = try await transport.send(request, step: .revocation)
        let parser = TokenResponseParser(
            mapping: template.response, successStatus: template.successStatus, step: .revocation)
        if template.successStatus.contains(response.status) {
            // An error code in the body is an error whatever the status: the
            // credential is then kept, not deleted as if revoked.
            try parser.rejectReportedError(in: response)
            return
        }
        if response.status == 503 {
            throw AuthKitError.providerError(
                step: .revocation,
                ProviderErrorResponse(
                    status: 503, code: "temporarily_unavailable",
                    description: "the server asks to try again later (RFC 7009 §2.2.1)"))
        }
        // Not a success: report the provider's error if the body has one.
        _ = try parser.parse(response)
        throw AuthKitError.invalidResponse(
            step: .revocation, reason: .init(.unexpectedStatus(response.status), "HTTP \(response.status)"))
    }

    // MARK: - The device authorization grant (RFC 8628)

    /// RFC 8628 §3.1–3.2: asks for a device code and a user code.
    func startDeviceAuthorization(device: DeviceEndpoint, scopes: [String], parameters extra: [(String, String)])
        async throws -> DeviceAuthorization
    {
        var parameters = [(String, String)]()
        if !scopes.isEmpty {
            parameters.append((device.scopeParameter, scopes.joined(separator: descriptor.scopes.separator)))
        }
        parameters += extra
        let request = try await makeRequest(
            method: .post, url: try variables(for: nil).render(device.url, inURL: true, field: "device.url"),
            displayURL: shown(device.url),
            encoding: device.encoding, parameters: parameters, headers: token.headers,
            clientAuthentication: try effective(device.clientAuthentication) ?? ClientAuthentication.none,
            credential: nil, variables: variables(for: nil))
        let sentAt = now()
        let parser = TokenResponseParser(mapping: token.response, successStatus: [200], step: .deviceAuthorization)
        let response = try await transport.send(request, step: .deviceAuthorization)
        let members = try parser.members(of: response)
        var authorization = try DeviceAuthorization(
            answer: members, providerID: descriptor.id, sentAt: sentAt, scopes: scopes, secrets: response.secrets,
            endpoint: request.url)
        // The key the polls prove, and the token will be bound to (RFC 9449 §5).
        if descriptor.dpop == .on { authorization.proofKey = ProofKey() }
        (authorization.clientID, authorization.tokenEndpoint) = (client.clientID, client.tokenURL)
        return authorization
    }

    /// RFC 8628 §3.4: one poll of the token endpoint.
    func pollDeviceToken(_ authorization: DeviceAuthorization, device: DeviceEndpoint, label: String?) async throws
        -> Credential
    {
        var parameters = [("grant_type", DevicePoller.grantType), ("device_code", authorization.deviceCode)]
        if device.sendScopesWhenPolling, !authorization.scopes.isEmpty {
            parameters.append(
                (device.scopeParameter, authorization.scopes.joined(separator: descriptor.scopes.separator)))
        }
        let authentication = try effective(device.clientAuthentication) ?? ClientAuthentication.none
        let parser = TokenResponseParser(
            mapping: token.response, successStatus: token.successStatus,
            scopeSeparator: descriptor.scopes.separator, step: .devicePolling)
        let receivedAt = now()
        let fixed = parameters
        let response = try await sendToAuthorizationServer(step: .devicePolling, proofKey: authorization.proofKey) {
            var request = try await self.makeRequest(
                method: .post, url: self.client.tokenURL, displayURL: self.client.tokenDisplay,
                encoding: device.encoding, parameters: fixed, headers: self.token.headers,
                clientAuthentication: authentication, credential: nil, variables: self.variables(for: nil))
            request.secrets.append(authorization.deviceCode)
            return request
        }
        let fields: TokenResponseParser.Fields
        do {
            fields = try parser.parse(response)
        } catch let error as AuthKitError where response.status >= 500 || response.status == 429 {
            guard case .invalidResponse(let step, let reason) = error.reason else { throw error }
            // An HTML 502 from a proxy, a 503 while the server restarts, a
            // 429 (too many polls, RFC 8628 §3.5 asks to slow down): the
            // server's trouble, not an answer about this grant (an OAuth
            // error, whatever its status, is one, unless it names a passing
            // trouble: DevicePoller).
            throw DevicePoller.ServerTrouble(error: .invalidResponse(step: step, reason: reason))
        }
        var credential = makeCredential(
            fields, step: .devicePolling, receivedAt: receivedAt, previous: nil, requestedScopes: authorization.scopes,
            label: label, proofKey: authorization.proofKey)
        try requireBearer(credential, step: .devicePolling, secrets: [authorization.deviceCode, clientSecret ?? ""])
        // The device grant sends no nonce (RFC 8628 has no authorization
        // request); an ID token that comes is verified all the same, and one
        // that fails stores nothing; asked for or not.
        // (Without an openid part, it is kept unverified, with a warning.)
        credential.identity = try await verifiedIdentity(
            in: credential, nonce: nil, code: nil, previous: nil, required: false,
            secrets: [authorization.deviceCode])
        return credential
    }

    // MARK: - Building requests

    nonisolated(nonsending) func callTokenEndpoint(
        _ parameters: [(String, String)], secrets: [String], step: FlowStep, previous: Credential?,
        requestedScopes: [String], label: String?, proofKey: ProofKey?, sending stored: Credential? = nil
    ) async throws -> Credential {
        let authentication = try effective(token.clientAuthentication)
        let parser = TokenResponseParser(
            mapping: token.response, successStatus: token.successStatus,
            scopeSeparator: descriptor.scopes.separator, step: step)
        let receivedAt = now()
        let response = try await sendToAuthorizationServer(step: step, proofKey: proofKey) {
            var request = try await self.makeRequest(
                method: .post, url: self.client.tokenURL, target: self.client.tokenTarget,
                displayURL: self.client.tokenDisplay, encoding: self.token.encoding, parameters: parameters,
                headers: self.token.headers, clientAuthentication: authentication,
                credential: previous, variables: self.variables(for: previous))
            request.secrets += secrets
            // A stored credential's token goes only where it was issued.
            // (Each looked at where it is: `previous ?? stored` made a copy.)
            if let previous {
                try self.checkOrigin(of: request, for: previous)
            } else if let stored {
                try self.checkOrigin(of: request, for: stored)
            }
            return request
        }
        let fields = try parse(response, with: parser, mapping: token.response, previous: previous)
        warnAboutDropped(fields, step: step, previous: previous)
        return makeCredential(
            fields, step: step, receivedAt: receivedAt, previous: previous, requestedScopes: requestedScopes,
            label: label, proofKey: proofKey)
    }

    /// Sends a request to the authorization server, built by `build` for
    /// each attempt (a client assertion, like a proof, is good for one
    /// request only). With `proofKey`, it carries a DPoP proof (RFC 9449 §5)
    /// with the server's latest nonce; a server that answers
    /// `use_dpop_nonce` with a new one (§8) is asked once more, and only
    /// once: one that names a fresh nonce at every answer gets its refusal
    /// returned rather than an endless loop. The retry carries the nonce of
    /// that refusal, not the process's latest: another request's answer
    /// from the same origin could have replaced it meanwhile, and the retry,
    /// refused again, ended the sign-in.
    nonisolated(nonsending) func sendToAuthorizationServer(
        step: FlowStep, proofKey: ProofKey?, build: nonisolated(nonsending) @Sendable () async throws -> OutgoingRequest
    ) async throws -> IncomingResponse {
        var given: String?
        while true {
            var request = try await build()
            guard let proofKey else { return try await transport.send(request, step: step) }
            let origin = request.target.origin
            let sentNonce = given ?? DPoPNonces.shared[origin, server: .authorization]
            request.head.headerFields[DPoPProof.headerName] = try await DPoPProof.make(
                key: proofKey, method: request.head.method, url: request.url, nonce: sentNonce, now: now())
            let response = try await transport.send(request, step: step)
            DPoPNonces.shared.remember(response.headers, for: origin, from: .authorization)
            guard given == nil, response.status == 400 || response.status == 401,
                let nonce = DPoPNonces.nonce(in: response.headers), nonce != sentNonce,
                Self.errorCode(in: response) == "use_dpop_nonce"
            else { return response }
            given = nonce
        }
    }

    /// The `error` member of a JSON answer (RFC 6749 §5.2), if any.
    static func errorCode(in response: IncomingResponse) -> String? {
        guard
            case .object(let members)? = try? JSONParser.parse(TokenResponseParser.withoutByteOrderMark(response.body)),
            case .string(let code)? = members["error"]
        else { return nil }
        return code
    }

    /// `response` parsed; a refresh answer too unusable to keep that still
    /// carries a new refresh token says so: the provider may have spent the
    /// stored one (RFC 9700 §4.14.2), and the error was otherwise the same
    /// as for an answer that changed nothing.
    private func parse(
        _ response: IncomingResponse, with parser: TokenResponseParser, mapping: TokenResponseMapping,
        previous: Credential?
    ) throws -> TokenResponseParser.Fields {
        do {
            return try parser.parse(response)
        } catch let error as AuthKitError {
            guard case .invalidResponse(let step, let reason) = error.reason, step == .refresh else { throw error }
            guard let members = try? parser.members(of: response),
                case .string(let rotated)? = mapping.refreshToken.firstValue(in: members)?.value,
                !rotated.isEmpty, rotated != previous?.refreshToken
            else { throw AuthKitError.invalidResponse(step: step, reason: reason) }
            throw AuthKitError.invalidResponse(
                step: step,
                reason: .init(
                    reason.kind,
                    reason.detail
                        + "; it carried a new refresh token, so the stored one may have been spent: if the next refresh is refused, sign in again"
                ))
        }
    }

    nonisolated(nonsending) private func makeRequest(_ template: RequestTemplate, for credential: Credential)
        async throws -> OutgoingRequest
    {
        let variables = variables(for: credential)
        let parameters = try template.orderedParameters.map { name, value in
            (name, try variables.render(value, inURL: false, field: "parameter \(name)"))
        }
        return try await makeRequest(
            method: HTTPRequest.Method(template.method) ?? .post,
            url: try variables.render(template.url, inURL: true, field: "URL"), displayURL: shown(template.url),
            encoding: template.encoding, parameters: parameters, headers: template.headers,
            clientAuthentication: try effective(template.clientAuthentication), credential: credential,
            variables: variables)
    }

    /// What the code exchange will authenticate with, checked at a
    /// sign-in's start: a private key file it cannot use (missing, readable
    /// by others, encrypted, a public key), or a descriptor's
    /// `private_key_jwt` with a secret and no key, was found only at the
    /// exchange, after the person had signed in for nothing. The key is
    /// read again at each request (a rotated key is used without a restart).
    func checkExchangeAuthentication() throws {
        if try effective(token.clientAuthentication) == .privateKeyJWT, let path = client.privateKeyFile {
            _ = try ClientKey.load(path: path, providerID: descriptor.id)
        }
    }

    /// A client without a secret is a public client: it identifies itself
    /// the way the descriptor says public clients do (its id in the body,
    /// RFC 6749 §3.2.1, unless `token.publicClientAuthentication` says HTTP
    /// Basic with an empty password), whatever it prefers for confidential ones.
    ///
    /// A client whose settings name a private key authenticates with it
    /// (`private_key_jwt`) wherever it authenticates: the key is what the
    /// provider registered for it. A descriptor that asks for
    /// `private_key_jwt` of a client with a secret and no key is a setting
    /// missing, said before anything is sent.
    func effective(_ authentication: ClientAuthentication?) throws -> ClientAuthentication? {
        guard let authentication, authentication != .none else { return authentication }
        if client.privateKeyFile != nil { return .privateKeyJWT }
        if authentication == .privateKeyJWT, clientSecret != nil {
            throw AuthKitError.missingSetting(providerID: descriptor.id, .privateKey)
        }
        return clientSecret == nil ? token.publicClientAuthentication : authentication
    }

    /// Builds a request: `parameters` (already rendered) encoded per
    /// `encoding`, client authentication applied (RFC 6749 §2.3.1 for `basic`:
    /// id and secret are form-urlencoded *before* base64), `Accept:
    /// application/json` unless the descriptor's headers say otherwise.
    nonisolated(nonsending) func makeRequest(
        method: HTTPRequest.Method, url: String, target parsed: RequestTarget? = nil, displayURL: String,
        encoding: BodyEncoding, parameters: [(String, String)],
        headers: [String: String], clientAuthentication: ClientAuthentication?, credential: Credential?,
        variables: @autoclosure () -> TemplateVariables
    ) async throws -> OutgoingRequest {
        var parameters = parameters
        var authorization: String?
        /// Basic's base64 credentials, without the scheme.
        var credentials: String?
        var assertion: String?
        guard var target = parsed ?? URL(string: url).map({ RequestTarget($0) }), target.hasHost else {
            throw AuthKitError.invalidFile([
                FileIssue(file: descriptor.source, field: "URL '\(displayURL)'", problem: "is not an absolute URL.")
            ])
        }
        // A template may say `query` (a GET revocation, say) with `basic`,
        // whose secret goes in a header; a private key configured makes that
        // an assertion (``effective(_:)``), and `post` puts the secret in the
        // parameters: in a URL, either would reach access logs and proxies.
        if encoding == .query,
            clientAuthentication == .clientSecretJWT || clientAuthentication == .privateKeyJWT
                || (clientAuthentication == .post && clientSecret != nil)
        {
            throw AuthKitError.invalidFile([
                FileIssue(
                    file: descriptor.source, field: "encoding of the call to '\(displayURL)'",
                    problem:
                        "is 'query', and the client authenticates with \(clientAuthentication?.rawValue ?? "") here, which would put its secret or signed assertion in the URL; use 'form' or 'json'."
                )
            ])
        }
        switch clientAuthentication {
        case .clientSecretJWT?, .privateKeyJWT?:
            // An assertion names the token endpoint (or the issuer) as its
            // audience (RFC 7523 §3) and is good there for a minute. Sent to an endpoint at
            // another origin (a PAR, introspection or revocation endpoint
            // that a server's metadata placed elsewhere), whoever runs that
            // endpoint could replay it at the token endpoint as this client
            // (draft-ietf-oauth-rfc7523bis's audience injection): refused.
            if let tokenOrigin = client.tokenTarget?.origin, !ExactText.same(target.origin, tokenOrigin) {
                throw AuthKitError.invalidFile([
                    FileIssue(
                        file: descriptor.source, field: "URL '\(displayURL)'",
                        problem:
                            "is at another origin than the token endpoint (\(tokenOrigin)); the client authenticates with a signed assertion (\(clientAuthentication?.rawValue ?? "")) whose audience is the token endpoint, and one sent elsewhere could be replayed there as this client. Put the endpoint on the token endpoint's origin, or remove it from the descriptor."
                    )
                ])
            }
            let signer: ClientAssertion.Signer
            if clientAuthentication == .privateKeyJWT, let path = client.privateKeyFile {
                signer = .privateKey(try ClientKey.load(path: path, providerID: descriptor.id))
            } else {
                signer = .secret(clientSecret ?? "")
            }
            let authenticating = try await ClientAssertion.parameters(
                clientID: clientID, audience: client.assertionAudience, signer: signer, providerID: descriptor.id,
                now: now())
            assertion = authenticating.last?.1
            parameters += authenticating
        case .basic?:
            let pair = PercentEncoding.encode(clientID) + ":" + PercentEncoding.encode(clientSecret ?? "")
            let encoded = Data(pair.utf8).base64EncodedString()
            credentials = encoded
            authorization = "Basic " + encoded
        case .post?:
            parameters.append(("client_id", clientID))
            if let clientSecret { parameters.append(("client_secret", clientSecret)) }
        case .none?:
            parameters.append(("client_id", clientID))
        case nil:
            break
        }
        if encoding == .query {
            guard let withQuery = target.url.appendingQuery(parameters) else {
                throw AuthKitError.invalidFile([
                    FileIssue(file: descriptor.source, field: "URL '\(displayURL)'", problem: "cannot take a query.")
                ])
            }
            target = RequestTarget(withQuery)
        }
        var request = OutgoingRequest(method: method, target: target, displayURL: displayURL)
        // Room for every field below at once: appended one by one, they grew
        // the list three times (a refresh's own allocations, counted).
        request.head.headerFields.reserveCapacity(4 + headers.count)
        switch encoding {
        case .form where parameters.isEmpty, .json where parameters.isEmpty, .query:
            break // no body at all (Qiita's DELETE revocation; a GET with a query)
        case .form:
            // Appended: the head comes without fields (RequestTarget), so
            // there is nothing to replace, and a subscript would search first.
            request.head.headerFields.append(.formContentType)
            request.body = FormURLEncoding.encodedBody(parameters)
        case .json:
            request.head.headerFields.append(HTTPField(name: .contentType, value: "application/json"))
            // A name given more than once with different values (RFC 8693's
            // `audience` and `resource`) becomes an array of them: a JSON
            // object keeps one value per member. The same value twice (a
            // template's `client_id` beside the client authentication's) stays one.
            var values = [String: [String]]()
            for (name, value) in parameters where values[name]?.contains(where: { ExactText.same($0, value) }) != true {
                values[name, default: []].append(value)
            }
            let object = values.mapValues { $0.count == 1 ? JSONValue.string($0[0]) : .array($0.map { .string($0) }) }
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            request.body = try encoder.encode(object)
        }
        if let authorization { request.head.headerFields.append(HTTPField(name: .authorization, value: authorization)) }
        // What an error quoting the provider must mask (SecretMask). Basic's
        // credentials alone too (RFC 7617 §2): a server that echoes only
        // them showed `id:secret` to anyone who decodes base64. SecretMask
        // masks their percent-encoded form as well (`+`, `/`, `=` escaped).
        // One list, made once (a literal of optionals then compacted was two, the second grown).
        var secrets = [String]()
        secrets.reserveCapacity(6)
        func keep(_ secret: String?) { if let secret { secrets.append(secret) } }
        keep(clientSecret)
        keep(authorization)
        keep(credentials)
        keep(assertion)
        keep(credential?.accessToken)
        keep(credential?.refreshToken)
        request.secrets = secrets
        request.head.headerFields.append(.acceptJSON)
        // Here, where the fields are this request's alone, rather than by
        // FlowTransport, which would copy them to add it.
        request.head.headerFields.append(.authKitUserAgent)
        // Built only when a header needs it: most descriptors have none.
        let variables = headers.isEmpty ? nil : variables()
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) {
            request.setHeader(name, try variables!.render(value, inURL: false, field: "header \(name)"))
        }
        return request
    }

    func variables(for credential: Credential?) -> TemplateVariables {
        client.variables(for: credential)
    }

    /// An endpoint as messages show it (``TemplateVariables/display(_:)``).
    func shown(_ template: String) -> String {
        client.variables(for: nil).display(template)
    }

    /// The members of an earlier answer that describe the token it issued
    /// (RFC 6749 §5.1 and its kin), which a later answer (a refresh's, a
    /// renewal's) that does not repeat them must not inherit: a refresh
    /// answered without `expires_in` kept the sign-in's, which said nothing
    /// of the new token. Every other member of an earlier answer is kept
    /// when the later one does not repeat it: what says whose the grant is
    /// (`id_token`, which OpenID Connect Core §12.2 lets a refresh answer
    /// leave out and a sign-out sends as `id_token_hint`; `user_id`,
    /// `screen_name`, Strava's `athlete`, Slack's `team`, which providers
    /// name in their first answer only). What is kept stays within
    /// ``KeptMembers``'s bounds, so no series of refreshes makes it grow
    /// past them.
    /// A list, not a set: looked through for each earlier member at every
    /// refresh, nine short names compare faster than a name hashes.
    static let describeTheToken: [String] = [
        "access_token", "token_type", "expires_in", "refresh_token", "scope", "refresh_token_expires_in",
        "ext_expires_in", "expires", "issued_token_type",
    ]

    /// The answer's members, and those of `earlier` it does not repeat that
    /// `step` keeps (all but ``describeTheToken``), within ``KeptMembers``'s bounds (a
    /// credential a caller built may hold anything); what is left out is
    /// logged by name, masked as the answer's own names are.
    private func merged(
        _ fields: TokenResponseParser.Fields, over previous: Credential?, step: FlowStep
    ) -> [String: JSONValue] {
        guard let earlier = previous?.rawFields, !earlier.isEmpty else { return fields.raw }
        var merged = fields.raw
        // A sign-in's follow-up exchange completes the same sign-in's
        // answer (Instagram's first names the user, the follow-up's only
        // the long-lived token): it keeps all of it. (One merge hashes each
        // name once; asking, then adding, hashed it twice.)
        let inherited = earlier.lazy.filter { step == .followUpExchange || !Self.describeTheToken.contains($0.key) }
            .map { ($0.key, $0.value) }
        merged.merge(inherited) { answer, _ in answer }
        // Where the descriptor reads them elsewhere (Qiita's `token`;
        // Slack's `authed_user.access_token`, `.refresh_token`,
        // `.expires_in`, `.scope`): an inherited member keeps what says
        // whose the grant is (`authed_user.id`), not the spent tokens and
        // the earlier lifetime. A Slack user token's refresh answers at the
        // top level, and every refresh then stored the sign-in's tokens
        // beside the new ones, shown as the credential's own.
        if step != .followUpExchange {
            for path in client.tokenPathsNotInherited {
                guard case .member(let top)? = path.components.first, fields.raw[top] == nil else { continue }
                merged = path.removed(from: merged)
            }
        }
        guard merged.count > fields.raw.count else { return merged }
        let bounded = KeptMembers.bounded(merged, preferring: TokenResponseParser.membersRead, level: 4)
        guard !bounded.dropped.isEmpty else { return bounded.kept }
        let mask = SecretMask(
            [clientSecret, fields.accessToken, fields.refreshToken, previous?.accessToken, previous?.refreshToken]
                .compactMap { $0 })
        for member in bounded.dropped {
            transport.logger.warning(
                """
                \(descriptor.name)'s answer to the \(step.rawValue): the member \
                '\(mask.apply(DisplayText.sanitized(member.name, limit: 60)))' was not kept: \(member.reason).
                """)
        }
        return bounded.kept
    }

    private func makeCredential(
        _ fields: TokenResponseParser.Fields, step: FlowStep, receivedAt: Date, previous: Credential?,
        requestedScopes: [String],
        label: String?, proofKey: ProofKey? = nil
    ) -> Credential {
        let bearer = token.response.assumeBearer && proofKey == nil
        // The refresh token is the earlier one: the answer left it out, or
        // repeated it unchanged (RFC 6749 §6: the server may issue a new
        // one). Repeated without `refresh_token_expires_in`, its known
        // expiry was dropped, and `token list` stopped warning before the
        // user had to sign in again.
        let sameRefreshToken =
            fields.refreshToken.map { ExactText.same($0, previous?.refreshToken ?? "") } ?? true
        var credential = Credential(
            providerID: descriptor.id,
            label: label,
            isOAuth1: false,
            accessToken: fields.accessToken,
            // A refresh answer without a usable type keeps the earlier one
            // (TokenResponseParser), except a bound credential's: only an
            // answer saying DPoP says the new token is bound (RFC 9449 §5).
            tokenType: bearer
                ? "Bearer" : fields.tokenType ?? (proofKey == nil ? previous?.tokenType : nil) ?? "Bearer",
            refreshToken: fields.refreshToken ?? previous?.refreshToken,
            // A refresh answer without a usable `expires_in` (absent, 0 or
            // unreadable) gives the new token the earlier one's lifetime:
            // the server's default (RFC 6749 §5.1: omitted, it is "documented"
            // or given "by other means"), most likely what it said at sign-in.
            // Taken as none, the token was used past its end, every request
            // failing until one's 401 named `invalid_token`.
            expiresAt: fields.expiresIn.map { receivedAt.addingTimeInterval($0) }
                ?? (step == .refresh ? Self.lifetime(of: previous).map { receivedAt.addingTimeInterval($0) } : nil)
                    ?? (fields.raw.isEmpty ? previous?.expiresAt : nil),
            // An empty `scope` in a refresh or client credentials answer
            // (some servers send `""` for "as asked") keeps the earlier or the
            // requested scopes, as an absent one does (RFC 6749 §5.1, §6):
            // taken as none, a client credentials grant's next renewal asked
            // for no scope at all, and got the server's default.
            scopes: ([.refresh, .clientCredentials].contains(step) && fields.scopes?.isEmpty == true
                ? nil : fields.scopes) ?? previous?.scopes ?? requestedScopes,
            obtainedAt: receivedAt,
            rawFields: merged(fields, over: previous, step: step),
            // Where the credential was issued, recorded once: a refresh (or
            // the sign-in's follow-up) keeps what the sign-in recorded, so
            // placeholder values given at a refresh cannot add a host that
            // its requests, its revocation or its API calls may then reach.
            endpointOrigins: previous?.endpointOrigins ?? client.endpointOrigins,
            // A new refresh token brings its own lifetime; a kept one keeps its.
            refreshTokenExpiresAt: fields.refreshTokenExpiresIn.map { receivedAt.addingTimeInterval($0) }
                ?? (sameRefreshToken ? previous?.refreshTokenExpiresAt : nil))
        credential.proofKey = proofKey ?? previous?.proofKey
        credential.grantType = previous?.grantType
        credential.grantParameters = previous?.grantParameters
        credential.account = previous?.account
        return credential
    }

}
