import AuthKit
import Foundation

/// The human-readable lines `authkit` prints about a credential: never a
/// secret, only its last four characters. Every value a provider (or a label
/// someone typed) supplied has its control characters escaped: a scope or
/// screen name must not move the cursor or rewrite the terminal.
enum CredentialSummary {
    static func lines(_ credential: Credential, now: Date = Date()) -> [String] {
        var lines = ["provider:  \(safe(credential.providerID))"]
        lines.append("label:     \(credential.label.map(safe) ?? "(default)")")
        lines.append("protocol:  \(credential.kind.rawValue)")
        lines.append("token:     \(Credential.mask(credential.accessToken)) (\(safe(credential.tokenType)))")
        if credential.refreshToken != nil { lines.append("refresh:   yes") }
        lines.append("scopes:    \(credential.scopes.isEmpty ? "(none listed)" : safe(credential.scopes.joined(separator: " ")))")
        lines.append("expires:   \(expiry(credential, now: now))")
        for key in ["screen_name", "user_id"] {
            if let value = credential.rawFields[key]?.scalarText { lines.append("\(key.replacingOccurrences(of: "_", with: " ")): \(safe(value))") }
        }
        return lines
    }

    /// Text from a provider or a user, made safe for a terminal line.
    static func safe(_ text: String) -> String { DisplayText.sanitized(text, limit: 200) }

    static func expiry(_ credential: Credential, now: Date = Date()) -> String {
        guard let expiresAt = credential.expiresAt else { return "unknown (the provider did not say)" }
        let seconds = Int(expiresAt.timeIntervalSince(now))
        let stamp = ISO8601DateFormatter().string(from: expiresAt)
        if seconds <= 0 { return "\(stamp) (expired)" }
        let relative = seconds >= 86400 ? "\(seconds / 86400) d" : seconds >= 3600 ? "\(seconds / 3600) h" : "\(max(1, seconds / 60)) min"
        return "\(stamp) (in \(relative))"
    }
}
