import AuthKit
import Foundation

@testable import AuthKitLoopback

/// Plays the OAuth client's side of an ``AuthorizationSession`` the way
/// `OAuth2Client.authorize(using:)` does: `makeAuthorizationURL` records the
/// redirect URI the agent chose and returns a URL carrying `state`;
/// `validateRedirect` runs the real ``RedirectParser`` checks against it.
final class TestAttempt: @unchecked Sendable {
    let state: String
    let requested: URL
    let flexible: Bool
    let providerName: String
    private let lock = NSLock()
    private var chosen: URL?

    init(
        redirectURI: String = "http://127.0.0.1/callback", flexible: Bool = true,
        providerName: String = "Local <Test>", state: String = "st-\(UUID().uuidString)"
    ) {
        self.requested = URL(string: redirectURI)!
        self.flexible = flexible
        self.providerName = providerName
        self.state = state
    }

    /// The redirect URI the agent passed to `makeAuthorizationURL`.
    var redirectURI: URL? { lock.withLock { chosen } }

    /// Its port.
    var port: Int { redirectURI.flatMap { URLComponents(url: $0, resolvingAgainstBaseURL: false)?.port } ?? 0 }

    var session: AuthorizationSession {
        AuthorizationSession(
            providerName: providerName, redirectURI: requested, redirectPortIsFlexible: flexible,
            makeAuthorizationURL: { [self] redirect in
                let redirect = redirect ?? requested
                lock.withLock { chosen = redirect }
                let query = FormURLEncoding.encode([("redirect_uri", redirect.absoluteString), ("state", state)])
                return URL(string: "https://as.example/authorize?\(query)")!
            },
            validateRedirect: { [self] url in
                guard let redirect = redirectURI else { throw AuthKitError.redirect(.missingState) }
                let pending = PendingAuthorization(
                    providerID: "local", state: state, codeVerifier: nil, redirectURI: redirect.absoluteString,
                    expectedIssuer: nil, issuerRequired: false, scopes: [], createdAt: Date())
                do {
                    _ = try RedirectParser().code(from: url, for: pending)
                } catch let error as AuthKitError {
                    guard case .authorizationFailed = error.reason else { throw error }
                    return // a genuine answer carrying the provider's error
                }
            })
    }

    /// `/callback?…&state=<state>` for this attempt's redirect path.
    func target(_ query: String, path: String? = nil) -> String {
        let path = path ?? requested.path
        return "\(path)?\(query)\(query.isEmpty ? "" : "&")state=\(state)"
    }
}
