import HTTPTypes

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(CAuthKitLinux)
    import CAuthKitLinux
#endif

/// Sends one HTTP request and hands back the response as it arrives.
///
/// The flow engines talk to every endpoint only through this protocol, so tests
/// can observe exactly what is sent and apps can use their own HTTP stack.
/// ``platformHTTPClient(timeout:)`` is the default (libcurl on Linux,
/// `URLSession` on Apple platforms). What a transport must do, because
/// AuthKit's rules for credentials rest on it:
/// - **never follow a redirect**: a 3xx comes back as the response. Whether a
///   redirect is followed, and with which headers, is AuthKit's decision per
///   request (a token request never; a resource request only with the
///   credential kept to its origin, RFC 9110 §15.4), made once for every transport;
/// - hand over the body **in chunks as they arrive**, after content decoding
///   (gzip, zstd, br: whatever the transport decodes), and stop reading when
///   the consumer stops iterating: AuthKit enforces its size cap and
///   deadline while bytes arrive, so a hostile server cannot make it hold
///   more than the cap;
/// - return non-2xx responses as responses and throw only for transport failures
///   (a body cut short of its length is one), as ``AuthKitError``.
///
/// AuthKit's tests hold every transport it ships to these promises against
/// hostile servers (`TransportContract` in Tests/AuthKitTestSupport); a
/// transport of your own can be checked the same way.
///
/// Requests and responses are swift-http-types' `HTTPRequest` and
/// `HTTPResponse` rather than types of AuthKit's own: they are the currency
/// that Hummingbird, swift-openapi-runtime and the NIO HTTP stack share, so a
/// transport built on any of them plugs in with no conversion of headers or
/// methods, and header names compare case-insensitively by construction
/// (RFC 9110 §5.1). The body travels beside the head, as in those libraries.
public protocol HTTPClient: Sendable {
    func send(_ request: HTTPRequest, body: Data?) async throws -> (HTTPResponse, HTTPResponseBody)
}

/// A transport that takes the request's URL as its sender already holds it:
/// reading `HTTPRequest.url` rebuilds the URL from the head's fields and
/// parses it again, each time. ``FlowTransport`` hands such a transport the
/// URL of the request's ``RequestTarget`` (the default transport is one).
package protocol ParsedURLHTTPClient: HTTPClient {
    /// `url` is `request.url`, already parsed.
    func send(_ request: HTTPRequest, url: URL, body: Data?) async throws -> (HTTPResponse, HTTPResponseBody)

    /// The same, for a caller that reads the body whole and refuses it past
    /// `limit` bytes: a transport may hold the body as it arrives and stop
    /// reading at `limit + 1` bytes (the caller's refusal then names the
    /// cap), and need not stream it.
    func send(_ request: HTTPRequest, url: URL, body: Data?, collectingAtMost limit: Int) async throws -> (
        HTTPResponse, HTTPResponseBody
    )

    /// The largest cap (`maximumBodySize`) for which a body the caller would
    /// stream is collected instead (``send(_:url:body:collectingAtMost:)``):
    /// the transport holds that much before it streams anyway (an answer
    /// complete within it comes whole), so holding the whole body costs no
    /// memory a stream would not; the head then waits for the body's end.
    /// 0: never.
    var collectsBodiesUpTo: Int { get }

    /// Whether each transfer asks ``DeadlineScope/current`` to stop it at the
    /// deadline, and then ends promptly: its head and its body fail at once,
    /// as when its task is cancelled. A request deadline then needs no task of
    /// its own (``DeadlineStop/stoppingItsTransfers``).
    var stopsAtDeadlineScope: Bool { get }
}

extension ParsedURLHTTPClient {
    package var stopsAtDeadlineScope: Bool { false }

    package var collectsBodiesUpTo: Int { 0 }

    package func send(_ request: HTTPRequest, url: URL, body: Data?, collectingAtMost limit: Int) async throws -> (
        HTTPResponse, HTTPResponseBody
    ) {
        try await send(request, url: url, body: body)
    }
}

/// The platform's transport, the one AuthKit uses when the caller names
/// none: on Linux, one that drives libcurl directly (it bounds memory
/// against a hostile body, which FoundationNetworking's `URLSession` cannot:
/// docs/http.md), loaded when its first request is sent; on Apple platforms,
/// ``URLSessionHTTPClient``. The one public way to it, whatever the platform.
/// - Parameter timeout: how many seconds to connect, and, on Linux, how long
///   a transfer may send under a byte a second (URLSession: without data) before
///   it ends (the request's own deadline is ``RequestPolicy``'s).
public func platformHTTPClient(timeout: TimeInterval = 30) -> any HTTPClient {
    #if canImport(CAuthKitLinux)
        return CurlHTTPClient(timeout: timeout)
    #else
        return URLSessionHTTPClient(timeout: timeout)
    #endif
}

/// ``platformHTTPClient(timeout:)`` with its default timeout: on Apple
/// platforms one shared client, as the Linux transport's workers are shared.
package func defaultHTTPClient() -> any HTTPClient {
    #if canImport(CAuthKitLinux)
        return platformHTTPClient()
    #else
        return URLSessionHTTPClient.shared
    #endif
}

/// Starts loading what ``defaultHTTPClient()`` needs, on a thread of its own,
/// for a caller that knows a request will follow (`authkit authorize`): libcurl
/// on Linux, nothing elsewhere. ``CurlHTTPClient`` itself loads libcurl only at
/// its first request, because a process that ends while the load runs must
/// wait for it first (``settleDefaultHTTPClient()``), and most of a short
/// command's work (a token header) needs no request.
///
/// Started while the caller reads its files, the load costs nothing on the
/// way to the first request; but a thread started meanwhile waits for it (glibc
/// holds the loader's lock while it loads, and creating a thread takes it), so
/// start it before, not after, starting threads.
package func preloadDefaultHTTPClient() {
    #if canImport(CAuthKitLinux)
        authkit_curl_preload()
    #endif
}

/// Throws what the first request through ``defaultHTTPClient()`` would fail
/// with because the transport itself is missing (no libcurl on this Linux
/// machine), waiting for a load already under way. `authkit authorize` asks
/// before the user is sent to consent: a code the exchange cannot send is a
/// consent wasted. `display` names the endpoint in the error. Returns at once
/// everywhere but Linux.
package func requireDefaultHTTPClient(display: String) throws {
    #if canImport(CAuthKitLinux)
        try CurlHTTPClient.loadLibrary(display: display)
    #endif
}

/// Waits for a load ``preloadDefaultHTTPClient()`` or a first request began,
/// so that the process can exit: exiting while another thread loads libcurl
/// can deadlock (exit and dlopen both take the loader's lock) or crash (exit's
/// handlers run while the library's constructors do). Returns at once when no
/// load was started, and everywhere but Linux.
package func settleDefaultHTTPClient() {
    #if canImport(CAuthKitLinux)
        authkit_curl_settle()
    #endif
}
