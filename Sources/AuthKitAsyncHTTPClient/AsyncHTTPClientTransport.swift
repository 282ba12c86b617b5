import AsyncHTTPClient
import AuthKit
import Foundation
import HTTPTypes
import NIOCore
import NIOHTTP1
import NIOSSL

/// ``AuthKit/HTTPClient`` on swift-server's AsyncHTTPClient, for server
/// applications that already run SwiftNIO: connections are pooled and kept
/// alive, and requests share the application's event loops instead of a
/// thread each. Pass it as `httpClient:` to `OAuth2Client` or
/// `CredentialSource`.
///
/// It keeps the rules every AuthKit transport keeps (see ``AuthKit/HTTPClient``):
/// - its AsyncHTTPClient is configured with redirects **disallowed**, so a 3xx
///   comes back as the response and AuthKit decides (a token request never
///   follows one). That is why it owns its client rather than taking the
///   application's: AsyncHTTPClient sets redirects per client, and a client
///   that follows them would resend a code or a secret wherever it is pointed;
/// - decompression is off, so nothing is inflated behind AuthKit's size cap:
///   it asks for `Accept-Encoding: identity` (whatever the caller set) and
///   refuses a body sent encoded anyway, as `URLSessionHTTPClient` does
///   (passed on, a caller's `gzip` brought a body counted against the cap
///   compressed, to be inflated past it by whoever read it);
/// - a task cancelled already sends nothing: checked here before the request
///   is handed over, as the default transport checks before libcurl writes,
///   rather than left to AsyncHTTPClient (a code exchange given up on would
///   still spend the code; the contract's `cancelledTaskSendsNothing` passed
///   without this check too, so it is a guard, not a fix);
/// - the body is pulled from the connection as the reader asks for it: a
///   flood is stopped at the cap, not buffered.
///
/// The client is created once per process (on AsyncHTTPClient's shared event
/// loop group) and lives as long as the process, like `HTTPClient.shared`.
///
/// Reached through ``asyncHTTPClientTransport()``, as the core's transports
/// are through `platformHTTPClient(timeout:)`: a user holds an
/// ``AuthKit/HTTPClient``, not this type.
package struct AsyncHTTPClientTransport: AuthKit.HTTPClient, ParsedURLHTTPClient {
    /// The kind of failure an AsyncHTTPClient or NIO error stands for.
    static func kind(of error: any Error) -> AuthKitError.NetworkFailure.Kind {
        if let error = error as? HTTPClientError {
            switch error {
            case .deadlineExceeded, .readTimeout, .connectTimeout, .writeTimeout: return .timedOut
            case .remoteConnectionClosed: return .connectionClosed
            case .invalidURL, .emptyHost, .emptyScheme: return .invalidRequest
            default: return .connectionFailed
            }
        }
        // A certificate that could not be verified, a failed handshake: as
        // the other transports say it, not "no connection".
        if error is NIOSSLError || error is BoringSSLError || error is NIOSSLExtraError { return .tlsFailure }
        return .connectionFailed
    }

    /// An error in words: AsyncHTTPClient's `shortDescription`, which carries
    /// none of its values (its full description repeats a refused header's
    /// value, which may be a caller's key).
    static func words(for error: any Error) -> String {
        (error as? HTTPClientError)?.shortDescription ?? "\(error)"
    }

    /// AuthKit's client: redirects disallowed, no decompression.
    ///
    /// A connection that could not be made is tried again, with back-off,
    /// until the 10 s connect timeout (AsyncHTTPClient's default, which it
    /// asks to keep): so a token endpoint that is down, or a certificate
    /// that is not trusted, costs a call those 10 s and is said as the time
    /// running out. Turned off, one failed attempt failed every request
    /// queued for that host at once (its pool's rule), a burst of token
    /// requests with it. (docs/http.md; the contract's clauses allow it.)
    private static let client = AsyncHTTPClient.HTTPClient(
        eventLoopGroup: AsyncHTTPClient.HTTPClient.defaultEventLoopGroup,
        configuration: .init(
            redirectConfiguration: .disallow,
            timeout: .init(connect: .seconds(10), read: .seconds(30)),
            decompression: .disabled))

    package init() {}

    package func send(_ request: HTTPRequest, body: Data?) async throws -> (HTTPResponse, HTTPResponseBody) {
        guard let url = request.url else {
            throw AuthKitError.network(
                url: "(no URL)", reason: .init(.invalidRequest, "the request has no absolute URL"))
        }
        return try await send(request, url: url, body: body)
    }

    /// The URL as AuthKit's engines already hold it (swift-http-types would
    /// rebuild it from the head and parse it again).
    package func send(_ request: HTTPRequest, url: URL, body: Data?) async throws -> (HTTPResponse, HTTPResponseBody) {
        let (head, response) = try await open(request, url: url, body: body)
        let relay = BodyRelay(response.body.makeAsyncIterator(), url: url)
        let stream = AsyncThrowingStream<Data, any Error>(unfolding: { try await relay.next() })
        return (head, HTTPResponseBody(stream, onCancel: { relay.cancel() }))
    }

    /// A body its caller reads whole (every token-endpoint call), read here
    /// straight from AsyncHTTPClient's body up to `limit + 1` bytes (the
    /// caller's cap then refuses it, naming the cap) and handed over
    /// complete, without the stream, relay and locks a streamed body goes
    /// through (an allocation and two locked hops a chunk; at 16 exchanges
    /// at once on loopback the difference was within the VM's noise, about
    /// 3% of CPU). Reading stops there: the body left unread
    /// ends the request, and its connection with it. A deadline or a
    /// cancelled task stops the read as it stops the stream's
    /// (``withDeadline(_:allowed:display:stoppedBy:_:)`` cancels the task
    /// this runs in).
    package func send(_ request: HTTPRequest, url: URL, body: Data?, collectingAtMost limit: Int) async throws -> (
        HTTPResponse, HTTPResponseBody
    ) {
        let (head, response) = try await open(request, url: url, body: body)
        let wanted = limit < Int.max ? limit + 1 : limit
        var collected: Data?
        do {
            for try await chunk in response.body {
                let held = collected?.count ?? 0
                let taken = chunk.readableBytesView.prefix(wanted - held)
                if collected == nil { collected = Data(taken) } else { collected!.append(contentsOf: taken) }
                if held + taken.count >= wanted { break }
            }
        } catch let cancellation as CancellationError {
            throw cancellation
        } catch {
            throw BodyRelay.brokeOff(error, url: url)
        }
        return (head, HTTPResponseBody(collected ?? Data()))
    }

    /// Sends the request; the answer's head, as AuthKit reads it, beside
    /// AsyncHTTPClient's response, whose body is still to be read.
    private func open(_ request: HTTPRequest, url: URL, body: Data?) async throws -> (
        HTTPResponse, HTTPClientResponse
    ) {
        var outgoing = HTTPClientRequest(url: url.absoluteString)
        outgoing.method = HTTPMethod(rawValue: request.method.rawValue)
        for field in request.headerFields.withoutFraming where field.name != .acceptEncoding {
            outgoing.headers.add(name: field.name.rawName, value: field.value)
        }
        outgoing.headers.add(name: "Accept-Encoding", value: "identity")
        if let body { outgoing.body = .bytes(ByteBuffer(bytes: body)) }
        try Task.checkCancellation()
        let response: HTTPClientResponse
        do {
            // AuthKit's RequestPolicy sets the real deadline; this one only
            // keeps a forgotten request from living for ever.
            response = try await Self.client.execute(outgoing, timeout: .hours(1))
        } catch let cancellation as CancellationError {
            throw cancellation
        } catch {
            throw AuthKitError.network(
                url: url.redactedForLogs, reason: .init(Self.kind(of: error), Self.words(for: error)))
        }
        // Every field: `identity` in one and `gzip` in a second is encoded.
        if let encoding = response.headers["Content-Encoding"].map({ $0.lowercased() })
            .first(where: { !["", "identity"].contains($0) })
        {
            throw AuthKitError.network(
                url: url.redactedForLogs,
                reason: .init(
                    .malformedAnswer,
                    "the server sent a '\(DisplayText.sanitized(encoding, limit: 40))'-encoded body though none was asked for (Accept-Encoding: identity); it was refused"
                ))
        }
        var fields = HTTPFields()
        for (name, value) in response.headers {
            if let fieldName = HTTPField.Name(name) { fields.append(HTTPField(name: fieldName, value: value)) }
        }
        return (HTTPResponse(status: .init(code: Int(response.status.code)), headerFields: fields), response)
    }
}

