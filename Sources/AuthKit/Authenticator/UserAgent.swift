/// Something that shows the user an authorization URL and hands back where the
/// provider sent them: the system browser with a loopback listener, a person
/// pasting the URL from the address bar, or a test that plays the user.
///
/// Per RFC 8252 §8.12 the agent must be external (the system browser), never an
/// embedded web view that could read the user's password.
public protocol UserAgent: Sendable {
    func run(_ session: AuthorizationSession) async throws -> UserAgentResult
}
