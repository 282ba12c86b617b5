import ArgumentParser
import AuthKit

/// The client registration to use, overriding the environment and config.json.
struct ClientOptions: ParsableArguments {
    // Taken whatever it starts with (as --timeout): one random base64url
    // value in 64 starts with '-', and was "Missing value" with no hint.
    // A flag in its place is refused (``checkNotAFlag(_:after:)``).
    @Option(
        name: .long, parsing: .unconditional,
        help: ArgumentHelp(
            "Your app's client id (or consumer key). Default: $AUTHKIT_<ID>_CLIENT_ID, then $AUTHKIT_HOME/config.json.",
            valueName: "id"))
    var clientID: String?

    @Option(
        name: .long, parsing: .unconditional,
        help: ArgumentHelp(
            "Your app's client secret (or consumer secret). Prefer $AUTHKIT_<ID>_CLIENT_SECRET: a command line is visible to other users.",
            valueName: "secret"))
    var clientSecret: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "A file with your app's private key (PEM or JWK, mode 600): the client then authenticates with private_key_jwt (RFC 7523), not a secret. Default: $AUTHKIT_<ID>_PRIVATE_KEY_FILE, then config.json.",
            valueName: "file"))
    var privateKey: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "A host placeholder value such as team=acme, for descriptors with {team} in their URLs (repeatable).",
            valueName: "name=value"))
    var placeholder: [String] = []

    /// `--placeholder name=value` entries as a dictionary (`token import` takes them too).
    static func placeholders(_ entries: [String]) throws -> [String: String] {
        var placeholders = [String: String]()
        for entry in entries {
            let parts = entry.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2, !parts[0].isEmpty else {
                throw CLIError(
                    "--placeholder takes name=value, e.g. --placeholder team=acme; got '\(DisplayText.sanitized(entry, limit: 80))'."
                )
            }
            placeholders[parts[0]] = parts[1]
        }
        return placeholders
    }

    func validate() throws {
        try Self.checkNotAFlag(clientID, after: "--client-id")
        try Self.checkNotAFlag(clientSecret, after: "--client-secret")
    }

    /// A value taken whatever it starts with (`parsing: .unconditional`: a
    /// secret or id may begin with `-`) that is itself a flag, `--json` or
    /// `-v` (`--client-secret --json`: the secret left out), is refused,
    /// naming the flag it took, rather than sent as the value. Only the
    /// flag's name is repeated, never what follows an `=`.
    static func checkNotAFlag(_ value: String?, after flag: String) throws {
        guard let value, let name = flagName(value) else { return }
        let shown = name.count < value.count ? name + "=…" : name
        throw ValidationError(
            "\(flag) took \(shown) as its value, which is a flag: give the value right after \(flag). "
                + "(A value that starts with '-' is taken as it is; \(flag)=VALUE also works.)")
    }

    /// `--name` (of `--name` or `--name=…`) or `-x` when `value` is shaped
    /// as a flag; nil for anything else, such as a secret that starts with
    /// '-' (random text is never only lowercase letters and dashes).
    static func flagName(_ value: String) -> String? {
        if value.count == 2, value.hasPrefix("-"), let letter = value.last, letter.isASCII, letter.isLetter {
            return value
        }
        let name = value.prefix { $0 != "=" }
        let words = name.dropFirst(2)
        guard name.hasPrefix("--"), words.count >= 2, words.first != "-",
            words.allSatisfy({ ("a"..."z").contains($0) || $0 == "-" })
        else { return nil }
        return String(name)
    }

    func settings() throws -> ClientSettings {
        let placeholders = try Self.placeholders(placeholder)
        return ClientSettings(
            clientID: clientID, clientSecret: clientSecret,
            placeholders: placeholders.isEmpty ? nil : placeholders, privateKeyFile: privateKey)
    }
}
