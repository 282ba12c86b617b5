import Foundation

/// One request as the test server received it off the wire.
public struct RecordedRequest: Sendable {
    public var method: String
    /// Path and query, exactly as sent: `/token?x=1`.
    public var uri: String
    public var headers: [(name: String, value: String)]
    public var body: Data

    public var path: String { String(uri.split(separator: "?", maxSplits: 1).first ?? "") }
    public var query: String? { uri.split(separator: "?", maxSplits: 1).dropFirst().first.map(String.init) }
    public var bodyText: String { String(decoding: body, as: UTF8.self) }

    public func header(_ name: String) -> String? {
        headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }
}
