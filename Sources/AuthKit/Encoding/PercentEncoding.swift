/// Strict percent-encoding of UTF-8 text.
///
/// Every byte outside the RFC 3986 §2.3 *unreserved* set (`A-Z a-z 0-9 - . _ ~`)
/// becomes `%XX` with uppercase hex. This is exactly the encoding RFC 5849 §3.6
/// demands for OAuth 1.0a signatures, and it is also the safest encoding for
/// OAuth 2.0 query and form values: every `application/x-www-form-urlencoded`
/// decoder reads it back unchanged, whereas `URLComponents` leaves `+`, `&`-free
/// sub-delimiters and `=` raw in ways that servers decode differently
/// (a raw `+` is read as a space).
public enum PercentEncoding {
    /// Percent-encodes `string`'s UTF-8 bytes, keeping only unreserved characters.
    ///
    ///     PercentEncoding.encode("Ladies + Gentlemen") == "Ladies%20%2B%20Gentlemen"
    public static func encode(_ string: String) -> String {
        var output = [UInt8]()
        output.reserveCapacity(string.utf8.count)
        for byte in string.utf8 {
            if isUnreserved(byte) {
                output.append(byte)
            } else {
                output.append(UInt8(ascii: "%"))
                output.append(hexDigits[Int(byte >> 4)])
                output.append(hexDigits[Int(byte & 0x0F)])
            }
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// Decodes `%XX` escapes. With `plusAsSpace` (form encoding, WHATWG URL
    /// standard §5.1) a literal `+` is read as a space first.
    ///
    /// Returns `nil` when an escape is malformed or the bytes are not UTF-8, so a
    /// caller can report the offending parameter rather than guess.
    public static func decode(_ string: String, plusAsSpace: Bool = false) -> String? {
        var bytes = [UInt8]()
        bytes.reserveCapacity(string.utf8.count)
        var iterator = string.utf8.makeIterator()
        while let byte = iterator.next() {
            switch byte {
            case UInt8(ascii: "%"):
                guard let high = iterator.next().flatMap(hexValue),
                      let low = iterator.next().flatMap(hexValue) else { return nil }
                bytes.append(high << 4 | low)
            case UInt8(ascii: "+") where plusAsSpace:
                bytes.append(UInt8(ascii: " "))
            default:
                bytes.append(byte)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }

    @inline(__always)
    static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"),
             UInt8(ascii: "a")...UInt8(ascii: "z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
            return true
        default:
            return false
        }
    }

    private static let hexDigits: [UInt8] = Array("0123456789ABCDEF".utf8)

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        default: return nil
        }
    }
}
