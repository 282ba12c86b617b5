import AuthKit
import HTTPTypes

/// A method typed with `-X` (`request`, `sign`, `token header`), checked
/// before anything is read, sent or signed.
enum TypedMethod {
    /// Why `text` cannot be sent (and signed) as a request's method, or `nil`.
    ///
    /// A method is an HTTP token (RFC 9110 §9.1): a signature over "" or
    /// "G\nET" would be printed and verified by no server. `CONNECT` asks a
    /// proxy for a tunnel to a host and port (§9.3.6), not for a resource at a
    /// URL: its request has no path, and it failed as a network error, "the
    /// request has no absolute URL".
    static func problem(_ text: String) -> String? {
        let method = text.uppercased()
        guard HTTPRequest.Method(method) != nil else {
            return "-X takes an HTTP method such as GET or POST; got '\(DisplayText.sanitized(text, limit: 40))'."
        }
        if method == "CONNECT" {
            return
                "-X CONNECT asks a proxy for a tunnel (RFC 9110 §9.3.6), not for a resource at a URL; authkit sends requests for URLs: give another method."
        }
        return nil
    }
}
