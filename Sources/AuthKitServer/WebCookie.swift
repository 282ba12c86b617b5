import AuthKit
import HTTPTypes

/// A cookie the sign-in sets or clears, framework-neutral: an adapter
/// (``AuthKitHummingbird``, or an app's own for Vapor) turns it into its
/// framework's cookie.
///
/// Every cookie AuthKit sets is `HttpOnly` (no script reads it), `SameSite=Lax`
/// (sent on the provider's top-level redirect back, not on cross-site
/// posts), `Path=/`, and `Secure` unless the site is plain `http` on a
/// loopback address, where browsers drop `Secure` cookies.
package struct WebCookie: Sendable, Hashable {
    package var name: String
    /// Empty when the cookie is cleared.
    package var value: String
    /// Seconds to live; 0 clears it.
    package var maxAge: Int
    package var secure: Bool
    package var httpOnly: Bool { true }
    package var sameSite: String { "Lax" }
    package var path: String { "/" }

    package init(name: String, value: String, maxAge: Int, secure: Bool) {
        self.name = name
        self.value = value
        self.maxAge = maxAge
        self.secure = secure
    }

    /// The `Set-Cookie` field value (RFC 6265 §4.1).
    package var headerValue: String {
        var text = "\(name)=\(value); Path=\(path); Max-Age=\(maxAge); HttpOnly; SameSite=\(sameSite)"
        if secure { text += "; Secure" }
        return text
    }

    /// The value of the cookie `name` in a request's `Cookie` fields, read
    /// as RFC 6265 §5.4 sends them: bytes split at `;`, only spaces and tabs
    /// trimmed, names compared byte for byte. Use it, not a framework's
    /// cookie parser, for the cookies ``WebSignIn`` reads.
    ///
    /// A framework that trims `Character.isWhitespace` from names (Hummingbird,
    /// Vapor) read `\u{2000}__Host-authkit_signin` as `__Host-authkit_signin`;
    /// to the browser it is another name, without the prefix, so a sibling
    /// subdomain or a plain-http answer could set it, and plant a binding
    /// (login CSRF) or a session. Here such a name is another cookie, and
    /// ignored (voiding ours for it would let the same attacker sign the
    /// user out for good). `nil` when the exact name is there twice: which
    /// one the browser meant cannot be told. Bytes, not characters: a value
    /// ending in a "prepend" code point (U+0600) joins the `;` after it into
    /// one character, and hid the next cookie.
    package static func value(named name: String, inCookieFields fields: [String]) -> String? {
        let wanted = Array(name.utf8)
        let semicolon = UInt8(ascii: ";")
        let equals = UInt8(ascii: "=")
        func isBlank(_ byte: UInt8) -> Bool { byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        func trimmed(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
            var bytes = bytes.drop(while: isBlank)
            while let last = bytes.last, isBlank(last) { bytes = bytes.dropLast() }
            return bytes
        }
        var found: String?
        var seen = 0
        for field in fields {
            for pair in Array(field.utf8).split(separator: semicolon) {
                let parts = pair.split(separator: equals, maxSplits: 1, omittingEmptySubsequences: false)
                guard trimmed(parts[0]).elementsEqual(wanted) else { continue }
                seen += 1
                found = String(decoding: parts.count > 1 ? trimmed(parts[1]) : [], as: UTF8.self)
            }
        }
        return seen == 1 ? found : nil
    }
}

/// Printed, logged or dumped (a redirect in a log line), a cookie shows its name and attributes, not its value: a
/// session cookie's value is the session, a binding cookie's finishes a
/// sign-in.
extension WebCookie: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    package var description: String {
        "WebCookie(\(name)=\(value.isEmpty ? "" : "••••"); Max-Age=\(maxAge)\(secure ? "; Secure" : ""))"
    }

    package var debugDescription: String { description }

    package var customMirror: Mirror { Mirror(self, children: ["description": description]) }
}

/// Printed, logged or dumped, a redirect shows where it sends the browser
/// without its query (the authorization request's `state`, or a pushed
/// request's `request_uri`, is what a forged error callback needs to end
/// that sign-in), and its cookies without their values (a session
/// cookie's value is the session).
extension WebSignIn.Redirect: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var description: String {
        let shown =
            location.firstIndex(where: { $0 == "?" || $0 == "#" }).map { location[..<$0] + "?…" } ?? location[...]
        return
            "Redirect(location: \(DisplayText.sanitized(String(shown), limit: 300)), cookies: \(WebCookie.shown(cookies)))"
    }

    public var debugDescription: String { description }

    public var customMirror: Mirror { Mirror(self, children: ["description": description]) }
}

extension WebCookie {
    /// The `Set-Cookie` field an answer carries.
    package var field: HTTPField { HTTPField(name: .setCookie, value: headerValue) }

    /// `Set-Cookie` fields as a log may show them: each cookie's name and
    /// attributes, its value as `••••` (empty when the cookie is cleared).
    package static func shown(_ fields: [HTTPField]) -> String {
        let shown = fields.map { field -> String in
            let value = field.value
            let pair = value.prefix { $0 != ";" }
            let name = pair.prefix { $0 != "=" }
            let cleared = pair.count == name.count + 1
            return "\(name)=\(cleared ? "" : "••••")\(value.dropFirst(pair.count))"
        }
        return "[" + shown.joined(separator: ", ") + "]"
    }
}
