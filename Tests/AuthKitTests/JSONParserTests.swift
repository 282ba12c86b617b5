import Foundation
import Testing

@testable import AuthKit

/// AuthKit's own JSON parser (the token-answer fast path) against RFC 8259
/// and against Foundation's `JSONSerialization` as an independent reader.
@Suite struct JSONParserTests {
    @Test func readsATokenAnswer() throws {
        let value = try JSONValue(
            parsing: Data(
                #" {"access_token":"a\"b","expires_in":3600,"ratio":1.5,"ok":true,"none":null,"scope":["r","w"],"team":{"id":"T1"}} "#
                    .utf8))
        #expect(
            value
                == .object([
                    "access_token": .string(#"a"b"#), "expires_in": .integer(3600), "ratio": .number(1.5),
                    "ok": .bool(true),
                    "none": .null, "scope": .array([.string("r"), .string("w")]),
                    "team": .object(["id": .string("T1")]),
                ]))
    }

    @Test func keepsLargeIntegersExact() throws {
        #expect(try JSONValue(parsing: Data("17841400000000001".utf8)) == .integer(17_841_400_000_000_001))
        #expect(try JSONValue(parsing: Data("-9223372036854775808".utf8)) == .integer(.min))
        // Past Int64: a Double, as JSON allows (RFC 8259 §6).
        #expect(try JSONValue(parsing: Data("9223372036854775808".utf8)) == .number(9_223_372_036_854_775_808))
        #expect(try JSONValue(parsing: Data("1e3".utf8)) == .number(1000))
    }

    @Test func decodesEscapesAndSurrogatePairs() throws {
        let text = #""\u00e9\u20AC\ud83d\ude00\n\t\/\\\b\f\r""#
        #expect(try JSONValue(parsing: Data(text.utf8)) == .string("é€😀\n\t/\\\u{08}\u{0C}\r"))
        #expect(try JSONValue(parsing: Data("\"naïve 東京\"".utf8)) == .string("naïve 東京"))
    }

    @Test(arguments: [
        "", " ", "{", "}", "[1,]", "{\"a\":1,}", "{\"a\" 1}", "{a:1}", "[1 2]", "01", "-", "1.", ".5", "1e", "+1",
        "--1",
        "tru", "nul", "True", "\"abc", "\"a\u{01}b\"", "\"\\x\"", "\"\\u12\"", "\"\\ud800\"", "\"\\udc00\"",
        "\"\\ud800\\u0041\"",
        "{} x", "[] []", "NaN", "Infinity", "1e999", "// c\n{}", "'a'",
    ])
    func refusesWhatRFC8259Refuses(_ text: String) {
        #expect(throws: JSONParser.Failure.self) { try JSONValue(parsing: Data(text.utf8)) }
    }

    /// The white space other readers skip before looking at a body's first
    /// byte (a token answer, a credentials file, discovery metadata) is the
    /// parser's own, byte for byte: no form feed, no vertical tab, no NUL.
    @Test func itsWhitespaceIsTheOneOthersSkip() {
        for byte in UInt8.min...UInt8.max {
            let parses = (try? JSONParser.parse(Data([byte, UInt8(ascii: "1"), byte]))) == .integer(1)
            #expect(JSONParser.isWhitespace(byte) == parses, "byte \(byte)")
        }
        #expect([0x20, 0x09, 0x0A, 0x0D].allSatisfy(JSONParser.isWhitespace))
    }

