// The typed reasons of three of AuthKitError's reasons (network, response,
// store). The package switches on them (`case .network(_, .timedOut)`);
// a caller outside it reads the same distinction as a code
// (`AuthKitError.Code.timedOut`), derived from them. Each case carries the
// words a person reads. Inside the package each is built from a `Kind` and
// its words, so a throw site reads as one line.

extension AuthKitError {
    /// Why a request did not complete: ``AuthKitError``.
    package enum NetworkFailure: Error, Sendable, Hashable, CustomStringConvertible {
        /// No complete answer within the time allowed (the request's deadline, or no data for a while).
        case timedOut(String)
        /// No connection: the host was not found, refused it, or could not be reached.
        case connectionFailed(String)
        /// The connection ended before the whole answer arrived.
        case connectionClosed(String)
        /// TLS failed (a certificate that could not be verified, a failed handshake); nothing was sent.
        case tlsFailure(String)
        /// What came back is no HTTP answer AuthKit reads: a broken head, an interim status as the final one.
        case malformedAnswer(String)
        /// The transport itself is missing or unusable: libcurl not installed, no thread for the transfer.
        case transportUnavailable(String)
        /// The request could not be sent as built (no absolute URL).
        case invalidRequest(String)

        /// What happened, in words; never a secret or a URL's query.
        package var detail: String {
            switch self {
            case .timedOut(let detail), .connectionFailed(let detail), .connectionClosed(let detail),
                .tlsFailure(let detail),
                .malformedAnswer(let detail), .transportUnavailable(let detail), .invalidRequest(let detail):
                detail
            }
        }

        package var description: String { detail }

        package enum Kind: Sendable, Hashable {
            case timedOut, connectionFailed, connectionClosed, tlsFailure, malformedAnswer, transportUnavailable,
                invalidRequest
        }

        package init(_ kind: Kind, _ detail: String) {
            switch kind {
            case .timedOut: self = .timedOut(detail)
            case .connectionFailed: self = .connectionFailed(detail)
            case .connectionClosed: self = .connectionClosed(detail)
            case .tlsFailure: self = .tlsFailure(detail)
            case .malformedAnswer: self = .malformedAnswer(detail)
            case .transportUnavailable: self = .transportUnavailable(detail)
            case .invalidRequest: self = .invalidRequest(detail)
            }
        }

        package var kind: Kind {
            switch self {
            case .timedOut: .timedOut
            case .connectionFailed: .connectionFailed
            case .connectionClosed: .connectionClosed
            case .tlsFailure: .tlsFailure
            case .malformedAnswer: .malformedAnswer
            case .transportUnavailable: .transportUnavailable
            case .invalidRequest: .invalidRequest
            }
        }
    }

    /// What was wrong with an answer: ``AuthKitError``.
    /// A field is named by its name or path in the answer (`access_token`,
    /// `data.token`); its value, which may be a secret, never.
    package enum ResponseProblem: Error, Sendable, Hashable, CustomStringConvertible {
        /// An error status (the first value) without an error AuthKit recognises in the body.
        case unexpectedStatus(Int, detail: String)
        /// The body is not what the step reads: not JSON or form data, malformed, truncated, empty.
        case unreadableBody(String)
        /// A field the step needs is absent.
        case missingField(String, detail: String)
        /// A field has another type or value than the protocol allows.
        case invalidField(String, detail: String)
        /// A field appears more than once.
        case repeatedField(String, detail: String)
        /// No server metadata where RFC 8414 §3 or OpenID Connect Discovery §4 puts it.
        case noMetadata(String)

        /// What was wrong, in words.
        package var detail: String {
            switch self {
            case .unreadableBody(let detail), .noMetadata(let detail): detail
            case .unexpectedStatus(_, let detail), .missingField(_, let detail), .invalidField(_, let detail),
                .repeatedField(_, let detail):
                detail
            }
        }

        package var description: String { detail }

        package enum Kind: Sendable, Hashable {
            case unexpectedStatus(Int)
            case unreadableBody
            case missingField(String)
            case invalidField(String)
            case repeatedField(String)
            case noMetadata
        }

        package init(_ kind: Kind, _ detail: String) {
            switch kind {
            case .unexpectedStatus(let status): self = .unexpectedStatus(status, detail: detail)
            case .unreadableBody: self = .unreadableBody(detail)
            case .missingField(let name): self = .missingField(name, detail: detail)
            case .invalidField(let name): self = .invalidField(name, detail: detail)
            case .repeatedField(let name): self = .repeatedField(name, detail: detail)
            case .noMetadata: self = .noMetadata(detail)
            }
        }

        package var kind: Kind {
            switch self {
            case .unexpectedStatus(let status, _): .unexpectedStatus(status)
            case .unreadableBody: .unreadableBody
            case .missingField(let name, _): .missingField(name)
            case .invalidField(let name, _): .invalidField(name)
            case .repeatedField(let name, _): .repeatedField(name)
            case .noMetadata: .noMetadata
            }
        }
    }

    /// Why a credential store could not be used: ``AuthKitError``.
    /// Each case's words say what to do.
    package enum StoreProblem: Error, Sendable, Hashable, CustomStringConvertible {
        /// The store cannot be read or locked: permissions, an I/O error, a Keychain status.
        case inaccessible(String)
        /// Not a store AuthKit can read (invalid JSON, a later format, too large); left untouched.
        case invalidContents(String)
        /// Something other than a regular file stands there: a symbolic link, a directory, a pipe.
        case notARegularFile(String)
        /// Another user could have written it or its directory, so it is not used.
        case writableByOthers(String)
        /// Nothing could be saved: the directory cannot be made or written, the disk is full, a write failed.
        case notSaved(String)
        /// Another process holds the store, or a sign-in to the same account is in progress.
        case busy(String)
        /// The store is locked until the user unlocks it (a device not yet
        /// unlocked since it started, a keychain or Secret Service keyring
        /// whose unlock prompt could not show or was dismissed): nothing
        /// stored is lost, and the same call works once it is unlocked. Not
        /// "no credential": an app that took it so would sign the user out.
        case locked(String)

        /// What is wrong and what to do, in words.
        package var detail: String {
            switch self {
            case .inaccessible(let detail), .invalidContents(let detail), .notARegularFile(let detail),
                .writableByOthers(let detail),
                .notSaved(let detail), .busy(let detail), .locked(let detail):
                detail
            }
        }

        package var description: String { detail }

        package enum Kind: Sendable, Hashable {
            case inaccessible, invalidContents, notARegularFile, writableByOthers, notSaved, busy, locked
        }

        package init(_ kind: Kind, _ detail: String) {
            switch kind {
            case .inaccessible: self = .inaccessible(detail)
            case .invalidContents: self = .invalidContents(detail)
            case .notARegularFile: self = .notARegularFile(detail)
            case .writableByOthers: self = .writableByOthers(detail)
            case .notSaved: self = .notSaved(detail)
            case .busy: self = .busy(detail)
            case .locked: self = .locked(detail)
            }
        }

        package var kind: Kind {
            switch self {
            case .inaccessible: .inaccessible
            case .invalidContents: .invalidContents
            case .notARegularFile: .notARegularFile
            case .writableByOthers: .writableByOthers
            case .notSaved: .notSaved
            case .busy: .busy
            case .locked: .locked
            }
        }
    }
}
