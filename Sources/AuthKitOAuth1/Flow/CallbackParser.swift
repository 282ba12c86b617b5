import AuthKit

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Reads the provider's answer out of the callback URL (RFC 5849 §2.2).
///
/// The request token plays the role OAuth 2.0's `state` plays: it is
/// unguessable and tied to this attempt. The checks, in order:
/// 1. the strict checks OAuth 2.0 redirects get (`RedirectParser`): a URL as a
///    browser sends it, the attempt's callback (scheme, host, port, path), no
///    parameter twice, every %-escape valid;
/// 2. `denied=<request token>` (Twitter's way of saying the user declined)
///    becomes ``AuthKitError/Code/authorizationFailed`` with `access_denied`,
///    but only when it names this attempt's token;
/// 3. `oauth_token` must be present and equal to the request token, compared
///    in constant time ("the client SHOULD verify that the token matches the
///    request token", via RFC 5849 §2.2's callback);
/// 4. `oauth_verifier` must be present.
package struct CallbackParser {
    package init() {}

    package func verifier(from text: String, for pending: PendingAuthorization) throws -> String {
        guard !pending.isOutOfBand else { throw AuthKitError.redirect(.outOfBandAttempt) }
        let values = try RedirectParser().parameters(of: text, expectedTarget: pending.redirectURI)

        if let denied = values["denied"] {
            guard ConstantTime.equals(denied, pending.requestToken) else {
                throw AuthKitError.redirect(.requestTokenMismatch)
            }
            throw AuthKitError.authorizationFailed(
                ProviderErrorResponse(
                    code: "access_denied", description: "the user declined to authorize the application"))
        }
        guard let token = values["oauth_token"] else { throw AuthKitError.redirect(.missingRequestToken) }
        guard ConstantTime.equals(token, pending.requestToken) else {
            throw AuthKitError.redirect(.requestTokenMismatch)
        }
        if let problem = values["oauth_problem"] ?? values["error"] {
            // Not in RFC 5849, but some servers report a refusal this way.
            throw AuthKitError.authorizationFailed(
                ProviderErrorResponse(
                    code: problem == "user_refused" || problem == "permission_denied" ? "access_denied" : problem,
                    description: values["oauth_problem_advice"] ?? values["error_description"]))
        }
        guard let verifier = values["oauth_verifier"], !verifier.isEmpty else {
            throw AuthKitError.redirect(.missingVerifier)
        }
        return verifier
    }
}
