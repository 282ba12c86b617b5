#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Something that shows the user an authorization URL and hands back where the
/// provider sent them: the system browser with a loopback listener, a person
/// pasting the URL from the address bar, or a test that plays the user.
///
/// Per RFC 8252 §8.12 the agent must be external (the system browser), never an
/// embedded web view that could read the user's password.
public protocol UserAgent: Sendable {
    /// Asks `session` for the authorization URL (passing the redirect URI
    /// the agent will catch), gets the user to approve, and returns the full
    /// URL the provider sent the browser back to. Throws
    /// ``AuthKitError/Code/cancelled`` when the user gives up.
    func run(_ session: AuthorizationSession) async throws -> URL
}

/// What an agent brings back inside the package: a redirect, or, from the
/// agents a person types into (``manualUserAgent(write:readLine:)``, the sandbox's), OAuth
/// 1.0a's out-of-band PIN (RFC 5849 §2.1 `oob`), which is no URL.
package enum UserAgentResult: Sendable, Hashable {
    /// The full redirect URL the provider sent the browser to.
    case redirect(URL)
    /// A verification code the user typed (OAuth 1.0a out-of-band PIN).
    case verificationCode(String)
}

/// A user agent that can bring back a typed verification code as well as a
/// redirect: the flow asks it for ``answer(_:)`` rather than ``UserAgent/run(_:)``.
package protocol AnsweringUserAgent: UserAgent {
    func answer(_ session: AuthorizationSession) async throws -> UserAgentResult
}

extension UserAgent {
    /// The agent's answer: a typed code where it can give one, else its redirect.
    package func answer(to session: AuthorizationSession) async throws -> UserAgentResult {
        if let answering = self as? any AnsweringUserAgent { return try await answering.answer(session) }
        return .redirect(try await run(session))
    }
}

extension AnsweringUserAgent {
    /// As a plain ``UserAgent``: the redirect; a typed code is refused (no
    /// URL carries it; the OAuth 1.0a client asks for ``answer(_:)``).
    package func redirect(of session: AuthorizationSession) async throws -> URL {
        switch try await answer(session) {
        case .redirect(let url): return url
        case .verificationCode:
            throw AuthKitError.misuse(
                .userAgentBrokeProtocol("it brought back a typed code, which only an OAuth 1.0a client reads"))
        }
    }
}

/// Printed, logged or dumped, a redirect shows where it went, not its query
/// (the authorization code, `state`), and a verification code is masked.
extension UserAgentResult: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    package var description: String {
        switch self {
        case .redirect(let url): "redirect(\(url.redactedForLogs))"
        case .verificationCode: "verificationCode(••••)"
        }
    }

    package var debugDescription: String { description }

    package var customMirror: Mirror { Mirror(self, children: ["description": description]) }
}

/// What a ``UserAgent`` is asked to do: get the user to approve, and bring back
/// the provider's answer.
///
/// The agent decides the final redirect URI (a loopback listener knows its port
/// only once it is bound) and passes it to ``makeAuthorizationURL``, which builds
/// the URL to open — for OAuth 1.0a that call also fetches the request token,
/// because the callback is registered in that step (RFC 5849 §2.1).
public struct AuthorizationSession: Sendable {
    /// The provider's display name, for prompts and the browser page ("Qiita answered").
    public var providerName: String
    /// The redirect the provider expects. `nil` means out-of-band: the provider
    /// shows a code (OAuth 1.0a PIN) that the user types in.
    public var redirectURI: URL?
    /// The redirect's port may be chosen by the agent (RFC 8252 §7.3: any port
    /// on loopback); otherwise the agent must use ``redirectURI`` exactly.
    public var redirectPortIsFlexible: Bool
    /// Builds the URL the user opens, given the redirect URI the agent will listen on.
    public var makeAuthorizationURL: @Sendable (_ redirectURI: URL?) async throws -> URL
    private let validate: @Sendable (String) throws -> Void

    /// `validateRedirect` receives the redirect as text, exactly as it arrived.
    public init(
        providerName: String, redirectURI: URL?, redirectPortIsFlexible: Bool,
        makeAuthorizationURL: @escaping @Sendable (URL?) async throws -> URL,
        validateRedirect: @escaping @Sendable (String) throws -> Void
    ) {
        self.providerName = providerName
        self.redirectURI = redirectURI
        self.redirectPortIsFlexible = redirectPortIsFlexible
        self.makeAuthorizationURL = makeAuthorizationURL
        self.validate = validateRedirect
    }

    /// Checks that a redirect answers this attempt (target, `state`, `iss`).
    /// Throws ``AuthKitError/Code/redirectRejected`` for one that must be ignored (a
    /// loopback listener keeps waiting); returns for the genuine answer,
    /// including a genuine error answer such as `access_denied`.
    ///
    /// Pass the text **exactly as received** (the listener's origin and the
    /// request target, or what the user pasted), not a `URL` made from it:
    /// Foundation quietly re-encodes what a URL may not hold (`%ZZ`, `|`, `[`),
    /// and the parser must see, and refuse, what actually arrived.
    public func validateRedirect(_ text: String) throws { try validate(text) }

    /// For agents that are handed a `URL` (`ASWebAuthenticationSession`).
    public func validateRedirect(_ url: URL) throws { try validate(url.absoluteString) }
}
