#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension AuthKitError {
    /// Why an ID token was refused: ``AuthKitError/Code/idTokenRejected``.
    ///
    /// Each case is one check of OpenID Connect Core §3.1.3.7 (and §12.2 for a
    /// refresh). A refused token leaves nothing stored. No case carries the
    /// token, nor any claim naming the user: what cases carry is the
    /// provider's and the client's (issuer, audience, `azp`, key id), the
    /// header's (`alg`, `crit`, `typ`) and times (`exp`, `iat`, `nbf`,
    /// `auth_time`).
    package enum IDTokenProblem: Error, Sendable, Hashable, CustomStringConvertible {
        /// The sign-in asked for `openid`, and the token answer has no `id_token`.
        case missing
        /// Not a compact JWS of three base64url parts with JSON header and claims.
        case malformed(String)
        /// `alg` is not one the provider allows and AuthKit accepts (RS256/384/512,
        /// PS256/384/512, ES256/384, EdDSA): `none` and the HMAC algorithms never are.
        case algorithmNotAllowed(String)
        /// The header lists `crit` extensions; AuthKit understands none (RFC 7515 §4.1.11).
        case criticalHeader([String])
        /// No key of the provider's key set has this `kid` (or none fits the
        /// algorithm), after fetching the set again unless it was fetched in
        /// the last 30 s.
        case unknownKey(kid: String?)
        /// The provider's key set (`jwks_uri`) could not be used: not JSON, too
        /// large, redirected, or listing a private key.
        case keySetUnusable(String)
        /// The signature does not verify with the provider's key.
        case signatureInvalid
        /// `iss` is not the provider's issuer, byte for byte.
        case issuerMismatch(expected: String, received: String)
        /// `aud` does not name this client, or names others besides it.
        case audienceMismatch(clientID: String, received: [String])
        /// `azp` names another client.
        case authorizedPartyMismatch(clientID: String, received: String)
        /// `exp` has passed (beyond the allowed clock skew).
        case expired(at: Date)
        /// `nbf` is still ahead, or `iat` is in the future (beyond the allowed clock skew).
        case notYetValid(until: Date)
        /// `nonce` is missing or not the one this sign-in sent: a token minted
        /// for another sign-in, replayed.
        case nonceMismatch
        /// `at_hash` does not match the access token it came with.
        case accessTokenHashMismatch
        /// `c_hash` does not match the authorization code.
        case codeHashMismatch
        /// A claim Core requires is missing or of the wrong type (`sub`, `exp`, `iat`).
        case missingClaim(String)
        /// The request sent `max_age`, and `auth_time` says the user last
        /// signed in longer ago than that (Core §3.1.3.7 step 13).
        case authenticationTooOld(at: Date, maxAge: Int)
        /// A refreshed token names another issuer, subject or audience than
        /// the one the user signed in with (Core §12.2).
        case identityChanged(String)

        package var description: String {
            switch self {
            case .missing:
                "the sign-in asked for openid, but the token answer has no id_token"
            case .malformed(let detail):
                "the ID token is not a signed JWT: \(detail)"
            case .algorithmNotAllowed(let algorithm):
                "the ID token is signed with \(DisplayText.sanitized(algorithm, limit: 20)), which is not an algorithm "
                    + "the provider allows and AuthKit accepts (RS256/384/512, PS256/384/512, ES256/384, EdDSA)"
            case .criticalHeader(let names):
                "the ID token's header requires extensions AuthKit does not implement (crit: "
                    + names.map { DisplayText.sanitized($0, limit: 40) }.joined(separator: ", ") + ")"
            case .unknownKey(let kid):
                "no key in the provider's key set "
                    + (kid.map { "has the ID token's key id \(DisplayText.sanitized($0, limit: 80))" }
                        ?? "fits the ID token, which names no key id")
            case .keySetUnusable(let detail):
                "the provider's key set cannot be used: \(detail)"
            case .signatureInvalid:
                "the ID token's signature does not verify with the provider's key"
            case .issuerMismatch(let expected, let received):
                "the ID token was issued by \(Self.quoted(received, limit: 200)), not by the provider's issuer "
                    + Self.quoted(expected, limit: 200)
            case .audienceMismatch(let clientID, let received):
                "the ID token is addressed to "
                    + (received.isEmpty
                        ? "no one" : received.map { Self.quoted($0, limit: 120) }.joined(separator: ", "))
                    + ", not to this client (\(Self.quoted(clientID, limit: 120))) alone"
            case .authorizedPartyMismatch(let clientID, let received):
                "the ID token was issued to the client \(Self.quoted(received, limit: 120)) (azp), not to "
                    + Self.quoted(clientID, limit: 120)
            case .expired(let date):
                "the ID token expired at \(Self.text(date))"
            case .notYetValid(let date):
                "the ID token is not valid before \(Self.text(date)); check this machine's clock"
            case .nonceMismatch:
                "the ID token's nonce is not the one this sign-in sent: it was issued for another sign-in"
            case .accessTokenHashMismatch:
                "the ID token's at_hash does not match the access token it came with"
            case .codeHashMismatch:
                "the ID token's c_hash does not match the authorization code"
            case .missingClaim(let name):
                "the ID token has no valid \(name) claim"
            case .authenticationTooOld(let date, let maxAge):
                "the user last signed in at \(Self.text(date)), longer ago than the \(maxAge) seconds max_age asked for"
            case .identityChanged(let claim):
                "the refreshed ID token's \(claim) differs from the one the user signed in with"
            }
        }

        private static func quoted(_ text: String, limit: Int) -> String {
            "'" + DisplayText.sanitized(text, limit: limit) + "'"
        }

        private static func text(_ date: Date) -> String {
            date.formatted(.iso8601)
        }
    }
}
