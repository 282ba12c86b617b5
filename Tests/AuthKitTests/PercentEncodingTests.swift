import Foundation
import Testing

@testable import AuthKit

@Suite struct PercentEncodingTests {
    /// security.md's table (RFC 5849 §3.6 encoding).
    @Test(arguments: [
        ("Ladies + Gentlemen", "Ladies%20%2B%20Gentlemen"),
        ("An encoded string!", "An%20encoded%20string%21"),
        ("Dogs, Cats & Mice", "Dogs%2C%20Cats%20%26%20Mice"),
        ("☃", "%E2%98%83"),
        ("AZaz09-._~", "AZaz09-._~"),
    ])
    func encodesPerRFC5849(input: String, expected: String) {
        #expect(PercentEncoding.encode(input) == expected)
    }

    @Test func decodesWhatItEncodes() {
        let samples = ["a+b&c=d e", "ünïcødé ☃", "%41", "100%", ""]
        for sample in samples {
            #expect(PercentEncoding.decode(PercentEncoding.encode(sample)) == sample)
        }
    }

    @Test func formDecodingReadsPlusAsSpace() {
        #expect(PercentEncoding.decode("a+b", plusAsSpace: true) == "a b")
        #expect(PercentEncoding.decode("a+b", plusAsSpace: false) == "a+b")
    }

    @Test func rejectsMalformedEscapes() {
        #expect(PercentEncoding.decode("%4") == nil)
        #expect(PercentEncoding.decode("%zz") == nil)
        #expect(PercentEncoding.decode("%FF") == nil) // not UTF-8
    }

    /// A token request's body is written straight into `Data`: byte for
    /// byte the text ``FormURLEncoding/encode(_:)`` gives, for any pairs.
    @Test func aBodyIsTheEncodedText() {
        let cases: [[(String, String)]] = [
            [], [("", "")], [("grant_type", "refresh_token"), ("refresh_token", "r/1+2=3&4")],
            [("name", "☃ %41 ~._-"), ("empty", ""), ("b", "two words\n")],
            [("long", String(repeating: "é&", count: 5_000))],
        ]
        for pairs in cases {
            #expect(FormURLEncoding.encodedBody(pairs) == Data(FormURLEncoding.encode(pairs).utf8), "\(pairs.map(\.0))")
        }
    }

    @Test func formPairsKeepOrderAndDuplicates() throws {
        let pairs = try #require(FormURLEncoding.decode("b=2&a=1&b=3&flag"))
        #expect(pairs.map(\.0) == ["b", "a", "b", "flag"])
        #expect(pairs.map(\.1) == ["2", "1", "3", ""])
    }
}

@Suite struct UnreservedSetTests {
    /// The table agrees with RFC 3986 §2.3 for every byte, and has one entry per byte value.
    @Test func everyByte() {
        #expect(PercentEncoding.unreservedTable.utf8CodeUnitCount == 256)
        for byte in 0...255 {
            let scalar = Unicode.Scalar(UInt8(byte))
            let expected =
                (byte < 128)
                && (("A"..."Z").contains(scalar) || ("a"..."z").contains(scalar)
                    || ("0"..."9").contains(scalar) || "-._~".unicodeScalars.contains(scalar))
            #expect(PercentEncoding.isUnreserved(UInt8(byte)) == expected, "byte \(byte)")
        }
    }
}

@Suite struct ReencodingTests {
    /// Encoding already-encoded text with the shortcut equals encoding it again in full.
    @Test(arguments: [
        "Ladies + Gentlemen", "a=b&c", "☃ %41 ~._-", "", "100%", "abcdefgh%ijklmnopq%%%%%%%%rstuvwxyz0123456789-._~",
        String(repeating: "☃x", count: 50), String(repeating: "abcdefghijklmnop", count: 9) + "%",
    ])
    func shortcutMatchesFullEncoding(text: String) {
        var once = PercentEncoding.encode(text)
        let twice = PercentEncoding.encode(once)
        let shortcut = once.withUTF8 { input in
            String(unsafeUninitializedCapacity: max(input.count * 3, 1)) { output in
                PercentEncoding.encode(alreadyEncoded: input, into: output.baseAddress!)
            }
        }
        #expect(shortcut == twice)
    }
}

