import HTTPTypes
import Testing

@testable import AuthKit

/// Whether an answer's head frames its body beyond doubt
/// (``HTTPFields/framingProblem``, RFC 9110 §8.6 and RFC 9112 §6.3), read
/// field by field in place; `TransportContractTests` plays the refusals
/// through every transport.
@Suite struct ResponseFramingTests {
    static func problem(lengths: [String], chunked: Bool = false) -> String? {
        var fields = HTTPFields()
        for length in lengths { fields.append(HTTPField(name: .contentLength, value: length)) }
        if chunked { fields[.transferEncoding] = "chunked" }
        return fields.framingProblem
    }

    @Test func oneLengthHoweverListedIsOneLength() {
        for lengths in [[], ["2"], ["2, 2"], ["2", "2"], [",2,"], [" 2 "], ["2,,2", " 2"], ["\u{A0}2\t"]] {
            #expect(Self.problem(lengths: lengths) == nil, "\(lengths)")
        }
    }

    @Test func lengthsThatDifferAreCounted() {
        #expect(Self.problem(lengths: ["2", "3"])?.contains("2 different Content-Lengths") == true)
        #expect(Self.problem(lengths: ["2, 3", "4", "3"])?.contains("3 different Content-Lengths") == true)
        #expect(Self.problem(lengths: ["02", "2"])?.contains("2 different Content-Lengths") == true)
    }

    @Test func aLengthThatIsNoNumberIsRefused() {
        for lengths in [[""], [","], [" , "], ["x"], ["2, x"], ["x, 2"], ["2", "+2"], ["2", "3", "2 2"], ["0x2"]] {
            #expect(Self.problem(lengths: lengths)?.contains("not a number") == true, "\(lengths)")
        }
    }

    @Test func aLengthBesideATransferEncodingIsRefused() {
        let both = Self.problem(lengths: ["2"], chunked: true)
        #expect(both?.contains("both a Content-Length and a Transfer-Encoding") == true)
        #expect(Self.problem(lengths: [], chunked: true) == nil)
    }
}