    /// A file that looks right but does not parse: the failure names what
    /// stands there, visible or not (a byte-order mark, a no-break space, a
    /// typographic quote pasted from a web page, a trailing comma).
    @Test func failuresNameWhatStandsThere() {
        let cases: [(bytes: [UInt8], reason: String)] = [
            (
                [0xEF, 0xBB, 0xBF] + Array(#"{"a":1}"#.utf8),
                "unexpected character: U+FEFF, a byte-order mark: save the file as UTF-8 without one (RFC 8259 §8.1)"
            ),
            (
                Array("{\u{201C}a\u{201D}: 1}".utf8),
                "an object member must start with a string name, not \u{201C} (U+201C, a typographic quote: JSON wants a straight \")"
            ),
            (
                Array("{\"a\":\u{00A0}1}".utf8),
                "unexpected character: U+00A0, a no-break space: JSON allows only ordinary spaces, tabs and line breaks"
            ),
            (Array("{\"a\": \u{200B}1}".utf8), "unexpected character: U+200B, an invisible zero-width character"),
            (Array(#"{"a":1,}"#.utf8), "a comma before '}' (JSON allows no trailing comma)"),
            (Array(#"[1, ]"#.utf8), "a comma before ']' (JSON allows no trailing comma)"),
            (
                Array(#"{'a':1}"#.utf8),
                "an object member must start with a string name, not ' (JSON strings take double quotes)"
            ),
            (Array(#"{"a" 1}"#.utf8), "expected ':' after a member name, not '1'"),
            (Array(#"{"a":1"#.utf8), "expected ',' or '}' in an object, not the end of the text"),
            (Array(#"{"a":1}"#.utf8) + [0x07], "text after the JSON value: U+0007 (a control character)"),
            (Array(#"{"a":"#.utf8) + [0xC3], "unexpected character: a byte that is not UTF-8"),
            // A C1 control (two bytes of UTF-8) is named, not shown raw: it reached terminals.
            (Array(#"{"a":1"#.utf8) + [0xC2, 0x94], "expected ',' or '}' in an object, not U+0094"),
            (
                Array(#"{"a":"x"#.utf8) + [0x1B] + Array(#"[2J"}"#.utf8),
                #"a control character (U+001B) inside a string; write it escaped, \u001B, if it is meant"#
            ),
            (
                Array(#"{"a":"\n"#.utf8) + [0x09] + Array(#""}"#.utf8),
                #"a control character (U+0009) inside a string; write it escaped, \u0009, if it is meant"#
            ),
        ]
        for (bytes, reason) in cases {
            do {
                _ = try JSONParser.parse(Data(bytes))
                Issue.record("accepted \(bytes)")
            } catch let failure as JSONParser.Failure {
                #expect(failure.reason == reason, "\(String(decoding: bytes, as: UTF8.self))")
            } catch {
                Issue.record("\(error)")
            }
        }
    }

    @Test func refusesInvalidUTF8() {
        for bytes: [UInt8] in [
            [0x22, 0xFF, 0x22], [0x22, 0xC3, 0x22], [0x22, 0xED, 0xA0, 0x80, 0x22],
            [0x22, 0x5C, 0x6E, 0xC0, 0xAF, 0x22],
        ] {
            #expect(throws: JSONParser.Failure.self) { try JSONValue(parsing: Data(bytes)) }
        }
    }

    @Test func limitsNesting() throws {
        let fine =
            String(repeating: "[", count: JSONParser.maximumDepth)
            + String(repeating: "]", count: JSONParser.maximumDepth)
        _ = try JSONValue(parsing: Data(fine.utf8))
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        #expect(throws: JSONParser.Failure.self) { try JSONValue(parsing: Data(deep.utf8)) }
        let deepObjects = String(repeating: #"{"a":"#, count: 10_000) + "1" + String(repeating: "}", count: 10_000)
        #expect(throws: JSONParser.Failure.self) { try JSONValue(parsing: Data(deepObjects.utf8)) }
    }

    @Test func aRepeatedMemberKeepsTheLastValue() throws {
        #expect(try JSONValue(parsing: Data(#"{"a":1,"a":2}"#.utf8)) == .object(["a": .integer(2)]))
    }

    /// Where repeated names are refused, the failure names the member's path
    /// and both places; names equal once unescaped are the same name.
    @Test func aRepeatedNameIsRefusedWhereAsked() throws {
        func refusal(_ text: String) -> JSONParser.Failure? {
            do {
                _ = try JSONParser.parse(Data(text.utf8), repeatedNames: .refused)
                return nil
            } catch {
                return error as? JSONParser.Failure
            }
        }
        let cases: [(text: String, field: String, first: String, second: String)] = [
            (#"{"a":1,"b":2,"a":3}"#, "a", #""a":1"#, #""a":3"#),
            (#"{"token":{"url":"x","url":"y"}}"#, "token.url", #""url":"x""#, #""url":"y""#),
            (#"{"scopes":[{"n":1},{"n":1,"n":2}]}"#, "scopes[1].n", #""n":1,"#, #""n":2"#),
            (#"[{"a":1},{"a":1,"a":2}]"#, "[1].a", #""a":1,""#, #""a":2"#),
            (#"{"m":[[{"k":0,"k":0}]]}"#, "m[0][0].k", #""k":0,"#, #""k":0}"#),
            (#"{"token":1,"tok\u0065n":2}"#, "token", #""token""#, #""tok\u0065n""#),
        ]
        for (text, field, first, second) in cases {
            let failure = refusal(text)
            #expect(failure?.repeatedField == field, "\(text)")
            let bytes = Array(text.utf8)
            func offset(of part: String, from start: Int) -> Int? {
                let needle = Array(part.utf8)
                return (start...(bytes.count - needle.count)).first { Array(bytes[$0..<($0 + needle.count)]) == needle }
            }
            // The first occurrence is the first match; the second, the last.
            let firstOffset = offset(of: first, from: 0)
            #expect(
                failure?.firstOffset == firstOffset
                    && failure?.offset == offset(of: second, from: (firstOffset ?? 0) + 1),
                "\(text): \(String(describing: failure))")
            // Read as a token answer is, the same text is accepted.
            #expect(throws: Never.self) { try JSONParser.parse(Data(text.utf8)) }
        }
        #expect(
            refusal(#"{"a":{"b":1},"b":{"a":1},"c":[{"a":1},{"a":2}]}"#) == nil, "a name may recur in other objects")
        // A syntax error stays a syntax error.
        #expect(refusal(#"{"a":1,}"#)?.repeatedField == nil && refusal(#"{"a":1,}"#) != nil)
        // A name with a control character (here a tab and an ESC) is shown,
        // not written raw into the message or the field (Fuzz/run found it).
        let hostile = refusal(#"{"\ty\u001b[31m":1,"\ty\u001b[31m":2}"#)
        #expect(hostile != nil, "the repeated hostile name was taken")
        for text in [hostile?.reason ?? "", hostile?.repeatedField ?? ""] {
            #expect(
                !text.unicodeScalars.contains { $0.properties.generalCategory == .control }, "\(text.debugDescription)")
        }
    }

    /// Every corpus answer: where Foundation reads a JSON text, AuthKit reads
    /// the same values; where Foundation refuses it, so does AuthKit.
    @Test func agreesWithFoundationOnTheCorpus() throws {
        let url = BadInputCorpusTests.corpus.appendingPathComponent("token-responses.json")
        guard case .array(let cases)? = try? JSONValue(parsing: Data(contentsOf: url)) else {
            Issue.record("token-responses.json is not a JSON array")
            return
        }
        var compared = 0
        for entry in cases {
            guard case .object(let fields) = entry, case .string(let body)? = fields["body"] else { continue }
            let data = Data(body.utf8)
            let foundation = try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
            let ours = try? JSONValue(parsing: data)
            #expect((foundation == nil) == (ours == nil), "disagree on \(body.prefix(60))")
            if let foundation, let ours {
                #expect(Self.same(ours, foundation), "different values for \(body.prefix(60))")
            }
            compared += 1
        }
        #expect(compared >= 10)
    }

    static func same(_ value: JSONValue, _ object: Any) -> Bool {
        switch value {
        case .null: return object is NSNull
        case .bool(let flag): return (object as? Bool) == flag
        case .integer(let number): return (object as? NSNumber)?.int64Value == number
        case .number(let number): return (object as? NSNumber)?.doubleValue == number
        case .string(let text): return (object as? String) == text
        case .array(let elements):
            guard let array = object as? [Any], array.count == elements.count else { return false }
            return zip(elements, array).allSatisfy { same($0, $1) }
        case .object(let members):
            guard let dictionary = object as? [String: Any], dictionary.count == members.count else { return false }
            return members.allSatisfy { key, value in dictionary[key].map { same(value, $0) } ?? false }
        }
    }
}
