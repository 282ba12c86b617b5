/// Why a redirect URL was not accepted as the answer to an authorization attempt.
///
/// Each case is distinct so a loopback listener can decide to keep waiting
/// (a stray request, a forged `state`) and a test can assert the exact reason.
public enum RedirectError: Error, Sendable, Hashable {
    /// The URL is not the redirect URI of this attempt (scheme, host, port or path differ).
    case unexpectedTarget(expected: String, received: String)
    /// The URL could not be parsed, or a parameter has an undecodable escape.
    case malformed(String)
    /// A parameter appears more than once (RFC 6749 §3.1 forbids it).
    case duplicateParameter(String)
    /// No `state` parameter: not an answer to a request AuthKit made (RFC 6749 §10.12).
    case missingState
    /// `state` differs from the attempt's: possibly a CSRF attempt, or another attempt's answer.
    case stateMismatch
    /// RFC 9207: `iss` names another authorization server (a mix-up attack).
    case issuerMismatch(expected: String, received: String)
    /// RFC 9207: the provider announces `iss` but the response has none.
    case missingIssuer(expected: String)
    /// Neither `code` nor `error`: the redirect carries no answer.
    case missingCode
    /// OAuth 1.0a: no `oauth_token` (nor `denied`), so the callback cannot be
    /// matched to this attempt's request token (RFC 5849 §2.2).
    case missingRequestToken
    /// OAuth 1.0a: the callback's `oauth_token` (or `denied`) is not this
    /// attempt's request token — another attempt's answer or a forged one.
    case requestTokenMismatch
    /// OAuth 1.0a: the callback names this attempt's request token but carries
    /// no `oauth_verifier` (RFC 5849 §2.2 requires it).
    case missingVerifier
}
