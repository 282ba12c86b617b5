import HTTPTypes

/// The header fields AuthKit sends on every token request, made once: a
/// field checks its value when made (`HTTPField.Value.isLegal`), which
/// showed in a refresh's profile when done per request.
extension HTTPField {
    /// `User-Agent: AuthKit/0.3.0`, which every request carries where the
    /// caller set none (``AuthKitVersion/userAgent`` says why).
    static let authKitUserAgent = HTTPField(name: .userAgent, value: AuthKitVersion.userAgent)
    /// `Accept: application/json`, which every token-endpoint request sends.
    static let acceptJSON = HTTPField(name: .accept, value: "application/json")
    /// `Content-Type: application/x-www-form-urlencoded`, a token request's body.
    static let formContentType = HTTPField(name: .contentType, value: "application/x-www-form-urlencoded")
}
