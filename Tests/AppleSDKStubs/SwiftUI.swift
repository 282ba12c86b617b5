import AuthenticationServices
// Stub: SwiftUI's WebAuthenticationSession (the AuthenticationServices
// cross-import overlay), as documented for the iOS 17.4 SDK.
@_exported import Foundation

@available(iOS 16.4, macOS 13.3, watchOS 9.4, tvOS 16.4, *)
@MainActor public struct WebAuthenticationSession {
    public struct BrowserSession: Sendable, Hashable {
        public static let ephemeral = BrowserSession()
        public static let shared = BrowserSession()
    }

    public func authenticate(
        using url: URL, callbackURLScheme: String,
        preferredBrowserSession: BrowserSession? = nil
    ) async throws -> URL { url }

    @available(iOS 17.4, macOS 14.4, watchOS 10.4, tvOS 17.4, visionOS 1.1, *)
    public func authenticate(
        using url: URL, callback: ASWebAuthenticationSession.Callback,
        preferredBrowserSession: BrowserSession? = nil,
        additionalHeaderFields: [String: String]
    ) async throws -> URL { url }
}
