#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `application/x-www-form-urlencoded` bodies and query strings as ordered
/// name/value pairs.
///
/// Pairs, not a dictionary: order is kept (some servers and the OAuth 1.0a
/// signature care) and a repeated name stays visible, so the redirect parser can
/// reject duplicated parameters (RFC 6749 §3.1: "Request and response parameters
/// MUST NOT be included more than once").
package enum FormURLEncoding {
    /// True when `contentType`'s media type is `application/x-www-form-urlencoded`,
    /// ignoring case and parameters such as `; charset=utf-8` (RFC 9110 §8.3.1).
    /// OAuth 1.0a signs such a body (RFC 5849 §3.4.1.3.1), and only such a body.
    package static func isFormContentType(_ contentType: String?) -> Bool {
        guard let contentType else { return false }
        // As it is nearly always written (and as the signer is given it on
        // every signed request): one comparison, no parse.
        if contentType == "application/x-www-form-urlencoded" { return true }
        return mediaType(ofContentType: contentType) == "application/x-www-form-urlencoded"
    }

    /// Serialises pairs with ``PercentEncoding/encode(_:)`` on both sides of `=`.
    package static func encode(_ pairs: [(String, String)]) -> String {
        let capacity = worstCaseSize(pairs)
        guard capacity > 0 else { return "" }
        return String(unsafeUninitializedCapacity: capacity) { write(pairs, into: $0.baseAddress!) }
    }

    /// ``encode(_:)`` as a request body: the bytes written straight into
    /// the `Data` sent, with no `String` between (which would check the
    /// ASCII it was given is UTF-8, and be copied into `Data` again).
    package static func encodedBody(_ pairs: [(String, String)]) -> Data {
        let capacity = worstCaseSize(pairs)
        guard capacity > 0 else { return Data() }
        // A scratch buffer (on the stack when small), then one copy of what
        // was written: resizing a `Data` after writing into it costs more.
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: capacity) { scratch in
            Data(bytes: scratch.baseAddress!, count: write(pairs, into: scratch.baseAddress!))
        }
    }

    /// One buffer sized for the worst case (every byte becomes %XX), filled
    /// by the encoder directly: no string per name, value and pair.
    private static func worstCaseSize(_ pairs: [(String, String)]) -> Int {
        var capacity = 0
        for (name, value) in pairs { capacity += 3 * (name.utf8.count + value.utf8.count) + 2 }
        return capacity
    }

    private static func write(_ pairs: [(String, String)], into output: UnsafeMutablePointer<UInt8>) -> Int {
        var written = 0
        for (index, (name, value)) in pairs.enumerated() {
            if index > 0 {
                output[written] = UInt8(ascii: "&")
                written += 1
            }
            written += append(name, to: output + written)
            output[written] = UInt8(ascii: "=")
            written += 1
            written += append(value, to: output + written)
        }
        return written
    }

    private static func append(_ text: String, to output: UnsafeMutablePointer<UInt8>) -> Int {
        var text = text
        return text.withUTF8 { PercentEncoding.encode($0, into: output) }
    }

    /// Parses `a=1&b=two+words`; `+` decodes to a space, as in HTML forms.
    ///
    /// Empty segments (`a=1&&b=2`) are skipped; a segment without `=` is a name
    /// with an empty value. Returns `nil` for an undecodable escape.
    package static func decode(_ string: Substring) -> [(String, String)]? {
        var pairs = [(String, String)]()
        for segment in string.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = segment.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = PercentEncoding.decode(String(parts[0]), plusAsSpace: true),
                let value = PercentEncoding.decode(parts.count > 1 ? String(parts[1]) : "", plusAsSpace: true)
            else { return nil }
            pairs.append((name, value))
        }
        return pairs
    }

    /// Convenience overload for a whole `String`.
    package static func decode(_ string: String) -> [(String, String)]? {
        decode(Substring(string))
    }
}

extension URL {
    /// This URL with `pairs` appended to its query, form-encoded, keeping the
    /// query it has (RFC 6749 §3.1: an endpoint's own query "MUST be retained";
    /// RFC 5849 §2.2 authorize URLs likewise). `nil` only for a URL Foundation
    /// cannot take apart.
    package func appendingQuery(_ pairs: [(String, String)]) -> URL? {
        guard !pairs.isEmpty else { return self }
        return queryPrefix.flatMap { URL(string: $0 + FormURLEncoding.encode(pairs)) }
    }

    /// This URL as text, ready for form-encoded pairs to be appended: followed
    /// by `?`, or by `&` after the query it has. A fragment is dropped (an
    /// endpoint has none, RFC 6749 §3.1; it would swallow the query). Worked
    /// out once per endpoint where a query is appended on every call
    /// (``OAuth2Client``'s authorization URL).
    package var queryPrefix: String? {
        guard var components = URLComponents(url: self, resolvingAgainstBaseURL: false) else { return nil }
        components.fragment = nil
        guard let text = components.string else { return nil }
        switch components.percentEncodedQuery {
        case nil: return text + "?"
        case ""?: return text
        default: return text + "&"
        }
    }
}
