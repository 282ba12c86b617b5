/// Every error an AuthKit product throws: the library, the loopback listener,
/// the sandbox, the web sign-in routes and the PostgreSQL store.
///
/// One type with a ``code`` to switch on, as async-http-client's
/// `HTTPClientError`: a new way to fail is a new code, not a new case that
/// breaks every exhaustive `switch` in the apps using AuthKit.
///
/// ```swift
/// do {
///     let token = try await credentials.accessToken()
/// } catch let error as AuthKitError where error.code == .signInRequired {
///     showSignIn()
/// } catch AuthKitError.Code.timedOut {
///     retryLater()
/// }
/// ```
///
/// The codes say what the caller should do, not only what happened:
/// ``Code/signInRequired`` means "show the sign-in screen";
/// ``Code/notSupported`` means "this provider cannot do that, do not offer
/// it"; ``Code/misuse`` is a programming error to fix in the calling code;
/// ``Code/cancelled`` needs no message at all. The fields
/// (``providerID``, ``url``, ``file``, ``field``, ``httpStatus``, the
/// provider's own ``providerErrorCode``) carry what a program may act on.
///
/// ``description`` says what went wrong and, where there is one, what to
/// do, in the library's terms (``ClientSettings``, ``manualUserAgent(write:readLine:)``); a
/// command line adds its own flags when it reports one. No message contains
/// a client secret, token, PKCE verifier or a URL query.
public struct AuthKitError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What happened, with the typed reason the package throws and switches on.
    package let reason: Reason

    package init(_ reason: Reason) {
        self.reason = reason
    }

    public var description: String { reason.description }

    /// What kind of failure this is.
    public var code: Code {
        switch reason {
        case .invalidFile: .invalidFile
        case .unknownProvider: .unknownProvider
        case .missingSetting: .missingSetting
        case .invalidSetting: .invalidSetting
        case .redirect: .redirectRejected
        case .unusableRedirectURI: .unusableRedirectURI
        case .authorizationFailed: reason.isAccessDenied ? .accessDenied : .authorizationFailed
        case .providerError: .providerError
        case .invalidResponse(_, let problem):
            switch problem {
            case .unexpectedStatus: .unexpectedStatus
            case .unreadableBody: .unreadableBody
            case .missingField: .missingField
            case .invalidField: .invalidField
            case .repeatedField: .repeatedField
            case .noMetadata: .noMetadata
            }
        case .network(_, let failure):
            switch failure {
            case .timedOut: .timedOut
            case .connectionFailed: .connectionFailed
            case .connectionClosed: .connectionClosed
            case .tlsFailure: .tlsFailure
            case .malformedAnswer: .malformedAnswer
            case .transportUnavailable: .transportUnavailable
            case .invalidRequest: .invalidRequest
            }
        case .redirectNotFollowed: .redirectNotFollowed
        case .responseTooLarge: .responseTooLarge
        case .insecureTransport: .insecureTransport
        case .outsideProviderAPI: .outsideProviderAPI
        case .store(_, let problem):
            switch problem {
            case .inaccessible: .storeInaccessible
            case .invalidContents: .storeInvalidContents
            case .notARegularFile: .storeNotARegularFile
            case .writableByOthers: .storeWritableByOthers
            case .notSaved: .storeNotSaved
            case .busy: .storeBusy
            case .locked: .storeLocked
            }
        case .signInRequired: .signInRequired
        case .notSupported: .notSupported
        case .misuse: .misuse
        case .idTokenRejected: .idTokenRejected
        case .cancelled: .cancelled
        case .loopback(let problem):
            switch problem {
            case .portInUse: .portInUse
            case .bindFailed: .cannotListen
            case .timedOut: .redirectTimedOut
            }
        case .sandbox(let problem):
            switch problem {
            case .portInUse: .portInUse
            case .cannotListen: .cannotListen
            }
        case .webSignIn(let problem):
            switch problem {
            case .unknownProvider: .unknownProvider
            case .invalidReturnPath: .invalidReturnPath
            case .attemptNotFound: .attemptNotFound
            case .browserMismatch: .browserMismatch
            case .noIdentity: .noIdentity
            case .notSignedIn: .notSignedIn
            case .csrfRefused: .csrfRefused
            }
        case .encryption(let problem):
            switch problem {
            case .noKey: .noEncryptionKey
            case .wrongKeySize, .invalidKeyID, .unreadable, .repeatedKeyID: .invalidEncryptionKey
            case .unknownKey, .cannotOpen: .cannotOpenStoredValue
            }
        }
    }

    /// The provider descriptor's id, where the error concerns one provider.
    public var providerID: String? {
        switch reason {
        case .unknownProvider(let id, _), .missingSetting(let id, _), .invalidSetting(let id, _, _),
            .outsideProviderAPI(_, let id, _), .notSupported(let id, _), .idTokenRejected(let id, _):
            id
        case .signInRequired(let key, _): key.providerID
        case .webSignIn(.unknownProvider(let id)), .webSignIn(.noIdentity(let id)): id
        default: nil
        }
    }

    /// The URL (without query) or origin of the request that failed, or the
    /// redirect URI that cannot be used.
    public var url: String? {
        switch reason {
        case .network(let url, _), .responseTooLarge(let url, _), .insecureTransport(let url),
            .outsideProviderAPI(let url, _, _), .unusableRedirectURI(let url, _):
            url
        default: nil
        }
    }

    /// The file the error is about: the credential store, or the descriptor
    /// or configuration file with the first problem.
    public var file: String? {
        switch reason {
        case .store(let path, _): path
        case .invalidFile(let issues): issues.first?.file
        default: nil
        }
    }

    /// The field at fault: of the provider's answer (`access_token`,
    /// `data.token`), of the file with the first problem (`token.url`), or
    /// of an options struct given in code (`SandboxOptions.idTokenFault`).
    public var field: String? {
        switch reason {
        case .invalidResponse(_, .missingField(let name, _)), .invalidResponse(_, .invalidField(let name, _)),
            .invalidResponse(_, .repeatedField(let name, _)):
            name
        case .invalidFile(let issues): issues.first?.field
        case .misuse(.invalidOption(let name, _)): name
        default: nil
        }
    }

    /// The credential that must be signed in again, or that was used with
    /// the wrong client.
    public var credential: CredentialKey? {
        switch reason {
        case .signInRequired(let key, _): key
        case .misuse(.credentialOfAnotherProvider(let key, _)), .misuse(.credentialOfAnotherProtocol(let key, _)):
            key
        default: nil
        }
    }

    /// The provider's `error` (RFC 6749 §4.1.2.1, §5.2): `access_denied`,
    /// `invalid_grant`, or a provider's own code mapped by its descriptor.
    public var providerErrorCode: String? { providerResponse?.code }

    /// The provider's `error_description`, as it sent it.
    public var providerErrorDescription: String? { providerResponse?.description }

    /// The provider's `error_uri`, as it sent it (not necessarily a web page).
    public var providerErrorURI: String? { providerResponse?.uri }

    /// The HTTP status the provider answered with, where the error is its answer.
    public var httpStatus: Int? {
        switch reason {
        case .invalidResponse(_, .unexpectedStatus(let status, _)), .redirectNotFollowed(_, let status, _): status
        default: providerResponse?.status
        }
    }

    /// The HTTP status a web app answers a refused web sign-in request
    /// with (404, 400, 401, 403, 502); nil for every other error.
    public var responseStatus: Int? {
        if case .webSignIn(let problem) = reason { return problem.status }
        return nil
    }

    private var providerResponse: ProviderErrorResponse? {
        switch reason {
        case .authorizationFailed(let response), .providerError(_, let response),
            .signInRequired(_, .refreshRefused(let response)):
            response
        default: nil
        }
    }
}

