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
    /// A `Content-Length` beside a `Transfer-Encoding`: RFC 9112 §6.3 has the
    /// encoding win, and says such a message "ought to be handled as an
    /// error" (it is how responses are smuggled past a reader that goes by
    /// the length). libcurl went by the encoding and kept the connection.
    package var framingProblem: String? {
        let lengths = Set(self[values: .contentLength].flatMap { $0.split(separator: ",") }.map { $0.trimmingSpaces() })
        if lengths.count > 1 {
            return
                "the answer gives \(lengths.count) different Content-Lengths, so where its body ends cannot be known; it was refused"
        }
        if !lengths.isEmpty, self[.transferEncoding] != nil {
            return
                "the answer gives both a Content-Length and a Transfer-Encoding, so readers would disagree on where its body ends (RFC 9112 §6.3); it was refused"
        }
        return nil
    }
}