/// Pulls the body one buffer at a time, when AuthKit asks for it. Cancelling
/// drops the iterator: AsyncHTTPClient then closes the connection; a read
/// asked for afterwards throws `CancellationError` (ended quietly, a body cut
/// short read as a complete one), and so does one under way, once its
/// buffer or its deadline comes (it holds its own copy of the iterator).
///
/// A body that fails part-way (the server closed before its
/// `Content-Length`, or before a chunked body's last chunk) is an
/// ``AuthKitError``, like a failure before the head: a
/// caller handles one kind of error, not AsyncHTTPClient's as well.
private final class BodyRelay: @unchecked Sendable {
    private let lock = NSLock()
    private var iterator: HTTPClientResponse.Body.AsyncIterator?
    private var cancelled = false
    /// For an error's message, made only then.
    private let url: URL

    init(_ iterator: HTTPClientResponse.Body.AsyncIterator, url: URL) {
        self.iterator = iterator
        self.url = url
    }

    func next() async throws -> Data? {
        let held = lock.withLock { (iterator, cancelled) }
        if held.1 { throw CancellationError() }
        guard var current = held.0 else { return nil }
        let next: ByteBuffer?
        do {
            next = try await current.next()
        } catch let cancellation as CancellationError {
            throw cancellation
        } catch {
            throw Self.brokeOff(error, url: url)
        }
        let cancelledMeanwhile = lock.withLock { () -> Bool in
            if !cancelled { iterator = next == nil ? nil : current }
            return cancelled
        }
        if cancelledMeanwhile { throw CancellationError() }
        return next.map { Data($0.readableBytesView) }
    }

    /// A body that failed after its head: the answer broke off.
    static func brokeOff(_ error: any Error, url: URL) -> AuthKitError {
        AuthKitError.network(
            url: url.redactedForLogs,
            reason: .init(.connectionClosed, "the answer broke off: \(AsyncHTTPClientTransport.words(for: error))"))
    }

    func cancel() {
        lock.withLock {
            iterator = nil
            cancelled = true
        }
    }
}

/// AuthKit's transport on swift-server's AsyncHTTPClient, for a server
/// that already runs SwiftNIO: pooled keep-alive connections on the shared
/// event loops, redirects never followed, no decompression behind the size
/// cap (see ``AsyncHTTPClientTransport``). Pass it as `httpClient:` to
/// `OAuth2Client` or `CredentialSource`. Every call gives a transport over
/// the same process-wide client.
public func asyncHTTPClientTransport() -> any AuthKit.HTTPClient { AsyncHTTPClientTransport() }
