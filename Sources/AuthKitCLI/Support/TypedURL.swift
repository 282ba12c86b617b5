import AuthKit

/// A URL typed on the command line (`request`, `sign`, `token header`),
/// checked before it is sent or signed.
enum TypedURL {
    /// Why `text` cannot be used as typed, or `nil`. A raw space or control
    /// character would be encoded one way here and another way (or refused)
    /// by the HTTP client and the server, so an OAuth 1.0a signature over it
    /// would not match what is sent.
    static func problem(_ text: String) -> String? {
        guard text.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value == 0x7F }) else { return nil }
        return "'\(DisplayText.sanitized(text, limit: 200))' contains a space or control character; encode it (a space is %20) as it will be sent."
    }
}
