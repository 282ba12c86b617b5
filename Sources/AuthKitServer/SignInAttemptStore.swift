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

/// Where sign-in attempts wait for their callback. Shared by every instance
/// of an app behind one address (a database), so that a sign-in started on
/// one instance finishes on another.
///
/// Ids are SHA-256 digests (of the `state` sent to the provider), never the
/// values a browser holds.
public protocol SignInAttemptStore: Sendable {
    func insert(_ attempt: SignInAttempt, id: String) async throws
    /// Removes and returns the attempt, once: of two callbacks with the same
    /// `state` at once (a replay), one gets it. `nil` when there is none, or
    /// it expired before `now`.
    func take(id: String, now: Date) async throws -> SignInAttempt?
    /// The attempt, left in place; `nil` when there is none, or it expired
    /// before `now`. ``WebSignIn`` checks a callback against it (the
    /// browser's binding, the provider) before it takes the attempt, so a
    /// callback that fails the checks removes nothing: whoever learned a
    /// `state` cannot cancel the sign-in of the browser it belongs to from
    /// another browser.
    ///
    /// The default takes the attempt and puts it back, which leaves a moment
    /// in which the rightful callback finds nothing: a store should read it
    /// in place.
    func attempt(id: String, now: Date) async throws -> SignInAttempt?
}

extension SignInAttemptStore {
    public func attempt(id: String, now: Date) async throws -> SignInAttempt? {
        guard let attempt = try await take(id: id, now: now) else { return nil }
        try await insert(attempt, id: id)
        return attempt
    }
}

/// Sign-in attempts in this process's memory: one instance.
public actor InMemorySignInAttemptStore: SignInAttemptStore {
    private var attempts: [String: SignInAttempt] = [:]
    /// Attempts kept at most; the oldest go first (a flood of started,
    /// never finished sign-ins cannot fill the memory).
    private let limit: Int

    public init(limit: Int = 10_000) { self.limit = limit }

    public func insert(_ attempt: SignInAttempt, id: String) async throws {
        if attempts.count >= limit {
            let now = Date()
            attempts = attempts.filter { $0.value.expiresAt > now }
            if attempts.count >= limit {
                // Still full of live attempts (a flood): the oldest tenth go at
                // once, so the next inserts do not each search for the oldest.
                let excess = attempts.count - limit + 1 + limit / 10
                for (key, _) in attempts.sorted(by: { $0.value.expiresAt < $1.value.expiresAt }).prefix(excess) {
                    attempts[key] = nil
                }
            }
        }
        attempts[id] = attempt
    }

    public func take(id: String, now: Date) async throws -> SignInAttempt? {
        guard let attempt = attempts.removeValue(forKey: id), attempt.expiresAt > now else { return nil }
        return attempt
    }

    public func attempt(id: String, now: Date) async throws -> SignInAttempt? {
        guard let attempt = attempts[id], attempt.expiresAt > now else { return nil }
        return attempt
    }
}
