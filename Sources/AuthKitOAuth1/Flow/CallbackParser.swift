import AuthKit
import Foundation

/// Reads the provider's answer out of the callback URL (RFC 5849 §2.2).
///
/// The request token plays the role OAuth 2.0's `state` plays: it is
/// unguessable and tied to this attempt. The checks, in order:
/// 1. the URL must be the attempt's callback (scheme, host, port, path);
/// 2. no parameter may appear twice;
/// 3. `denied=<request token>` (Twitter's way of saying the user declined)
///    becomes ``AuthKitError/authorizationFailed(_:)`` with `access_denied`,
///    but only when it names this attempt's token;
/// 4. `oauth_token` must be present and equal to the request token, compared
///    in constant time ("the client SHOULD verify that the token matches the
///    request token", via RFC 5849 §2.2's callback);
/// 5. `oauth_verifier` must be present.
struct CallbackParser {
    func verifier(from url: URL, for pending: OAuth1PendingAuthorization) throws -> String {
        guard !pending.isOutOfBand else {
            throw AuthKitError.unsupported(
                "This sign-in used the out-of-band (PIN) flow; enter the PIN the provider shows instead of a callback URL.")
        }
        guard let received = URLComponents(url: url, resolvingAgainstBaseURL: false), received.scheme != nil else {
            throw AuthKitError.redirect(.malformed("it is not an absolute URL"))
        }
        guard let expected = URLComponents(string: pending.callback) else {
            throw AuthKitError.redirect(.malformed("the attempt's callback is not a URL"))
        }
        guard RedirectParser.sameTarget(received, expected) else {
            throw AuthKitError.redirect(.unexpectedTarget(expected: Self.target(of: expected), received: Self.target(of: received)))
        }
        guard let pairs = FormURLEncoding.decode(received.percentEncodedQuery ?? "") else {
            throw AuthKitError.redirect(.malformed("a query parameter has an invalid %-escape"))
        }
        var values = [String: String]()
        for (name, value) in pairs {
            guard values[name] == nil else { throw AuthKitError.redirect(.duplicateParameter(name)) }
            values[name] = value
        }

        if let denied = values["denied"] {
            guard ConstantTime.equals(denied, pending.requestToken) else { throw AuthKitError.redirect(.requestTokenMismatch) }
            throw AuthKitError.authorizationFailed(ProviderErrorResponse(
                code: "access_denied", description: "the user declined to authorize the application"))
        }
        guard let token = values["oauth_token"] else { throw AuthKitError.redirect(.missingRequestToken) }
        guard ConstantTime.equals(token, pending.requestToken) else { throw AuthKitError.redirect(.requestTokenMismatch) }
        if let problem = values["oauth_problem"] ?? values["error"] {
            // Not in RFC 5849, but some servers report a refusal this way.
            throw AuthKitError.authorizationFailed(ProviderErrorResponse(
                code: problem == "user_refused" || problem == "permission_denied" ? "access_denied" : problem,
                description: values["oauth_problem_advice"] ?? values["error_description"]))
        }
        guard let verifier = values["oauth_verifier"], !verifier.isEmpty else { throw AuthKitError.redirect(.missingVerifier) }
        return verifier
    }

    /// The URL without query or fragment, for messages (the query holds tokens).
    static func target(of components: URLComponents) -> String {
        var copy = components
        copy.percentEncodedQuery = nil
        copy.fragment = nil
        return copy.string ?? "(unprintable URL)"
    }
}
