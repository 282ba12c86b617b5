/// Why a redirect URL was not accepted as the answer to an authorization attempt.
///
/// Each case is distinct so a loopback listener can decide to keep waiting
/// (a stray request, a forged `state`) and a test can assert the exact reason.
package enum RedirectError: Error, Sendable, Hashable {
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
    /// OAuth 1.0a: the attempt used the out-of-band (PIN) flow, so no callback URL answers it.
    case outOfBandAttempt
    /// OAuth 1.0a: the verifier (a typed PIN, or the callback's
    /// `oauth_verifier`) is no code a provider issues: it holds a space or
    /// a control character, or is a whole URL pasted where the PIN goes.
    /// The text says what is wrong and what to do, which differs by flow
    /// (type the PIN again; use the callback as the provider sent it).
    case unusableVerifier(String)
}

extension RedirectError: CustomStringConvertible {
    /// 1 to 64 ASCII letters, digits, `_`, `-`, `.`, `[` or `]`: every
    /// parameter name the RFCs define, and none that says anything.
    static func isPlainName(_ name: String) -> Bool {
        (1...64).contains(name.utf8.count)
            && name.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "-"), UInt8(ascii: "."),
                    UInt8(ascii: "["), UInt8(ascii: "]"):
                    true
                default: false
                }
            }
    }

    package var description: String {
        switch self {
        case .unexpectedTarget(let expected, let received):
            return
                "The redirect went to \(DisplayText.sanitized(received)), not to this attempt's redirect URI \(expected)."
        case .malformed(let detail):
            return "The redirect URL is malformed: \(detail)."
        // Checked before `state`, so anyone who can send the browser to the
        // redirect URI chooses the name: quoted only when it reads as a
        // parameter name, not a sentence ("Sign-in blocked: get the fix at
        // …") on the listener's page and in the terminal.
        case .duplicateParameter(let name):
            let shown = Self.isPlainName(name) ? "the parameter '\(name)'" : "a parameter"
            return "The redirect URL has \(shown) more than once; it was rejected (RFC 6749 §3.1)."
        case .missingState:
            return
                "The redirect URL has no 'state' parameter, so it cannot be matched to this sign-in; it was rejected."
        case .stateMismatch:
            return
                "The redirect URL's 'state' does not match this sign-in (a stale tab, another attempt, or a forged request); it was rejected."
        case .issuerMismatch(let expected, let received):
            return
                "The response names issuer '\(DisplayText.sanitized(received, limit: 200))', but this sign-in was started with '\(expected)' (RFC 9207 mix-up protection); it was rejected."
        case .missingIssuer(let expected):
            return
                "The response has no 'iss' parameter, but '\(expected)' always sends one (RFC 9207); it was rejected."
        case .missingCode:
            return "The redirect URL has neither 'code' nor 'error'."
        case .missingRequestToken:
            return "The callback URL has no 'oauth_token', so it cannot be matched to this sign-in; it was rejected."
        case .requestTokenMismatch:
            return
                "The callback URL's 'oauth_token' is not this sign-in's request token (a stale tab, another attempt, or a forged request); it was rejected."
        case .missingVerifier:
            return "The callback URL has no 'oauth_verifier' (RFC 5849 §2.2); sign in again, or use the PIN flow."
        case .unusableVerifier(let reason):
            return
                "The verification code \(reason). It is not repeated here."
        case .outOfBandAttempt:
            return
                "This sign-in used the out-of-band (PIN) flow; enter the PIN the provider shows instead of a callback URL."
        }
    }
}
