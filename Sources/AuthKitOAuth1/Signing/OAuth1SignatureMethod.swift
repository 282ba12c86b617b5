/// How a request is signed (RFC 5849 §3.4): the value of `oauth_signature_method`.
///
/// `RSA-SHA1` is not offered: it needs a per-client key pair that no provider
/// in the catalogue uses. `HMAC-SHA256` is not in RFC 5849 but is a widely
/// supported extension of §3.4.2 with SHA-256 in place of SHA-1.
public enum OAuth1SignatureMethod: String, Sendable, Hashable, CaseIterable, Codable {
    /// RFC 5849 §3.4.2; what Twitter requires.
    case hmacSHA1 = "HMAC-SHA1"
    /// §3.4.2 with SHA-256.
    case hmacSHA256 = "HMAC-SHA256"
    /// RFC 5849 §3.4.4: the signature is the key itself. Only safe over TLS
    /// (§4.1), which the descriptor validator enforces for every endpoint.
    case plaintext = "PLAINTEXT"

    /// The name as a constant, so the signer copies it instead of encoding it
    /// (it needs no encoding: letters, digits and `-`).
    var staticName: StaticString {
        switch self {
        case .hmacSHA1: "HMAC-SHA1"
        case .hmacSHA256: "HMAC-SHA256"
        case .plaintext: "PLAINTEXT"
        }
    }
}
