import HTTPTypes

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension HTTPFields {
    /// Why a response head's framing cannot be trusted, or nil.
    ///
    /// Two different `Content-Length`s: which one ends the body cannot be
    /// known, and what follows the shorter body would be read as the next
    /// answer on the connection. RFC 9112 §6.3 makes that an unrecoverable
    /// error; libcurl (and so URLSession on Linux) reads the body by one of
    /// them, so the transports check the head themselves. The same length
    /// repeated, or listed twice in one field, is one length (RFC 9110 §8.6).
    ///
    /// A `Content-Length` that is not digits (RFC 9110 §8.6: `Content-Length
    /// = 1*DIGIT`): `+5`, `0x5`, `5 6` and an empty one were taken, libcurl
    /// reading a length of its own from them (`0x5` as 0, `5 6` as 5), so
    /// the body ended where a reader that refuses them could not say.
    ///
    /// A `Content-Length` beside a `Transfer-Encoding`: RFC 9112 §6.3 has the
    /// encoding win, and says such a message "ought to be handled as an
    /// error" (it is how responses are smuggled past a reader that goes by
    /// the length). libcurl went by the encoding and kept the connection.
    package var framingProblem: String? {
        // Read in place: every answer is checked, and lists and a set made
        // for it were five allocations a request (counted). A set is made
        // only once two lengths differ, to say how many there are.
        var length: Substring?
        var differing: Set<Substring>?
        for field in self where field.name == .contentLength {
            let value = Substring(field.value)
            var listed = false
            var numeric = true
            var start = value.startIndex
            while true {
                let end = value[start...].firstIndex(of: ",") ?? value.endIndex
                // A list of the same length is one length (RFC 9110 §8.6),
                // and empty list elements are nothing (§5.6.1).
                let element = value[start..<end].slicedTrimmingSpaces()
                if !element.isEmpty {
                    guard element.allUTF8({ $0 >= 0x30 && $0 <= 0x39 }) else {
                        numeric = false
                        break
                    }
                    listed = true
                    if let first = length {
                        if differing != nil {
                            differing!.insert(element)
                        } else if first != element {
                            differing = [first, element]
                        }
                    } else {
                        length = element
                    }
                }
                guard end != value.endIndex else { break }
                start = value.index(after: end)
            }
            guard listed, numeric else {
                // Not quoted: the value is the server's.
                return
                    "the answer gives a Content-Length that is not a number (RFC 9110 §8.6: digits only), so where its body ends cannot be known; it was refused"
            }
        }
        let lengths = differing?.count ?? (length == nil ? 0 : 1)
        if lengths > 1 {
            return
                "the answer gives \(lengths) different Content-Lengths, so where its body ends cannot be known; it was refused"
        }
        if lengths > 0, self[.transferEncoding] != nil {
            return
                "the answer gives both a Content-Length and a Transfer-Encoding, so readers would disagree on where its body ends (RFC 9112 §6.3); it was refused"
        }
        return nil
    }
}
