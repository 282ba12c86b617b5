import AuthKit
import AuthKitServer
import Foundation
import Testing

/// The in-memory stores of one instance, under more than they keep.
@Suite struct InMemoryStoreTests {
    static func attempt(expiringIn seconds: TimeInterval) -> SignInAttempt {
        let pending = PendingAuthorization(
            providerID: "google", state: "s", codeVerifier: "verifier", redirectURI: "https://app.example/cb",
            expectedIssuer: nil, issuerRequired: false, scopes: ["openid"], createdAt: Date())
        return SignInAttempt(
            providerID: "google", pending: pending, returnTo: "/", browserBinding: "b",
            expiresAt: Date(timeIntervalSinceNow: seconds))
    }

    /// A session's CSRF token is not in its printed or dumped form.
    @Test func aSessionPrintsNoCSRFToken() {
        let session = WebSession(
            user: SignedInUser(providerID: "google", subject: "alice", issuer: nil, displayName: nil),
            csrfToken: "CSRF-secret-0123456789", createdAt: Date(), expiresAt: Date())
        var dumped = ""
        dump(session, to: &dumped)
        for shown in ["\(session)", String(reflecting: session), dumped] {
            #expect(!shown.contains("CSRF-secret") && shown.contains("alice"), "\(shown)")
        }
    }

    /// A flood of sign-ins started and never finished: the store stays at its
    /// limit by dropping the oldest, and the newest still finish.
    @Test func aFloodOfAttemptsDropsTheOldest() async throws {
        let store = InMemoryWebSignInStore(attemptLimit: 50)
        for index in 0..<500 {
            try await store.insert(Self.attempt(expiringIn: 600 + Double(index)), id: "a\(index)")
        }
        #expect(try await store.takeAttempt(id: "a499", now: Date()) != nil)
        #expect(try await store.takeAttempt(id: "a450", now: Date()) != nil)
        #expect(try await store.takeAttempt(id: "a0", now: Date()) == nil, "the oldest was kept past the limit")
        var kept = 0
        for index in 0..<500 where try await store.takeAttempt(id: "a\(index)", now: Date()) != nil { kept += 1 }
        #expect(kept <= 50 - 2, "\(kept) more kept beside the two taken; the limit is 50")
    }

    /// Expired attempts go before live ones, however old the live ones are.
    @Test func expiredAttemptsGoFirst() async throws {
        let store = InMemoryWebSignInStore(attemptLimit: 10)
        try await store.insert(Self.attempt(expiringIn: 600), id: "live")
        for index in 0..<9 { try await store.insert(Self.attempt(expiringIn: -1), id: "expired\(index)") }
        try await store.insert(Self.attempt(expiringIn: 900), id: "new")
        #expect(try await store.takeAttempt(id: "live", now: Date()) != nil)
        #expect(try await store.takeAttempt(id: "new", now: Date()) != nil)
    }

    /// Past 10,000 sessions, expired ones are swept out and live ones stay.
    @Test func sessionsPastTheSweepKeepTheLiveOnes() async throws {
        let store = InMemoryWebSignInStore()
        let now = Date()
        for index in 0..<10_050 {
            let live = index % 2 == 0
            let user = SignedInUser(providerID: "google", subject: "s\(index % 500)", issuer: nil, displayName: nil)
            try await store.insert(
                WebSession(
                    user: user, csrfToken: "c", createdAt: now,
                    expiresAt: now.addingTimeInterval(live ? 3_600 : -1)),
                id: "s\(index)")
        }
        #expect(try await store.session(id: "s0", now: now) != nil)
        #expect(try await store.session(id: "s10048", now: now) != nil)
        #expect(try await store.session(id: "s1", now: now) == nil)
    }

    /// One user holds at most `sessionsPerUser` sessions: a sign-in past it
    /// ends the one that expires first; other users' are untouched.
    @Test func aUserHoldsAtMostTheLimitOfSessions() async throws {
        try await Self.checkSessionsPerUser(InMemoryWebSignInStore(sessionsPerUser: 3), limit: 3)
    }

    /// The bound per user, for any store made with a limit of `limit` (≥ 2).
    static func checkSessionsPerUser(_ store: some WebSignInStore, limit: Int) async throws {
        let now = Date()
        let alice = SignedInUser(providerID: "google", subject: "alice", issuer: nil, displayName: nil)
        let bob = SignedInUser(providerID: "google", subject: "bob", issuer: nil, displayName: nil)
        func session(_ user: SignedInUser, _ seconds: Double) -> WebSession {
            WebSession(user: user, csrfToken: "c", createdAt: now, expiresAt: now.addingTimeInterval(seconds))
        }
        try await store.insert(session(bob, 60), id: "bob")
        for index in 0..<(limit + 2) {
            try await store.insert(session(alice, 600 + Double(index)), id: "alice-\(index)")
        }
        for index in 0..<(limit + 2) {
            let kept = try await store.session(id: "alice-\(index)", now: now) != nil
            #expect(kept == (index >= 2), "alice-\(index)")
        }
        #expect(try await store.session(id: "bob", now: now) != nil)
        try await store.removeSessions(of: alice)
        for index in 0..<(limit + 2) { #expect(try await store.session(id: "alice-\(index)", now: now) == nil) }
        #expect(try await store.session(id: "bob", now: now) != nil)
    }

    /// Attempts and sessions share a store, not ids: one of each under the
    /// same id, and ending or taking either leaves the other.
    @Test func attemptsAndSessionsAreApart() async throws { try await Self.checkApart(InMemoryWebSignInStore()) }

    static func checkApart(_ store: some WebSignInStore) async throws {
        let now = Date()
        let user = SignedInUser(providerID: "google", subject: "alice", issuer: nil, displayName: nil)
        try await store.insert(attempt(expiringIn: 600), id: "same")
        try await store.insert(
            WebSession(user: user, csrfToken: "c", createdAt: now, expiresAt: now.addingTimeInterval(600)), id: "same")
        try await store.removeSession(id: "same")
        #expect(try await store.session(id: "same", now: now) == nil)
        #expect(try await store.attempt(id: "same", now: now) != nil, "ending the session took the attempt")
        try await store.insert(
            WebSession(user: user, csrfToken: "c", createdAt: now, expiresAt: now.addingTimeInterval(600)), id: "same")
        #expect(try await store.takeAttempt(id: "same", now: now)?.browserBinding == "b")
        #expect(try await store.takeAttempt(id: "same", now: now) == nil, "an attempt was taken twice")
        #expect(try await store.session(id: "same", now: now)?.user == user, "taking the attempt ended the session")
    }
}
