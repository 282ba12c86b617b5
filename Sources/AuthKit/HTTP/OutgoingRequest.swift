import HTTPTypes

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A request as the engines build it: the head, the body, and how the URL may
/// appear in logs and errors.
package struct OutgoingRequest: Sendable {
    /// Method, URL and header fields. Its URL changes only through
    /// ``retarget(_:)``: a transport that takes the URL parsed
    /// (``ParsedURLHTTPClient``) is handed the target's, not the head's.
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

    /// A caller's request, head and all, to `url` (its head's URL, read once).
    package init(head: HTTPRequest, url: URL, body: Data?) {
        self.head = head
        self.target = RequestTarget(oneRequestTo: url)
        self.body = body
        self.displayURL = url.redactedForLogs
    }

    package var url: URL { target.url }

    /// Sends the request to `url` instead (a redirect's target, or where the
    /// caller's `Authenticator` moved it), and names it by that URL from now on.
    package mutating func retarget(_ url: URL) {
        target = RequestTarget(oneRequestTo: url)
        head.url = url
        displayURL = url.redactedForLogs
    }

    package func header(_ name: String) -> String? {
        HTTPField.Name(name).flatMap { head.headerFields[$0] }
    }

    /// Sets header `name`, replacing any earlier value.
    package mutating func setHeader(_ name: String, _ value: String) {
        guard let fieldName = HTTPField.Name(name) else { return }
        head.headerFields[fieldName] = value
    }

    /// AuthKit's `User-Agent`, unless the caller set one (curl's `-A`, `-H
    /// 'User-Agent: …'`). Appended, as none is there: assigning would search
    /// the fields again.
    package mutating func addUserAgent() {
        if !head.headerFields.contains(.userAgent) { head.headerFields.append(.authKitUserAgent) }
    }

    /// Removes every header named `name`.
    package mutating func removeHeader(_ name: String) {
        guard let fieldName = HTTPField.Name(name) else { return }
        head.headerFields[fieldName] = nil
    }
}
