#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A device authorization in progress (RFC 8628 §3.2): the code the user
/// enters at ``verificationURI`` on another device, while this one polls.
///
/// Show ``userCode`` and ``verificationURI`` (or offer
/// ``verificationURIComplete``, which carries the code, as a link or QR code);
/// keep ``deviceCode`` to yourself: it is what the token is issued against.
public struct DeviceAuthorization: Sendable, Hashable, CustomStringConvertible, CustomReflectable {
    /// The provider it was started with.
    public var providerID: String
    /// Identifies this authorization at the token endpoint; a secret of the device.
    public var deviceCode: String
    /// What the user types at ``verificationURI``.
    public var userCode: String
    /// Where the user goes to enter ``userCode``.
    public var verificationURI: URL
    /// ``verificationURI`` with the code in it, when the provider gives one.
    public var verificationURIComplete: URL?
    /// When the codes stop working.
    public var expiresAt: Date
    /// Seconds between polls (RFC 8628 §3.2: default 5).
    public var interval: TimeInterval
    /// Scopes requested, used when the token response does not list the granted ones.
    public var scopes: [String]
    /// The key the polls prove, when the descriptor binds tokens to one (DPoP, RFC 9449).
    package var proofKey: ProofKey?
    /// The client id and token endpoint it was started with: polled by
    /// another client of the same descriptor (another `{host}`, say), the
    /// device code went to that client's token endpoint (RFC 9700 §4.4's
    /// mix-up), as a code grant's attempt is refused for
    /// (``PendingAuthorization/clientID``).
    package var clientID: String?
    package var tokenEndpoint: String?

    public var description: String {
        "DeviceAuthorization(provider: \(providerID), user code: \(userCode), verification URI: \(verificationURI.redactedForLogs), device code: ••••)"
    }

    /// `dump` and `debugPrint` show the description: the device code (a
    /// public client's token, polled for with it alone) and the DPoP key
    /// stay out of a debug log, as ``Credential``'s and ``PendingAuthorization``'s do.
    public var customMirror: Mirror { Mirror(self, children: ["description": description]) }

    init(
        providerID: String, deviceCode: String, userCode: String, verificationURI: URL, verificationURIComplete: URL?,
        expiresAt: Date, interval: TimeInterval, scopes: [String]
    ) {
        self.providerID = providerID
        self.deviceCode = deviceCode
        self.userCode = userCode
        self.verificationURI = verificationURI
        self.verificationURIComplete = verificationURIComplete
        self.expiresAt = expiresAt
        self.interval = interval
        self.scopes = scopes
    }

    /// The longest user code accepted: the user types it, and authkit shows
    /// it whole on an 80-column line. RFC 8628 §6.1's example is 8 characters.
    package static let longestUserCode = 40

    /// The longest verification URI shown or opened: real ones are short
    /// (`https://github.com/login/device`), and a 200 KB one filled the terminal.
    static let longestPage = 2048

