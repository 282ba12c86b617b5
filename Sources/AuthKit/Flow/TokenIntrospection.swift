#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What an authorization server says of a token (RFC 7662 §2.2): whether it
/// is active, and for an active one what it allows and for whom.
///
/// For a resource server that receives opaque tokens, and for a client that
/// wants to know whether a stored token still works without spending a
/// request on the API. Only ``isActive`` is required of the server; the rest
/// is what it chose to say.
public struct TokenIntrospection: Sendable, Hashable {
    /// `active`: the token is current and was issued by this server (§2.2).
    public var isActive: Bool
    /// `scope`, split on spaces.
    public var scopes: [String]?
    /// `client_id`: the client the token was issued to.
    public var clientID: String?
    /// `username`: a human-readable name of the resource owner.
    public var username: String?
    /// `sub`: the resource owner (or the client, for client credentials).
    public var subject: String?
    /// `exp`.
    public var expiresAt: Date?
    /// Every member of the answer, including those not read above (`aud`, `iss`, `token_type`…).
    public var fields: [String: JSONValue]

    package init(_ fields: [String: JSONValue]) throws {
        guard case .bool(let active)? = fields["active"] else {
            throw AuthKitError.invalidResponse(
                step: .introspection,
                reason: .init(.missingField("active"), "it has no boolean 'active' member (RFC 7662 §2.2)"))
        }
        func text(_ name: String) -> String? {
            if case .string(let value)? = fields[name] { return value }
            return nil
        }
        self.isActive = active
        self.scopes = text("scope").map { $0.split(separator: " ").map(String.init) }
        self.clientID = text("client_id")
        self.username = text("username")
        self.subject = text("sub")
        switch fields["exp"] {
        case .integer(let seconds)?: self.expiresAt = Date(timeIntervalSince1970: TimeInterval(seconds))
        case .number(let seconds)?: self.expiresAt = Date(timeIntervalSince1970: seconds)
        default: self.expiresAt = nil
        }
        self.fields = fields
    }
}

extension TokenEndpointCalls {
    /// RFC 7662 §2.1: asks the introspection endpoint about `token`, the
    /// client authenticating as at the token endpoint.
    /// - Parameter stored: the stored credential `token` is from, if it is
    ///   one: it is then sent only to an origin that issued it, as a refresh is.
    func introspect(_ token: String, hint: String?, at url: String, stored: Credential? = nil) async throws
        -> TokenIntrospection
    {
        let parameters = [("token", token)] + (hint.map { [("token_type_hint", $0)] } ?? [])
        let authentication = try effective(self.token.clientAuthentication)
        let display = shown(descriptor.introspectionURL ?? url)
        let response = try await sendToAuthorizationServer(step: .introspection, proofKey: nil) {
            var request = try await self.makeRequest(
                method: .post, url: url, displayURL: display, encoding: .form, parameters: parameters, headers: [:],
                clientAuthentication: authentication, credential: nil, variables: self.variables(for: nil))
            request.secrets.append(token)
            if let stored { try self.checkOrigin(of: request, for: stored) }
            return request
        }
        let parser = TokenResponseParser(mapping: self.token.response, successStatus: [200], step: .introspection)
        return try TokenIntrospection(try parser.members(of: response))
    }
}
