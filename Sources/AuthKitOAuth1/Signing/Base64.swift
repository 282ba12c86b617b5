/// Standard base64 with padding (RFC 4648 §4), as RFC 5849 §3.4.2 asks for
/// `oauth_signature`: "base64-encoded per [RFC2045], Section 6.8".
///
/// Written on raw memory so the signing path does not round-trip through `Data`.
enum Base64 {
    private static let alphabet: StaticString = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

    static func encodedCount(_ count: Int) -> Int { (count + 2) / 3 * 4 }

    /// Writes the encoding of `input` to `output` (room for ``encodedCount(_:)``
    /// bytes) and returns the number of bytes written.
    static func encode(_ input: UnsafeRawBufferPointer, into output: UnsafeMutablePointer<UInt8>) -> Int {
        let table = alphabet.utf8Start
        var written = 0
        var index = 0
        while index < input.count {
            let remaining = input.count - index
            let first = input[index]
            let second: UInt8 = remaining > 1 ? input[index + 1] : 0
            let third: UInt8 = remaining > 2 ? input[index + 2] : 0
            let group = UInt32(first) << 16 | UInt32(second) << 8 | UInt32(third)
            output[written] = table[Int(group >> 18 & 0x3F)]
            output[written + 1] = table[Int(group >> 12 & 0x3F)]
            output[written + 2] = remaining > 1 ? table[Int(group >> 6 & 0x3F)] : UInt8(ascii: "=")
            output[written + 3] = remaining > 2 ? table[Int(group & 0x3F)] : UInt8(ascii: "=")
            written += 4
            index += 3
        }
        return written
    }
}
