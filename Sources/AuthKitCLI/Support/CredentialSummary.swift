import AuthKit
import Foundation

/// The human-readable lines `authkit` prints about a credential: never a
/// secret, only its last four characters.
enum CredentialSummary {
    static func lines(_ credential: Credential, now: Date = Date()) -> [String] {
        var lines = ["provider:  \(credential.providerID)"]
        lines.append("account:   \(credential.label ?? "(default)")")
        lines.append("protocol:  \(credential.kind.rawValue)")
        lines.append("token:     \(Credential.mask(credential.accessToken)) (\(credential.tokenType))")
        if credential.refreshToken != nil { lines.append("refresh:   yes") }
        lines.append("scopes:    \(credential.scopes.isEmpty ? "(none listed)" : credential.scopes.joined(separator: " "))")
        lines.append("expires:   \(expiry(credential, now: now))")
        for key in ["screen_name", "user_id"] {
            if let value = credential.rawFields[key]?.scalarText { lines.append("\(key.replacingOccurrences(of: "_", with: " ")): \(value)") }
        }
        return lines
    }

    static func expiry(_ credential: Credential, now: Date = Date()) -> String {
        guard let expiresAt = credential.expiresAt else { return "unknown (the provider did not say)" }
        let seconds = Int(expiresAt.timeIntervalSince(now))
        let stamp = ISO8601DateFormatter().string(from: expiresAt)
        if seconds <= 0 { return "\(stamp) (expired)" }
        let relative = seconds >= 86400 ? "\(seconds / 86400) d" : seconds >= 3600 ? "\(seconds / 3600) h" : "\(max(1, seconds / 60)) min"
        return "\(stamp) (in \(relative))"
    }
}