    /// Reads the device authorization response (RFC 8628 §3.2), refusing
    /// what a hostile server could use against the user or the client:
    /// - the verification URIs are pages of the authorization server, which
    ///   the user (or authkit, in a browser) opens: https, or http on
    ///   loopback for test servers, as for every endpoint; anything else
    ///   (`file:`, a scheme that starts another program) is neither shown nor opened;
    /// - `expires_in` and `interval` are counts of seconds held to the rule
    ///   for token lifetimes (`TokenResponseParser.lifetime`): a 1e300 or
    ///   "inf" would overflow the wait;
    /// - the user code is what a person types (RFC 8628 §6.1 asks for a
    ///   short one): one of more than ``longestUserCode`` characters, or
    ///   holding a control character, could be neither shown whole nor typed;
    /// - a required member that is there but empty (or not text) is named
    ///   as such, not as missing;
    /// - no error repeats the device code, and a user code or verification
    ///   URI that repeats a secret the request carried (the client secret)
    ///   is neither shown nor opened;
    /// - a `verification_uri_complete` on another origin than
    ///   `verification_uri` is left out: it is the one a browser opens, and
    ///   the user would read the other.
    /// - Throws: ``AuthKitError`` naming the field.
    /// - Parameter endpoint: the device authorization endpoint the answer
    ///   came from: a page on this machine over plain http is taken only
    ///   from an endpoint on this machine (a test server). From a remote
    ///   server (one behind a proxy that leaks its back end's
    ///   `http://localhost:8080/…`), it would send the user, code in hand,
    ///   to whatever another user of this machine runs on that port.
    package init(
        answer members: [String: JSONValue], providerID: String, sentAt: Date, scopes: [String], secrets: [String] = [],
        endpoint: URL? = nil
    ) throws {
        func text(_ name: String) -> String? { members[name]?.scalarText.flatMap { $0.isEmpty ? nil : $0 } }
        func webPage(_ text: String?) -> URL? {
            // A user name shown before the host (https://github.com@evil.example/…)
            // or a percent-encoded one (github.com%2eevil.example, which a
            // browser reads as github.com.evil.example) makes the page look
            // like another's: refused, as in endpoints.
            guard let text, text.utf8.count <= Self.longestPage, DescriptorValidator.hostProblem(in: text) == nil,
                let url = URL(string: text), url.host?.isEmpty == false, url.user == nil, url.password == nil
            else { return nil }
            let scheme = url.scheme?.lowercased()
            return scheme == "https" || (scheme == "http" && url.isLoopback && endpoint?.isLoopback != false)
                ? url : nil
        }
        func seconds(_ text: String?) -> Double? {
            TokenResponseParser.lifetime(text.flatMap(TokenResponseParser.decimal))
        }
        // A value the server put in its answer, quoted, could repeat what it
        // was sent (the client secret): masked as a token answer's words are.
        func refused(_ kind: AuthKitError.ResponseProblem.Kind, _ reason: String) -> AuthKitError {
            .invalidResponse(step: .deviceAuthorization, reason: .init(kind, SecretMask(secrets).apply(reason)))
        }
        // RFC 8628 names it verification_uri; some servers spell it verification_url.
        let verificationText = text("verification_uri") ?? text("verification_url")
        guard let deviceCode = text("device_code"), let userCode = text("user_code"), verificationText != nil,
            text("expires_in") != nil
        else {
            let found: [(name: String, given: Bool, usable: Bool)] = [
                ("device_code", members["device_code"] != nil, text("device_code") != nil),
                ("user_code", members["user_code"] != nil, text("user_code") != nil),
                (
                    "verification_uri", members["verification_uri"] != nil || members["verification_url"] != nil,
                    verificationText != nil
                ),
                ("expires_in", members["expires_in"] != nil, text("expires_in") != nil),
            ]
            let missing = found.filter { !$0.given }.map(\.name)
            let empty = found.filter { $0.given && !$0.usable }.map(\.name)
            let problems =
                (missing.isEmpty ? [] : ["it lacks \(missing.joined(separator: ", "))"])
                + (empty.isEmpty
                    ? []
                    : ["its \(empty.joined(separator: ", ")) \(empty.count == 1 ? "is" : "are") empty or not text"])
            let present = members.keys.sorted().map { "'\(DisplayText.sanitized($0, limit: 40))'" }.joined(
                separator: ", ")
            throw refused(
                missing.isEmpty ? .invalidField(empty[0]) : .missingField(missing[0]),
                "\(problems.joined(separator: ", and ")); RFC 8628 §3.2 requires each (fields present: \(present.isEmpty ? "none" : present))"
            )
        }
        // A zero-width or no-break space shows as nothing, or as a space,
        // and cannot be typed as it is: as unusable as a control character.
        func untypeable(_ scalar: Unicode.Scalar) -> Bool {
            [.control, .format].contains(scalar.properties.generalCategory)
                || (scalar.properties.isWhitespace && scalar != " ")
        }
        // Counted as it is shown (cut at this many scalars): a code of
        // decomposed letters fit as Characters and was shown cut.
        let length = userCode.unicodeScalars.count
        guard length <= Self.longestUserCode, !userCode.unicodeScalars.contains(where: untypeable) else {
            throw refused(
                .invalidField("user_code"),
                """
                its user_code (\(length) characters\(length > Self.longestUserCode ? "" : ", one of them a control or invisible character")) \
                is not a code a person can type: at most \(Self.longestUserCode) characters, none of them a control or invisible character (RFC 8628 §6.1)
                """)
        }
        let complete = text("verification_uri_complete")
        for (name, value) in [
            ("user_code", userCode), ("verification_uri", verificationText), ("verification_uri_complete", complete),
        ] {
            // The device code too: with it and the client id, whoever saw
            // the screen or the browser's history could poll for the tokens.
            if let value, SecretMask.anyRepeated(secrets + [deviceCode], in: [value]) {
                throw refused(
                    .invalidField(name),
                    "its \(name) repeats a secret (the client secret, or the device code), so it is neither shown nor opened"
                )
            }
        }
        guard let expiresIn = seconds(text("expires_in")), expiresIn > 0 else {
            throw refused(
                .invalidField("expires_in"),
                "its expires_in '\(DisplayText.sanitized(text("expires_in") ?? "", limit: 24))' is not a number of seconds above 0 and below 1e11"
            )
        }
        guard let verification = webPage(verificationText) else {
            throw refused(
                .invalidField("verification_uri"),
                "its verification_uri '\(DisplayText.sanitized(verificationText ?? "", limit: 80))' is not an https page with a plain host name and no user name (RFC 8628 §3.2), so it is neither shown nor opened"
            )
        }
        let intervalText = text("interval")
        guard let interval = intervalText == nil ? 5 : seconds(intervalText) else { // §3.2: 5 s when absent
            throw refused(
                .invalidField("interval"),
                "its interval '\(DisplayText.sanitized(intervalText ?? "", limit: 20))' is not a number of seconds")
        }
        // No poll could be sent before the codes expire (§3.5: not sooner
        // than the interval): the user, having approved, waited out the
        // lifetime and was told the code expired before it was approved.
        guard interval < expiresIn else {
            throw refused(
                .invalidField("interval"),
                "its interval (\(Int(interval)) s) is not shorter than its expires_in (\(Int(expiresIn)) s): no poll could be sent before the code expired (RFC 8628 §3.5)"
            )
        }
        guard complete == nil || webPage(complete) != nil else {
            throw refused(
                .invalidField("verification_uri_complete"),
                "its verification_uri_complete '\(DisplayText.sanitized(complete ?? "", limit: 80))' is not an https page with a plain host name and no user name (RFC 8628 §3.3.1), so it is neither shown nor opened"
            )
        }
        let completePage = webPage(complete).flatMap { $0.origin == verification.origin ? $0 : nil }
        self.init(
            providerID: providerID, deviceCode: deviceCode, userCode: userCode, verificationURI: verification,
            verificationURIComplete: completePage, expiresAt: sentAt.addingTimeInterval(expiresIn),
            interval: interval, scopes: scopes)
    }
}

