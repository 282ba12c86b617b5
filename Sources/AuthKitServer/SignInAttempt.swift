import AuthKit

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A sign-in between its two requests: what the callback needs (RFC 6749
/// §4.1: the PKCE verifier, the `state`, the nonce, the redirect URI), kept
/// server-side. The browser carries only `state` (in the provider's
/// redirect) and a binding cookie whose hash is here; neither is enough to
/// finish someone else's sign-in.
public struct SignInAttempt: Codable, Sendable, Hashable {
    public var providerID: String
    /// Holds the PKCE verifier and nonce: a store keeps it as it keeps tokens.
    public var pending: PendingAuthorization
    /// A path on this site to return to, already checked.
    public var returnTo: String
    /// SHA-256 of the binding cookie set on the browser that started it.
    public var browserBinding: String
    public var expiresAt: Date

    public init(
        providerID: String, pending: PendingAuthorization, returnTo: String, browserBinding: String, expiresAt: Date
    ) {
        self.providerID = providerID
        self.pending = pending
        self.returnTo = returnTo
        self.browserBinding = browserBinding
        self.expiresAt = expiresAt
    }
}
