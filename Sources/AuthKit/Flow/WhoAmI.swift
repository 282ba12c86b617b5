import HTTPTypes

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension OAuth2Client {
    /// Who the credential's user is, by the descriptor's `whoAmI` call
    /// (GitHub's `GET /user`): the subject (a string, or a number's text)
    /// and a name to show. For a provider without OpenID Connect, this is
    /// how a web sign-in knows whom the session is for.
    ///
    /// The request follows the token endpoint's policy (no redirects: the
    /// token would follow them; a size cap; a deadline), and goes only to an
    /// origin the credential was issued for.
    /// - Throws: ``AuthKitError/providerError(step:_:)`` for a refusal with
    ///   an RFC 6750 challenge; ``AuthKitError/invalidResponse(step:reason:)``
    ///   for an answer without the subject.
    package func whoAmI(_ credential: Credential) async throws -> (subject: String, name: String?) {
        try checkCredential(credential)
        guard let url = client.whoAmIURL, let settings = descriptor.whoAmI else {
            throw AuthKitError.notSupported(providerID: descriptor.id, .userInfo)
        }
        var request = OutgoingRequest(method: .get, url: url)
        request.head = try Self.bearerAuthorized(request.head, with: credential, descriptor: descriptor)
        request.head.headerFields[.accept] = "application/json"
        request.secrets = [credential.accessToken]
        try calls.checkOrigin(of: request, for: credential)
        var policy = RequestPolicy.tokenEndpoint
        policy.maximumBodySize = 256 * 1024
        let response = try await calls.transport.send(request, step: .apiRequest, policy: policy)
        func invalid(_ kind: AuthKitError.ResponseProblem.Kind, _ detail: String) -> AuthKitError {
            .invalidResponse(step: .apiRequest, reason: .init(kind, detail))
        }
        guard response.status == 200 else {
            if let challenge = BearerChallenge(fields: response.headers[values: .wwwAuthenticate]),
                let code = challenge.error
            {
                throw AuthKitError.providerError(
                    step: .apiRequest,
                    ProviderErrorResponse(status: response.status, code: code, description: challenge.errorDescription))
            }
            throw invalid(.unexpectedStatus(response.status), "HTTP \(response.status) from \(url.redactedForLogs)")
        }
        guard case .object(let answer)? = try? JSONParser.parse(response.body, repeatedNames: .refused) else {
            throw invalid(.unreadableBody, "\(url.redactedForLogs) answered no JSON object")
        }
        let subject: String
        switch settings.subject.value(in: answer) {
        case .string(let text)? where !text.isEmpty: subject = text
        case .integer(let number)?: subject = String(number)
        default:
            throw invalid(
                .missingField(settings.subject.description),
                "\(url.redactedForLogs) answered without \(settings.subject) (whoAmI.subject)")
        }
        return (subject, settings.name.flatMap { $0.value(in: answer)?.scalarText })
    }
}
