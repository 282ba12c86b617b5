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
}
