#if canImport(AuthenticationServices) && !os(tvOS) && !os(watchOS)
    // ASWebAuthenticationPresentationContextProviding exists on iOS, macOS and
    // visionOS only: on tvOS and watchOS the module builds without this agent.
    import AuthKit
    import AuthenticationServices
    import Foundation
    #if canImport(SwiftUI)
        import SwiftUI
    #endif

    /// A ``AuthKit/UserAgent`` on `ASWebAuthenticationSession`: the system's
    /// sign-in sheet, which shares cookies with Safari (RFC 8252 §8.12: an
    /// external agent, never a web view that could read the password).
    ///
    ///     let agent = WebAuthenticationUserAgent { view.window ?? ASPresentationAnchor() }
    ///     let credential = try await client.authorize(using: agent)
    ///
    /// The callback is derived from the redirect URI (``WebAuthenticationCallback``);
    /// closing the sheet throws ``AuthKit/AuthKitError/Code/cancelled``, and cancelling
    /// the task closes the sheet. The session is created, started and cancelled on
    /// the main actor, as AuthenticationServices requires.
    ///
    /// In SwiftUI, make it from the view's `WebAuthenticationSession`, which
    /// finds its own window (`init(_:prefersEphemeralWebBrowserSession:)`):
    /// one agent, two ways to present the same system sheet.
    ///
    /// `@unchecked Sendable`: SwiftUI's `WebAuthenticationSession` is not
    /// marked `Sendable`; the agent only hands it to its own `authenticate`
    /// calls, which SwiftUI runs on the main actor.
    public struct WebAuthenticationUserAgent: UserAgent, @unchecked Sendable {
        /// No cookies shared with Safari, nothing kept afterwards: the user signs
        /// in every time (and is not asked "wants to use … to sign in").
        public var prefersEphemeralWebBrowserSession: Bool
        let presenter: Presenter

        /// What shows the sheet.
        enum Presenter {
            /// The window it is shown over, asked for on the main actor when the session starts.
            case anchor(@MainActor @Sendable () -> ASPresentationAnchor)
            /// SwiftUI's `WebAuthenticationSession` (iOS 16.4, macOS 13.3), kept
            /// untyped: a stored value cannot be limited to an OS version.
            case swiftUI(Any)
        }

        /// - Parameter presentationAnchor: the window the sheet is shown over,
        ///   asked for on the main actor when the session starts.
        public init(
            prefersEphemeralWebBrowserSession: Bool = false,
            presentationAnchor: @escaping @MainActor @Sendable () -> ASPresentationAnchor
        ) {
            self.prefersEphemeralWebBrowserSession = prefersEphemeralWebBrowserSession
            self.presenter = .anchor(presentationAnchor)
        }

        public func run(_ session: AuthorizationSession) async throws -> URL {
            guard let redirectURI = session.redirectURI else {
                throw AuthKitError.misuse(
                    .userAgentBrokeProtocol(
                        "an out-of-band (PIN) sign-in has no redirect to catch; use manualUserAgent()"))
            }
            // The redirect is checked before the URL is made: for OAuth 1.0a
            // that asks the provider for a request token, which an unusable
            // redirect would have spent for nothing.
            _ = try WebAuthenticationCallback(
                redirectURI: redirectURI, httpsCallbacksAvailable: systemCatchesHTTPSCallbacks())
            let url = try await session.makeAuthorizationURL(redirectURI)
            return try await redirect(opening: url, redirectURI: redirectURI)
        }

        /// Opens `url` and returns the URL the provider sent the browser back to:
        /// for the two-request flow where a backend exchanges the code.
        public func redirect(opening url: URL, redirectURI: URL) async throws -> URL {
            let callback = try WebAuthenticationCallback(
                redirectURI: redirectURI, httpsCallbacksAvailable: systemCatchesHTTPSCallbacks())
            let presentationAnchor: @MainActor @Sendable () -> ASPresentationAnchor
            switch presenter {
            case .anchor(let anchor): presentationAnchor = anchor
            case .swiftUI(let session):
                #if canImport(SwiftUI)
                    if #available(iOS 16.4, macOS 13.3, watchOS 9.4, tvOS 16.4, *),
                        let session = session as? WebAuthenticationSession
                    {
                        return try await redirect(
                            opening: url, redirectURI: redirectURI, callback: callback, in: session)
                    }
                #endif
                throw AuthKitError.misuse(
                    .userAgentBrokeProtocol("SwiftUI's WebAuthenticationSession needs iOS 16.4 or macOS 13.3"))
            }
            let holder = await SessionHolder()
            return try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<URL, Error>) in
                    let once = ResumedOnce(continuation)
                    Task { @MainActor in
                        holder.start(
                            url: url, redirectURI: redirectURI, callback: callback,
                            ephemeral: prefersEphemeralWebBrowserSession, anchor: presentationAnchor(), once: once)
                    }
                }
            } onCancel: {
                Task { @MainActor in holder.cancel() }
            }
        }
    }

    /// Whether `ASWebAuthenticationSession` can catch an https redirect here
    /// (`Callback.https`, iOS 17.4 and macOS 14.4).
    func systemCatchesHTTPSCallbacks() -> Bool {
        if #available(iOS 17.4, macOS 14.4, watchOS 10.4, tvOS 17.4, visionOS 1.1, *) { return true }
        return false
    }

    /// A continuation resumed at most once, whoever answers first (the
    /// session's completion handler on its own queue, or a cancellation on
    /// the main actor): a second resume of a `CheckedContinuation` traps.
    final class ResumedOnce: @unchecked Sendable {
        private let lock = NSLock()
        private var continuation: CheckedContinuation<URL, Error>?
        init(_ continuation: CheckedContinuation<URL, Error>) { self.continuation = continuation }

        func resume(with result: Result<URL, Error>) {
            lock.lock()
            let waiting = continuation
            continuation = nil
            lock.unlock()
            waiting?.resume(with: result)
        }

        func resume(throwing error: Error) { resume(with: .failure(error)) }
    }

    /// Keeps the session and its context provider alive until it ends.
    @MainActor
    private final class SessionHolder: NSObject, ASWebAuthenticationPresentationContextProviding {
        private var session: ASWebAuthenticationSession?
        private var anchor: ASPresentationAnchor?
        private var cancelled = false
        /// The caller's continuation, resumed once by whichever comes first:
        /// the completion handler, a failed start, or a cancellation.
        private var once: ResumedOnce?

        func start(
            url: URL, redirectURI: URL, callback: WebAuthenticationCallback, ephemeral: Bool,
            anchor: ASPresentationAnchor, once: ResumedOnce
        ) {
            self.once = once
            guard !cancelled else {
                once.resume(throwing: AuthKitError.cancelled)
                return
            }
            let completion = Self.completion(resuming: once)
            let session: ASWebAuthenticationSession
            if #available(iOS 17.4, macOS 14.4, watchOS 10.4, tvOS 17.4, visionOS 1.1, *) {
                let asCallback: ASWebAuthenticationSession.Callback
                switch callback {
                case .customScheme(let scheme): asCallback = .customScheme(scheme)
                case .https(let host, let path): asCallback = .https(host: host, path: path)
                }
                session = ASWebAuthenticationSession(url: url, callback: asCallback, completionHandler: completion)
            } else {
                guard let scheme = callback.scheme else {
                    // The redirect URI, not the authorization URL (its state
                    // and code challenge have no place in an error).
                    once.resume(
                        throwing: AuthKitError.unusableRedirectURI(
                            uri: redirectURI.absoluteString,
                            reason:
                                "an https callback needs iOS 17.4 or macOS 14.4; register a private-use scheme for older systems."
                        ))
                    return
                }
                session = ASWebAuthenticationSession(url: url, callbackURLScheme: scheme, completionHandler: completion)
            }
            session.prefersEphemeralWebBrowserSession = ephemeral
            self.anchor = anchor
            session.presentationContextProvider = self
            self.session = session
            if !session.start() {
                // `start` returns false without calling the completion handler.
                self.session = nil
                once.resume(
                    throwing: AuthKitError.misuse(
                        .userAgentBrokeProtocol(
                            "the web authentication session could not start (is another one showing, or the app in the background?)"
                        )))
            }
        }

        /// The session's completion handler, made outside the main actor: a
        /// closure written inside this class would be main-actor isolated,
        /// and Swift 6 checks that isolation when it is called, stopping the
        /// app (macOS calls the handler on a queue of its own, not the main
        /// one). It touches nothing but the continuation, which is Sendable.
        nonisolated private static func completion(resuming once: ResumedOnce) -> @Sendable (URL?, Error?) -> Void {
            { url, error in
                let described = error.map { error -> (domain: String, code: Int, description: String) in
                    let error = error as NSError
                    return (error.domain, error.code, error.localizedDescription)
                }
                once.resume(
                    with: WebAuthenticationOutcome.map(callbackURL: url, error: described).mapError { $0 as Error })
            }
        }

        func cancel() {
            cancelled = true
            // Said here: Apple documents that `cancel()` dismisses the sheet,
            // not that the completion handler then runs; if it does, with
            // canceledLogin, that second answer is dropped.
            once?.resume(throwing: AuthKitError.cancelled)
            session?.cancel()
        }

        /// The protocol is main-actor isolated (AuthenticationServices asks on the main thread).
        func presentationAnchor(for session: ASWebAuthenticationSession) -> ASPresentationAnchor {
            anchor ?? ASPresentationAnchor()
        }
    }
#endif
