extension AuthKitError {
    /// What kind of failure an ``AuthKitError`` is: compare with `==`,
    /// `switch` over it (with a `default`: codes are added as AuthKit learns
    /// new ways to fail), or catch one directly (`catch
    /// AuthKitError.Code.storeLocked`).
    ///
    /// The codes are a set a caller can rely on; the words of
    /// ``AuthKitError/description`` may change. docs/library.md, "Errors",
    /// lists them by what a caller does about each.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }

        /// The code's name, as written here (`storeLocked`).
        public var description: String { name }

        /// Whether `error` is an ``AuthKitError`` with this code: what lets
        /// `catch AuthKitError.Code.timedOut` match.
        public static func ~= (code: Code, error: any Error) -> Bool {
            (error as? AuthKitError)?.code == code
        }

        // Configuration: fix the file, the settings or the call.

        /// A provider descriptor or configuration file has problems; ``AuthKitError/file`` and ``AuthKitError/field`` name the first.
        public static let invalidFile = Code("invalidFile")
        /// No provider descriptor (or, in a web app, no configured client) has this id.
        public static let unknownProvider = Code("unknownProvider")
        /// A required setting (client id, client secret, a host placeholder, a private key) has no value.
        public static let missingSetting = Code("missingSetting")
        /// A setting's value cannot be used (a placeholder that is no host, an unreadable private key).
        public static let invalidSetting = Code("invalidSetting")
        /// The redirect URI cannot be used for this sign-in (the provider refuses its scheme, the user agent cannot receive it).
        public static let unusableRedirectURI = Code("unusableRedirectURI")
        /// The calling code used the API in a way it does not allow: a programming error.
        public static let misuse = Code("misuse")
        /// The provider, as its descriptor describes it, offers no way to do this: do not offer it.
        public static let notSupported = Code("notSupported")

        // The sign-in.

        /// The user or the caller cancelled; nothing to report.
        public static let cancelled = Code("cancelled")
        /// The user declined at the provider (`access_denied`, RFC 6749 §4.1.2.1).
        public static let accessDenied = Code("accessDenied")
        /// The provider refused the authorization request with another `error`.
        public static let authorizationFailed = Code("authorizationFailed")
        /// The redirect did not answer this attempt (another `state`, another issuer, no code).
        public static let redirectRejected = Code("redirectRejected")
        /// The provider's ID token failed a check of OpenID Connect Core §3.1.3.7; nothing was stored.
        public static let idTokenRejected = Code("idTokenRejected")
        /// The credential cannot be used or renewed: show the sign-in.
        public static let signInRequired = Code("signInRequired")

        // The provider's answer.

        /// An endpoint answered with an error (RFC 6749 §5.2): ``AuthKitError/providerErrorCode``.
        public static let providerError = Code("providerError")
        /// An error status without an error AuthKit recognises: ``AuthKitError/httpStatus``.
        public static let unexpectedStatus = Code("unexpectedStatus")
        /// The answer's body is not what the step reads (not JSON, truncated, empty).
        public static let unreadableBody = Code("unreadableBody")
        /// A field the step needs is absent: ``AuthKitError/field``.
        public static let missingField = Code("missingField")
        /// A field has another type or value than the protocol allows.
        public static let invalidField = Code("invalidField")
        /// A field appears more than once.
        public static let repeatedField = Code("repeatedField")
        /// No server metadata where RFC 8414 §3 or OpenID Connect Discovery §4 puts it.
        public static let noMetadata = Code("noMetadata")
        /// The answer was larger than the request allows.
        public static let responseTooLarge = Code("responseTooLarge")
        /// A redirect that was not followed (never with client credentials, never from https to http).
        public static let redirectNotFollowed = Code("redirectNotFollowed")

        // The request did not complete: worth retrying later.

