/// Sends one HTTP request and returns the whole response.
///
/// The flow engines talk to token endpoints only through this protocol, so tests
/// can observe exactly what is sent and apps can use their own HTTP stack.
/// ``URLSessionHTTPClient`` is the default. Implementations return non-2xx
/// responses as responses (the engines interpret provider errors) and throw only
/// for transport failures.
public protocol HTTPClient: Sendable {
    func send(_ request: HTTPRequest) async throws -> HTTPResponse
}
