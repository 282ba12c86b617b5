// libFuzzer harness: the `WWW-Authenticate` Bearer challenge reader (RFC 6750
// §3) on arbitrary text, one field per line, as a resource server may send.
@testable import AuthKit

// Its checks search with `holds` (Checks.swift), not Foundation's
// `contains`, which trapped on a field of NULs and U+FFFD ("String index is
// out of bounds" in its UTF-16 view).

func fuzzBearerChallenge(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let text = String(decoding: UnsafeRawBufferPointer(start: start, count: count), as: UTF8.self)
    let fields = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    let challenge = BearerChallenge(fields: fields)
    // Only a field naming the Bearer scheme yields a challenge.
    if challenge != nil {
        precondition(
            fields.contains { holds(String($0.prefix(8 << 10)).lowercased(), "bearer") },
            "a challenge from no Bearer field: \(text.debugDescription)")
    }
    // Without escapes, every value is text of the field it came from.
    if let challenge, !text.utf8.contains(UInt8(ascii: "\\")) {
        for value in [challenge.error, challenge.errorDescription, challenge.scope].compactMap({ $0 })
        where !value.isEmpty {
            precondition(
                fields.contains { holds($0, value) }, "'\(value)' is in no field of \(text.debugDescription)")
        }
    }
    // Reading is deterministic.
    precondition(BearerChallenge(fields: fields) == challenge, "two readings differ: \(text.debugDescription)")
    return 0
}
