#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What makes a redirect URI unusable before any request is built, one rule
/// set for every way one arrives: `AuthorizationOptions.redirectURI`,
/// ``ClientSettings/redirectURI`` (and so `AUTHKIT_<ID>_REDIRECT_URI` and
/// `config.json`), and the command line's `--redirect-uri`.
///
/// Each would otherwise fail only at the provider, after the user approved,
/// or worse, silently: a configured value `URL(string:)` cannot parse
/// (`http://127.0.0.1:8765x/callback`) left the descriptor's default in its
/// place, and a `%` that begins no escape was sent re-encoded as `%25`.
package enum RedirectURIRules {
    /// What is wrong with `text`, as a phrase that follows "the redirect URI"
    /// and ends with what to do; `nil` when nothing is.
    package static func problem(_ text: String) -> String? {
        guard let url = URL(string: text), let scheme = url.scheme, !scheme.isEmpty else {
            return
                "is not an absolute URI such as http://127.0.0.1:8765/callback (RFC 3986 §4.3: a scheme, then the rest); check the port and the characters after the scheme"
        }
        // RFC 6749 §3.1.2: "The endpoint URI MUST NOT include a fragment
        // component"; the answer's parameters would be read from the wrong part.
        if url.fragment != nil || text.contains("#") {
            return "has a fragment (#…), which a redirect URI must not have (RFC 6749 §3.1.2); remove it"
        }
        // A user name or password (user:pw@) serves nothing (RFC 9110 §4.2.4
        // deprecates them in http URIs), would not match the registered URI,
        // and a password would travel in the authorization URL.
        if url.user != nil || url.password != nil {
            return
                "carries a user name or password (user:password@), which a redirect URI has no use for (RFC 9110 §4.2.4); remove them"
        }
        if let port = url.port, !(1...65535).contains(port) {
            return "names port \(port), which is not a TCP port (1–65535); give the port the provider has registered"
        }
        if let escape = badEscape(in: text) {
            return
                "holds '\(escape)', a '%' that begins no escape such as %2F (RFC 3986 §2.1); write a '%' itself as %25"
        }
        // Foundation would send a space as %20: a URI that matches none registered.
        if text.unicodeScalars.contains(" ") {
            return "holds a space, which a URI cannot (RFC 3986 §2); write it as %20 if the registered URI has one"
        }
        return nil
    }

    /// The first `%` in `text` not followed by two hex digits, with what follows it.
    private static func badEscape(in text: String) -> String? {
        let bytes = Array(text.utf8)
        for (index, byte) in bytes.enumerated() where byte == UInt8(ascii: "%") {
            let next = bytes[(index + 1)...].prefix(2)
            if next.count < 2 || !next.allSatisfy({ $0.isHexDigit }) {
                return "%" + String(decoding: next.prefix { $0 >= 0x21 && $0 < 0x7F }, as: UTF8.self)
            }
        }
        return nil
    }
}

extension UInt8 {
    fileprivate var isHexDigit: Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(self) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(self)
            || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(self)
    }
}
