#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(CCurl)
import CCurl
#endif
import HTTPTypes

/// Sends one HTTP request and hands back the response as it arrives.
///
/// The flow engines talk to every endpoint only through this protocol, so tests
/// can observe exactly what is sent and apps can use their own HTTP stack.
/// ``URLSessionHTTPClient`` is the default. What a transport must do, because
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
///   (a body cut short of its length is one), as ``AuthKitError/network(url:reason:)``.
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

/// The transport used when the caller names none: ``CurlHTTPClient`` on
/// Linux (it bounds memory against a hostile body; FoundationNetworking's
/// `URLSession` cannot), ``URLSessionHTTPClient`` on Apple platforms.
package func defaultHTTPClient() -> any HTTPClient {
    #if canImport(CCurl)
    return CurlHTTPClient()
    #else
    return URLSessionHTTPClient()
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
    #if canImport(CCurl)
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
    #if canImport(CCurl)
    try CurlHTTPClient.loadLibrary(display: display)
    #endif
}

/// Waits for a load ``preloadDefaultHTTPClient()`` or a first request began,
/// so that the process can exit: exiting while another thread loads libcurl
/// can deadlock (exit and dlopen both take the loader's lock) or crash (exit's
/// handlers run while the library's constructors do). Returns at once when no
/// load was started, and everywhere but Linux.
package func settleDefaultHTTPClient() {
    #if canImport(CCurl)
    authkit_curl_settle()
    #endif
}

/// A URL and what the engines derive from it for every request sent there:
/// its origin, whether a credential may travel to it, and the parts of an
/// `HTTPRequest` head. Worked out once per endpoint (the token endpoint's is
/// kept by the client), not once per request.
package struct RequestTarget: Sendable {
    package let url: URL
    /// ``Foundation/URL/origin``.
    package let origin: String
    /// https, or a loopback host (RFC 6749 §2.3.1, RFC 6750 §5.3, RFC 8252 §8.3).
    package let allowsCredentials: Bool
    /// Whether the URL names a host at all (an endpoint must).
    package let hasHost: Bool
    private let get: HTTPRequest
    /// The token endpoint's method, kept made: setting a method builds and
    /// checks a pseudo-header field each time.
    private let post: HTTPRequest

    package init(_ url: URL) {
        self.url = url
        self.origin = url.origin
        self.allowsCredentials = url.scheme?.lowercased() == "https" || url.isLoopback
        self.hasHost = url.host(percentEncoded: true) != nil
        self.get = HTTPRequest(method: .get, url: url)
        self.post = HTTPRequest(method: .post, url: url)
    }

    /// A head for `method` to this URL, without header fields.
    func head(_ method: HTTPRequest.Method) -> HTTPRequest {
        switch method {
        case .get: return get
        case .post: return post
        default:
            var head = get
            head.method = method
            return head
        }
    }
}

/// A request as the engines build it: the head, the body, and how the URL may
/// appear in logs and errors.
package struct OutgoingRequest: Sendable {
    package var head: HTTPRequest
    /// Where `head` goes, with its origin worked out. Change it with ``retarget(_:)``.
    package private(set) var target: RequestTarget
    package var body: Data?
    /// The URL without its query (`?…`), or the descriptor's template for a
    /// URL with a token in its path (Qiita's revocation): never a secret.
    package var displayURL: String
    /// Every secret this request carries (client secret and its Basic form,
    /// code, verifier, tokens): masked in any provider text an error quotes.
    package var secrets: [String] = []

    package init(method: HTTPRequest.Method, url: URL, displayURL: String? = nil) {
        self.init(method: method, target: RequestTarget(url), displayURL: displayURL)
    }

    package init(method: HTTPRequest.Method, target: RequestTarget, displayURL: String? = nil) {
        self.head = target.head(method)
        self.target = target
        self.displayURL = displayURL ?? target.url.redactedForLogs
    }

    package var url: URL { target.url }

    /// Sends the request to `url` instead (a redirect's target).
    package mutating func retarget(_ url: URL) {
        target = RequestTarget(url)
        head.url = url
    }

    package func header(_ name: String) -> String? {
        HTTPField.Name(name).flatMap { head.headerFields[$0] }
    }

    /// Sets header `name`, replacing any earlier value.
    package mutating func setHeader(_ name: String, _ value: String) {
        guard let fieldName = HTTPField.Name(name) else { return }
        head.headerFields[fieldName] = value
    }
}

