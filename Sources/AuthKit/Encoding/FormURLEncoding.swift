/// `application/x-www-form-urlencoded` bodies and query strings as ordered
/// name/value pairs.
///
/// Pairs, not a dictionary: order is kept (some servers and the OAuth 1.0a
/// signature care) and a repeated name stays visible, so the redirect parser can
/// reject duplicated parameters (RFC 6749 §3.1: "Request and response parameters
/// MUST NOT be included more than once").
public enum FormURLEncoding {
    /// Serialises pairs with ``PercentEncoding/encode(_:)`` on both sides of `=`.
    public static func encode(_ pairs: [(String, String)]) -> String {
        pairs.map { PercentEncoding.encode($0.0) + "=" + PercentEncoding.encode($0.1) }
            .joined(separator: "&")
    }

    /// Parses `a=1&b=two+words`; `+` decodes to a space, as in HTML forms.
    ///
    /// Empty segments (`a=1&&b=2`) are skipped; a segment without `=` is a name
    /// with an empty value. Returns `nil` for an undecodable escape.
    public static func decode(_ string: Substring) -> [(String, String)]? {
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
    public static func decode(_ string: String) -> [(String, String)]? {
        decode(Substring(string))
    }
}