@Suite struct FormReencodingTests {
    /// One pass equals decode-then-encode for valid input, and keeps malformed escapes literally.
    @Test(arguments: [
        ("a+b%2c~", "a%20b%2C~"),
        (
            "Hello%20Ladies%20%2B%20Gentlemen%2C%20a%20signed%20OAuth%20request%21",
            "Hello%20Ladies%20%2B%20Gentlemen%2C%20a%20signed%20OAuth%20request%21"
        ),
        ("%E2%98%83", "%E2%98%83"),
        ("%e2%98%83", "%E2%98%83"),
        ("%zz%41%4", "%25zzA%254"),
        ("", ""),
    ])
    func reencodes(input: String, expected: String) {
        var input = input
        let output = input.withUTF8 { bytes in
            String(unsafeUninitializedCapacity: max(bytes.count * 3, 1)) { out in
                PercentEncoding.reencode(formEncoded: bytes, into: out.baseAddress!)
            }
        }
        #expect(output == expected)
        if let decoded = PercentEncoding.decode(input, plusAsSpace: true) {
            #expect(output == PercentEncoding.encode(decoded))
        }
    }
}

/// ``ExactText/same(_:_:)``: the bytes, all of them, and nothing else.
@Suite struct ExactTextTests {
    @Test(arguments: [
        ("", "", true),
        ("https://issuer.example", "https://issuer.example", true),
        ("https://issuer.example", "https://issuer.exampl", false),
        ("https://issuer.example/a", "https://issuer.example/b", false), // the last byte alone differs
        ("xhttps://issuer.example", "yhttps://issuer.example", false), // the first byte alone differs
        ("…/\u{212A}", "…/K", false), // KELVIN SIGN: canonically equivalent to K, other bytes
        ("caf\u{E9}", "cafe\u{301}", false), // é precomposed and decomposed
        ("", "a", false),
    ])
    func comparesUTF8CodeUnits(a: String, b: String, same: Bool) {
        #expect(ExactText.same(a, b) == same)
        #expect(ExactText.same(b, a) == same)
    }

    /// Past the first bytes: a kilobyte that differs in its last byte
    /// alone, and copies made from a slice of it.
    @Test func longStringsAndCopiesCompareByAllTheirBytes() {
        let long = String(repeating: "0123456789abcdef", count: 64)
        var other = long
        other.removeLast()
        other.append("g")
        #expect(!ExactText.same(long, other))
        #expect(ExactText.same(long, String(long.dropFirst(0))))
        #expect(ExactText.same(String(Substring(long)[...]), long))
    }
}

/// `allUTF8`: every code unit tested, from a string's storage or a slice's.
@Suite struct AllUTF8Tests {
    let visible: (UInt8) -> Bool = { (0x21...0x7E).contains($0) }

    @Test func everyCodeUnitIsTested() {
        #expect("".allUTF8(visible))
        #expect("abc-_.~".allUTF8(visible))
        #expect(!"abc\n".allUTF8(visible)) // the last alone fails
        #expect(!"\u{7F}abc".allUTF8(visible)) // the first alone fails
        #expect(!"caf\u{E9}".allUTF8(visible)) // both bytes of é are tested, neither is ASCII
        var seen: [UInt8] = []
        _ = "a\u{E9}".allUTF8 { byte in
            seen.append(byte)
            return true
        }
        #expect(seen == [0x61, 0xC3, 0xA9])
    }

    @Test func aSliceIsTestedWithinItsBounds() {
        let text = "\nvisible\n"
        let inner = text.dropFirst().dropLast()
        #expect(inner.allUTF8(visible))
        #expect(!text.dropFirst().allUTF8(visible))
    }
}
