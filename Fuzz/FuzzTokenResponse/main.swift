// libFuzzer target: the token endpoint response parser (RFC 6749 §5.1, §5.2).
// The first byte chooses the Content-Type and status; the rest is the body.
import AuthKit
import Foundation
import FuzzSupport

enum Fixture {
    static let contentTypes = ["application/json", "application/x-www-form-urlencoded", "text/plain", "",
                               "application/json; charset=utf-8", "text/html"]
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    guard count > 0 else { return 0 }
    let bytes = UnsafeRawBufferPointer(start: start, count: count)
    let selector = Int(bytes[0])
    let contentType = Fixture.contentTypes[selector % Fixture.contentTypes.count]
    let status = selector & 0x80 != 0 ? 400 : 200
    let headers: [(String, String)] = contentType.isEmpty ? [] : [("Content-Type", contentType)]
    let response = IncomingResponse(status: status, headers: headers, body: Data(bytes.dropFirst()))
    do {
        let fields = try TokenResponseParser().parse(response)
        precondition(!fields.accessToken.isEmpty, "accepted an empty access token")
    } catch {
        // Errors are logged and shown: they never repeat a token the body
        // carried, and hold no control characters (terminal escapes) however
        // hostile the body.
        let message = "\(error)"
        let bodyText = String(decoding: response.body, as: UTF8.self)
        for secret in secrets(in: response.body) where bodyText.components(separatedBy: secret).count == 2 {
            precondition(!message.contains(secret), "the error repeats a token from the body: \(message)")
        }
        precondition(!message.unicodeScalars.contains { $0.value < 0x20 || (0x7F..<0xA0).contains($0.value) },
                     "control character in the error: \(message.debugDescription)")
    }
    _ = try? TokenResponseParser(step: .refresh).parse(response)
    return 0
}

/// The token values in a JSON or form body: long enough not to match a word of an error message by chance.
func secrets(in body: Data) -> [String] {
    let names: Set<String> = ["access_token", "refresh_token", "id_token"]
    var values = [String]()
    if let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any] {
        values = object.filter { names.contains($0.key) }.compactMap { $0.value as? String }
    } else if let text = String(data: body, encoding: .utf8), let pairs = FormURLEncoding.decode(text) {
        values = pairs.filter { names.contains($0.0) }.map(\.1)
    }
    return values.filter { $0.count >= 12 && !$0.contains(" ") }
}

fuzzMain { fuzzTestOneInput($0, $1) }
