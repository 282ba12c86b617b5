import Logging

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// `$AUTHKIT_HOME/config.json`: the user's client settings per provider, and
/// where the command line keeps credentials (`store`: `file`, the default, or
/// `keyring`).
///
///     {"store": "keyring", "providers": {"qiita": {"clientID": "…", "clientSecret": "…"}}}
///
/// A provider's settings are ``ClientSettings``' members: `clientID`,
/// `clientSecret`, `redirectURI`, `placeholders`, `scopes` and
/// `privateKeyFile` (a key for `private_key_jwt`, RFC 7523).
///
/// It may hold client secrets, so AuthKit warns when such a file is readable
/// by other users (see ``FileCredentialStore`` for the same rule on credentials),
/// and its placeholders choose hosts, so a file another user could have
/// written is not read at all.
package struct UserConfiguration: Codable, Sendable, Hashable {
    package var providers: [String: ClientSettings]?
    /// `file` or `keyring` (the schema allows no other).
    package var store: String?

    package init(providers: [String: ClientSettings]? = nil, store: String? = nil) {
        self.providers = providers
        self.store = store
    }

    /// Only the `store` member, read as ``load(home:)`` reads the file (the
    /// same refusals) but without checking the provider settings: a command
    /// that uses none (`token list`) is not stopped by a mistake in one, and
    /// a mistake in `store` itself is still named.
    package static func storeSetting(home: URL) throws -> String? {
        guard let data = try contents(home: home) else { return nil }
        let url = home.appendingPathComponent("config.json")
        let raw = try DescriptorLoader.parseRefusingRepeatedNames(data, file: url.path)
        guard case .object(let members) = raw, let value = members["store"] else { return nil }
        guard case .string(let text) = value, ["file", "keyring"].contains(text) else {
            throw AuthKitError.invalidFile([
                FileIssue(file: url.path, field: "store", problem: "must be \"file\" or \"keyring\".")
            ])
        }
        return text
    }

    /// The file's bytes, refused when another user could have written it;
    /// `nil` when there is none.
    private static func contents(home: URL) throws -> Data? {
        let url = home.appendingPathComponent("config.json")
        // Only a name that is not there means no file (``FileSystem/isAbsent(_:)``):
        // a dangling link read as no configuration, so a `"store": "keyring"`
        // in it was dropped without a word and tokens went to the plaintext file.
        guard !FileSystem.isAbsent(url.path) else { return nil }
        if FileSystem.isDanglingLink(url.path) {
            throw AuthKitError.invalidFile([
                FileIssue(
                    file: url.path, field: "",
                    problem:
                        "is a symbolic link to a file that does not exist; restore what it points to, or remove the link."
                )
            ])
        }
        let read: (data: Data, info: stat)
        do {
            read = try FileSystem.contentsAndStatus(
                of: url.path, accepting: .regularFile, limit: DescriptorLoader.maximumFileSize)
        } catch {
            throw AuthKitError.invalidFile([FileIssue(file: url.path, field: "", problem: error.description)])
        }
        // Its placeholders choose hosts, so it is refused as a foreign
        // descriptor is (``FileSystem/foreignWriteProblem(at:)``): the file
        // that was read, by its descriptor's status.
        if let problem = FileSystem.foreignWriteProblem(at: url.path, opened: read.info) {
            throw AuthKitError.invalidFile([FileIssue(file: url.path, field: "", problem: problem)])
        }
        return read.data
    }

    /// Loads `config.json` from `home`; a missing file is an empty configuration.
    /// - Throws: ``AuthKitError/Code/invalidFile`` naming the file and field when it is malformed.
    package static func load(home: URL) throws -> UserConfiguration {
        let url = home.appendingPathComponent("config.json")
        guard let data = try contents(home: home) else { return UserConfiguration() }
        // As strict as a descriptor: a misspelt key (clientId) would otherwise be
        // ignored and the setting silently missing.
        let raw = try DescriptorLoader.parseRefusingRepeatedNames(data, file: url.path)
        let issues = SchemaCheck(json: schema, reference: "README.md, \"Client id and secret\"").problems(
            in: raw, file: url.path)
        guard issues.isEmpty else { throw AuthKitError.invalidFile(issues) }
        let configuration: UserConfiguration
        do {
            configuration = try JSONDecoder().decode(UserConfiguration.self, from: data)
        } catch let error as DecodingError {
            throw AuthKitError.invalidFile([DescriptorLoader.issue(for: error, file: url.path)])
        }
        let scopeIssues = (configuration.providers ?? [:]).sorted { $0.key < $1.key }.flatMap { id, settings in
            (settings.scopes ?? []).enumerated().compactMap { index, scope in
                ScopeToken.problem(scope).map {
                    FileIssue(
                        file: url.path, field: "providers.\(id).scopes[\(index)]",
                        problem: ScopeToken.describe($0, scope))
                }
            }
        }
        guard scopeIssues.isEmpty else { throw AuthKitError.invalidFile(scopeIssues) }
        if let warning = configuration.exposedSecretWarning(path: url.path),
            warned.withLock({ $0.insert(warning).inserted })
        {
            Logger(label: "authkit.config").warning("\(warning)")
        }
        return configuration
    }

    /// A warning when the file holds a client secret that other users can
    /// read, with the `chmod` that fixes it (as ``FileCredentialStore`` warns
    /// about credentials); `nil` otherwise.
    package func exposedSecretWarning(path: String) -> String? {
        guard providers?.values.contains(where: { $0.clientSecret?.isEmpty == false }) == true else { return nil }
        guard let mode = FileSystem.permissions(of: path), mode & 0o044 != 0 else { return nil }
        return
            "\(path) holds a client secret and other users can read it (mode \(String(mode & 0o777, radix: 8))); run: chmod 600 \(FileSystem.shellQuoted(path))"
    }

    /// Warnings already given by this process: settings are read once per authenticator.
    private static let warned = LockedValue<Set<String>>([])

    /// The shape of `config.json`, checked like a descriptor's.
    static let schema = #"""
        {"type": "object", "additionalProperties": false, "properties": {
          "store": {"enum": ["file", "keyring"]},
          "providers": {"type": "object", "additionalProperties": {
            "type": "object", "additionalProperties": false, "properties": {
              "clientID": {"type": "string"}, "clientSecret": {"type": "string"}, "redirectURI": {"type": "string"},
              "placeholders": {"type": "object", "additionalProperties": {"type": "string"}},
              "scopes": {"type": "array", "items": {"type": "string"}}, "privateKeyFile": {"type": "string"}}}}}}
        """#
}
