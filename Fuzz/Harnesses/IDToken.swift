import Foundation

// libFuzzer harness: a provider's key set and an ID token, both hostile
// (issue 46). Input: the key set's JSON, a newline, the token. Nothing here
// can hold a valid signature, so no token may ever be accepted; refusals
// are IDTokenProblems whose words hold no control characters and never the
// token.
@testable import AuthKit

private enum IDTokenFixture {
    static let issuer = "https://op.example"
}

func fuzzIDToken(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let bytes = Array(UnsafeRawBufferPointer(start: start, count: count))
    let split = bytes.firstIndex(of: UInt8(ascii: "\n")) ?? bytes.count
    let keySet: JSONWebKeySet
    do {
        keySet = try JSONWebKeySet.parse(Data(bytes[..<split]))
    } catch {
        check("\(error)", token: "")
        return 0
    }
    // Every key kept can verify something: a known type, and no private part.
    for key in keySet.keys {
        precondition(key["d"] == nil && key["p"] == nil, "a key set with private material was kept")
    }
    let token = String(decoding: bytes[min(split + 1, bytes.count)...], as: UTF8.self)
    let verifier = IDTokenVerifier(
        issuer: IDTokenFixture.issuer, clientID: "client", algorithms: Set(IDTokenAlgorithm.allCases)
    ) { _ in keySet }
    let outcome = LockedOutcome()
    let done = DispatchSemaphore(value: 0)
    Task {
        do {
            _ = try await verifier.verify(token, .init(nonce: "n"), now: Date(timeIntervalSince1970: 1_800_000_000))
            outcome.set("accepted")
        } catch {
            outcome.set("\(error)")
        }
        done.signal()
    }
    done.wait()
    let said = outcome.value
    precondition(said != "accepted", "a token without a valid signature was accepted: \(token.debugDescription)")
    check(said, token: token)
    return 0
}

private func check(_ message: String, token: String) {
    requireNoControlCharacters(message)
    if token.count >= 24 {
        precondition(!holds(message, token), "the error repeats the token")
    }
}

private final class LockedOutcome: @unchecked Sendable {
    private let lock = NSLock()
    private var text = ""
    func set(_ value: String) { lock.withLock { text = value } }
    var value: String { lock.withLock { text } }
}
