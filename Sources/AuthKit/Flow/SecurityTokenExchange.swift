extension TokenEndpointCalls {
    /// RFC 8693 §2.1: trades `subjectToken` for a token for another
    /// audience or with fewer rights, at the token endpoint, the client
    /// authenticating as usual. The answer is a credential like a sign-in's;
    /// `issued_token_type` stays in its raw fields.
    /// - Parameter stored: the stored credential `subjectToken` is from, if
    ///   it is one: it is then sent only to an origin that issued it, as a
    ///   refresh is (``checkOrigin(of:for:)``).
    func exchangeToken(
        subjectToken: String, subjectTokenType: String, parameters extra: [(String, String)], scopes: [String],
        label: String?, stored: Credential? = nil
    ) async throws -> Credential {
        var parameters = [
            ("grant_type", "urn:ietf:params:oauth:grant-type:token-exchange"), ("subject_token", subjectToken),
            ("subject_token_type", subjectTokenType),
        ]
        if !scopes.isEmpty { parameters.append(("scope", scopes.joined(separator: descriptor.scopes.separator))) }
        parameters += extra
        // The actor token is as secret as the subject token: masked where an
        // answer echoes it.
        let secrets = [subjectToken] + extra.filter { $0.0 == "actor_token" }.map(\.1)
        var credential = try await callTokenEndpoint(
            parameters, secrets: secrets, step: .securityTokenExchange, previous: nil, requestedScopes: scopes,
            label: label, proofKey: descriptor.dpop == .on ? ProofKey() : nil, sending: stored)
        // An ID token with the new tokens (OpenID Connect Native SSO's
        // exchange answers with one) is verified as the device grant's is,
        // with no nonce: one that fails stores nothing. It was stored
        // unverified, for a caller to read a user from.
        credential.identity = try await verifiedIdentity(
            in: credential, nonce: nil, code: nil, previous: nil, required: false, secrets: secrets)
        // RFC 8693 §2.2.1: a token that is not an access token (an ID token,
        // a SAML assertion, asked for with `requested_token_type`) comes
        // with `token_type` N_A. It is returned as it came, to be passed on;
        // its type keeps AuthKit's requests from sending it as a Bearer
        // token. Only when such a token was asked for: the command line
        // asks for none, so it never stores one.
        let requested = extra.first { $0.0 == "requested_token_type" }?.1
        if let requested, !ExactText.same(requested, OAuth2Client.accessTokenType),
            case .string(let issued)? = credential.rawFields["issued_token_type"],
            !ExactText.same(issued, OAuth2Client.accessTokenType),
            ExactText.sameIgnoringASCIICase(credential.tokenType, "N_A")
        {
            return credential
        }
        try requireBearer(credential, step: .securityTokenExchange, secrets: secrets + [clientSecret ?? ""])
        return credential
    }
}
