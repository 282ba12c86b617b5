import Foundation

// libFuzzer harness: the token endpoint response parser (RFC 6749 §5.1, §5.2),
// and the same body read as a device authorization answer (RFC 8628 §3.2).
// The first byte chooses the Content-Type and status; the rest is the body,
// and for a 401 its first line is the `WWW-Authenticate` field (RFC 6749
// §5.2's refused client authentication, RFC 6750 §3's refused token).
@testable import AuthKit

private enum TokenResponseFixture {
    /// What the request carried (a client secret, a code): an error never
    /// repeats it, however the body echoes it.
    static let sent = ["fuzz-client-secret-0123", "fuzz-code-4567"]
    static let contentTypes = [
        "application/json", "application/x-www-form-urlencoded", "text/plain", "",
        "application/json; charset=utf-8", "text/html",
    ]
}

func fuzzTokenResponse(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    guard count > 0 else { return 0 }
    let bytes = UnsafeRawBufferPointer(start: start, count: count)
    let selector = Int(bytes[0])
    let contentType = TokenResponseFixture.contentTypes[selector % TokenResponseFixture.contentTypes.count]
    let status = selector & 0x80 != 0 ? 400 : selector & 0x40 != 0 ? 401 : 200
    var headers: [(String, String)] = contentType.isEmpty ? [] : [("Content-Type", contentType)]
    var body = Data(bytes.dropFirst())
    if status == 401, let newline = body.firstIndex(of: UInt8(ascii: "\n")) {
        headers.append(("WWW-Authenticate", String(decoding: body[..<newline], as: UTF8.self)))
        body = Data(body[(newline + 1)...])
    }
    var response = IncomingResponse(status: status, headers: headers, body: body)
    response.secrets = TokenResponseFixture.sent
    do {
        let fields = try TokenResponseParser().parse(response)
        precondition(!fields.accessToken.isEmpty, "accepted an empty access token")
        for token in [fields.accessToken] + (fields.refreshToken.map { [$0] } ?? []) {
            precondition(
                token.utf8.allSatisfy { (0x20...0x7E).contains($0) },
                "accepted a token no header can carry (RFC 6749 A.12)")
        }
    } catch {
        // Errors are logged and shown: they never repeat a token the body
        // carried, and hold no control characters (terminal escapes) however
        // hostile the body.
        let message = "\(error)"
        let bodyText = String(decoding: response.body, as: UTF8.self)
        for secret in secrets(in: response.body) where occurrences(of: secret, in: bodyText, atMost: 2) == 1 {
            precondition(!holds(message, secret), "the error repeats a token from the body: \(message)")
        }
        for secret in TokenResponseFixture.sent {
            precondition(!holds(message, secret), "the error repeats what the request sent: \(message)")
        }
        requireNoControlCharacters(message)
    }
    _ = try? TokenResponseParser(step: .refresh).parse(response)
    deviceAnswer(response)
    return 0
}

/// The same body as a device authorization answer (RFC 8628 §3.2): whatever
/// it says, nothing but an https page (http on loopback) is accepted to be
/// shown or opened, the wait and the expiry are finite, and an error neither
/// repeats the device code nor carries control characters.
private func deviceAnswer(_ response: IncomingResponse) {
    guard let members = try? TokenResponseParser(successStatus: [200], step: .deviceAuthorization).members(of: response)
    else { return }
    do {
        let device = try DeviceAuthorization(
            answer: members, providerID: "fuzz", sentAt: Date(timeIntervalSince1970: 0), scopes: [])
        for url in [device.verificationURI] + (device.verificationURIComplete.map { [$0] } ?? []) {
            let scheme = url.scheme?.lowercased()
            precondition(
                scheme == "https" || (scheme == "http" && url.isLoopback),
                "accepted a verification URI that is no web page: \(url)")
        }
        precondition(
            device.interval.isFinite && device.interval < 1e11 && device.expiresAt.timeIntervalSince1970 < 1e11,
            "accepted an unbounded interval or expiry")
    } catch {
        let message = "\(error)"
        if let code = members["device_code"]?.scalarText, code.count >= 12, !code.contains(" ") {
            precondition(!holds(message, code), "the error repeats the device code: \(message)")
        }
        requireNoControlCharacters(message)
    }
}

/// The token values in a JSON or form body: long enough not to match a word of an error message by chance.
private func secrets(in body: Data) -> [String] {
    let names: Set<String> = ["access_token", "refresh_token", "id_token"]
    var values = [String]()
    if let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any] {
        values = object.filter { names.contains($0.key) }.compactMap { $0.value as? String }
    } else if let text = String(data: body, encoding: .utf8), let pairs = FormURLEncoding.decode(text) {
        values = pairs.filter { names.contains($0.0) }.map(\.1)
    }
    return values.filter { $0.count >= 12 && !$0.contains(" ") }
}
