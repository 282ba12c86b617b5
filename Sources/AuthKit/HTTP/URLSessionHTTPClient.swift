import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// ``HTTPClient`` on Foundation's `URLSession` (libcurl on Linux).
///
/// Every request has a timeout, and bodies larger than ``maximumBodySize`` are
/// refused: a token response is a few hundred bytes, and an endpoint that
/// answers with megabytes is misconfigured or hostile.
public struct URLSessionHTTPClient: HTTPClient {
    public var timeout: TimeInterval
    public var maximumBodySize: Int
    private let session: URLSession

    /// - Parameters:
    ///   - timeout: seconds allowed for the whole request.
    ///   - maximumBodySize: the largest response body accepted, in bytes.
    public init(timeout: TimeInterval = 30, maximumBodySize: Int = 1 << 20, session: URLSession? = nil) {
        self.timeout = timeout
        self.maximumBodySize = maximumBodySize
        if let session {
            self.session = session
        } else {
            let configuration = URLSessionConfiguration.ephemeral
            configuration.timeoutIntervalForRequest = timeout
            configuration.timeoutIntervalForResource = timeout
            configuration.httpCookieStorage = nil
            configuration.urlCache = nil
            self.session = URLSession(configuration: configuration)
        }
    }

    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        var urlRequest = URLRequest(url: request.url, timeoutInterval: timeout)
        urlRequest.httpMethod = request.method
        for header in request.headers {
            urlRequest.addValue(header.value, forHTTPHeaderField: header.name)
        }
        urlRequest.httpBody = request.body
        let data: Data
        let response: URLResponse
        do {
            (data, response) = try await session.data(for: urlRequest)
        } catch let error as URLError where error.code == .timedOut {
            throw AuthKitError.network(url: request.displayURL, reason: "timed out after \(Int(timeout)) s")
        } catch {
            throw AuthKitError.network(url: request.displayURL, reason: error.localizedDescription)
        }
        guard let http = response as? HTTPURLResponse else {
            throw AuthKitError.network(url: request.displayURL, reason: "the response was not HTTP")
        }
        guard data.count <= maximumBodySize else {
            throw AuthKitError.network(
                url: request.displayURL,
                reason: "the response body is \(data.count) bytes, more than the \(maximumBodySize) allowed")
        }
        var headers = [(name: String, value: String)]()
        for (name, value) in http.allHeaderFields {
            headers.append((String(describing: name), String(describing: value)))
        }
        return HTTPResponse(status: http.statusCode, headers: headers, body: data)
    }
}
