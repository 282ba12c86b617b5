import Foundation
import Testing

@testable import AuthKitSandbox

/// A long-running sandbox forgets rather than grows: every kind of record is
/// bounded, expired and used ones going first.
@Suite struct GrantLedgerTests {
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
            // A proof's jti: those past their window can go, the rest are kept.
            let fresh = ledger.firstUse(
                ofJTI: "j\(index)", refusedAnywayAfter: now.addingTimeInterval(index < 70 ? -1 : 60))
            #expect(fresh)
        }
        let replayed = ledger.firstUse(ofJTI: "j0", refusedAnywayAfter: now)
        #expect(!replayed, "a jti is good once")
        ledger.prune(now: now)
        #expect(ledger.consents.count <= GrantLedger.limit)
        #expect(ledger.consents["c0"] == nil, "expired ones go first")
        #expect(ledger.consents["c\(GrantLedger.limit + 49)"] != nil, "a live one is kept when expired ones make room")
        #expect(ledger.codes.count <= GrantLedger.limit)
        let forgotten = ledger.firstUse(ofJTI: "j0", refusedAnywayAfter: now)
        #expect(forgotten, "a jti past its window was forgotten")
        let kept = ledger.firstUse(ofJTI: "j\(GrantLedger.limit)", refusedAnywayAfter: now)
        #expect(!kept, "a live jti was kept")
        #expect(
            ledger.nonces.count == GrantLedger.limit + 50 - 60, "only nonces outside the five-minute window are dropped"
        )
    }
}
