import Foundation

// libFuzzer harness: OAuth 1.0a parameter normalization (RFC 5849 §3.4.1),
// the unsafe-buffer code of AuthKitOAuth1/Signing. The input is a URL, a
// newline, and a form body; the first byte chooses method and content type.
@testable import AuthKit
@_spi(Reproducible) @testable import AuthKitOAuth1

private enum OAuth1SigningFixture {
    static let signer = OAuth1Signer(
        consumerKey: "ck", consumerSecret: "cs",
        nonceAndTimestamp: .fixed(nonce: "n", timestamp: "1"))
    static let methods = ["GET", "post", "PUT", ""]
}

func fuzzOAuth1Signing(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    guard count > 0 else { return 0 }
    let bytes = UnsafeRawBufferPointer(start: start, count: count)
    let selector = Int(bytes[0])
    let rest = bytes.dropFirst()
    let newline = rest.firstIndex(of: 0x0A) ?? rest.endIndex
    let urlText = String(decoding: rest[rest.startIndex..<newline], as: UTF8.self)
    let body = Data(rest[min(newline + 1, rest.endIndex)...])
    guard let url = URL(string: urlText) ?? URL(string: "https://api.example/1.1/x?" + urlText) else { return 0 }
    let method = OAuth1SigningFixture.methods[selector % OAuth1SigningFixture.methods.count]
    let contentType = selector & 0x04 != 0 ? "application/x-www-form-urlencoded; charset=utf-8" : nil
    let extra = selector & 0x08 != 0 ? [("oauth_callback", urlText)] : []
    let token = selector & 0x10 != 0 ? urlText : "t"
    let signer = OAuth1SigningFixture.signer

    // The normalized base string: METHOD&enc(URI)&enc(parameters), where the
    // encoded parts hold only unreserved characters and %XX (RFC 5849 §3.6).
    if let base = try? signer.signatureBaseString(
        method: method, url: url, contentType: contentType, body: body,
        protocolParameters: signer.protocolParameters(token: token, extra: extra))
    {
        let parts = base.utf8.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: false)
        precondition(parts.count == 3, "base string without exactly three parts: \(base)")
        for byte in Array(parts[1]) + Array(parts[2]) {
            precondition(isUnreservedOrPercent(byte), "unencoded byte \(byte) in base string: \(base)")
        }
    }
    // The header path (precomputed protocol parameters) signs exactly what the
    // general path signs for the same parameters.
    if let header = try? signer.authorizationHeader(
        method: method, url: url, contentType: contentType, body: body,
        token: token, tokenSecret: "ts", protocolParameters: extra, realm: "r"),
        let signature = try? signer.signature(
            method: method, url: url, contentType: contentType, body: body,
            protocolParameters: signer.protocolParameters(token: token, extra: extra),
            tokenSecret: "ts")
    {
        precondition(
            holds(header, "oauth_signature=\"\(PercentEncoding.encode(signature))\""),
            "the header's signature differs from signature(): \(header) vs \(signature)")
    }
    return 0
}

private func isUnreservedOrPercent(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
        UInt8(ascii: "0")...UInt8(ascii: "9"),
        UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "%"):
        return true
    default:
        return false
    }
}
