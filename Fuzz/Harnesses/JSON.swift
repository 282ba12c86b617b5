import Foundation

// libFuzzer harness: AuthKit's JSON parser, which reads every token answer and
// descriptor file, against Foundation's JSONSerialization, an independent
// implementation. The same bytes must be accepted by both or refused by both,
// and an accepted text must give both the same value; where the descriptor
// loader then decodes with JSONDecoder, a disagreement would turn valid JSON
// into a syntax error, or let invalid JSON through to a stranger message.
//
// Foundation accepts more than RFC 8259 does (a trailing comma, UTF-16 text):
// where only Foundation accepts, `Grammar`, a bare recognizer of RFC 8259,
// must refuse the text too. The differences JSONParser documents are allowed:
// nesting deeper than `JSONParser.maximumDepth` is refused, so is a `\u`
// escape of half a surrogate pair, and an integer that fits Int64 stays exact
// where Foundation may round it through Double.
@testable import AuthKit

func fuzzJSON(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let data = Data(UnsafeBufferPointer(start: start, count: count))
    let ours = Result { try JSONParser.parse(data) }
    let theirs = Result { try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed]) }
    switch (ours, theirs) {
    case (.success(let value), .success(let reference)):
        if let difference = difference(value, reference, at: "$") {
            preconditionFailure(
                "the parsers disagree at \(difference) in \(String(decoding: data, as: UTF8.self).debugDescription)")
        }
        // Both lenient alike (a trailing comma Foundation takes) would pass
        // the comparison: what AuthKit accepts must be RFC 8259 JSON.
        precondition(
            Grammar.accepts(data),
            "AuthKit accepts what is not RFC 8259 JSON: \(String(decoding: data, as: UTF8.self).debugDescription)")
    case (.failure(let failure as JSONParser.Failure), .success):
        // Foundation is the lenient one here (a trailing comma, another
        // encoding); the grammar below says whether the text is JSON.
        precondition(
            failure.reason.contains("deep") || !Grammar.accepts(data),
            "AuthKit refuses JSON that Foundation parses: \(failure) in \(String(decoding: data, as: UTF8.self).debugDescription)"
        )
    case (.failure(let error), .success):
        preconditionFailure("JSONParser threw something other than its Failure: \(error)")
    case (.success(let value), .failure(let error)):
        preconditionFailure(
            "AuthKit accepts what Foundation refuses (\(error)): \(String(decoding: data, as: UTF8.self).debugDescription) as \(value)"
        )
    case (.failure, .failure):
        break
    }
    return 0
}

/// Where JSONSerialization's `reference` first differs from `value` (a path
/// such as `$[3].name` and both sides), or nil when they are the same JSON
/// value: strings compared scalar by scalar (Swift's `==` would equate
/// canonically equivalent ones), numbers by value.
private func difference(_ value: JSONValue, _ reference: Any, at path: String) -> String? {
    let here = "\(path): \(value) vs \(reference)"
    switch value {
    case .null:
        return reference is NSNull ? nil : here
    case .bool(let flag):
        return (reference as? Bool) == flag ? nil : here
    case .integer(let integer):
        guard let number = reference as? NSNumber else { return here }
        // Foundation may have read a large integer through Double.
        return number.int64Value == integer || close(number, Double(integer)) ? nil : here
    case .number(let double):
        guard let number = reference as? NSNumber else { return here }
        return close(number, double) ? nil : here
    case .string(let string):
        guard let text = reference as? String else { return here }
        return Array(text.unicodeScalars) == Array(string.unicodeScalars) ? nil : here
    case .array(let items):
        guard let others = reference as? [Any], others.count == items.count else {
            return "\(path): \(items.count) items vs \(reference)"
        }
        return zip(items, others).enumerated().lazy.compactMap { index, pair in
            difference(pair.0, pair.1, at: "\(path)[\(index)]")
        }.first
    case .object(let members):
        guard let others = reference as? [String: Any], others.count == members.count else {
            return "\(path): \(members.count) members vs \(reference)"
        }
        return members.lazy.compactMap { key, member in
            others[key].map { difference(member, $0, at: "\(path).\(key.debugDescription)") }
                ?? "\(path): no member \(key.debugDescription) in \(reference)"
        }.first
    }
}

/// Whether Foundation's number is `double` as far as a Double goes. Foundation
/// keeps a long number as a Decimal of 38 digits, and its `doubleValue` can be
/// far off for a large exponent (-3.78e112 came out dozens of units in the last
/// place away); its digits, read as a Double, are what JSONParser read.
private func close(_ number: NSNumber, _ double: Double) -> Bool {
    close(number.doubleValue, double) || Double(number.description).map { close($0, double) } == true
}