extension Error {
    /// The typed reason, when this is an ``AuthKitError``: what code inside
    /// the package matches (`if case .store(_, .locked)? = error.authKitReason`).
    package var authKitReason: AuthKitError.Reason? { (self as? AuthKitError)?.reason }
}

// The package builds an error as it built the enum's cases before
// (`throw AuthKitError.network(url:reason:)`): one function per reason.
extension AuthKitError {
    package static func invalidFile(_ issues: [FileIssue]) -> Self { Self(.invalidFile(issues)) }
    package static func unknownProvider(id: String, suggestions: [String]) -> Self {
        Self(.unknownProvider(id: id, suggestions: suggestions))
    }
    package static func missingSetting(providerID: String, _ setting: Setting) -> Self {
        Self(.missingSetting(providerID: providerID, setting))
    }
    package static func invalidSetting(providerID: String, _ setting: Setting, problem: String) -> Self {
        Self(.invalidSetting(providerID: providerID, setting, problem: problem))
    }
    package static func redirect(_ error: RedirectError) -> Self { Self(.redirect(error)) }
    package static func unusableRedirectURI(uri: String, reason: String) -> Self {
        Self(.unusableRedirectURI(uri: uri, reason: reason))
    }
    package static func authorizationFailed(_ response: ProviderErrorResponse) -> Self {
        Self(.authorizationFailed(response))
    }
    package static func providerError(step: FlowStep, _ response: ProviderErrorResponse) -> Self {
        Self(.providerError(step: step, response))
    }
    package static func invalidResponse(step: FlowStep, reason: ResponseProblem) -> Self {
        Self(.invalidResponse(step: step, reason: reason))
    }
    package static func network(url: String, reason: NetworkFailure) -> Self {
        Self(.network(url: url, reason: reason))
    }
    package static func redirectNotFollowed(step: FlowStep, status: Int, location: String) -> Self {
        Self(.redirectNotFollowed(step: step, status: status, location: location))
    }
    package static func responseTooLarge(url: String, limit: Int) -> Self {
        Self(.responseTooLarge(url: url, limit: limit))
    }
    package static func insecureTransport(url: String) -> Self { Self(.insecureTransport(url: url)) }
    package static func outsideProviderAPI(url: String, providerID: String, origins: [String]) -> Self {
        Self(.outsideProviderAPI(url: url, providerID: providerID, origins: origins))
    }
    package static func store(path: String, reason: StoreProblem) -> Self { Self(.store(path: path, reason: reason)) }
    package static func signInRequired(_ key: CredentialKey, reason: SignInReason) -> Self {
        Self(.signInRequired(key, reason: reason))
    }
    package static func notSupported(providerID: String, _ capability: Capability) -> Self {
        Self(.notSupported(providerID: providerID, capability))
    }
    package static func misuse(_ misuse: Misuse) -> Self { Self(.misuse(misuse)) }
    package static func idTokenRejected(providerID: String, reason: IDTokenProblem) -> Self {
        Self(.idTokenRejected(providerID: providerID, reason: reason))
    }
    package static let cancelled = Self(.cancelled)
    package static func loopback(_ problem: LoopbackProblem) -> Self { Self(.loopback(problem)) }
    package static func sandbox(_ problem: SandboxProblem) -> Self { Self(.sandbox(problem)) }
    package static func webSignIn(_ problem: WebSignInProblem) -> Self { Self(.webSignIn(problem)) }
    package static func encryption(_ problem: EncryptionProblem) -> Self { Self(.encryption(problem)) }

    /// What went wrong, without the closing advice that ``description``
    /// words in the library's terms (see ``Reason/summary``).
    package var summary: String { reason.summary }
    /// Whether this is the provider's own answer to `step`.
    package func isProvidersAnswer(to step: FlowStep) -> Bool { reason.isProvidersAnswer(to: step) }
}