/// Polling the token endpoint for a device authorization (RFC 8628 §3.4–3.5).
///
/// `sleep` and `now` are injected so tests check the rules (the interval,
/// `slow_down` adding 5 seconds, stopping at expiry) without waiting.
struct DevicePoller: Sendable {
    let calls: TokenEndpointCalls
    let device: DeviceEndpoint
    let now: @Sendable () -> Date
    let sleep: @Sendable (Duration) async throws -> Void

    /// The grant type of the device access token request (RFC 8628 §3.4).
    static let grantType = "urn:ietf:params:oauth:grant-type:device_code"

    /// A poll that failed for the server's sake (a 5xx answer), not with
    /// an answer about the grant; retried as a connection failure is.
    struct ServerTrouble: Error {
        let error: AuthKitError
    }

    /// Polls in a row that may fail (the connection, a 5xx) before the
    /// last failure is reported: enough to ride out a restart or a
    /// dropped connection, few enough that a server that is gone is said
    /// so within a minute or two rather than when the code expires.
    static let retriedFailures = 3

    /// The wait before the next poll: the interval, doubled for each
    /// failure in a row, but never past the last poll the interval allows
    /// (`left` is the codes' time): one that would reach the expiry is cut
    /// to leave an interval before it. After a few failures near the end,
    /// the sign-in ended as expired without asking again, though the user
    /// may have approved meanwhile.
    static func wait(interval: TimeInterval, failures: Int, left: TimeInterval) -> TimeInterval {
        min(interval * Double(1 << failures), max(interval, left - interval))
    }

