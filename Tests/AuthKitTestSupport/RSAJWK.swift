import Foundation

/// An RSA private key's JWK members (RFC 7518 §6.3), read from its PKCS #1
/// DER (`RSAPrivateKey`: version, n, e, d, p, q, … as DER INTEGERs), for a
/// client key file whose `alg` the test chooses (PS256, which only a JWK can
/// say). Written here, not taken from the library under test.
public enum RSAJWK {
    public static func members(pkcs1 der: [UInt8], alg: String?, kid: String = "k1") -> [String: String]? {
        var integers = [[UInt8]]()
        var index = 0
        func length() -> Int? {
            guard index < der.count else { return nil }
            let first = Int(der[index])
            index += 1
            guard first & 0x80 != 0 else { return first }
            var value = 0
            for _ in 0..<(first & 0x7f) {
                guard index < der.count else { return nil }
                value = value << 8 | Int(der[index])
                index += 1
            }
            return value
        }
        guard der.first == 0x30 else { return nil }
        index = 1
        guard length() != nil else { return nil }
        while index < der.count, der[index] == 0x02 {
            index += 1
            guard let count = length(), index + count <= der.count else { return nil }
            integers.append(Array(der[index..<index + count].drop { $0 == 0 }))
            index += count
        }
        guard integers.count == 9 else { return nil }
        func b64(_ bytes: [UInt8]) -> String {
            Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
                .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        }
        return [
            "kty": "RSA", "n": b64(integers[1]), "e": b64(integers[2]), "d": b64(integers[3]),
            "p": b64(integers[4]), "q": b64(integers[5]), "kid": kid, "alg": alg,
        ].compactMapValues { $0 }
    }
}