        /// No complete answer within the time allowed.
        public static let timedOut = Code("timedOut")
        /// No connection: the host was not found, refused it, or could not be reached.
        public static let connectionFailed = Code("connectionFailed")
        /// The connection ended before the whole answer arrived.
        public static let connectionClosed = Code("connectionClosed")
        /// TLS failed (a certificate that could not be verified); nothing was sent.
        public static let tlsFailure = Code("tlsFailure")
        /// What came back is no HTTP answer AuthKit reads.
        public static let malformedAnswer = Code("malformedAnswer")
        /// The transport is missing or unusable (libcurl not installed).
        public static let transportUnavailable = Code("transportUnavailable")
        /// The request could not be sent as built (no absolute URL).
        public static let invalidRequest = Code("invalidRequest")

        // Where a credential may go.

        /// A credential would go over plain http to a host that is not this machine (RFC 6750 §5.3).
        public static let insecureTransport = Code("insecureTransport")
        /// A credential would go outside the provider's API (an origin its descriptor does not list).
        public static let outsideProviderAPI = Code("outsideProviderAPI")

        // The credential store: ``AuthKitError/file`` says which.

        /// The store cannot be read or locked (permissions, an I/O error, a keychain status).
        public static let storeInaccessible = Code("storeInaccessible")
        /// Not a store AuthKit can read (invalid JSON, a later format); left untouched.
        public static let storeInvalidContents = Code("storeInvalidContents")
        /// Something other than a regular file stands there (a symbolic link, a directory).
        public static let storeNotARegularFile = Code("storeNotARegularFile")
        /// Another user could have written the store or its directory, so it is not used.
        public static let storeWritableByOthers = Code("storeWritableByOthers")
        /// Nothing could be saved (no directory, a full disk, a failed write).
        public static let storeNotSaved = Code("storeNotSaved")
        /// Another process holds the store, or a sign-in to the same account is in progress.
        public static let storeBusy = Code("storeBusy")
        /// The store is locked until the user unlocks it: nothing is lost, and
        /// the same call works once it is unlocked. Not "no credential": an
        /// app that took it so would sign the user out.
        public static let storeLocked = Code("storeLocked")

        // Listening: the loopback listener (AuthKitLoopback) and the sandbox (AuthKitSandbox).

        /// The port is taken by another program.
        public static let portInUse = Code("portInUse")
        /// Listening failed for another reason (no IPv6, a port below 1024 without privileges).
        public static let cannotListen = Code("cannotListen")
        /// No genuine redirect reached the loopback listener within its timeout.
        public static let redirectTimedOut = Code("redirectTimedOut")

        // A web sign-in request (AuthKitServer): ``AuthKitError/responseStatus`` is the status to answer with.

        /// The return path is not a path on this site (an open redirect, RFC 9700 §4.11).
        public static let invalidReturnPath = Code("invalidReturnPath")
        /// The callback's `state` names no waiting sign-in: expired, already finished, or never started here.
        public static let attemptNotFound = Code("attemptNotFound")
        /// The callback came to another browser than the one that started the sign-in.
        public static let browserMismatch = Code("browserMismatch")
        /// The sign-in said nothing of who signed in (no verified ID token, no `whoAmI` call).
        public static let noIdentity = Code("noIdentity")
        /// The request needs a signed-in session and has none.
        public static let notSignedIn = Code("notSignedIn")
        /// A state-changing request without the session's CSRF token, or from another origin.
        public static let csrfRefused = Code("csrfRefused")

        // Stored tokens' encryption (AuthKitPostgres).

        /// No encryption key was given; tokens are never stored in the clear.
        public static let noEncryptionKey = Code("noEncryptionKey")
        /// A key or key list cannot be used (its size, its id, its writing).
        public static let invalidEncryptionKey = Code("invalidEncryptionKey")
        /// A stored value does not open: altered, moved, or sealed under a key this process was not given.
        public static let cannotOpenStoredValue = Code("cannotOpenStoredValue")
    }
}
