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
            return "The URL carries a user name or password (user:password@), which authkit does not send (RFC 9110 §4.2.4); remove them."
        }
        guard text.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value == 0x7F }) else { return nil }
        return "'\(DisplayText.sanitized(text, limit: 200))' contains a space or control character; encode it (a space is %20) as it will be sent."
    }
}
