import Foundation

// libFuzzer harness: the OAuth 1.0a callback parser (RFC 5849 §2.2) on arbitrary
// text, against a fixed pending attempt. It shares the OAuth 2.0 redirect
// parser's strict checks; this target holds it to the same properties.
@testable import AuthKit
@_spi(Reproducible) @testable import AuthKitOAuth1

private enum CallbackFixture {
    static let pending = PendingAuthorization(
        providerID: "fuzz", requestToken: "Z6eEdO8MOmk394WozF5oKyuAv855l4Mlqo7hhlSLik",
        requestTokenSecret: "Kd75W4OQfb2oJTV0vzGzeXftVAwgMnEK9MumzYcM", redirectURI: "http://127.0.0.1:4321/callback",
        createdAt: Date(timeIntervalSince1970: 1_700_000_000))
}

func fuzzCallback(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let text = String(decoding: UnsafeRawBufferPointer(start: start, count: count), as: UTF8.self)
    do {
        let verifier = try CallbackParser().verifier(from: text, for: CallbackFixture.pending)
        // Accepted: a URL as a browser sends it (printable ASCII), whose query
        // holds this attempt's token and the verifier returned.
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        precondition(
            trimmed.unicodeScalars.allSatisfy { (0x21...0x7E).contains($0.value) },
            "accepted non-URL text \(text.debugDescription)")
        let query = URLComponents(string: trimmed)?.percentEncodedQuery
        let pairs = FormURLEncoding.decode(query ?? "") ?? []
        precondition(
            !verifier.isEmpty && pairs.contains { $0.0 == "oauth_verifier" && $0.1 == verifier }
                && pairs.contains { $0.0 == "oauth_token" && $0.1 == CallbackFixture.pending.requestToken },
            "accepted verifier '\(verifier)' that is not in the query of \(text)")
    } catch {
        // The listener reports why it ignored a request: no control characters.
        let message = "\(error)"
        requireNoControlCharacters(message)
    }
    return 0
}
