#if canImport(SwiftUI) && canImport(AuthenticationServices) && !os(tvOS) && !os(watchOS)
    // ASWebAuthenticationSession's presentation API exists on iOS, macOS and
    // visionOS only (not tvOS or watchOS, where the module must still build).
    import AuthKit
    import AuthenticationServices
    import SwiftUI

    extension WebAuthenticationUserAgent {
        /// The agent on SwiftUI's `WebAuthenticationSession`, which finds its
        /// own window: take it from the environment in a view
        /// (`@Environment(\.webAuthenticationSession) private var session`)
        /// and pass it in.
        @available(iOS 16.4, macOS 13.3, watchOS 9.4, tvOS 16.4, *)
        public init(_ session: WebAuthenticationSession, prefersEphemeralWebBrowserSession: Bool = false) {
            self.prefersEphemeralWebBrowserSession = prefersEphemeralWebBrowserSession
            self.presenter = .swiftUI(session)
        }

        /// Opens `url` in SwiftUI's session and returns the redirect it caught.
        @available(iOS 16.4, macOS 13.3, watchOS 9.4, tvOS 16.4, *)
        func redirect(
            opening url: URL, redirectURI: URL, callback: WebAuthenticationCallback,
            in session: WebAuthenticationSession
        ) async throws -> URL {
            let browser: WebAuthenticationSession.BrowserSession =
                prefersEphemeralWebBrowserSession ? .ephemeral : .shared
            do {
                if #available(iOS 17.4, macOS 14.4, watchOS 10.4, tvOS 17.4, visionOS 1.1, *) {
                    let asCallback: ASWebAuthenticationSession.Callback
                    switch callback {
                    case .customScheme(let scheme): asCallback = .customScheme(scheme)
                    case .https(let host, let path): asCallback = .https(host: host, path: path)
                    }
                    return try await session.authenticate(
                        using: url, callback: asCallback, preferredBrowserSession: browser, additionalHeaderFields: [:])
                }
                guard let scheme = callback.scheme else {
                    throw AuthKitError.unusableRedirectURI(
                        uri: redirectURI.absoluteString, reason: "an https callback needs iOS 17.4 or macOS 14.4.")
                }
                return try await session.authenticate(
                    using: url, callbackURLScheme: scheme, preferredBrowserSession: browser)
            } catch let error as AuthKitError {
                throw error
            } catch is CancellationError {
                // The task was cancelled: that, not a protocol the agent broke.
                throw AuthKitError.cancelled
            } catch {
                if Task.isCancelled { throw AuthKitError.cancelled }
                let described = error as NSError
                if case .failure(let mapped) = WebAuthenticationOutcome.map(
                    callbackURL: nil, error: (described.domain, described.code, described.localizedDescription))
                {
                    throw mapped
                }
                throw error
            }
        }
    }
#endif
