#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The per-user, per-provider values that never belong in a shipped
/// descriptor: the client id and secret the user registered, the redirect URI
/// they registered, host placeholder values and default scopes.
///
/// ``resolve(providerID:explicit:environment:configuration:)`` merges three
/// sources, first match wins per field:
/// 1. values the caller passes (CLI flags, app code);
/// 2. environment variables `AUTHKIT_<ID>_CLIENT_ID`, `AUTHKIT_<ID>_CLIENT_SECRET`,
///    `AUTHKIT_<ID>_REDIRECT_URI`, `AUTHKIT_<ID>_PRIVATE_KEY_FILE` and `AUTHKIT_<ID>_<PLACEHOLDER>`, where `<ID>` is
///    the provider id in upper case with every character other than A–Z and 0–9
///    replaced by `_` (`my-gitlab` → `AUTHKIT_MY_GITLAB_CLIENT_ID`);
/// 3. the user configuration file `$AUTHKIT_HOME/config.json`:
///    `{"providers": {"qiita": {"clientID": "…", "clientSecret": "…"}}}`.
public struct ClientSettings: Codable, Sendable, Hashable {
    public var clientID: String?
    public var clientSecret: String?
    public var redirectURI: String?
    public var placeholders: [String: String]?
    public var scopes: [String]?
    /// A file holding the client's private key (PEM or JWK), readable by its
    /// owner only: with it, the client authenticates with `private_key_jwt`
    /// (RFC 7523 §2.2, OpenID Connect Core §9) wherever it authenticates,
    /// and sends no secret.
    public var privateKeyFile: String?

    public init(
        clientID: String? = nil, clientSecret: String? = nil, redirectURI: String? = nil,
        placeholders: [String: String]? = nil, scopes: [String]? = nil, privateKeyFile: String? = nil
    ) {
        self.privateKeyFile = privateKeyFile
        self.clientID = clientID
        self.clientSecret = clientSecret
        self.redirectURI = redirectURI
        self.placeholders = placeholders
        self.scopes = scopes
    }

