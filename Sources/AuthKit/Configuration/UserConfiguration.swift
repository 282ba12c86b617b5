import Foundation

/// `$AUTHKIT_HOME/config.json`: the user's client settings per provider.
///
///     {"providers": {"qiita": {"clientID": "…", "clientSecret": "…"}}}
///
/// It may hold client secrets, so AuthKit warns when the file is readable by
/// other users (see ``FileCredentialStore`` for the same rule on credentials).
package struct UserConfiguration: Codable, Sendable, Hashable {
    package var providers: [String: ClientSettings]?

    package init(providers: [String: ClientSettings]? = nil) {
        self.providers = providers
    }

    /// Loads `config.json` from `home`; a missing file is an empty configuration.
    /// - Throws: ``AuthKitError/invalidFile(_:)`` naming the file and field when it is malformed.
    package static func load(home: URL) throws -> UserConfiguration {
        let url = home.appendingPathComponent("config.json")
        guard FileManager.default.fileExists(atPath: url.path) else { return UserConfiguration() }
        do {
            return try JSONDecoder().decode(UserConfiguration.self, from: Data(contentsOf: url))
        } catch let error as DecodingError {
            throw AuthKitError.invalidFile([DescriptorLoader.issue(for: error, file: url.path)])
        } catch {
            throw AuthKitError.invalidFile([FileIssue(file: url.path, field: "", problem: DescriptorLoader.reason(error))])
        }
    }
}
