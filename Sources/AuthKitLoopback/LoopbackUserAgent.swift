import AuthKit

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A ``AuthKit/UserAgent`` that opens the system browser and receives the
/// provider's redirect on a loopback HTTP listener (RFC 8252 §7.3): the way a
/// command-line or desktop app signs in without the user pasting anything.
///
/// For one ``run(_:)``:
/// 1. binds the redirect URI's loopback host — 127.0.0.1 or [::1] only, never
///    an address other machines reach (§8.3); `localhost` binds both (a
///    browser may resolve it to either) and is kept as written in the URI.
///    The port is any free one when the session allows it (§7.3), else
///    exactly the URI's; no `SO_REUSEADDR`/`SO_REUSEPORT`;
/// 2. builds the authorization URL with the bound redirect URI and hands it to
///    ``browser``; a launch failure is reported through `onEvent`
///    and the listener keeps waiting (the user can open the URL by hand);
/// 3. serves the redirect path only, checking each request with the session's
///    `validateRedirect`: strays get an error page and are ignored, the genuine
///    answer gets a short page and ends the wait;
/// 4. closes the listener, and returns the full redirect URL.
///
/// ```swift
/// let agent = LoopbackUserAgent { event in
///     switch event {
///     case .listening: print("Waiting for you to approve in the browser…")
///     case .browserFailed(let url, _): print("Open this URL to sign in:\n\(url)")
///     case .ignoredRequest: break
///     case .rejectedAnswer: print("A request to the redirect address was refused; still waiting…")
///     }
/// }
/// let credential = try await client.authorize(using: agent)
/// ```
public struct LoopbackUserAgent: UserAgent {
    /// Opens the authorization URL in the browser, and returns once the
    /// request is handed over, without waiting for the user; throws when it
    /// could not be, so the caller is told to show the URL instead
    /// (``LoopbackEvent/browserFailed(authorizationURL:reason:)``).
    /// ``systemBrowser`` by default; a test, or a GUI, stands in for it (the
    /// end-to-end tests follow the provider's redirect themselves). `nil`
    /// opens nothing, for a caller that only shows the URL (an SSH session):
    /// the event is then `browserFailed`, so it is shown. RFC 8252 §8.12:
    /// the agent must be the user's own, external browser, never an
    /// embedded web view.
    public var browser: (@Sendable (URL) async throws -> Void)?
    /// How long to wait for the genuine redirect before giving up with
    /// ``AuthKit/AuthKitError/Code/redirectTimedOut``.
    public var timeout: Duration
    /// How long one connection may take to send its request; a slower or idle
    /// one is closed (the attempt goes on).
    public var connectionTimeout: Duration
    /// The most bytes one connection may send (the request head; there is
    /// no body): 64 KiB by default. The browser's cookies for the host count,
    /// and every local web app's on 127.0.0.1 or localhost (cookies are not
    /// kept apart by port, RFC 6265 §8.5): at 16 KiB, a few of them made the
    /// provider's redirect a 431, and the sign-in waited out its timeout.
    public var maxRequestBytes: Int
    /// Status for the caller: see ``LoopbackEvent``. Called from any thread.
    public var onEvent: (@Sendable (LoopbackEvent) -> Void)?

    /// `browser` comes last so that the documented
    /// `LoopbackUserAgent { event in … }` passes its trailing closure to
    /// `onEvent` (SE-0286 gives it to the first closure parameter).
    public init(
        timeout: Duration = .seconds(300), connectionTimeout: Duration = .seconds(5),
        maxRequestBytes: Int = 64 * 1024, onEvent: (@Sendable (LoopbackEvent) -> Void)? = nil,
        browser: (@Sendable (URL) async throws -> Void)? = LoopbackUserAgent.systemBrowser
    ) {
        self.browser = browser
        self.timeout = timeout
        self.connectionTimeout = connectionTimeout
        self.maxRequestBytes = maxRequestBytes
        self.onEvent = onEvent
    }

