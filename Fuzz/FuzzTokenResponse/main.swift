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
    let headers: [(name: String, value: String)] = contentType.isEmpty ? [] : [("Content-Type", contentType)]
    let response = HTTPResponse(status: status, headers: headers, body: Data(bytes.dropFirst()))
    _ = try? TokenResponseParser().parse(response)
    _ = try? TokenResponseParser(step: .refresh).parse(response)
    return 0
}

fuzzMain { fuzzTestOneInput($0, $1) }
