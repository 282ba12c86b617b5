import HTTPTypes

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension OAuth2Client {
    /// Whose numbering a who-am-I subject is in: the provider, and where
    /// the call's URL has placeholders given values other than their
    /// defaults (`https://{host}/api/v3/user`: GitHub Enterprise Server, a
    /// self-managed GitLab, a Salesforce My Domain), the URL they made. One
    /// descriptor then serves many servers, each numbering its users from 1:
    /// keyed by the provider alone, user 42 of one server and user 42 of
    /// another shared a stored credential (a web app re-pointed at another
    /// server, or two on one database), and each was given the other's
    /// token. A placeholder left at its default (Salesforce's
    /// `login.salesforce.com`) keeps the key it always had.
    package var whoAmIRealm: String {
        guard let template = descriptor.whoAmI?.url, let url = client.whoAmIURL else { return descriptor.id }
        let given = descriptor.placeholderValues(settings: settings)
        let moved = DescriptorValidator.variables(in: template).contains { name in
            guard let spec = descriptor.placeholders[name] else { return false }
            return given[name] != spec.default
        }
        return moved ? descriptor.id + " " + url.absoluteString : descriptor.id
    }

    /// Who the credential's user is, by the descriptor's `whoAmI` call
    /// (GitHub's `GET /user`): the subject (a string, or a number's text)
    /// and a name to show. For a provider without OpenID Connect, this is
    /// how a web sign-in knows whom the session is for.
    ///
    /// The request is ``bearerGET(_:with:step:)``'s.
    /// - Throws: ``AuthKitError/Code/providerError`` for a refusal with
    ///   an RFC 6750 challenge; ``AuthKitError``
    ///   for an answer without the subject.
    package func whoAmI(_ credential: Credential) async throws -> (
        subject: String, name: String?, answer: [String: JSONValue]
    ) {
        try checkCredential(credential)
        guard let url = client.whoAmIURL, let settings = descriptor.whoAmI else {
            throw AuthKitError.notSupported(providerID: descriptor.id, .userInfo)
        }
        let response = try await bearerGET(url, with: credential, step: .apiRequest, headers: client.whoAmIHeaders)
        func invalid(_ kind: AuthKitError.ResponseProblem.Kind, _ detail: String) -> AuthKitError {
            .invalidResponse(step: .apiRequest, reason: .init(kind, detail))
        }
        guard response.status == 200 else { throw Self.refusal(response, step: .apiRequest, url: url) }
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
        return (subject, settings.name.flatMap { $0.value(in: answer)?.scalarText }, answer)
    }
}
