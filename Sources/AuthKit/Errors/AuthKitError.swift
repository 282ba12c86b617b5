/// Every error AuthKit throws, with cases a caller can switch on.
///
/// Each `description` says what went wrong and, where there is one, what to do.
/// No message contains a client secret, token, PKCE verifier or a URL query.
public enum AuthKitError: Error, Sendable, Hashable, CustomStringConvertible {
    /// One or more problems in a provider descriptor or configuration file.
    case invalidFile([FileIssue])
    /// No descriptor with that id; `suggestions` are the nearest known ids.
    case unknownProvider(id: String, suggestions: [String])
    /// A required setting (client id, client secret, a host placeholder) has no
    /// value; `hint` says every way to provide it.
    case missingSetting(providerID: String, setting: String, hint: String)
    /// The redirect URL did not answer this attempt.
    case redirect(RedirectError)
    /// The provider redirected back with `error` (RFC 6749 §4.1.2.1); `access_denied` means the user declined.
    case authorizationFailed(ProviderErrorResponse)
    /// An endpoint answered with an error (RFC 6749 §5.2, or a provider's own error body).
    case providerError(step: FlowStep, ProviderErrorResponse)
    /// An endpoint answered something that is neither a valid result nor a recognisable error.
    case invalidResponse(step: FlowStep, reason: String)
    /// The request did not complete (connection refused, timeout, TLS failure).
    case network(url: String, reason: String)
    /// A credential store could not be read or written; `path` says which file.
    case store(path: String, reason: String)
    /// The operation is not possible for this provider or credential.
    case unsupported(String)
    /// The user or the caller cancelled.
    case cancelled

    /// True for `access_denied`: the user declined consent.
    public var isAccessDenied: Bool {
        if case .authorizationFailed(let response) = self { return response.code == "access_denied" }
        return false
    }

    public var description: String {
        switch self {
        case .invalidFile(let issues):
            return issues.map(\.description).joined(separator: "\n")
        case .unknownProvider(let id, let suggestions):
            let tail = suggestions.isEmpty ? "" : " Did you mean \(suggestions.map { "'\($0)'" }.joined(separator: " or "))?"
            return "No provider named '\(id)'.\(tail) 'authkit providers list' shows the known ones."
        case .missingSetting(let providerID, let setting, let hint):
            return "\(providerID): no \(setting) is configured. \(hint)"
        case .redirect(let error):
            return Self.describe(error)
        case .authorizationFailed(let response):
            if response.code == "access_denied" {
                return "Authorization was denied at the provider (\(response.summary)). Nothing was stored."
            }
            return "The provider refused the authorization request: \(response.summary)"
        case .providerError(let step, let response):
            return "The \(step.rawValue) failed at the provider: \(response.summary)"
        case .invalidResponse(let step, let reason):
            return "The \(step.rawValue) returned an unusable response: \(reason)"
        case .network(let url, let reason):
            return "Could not reach \(url): \(reason)"
        case .store(let path, let reason):
            return "Credential store \(path): \(reason)"
        case .unsupported(let reason):
            return reason
        case .cancelled:
            return "Cancelled."
        }
    }

    private static func describe(_ error: RedirectError) -> String {
        switch error {
        case .unexpectedTarget(let expected, let received):
            return "The redirect went to \(DisplayText.sanitized(received)), not to this attempt's redirect URI \(expected)."
        case .malformed(let detail):
            return "The redirect URL is malformed: \(detail)."
        case .duplicateParameter(let name):
            return "The redirect URL has the parameter '\(DisplayText.sanitized(name, limit: 100))' more than once; it was rejected (RFC 6749 §3.1)."
        case .missingState:
            return "The redirect URL has no 'state' parameter, so it cannot be matched to this sign-in; it was rejected."
        case .stateMismatch:
            return "The redirect URL's 'state' does not match this sign-in (a stale tab, another attempt, or a forged request); it was rejected."
        case .issuerMismatch(let expected, let received):
            return "The response names issuer '\(DisplayText.sanitized(received, limit: 200))', but this sign-in was started with '\(expected)' (RFC 9207 mix-up protection); it was rejected."
        case .missingIssuer(let expected):
            return "The response has no 'iss' parameter, but '\(expected)' always sends one (RFC 9207); it was rejected."
        case .missingCode:
            return "The redirect URL has neither 'code' nor 'error'."
        case .missingRequestToken:
            return "The callback URL has no 'oauth_token', so it cannot be matched to this sign-in; it was rejected."
        case .requestTokenMismatch:
            return "The callback URL's 'oauth_token' is not this sign-in's request token (a stale tab, another attempt, or a forged request); it was rejected."
        case .missingVerifier:
            return "The callback URL has no 'oauth_verifier' (RFC 5849 §2.2); sign in again, or use the PIN flow."
        }
    }
}
