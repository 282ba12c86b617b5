import AuthKit
import Foundation

/// What `ASWebAuthenticationSession` waits for, derived from the redirect URI
/// the provider sends the browser to.
///
/// The session ends when the browser is sent to a URL it was told to catch: a
/// private-use scheme (RFC 8252 §7.1, `com.example.app:/oauth`), or — from
/// iOS 17.4 and macOS 14.4 — an `https` URL on a host the app has associated
/// with itself (RFC 8252 §7.2). It cannot catch plain `http`: a loopback
/// redirect needs a listener (`AuthKitLoopback`, on macOS). Portable, so the
/// rule is tested on Linux too.
package enum WebAuthenticationCallback: Sendable, Hashable {
    /// A private-use URI scheme, lowercased (`com.example.app`).
    case customScheme(String)
    /// An `https` host and path (an associated domain).
    case https(host: String, path: String)

    /// - Parameter httpsCallbacksAvailable: whether the system can catch an
    ///   https redirect (iOS 17.4, macOS 14.4 and later): where it cannot,
    ///   one is refused here, before the authorization URL is made (for
    ///   OAuth 1.0a, before a request token is asked for and spent).
    /// - Throws: ``AuthKit/AuthKitError/Code/unusableRedirectURI``
    ///   naming what to register instead.
    package init(redirectURI: URL, httpsCallbacksAvailable: Bool = true) throws {
        let text = redirectURI.absoluteString
        guard let scheme = redirectURI.scheme?.lowercased(), !scheme.isEmpty else {
            throw AuthKitError.unusableRedirectURI(
                uri: text,
                reason:
                    "it has no scheme; register a private-use scheme such as com.example.app:/oauth (RFC 8252 §7.1).")
        }
        switch scheme {
        case "https":
            guard let host = redirectURI.host, !host.isEmpty else {
                throw AuthKitError.unusableRedirectURI(
                    uri: text, reason: "an https redirect needs a host the app is associated with (RFC 8252 §7.2).")
            }
            // Apple's Callback.https(host:path:): the host "must be a member
            // of a domain associated with the app" (a `webcredentials:`
            // associated domain), which a loopback name can never be: the
            // session then fails with nothing said of why.
            // Nor an address: any IPv4 literal (127.0.0.2 as much as
            // 127.0.0.1), any IPv6 one, `localhost.` with its root dot.
            var lowered = host.lowercased()
            if lowered.hasSuffix(".") { lowered.removeLast() }
            let isAddress =
                lowered.contains(":") || lowered.allSatisfy { $0 == "." || ("0"..."9").contains($0) }
            if isAddress || lowered == "localhost" || lowered.hasSuffix(".localhost") {
                throw AuthKitError.unusableRedirectURI(
                    uri: text,
                    reason:
                        "an https callback must be on a domain the app is associated with (webcredentials:), which \(lowered) cannot be; register such a domain's URL, or a private-use scheme (RFC 8252 §7.1), with the provider."
                )
            }
            guard httpsCallbacksAvailable else {
                throw AuthKitError.unusableRedirectURI(
                    uri: text,
                    reason:
                        "an https callback needs iOS 17.4 or macOS 14.4; register a private-use scheme for older systems."
                )
            }
            self = .https(host: lowered, path: Self.path(of: redirectURI))
        case "http":
            throw AuthKitError.unusableRedirectURI(
                uri: text,
                reason:
                    "ASWebAuthenticationSession cannot catch a plain http redirect; register a private-use scheme such as com.example.app:/oauth, an https associated domain, or use the loopback listener (AuthKitLoopback) on macOS."
            )
        default:
            // RFC 3986 §3.1: ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )
            let valid =
                scheme.first!.isLetter
                && scheme.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) }
            guard valid else {
                throw AuthKitError.unusableRedirectURI(
                    uri: text,
                    reason:
                        "'\(scheme)' is not a URI scheme (RFC 3986 §3.1: a letter, then letters, digits, '+', '-' or '.')."
                )
            }
            self = .customScheme(scheme)
        }
    }

    /// The scheme for the API before iOS 17.4 (`callbackURLScheme:`); `nil`
    /// for an https callback, which that API cannot express.
    package var scheme: String? {
        if case .customScheme(let scheme) = self { return scheme }
        return nil
    }

    /// The path as the redirect URI writes it: percent-encoded as it is, a
    /// final `/` kept (`URL.path` decodes `%2F` and drops the final slash,
    /// so a callback registered as `/auth/callback/` was waited for at
    /// `/auth/callback`, and never came); `/` for none.
    static func path(of url: URL) -> String {
        let path = URLComponents(url: url, resolvingAgainstBaseURL: false)?.percentEncodedPath ?? ""
        return path.isEmpty ? "/" : path
    }

    /// Whether `url` is where this callback ends the session (the rule
    /// the tests hold the callback to: the system applies its own).
    package func matches(_ url: URL) -> Bool {
        switch self {
        case .customScheme(let scheme):
            return url.scheme?.lowercased() == scheme
        case .https(let host, let path):
            return url.scheme?.lowercased() == "https" && url.host?.lowercased() == host && Self.path(of: url) == path
        }
    }
}
