import AuthKit

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Where a web app's sign-ins wait for their callback, and where its
/// sessions live. Shared by every instance of the app behind one address (a
/// database: ``AuthKitPostgres/PostgresStore``), so that a sign-in started
/// on one instance finishes on another and a session cookie from one is
/// valid on all; ``inMemoryWebSignInStore(attemptLimit:sessionsPerUser:)`` for a single instance.
///
/// One store holds both, as every app needs both and in the same place: an
/// attempt kept in one instance's memory fails the callback that reaches
/// another.
///
/// Ids are SHA-256 digests, of the `state` sent to the provider (attempts)
/// and of the cookie's value (sessions), never the values a browser holds: a
/// copy of the store gives no one a sign-in to finish or a live session.
public protocol WebSignInStore: Sendable {
    // MARK: Sign-in attempts (RFC 6749 §4.1, between the two requests)

    func insert(_ attempt: SignInAttempt, id: String) async throws
    /// Removes and returns the attempt, once: of two callbacks with the same
    /// `state` at once (a replay), one gets it. `nil` when there is none, or
    /// it expired before `now`.
    func takeAttempt(id: String, now: Date) async throws -> SignInAttempt?
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

    // MARK: Sessions

    func insert(_ session: WebSession, id: String) async throws
    /// The session, or `nil` when there is none or it expired before `now`.
    func session(id: String, now: Date) async throws -> WebSession?
    /// Removing an id that is not there (a session that expired, or ended
    /// by a sign-out elsewhere) is no error: a sign-in over a stale cookie
    /// removes it first, and fails when this throws.
    func removeSession(id: String) async throws
    /// Removes every session of `user` (``SignedInUser/credentialKey``
    /// names them): signing out everywhere, as
    /// ``WebSignIn/Configuration/revokeOnSignOut`` does.
    func removeSessions(of user: SignedInUser) async throws
}

extension WebSignInStore {
    public func attempt(id: String, now: Date) async throws -> SignInAttempt? {
        guard let attempt = try await takeAttempt(id: id, now: now) else { return nil }
        try await insert(attempt, id: id)
        return attempt
    }
}