/// A response as the engines read it.
package struct IncomingResponse: Sendable {
    package var status: Int
    package var headers: HTTPFields
    package var body: Data

    /// The secrets the request carried, masked in any provider text an error quotes.
    package var secrets: [String] = []

    package init(status: Int, headers: HTTPFields, body: Data, secrets: [String]) {
        self.status = status
        self.headers = headers
        self.body = body
        self.secrets = secrets
    }

    /// For tests and fuzzers: a response from plain values.
    package init(status: Int, headers: [(String, String)] = [], body: Data = Data()) {
        self.status = status
        var fields = HTTPFields()
        for (name, value) in headers { if let name = HTTPField.Name(name) { fields.append(HTTPField(name: name, value: value)) } }
        self.headers = fields
        self.body = body
    }

    package func header(_ name: String) -> String? {
        HTTPField.Name(name).flatMap { headers[$0] }
    }

    /// The media type without parameters, lowercased: `application/json`.
    package var mediaType: String? {
        // A linear look: HTTPFields' subscript builds a name index first,
        // which costs more than reading the few fields an answer has.
        headers.first(where: { $0.name == .contentType }).map { AuthKit.mediaType(ofContentType: $0.value) }
    }
}

/// The media type of a `Content-Type` value, without parameters, lowercased:
/// `application/json` for `Application/JSON; charset=utf-8` (RFC 9110 §8.3.1).
package func mediaType(ofContentType value: String) -> String {
    // Most values say plainly `application/json`: nothing to cut or fold.
    if value.utf8.allSatisfy({ $0 > 0x20 && $0 != UInt8(ascii: ";") && !(UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) }) {
        return value
    }
    let type = value.utf8.split(separator: UInt8(ascii: ";"), maxSplits: 1, omittingEmptySubsequences: false).first ?? Substring(value).utf8[...]
    return Substring(type).trimmingOptionalWhitespace().lowercased()
}

extension StringProtocol {
    /// Without leading and trailing spaces and tabs: HTTP's optional
    /// whitespace (RFC 9110 §5.6.3). Cheaper than Foundation's
    /// `trimmingCharacters(in:)`, which builds a character set per call.
    package func trimmingOptionalWhitespace() -> SubSequence {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else {
            return self[endIndex...]
        }
        return self[first...last]
    }
}

extension URL {
    /// `scheme://host[:port]`, lowercased, for the origin rule (RFC 6454 §4)
    /// and for messages that must not show a path or query.
    package var origin: String {
        let scheme = (self.scheme ?? "").lowercased()
        // The host as written (percent-encoded): decoding it costs more than
        // the whole comparison, and both sides of a comparison come from here.
        var host = (self.host(percentEncoded: true) ?? "").lowercased()
        if host.utf8.contains(UInt8(ascii: ":")), !host.hasPrefix("[") { host = "[\(host)]" }
        let defaultPort = scheme == "https" ? 443 : (scheme == "http" ? 80 : nil)
        if let port, port != defaultPort { return "\(scheme)://\(host):\(port)" }
        return "\(scheme)://\(host)"
    }

    /// True for `127.0.0.0/8`, `::1` and `localhost`: the hosts a credential may
    /// reach over plain http (RFC 8252 §8.3; RFC 6749 §2.3.1 otherwise requires TLS).
    package var isLoopback: Bool {
        DescriptorValidator.isLoopback(host: host(percentEncoded: true) ?? "")
    }

    /// The URL without its query, fragment and user info, for logs and error
    /// messages. Some providers put secrets in query strings (Instagram's
    /// long-lived token exchange sends `client_secret` and `access_token` in a
    /// GET), so no message prints a query.
    package var redactedForLogs: String {
        guard var components = URLComponents(url: self, resolvingAgainstBaseURL: false) else {
            return "(unprintable URL)"
        }
        let hadQuery = components.percentEncodedQuery != nil
        components.percentEncodedQuery = nil
        components.fragment = nil
        components.user = nil
        components.password = nil
        return (components.string ?? "(unprintable URL)") + (hadQuery ? "?…" : "")
    }
}
