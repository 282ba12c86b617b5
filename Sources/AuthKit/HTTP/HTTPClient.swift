import Foundation
import HTTPTypes

/// Sends one HTTP request and returns the response and its whole body.
///
/// The flow engines talk to token endpoints only through this protocol, so tests
/// can observe exactly what is sent and apps can use their own HTTP stack.
/// ``URLSessionHTTPClient`` is the default. Implementations return non-2xx
/// responses as responses (the engines interpret provider errors) and throw only
/// for transport failures.
///
/// Requests and responses are swift-http-types' `HTTPRequest` and
/// `HTTPResponse` rather than types of AuthKit's own: they are the currency
/// that Hummingbird, swift-openapi-runtime and the NIO HTTP stack share, so a
/// transport built on any of them plugs in with no conversion of headers or
/// methods, and header names compare case-insensitively by construction
/// (RFC 9110 §5.1). The body travels beside the head, as in those libraries.
public protocol HTTPClient: Sendable {
    func send(_ request: HTTPRequest, body: Data?) async throws -> (HTTPResponse, Data)
}

/// A request as the engines build it: the head, the body, and how the URL may
/// appear in logs and errors.
package struct OutgoingRequest: Sendable {
    package var head: HTTPRequest
    package var body: Data?
    /// The URL without its query (`?…`), or the descriptor's template for a
    /// URL with a token in its path (Qiita's revocation): never a secret.
    package var displayURL: String

    package init(method: HTTPRequest.Method, url: URL, displayURL: String? = nil) {
        self.head = HTTPRequest(method: method, url: url)
        self.displayURL = displayURL ?? url.redactedForLogs
    }

    package var url: URL { head.url ?? URL(string: "about:blank")! }

    package func header(_ name: String) -> String? {
        HTTPField.Name(name).flatMap { head.headerFields[$0] }
    }

    /// Sets header `name`, replacing any earlier value.
    package mutating func setHeader(_ name: String, _ value: String) {
        guard let fieldName = HTTPField.Name(name) else { return }
        head.headerFields[fieldName] = value
    }
}

/// A response as the engines read it.
package struct IncomingResponse: Sendable {
    package var status: Int
    package var headers: HTTPFields
    package var body: Data

    package init(_ head: HTTPResponse, body: Data) {
        self.status = head.status.code
        self.headers = head.headerFields
        self.body = body
    }

    /// For tests and fuzzers: a response from plain values.
    package init(status: Int, headers: [(String, String)] = [], body: Data = Data()) {
        self.status = status
        var fields = HTTPFields()
        for (name, value) in headers { if let name = HTTPField.Name(name) { fields.append(HTTPField(name: name, value: value)) } }
        self.headers = fields
        self.body = body
    }

    package func header(_ name: String) -> String? {
        HTTPField.Name(name).flatMap { headers[$0] }
    }

    /// The media type without parameters, lowercased: `application/json`.
    package var mediaType: String? {
        header("Content-Type")?
            .split(separator: ";", maxSplits: 1).first
            .map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
    }
}

extension URL {
    /// The URL without its query, fragment and user info, for logs and error
    /// messages. Some providers put secrets in query strings (Instagram's
    /// long-lived token exchange sends `client_secret` and `access_token` in a
    /// GET), so no message prints a query.
    package var redactedForLogs: String {
        guard var components = URLComponents(url: self, resolvingAgainstBaseURL: false) else {
            return "(unprintable URL)"
        }
        let hadQuery = components.percentEncodedQuery != nil
        components.percentEncodedQuery = nil
        components.fragment = nil
        components.user = nil
        components.password = nil
        return (components.string ?? "(unprintable URL)") + (hadQuery ? "?…" : "")
    }
}
