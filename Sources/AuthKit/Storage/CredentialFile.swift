#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The on-disk document of ``FileCredentialStore``: a version and a list.
///
/// A list rather than a dictionary so the JSON reads naturally and keys with
/// `nil` labels need no encoding trick; the version lets a later format migrate.
struct CredentialFile: Codable, Sendable {
    static let currentVersion = 1

    var version: Int
    var credentials: [Credential]

    init(credentials: [Credential]) {
        self.version = Self.currentVersion
        self.credentials = credentials.sorted(by: Self.order)
    }

    static func order(_ a: Credential, _ b: Credential) -> Bool {
        (a.providerID, a.label ?? "") < (b.providerID, b.label ?? "")
    }
}
