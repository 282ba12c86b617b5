import Foundation
import NIOCore

/// What the test server answers to a request.
public struct StubResponse: Sendable {
    public var status: Int
    public var headers: [(name: String, value: String)]
    public var body: Data
    /// Instead of `body`: a chunked body sent in `count` pieces, `interval` apart.
    public var stream: Stream?
    /// Keep the connection open for the client's next request (HTTP/1.1's
    /// default); otherwise the server answers `Connection: close` and closes.
    public var keepAlive = false
    /// How long the answer waits before it is written, without holding up
    /// the server's other requests (a handler that sleeps would).
    public var delay: TimeAmount = .zero

    /// This answer, written `delay` after the request.
    public func delayed(by delay: TimeAmount) -> StubResponse {
        var response = self
        response.delay = delay
        return response
    }

    /// A body that takes its time, or never ends.
    public struct Stream: Sendable {
        public var chunk: [UInt8]
        public var count: Int
        public var interval: TimeAmount

        /// One byte every `interval`, for ever (a client must give up on its own).
        public static func drip(every interval: TimeAmount = .milliseconds(200)) -> Stream {
            Stream(chunk: [UInt8(ascii: "{")], count: .max, interval: interval)
        }

        /// 64 KiB chunks as fast as the client reads, for ever.
        public static let flood = Stream(
            chunk: Array(repeating: UInt8(ascii: "a"), count: 64 << 10), count: .max, interval: .zero)
    }

    public static func streaming(_ stream: Stream, status: Int = 200, headers: [(name: String, value: String)] = [])
        -> StubResponse
    {
        var response = StubResponse(status: status, headers: headers)
        response.stream = stream
        return response
    }

    /// A redirect to `location`.
    public static func redirect(_ status: Int, to location: String) -> StubResponse {
        StubResponse(
            status: status, headers: [("Location", location), ("Content-Type", "text/plain")], body: Data("moved".utf8))
    }

    public init(status: Int = 200, headers: [(name: String, value: String)] = [], body: Data = Data()) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    public static func json(_ text: String, status: Int = 200, headers: [(name: String, value: String)] = [])
        -> StubResponse
    {
        StubResponse(
            status: status, headers: [("Content-Type", "application/json; charset=utf-8")] + headers,
            body: Data(text.utf8))
    }

    public static func form(_ text: String, status: Int = 200) -> StubResponse {
        StubResponse(
            status: status, headers: [("Content-Type", "application/x-www-form-urlencoded")], body: Data(text.utf8))
    }

    /// The same response on a connection kept open afterwards.
    public func keptAlive() -> StubResponse {
        var response = self
        response.keepAlive = true
        return response
    }

    public static func text(_ text: String, contentType: String, status: Int) -> StubResponse {
        StubResponse(status: status, headers: [("Content-Type", contentType)], body: Data(text.utf8))
    }
}
