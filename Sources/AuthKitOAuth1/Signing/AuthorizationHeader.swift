import AuthKit

/// The `Authorization: OAuth …` header value of RFC 5849 §3.5.1.
///
/// "Parameter names and values are encoded per Parameter Encoding (§3.6)",
/// each value in double quotes, pairs separated by a comma (we add the optional
/// space, as Twitter's documentation does), in name order. `realm`, if given,
/// comes first and is not signed.
///
/// The protocol parameters are copied from the signature's already-encoded
/// parameter buffer, so nothing is encoded twice.
enum AuthorizationHeader {
    static func render(_ parameters: EncodedParameters, signature: UnsafeBufferPointer<UInt8>, realm: String?) -> String
    {
        let signatureName: StaticString = "oauth_signature"
        var capacity = 6 + (signatureName.utf8CodeUnitCount + 5 + signature.count * 3)
        if let realm { capacity += 10 + realm.utf8.count * 3 }
        for entry in parameters.entries where entry.isProtocol { capacity += entry.name.count + entry.value.count + 5 }

        return String(unsafeUninitializedCapacity: capacity) { buffer in
            var output = ByteWriter(buffer)
            output.append("OAuth ")
            var first = true
            func separate() {
                if !first { output.append(", ") }
                first = false
            }
            if let realm {
                // §3.5.1: `realm` is RFC 2617's quoted-string, not a §3.6-encoded
                // parameter: `http://sp.example.com/` goes as written, `"` and
                // `\` escaped. A control character (no quoted-string holds
                // one; CR LF would end the header) is percent-encoded instead.
                separate()
                output.append("realm=\"")
                let hex = Array("0123456789ABCDEF".utf8)
                for byte in realm.utf8 {
                    if byte < 0x20 || byte == 0x7F {
                        output.append(UInt8(ascii: "%"))
                        output.append(hex[Int(byte >> 4)])
                        output.append(hex[Int(byte & 0xF)])
                        continue
                    }
                    if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { output.append(UInt8(ascii: "\\")) }
                    output.append(byte)
                }
                output.append(UInt8(ascii: "\""))
            }
            var signatureWritten = false
            func writeSignature() {
                separate()
                output.append("oauth_signature=\"")
                output.appendEncoded(signature)
                output.append(UInt8(ascii: "\""))
                signatureWritten = true
            }
            for entry in parameters.entries where entry.isProtocol {
                if !signatureWritten, isAfterSignature(parameters.bytes(entry.name)) { writeSignature() }
                separate()
                output.append(parameters.bytes(entry.name))
                output.append("=\"")
                output.append(parameters.bytes(entry.value))
                output.append(UInt8(ascii: "\""))
            }
            if !signatureWritten { writeSignature() }
            return output.count
        }
    }

    /// Whether `name` sorts after `oauth_signature` in byte order.
    private static func isAfterSignature(_ name: UnsafeBufferPointer<UInt8>) -> Bool {
        let signature: StaticString = "oauth_signature"
        let common = min(name.count, signature.utf8CodeUnitCount)
        for index in 0..<common where name[index] != signature.utf8Start[index] {
            return name[index] > signature.utf8Start[index]
        }
        return name.count > signature.utf8CodeUnitCount
    }
}
