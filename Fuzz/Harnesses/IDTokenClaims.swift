import Foundation

// libFuzzer harness: an ID token's claims, checked as OpenID Connect Core
// §3.1.3.7 asks once the signature has verified (the `id-token` harness
// cannot get past the signature). Input: a selector byte (whether a nonce,
// a previous identity and max_age are expected), then the claims' JSON.
// Whatever is accepted is checked again here, claim by claim, by an
// independent reading: the exact issuer and client, a live token, the
// nonce, the hashes, the identity a refresh must keep.
@testable import AuthKit

private enum ClaimsFixture {
    static let issuer = "https://op.example"
    static let clientID = "client-1"
    static let nonce = "n-0123456789"
    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    /// base64url of the first half of SHA-256 of "at-value" and "code-value" (RS256's hash).
    static let atHash = "DI41AAIS5z8PKyvKsjlsRA"
    static let cHash = "vo0Ugl5YTosGK-Nud6IoaA"
    static let previous = Identity(
        verifiedClaims: ["iss": .string(issuer), "sub": .string("user-1"), "aud": .string(clientID)], issuer: issuer,
        subject: "user-1")
    static let verifier = IDTokenVerifier(
        issuer: issuer, clientID: clientID, algorithms: [.rs256], keys: { _ in JSONWebKeySet(keys: []) })
}

func fuzzIDTokenClaims(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    guard count > 1 else { return 0 }
    let bytes = Array(UnsafeRawBufferPointer(start: start, count: count))
    let selector = bytes[0]
    guard case .object(let claims)? = try? JSONParser.parse(Data(bytes.dropFirst()), repeatedNames: .refused) else {
        return 0
    }
    let expected = IDTokenVerifier.Expectations(
        nonce: selector & 1 == 0 ? ClaimsFixture.nonce : nil, accessToken: "at-value", code: "code-value",
        previous: selector & 2 == 0 ? nil : ClaimsFixture.previous, maxAge: selector & 4 == 0 ? nil : 600)
    let identity: Identity
    do {
        identity = try ClaimsFixture.verifier.check(claims, algorithm: .rs256, expected, now: ClaimsFixture.now)
    } catch {
        let message = "\(error)"
        requireNoControlCharacters(message)
        return 0
    }
    accepted(claims, identity, expected)
    return 0
}

/// Each claim of an accepted token, read again without the verifier.
private func accepted(_ claims: [String: JSONValue], _ identity: Identity, _ expected: IDTokenVerifier.Expectations) {
    func text(_ name: String) -> [UInt8]? {
        if case .string(let value)? = claims[name] { return Array(value.utf8) }
        return nil
    }
    func seconds(_ name: String) -> Double? {
        switch claims[name] {
        case .integer(let value)?: Double(value)
        case .number(let value)? where value.isFinite: value
        default: nil
        }
    }
    let now = ClaimsFixture.now.timeIntervalSince1970
    let client = Array(ClaimsFixture.clientID.utf8)
    precondition(text("iss") == Array(ClaimsFixture.issuer.utf8), "accepted another issuer")
    precondition(Array(identity.issuer.utf8) == Array(ClaimsFixture.issuer.utf8), "an identity of another issuer")
    let subject = text("sub") ?? []
    precondition(!subject.isEmpty && subject.count <= 255, "accepted a sub that is empty or over 255 bytes")
    precondition(Array(identity.subject.utf8) == subject, "the identity's subject is not the token's")
    switch claims["aud"] {
    case .string(let audience)?:
        precondition(Array(audience.utf8) == client, "accepted another audience")
    case .array(let audiences)?:
        guard audiences.count == 1, case .string(let audience) = audiences[0] else {
            preconditionFailure("accepted an aud array that is not this client alone")
        }
        precondition(Array(audience.utf8) == client, "accepted another audience")
    default:
        preconditionFailure("accepted a token without a string aud")
    }
    if claims["azp"] != nil { precondition(text("azp") == client, "accepted another azp") }
    guard let expiry = seconds("exp"), let issued = seconds("iat") else {
        preconditionFailure("accepted a token without a numeric exp and iat")
    }
    precondition(now - expiry <= 60 && issued - now <= 60, "accepted a token outside its lifetime")
    if claims["nbf"] != nil {
        precondition(seconds("nbf").map { $0 - now <= 60 } ?? false, "accepted a token before its nbf")
    }
    if let nonce = expected.nonce { precondition(text("nonce") == Array(nonce.utf8), "accepted another nonce") }
    if let maxAge = expected.maxAge {
        precondition(
            seconds("auth_time").map { now - $0 <= Double(maxAge) + 60 } ?? false,
            "accepted an authentication older than max_age")
    }
    if claims["at_hash"] != nil { precondition(text("at_hash") == Array(ClaimsFixture.atHash.utf8), "at_hash") }
    if claims["c_hash"] != nil { precondition(text("c_hash") == Array(ClaimsFixture.cHash.utf8), "c_hash") }
    if let previous = expected.previous {
        precondition(
            Array(previous.issuer.utf8) == text("iss") && Array(previous.subject.utf8) == subject,
            "a refresh changed who signed in")
    }
}
