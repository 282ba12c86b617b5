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

    @Test func formPairsKeepOrderAndDuplicates() throws {
        let pairs = try #require(FormURLEncoding.decode("b=2&a=1&b=3&flag"))
        #expect(pairs.map(\.0) == ["b", "a", "b", "flag"])
        #expect(pairs.map(\.1) == ["2", "1", "3", ""])
    }
}

@Suite struct UnreservedSetTests {
    /// The bitmap agrees with RFC 3986 §2.3 for every byte.
    @Test func everyByte() {
        for byte in 0...255 {
            let scalar = Unicode.Scalar(UInt8(byte))
            let expected = (byte < 128) && (("A"..."Z").contains(scalar) || ("a"..."z").contains(scalar)
                || ("0"..."9").contains(scalar) || "-._~".unicodeScalars.contains(scalar))
            #expect(PercentEncoding.isUnreserved(UInt8(byte)) == expected, "byte \(byte)")
        }
    }
}

@Suite struct ReencodingTests {
    /// Encoding already-encoded text with the shortcut equals encoding it again in full.
    @Test(arguments: ["Ladies + Gentlemen", "a=b&c", "☃ %41 ~._-", "", "100%"])
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
