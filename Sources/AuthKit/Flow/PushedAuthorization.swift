#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension TokenEndpointCalls {
    /// Posts an authorization request's parameters to the pushed
    /// authorization request endpoint (RFC 9126 §2.1), the client
    /// authenticating as at the token endpoint, and returns the
    /// `request_uri` that stands for them in the authorization URL (§4).
    ///
    /// The answer is checked before the browser sees it: `request_uri` is
    /// what the authorization endpoint will resolve, so it must be one
    /// reference (no control character, at most 2,048 characters), and the
    /// ones servers make: a `urn:` (§2.2's
    /// `urn:ietf:params:oauth:request_uri:…`), or an https URL on the pushed
    /// endpoint's own origin. One that points elsewhere would have the
    /// authorization server fetch a request object someone else wrote.
    func pushAuthorizationRequest(_ parameters: [(String, String)], to url: String) async throws -> String {
        let authentication = try effective(token.clientAuthentication) ?? ClientAuthentication.none
        // The client's own authentication adds client_id where it belongs.
        let sent = authentication == .basic ? parameters : parameters.filter { $0.0 != "client_id" }
        let display = shown(descriptor.authorization?.pushedRequestURL ?? url)
        let response = try await sendToAuthorizationServer(step: .pushedAuthorization, proofKey: nil) {
            try await self.makeRequest(
                method: .post, url: url, displayURL: display, encoding: .form, parameters: sent, headers: [:],
                clientAuthentication: authentication, credential: nil, variables: self.variables(for: nil))
        }
        // §2.2: 201 Created; 200 is taken too, as servers answer it.
        let parser = TokenResponseParser(
            mapping: token.response, successStatus: [200, 201], step: .pushedAuthorization)
        let members = try parser.members(of: response)
        guard case .string(let requestURI)? = members["request_uri"] else {
            throw AuthKitError.invalidResponse(
                step: .pushedAuthorization,
                reason: .init(.missingField("request_uri"), "it has no request_uri (RFC 9126 §2.2)"))
        }
        // §2.2: expires_in is required, a positive number of seconds. A
        // request_uri that has (or may have) expired already would send the
        // user to an error page at the provider.
        // Read as a token answer's expires_in is: quoted too, as JSON writes
        // a number (not `0x1p4`, `inf`), and a lifetime no date overflows.
        let seconds: Double? =
            switch members["expires_in"] {
            case .integer(let number)?: Double(number)
            case .number(let number)?: number
            case .string(let text)?: TokenResponseParser.decimal(String(text.trimmingSpaces()))
            default: nil
            }
        let lifetime = TokenResponseParser.lifetime(seconds)
        guard let lifetime, lifetime > 0 else {
            throw AuthKitError.invalidResponse(
                step: .pushedAuthorization,
                reason: .init(
                    .invalidField("expires_in"),
                    "its expires_in is missing or not a positive number of seconds (RFC 9126 §2.2)"))
        }
        if let problem = Self.requestURIProblem(requestURI, endpoint: url) {
            throw AuthKitError.invalidResponse(
                step: .pushedAuthorization,
                reason: .init(
                    .invalidField("request_uri"),
                    SecretMask(response.secrets).apply(
                        "its request_uri '\(DisplayText.sanitized(requestURI, limit: 120))' \(problem); nothing was sent to the browser"
                    )
                ))
        }
        return requestURI
    }

    /// Why `requestURI` is not one to send the browser with, or `nil`.
    static func requestURIProblem(_ requestURI: String, endpoint: String) -> String? {
        guard !requestURI.isEmpty, requestURI.utf8.count <= 2048,
            requestURI.unicodeScalars.allSatisfy({ (0x21...0x7E).contains($0.value) })
        else { return "is empty, longer than 2,048 characters, or holds a space, control or non-ASCII character" }
        if requestURI.lowercased().hasPrefix("urn:") { return nil }
        guard let url = URL(string: requestURI), url.scheme?.lowercased() == "https",
            url.origin == URL(string: endpoint)?.origin
        else {
            return "is neither a urn: nor an https URL on the pushed authorization endpoint's origin (RFC 9126 §2.2)"
        }
        return nil
    }
}
