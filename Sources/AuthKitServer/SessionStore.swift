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

/// Where sessions live: every instance behind one address reads the same
/// ones, so a cookie from one is valid on the others.
///
/// Ids are SHA-256 digests of the cookie's value: a copy of the store does
/// not give anyone a live session cookie.
public protocol SessionStore: Sendable {
    func insert(_ session: WebSession, id: String) async throws
    /// The session, or `nil` when there is none or it expired before `now`.
    func session(id: String, now: Date) async throws -> WebSession?
    /// Removing an id that is not there (a session that expired, or ended
    /// by a sign-out elsewhere) is no error: a sign-in over a stale cookie
    /// removes it first, and fails when this throws.
    func remove(id: String) async throws
    /// Removes every session of `user` (``SignedInUser/credentialKey``
    /// names them): signing out everywhere, as
    /// ``WebSignIn/Configuration/revokeOnSignOut`` does.
    func removeAll(of user: SignedInUser) async throws
}

/// Sessions in this process's memory: one instance.
public actor InMemorySessionStore: SessionStore {
    private var sessions: [String: WebSession] = [:]
    /// The ids of each user's sessions (``SignedInUser/credentialKey``).
    private var byUser: [CredentialKey: Set<String>] = [:]
    /// The count at which expired sessions are next swept out: twice what a
    /// sweep left, so that a site with more live sessions than 10,000 does not
    /// sweep (a pass over all of them) at every sign-in.
    private var sweepAt = 10_000
    /// Live sessions kept per user; past it, the one that expires first goes.
    private let sessionsPerUser: Int

    /// - Parameter sessionsPerUser: how many sessions one user may hold at
    ///   once (browsers, devices); a sign-in past it ends the session that
    ///   expires first. Each sign-in makes a session that lives for days, so
    ///   without a bound one account signing in again and again (a script
    ///   that drops its cookies, the provider's consent remembered) grew the
    ///   memory without end.
    public init(sessionsPerUser: Int = 100) { self.sessionsPerUser = max(1, sessionsPerUser) }

    public func insert(_ session: WebSession, id: String) async throws {
        if sessions.count >= sweepAt {
            let now = Date()
            for (expired, session) in sessions where session.expiresAt <= now { forget(expired, of: session.user) }
            sweepAt = max(10_000, sessions.count * 2)
        }
        if let replaced = sessions[id] { forget(id, of: replaced.user) }
        sessions[id] = session
        let key = session.user.credentialKey
        byUser[key, default: []].insert(id)
        if let ids = byUser[key], ids.count > sessionsPerUser,
            let first = ids.min(by: {
                (sessions[$0]?.expiresAt ?? .distantPast) < (sessions[$1]?.expiresAt ?? .distantPast)
            })
        {
            forget(first, of: session.user)
        }
    }

    public func session(id: String, now: Date) async throws -> WebSession? {
        guard let session = sessions[id] else { return nil }
        guard session.expiresAt > now else {
            forget(id, of: session.user)
            return nil
        }
        return session
    }

    public func remove(id: String) async throws {
        if let session = sessions[id] { forget(id, of: session.user) }
    }

    public func removeAll(of user: SignedInUser) async throws {
        for id in byUser.removeValue(forKey: user.credentialKey) ?? [] { sessions[id] = nil }
    }

    private func forget(_ id: String, of user: SignedInUser) {
        sessions[id] = nil
        byUser[user.credentialKey]?.remove(id)
        if byUser[user.credentialKey]?.isEmpty == true { byUser[user.credentialKey] = nil }
    }
}
