// libFuzzer target: OAuth 1.0a parameter normalization (RFC 5849 §3.4.1),
// the unsafe-buffer code of AuthKitOAuth1/Signing. The input is a URL, a
// newline, and a form body; the first byte chooses method and content type.
import AuthKit
import AuthKitOAuth1
import Foundation
import FuzzSupport

enum Fixture {
    static let signer = OAuth1Signer(consumerKey: "ck", consumerSecret: "cs",
                                     nonceAndTimestamp: .fixed(nonce: "n", timestamp: "1"))
    static let methods = ["GET", "post", "PUT", ""]
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    guard count > 0 else { return 0 }
    let bytes = UnsafeRawBufferPointer(start: start, count: count)
    let selector = Int(bytes[0])
    let rest = bytes.dropFirst()
    let newline = rest.firstIndex(of: 0x0A) ?? rest.endIndex
    let urlText = String(decoding: rest[rest.startIndex..<newline], as: UTF8.self)
    let body = Data(rest[min(newline + 1, rest.endIndex)...])
    guard let url = URL(string: urlText) ?? URL(string: "https://api.example/1.1/x?" + urlText) else { return 0 }
    let method = Fixture.methods[selector % Fixture.methods.count]
    let contentType = selector & 0x04 != 0 ? "application/x-www-form-urlencoded; charset=utf-8" : nil
    let extra = selector & 0x08 != 0 ? [("oauth_callback", urlText)] : []
    _ = try? Fixture.signer.signatureBaseString(method: method, url: url, contentType: contentType, body: body,
                                        protocolParameters: Fixture.signer.protocolParameters(token: "t", extra: extra))
    _ = try? Fixture.signer.authorizationHeader(method: method, url: url, contentType: contentType, body: body,
                                        token: selector & 0x10 != 0 ? urlText : nil, tokenSecret: "ts",
                                        protocolParameters: extra, realm: "r")
    return 0
}

fuzzMain { fuzzTestOneInput($0, $1) }
