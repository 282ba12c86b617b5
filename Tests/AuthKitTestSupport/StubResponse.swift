import Foundation

/// What the test server answers to a request.
public struct StubResponse: Sendable {
    public var status: Int
    public var headers: [(name: String, value: String)]
    public var body: Data

    public init(status: Int = 200, headers: [(name: String, value: String)] = [], body: Data = Data()) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    public static func json(_ text: String, status: Int = 200, headers: [(name: String, value: String)] = []) -> StubResponse {
        StubResponse(status: status, headers: [("Content-Type", "application/json; charset=utf-8")] + headers, body: Data(text.utf8))
    }

    public static func form(_ text: String, status: Int = 200) -> StubResponse {
        StubResponse(status: status, headers: [("Content-Type", "application/x-www-form-urlencoded")], body: Data(text.utf8))
    }

    public static func text(_ text: String, contentType: String, status: Int) -> StubResponse {
        StubResponse(status: status, headers: [("Content-Type", contentType)], body: Data(text.utf8))
    }
}
