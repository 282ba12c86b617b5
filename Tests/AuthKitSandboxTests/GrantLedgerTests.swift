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
            ledger.nonces.insert("\(Int(now.timeIntervalSince1970) - (index < 60 ? 3600 : 0)) n\(index)")
        }
        ledger.prune(now: now)
        #expect(ledger.consents.count <= GrantLedger.limit)
        #expect(ledger.consents["c0"] == nil, "expired ones go first")
        #expect(ledger.consents["c\(GrantLedger.limit + 49)"] != nil, "a live one is kept when expired ones make room")
        #expect(ledger.codes.count <= GrantLedger.limit)
        #expect(
            ledger.nonces.count == GrantLedger.limit + 50 - 60, "only nonces outside the five-minute window are dropped"
        )
    }
}
