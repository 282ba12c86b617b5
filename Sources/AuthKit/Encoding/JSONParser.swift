#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A strict JSON parser (RFC 8259) that reads UTF-8 bytes straight into
/// ``JSONValue``.
///
/// Every token answer passes through it, so it avoids what makes the
/// `Codable` route slow for an untyped value: `JSONValue(from:)` asks the
/// decoder for each type in turn and each miss throws. Here one pass over the
/// bytes decides the type from the first character.
///
/// Strict where RFC 8259 is: no comments, no trailing commas, no leading
/// zeros or `+`, no bare control characters in strings, UTF-8 only, `\u`
/// escapes with surrogates in pairs (§7, §8.2), nothing but whitespace after
/// the value. Nesting is limited (``maximumDepth``) so a hostile answer
/// cannot exhaust the stack. An integer that fits `Int64` stays exact
/// (§6 lets implementations choose; Instagram's user ids need it); any other
/// number is a `Double`. A member name given twice in one object keeps
/// the last value, or is refused (``RepeatedNames``).
package struct JSONParser {
    /// Deeper than any token answer or descriptor; shallow enough for any stack.
    package static let maximumDepth = 128

    /// What a member name given twice in one object means. RFC 8259 §4: the
    /// names "SHOULD be unique"; when they are not, "the behavior of software
    /// that receives such an object is unpredictable" — Python's `json`, Go's
    /// `encoding/json` and `jq` keep the last value, Foundation's
    /// `JSONDecoder` the first.
    package enum RepeatedNames: Sendable {
        /// Keep the last value, as the peers a token answer is also read by.
        case lastWins
        /// Refuse the text: for files a person reviews (a provider file, the
        /// configuration), where a reviewer or a tool could read the one
        /// value and AuthKit the other.
        case refused
    }

    /// The reason of a number past a `Double`'s range (`1e400`): the JSON is
    /// well formed, so callers say so rather than "malformed".
    package static let numberOutOfRange = "a number out of range"

    /// The reason of a text nested past ``maximumDepth``: the credentials
    /// store, which refuses to write a file it would refuse to read, says so.
    package static let nestedTooDeeply = "nested too deeply"

    package struct Failure: Error, Hashable {
        /// Byte offset where parsing stopped.
        package var offset: Int
        package var reason: String
        /// For a name given twice (``RepeatedNames/refused``): where it is,
        /// as a field path (`token.url`, `scopes[2].name`); `offset` is its
        /// second occurrence and ``firstOffset`` its first.
        package var repeatedField: String?
        package var firstOffset: Int?
    }

    /// Parses `bytes` as one JSON text.
    package static func parse<Bytes: ContiguousBytes>(_ bytes: Bytes, repeatedNames: RepeatedNames = .lastWins) throws
        -> JSONValue
    {
        try bytes.withUnsafeBytes { buffer in
            var parser = JSONParser(buffer, repeatedNames: repeatedNames)
            parser.skipWhitespace()
            let value = try parser.value(depth: 0)
            parser.skipWhitespace()
            guard parser.position == buffer.count else {
                throw parser.failure("text after the JSON value: " + parser.found)
            }
            return value
        }
    }

    private let bytes: UnsafeRawBufferPointer
    private let repeatedNames: RepeatedNames
    private var position = 0

    private init(_ bytes: UnsafeRawBufferPointer, repeatedNames: RepeatedNames) {
        self.bytes = bytes
        self.repeatedNames = repeatedNames
    }

    private func failure(_ reason: String) -> Failure {
        Failure(offset: position, reason: reason)
    }

    /// What stands at the failure, for a person looking at the file: a
    /// character they may not see, or cannot tell from the one JSON wants,
    /// named with its code point (`“ (U+201C, a typographic quote: JSON
    /// wants a straight ")`). Pasted from a web page or saved by an editor,
    /// these are the usual reasons a file that looks right does not parse.
    private var found: String {
        guard let byte = current else { return "the end of the text" }
        switch byte {
        case UInt8(ascii: "'"): return "' (JSON strings take double quotes)"
        case 0x21..<0x7F: return "'\(Character(Unicode.Scalar(byte)))'"
        case 0..<0x80:
            return Unicode.Scalar(byte).codePoint
                + (byte < 0x20 || byte == 0x7F ? " (a control character)" : " (a space)")
        default: break
        }
        // A UTF-8 sequence: decode the one scalar that starts here.
        var iterator = UnsafeRawBufferPointer(rebasing: bytes[position..<min(bytes.count, position + 4)]).makeIterator()
        var decoder = UTF8()
        guard case .scalarValue(let scalar) = decoder.decode(&iterator) else { return "a byte that is not UTF-8" }
        let hint: String
        switch scalar.value {
        case 0xFEFF: hint = ", a byte-order mark: save the file as UTF-8 without one (RFC 8259 §8.1)"
        case 0x00A0, 0x2007, 0x202F: hint = ", a no-break space: JSON allows only ordinary spaces, tabs and line breaks"
        case 0x200B...0x200D, 0x2060: hint = ", an invisible zero-width character"
        case 0x201C, 0x201D, 0x201E, 0x00AB, 0x00BB: hint = ", a typographic quote: JSON wants a straight \""
        case 0x2018, 0x2019: hint = ", a typographic apostrophe: JSON strings take straight double quotes \""
        default: hint = ""
        }
        // A C1 control (U+0080–U+009F) is two bytes of UTF-8 and no format
        // character: shown raw, it reached terminals and logs with the error
        // (the id-token fuzzer, through a key set's "it is not JSON").
        let visible =
            !(scalar.properties.generalCategory == .format || scalar.properties.generalCategory == .control
            || scalar.isTerminalControl || scalar.properties.isWhitespace)
        let code = scalar.codePoint
        return visible ? "\(Character(scalar)) (\(code)\(hint))" : code + hint
    }

    private var current: UInt8? {
        position < bytes.count ? bytes[position] : nil
    }

    /// JSON's insignificant white space (RFC 8259 §2): space, tab, line feed,
    /// carriage return — and nothing else (no form feed, no no-break space).
    /// Callers that look past it to the first byte of a body use this rather
    /// than `Character.isWhitespace`, which is wider than JSON's.
    package static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }

    private mutating func skipWhitespace() {
        while position < bytes.count, Self.isWhitespace(bytes[position]) { position += 1 }
    }

    private mutating func value(depth: Int) throws -> JSONValue {
        guard let byte = current else { throw failure("the text ends where a value should start") }
        switch byte {
        case UInt8(ascii: "{"): return try object(depth: depth + 1)
        case UInt8(ascii: "["): return try array(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"):
            try literal("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try literal("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try literal("null")
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
        default: throw failure("unexpected character: " + found)
        }
    }

    private mutating func literal(_ word: StaticString) throws {
        let count = word.utf8CodeUnitCount
        guard position + count <= bytes.count,
            memcmp(bytes.baseAddress! + position, word.utf8Start, count) == 0
        else {
            throw failure("unknown literal")
        }
        position += count
    }

    private mutating func object(depth: Int) throws -> JSONValue {
        guard depth <= Self.maximumDepth else { throw failure(Self.nestedTooDeeply) }
        position += 1 // {
        var members = [String: JSONValue](minimumCapacity: 8) // a token answer's size
        skipWhitespace()
        if current == UInt8(ascii: "}") {
            position += 1
            return .object(members)
        }
        // Where each name started, kept only when a repeated name is refused.
        var nameOffsets = [String: Int]()
        while true {
            guard current == UInt8(ascii: "\"") else {
                throw failure("an object member must start with a string name, not " + found)
            }
            let nameOffset = position
            let name = try string()
            if repeatedNames == .refused {
                if let first = nameOffsets.updateValue(nameOffset, forKey: name) {
                    // Shown, not quoted raw: a name is the document's text, and
                    // a control character in it (a tab, an escape sequence)
                    // went to the terminal (found by Fuzz/run's id-token harness).
                    let shown = DisplayText.sanitized(name, limit: 60)
                    var repeated = Failure(
                        offset: nameOffset, reason: "the name \"\(shown)\" is given twice in one object")
                    repeated.repeatedField = Self.field(shown, under: nil)
                    repeated.firstOffset = first
                    throw repeated
                }
            }
            skipWhitespace()
            guard current == UInt8(ascii: ":") else { throw failure("expected ':' after a member name, not " + found) }
            position += 1
            skipWhitespace()
            do {
                members[name] = try value(depth: depth)
            } catch var inner as Failure where inner.repeatedField != nil {
                inner.repeatedField = Self.field(name, under: inner.repeatedField)
                throw inner
            }
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","):
                position += 1
                skipWhitespace()
                if current == UInt8(ascii: "}") { throw failure("a comma before '}' (JSON allows no trailing comma)") }
            case UInt8(ascii: "}"):
                position += 1
                return .object(members)
            default:
                throw failure("expected ',' or '}' in an object, not " + found)
            }
        }
    }

    private mutating func array(depth: Int) throws -> JSONValue {
        guard depth <= Self.maximumDepth else { throw failure(Self.nestedTooDeeply) }
        position += 1 // [
        var elements = [JSONValue]()
        skipWhitespace()
        if current == UInt8(ascii: "]") {
            position += 1
            return .array(elements)
        }
        while true {
            do {
                elements.append(try value(depth: depth))
            } catch var inner as Failure where inner.repeatedField != nil {
                inner.repeatedField = Self.field("[\(elements.count)]", under: inner.repeatedField)
                throw inner
            }
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","):
                position += 1
                skipWhitespace()
                if current == UInt8(ascii: "]") { throw failure("a comma before ']' (JSON allows no trailing comma)") }
            case UInt8(ascii: "]"):
                position += 1
                return .array(elements)
            default:
                throw failure("expected ',' or ']' in an array, not " + found)
            }
        }
    }

    /// A member name or an element's `[index]` in front of the path found
    /// inside its value: `token` and `url` make `token.url`; `scopes` and
    /// `[2]` make `scopes[2]`; `[2]` and `name` make `[2].name`.
    private static func field(_ name: String, under inner: String?) -> String {
        guard let inner else { return name }
        return inner.hasPrefix("[") ? name + inner : name + "." + inner
    }

    // MARK: - Strings (RFC 8259 §7)

    private mutating func string() throws -> String {
        position += 1 // opening quote
        let start = position
        // Fast path: no escapes, so the bytes between the quotes are the string.
        while position < bytes.count {
            let byte = bytes[position]
            if byte == UInt8(ascii: "\"") {
                let text = try validatedUTF8(start..<position)
                position += 1
                return text
            }
            if byte == UInt8(ascii: "\\") { break }
            guard byte >= 0x20 else {
                throw failure(
                    "a control character (\(Unicode.Scalar(byte).codePoint)) inside a string; write it escaped, \\u\(Unicode.Scalar(byte).codePoint.dropFirst(2)), if it is meant"
                )
            }
            position += 1
        }
        guard position < bytes.count else { throw failure("a string is not closed") }
        var decoded = [UInt8](UnsafeRawBufferPointer(rebasing: bytes[start..<position]))
        while position < bytes.count {
            let byte = bytes[position]
            switch byte {
            case UInt8(ascii: "\""):
                position += 1
                guard let text = decoded.withUnsafeBytes({ ValidUTF8.string($0) }) else {
                    throw Failure(offset: start, reason: "a string is not valid UTF-8")
                }
                return text
            case UInt8(ascii: "\\"):
                position += 1
                try escape(into: &decoded)
            case ..<0x20:
                throw failure(
                    "a control character (\(Unicode.Scalar(byte).codePoint)) inside a string; write it escaped, \\u\(Unicode.Scalar(byte).codePoint.dropFirst(2)), if it is meant"
                )
            default:
                decoded.append(byte)
                position += 1
            }
        }
        throw failure("a string is not closed")
    }

    private func validatedUTF8(_ range: Range<Int>) throws -> String {
        guard let text = ValidUTF8.string(UnsafeRawBufferPointer(rebasing: bytes[range])) else {
            throw Failure(offset: range.lowerBound, reason: "a string is not valid UTF-8")
        }
        return text
    }

    /// After a backslash: one escape, appended as UTF-8.
    private mutating func escape(into decoded: inout [UInt8]) throws {
        guard let byte = current else { throw failure("a string ends inside an escape") }
        position += 1
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): decoded.append(byte)
        case UInt8(ascii: "b"): decoded.append(0x08)
        case UInt8(ascii: "f"): decoded.append(0x0C)
        case UInt8(ascii: "n"): decoded.append(0x0A)
        case UInt8(ascii: "r"): decoded.append(0x0D)
        case UInt8(ascii: "t"): decoded.append(0x09)
        case UInt8(ascii: "u"):
            var scalar = UInt32(try hexQuad())
            if (0xD800...0xDBFF).contains(scalar) {
                // A high surrogate must be followed by an escaped low one (§7).
                guard position + 1 < bytes.count, bytes[position] == UInt8(ascii: "\\"),
                    bytes[position + 1] == UInt8(ascii: "u")
                else {
                    throw failure("an unpaired surrogate in a \\u escape")
                }
                position += 2
                let low = UInt32(try hexQuad())
                guard (0xDC00...0xDFFF).contains(low) else { throw failure("an unpaired surrogate in a \\u escape") }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            } else if (0xDC00...0xDFFF).contains(scalar) {
                throw failure("an unpaired surrogate in a \\u escape")
            }
            guard let unicode = Unicode.Scalar(scalar) else { throw failure("an invalid \\u escape") }
            decoded.append(contentsOf: UTF8.encode(unicode)!)
        default:
            throw failure("an unknown escape")
        }
    }

    private mutating func hexQuad() throws -> UInt16 {
        guard position + 4 <= bytes.count else { throw failure("a \\u escape needs four hex digits") }
        var value: UInt16 = 0
        for _ in 0..<4 {
            let byte = bytes[position]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw failure("a \\u escape needs four hex digits")
            }
            value = value << 4 | UInt16(digit)
            position += 1
        }
        return value
    }

    // MARK: - Numbers (RFC 8259 §6)

    private mutating func number() throws -> JSONValue {
        let start = position
        if current == UInt8(ascii: "-") { position += 1 }
        guard let first = current, isDigit(first) else { throw failure("a number needs a digit") }
        position += 1
        if first != UInt8(ascii: "0") { skipDigits() }
        var integral = true
        if current == UInt8(ascii: ".") {
            integral = false
            position += 1
            guard let digit = current, isDigit(digit) else { throw failure("a fraction needs a digit") }
            skipDigits()
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            integral = false
            position += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { position += 1 }
            guard let digit = current, isDigit(digit) else { throw failure("an exponent needs a digit") }
            skipDigits()
        }
        if let next = current, isDigit(next) { throw failure("a number may not have a leading zero") }
        let text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
        if integral, let exact = Int64(text) { return .integer(exact) }
        guard let double = Double(text), double.isFinite else {
            throw Failure(offset: start, reason: Self.numberOutOfRange)
        }
        return .number(double)
    }

    private func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }

    private mutating func skipDigits() {
        while let byte = current, isDigit(byte) { position += 1 }
    }
}

extension JSONValue {
    /// Parses a JSON text with ``JSONParser``.
    package init<Bytes: ContiguousBytes>(parsing bytes: Bytes, repeatedNames: JSONParser.RepeatedNames = .lastWins)
        throws
    {
        self = try JSONParser.parse(bytes, repeatedNames: repeatedNames)
    }
}
