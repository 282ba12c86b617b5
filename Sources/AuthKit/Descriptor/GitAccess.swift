#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Git over HTTPS with a provider's OAuth 2.0 access token: the descriptor's
/// `git` section, which `authkit token git-credential` answers git's
/// credential helper protocol from (git-credential(1), as `gh auth
/// git-credential` does for GitHub).
///
/// Git hosts take a token in place of a password under a fixed user name
/// (GitHub `x-access-token`, GitLab `oauth2`, Bitbucket `x-token-auth`): a
/// provider's difference, so it is written here, not in code.
package struct GitAccess: Sendable, Hashable {
    /// The git hosts, written and checked as `api.origins` are
    /// (``APIOrigins``): https, a loopback address only where one is listed,
    /// an origin with a placeholder only where the credential was issued.
    package var origins: APIOrigins
    /// The user name git sends with the token.
    package var username: String
    /// Scopes any one of which lets git in (GitHub's `repo`); a credential
    /// granted none of them is warned of when git is set up. Empty: unknown.
    package var scopes: [String]

    package init(origins: APIOrigins, username: String, scopes: [String] = []) {
        self.origins = origins
        self.username = username
        self.scopes = scopes
    }

    /// The origin git asks for: its `protocol` and `host` attributes
    /// (git-credential(1); `host` may carry a port), or nil when they are not
    /// an http(s) origin. Nothing is normalized beyond what ``APIOrigins``
    /// compares (scheme and host in lower case, a default port dropped).
    package static func origin(protocol scheme: String, host: String) -> URL? {
        guard scheme == "https" || scheme == "http", !host.isEmpty, host.utf8.count <= 255,
            host.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-._:[]".contains($0)) }),
            let url = URL(string: "\(scheme)://\(host)/"), url.host(percentEncoded: true)?.isEmpty == false
        else { return nil }
        // Brackets only around an IPv6 literal: Foundation read `[github.com]`
        // as github.com, and git was handed its token for a host it did not name.
        if host.contains("[") || host.contains("]") {
            guard host.hasPrefix("["), let close = host.firstIndex(of: "]") else { return nil }
            let literal = host[host.index(after: host.startIndex)..<close]
            let rest = host[host.index(after: close)...]
            guard literal.contains(":"), literal.allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." }),
                rest.isEmpty
                    || (rest.hasPrefix(":") && rest.dropFirst().allSatisfy(\.isASCII) && Int(rest.dropFirst()) != nil)
            else { return nil }
        }
        return url
    }

    /// Whether the token of `credential` may be handed to git for `origin`:
    /// one of the origins names it (one with a placeholder, where the
    /// credential was issued). An empty list allows nothing here, unlike
    /// `api.origins`: git's helper answers every host git asks about.
    package func allows(_ origin: URL, for credential: Credential, placeholders: [String: String]) -> Bool {
        guard origins.isRestricted else { return false }
        return origins.match(origin, placeholders: placeholders).allows(origin.origin, for: credential)
    }

    /// Whether `granted` holds one of the scopes git needs (true when the
    /// descriptor names none, or the provider said nothing of what it granted).
    package func isGranted(by granted: [String]) -> Bool {
        scopes.isEmpty || granted.isEmpty || scopes.contains(where: granted.contains)
    }
}
