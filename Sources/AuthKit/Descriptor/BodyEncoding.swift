/// How request parameters are carried.
public enum BodyEncoding: String, Codable, Sendable, Hashable {
    /// `application/x-www-form-urlencoded` body (RFC 6749 §4.1.3, the standard).
    case form
    /// `application/json` body (Qiita's token endpoint).
    case json
    /// In the URL's query string, no body (Instagram's GET long-lived token exchange).
    case query
}
