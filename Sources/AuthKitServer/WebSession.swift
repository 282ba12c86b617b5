import AuthKit

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A signed-in browser: the user, and the token its forms must carry to
/// change anything (logout): a request from another site cannot read it.
public struct WebSession: Codable, Sendable, Hashable {
    public var user: SignedInUser
    /// Sent back in forms (`csrf`) or the `X-CSRF-Token` header.
    public var csrfToken: String
    public var createdAt: Date
    public var expiresAt: Date

    public init(user: SignedInUser, csrfToken: String, createdAt: Date, expiresAt: Date) {
        self.user = user
        self.csrfToken = csrfToken
        self.createdAt = createdAt
        self.expiresAt = expiresAt
    }
}

/// Printed, logged or dumped, a session shows its user and times, not its
/// CSRF token (which, with the cookie, is what a forged sign-out needs).
extension WebSession: CustomStringConvertible, CustomReflectable {
    public var description: String {
        "WebSession(user: \(user.providerID) \(user.subject), csrf token: ••••, created: \(createdAt), expires: \(expiresAt))"
    }

    public var customMirror: Mirror { Mirror(self, children: ["description": description]) }
}
