/// One thing the sandbox did, told without secrets: what `authkit sandbox`
/// prints per request, and what a test can assert on.
public struct SandboxEvent: Sendable, Hashable, CustomStringConvertible {
    /// The step of the protocol: `authorize`, `consent`, `token`, `refresh`,
    /// `revocation`, `follow-up`, `device`, `metadata`, `resource`,
    /// `request-token`, `access-token`, or `unknown`.
    public var step: String
    /// `GET /qiita.com/api/v2/oauth/authorize` (the path only: no query, where secrets may travel).
    public var request: String
    public var status: Int
    /// What happened, e.g. "code exchanged for account alice" or "refresh token reused: grant revoked".
    public var summary: String

    public var description: String { "\(request) → \(status): \(summary)" }
}