    /// `AUTHKIT_QIITA` for `qiita`; append `_CLIENT_ID` and so on.
    package static func environmentPrefix(for providerID: String) -> String {
        let upper = providerID.uppercased().unicodeScalars.map { scalar -> Character in
            (("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar)) ? Character(scalar) : "_"
        }
        return "AUTHKIT_" + String(upper)
    }

    /// The environment variables AuthKit itself reads (the CLI, the store,
    /// the sandbox, the web example's keys): no placeholder may be read from
    /// one (``DescriptorValidator``). `ProviderBoundaryTests` checks every
    /// `"AUTHKIT_…"` literal in the sources is here.
    package static let authKitVariables: Set<String> = [
        "AUTHKIT_HOME", "AUTHKIT_STORE", "AUTHKIT_SANDBOX", "AUTHKIT_TOKEN_SECRET", "AUTHKIT_CONSUMER_SECRET",
        "AUTHKIT_BUNDLED_PROVIDERS", "AUTHKIT_WEB_KEYS", "AUTHKIT_KEYRING_TIMEOUT",
    ]

    /// The endings of the environment variables a provider's own settings use.
    package static let settingSuffixes = ["CLIENT_ID", "CLIENT_SECRET", "REDIRECT_URI", "PRIVATE_KEY_FILE"]

    /// Every environment variable `descriptor`'s settings are read from.
    package static func environmentVariables(for descriptor: ProviderDescriptor) -> [String] {
        environmentVariables(providerID: descriptor.id, placeholderNames: Array(descriptor.placeholders.keys))
    }

    /// The same, from a provider's id and placeholder names alone.
    package static func environmentVariables(providerID: String, placeholderNames: [String]) -> [String] {
        settingSuffixes.map { environmentPrefix(for: providerID) + "_" + $0 }
            + placeholderNames.sorted().map { placeholderVariable(providerID: providerID, name: $0) }
    }

    /// The variable holding placeholder `name` of `providerID`: `AUTHKIT_QIITA_TEAM_TEAM`.
    package static func placeholderVariable(providerID: String, name: String) -> String {
        environmentPrefix(for: providerID) + "_" + environmentPrefix(for: name).dropFirst("AUTHKIT_".count)
    }

    /// Reads the values for `providerID` from the environment.
    package static func fromEnvironment(
        providerID: String, placeholderNames: [String],
        environment: [String: String]
    ) -> ClientSettings {
        let prefix = environmentPrefix(for: providerID)
        func value(_ suffix: String) -> String? {
            guard let value = environment["\(prefix)_\(suffix)"], !value.isEmpty else { return nil }
            return value
        }
        var placeholders = [String: String]()
        for name in placeholderNames {
            if let found = environment[placeholderVariable(providerID: providerID, name: name)], !found.isEmpty {
                placeholders[name] = found
            }
        }
        return ClientSettings(
            clientID: value("CLIENT_ID"), clientSecret: value("CLIENT_SECRET"),
            redirectURI: value("REDIRECT_URI"),
            placeholders: placeholders.isEmpty ? nil : placeholders, privateKeyFile: value("PRIVATE_KEY_FILE"))
    }

    /// Merges `self` over `fallback`, field by field.
    package func merged(over fallback: ClientSettings) -> ClientSettings {
        ClientSettings(
            clientID: clientID ?? fallback.clientID,
            clientSecret: clientSecret ?? fallback.clientSecret,
            redirectURI: redirectURI ?? fallback.redirectURI,
            placeholders: (fallback.placeholders ?? [:]).merging(placeholders ?? [:]) { _, new in new }
                .nilIfEmpty,
            scopes: scopes ?? fallback.scopes, privateKeyFile: privateKeyFile ?? fallback.privateKeyFile)
    }

    /// Caller values, then environment, then configuration file.
    package static func resolve(
        providerID: String, placeholderNames: [String] = [], explicit: ClientSettings = ClientSettings(),
        environment: [String: String] = ProcessInfo.processInfo.environment,
        configuration: UserConfiguration? = nil
    ) -> ClientSettings {
        let fromFile = configuration?.providers?[providerID] ?? ClientSettings()
        let fromEnvironment = fromEnvironment(
            providerID: providerID, placeholderNames: placeholderNames,
            environment: environment)
        return explicit.merged(over: fromEnvironment.merged(over: fromFile))
    }

    /// The standard resolution for `descriptor`: `explicit`, then the process
    /// environment, then `$AUTHKIT_HOME/config.json`.
    /// - Throws: ``AuthKitError/Code/invalidFile`` when `config.json` is
    ///   malformed, or gives this provider a placeholder its descriptor does
    ///   not declare (a misspelt name would be ignored, and the real one
    ///   reported missing or its default used).
    public static func standard(
        for descriptor: ProviderDescriptor, explicit: ClientSettings = ClientSettings(),
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> ClientSettings {
        let home = AuthKitHome.directory(environment: environment)
        let configuration = try UserConfiguration.load(home: home)
        if let unknown = descriptor.undeclaredPlaceholder(
            in: configuration.providers?[descriptor.id]?.placeholders.map { Array($0.keys) } ?? [])
        {
            throw AuthKitError.invalidFile([
                FileIssue(
                    file: home.appendingPathComponent("config.json").path,
                    field: "providers.\(descriptor.id).placeholders.\(unknown.name)", problem: unknown.problem)
            ])
        }
        let resolved = resolve(
            providerID: descriptor.id, placeholderNames: descriptor.placeholders.keys.sorted(),
            explicit: explicit, environment: environment, configuration: configuration)
        try checkSecretGoesWhereItWasGivenFor(
            resolved, descriptor: descriptor,
            layers: [
                (explicit, "given explicitly"),
                (
                    fromEnvironment(
                        providerID: descriptor.id, placeholderNames: descriptor.placeholders.keys.sorted(),
                        environment: environment),
                    "from the environment (\(environmentPrefix(for: descriptor.id))_CLIENT_SECRET)"
                ),
                (
                    configuration.providers?[descriptor.id] ?? ClientSettings(),
                    "from \(home.appendingPathComponent("config.json").path)"
                ),
            ])
        return resolved
    }

    /// Refuses a client secret given beside a placeholder that chooses a
    /// host (`host`, `team`: a `{name}` in an endpoint's host) which a more
    /// explicit setting changes: the settings are merged field by field, so
    /// config.json's secret for `host=gitlab.corp.example` went, before any
    /// consent, to the host a `--placeholder host=…` or `AUTHKIT_…_HOST`
    /// named (a typo, or another instance's operator). Hosts are compared,
    /// not values: a placeholder in a path (Microsoft's `tenant`) or a
    /// parameter (Reddit's `user_agent`) sends the secret to the same server.
    /// A secret given without that placeholder says nothing of where it is
    /// for, and is left alone.
    static func checkSecretGoesWhereItWasGivenFor(
        _ resolved: ClientSettings, descriptor: ProviderDescriptor, layers: [(ClientSettings, String)]
    ) throws {
        guard let secret = resolved.clientSecret, !secret.isEmpty,
            let (layer, origin) = layers.first(where: { $0.0.clientSecret == secret }),
            let given = layer.placeholders, !given.isEmpty
        else { return }
        let used = descriptor.placeholderValues(settings: resolved)
        let meant = used.merging(given.filter { descriptor.placeholders[$0.key] != nil }) { _, own in own }
        func filled(_ template: Substring, _ values: [String: String]) -> String {
            var text = String(template)
            for (name, value) in values { text = text.replacing("{\(name)}", with: value) }
            return text.lowercased()
        }
        // The endpoints a client secret goes to (or, OAuth 1.0a, signs for).
        let receiving = [
            descriptor.token?.url, descriptor.authorization?.pushedRequestURL, descriptor.device?.url,
            descriptor.refresh?.url, descriptor.followUp?.url, descriptor.revocation?.url,
            descriptor.introspectionURL, descriptor.oauth1?.requestTokenURL, descriptor.oauth1?.accessTokenURL,
        ]
        for template in receiving.compactMap({ $0 }).compactMap(PlaceholderValue.hostTemplate(in:)) {
            let (there, meantHost) = (filled(template, used), filled(template, meant))
            guard there != meantHost else { continue }
            let names = given.keys.sorted().filter { template.contains("{\($0)}") && used[$0] != given[$0] }
            let name = names.first ?? "a placeholder"
            throw AuthKitError.invalidSetting(
                providerID: descriptor.id, .clientSecret,
                problem:
                    "it comes \(origin) with \(name)=\(DisplayText.sanitized(given[name] ?? "", limit: 120)), for \(DisplayText.sanitized(meantHost, limit: 120)), but \(name) is \(DisplayText.sanitized(used[name] ?? "", limit: 120)) here, set more explicitly, so the secret would go to a server it was not given for (\(DisplayText.sanitized(there, limit: 120))). Give that server's client id and secret the same way as \(name), or change \(name) where the secret is"
            )
        }
    }
}

extension Dictionary {
    fileprivate var nilIfEmpty: Self? { isEmpty ? nil : self }
}

/// Printed, logged or dumped, settings name the client and mask its secret
/// (it came from the environment or config.json, and a `print(settings)`
/// while debugging a sign-in put it in a terminal's scrollback or a log).
extension ClientSettings: CustomStringConvertible, CustomReflectable {
    public var description: String {
        var parts = ["client id: \(clientID ?? "none")"]
        if clientSecret != nil { parts.append("client secret: ••••") }
        if let privateKeyFile { parts.append("private key file: \(privateKeyFile)") }
        if let redirectURI { parts.append("redirect URI: \(redirectURI)") }
        if let placeholders, !placeholders.isEmpty {
            parts.append(
                "placeholders: "
                    + placeholders.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(
                        separator: " "))
        }
        if let scopes { parts.append("scopes: \(scopes.joined(separator: " "))") }
        return "ClientSettings(" + parts.joined(separator: ", ") + ")"
    }

    public var customMirror: Mirror { Mirror(self, children: ["description": description]) }
}
