import Foundation
import Testing

@testable import AuthKit

/// `JSONText` writes what DPoP proofs carry; Foundation's parser (another
/// implementation) and AuthKit's own must read back exactly what was written.
struct JSONTextTests {
    @Test(arguments: [
        "", "plain", #"a "quoted" word"#, #"back\slash"#, "line\nbreak\r\ttab", "\u{0}\u{1}\u{1F}\u{7F}",
        "é ü 日本 🔑", "https://api.example.com/v1/items", "</script>",
    ])
    func stringsReadBackAsWritten(_ value: String) throws {
        var json = JSONText()
        json.beginObject()
        json.member("value", value)
        json.member("absent", nil)
        json.member("n")
        json.integer(-1_700_000_000)
        json.member("yes")
        json.boolean(true)
        json.member("nothing")
        json.null()
        json.endObject()
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.bytes)) as? [String: Any])
        #expect(object["value"] as? String == value)
        #expect(object["absent"] == nil)
        #expect((object["n"] as? NSNumber)?.intValue == -1_700_000_000)
        #expect(object["yes"] as? Bool == true)
        #expect(object["nothing"] is NSNull)
        #expect(object.count == 4)
        guard case .object(let parsed) = try JSONParser.parse(json.bytes) else {
            Issue.record("not an object")
            return
        }
        #expect(parsed["value"] == .string(value))
        #expect(parsed["n"] == .integer(-1_700_000_000))
    }

    @Test func controlCharactersAreEscapedNotWrittenRaw() {
        var json = JSONText()
        json.string("a\u{1}b\nc")
        #expect(String(decoding: json.bytes, as: UTF8.self) == #""a\u0001b\nc""#)
    }
}
