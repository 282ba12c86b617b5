/// Why a request did not complete, for ``AuthKitError/network(url:reason:)``:
/// a ``kind`` to switch on (retry a timeout, report a certificate), and the
/// detail a person reads. Shaped like async-http-client's `HTTPClientError`:
/// the cases are a closed set a caller can rely on; the wording may change.
extension AuthKitError {
public struct NetworkFailure: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Kind: Sendable, Hashable, CaseIterable {
        /// No complete answer within the time allowed (a deadline, or no data for a while).
        case timedOut
        /// No connection: the host was not found, refused it, or could not be reached.
        case connectionFailed
        /// The connection ended before the whole answer arrived.
        case connectionClosed
        /// TLS failed: the certificate could not be verified, or the handshake failed. Nothing was sent.
        case tlsFailure
        /// What came back is not an HTTP answer AuthKit reads (a broken head, an interim status as final, a protocol switch).
        case malformedAnswer
        /// The HTTP transport itself is missing or unusable (libcurl not installed, too old).
        case transportUnavailable
        /// The request could not be sent as built (no absolute URL).
        case invalidRequest
    }

    public let kind: Kind
    /// What happened, in words; never a secret or a URL's query.
    public let detail: String

    package init(_ kind: Kind, _ detail: String) {
        self.kind = kind
        self.detail = detail
    }

    public var description: String { detail }
}

/// What was wrong with an answer, for ``AuthKitError/invalidResponse(step:reason:)``.
public struct ResponseProblem: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Kind: Sendable, Hashable {
        /// An error status without an error AuthKit recognises in the body.
        case unexpectedStatus(Int)
        /// The body is not what the step reads: not JSON or form data, malformed, truncated, empty.
        case unreadableBody
        /// A field the step needs is absent (its name or path).
        case missingField(String)
        /// A field has another type or value than the protocol gives it (its name or path).
        case invalidField(String)
        /// A field appears more than once.
        case repeatedField(String)
        /// No server metadata where RFC 8414 or OpenID Connect Discovery puts it.
        case noMetadata
    }

    public let kind: Kind
    /// What was wrong, in words; a value that may be a secret is never quoted.
    public let detail: String

    package init(_ kind: Kind, _ detail: String) {
        self.kind = kind
        self.detail = detail
    }

    public var description: String { detail }
}

/// Why a credential store could not be used, for ``AuthKitError/store(path:reason:)``.
public struct StoreProblem: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Kind: Sendable, Hashable {
        /// The store cannot be read or locked: permissions, an I/O error, a Keychain status.
        case inaccessible
        /// The file is not a credentials file AuthKit can read (invalid JSON, a later format, too large); it is left untouched.
        case invalidContents
        /// Something other than a regular file stands at the path: a symbolic link, a directory, a pipe.
        case notARegularFile
        /// Another user could have written the file or its directory, so it is not used.
        case writableByOthers
        /// Nothing could be saved: the directory cannot be made or written, the disk is full, a write failed.
        case notSaved
        /// Another process holds the store, or a sign-in to the same account is in progress.
        case busy
    }

    public let kind: Kind
    /// What is wrong and what to do, in words.
    public let detail: String

    package init(_ kind: Kind, _ detail: String) {
        self.kind = kind
        self.detail = detail
    }

    public var description: String { detail }
}
}
