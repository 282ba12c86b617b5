import AuthKit

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A URL typed on the command line (`request`, `sign`, `token header`),
/// checked before it is sent or signed.
enum TypedURL {
    /// Why `text` cannot be used as typed, or `nil`. A raw space or control
    /// character would be encoded one way here and another way (or refused)
    /// by the HTTP client and the server, so an OAuth 1.0a signature over it
    /// would not match what is sent.
    ///
    /// A user name or password in the URL (`https://me:pw@host/`) is refused
    /// too (RFC 9110 §4.2.4), and the URL is then not repeated: the HTTP
    /// client would send them as Basic credentials, and with a redirect the
    /// password could travel where the stored credential is kept from.
    static func problem(_ text: String) -> String? {
        if let components = URLComponents(string: text), components.user != nil || components.password != nil {
            return
                "The URL carries a user name or password (user:password@), which authkit does not send (RFC 9110 §4.2.4); remove them."
        }
        // RFC 5849 §3.4.1.2 signs an http or https URL, and only those are sent:
        // `ftp://host/x` was signed, `mailto:…` called "a request with no URL".
        let scheme = text.firstRange(of: "://").map { text[..<$0.lowerBound].lowercased() }
        guard let scheme, scheme == "http" || scheme == "https" else {
            // Text with no scheme at all is not repeated, not even in part:
            // it may be a token pasted where the URL goes (its first ten
            // characters were shown).
            guard scheme != nil else {
                return
                    "The URL given is not an http:// or https:// URL (not repeated: it may be a token pasted in its place); give the request's whole URL, https:// included."
            }
            return
                "'\(shown(text))' is not an http:// or https:// URL; give the request's whole URL, https:// included."
        }
        if text.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value == 0x7F }) {
            return
                "'\(shown(text))' contains a space or control character; encode it (a space is %20) as it will be sent."
        }
        if let bad = badEscape(in: text) {
            // URL re-encoded it as %25…, so a different URL was sent (and,
            // for OAuth 1.0a, signed) than the one typed; `-d` refuses the same.
            return
                "'\(shown(text))' has '\(DisplayText.sanitized(bad, limit: 3))', which is not a percent escape (RFC 3986 §2.1); write %25 for a literal %."
        }
        let (host, port) = authority(of: text)
        if let host, host.unicodeScalars.contains(where: { !$0.isASCII }) {
            // libcurl refused it as "bad/illegal format", a network error; and
            // OAuth 1.0a would sign a host other than the one sent.
            return
                "The host '\(DisplayText.sanitized(host, limit: 80))' is not ASCII; give its ASCII (IDNA) form, 'xn--…', as `idn2 '\(DisplayText.sanitized(host, limit: 80))'` prints it."
        }
        // empty: the default port (RFC 3986 §3.2.3)
        if let port, !port.isEmpty, !(UInt16(port).map { $0 > 0 } ?? false) {
            return "The URL's port \(DisplayText.sanitized(port, limit: 20)) is not a TCP port (1–65535)."
        }
        // A character a URL carries only percent-encoded (`[`, `|`, `"`, a
        // non-ASCII letter in the path or query): Foundation re-encodes the
        // whole component, `%` included (`a%20b` went as `a%2520b`), so
        // another URL than the one typed was sent, and signed.
        if let parsed = URL(string: text), parsed.absoluteString != text {
            return
                "'\(shown(text))' has a character a URL carries only percent-encoded (such as [ ] | \" or a non-ASCII letter); encode it as it will be sent (é is %C3%A9, [ is %5B)."
        }
        // `.` and `..` segments: libcurl and browsers remove them before
        // sending (RFC 3986 §5.2.4), so an OAuth 1.0a signature over the
        // path as typed would not match the one sent.
        let path = text.drop { $0 != "/" }.dropFirst(2).drop { $0 != "/" }.prefix { $0 != "?" && $0 != "#" }
        if path.split(separator: "/", omittingEmptySubsequences: false).contains(where: { $0 == "." || $0 == ".." }) {
            return
                "'\(shown(text))' has a . or .. path segment, which is removed before the request is sent (RFC 3986 §5.2.4); write the path as it is meant."
        }
        return nil
    }

    /// `text` as an error quotes it: without its query and fragment, which
    /// may carry an API key or a token (`?api_key=…`), as every other
    /// message shows a URL (``URL/redactedForLogs``); where the problem is
    /// in them, the message says what it is. A text that is no URL at all
    /// (a token pasted where the URL goes) is not shown.
    static func shown(_ text: String) -> String {
        guard text.contains("://") else { return "(not repeated)" }
        guard let end = text.firstIndex(where: { $0 == "?" || $0 == "#" }) else {
            return DisplayText.sanitized(text, limit: 200)
        }
        return DisplayText.sanitized(String(text[..<end]), limit: 200) + String(text[end]) + "…"
    }

    /// The first `%` in `text` not followed by two hex digits, with what follows it.
    static func badEscape(in text: String) -> String? {
        let bytes = Array(text.utf8)
        for index in bytes.indices where bytes[index] == UInt8(ascii: "%") {
            let digits = bytes[(index + 1)..<min(index + 3, bytes.count)]
            if digits.count < 2
                || !digits.allSatisfy({
                    UInt8(ascii: "0")...UInt8(ascii: "9") ~= $0 || UInt8(ascii: "a")...UInt8(ascii: "f") ~= $0 | 0x20
                })
            {
                return String(decoding: bytes[index..<min(index + 3, bytes.count)], as: UTF8.self)
            }
        }
        return nil
    }

    /// `text` as the URL a command sends to or signs: refused for any
    /// ``problem(_:)``, or without a host.
    static func url(_ text: String) throws -> URL {
        if let problem = problem(text) { throw CLIError(problem) }
        guard let url = URL(string: text), url.host != nil else {
            throw CLIError("'\(shown(text))' is not an absolute http(s) URL.")
        }
        return url
    }

    /// The host and the port as written (nil when absent), read off the text
    /// itself: `URL` would percent-encode a non-ASCII host and refuse a port
    /// past 65535 without saying why.
    static func authority(of text: String) -> (host: String?, port: String?) {
        guard let schemeEnd = text.firstRange(of: "://") else { return (nil, nil) }
        var authority = text[schemeEnd.upperBound...].prefix { !"/?#".contains($0) }
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        if authority.hasPrefix("[") {
            // An IPv6 literal: its colons are not the port's.
            guard let close = authority.firstIndex(of: "]") else { return (String(authority), nil) }
            let rest = authority[authority.index(after: close)...]
            return (String(authority[...close]), rest.hasPrefix(":") ? String(rest.dropFirst()) : nil)
        }
        guard let colon = authority.lastIndex(of: ":") else { return (String(authority), nil) }
        return (String(authority[..<colon]), String(authority[authority.index(after: colon)...]))
    }
}
