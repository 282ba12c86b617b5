extension TokenEndpointCalls {
    /// RFC 8693 §2.1: trades `subjectToken` for a token for another
    /// audience or with fewer rights, at the token endpoint, the client
    /// authenticating as usual. The answer is a credential like a sign-in's;
    /// `issued_token_type` stays in its raw fields.
    func exchangeToken(
        subjectToken: String, subjectTokenType: String, parameters extra: [(String, String)], scopes: [String],
        label: String?
    ) async throws -> Credential {
        var parameters = [
            ("grant_type", "urn:ietf:params:oauth:grant-type:token-exchange"), ("subject_token", subjectToken),
            ("subject_token_type", subjectTokenType),
        ]
        if !scopes.isEmpty { parameters.append(("scope", scopes.joined(separator: descriptor.scopes.separator))) }
        parameters += extra
        let credential = try await callTokenEndpoint(
            parameters, secrets: [subjectToken], step: .securityTokenExchange, previous: nil, requestedScopes: scopes,
            label: label, proofKey: descriptor.dpop == .on ? ProofKey() : nil)
        try requireBearer(credential, step: .securityTokenExchange, secrets: [subjectToken, clientSecret ?? ""])
        return credential
    }
}
