#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Who signed in, from an ID token AuthKit verified (OpenID Connect Core
/// §3.1.3.7): its signature against the provider's published keys, its
/// issuer, audience, lifetime and nonce. Nothing here comes from an
/// unverified token.
///
/// `issuer` and `subject` together name the user for good (Core §5.7: "the
/// sub (subject) and iss (issuer) Claims, used together, are the only Claims
/// that an RP can rely upon as a stable identifier"); an email address can
/// change hands and is not an identifier.
public struct Identity: Codable, Sendable, Hashable {
    /// `iss`: the provider, exactly as it signed it.
    public var issuer: String
    /// `sub`: the user at that provider, never reassigned.
    public var subject: String
    /// `email`, when the token carries it; see ``emailVerified``.
    public var email: String?
    /// `email_verified`: whether the provider checked that the user controls ``email``.
    public var emailVerified: Bool?
    /// `name`, the display name.
    public var name: String?
    /// `preferred_username`: a handle the user chose; not unique, not stable.
    public var preferredUsername: String?
    /// The claims of the verified token, as received (`aud`, `exp`, `iat`,
    /// `auth_time`, provider-specific ones such as Google's `hd`), within the
    /// bounds a token answer's members are kept in (``Credential/rawFields``):
    /// a claim nested too deep or too large is left out, with a warning.
    public var claims: [String: JSONValue]

    public init(
        issuer: String, subject: String, email: String? = nil, emailVerified: Bool? = nil, name: String? = nil,
        preferredUsername: String? = nil, claims: [String: JSONValue] = [:]
    ) {
        self.issuer = issuer
        self.subject = subject
        self.email = email
        self.emailVerified = emailVerified
        self.name = name
        self.preferredUsername = preferredUsername
        self.claims = claims
    }

    /// The standard claims read out of a verified payload.
    package init(verifiedClaims claims: [String: JSONValue], issuer: String, subject: String) {
        func text(_ name: String) -> String? {
            if case .string(let value) = claims[name] { return value }
            return nil
        }
        var verified: Bool?
        switch claims["email_verified"] {
        case .bool(let value): verified = value
        // Some providers (older Cognito, Salesforce) send the boolean as text.
        case .string("true"): verified = true
        case .string("false"): verified = false
        default: verified = nil
        }
        self.init(
            issuer: issuer, subject: subject, email: text("email"), emailVerified: verified, name: text("name"),
            preferredUsername: text("preferred_username"), claims: claims)
    }

    /// How a person would recognise the account: the email, else the
    /// preferred username, else the name, else the subject.
    public var displayName: String {
        email ?? preferredUsername ?? name ?? subject
    }
}
