import Foundation
import Testing

@testable import AuthKitSandbox

/// A long-running sandbox forgets rather than grows: every kind of record is
/// bounded, expired and used ones going first.
@Suite struct GrantLedgerTests {
    /// A proof's or assertion's jti is good once. Lapsed ones (past the
    /// time their proof would be refused anyway) make room; a live one is
    /// never forgotten to make room, since its replay would then pass: once
    /// `limit` live ones are held, a new one is refused (nil) instead.
    @Test func jtisAreGoodOnceAndLiveOnesAreNeverForgotten() {
        let now = Date()
        var ledger = GrantLedger(deterministic: true)
        for index in 0..<GrantLedger.limit {
            let first = ledger.firstUse(
                ofJTI: "j\(index)", refusedAnywayAfter: now.addingTimeInterval(index < 70 ? -1 : 60), now: now)
            #expect(first == true, "\(index)")
        }
        let replayed = ledger.firstUse(ofJTI: "j100", refusedAnywayAfter: now, now: now)
        #expect(replayed == false, "a jti is good once")
        for index in 0..<70 {
            let roomMade = ledger.firstUse(ofJTI: "k\(index)", refusedAnywayAfter: now.addingTimeInterval(60), now: now)
            #expect(roomMade == true, "lapsed ones make room: \(index)")
        }
        let full = ledger.firstUse(ofJTI: "one-too-many", refusedAnywayAfter: now.addingTimeInterval(60), now: now)
        #expect(full == nil, "a live jti was dropped to make room")
        ledger.prune(now: now)
        let stillKnown = ledger.firstUse(ofJTI: "j\(GrantLedger.limit - 1)", refusedAnywayAfter: now, now: now)
        #expect(stillKnown == false, "pruning dropped a live jti")
    }

    @Test func recordsAreBoundedExpiredOnesFirst() {
        let now = Date()
        var ledger = GrantLedger(deterministic: true)
        let grant = ledger.newGrant(account: "alice", scopes: [], at: now)
        for index in 0..<(GrantLedger.limit + 50) {
            ledger.consents["c\(index)"] = GrantLedger.PendingConsent(
                redirectURI: "http://127.0.0.1/cb", sentRedirectURI: false, scopes: [], state: nil, challenge: nil,
                challengeMethod: nil,
                expiresAt: index < 100 ? now.addingTimeInterval(-1) : now.addingTimeInterval(600))
            ledger.codes["k\(index)"] = GrantLedger.Code(
                grant: grant, redirectURI: "", sentRedirectURI: false, challenge: nil,
                challengeMethod: nil, expiresAt: now.addingTimeInterval(600))
        }
        ledger.prune(now: now)
        #expect(ledger.consents.count <= GrantLedger.limit)
        #expect(ledger.consents["c0"] == nil, "expired ones go first")
        #expect(ledger.consents["c\(GrantLedger.limit + 49)"] != nil, "a live one is kept when expired ones make room")
        #expect(ledger.codes.count <= GrantLedger.limit)
    }

    /// OAuth 1.0a nonces are bounded as they are recorded, as jtis are: once
    /// `limit` are held, those outside the five-minute window make room; a
    /// live one is never dropped (its replay would pass), so a new one is
    /// refused instead. They were kept without bound until the next prune,
    /// which read every timestamp back out of its text.
    @Test func nonceRecordsAreBoundedAndLiveOnesAreKept() {
        let now = Date()
        let current = Int64(now.timeIntervalSince1970)
        var ledger = GrantLedger(deterministic: true)
        for index in 0..<GrantLedger.limit {
            let recorded = ledger.record(nonce: "n\(index)", timestamp: current - (index < 60 ? 3600 : 0), now: now)
            #expect(recorded, "\(index)")
        }
        #expect(ledger.hasSeen(nonce: "n100", timestamp: current))
        for index in 0..<60 {
            let roomMade = ledger.record(nonce: "m\(index)", timestamp: current, now: now)
            #expect(roomMade, "lapsed ones make room: \(index)")
        }
        #expect(ledger.nonces.count == GrantLedger.limit)
        let full = ledger.record(nonce: "one-too-many", timestamp: current, now: now)
        #expect(!full, "a live nonce was dropped")
        #expect(ledger.nonces.count == GrantLedger.limit && ledger.hasSeen(nonce: "n100", timestamp: current))
    }

    /// Pushed requests (RFC 9126) were never forgotten, and grants were kept
    /// for ever: each kind is bounded, expired pushed requests and grants
    /// nothing refers to (or that were revoked) going first.
    @Test func pushedRequestsAndGrantsAreBounded() {
        let now = Date()
        var ledger = GrantLedger(deterministic: true)
        let live = ledger.newGrant(account: "alice", scopes: ["read"], at: now)
        ledger.accessTokens["t"] = GrantLedger.AccessToken(
            grant: live, expiresAt: now.addingTimeInterval(600), scopes: ["read"])
        for index in 0..<(GrantLedger.limit + 50) {
            ledger.pushedRequests["r\(index)"] = GrantLedger.PushedRequest(
                parameters: [("scope", "read")],
                expiresAt: index < 100 ? now.addingTimeInterval(-1) : now.addingTimeInterval(60))
            _ = ledger.newGrant(account: "a\(index)", scopes: [], at: now)
        }
        ledger.prune(now: now)
        #expect(ledger.pushedRequests.count <= GrantLedger.limit)
        #expect(ledger.pushedRequests["r0"] == nil, "expired ones go first")
        #expect(ledger.pushedRequests["r\(GrantLedger.limit + 49)"] != nil)
        #expect(ledger.grants.count <= GrantLedger.limit)
        #expect(ledger.liveGrant(ofAccessToken: "t", at: now)?.id == live, "a grant a live token refers to is kept")
    }
}
