/// Standard base64 with padding (RFC 4648 §4), as RFC 5849 §3.4.2 asks for
/// `oauth_signature`: "base64-encoded per [RFC2045], Section 6.8".
///
/// Written on bytes so the signing path does not round-trip through `Data`.
enum Base64 {
    private static let alphabet: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    static func encode<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> String {
        var output = [UInt8]()
        output.reserveCapacity((bytes.underestimatedCount + 2) / 3 * 4)
        var iterator = bytes.makeIterator()
        while let first = iterator.next() {
            let second = iterator.next()
            let third = iterator.next()
            let group = UInt32(first) << 16 | UInt32(second ?? 0) << 8 | UInt32(third ?? 0)
            output.append(alphabet[Int(group >> 18 & 0x3F)])
            output.append(alphabet[Int(group >> 12 & 0x3F)])
            output.append(second == nil ? UInt8(ascii: "=") : alphabet[Int(group >> 6 & 0x3F)])
            output.append(third == nil ? UInt8(ascii: "=") : alphabet[Int(group & 0x3F)])
        }
        return String(decoding: output, as: UTF8.self)
    }
}
