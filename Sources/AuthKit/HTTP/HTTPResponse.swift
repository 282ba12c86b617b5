import Foundation

/// A received HTTP response: status, headers and the whole body.
public struct HTTPResponse: Sendable {
    public var status: Int
    /// Header fields; names compare case-insensitively through ``header(_:)``.
    public var headers: [(name: String, value: String)]
    public var body: Data

    public init(status: Int, headers: [(name: String, value: String)] = [], body: Data = Data()) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    public func header(_ name: String) -> String? {
        headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    /// The media type without parameters, lowercased: `application/json`.
    public var mediaType: String? {
        header("Content-Type")?
            .split(separator: ";", maxSplits: 1).first
            .map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
    }
}
