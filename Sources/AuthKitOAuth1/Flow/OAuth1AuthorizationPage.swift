/// Which page the user is sent to in RFC 5849 §2.2.
public enum OAuth1AuthorizationPage: String, Sendable, Hashable, Codable {
    /// The descriptor's `authorizeURL`: the provider always asks the user to approve.
    case authorize
    /// The descriptor's `authenticateURL` ("Sign in with …"): a user who has
    /// approved the app before is sent straight back. Falls back to `authorize`
    /// when the descriptor names no such endpoint.
    case authenticate
}
