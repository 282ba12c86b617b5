/// A cookie the sign-in sets or clears, framework-neutral: an adapter
/// (``AuthKitHummingbird``, or an app's own for Vapor) turns it into its
/// framework's cookie.
///
/// Every cookie AuthKit sets is `HttpOnly` (no script reads it), `SameSite=Lax`
/// (sent on the provider's top-level redirect back, not on cross-site
/// posts), `Path=/`, and `Secure` unless the site is plain `http` on a
/// loopback address, where browsers drop `Secure` cookies.
public struct WebCookie: Sendable, Hashable {
    public var name: String
    /// Empty when the cookie is cleared.
    public var value: String
    /// Seconds to live; 0 clears it.
    public var maxAge: Int
    public var secure: Bool
    public var httpOnly: Bool { true }
    public var sameSite: String { "Lax" }
    public var path: String { "/" }

    public init(name: String, value: String, maxAge: Int, secure: Bool) {
        self.name = name
        self.value = value
        self.maxAge = maxAge
        self.secure = secure
    }

    /// The `Set-Cookie` field value (RFC 6265 §4.1).
    public var headerValue: String {
        var text = "\(name)=\(value); Path=\(path); Max-Age=\(maxAge); HttpOnly; SameSite=\(sameSite)"
        if secure { text += "; Secure" }
        return text
    }

    /// The value of the cookie `name` in a request's `Cookie` fields, read
    /// as RFC 6265 §5.4 sends them: pairs split at `;`, only spaces and tabs
    /// trimmed, names compared byte for byte. Use it, not a framework's
    /// cookie parser, for the cookies ``WebSignIn`` reads.
    ///
    /// `nil` when the name is there twice, or when another cookie's name
    /// becomes it once Unicode spaces are trimmed or case is folded. A
    /// framework that trims `Character.isWhitespace` (Hummingbird, Vapor)
    /// read `\u{2000}__Host-authkit_signin` as `__Host-authkit_signin`;
    /// to the browser it is another name, without the prefix, so a sibling
    /// subdomain or a plain-http answer could set it, and plant a binding
    /// (login CSRF) or a session.
    public static func value(named name: String, inCookieFields fields: [String]) -> String? {
        // Spaces, controls and invisible format characters (U+200B…) at
        // either end, and case: what a lenient parser or a reader may not see.
        func invisible(_ character: Character) -> Bool {
            character.isWhitespace
                || character.unicodeScalars.allSatisfy {
                    [.control, .format].contains($0.properties.generalCategory)
                }
        }
        func folded(_ text: Substring) -> String {
            var text = text.drop(while: invisible)
            while let last = text.last, invisible(last) { text = text.dropLast() }
            return text.lowercased()
        }
        let foldedName = folded(Substring(name))
        var found: String?
        var seen = 0
        for field in fields {
            for pair in field.split(separator: ";", omittingEmptySubsequences: true) {
                let trimmed = pair.drop { $0 == " " || $0 == "\t" }
                let parts = trimmed.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                var cookieName = parts[0][...]
                while let last = cookieName.last, last == " " || last == "\t" { cookieName = cookieName.dropLast() }
                if cookieName.utf8.elementsEqual(name.utf8) {
                    seen += 1
                    var value = parts.count > 1 ? parts[1][...] : ""
                    while let last = value.last, last == " " || last == "\t" { value = value.dropLast() }
                    found = String(value)
                } else if folded(cookieName) == foldedName {
                    return nil
                }
            }
        }
        return seen == 1 ? found : nil
    }
}
