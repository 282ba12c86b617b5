#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Identifiers the RFCs compare as identical strings: an issuer (RFC 8414
/// §3.3, RFC 9207 §2.4), `state` (RFC 6749 §10.12), a client id, a redirect
/// URI (RFC 6749 §3.1.2, RFC 3986 §6.2.1's simple string comparison).
///
/// Swift's `==` on `String` compares by canonical equivalence, so it took
/// `…/K` (U+212A KELVIN SIGN) for `…/K`, `e` + U+0301 for `é`, and U+037E
/// for `;`: another byte sequence, and so another identifier to every server
/// and every other client. These compare UTF-8 code units, nothing else.
package enum ExactText {
    /// Whether `a` and `b` are the same bytes: compared as two buffers
    /// (their lengths first), not a code unit at a time through
    /// `String.UTF8View`'s iterator, which cost a refresh its merge key's
    /// comparison several times over; by `memcmp`, not by the buffers'
    /// `elementsEqual`, which still went a byte at a time (a fortieth of
    /// an OAuth 1.0a signature, comparing the token secret with the cached
    /// key's).
    @inlinable
    package static func same(_ a: String, _ b: String) -> Bool {
        guard a.utf8.count == b.utf8.count else { return false }
        var (a, b) = (a, b)
        return a.withUTF8 { x in
            b.withUTF8 { y in x.isEmpty || memcmp(x.baseAddress!, y.baseAddress!, x.count) == 0 }
        }
    }

    /// Whether `a` and `b` are the same bytes once ASCII letters are
    /// lowercased: for a URL's scheme and host (RFC 3986 §6.2.2.1), which
    /// compare case-insensitively, and nothing beyond ASCII folded.
    package static func sameIgnoringASCIICase(_ a: String, _ b: String) -> Bool {
        func fold(_ byte: UInt8) -> UInt8 { (0x41...0x5A).contains(byte) ? byte | 0x20 : byte }
        return a.utf8.lazy.map(fold).elementsEqual(b.utf8.lazy.map(fold))
    }
}
