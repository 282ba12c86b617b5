import HTTPTypes

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

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
    /// GET and POST heads, kept made for an endpoint sent to again and
    /// again (setting a method builds and checks a pseudo-header field each
    /// time); nil for a URL used once.
    private let get: HTTPRequest?
    private let post: HTTPRequest?

    /// For an endpoint: the heads of GET and POST are made once.
    package init(_ url: URL) {
        self.init(url, keepingHeads: true)
    }

    /// For a URL one request goes to (a caller's, a redirect's): nothing made
    /// that the request does not use.
    package init(oneRequestTo url: URL) {
        self.init(url, keepingHeads: false)
    }

    private init(_ url: URL, keepingHeads: Bool) {
        self.url = url
        self.origin = url.origin
        self.allowsCredentials = url.allowsCredentials
        self.hasHost = url.host(percentEncoded: true) != nil
        self.get = keepingHeads ? HTTPRequest(method: .get, url: url) : nil
        self.post = keepingHeads ? HTTPRequest(method: .post, url: url) : nil
    }

    /// A head for `method` to this URL, without header fields.
    func head(_ method: HTTPRequest.Method) -> HTTPRequest {
        switch method {
        case .get: if let get { return get }
        case .post: if let post { return post }
        default: break
        }
        return HTTPRequest(method: method, url: url)
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

    /// https, or a loopback host: where a credential may be sent (RFC 6749
    /// §2.3.1, RFC 6750 §5.3, RFC 8252 §8.3; RFC 5849 §3.4.4 for PLAINTEXT).
    package var allowsCredentials: Bool { scheme?.lowercased() == "https" || isLoopback }

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
        let query = query(percentEncoded: true)
        let fragment = fragment(percentEncoded: true)
        if baseURL == nil, user(percentEncoded: true) == nil, password(percentEncoded: true) == nil {
            // Nothing to leave out (an API request, a token endpoint): the URL as it is.
            let text = absoluteString
            if query == nil, fragment == nil { return text }
            // Cut where the query or the fragment starts: in a URL parsed
            // whole, the first `?` or `#` is that start (RFC 3986 §3: neither
            // stands raw in a scheme, an authority without user info, or a
            // path). Taking the URL apart and putting it together again
            // (`URLComponents`) cost 0.8 µs, a tenth of an API request's
            // library work (the `dpop-request` row's bearer side, perf).
            guard let cut = text.utf8.firstIndex(where: { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") })
            else { return redactedThroughComponents }
            let kept = String(text[..<cut])
            return query != nil ? kept + "?…" : kept
        }
        return redactedThroughComponents
    }

    /// ``redactedForLogs`` by taking the URL apart: for a relative URL, and
    /// for one with user info, which is left out too.
    package var redactedThroughComponents: String {
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
