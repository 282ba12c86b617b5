#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Per-attempt choices a caller makes when authorizing.
public struct AuthorizationOptions: Sendable, Hashable {
    /// Scopes to request; `nil` uses the configured or the descriptor's default scopes.
    public var scopes: [String]?
    /// Label for the credential, when one provider holds several accounts.
    public var label: String?
    /// Extra authorize-URL parameters (`prompt=consent`, `login_hint=…`).
    public var additionalParameters: [String: String]
    /// Overrides the redirect URI from settings and descriptor.
    public var redirectURI: URL?

    public init(
        scopes: [String]? = nil, label: String? = nil, additionalParameters: [String: String] = [:],
        redirectURI: URL? = nil
    ) {
        self.scopes = scopes
        self.label = label
        self.additionalParameters = additionalParameters
        self.redirectURI = redirectURI
    }
}
