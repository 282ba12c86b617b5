import Foundation

/// What a ``UserAgent`` brings back.
public enum UserAgentResult: Sendable, Hashable {
    /// The full redirect URL the provider sent the browser to, and the redirect
    /// URI the agent used (which may differ from the requested one in its port).
    case redirect(URL, redirectURI: URL)
    /// A verification code the user typed (OAuth 1.0a out-of-band PIN, RFC 5849 §2.1 `oob`).
    case verificationCode(String)
}
