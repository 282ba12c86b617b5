import ArgumentParser
import AuthKit

/// The client registration to use, overriding the environment and config.json.
struct ClientOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "Your app's client id (or consumer key). Default: $AUTHKIT_<ID>_CLIENT_ID, then $AUTHKIT_HOME/config.json.",
            valueName: "id"))
    var clientID: String?

    @Option(
        name: .long,
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

    func settings() throws -> ClientSettings {
        var placeholders = [String: String]()
        for entry in placeholder {
            let parts = entry.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2, !parts[0].isEmpty else {
                throw CLIError("--placeholder takes name=value, e.g. --placeholder team=acme; got '\(entry)'.")
            }
            placeholders[parts[0]] = parts[1]
        }
        return ClientSettings(
            clientID: clientID, clientSecret: clientSecret,
            placeholders: placeholders.isEmpty ? nil : placeholders, privateKeyFile: privateKey)
    }
}