    /// The system browser, the way other command-line tools launch it.
    ///
    /// `$BROWSER`, when set, wins: the convention `xdg-open` and Python's
    /// `webbrowser` follow. It is a list of commands separated by `:`, each
    /// tried in turn; a command may carry arguments separated by spaces
    /// (`firefox --new-window`) and may say where the URL goes with `%s`,
    /// otherwise the URL is appended as the last argument. Without
    /// `$BROWSER`, `xdg-open` on Linux and `open` on macOS. A command still
    /// running after two seconds is taken as a browser that opened; one that
    /// fails sooner is reported, and the next is tried.
    ///
    /// The URL is passed as one argument, never through a shell; only http
    /// and https URLs are opened. The child starts with default signal
    /// handling and the caller's environment less every `AUTHKIT_*`
    /// variable, which may hold client secrets; its output goes to standard
    /// error, so standard output stays clean for `--json` and pipes.
    public static let systemBrowser: @Sendable (URL) async throws -> Void = { try await SystemBrowser().open($0) }

    /// - Throws: ``AuthKit/AuthKitError/Code/unusableRedirectURI`` for a redirect URI that
    ///   is not `http` on a loopback host; ``AuthKit/AuthKitError/Code/portInUse`` (or ``AuthKit/AuthKitError/Code/cannotListen``) when the port cannot
    ///   be bound or the wait times out; ``AuthKit/AuthKitError/Code/cancelled`` when the
    ///   task is cancelled. The listener is closed whenever this returns or throws.
    public func run(_ session: AuthorizationSession) async throws -> URL {
        let redirect = try LoopbackRedirect(
            requested: session.redirectURI, portIsFlexible: session.redirectPortIsFlexible)
        guard !Task.isCancelled else { throw AuthKitError.cancelled }
        let onEvent = self.onEvent
        let listener = LoopbackListener(
            redirect: redirect, providerName: session.providerName,
            validate: { (text: String) in try session.validateRedirect(text) },
            connectionTimeout: .init(connectionTimeout), maxRequestBytes: maxRequestBytes,
            onIgnored: { error in
                switch error.authKitReason {
                case .redirect(.unexpectedTarget)?:
                    // Another path (a favicon): no answer at all.
                    onEvent?(.ignoredRequest(reason: "\(error)"))
                case .redirect?:
                    // At the redirect path and refused: not this attempt's
                    // (state, issuer, request token), or malformed (a
                    // parameter twice, no verifier). Counted as a stray, a
                    // provider's malformed callback left the user waiting
                    // out the timeout with no word of it.
                    onEvent?(.rejectedAnswer(reason: "\(error)"))
                case nil where error is RequestSizeLimiter.TooLarge:
                    // Unread, but a 431 here is most likely the redirect
                    // with too many cookies: said, as a refused answer is.
                    onEvent?(.rejectedAnswer(reason: "\(error)"))
                default:
                    onEvent?(.ignoredRequest(reason: "\(error)"))
                }
            })
        let redirectURI = try await listener.start()
        // Not awaited on the way out: a launcher that never returns must not keep the answer from the caller.
        var launch: Task<Void, Never>?
        do {
            let authorizationURL = try await session.makeAuthorizationURL(redirectURI)
            let browser = self.browser
            onEvent?(.listening(authorizationURL: authorizationURL, redirectURI: redirectURI))
            launch = Task {
                do {
                    guard let browser else {
                        throw SystemBrowser.LaunchError(command: "(none)", reason: "no browser is configured")
                    }
                    try await browser(authorizationURL)
                } catch {
                    if !Task.isCancelled {
                        onEvent?(.browserFailed(authorizationURL: authorizationURL, reason: "\(error)"))
                    }
                }
            }
            let answer = try await listener.answer(timeout: timeout)
            launch?.cancel()
            await listener.close()
            return answer
        } catch {
            launch?.cancel()
            await listener.close()
            if error is CancellationError || Task.isCancelled { throw AuthKitError.cancelled }
            throw error
        }
    }
}
