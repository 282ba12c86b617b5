import AuthKit

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Sign-in attempts and sessions in this process's memory: one instance
/// (a sign-in started here cannot finish on another; a restart signs
/// everyone out). Several instances share a database instead
/// (``AuthKitPostgres/PostgresStore``). Its API is the protocol's, so it is
/// reached through this function.
/// - Parameters:
///   - attemptLimit: how many started sign-ins are kept at most; past it,
///     expired ones are swept and then the oldest go (a flood of started,
///     never finished sign-ins cannot fill the memory).
///   - sessionsPerUser: how many sessions one user may hold at once
///     (browsers, devices); a sign-in past it ends the session that
///     expires first.
public func inMemoryWebSignInStore(attemptLimit: Int = 10_000, sessionsPerUser: Int = 100) -> any WebSignInStore {
    InMemoryWebSignInStore(attemptLimit: attemptLimit, sessionsPerUser: sessionsPerUser)
}

/// What ``inMemoryWebSignInStore(attemptLimit:sessionsPerUser:)`` returns.
package actor InMemoryWebSignInStore: WebSignInStore {
    private var attempts: [String: SignInAttempt] = [:]
    /// Attempts kept at most; expired ones, then the oldest, go first.
    private let attemptLimit: Int
    private var sessions: [String: WebSession] = [:]
    /// The ids of each user's sessions (``SignedInUser/credentialKey``).
    private var byUser: [CredentialKey: Set<String>] = [:]
    /// The count at which expired sessions are next swept out: twice what a
    /// sweep left, so that a site with more live sessions than 10,000 does not
    /// sweep (a pass over all of them) at every sign-in.
    private var sweepAt = 10_000
    /// Live sessions kept per user; past it, the one that expires first goes.
    private let sessionsPerUser: Int

    /// - Parameters:
    ///   - attemptLimit: how many started sign-ins are kept at most; past it,
    ///     expired ones are swept and then the oldest go (a flood of started,
    ///     never finished sign-ins cannot fill the memory).
    ///   - sessionsPerUser: how many sessions one user may hold at once
    ///     (browsers, devices); a sign-in past it ends the session that
    ///     expires first. Each sign-in makes a session that lives for days, so
    ///     without a bound one account signing in again and again (a script
    ///     that drops its cookies, the provider's consent remembered) grew the
    ///     memory without end.
    package init(attemptLimit: Int = 10_000, sessionsPerUser: Int = 100) {
        self.attemptLimit = max(1, attemptLimit)
        self.sessionsPerUser = max(1, sessionsPerUser)
    }

    // MARK: Sign-in attempts

    package func insert(_ attempt: SignInAttempt, id: String) async throws {
        if attempts.count >= attemptLimit {
            let now = Date()
            attempts = attempts.filter { $0.value.expiresAt > now }
            if attempts.count >= attemptLimit {
                // Still full of live attempts (a flood): the oldest tenth go at
                // once, so the next inserts do not each search for the oldest.
                let excess = attempts.count - attemptLimit + 1 + attemptLimit / 10
                for (key, _) in attempts.sorted(by: { $0.value.expiresAt < $1.value.expiresAt }).prefix(excess) {
                    attempts[key] = nil
                }
            }
        }
        attempts[id] = attempt
    }

    package func takeAttempt(id: String, now: Date) async throws -> SignInAttempt? {
        guard let attempt = attempts.removeValue(forKey: id), attempt.expiresAt > now else { return nil }
        return attempt
    }

    package func attempt(id: String, now: Date) async throws -> SignInAttempt? {
        guard let attempt = attempts[id], attempt.expiresAt > now else { return nil }
        return attempt
    }

    // MARK: Sessions

    package func insert(_ session: WebSession, id: String) async throws {
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

    package func session(id: String, now: Date) async throws -> WebSession? {
        guard let session = sessions[id] else { return nil }
        guard session.expiresAt > now else {
            forget(id, of: session.user)
            return nil
        }
        return session
    }

    package func removeSession(id: String) async throws {
        if let session = sessions[id] { forget(id, of: session.user) }
    }

    package func removeSessions(of user: SignedInUser) async throws {
        for id in byUser.removeValue(forKey: user.credentialKey) ?? [] { sessions[id] = nil }
    }

    private func forget(_ id: String, of user: SignedInUser) {
        sessions[id] = nil
        byUser[user.credentialKey]?.remove(id)
        if byUser[user.credentialKey]?.isEmpty == true { byUser[user.credentialKey] = nil }
    }
}
