import AuthKit
import Crypto

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Who a web session belongs to: the provider, and the user there as the
/// provider names them for good (OpenID Connect's `iss` and `sub`, or the
/// descriptor's who-am-I answer). An email address is shown, never keyed on.
public struct SignedInUser: Codable, Sendable, Hashable {
    /// The descriptor id the user signed in with.
    public var providerID: String
    /// The user at the provider: the ID token's `sub`, or the who-am-I
    /// endpoint's subject member.
    public var subject: String
    /// The ID token's `iss`, when the sign-in verified one.
    public var issuer: String?
    /// How a person would recognise the account (email, login, name).
    public var displayName: String?
    /// Where the user's credential is stored: the provider and a label made
    /// from `issuer` (or, for a who-am-I sign-in, the server that answered,
    /// where the descriptor's host is a placeholder) and `subject`, so that
    /// two users never share one.
    public var credentialKey: CredentialKey

    public init(providerID: String, subject: String, issuer: String?, displayName: String?) {
        self.init(providerID: providerID, subject: subject, issuer: issuer, displayName: displayName, realm: nil)
    }

    /// - Parameter realm: whose numbering `subject` is in, where there is
    ///   no issuer (``OAuth2Client/whoAmIRealm``); the provider id by default.
    init(providerID: String, subject: String, issuer: String?, displayName: String?, realm: String?) {
        self.providerID = providerID
        self.subject = subject
        self.issuer = issuer
        self.displayName = displayName
        self.credentialKey = CredentialKey(
            providerID: providerID, label: Self.label(issuer: issuer ?? realm ?? providerID, subject: subject))
    }

    /// `user-` and 128 bits of SHA-256 over issuer and subject: stable for a
    /// user, the same on every instance, and no user-chosen text in a key.
    static func label(issuer: String, subject: String) -> String {
        let digest = SHA256.hash(data: Data((issuer + "\u{0}" + subject).utf8))
        return "user-" + Hex.encode(digest.prefix(16))
    }
}
