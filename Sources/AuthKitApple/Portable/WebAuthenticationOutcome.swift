import AuthKit
import Foundation

/// How a finished web authentication session becomes AuthKit's answer: the
/// callback URL, or an ``AuthKit/AuthKitError`` — the user closing the sheet is
/// ``AuthKit/AuthKitError/Code/cancelled``, like Ctrl-C in the CLI, so an app can
/// tell "the user changed their mind" from a failure.
///
/// Written against the error's domain and code rather than
/// `ASWebAuthenticationSessionError`, so the mapping is tested on Linux.
package enum WebAuthenticationOutcome {
    /// `ASWebAuthenticationSessionErrorDomain`.
    package static let errorDomain = "com.apple.AuthenticationServices.WebAuthenticationSession"

    /// `ASWebAuthenticationSessionError.Code`.
    package enum Code: Int {
        case canceledLogin = 1
        case presentationContextNotProvided = 2
        case presentationContextInvalid = 3
    }

    package static func map(callbackURL: URL?, error: (domain: String, code: Int, description: String)?) -> Result<
        URL, AuthKitError
    > {
        if let error {
            guard error.domain == errorDomain, let code = Code(rawValue: error.code) else {
                return .failure(
                    .misuse(
                        .userAgentBrokeProtocol(
                            "the web authentication session failed: \(error.description) (\(error.domain) \(error.code))"
                        )))
            }
            switch code {
            case .canceledLogin:
                return .failure(.cancelled)
            case .presentationContextNotProvided:
                return .failure(
                    .misuse(
                        .userAgentBrokeProtocol(
                            "the session has no presentation anchor: pass the window to show the sign-in over")))
            case .presentationContextInvalid:
                return .failure(
                    .misuse(
                        .userAgentBrokeProtocol("the presentation anchor is not a usable window (is it on screen?)")))
            }
        }
        guard let callbackURL else {
            return .failure(
                .misuse(
                    .userAgentBrokeProtocol(
                        "the web authentication session ended with neither a callback URL nor an error")))
        }
        return .success(callbackURL)
    }
}
