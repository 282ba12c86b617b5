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
