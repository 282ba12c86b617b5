import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPTypes

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

    public func send(_ request: HTTPRequest, body: Data?) async throws -> (HTTPResponse, Data) {
        let display = request.url?.redactedForLogs ?? "(no URL)"
        guard let url = request.url else { throw AuthKitError.network(url: display, reason: "the request has no absolute URL") }
        var urlRequest = URLRequest(url: url, timeoutInterval: timeout)
        urlRequest.httpMethod = request.method.rawValue
        for field in request.headerFields {
            urlRequest.addValue(field.value, forHTTPHeaderField: field.name.rawName)
        }
        urlRequest.httpBody = body
        let data: Data
        let response: URLResponse
        do {
            (data, response) = try await session.data(for: urlRequest)
        } catch let error as URLError where error.code == .timedOut {
            throw AuthKitError.network(url: display, reason: "timed out after \(Int(timeout)) s")
        } catch {
            throw AuthKitError.network(url: display, reason: error.localizedDescription)
        }
        guard let http = response as? HTTPURLResponse else {
            throw AuthKitError.network(url: display, reason: "the response was not HTTP")
        }
        guard data.count <= maximumBodySize else {
            throw AuthKitError.network(
                url: display, reason: "the response body is \(data.count) bytes, more than the \(maximumBodySize) allowed")
        }
        var fields = HTTPFields()
        for (name, value) in http.allHeaderFields {
            if let name = HTTPField.Name(String(describing: name)) {
                fields.append(HTTPField(name: name, value: String(describing: value)))
            }
        }
        return (HTTPResponse(status: .init(code: http.statusCode), headerFields: fields), data)
    }
}
