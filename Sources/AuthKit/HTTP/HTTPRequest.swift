import Foundation

/// An outgoing HTTP request, as plain data.
///
/// AuthKit builds these rather than `URLRequest`s so the bytes it means to send
/// can be asserted in tests on every platform, and so an app can plug in any
/// HTTP stack through ``HTTPClient``.
public struct HTTPRequest: Sendable, Hashable {
    public var method: String
    public var url: URL
    /// Header fields in order; names compare case-insensitively (RFC 9110 §5.1).
    public var headers: [(name: String, value: String)]
    public var body: Data?
    /// How the URL appears in logs and errors. Defaults to the URL without its
    /// query; a templated endpoint shows its template (Qiita's revocation URL has
    /// the token in its path, which must not be printed).
    public var displayURL: String

    public init(method: String, url: URL, headers: [(name: String, value: String)] = [], body: Data? = nil,
                displayURL: String? = nil) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.displayURL = displayURL ?? url.redactedForLogs
    }

    /// The first value of header `name`, compared case-insensitively.
    public func header(_ name: String) -> String? {
        headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    /// Sets header `name`, replacing any existing value.
    public mutating func setHeader(_ name: String, _ value: String) {
        headers.removeAll { $0.name.caseInsensitiveCompare(name) == .orderedSame }
        headers.append((name, value))
    }

    public static func == (lhs: HTTPRequest, rhs: HTTPRequest) -> Bool {
        lhs.method == rhs.method && lhs.url == rhs.url && lhs.body == rhs.body
            && lhs.headers.map { [$0.name, $0.value] } == rhs.headers.map { [$0.name, $0.value] }
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(method)
        hasher.combine(url)
        hasher.combine(body)
    }
}
