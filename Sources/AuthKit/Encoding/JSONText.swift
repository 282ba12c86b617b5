/// Writes JSON text (RFC 8259) for the few small objects AuthKit makes on a
/// hot path — a DPoP proof's header and claims, on every request — where
/// Foundation's `JSONEncoder` cost a fifth of the proof.
///
/// Only what those objects hold: strings, integers, booleans, null and
/// objects. Members are written in the order given, once each; a reader
/// must not depend on the order (RFC 8259 §4).
package struct JSONText {
    package private(set) var bytes: [UInt8] = []

    package init(capacity: Int = 256) {
        bytes.reserveCapacity(capacity)
    }

    /// `value` as a JSON string (RFC 8259 §7): `"` and `\` escaped, control
    /// characters (U+0000–U+001F) as `\n`, `\t`… or `\u00XX`, everything else
    /// as its UTF-8 bytes.
    package mutating func string(_ value: String) {
        bytes.append(UInt8(ascii: "\""))
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes += [UInt8(ascii: "\\"), UInt8(ascii: "\"")]
            case UInt8(ascii: "\\"): bytes += [UInt8(ascii: "\\"), UInt8(ascii: "\\")]
            case 0x0A: bytes += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
            case 0x0D: bytes += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
            case 0x09: bytes += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
            case 0x00..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                bytes += Array("\\u00".utf8) + [hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    package mutating func integer(_ value: Int) {
        bytes += Array(String(value).utf8)
    }

    package mutating func boolean(_ value: Bool) {
        bytes += Array((value ? "true" : "false").utf8)
    }

    package mutating func null() {
        bytes += Array("null".utf8)
    }

    package mutating func beginObject() {
        bytes.append(UInt8(ascii: "{"))
    }

    package mutating func endObject() {
        bytes.append(UInt8(ascii: "}"))
    }

    /// Starts the member `name` of the object being written; its value is
    /// written next.
    package mutating func member(_ name: String) {
        if bytes.last != UInt8(ascii: "{") { bytes.append(UInt8(ascii: ",")) }
        string(name)
        bytes.append(UInt8(ascii: ":"))
    }

    /// The member `name` with a string value; none when `value` is nil.
    package mutating func member(_ name: String, _ value: String?) {
        guard let value else { return }
        member(name)
        string(value)
    }
}
