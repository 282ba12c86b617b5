import HTTPTypes

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A request as the engines build it: the head, the body, and how the URL may
/// appear in logs and errors.
package struct OutgoingRequest: Sendable {
    /// Every part, in one reference: a request is handed through several
    /// layers (the transport's hops, a redirect's, the authorizing closure),
    /// and as five stored values each copy retained and released each one
    /// (6% of a refresh's library work, `perf`). Copied on write: changed
    /// only through ``unique``, when no other value holds it, so no two
    /// threads ever see one storage change (why `@unchecked` is sound).
    private final class Storage: @unchecked Sendable {
        var head: HTTPRequest
        var target: RequestTarget
        var body: Data?
        var displayURL: String
        var secrets: [String]

        init(head: HTTPRequest, target: RequestTarget, body: Data?, displayURL: String, secrets: [String]) {
            self.head = head
            self.target = target
            self.body = body
            self.displayURL = displayURL
            self.secrets = secrets
        }
    }

    private var storage: Storage

    /// Which storage this value uses (for tests of its copy on write).
    package var storageIdentity: ObjectIdentifier { ObjectIdentifier(storage) }

    /// The storage, this value's own before it changes.
    private var unique: Storage {
        mutating get {
            if !isKnownUniquelyReferenced(&storage) {
                storage = Storage(
                    head: storage.head, target: storage.target, body: storage.body, displayURL: storage.displayURL,
                    secrets: storage.secrets)
            }
            return storage
        }
    }

    /// Method, URL and header fields. Its URL changes only through
    /// ``retarget(_:)``: a transport that takes the URL parsed
    /// (``ParsedURLHTTPClient``) is handed the target's, not the head's.
    package var head: HTTPRequest {
        get { storage.head }
        _modify { yield &unique.head }
    }
    /// Where `head` goes, with its origin worked out. Change it with ``retarget(_:)``.
    package var target: RequestTarget { storage.target }
    package var body: Data? {
        get { storage.body }
        _modify { yield &unique.body }
    }
    /// The URL without its query (`?…`), or the descriptor's template for a
    /// URL with a token in its path (Qiita's revocation): never a secret.
    package var displayURL: String {
        get { storage.displayURL }
        _modify { yield &unique.displayURL }
    }
    /// Every secret this request carries (client secret and its Basic form,
    /// code, verifier, tokens): masked in any provider text an error quotes.
    package var secrets: [String] {
        get { storage.secrets }
        _modify { yield &unique.secrets }
    }

    package init(method: HTTPRequest.Method, url: URL, displayURL: String? = nil) {
        self.init(method: method, target: RequestTarget(url), displayURL: displayURL)
    }

    package init(method: HTTPRequest.Method, target: RequestTarget, displayURL: String? = nil) {
        storage = Storage(
            head: target.head(method), target: target, body: nil,
            displayURL: displayURL ?? target.url.redactedForLogs, secrets: [])
    }

    /// A caller's request, head and all, to `url` (its head's URL, read once).
    package init(head: HTTPRequest, url: URL, body: Data?) {
        storage = Storage(
            head: head, target: RequestTarget(oneRequestTo: url), body: body, displayURL: url.redactedForLogs,
            secrets: [])
    }

    package var url: URL { target.url }

    /// Sends the request to `url` instead (a redirect's target, or where the
    /// caller's `Authenticator` moved it), and names it by that URL from now on.
    package mutating func retarget(_ url: URL) {
        let storage = unique
        storage.target = RequestTarget(oneRequestTo: url)
        storage.head.url = url
        storage.displayURL = url.redactedForLogs
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
