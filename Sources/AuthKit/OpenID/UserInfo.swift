import HTTPTypes

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What the provider's UserInfo endpoint says about the signed-in user
/// (OpenID Connect Core §5.3): claims the ID token may not carry (a
/// picture, a locale, the current name), asked for with the access token.
///
/// Its `sub` is the verified ID token's (Core §5.3.2: "if they do not match,
/// the UserInfo Response values MUST NOT be used"); AuthKit refuses an
/// answer about anyone else, so ``subject`` is the signed-in user. The other
/// claims are the provider's word over TLS, not signed: an email here is
/// not an identifier (Core §5.7).
public struct UserInfo: Codable, Sendable, Hashable {
    /// `sub`, equal to the ID token's ``Identity/subject``.
    public var subject: String
    /// Every claim of the answer, as received.
    public var claims: [String: JSONValue]

    public init(subject: String, claims: [String: JSONValue]) {
        self.subject = subject
        self.claims = claims
    }

    /// `email`, when the answer has one.
    public var email: String? { claims.text("email") }
    /// `name`, when the answer has one.
    public var name: String? { claims.text("name") }
}

extension OAuth2Client {
    /// Asks the provider's UserInfo endpoint about `credential`'s user
    /// (Core §5.3.1: a GET with the access token as a Bearer token).
    ///
    /// The answer is a JSON object whose `sub` must be the credential's
    /// verified identity's (so a credential from a sign-in without `openid`
    /// cannot be used: nothing verified says whom the answer should be
    /// about). Signed or encrypted answers (`application/jwt`, Core §5.3.2)
    /// are refused with a clear error; no bundled provider sends one unasked.
    /// The request follows the token endpoint's policy: no redirects (the
    /// token would follow them), a size cap, a deadline.
    /// - Throws: ``AuthKitError/Code/notSupported`` (`.userInfo`)
    ///   when the descriptor names no UserInfo endpoint;
    ///   ``AuthKitError/Code/signInRequired`` (`.noVerifiedIdentity`)
    ///   for a credential without one; ``AuthKitError/Code/providerError``
    ///   for the endpoint's refusal (RFC 6750 §3: `invalid_token` when the
    ///   access token expired: refresh it, through ``CredentialSource``);
    ///   ``AuthKitError`` for an answer about
    ///   another user, or not a JSON object.
    public func userInfo(_ credential: Credential) async throws -> UserInfo {
        try checkCredential(credential)
        guard let url = client.openID?.userInfo else {
            throw AuthKitError.notSupported(providerID: descriptor.id, .userInfo)
        }
        guard let identity = credential.identity else {
            throw AuthKitError.signInRequired(credential.key, reason: .noVerifiedIdentity)
        }
        let response = try await bearerGET(url, with: credential, step: .userInfo)
        return try Self.userInfo(in: response, from: url, of: identity)
    }

    /// A GET with the credential's access token, for the provider's own
    /// calls about the user (UserInfo, who-am-I): only to an origin the
    /// credential was issued for, under the token endpoint's policy (no
    /// redirects: the token would follow them; a deadline) and 256 KiB.
    func bearerGET(
        _ url: URL, with credential: Credential, step: FlowStep, headers: [(name: String, value: String)] = []
    ) async throws -> IncomingResponse {
        var policy = RequestPolicy.tokenEndpoint
        policy.maximumBodySize = 256 * 1024
        // The nonce of the refusal this request is the one retry of.
        var given: String?
        while true {
            var request = OutgoingRequest(method: .get, url: url)
            // A DPoP-bound token goes with a proof for this request (RFC 9449 §7.1).
            if let key = credential.proofKey {
                request.head = try await DPoPProof.authorized(
                    request.head, url: url, token: credential, key: key, descriptor: descriptor, nonce: given)
            } else {
                request.head = try Self.bearerAuthorized(request.head, with: credential, descriptor: descriptor)
            }
            request.head.headerFields[.accept] = "application/json"
            for (name, value) in headers { request.setHeader(name, value) }
            request.secrets = [credential.accessToken]
            try calls.checkOrigin(of: request, for: credential)
            let response = try await calls.transport.send(request, step: step, policy: policy)
            guard credential.proofKey != nil else { return response }
            // §9: the server's nonce, answered once, with that nonce (not
            // the origin's latest, which another answer may have replaced).
            DPoPNonces.shared.remember(response.headers, for: url.origin, from: .resource)
            guard given == nil, response.status == 401,
                BearerChallenge(fields: response.headers[values: .wwwAuthenticate], scheme: "dpop")?.error
                    == "use_dpop_nonce",
                let nonce = DPoPNonces.nonce(in: response.headers)
            else { return response }
            given = nonce
        }
    }

    /// A refusal of such a call: the RFC 6750 §3 error of its challenge, or
    /// the status. The challenge's text is the server's: one that echoes the
    /// token it refuses (`error_description="token ya29… expired"`) had it
    /// printed by `authkit token userinfo` and logged by a web backend; the
    /// request's secrets are masked, as in every token endpoint answer.
    static func refusal(_ response: IncomingResponse, step: FlowStep, url: URL) -> AuthKitError {
        let fields = response.headers[values: .wwwAuthenticate]
        // The first challenge that names an error: a server may answer both
        // schemes (RFC 9449 §7.2), a bare `Bearer realm=…` before the
        // `DPoP error="invalid_token"` that says what is wrong.
        let challenges = [BearerChallenge(fields: fields), BearerChallenge(fields: fields, scheme: "dpop")]
        if let challenge = challenges.lazy.compactMap({ $0 }).first(where: { $0.error != nil }),
            let code = challenge.error
        {
            return SecretMask(response.secrets).apply(
                AuthKitError.providerError(
                    step: step,
                    ProviderErrorResponse(status: response.status, code: code, description: challenge.errorDescription)
                ))
        }
        return .invalidResponse(
            step: step,
            reason: .init(.unexpectedStatus(response.status), "HTTP \(response.status) from \(url.redactedForLogs)"))
    }

    /// The answer's claims, or why they cannot be used.
    static func userInfo(in response: IncomingResponse, from url: URL, of identity: Identity) throws -> UserInfo {
        func invalid(_ kind: AuthKitError.ResponseProblem.Kind, _ detail: String) -> AuthKitError {
            .invalidResponse(step: .userInfo, reason: .init(kind, detail))
        }
        guard response.status == 200 else {
            // RFC 6750 §3: the refusal is in WWW-Authenticate.
            throw refusal(response, step: .userInfo, url: url)
        }
        if let type = response.mediaType, type == "application/jwt" {
            throw invalid(
                .unreadableBody,
                "it is a signed or encrypted JWT (Core §5.3.2), which AuthKit does not read; register the client for plain JSON UserInfo answers"
            )
        }
        guard case .object(let claims)? = try? JSONParser.parse(response.body, repeatedNames: .refused) else {
            throw invalid(.unreadableBody, "it is not a JSON object")
        }
        guard let subject = claims.text("sub") else {
            throw invalid(.missingField("sub"), "it has no sub (Core §5.3.2)")
        }
        // §5.3.2: exactly the ID token's sub, or the values MUST NOT be used.
        guard ExactText.same(subject, identity.subject) else {
            throw invalid(
                .invalidField("sub"),
                "its sub is not the signed-in user's (the ID token's), so it is about someone else and was not used (Core §5.3.2)"
            )
        }
        return UserInfo(subject: subject, claims: claims)
    }
}