    func poll(_ authorization: DeviceAuthorization, label: String?) async throws -> Credential {
        // The server's interval, with 5 s for each `slow_down`: for good.
        var interval = max(1, authorization.interval)
        // Failures in a row (the connection, a 5xx): each doubles the next
        // wait, and an answer about the grant ends the back-off, so blips
        // early in a sign-in do not slow the polls after them.
        var failures = 0
        while true {
            let left = authorization.expiresAt.timeIntervalSince(now())
            guard left > 0 else { throw Self.expired }
            let wait = Self.wait(interval: interval, failures: failures, left: left)
            do {
                // No longer than the codes live: an interval past their expiry
                // would only make the user wait to be told they expired.
                try await sleep(.milliseconds(Int64(min(wait, left) * 1000)))
            } catch {
                throw AuthKitError.cancelled
            }
            if Task.isCancelled { throw AuthKitError.cancelled }
            // A wait cut to the expiry ends at it, whatever `now` reads: the
            // sleep's clock is not `Date`'s and the wait was rounded down, so
            // `now` could still read a moment before, and the poll sent then
            // came sooner than the interval (with `slow_down`'s) allows (§3.5).
            guard wait < left, now() < authorization.expiresAt else { throw Self.expired }
            do {
                return try await Self.seenThrough { [calls] in
                    try await calls.pollDeviceToken(authorization, device: device, label: label)
                }
            } catch let error where Self.isTransient(error) {
                // Cancelled (Ctrl-C, --timeout) while the poll failed: that
                // is what ends the sign-in, not the failure.
                if Task.isCancelled { throw AuthKitError.cancelled }
                // §3.5: "On encountering a connection timeout, clients MUST
                // unilaterally reduce their polling frequency before
                // retrying", by doubling the interval as it recommends. The
                // user may have approved already: one dropped connection
                // must not end a sign-in whose tokens are waiting.
                let failure = (error as? ServerTrouble)?.error ?? error
                failures += 1 // in a row: an answer about the grant starts the count again
                guard failures <= Self.retriedFailures else { throw failure }
                let left = authorization.expiresAt.timeIntervalSince(now())
                let next = Int(Self.wait(interval: interval, failures: failures, left: left))
                calls.transport.logger.warning(
                    """
                    A poll of \(calls.client.descriptor.name)'s token endpoint failed (\(failure)); polling again in \(next) s \
                    (RFC 8628 §3.5), \(Self.retriedFailures + 1 - failures) more time\(Self.retriedFailures + 1 - failures == 1 ? "" : "s") at most.
                    """)
                continue
            } catch let error as AuthKitError {
                guard case .providerError(_, let response) = error.reason else { throw error }
                switch response.code {
                case "authorization_pending":
                    failures = 0
                    continue // §3.5: the user has not acted yet
                case "slow_down":
                    failures = 0
                    // §3.5: "the interval MUST be increased by 5 seconds for this and all subsequent requests"
                    interval += 5
                case let code where Self.denials.contains(code):
                    throw AuthKitError.authorizationFailed(response)
                default:
                    throw error
                }
            }
        }
    }

    /// RFC 8628 §3.5's answers about the grant, whatever the status they
    /// come with (a 429 `slow_down` is still `slow_down`: 5 s more for good).
    static let pollAnswers: Set<String> = [
        "authorization_pending", "slow_down", "access_denied", "authorization_declined", "expired_token",
    ]

    /// The user said no: RFC 8628 §3.5's `access_denied`, and
    /// `authorization_declined`, Microsoft identity platform's word for it
    /// in the device flow ("the end user denied the authorization
    /// request"). Either is ``AuthKitError/Code/authorizationFailed``, so a
    /// caller (and the CLI's exit status) tells a refusal from a failure.
    static let denials: Set<String> = ["access_denied", "authorization_declined"]

    /// A failure of the connection or of the server, after which the same
    /// poll may well succeed: not a cancellation, and not an answer.
    private static func isTransient(_ error: any Error) -> Bool {
        if error is ServerTrouble { return true }
        if case .network? = error.authKitReason { return true }
        // The server's own words for a passing trouble (RFC 6749 §4.1.2.1's
        // codes, which token endpoints answer too, and a 429): they say
        // nothing about this grant, which the user may have approved.
        if case .providerError(_, let response)? = error.authKitReason,
            ["server_error", "temporarily_unavailable"].contains(response.code)
                || (response.status == 429 && !Self.pollAnswers.contains(response.code))
        {
            return true
        }
        return false
    }

    /// Runs one poll to its end even if the task is cancelled meanwhile (for
    /// at most the request's deadline), in a task of its own, which does not
    /// inherit the cancellation. Its answer may carry the tokens, and the
    /// device code is then spent (RFC 8628 §3.5 `expired_token` for any
    /// later poll): cancelled halfway, the grant would exist at the provider
    /// with nothing holding it. So a cancellation that comes during a poll
    /// still returns the credential the poll brings; otherwise it takes
    /// effect at the next wait.
    private static func seenThrough(_ poll: @escaping @Sendable () async throws -> Credential) async throws
        -> Credential
    {
        try await Task { try await poll() }.value
    }

    /// The codes' lifetime ran out by this computer's clock before the user
    /// approved: `expired_token` of the polling step, as the provider would
    /// say it (RFC 8628 §3.5), so a caller handles both alike (it was the
    /// `deviceAuthorization` step's, which a caller matching the provider's
    /// answer missed), but with no HTTP status, as no provider answered it;
    /// the message says whose clock it was.
    static let expired = AuthKitError.providerError(
        step: .devicePolling,
        ProviderErrorResponse(
            code: "expired_token",
            description:
                "the code's lifetime (the provider's expires_in) ran out on this computer's clock before it was approved; start again"
        ))
}