/// Equal within a few units in the last place (both NaN counts as equal).
private func close(_ a: Double, _ b: Double) -> Bool {
    if a == b || (a.isNaN && b.isNaN) { return true }
    guard a.isFinite, b.isFinite else { return false }
    return abs(a - b) <= 4 * max(a.magnitude, b.magnitude).ulp
}

/// RFC 8259's grammar (§2–§8.2) and nothing else: whether bytes are one JSON
/// text in UTF-8, with JSONParser's two documented choices (surrogate escapes
/// in pairs; `JSONParser.maximumDepth`). Written apart from JSONParser, as an
/// oracle for the inputs where Foundation and JSONParser disagree.
private enum Grammar {
    static func accepts(_ data: Data) -> Bool {
        var reader = Reader(bytes: Array(data))
        reader.whitespace()
        guard reader.value(depth: 0) else { return false }
        reader.whitespace()
        return reader.index == reader.bytes.count
    }

    struct Reader {
        let bytes: [UInt8]
        var index = 0

        var next: UInt8? { index < bytes.count ? bytes[index] : nil }

        mutating func whitespace() {
            while let byte = next, [0x20, 0x09, 0x0A, 0x0D].contains(byte) { index += 1 }
        }

        mutating func literal(_ text: String) -> Bool {
            let expected = Array(text.utf8)
            guard bytes[index...].starts(with: expected) else { return false }
            index += expected.count
            return true
        }

        mutating func value(depth: Int) -> Bool {
            switch next {
            case UInt8(ascii: "{"): return container(close: UInt8(ascii: "}"), depth: depth, member: true)
            case UInt8(ascii: "["): return container(close: UInt8(ascii: "]"), depth: depth, member: false)
            case UInt8(ascii: "\""): return string()
            case UInt8(ascii: "t"): return literal("true")
            case UInt8(ascii: "f"): return literal("false")
            case UInt8(ascii: "n"): return literal("null")
            default: return number()
            }
        }

        mutating func container(close: UInt8, depth: Int, member: Bool) -> Bool {
            guard depth < JSONParser.maximumDepth else { return false }
            index += 1
            whitespace()
            if next == close {
                index += 1
                return true
            }
            while true {
                if member {
                    guard next == UInt8(ascii: "\""), string() else { return false }
                    whitespace()
                    guard next == UInt8(ascii: ":") else { return false }
                    index += 1
                    whitespace()
                }
                guard value(depth: depth + 1) else { return false }
                whitespace()
                if next == close {
                    index += 1
                    return true
                }
                guard next == UInt8(ascii: ",") else { return false }
                index += 1
                whitespace()
            }
        }

        mutating func digits() -> Int {
            let start = index
            while let byte = next, (0x30...0x39).contains(byte) { index += 1 }
            return index - start
        }

        mutating func number() -> Bool {
            if next == UInt8(ascii: "-") { index += 1 }
            if next == UInt8(ascii: "0") { index += 1 } else if digits() == 0 { return false }
            if next == UInt8(ascii: ".") {
                index += 1
                guard digits() > 0 else { return false }
            }
            if next == UInt8(ascii: "e") || next == UInt8(ascii: "E") {
                index += 1
                if next == UInt8(ascii: "+") || next == UInt8(ascii: "-") { index += 1 }
                guard digits() > 0 else { return false }
            }
            return true
        }

        mutating func hex4() -> UInt32? {
            guard index + 4 <= bytes.count,
                let value = UInt32(String(decoding: bytes[index..<index + 4], as: UTF8.self), radix: 16),
                bytes[index..<index + 4].allSatisfy({ $0 != UInt8(ascii: "+") && $0 != UInt8(ascii: "-") })
            else { return nil }
            index += 4
            return value
        }

        mutating func string() -> Bool {
            index += 1
            let start = index
            while let byte = next {
                switch byte {
                case UInt8(ascii: "\""):
                    // The raw bytes between the escapes must be UTF-8.
                    let raw = bytes[start..<index]
                    index += 1
                    return String(validating: raw, as: UTF8.self) != nil
                case UInt8(ascii: "\\"):
                    index += 1
                    guard let escaped = next else { return false }
                    index += 1
                    switch escaped {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"),
                        UInt8(ascii: "f"),
                        UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                        continue
                    case UInt8(ascii: "u"):
                        guard let unit = hex4() else { return false }
                        if (0xDC00...0xDFFF).contains(unit) { return false }
                        if (0xD800...0xDBFF).contains(unit) {
                            guard literal("\\u"), let low = hex4(), (0xDC00...0xDFFF).contains(low) else {
                                return false
                            }
                        }
                    default:
                        return false
                    }
                case 0x00...0x1F:
                    return false
                default:
                    index += 1
                }
            }
            return false
        }
    }
}
