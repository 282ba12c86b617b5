import Foundation

// libFuzzer harness: the redirect URL parser (RFC 6749 §4.1.2) on arbitrary
// text, against a fixed pending attempt with an expected issuer.
@testable import AuthKit

private enum RedirectFixture {
    static let pending = PendingAuthorization(
        providerID: "fuzz", state: "kN3r7Zxq0k7mR4vYV1fQ8u6m2oXgH5sJc9tLwBpAeDy", codeVerifier: nil,
        redirectURI: "http://127.0.0.1:4321/callback", expectedIssuer: "https://as.example", issuerRequired: false,
        scopes: [], createdAt: Date(timeIntervalSince1970: 1_700_000_000))
}

func fuzzRedirect(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let text = String(decoding: UnsafeRawBufferPointer(start: start, count: count), as: UTF8.self)
    if let code = try? RedirectParser().code(from: text, for: RedirectFixture.pending) {
        // An accepted answer comes from the URL's query, never its fragment
        // (RFC 6749 §4.1.2), with this attempt's state.
        let query = URLComponents(string: text.trimmingCharacters(in: .whitespacesAndNewlines))?.percentEncodedQuery
        let pairs = FormURLEncoding.decode(query ?? "") ?? []
        precondition(
            pairs.contains { $0.0 == "code" && $0.1 == code }
                && pairs.contains { $0.0 == "state" && $0.1 == RedirectFixture.pending.state },
            "accepted code '\(code)' that is not in the query of \(text)")
    }
    do {
        _ = try RedirectParser(appendedFragment: "_").code(from: text, for: RedirectFixture.pending)
    } catch {
        // The loopback listener reports why it ignored a request, and any web
        // page can send one: the reason holds no control characters.
        let message = "\(error)"
        requireNoControlCharacters(message)
    }
    if let url = URL(string: text) { _ = try? RedirectParser().code(from: url, for: RedirectFixture.pending) }
    return 0
}
