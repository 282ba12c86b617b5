/// How the client proves its identity to the token endpoint (RFC 6749 §2.3).
public enum ClientAuthentication: String, Codable, Sendable, Hashable {
    /// HTTP Basic with the form-urlencoded id and secret (RFC 6749 §2.3.1) — `client_secret_basic`.
    case basic
    /// `client_id` and `client_secret` in the request body — `client_secret_post`.
    case post
    /// A public client: only `client_id` is sent, in the body (RFC 6749 §3.2.1); PKCE protects the code.
    case none
}
