/// An error as the provider reported it: RFC 6749 §4.1.2.1 (authorization) or
/// §5.2 (token endpoint) `error`, `error_description`, `error_uri`, or a
/// provider's own fields mapped through the descriptor (Qiita's `type` and
/// `message`).
package struct ProviderErrorResponse: Sendable, Hashable, Codable {
    /// HTTP status, when the error came from an HTTP response (not a redirect).
    package var status: Int?
    /// The error code, e.g. `access_denied`, `invalid_grant`.
    package var code: String
    package var description: String?
    package var uri: String?

    package init(status: Int? = nil, code: String, description: String? = nil, uri: String? = nil) {
        self.status = status
        self.code = code
        self.description = description
        self.uri = uri
    }

    /// `invalid_grant: Code expired (see https://…) [HTTP 400]`, with control
    /// characters escaped and each part cut short (``DisplayText``).
    package var summary: String {
        var text = DisplayText.sanitized(code, limit: 100)
        if let description, !description.isEmpty { text += ": \(DisplayText.sanitized(description))" }
        // A web page for people (RFC 6749 §4.1.2.1): a `javascript:` or
        // `file:` "page" is no link to follow, and is left out.
        if let uri, ["http://", "https://"].contains(where: { uri.lowercased().hasPrefix($0) }) {
            text += " (see \(DisplayText.sanitized(uri)))"
        }
        if let status { text += " [HTTP \(status)]" }
        return text
    }
}
