import Foundation
import HTTPTypes
import Testing

@testable import AuthKit

/// The head of an answer as the default transport reads it from libcurl's
/// header lines (``ResponseHeadReader``); `TransportContractTests` plays the
/// same through the transport.
@Suite struct ResponseHeadReaderTests {
    /// Reads each of `lines` (given without its CRLF) and returns the last outcome.
    @discardableResult
    static func read(_ lines: [String], into reader: inout ResponseHeadReader) -> ResponseHeadReader.Outcome {
        var outcome = ResponseHeadReader.Outcome.reading
        for line in lines {
            outcome = Data((line + "\r\n").utf8).withUnsafeBytes { reader.read($0) }
        }
        return outcome
    }

    /// The status code is the three digits after the version and one space
    /// (RFC 9112 §4), read in place.
    @Test func aStatusLinesCodeIsThreeDigits() {
        let codes: [(String, Int?)] = [
            ("HTTP/1.1 200 OK", 200), ("HTTP/1.1 404", 404), ("HTTP/2 999 x y", 999), ("HTTP/1.1 099 Low", nil),
            ("HTTP/1.1 2000 OK", nil), ("HTTP/1.1  200 OK", nil), ("HTTP/1.1 20 OK", nil), ("HTTP/1.1 2x0 OK", nil),
            ("HTTP/1.1", nil), ("HTTP/1.1 ", nil), ("HTTP/1.1 200\tOK", nil),
        ]
        for (line, code) in codes {
            #expect(ResponseHeadReader.statusCode(inStatusLine: line) == code, "\(line)")
        }
    }

    /// A line shaped as a status line is one only as a head's first line:
    /// after an interim head's blank line it starts the final head; inside
    /// a head it is a line that is no field, passed over, and the fields
    /// before it are kept and checked (here a length beside chunked).
    @Test func onlyAHeadsFirstLineIsAStatusLine() {
        var interim = ResponseHeadReader()
        let ended = Self.read(
            ["HTTP/1.1 100 Continue", "X-Interim: 1", "", "HTTP/1.1 200 OK", "Content-Length: 2", ""], into: &interim)
        #expect(ended == .ended && interim.status == 200)
        #expect(interim.fields[.contentLength] == "2" && interim.fields[HTTPField.Name("X-Interim")!] == nil)

        var inside = ResponseHeadReader()
        let refused = Self.read(
            ["HTTP/1.1 200 OK", "Content-Length: 2", "Transfer-Encoding: chunked", "HTTP/x 200 a: b", ""],
            into: &inside)
        guard case .refused(let reason) = refused else {
            Issue.record("a status-shaped line inside a head ended with \(refused)")
            return
        }
        #expect(reason.contains("both a Content-Length and a Transfer-Encoding"), "\(reason)")
        #expect(inside.status == 200 && inside.fields[.contentLength] == "2")

        // A line that is no field, alone: passed over, the head read on.
        var stray = ResponseHeadReader()
        let ended2 = Self.read(
            ["HTTP/1.1 200 OK", "no colon here", "Bad Name : x", "Content-Length: 2", ""], into: &stray)
        #expect(ended2 == .ended && stray.fields.count == 1 && stray.fields[.contentLength] == "2")
    }

    /// A field folded onto 30,000 lines (obs-fold, RFC 9112 §5.2) comes back
    /// as one value, its parts joined by spaces, and that value is written
    /// once: written again at each line, each write checking the whole
    /// value, the work grew with the square of the lines (32,000 took 18 s).
    @Test func aFieldFoldedOntoManyLinesIsJoinedOnce() {
        let parts = (0..<30_000).map { " p\($0 % 10)" }
        var reader = ResponseHeadReader()
        let outcome = Self.read(
            ["HTTP/1.1 401 Unauthorized", #"WWW-Authenticate: Bearer realm="api","#] + parts
                + [" ", "X-After: 1", "Content-Length: 2", ""],
            into: &reader)
        #expect(outcome == .ended)
        #expect(reader.fields[.wwwAuthenticate] == #"Bearer realm="api","# + parts.joined())
        #expect(reader.fields[HTTPField.Name("X-After")!] == "1" && reader.fields[.contentLength] == "2")
        #expect(reader.foldsJoined == 1, "the value was rewritten \(reader.foldsJoined) times")
    }

    /// A `Content-Length` is digits (RFC 9110 §8.6), each of a list the same
    /// length: `+2`, `0x2`, `2 2` and an empty one are refused, where
    /// libcurl read a length of its own from them; `2, 2` is one length.
    @Test func aLengthIsDigitsOnly() {
        for (value, taken) in [
            ("2", true), ("2, 2", true), ("2,2,", true), ("002", true), ("-2", false), ("+2", false),
            ("0x2", false), ("2 2", false), ("", false), ("2, 3", false), (" , ", false),
        ] {
            var reader = ResponseHeadReader()
            let outcome = Self.read(["HTTP/1.1 200 OK", "Content-Length: \(value)", ""], into: &reader)
            #expect((outcome == .ended) == taken, "Content-Length: \(value) ended with \(outcome)")
        }
    }

    /// A line of ASCII bytes (every real answer's) is read on its bytes
    /// (``ResponseHeadReader/readASCII(_:first:)``), any other as decoded
    /// text; the two read every ASCII head alike. 3,000 heads of lines made
    /// of the bytes that decide (spaces, tabs, vertical tabs, CR inside a
    /// line, colons, folds, blank lines, status-shaped lines), each line
    /// read both ways, compared after each: outcome, status, every field.
    @Test func asciiLinesReadOnTheirBytesAsTheyReadAsText() {
        var random = SplitMix64(seed: 0x5EED_4EAD)
        let pieces = [
            " ", "\t", "\u{0B}", "\u{0C}", "\r", ":", ": ", "a", "X-Y", "Content-Length", "2", "Bad Name", "\"q\"",
            "HTTP/1.1 200 OK",
            "HTTP/1.1 100 Continue", "=", ",", "-", "/",
        ]
        let endings = ["\r\n", "\n", "", "\r\r\n"]
        for head in 0..<3_000 {
            var bytesWise = ResponseHeadReader()
            var textWise = ResponseHeadReader()
            for index in 0..<Int(random.next() % 8 + 1) {
                var line = ""
                if index == 0, random.next() % 2 == 0 { line = "HTTP/1.1 \(100 + random.next() % 300) x" }
                for _ in 0..<Int(random.next() % 6) { line += pieces[Int(random.next() % UInt64(pieces.count))] }
                line += endings[Int(random.next() % UInt64(endings.count))]
                let bytes = Array(line.utf8)
                var end = bytes.count
                while end > 0, bytes[end - 1] == UInt8(ascii: "\n") || bytes[end - 1] == UInt8(ascii: "\r") { end -= 1 }
                let viaBytes = bytes.withUnsafeBytes { bytesWise.read($0) }
                let viaText = textWise.readText(String(decoding: bytes[..<end], as: UTF8.self), first: bytes.first)
                let same =
                    viaBytes == viaText && bytesWise.status == textWise.status
                    && bytesWise.fields == textWise.fields && bytesWise.foldsJoined == textWise.foldsJoined
                #expect(same, "head \(head), line \(index) \(line.debugDescription): \(viaBytes) against \(viaText)")
                if !same { return }
            }
        }
    }
}

/// A seeded generator (SplitMix64), so a failing head can be read again.
private struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
