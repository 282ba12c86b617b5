import AuthKit

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The human-readable lines `authkit` prints about a credential: never a
/// secret, only its last four characters. Every value a provider (or a label
/// someone typed) supplied has its control characters escaped: a scope or
/// screen name must not move the cursor or rewrite the terminal.
enum CredentialSummary {
    static func lines(_ credential: Credential, now: Date = Date()) -> [String] {
        var lines = ["provider:  \(safe(credential.providerID))"]
        lines.append("label:     \(credential.label.map(safe) ?? "(default)")")
        // Whose it is, as the provider's "who am I" endpoint said at sign-in.
        if let account = credential.account {
            lines.append("account:   \(safe(account)) (as the provider named it at sign-in)")
        }
        // OpenID Connect: who signed in, from the ID token AuthKit verified.
        if let identity = credential.identity {
            lines.append("user:      \(safe(identity.displayName)) (ID token verified)")
            lines.append("subject:   \(safe(identity.subject)) at \(safe(identity.issuer))")
        }
        lines.append("protocol:  \(credential.kind.rawValue)")
        lines.append("token:     \(Credential.mask(credential.accessToken)) (\(safe(credential.tokenType)))")
        if credential.refreshToken != nil { lines.append("refresh:   yes") }
        if let key = credential.proofKey { lines.append("bound to:  DPoP key \(key.thumbprint) (RFC 7638 thumbprint)") }
        if let grant = credential.grantType { lines.append("grant:     \(safe(grant)) (renewed by asking again)") }
        lines.append(
            "scopes:    \(credential.scopes.isEmpty ? "(none listed)" : safe(credential.scopes.joined(separator: " ")))"
        )
        lines.append("expires:   \(expiry(credential, now: now))")
        if let deadline = credential.refreshTokenExpiresAt {
            lines.append("sign in again by: \(stamp(deadline, now: now)) (when the refresh token expires)")
        }
        // OAuth 1.0a providers name the account (Twitter's screen_name and
        // user_id), in the column the other fields use.
        let screenName = credential.rawFields["screen_name"]?.scalarText
        let userID = credential.rawFields["user_id"]?.scalarText
        if screenName != nil || userID != nil {
            let id = userID.map { screenName == nil ? "user id \(safe($0))" : " (user id \(safe($0)))" } ?? ""
            lines.append("account:   \(screenName.map(safe) ?? "")\(id)")
        }
        return lines
    }

    /// The credential as `--json` prints it: all but the private half of its
    /// DPoP key, which never leaves the store (the key's thumbprint is in
    /// the summary; the token type says it is bound).
    static func printable(_ credential: Credential) -> Credential {
        var printable = credential
        printable.proofKey = nil
        return printable
    }

    /// Text from a provider or a user, made safe for a terminal line.
    static func safe(_ text: String) -> String { DisplayText.sanitized(text, limit: 200) }

    static func expiry(_ credential: Credential, now: Date = Date()) -> String {
        guard let expiresAt = credential.expiresAt else {
            // RFC 5849 tokens have no lifetime: they last until revoked.
            return credential.kind == .oauth1 ? "never (OAuth 1.0a)" : "unknown (the provider did not say)"
        }
        return stamp(expiresAt, now: now)
    }

    /// `2026-12-01T10:00:00Z (in 3 d)`, or `(expired)`.
    static func stamp(_ date: Date, now: Date) -> String {
        let seconds = Int(date.timeIntervalSince(now))
        let stamp = date.formatted(.iso8601)
        if seconds <= 0 { return "\(stamp) (expired)" }
        let relative =
            seconds >= 86400
            ? "\(seconds / 86400) d" : seconds >= 3600 ? "\(seconds / 3600) h" : "\(max(1, seconds / 60)) min"
        return "\(stamp) (in \(relative))"
    }

    /// A warning when the refresh token dies within two weeks: after that the
    /// user must sign in again, and a refresh cannot help.
    static func signInWarning(_ credential: Credential, now: Date = Date()) -> String? {
        guard let deadline = credential.refreshTokenExpiresAt, deadline.timeIntervalSince(now) < 14 * 86400 else {
            return nil
        }
        let when = deadline <= now ? "has expired" : "expires \(stamp(deadline, now: now))"
        return
            "authkit: warning: the refresh token of \(credential.key) \(when); sign in again: authkit authorize \(ShellWord.account(credential.key))"
    }
}
