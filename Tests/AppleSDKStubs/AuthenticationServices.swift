// swift-format-ignore-file: AlwaysUseLowerCamelCase
// Stub: ASWebAuthenticationSession as documented for the iOS 17.4 SDK.
@_exported import Foundation
import UIKit

public typealias ASPresentationAnchor = UIWindow

@MainActor public protocol ASWebAuthenticationPresentationContextProviding: NSObjectProtocol {
    func presentationAnchor(for session: ASWebAuthenticationSession) -> ASPresentationAnchor
}

@MainActor open class ASWebAuthenticationSession: NSObject {
    public typealias CompletionHandler = (URL?, (any Error)?) -> Void

    public final class Callback: NSObject, @unchecked Sendable {
        public static func customScheme(_ customScheme: String) -> Callback { Callback() }
        public static func https(host: String, path: String) -> Callback { Callback() }
    }

    public init(url URL: URL, callbackURLScheme: String?, completionHandler: @escaping CompletionHandler) {}
    @available(iOS 17.4, macOS 14.4, watchOS 10.4, tvOS 17.4, visionOS 1.1, *)
    public init(url URL: URL, callback: Callback, completionHandler: @escaping CompletionHandler) {}

    open weak var presentationContextProvider: (any ASWebAuthenticationPresentationContextProviding)?
    open var prefersEphemeralWebBrowserSession: Bool = false
    open func start() -> Bool { true }
    open func cancel() {}
}

public let ASWebAuthenticationSessionErrorDomain = "com.apple.AuthenticationServices.WebAuthenticationSession"
