import ArgumentParser
import AuthKit

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

struct TokenShow: WorkspaceCommand {
    static let configuration = CommandConfiguration(
        commandName: "show",
        abstract: "Show a stored credential; secrets only when asked for.",
        usage: "authkit token show [<options>] --provider <id>",
        discussion: """
            Examples:
              authkit token show --provider qiita
              token=$(authkit token show --provider qiita --field access_token)
              curl -H "Authorization: Bearer $token" https://qiita.com/api/v2/items
            """)

    @OptionGroup var global: GlobalOptions
    @OptionGroup var account: AccountOptions

    @Option(
        help: ArgumentHelp(
            "Print only this field, raw: access_token, refresh_token, token_secret, token_type, expires_at, scope "
                + "(or their --json names, such as accessToken), or any raw response field (an object or array as "
                + "compact JSON).",
            valueName: "field"))
    var field: String?

    @Flag(help: "Print the whole credential as JSON, secrets included.") var json = false

    func validate() throws {
        // Both asked for: printing either would silently drop the other.
        if field != nil, json {
            throw ValidationError("--field prints one field raw and --json the whole credential; give one of them.")
        }
    }

    func run(in workspace: Workspace) async throws {
        let key = try workspace.key(account)
        let credential = try await workspace.credential(key)
        if let field {
            // Whole (a token is longer than a display limit), control characters escaped.
            let value = try value(of: field, in: credential)
            Console.out(DisplayText.sanitized(value, limit: .max))
            if value == credential.accessToken { warnIfExpired(credential) }
        } else if json {
            try Console.json(CredentialSummary.printable(credential))
            warnIfExpired(credential)
        } else {
            CredentialSummary.lines(credential).forEach(Console.out)
            if let warning = CredentialSummary.signInWarning(credential) { Console.err(warning) }
        }
    }

    /// `token=$(authkit token show --field access_token)` reads the token
    /// as stored: `show` changes nothing. An expired one is still printed
    /// (standard output is the script's), and standard error says what renews it.
    private func warnIfExpired(_ credential: Credential) {
        guard let expiresAt = credential.expiresAt, expiresAt <= Date() else { return }
        let renew =
            credential.kind == .oauth2 && credential.isRenewable
            ? "'authkit token refresh \(ShellWord.account(credential.key))' renews it, as 'authkit token header' does before it prints"
            : "sign in again: authkit authorize \(ShellWord.account(credential.key))"
        Console.err("authkit: warning: this access token expired at \(expiresAt.formatted(.iso8601)); \(renew).")
    }

    /// The credential's own fields, in the order help lists them.
    static let ownFields = ["access_token", "refresh_token", "token_secret", "token_type", "expires_at", "scope"]
    /// `--json` spells the credential's own fields in camelCase; a name
    /// copied from it is taken too, unless the provider's answer had a field
    /// of exactly that name.
    static let jsonNames = [
        "accessToken": "access_token", "refreshToken": "refresh_token", "tokenSecret": "token_secret",
        "tokenType": "token_type", "expiresAt": "expires_at", "scopes": "scope",
    ]

    func value(of requested: String, in credential: Credential) throws -> String {
        let field = credential.rawFields[requested] == nil ? Self.jsonNames[requested] ?? requested : requested
        switch field {
        case "access_token": return credential.accessToken
        case "refresh_token": return try require(credential.refreshToken, field, of: credential)
        case "token_secret": return try require(credential.tokenSecret, field, of: credential)
        case "token_type": return credential.tokenType
        case "scope": return credential.scopes.joined(separator: " ")
        case "expires_at":
            return try require(credential.expiresAt.map { $0.formatted(.iso8601) }, field, of: credential)
        default:
            let shown = DisplayText.sanitized(field, limit: 60)
            switch credential.rawFields[field] {
            case nil:
                // The fields this credential has (a token secret only for
                // OAuth 1.0a, a refresh token or expiry only when issued).
                let absent: Set<String> = [
                    credential.refreshToken == nil ? "refresh_token" : "",
                    credential.tokenSecret == nil ? "token_secret" : "",
                    credential.expiresAt == nil ? "expires_at" : "",
                ]
                let known =
                    Self.ownFields.filter { !absent.contains($0) }
                    + credential.rawFields.keys.filter { !Self.ownFields.contains($0) }.sorted()
                throw CLIError("\(credential.key) has no field '\(shown)'. Known: \(known.joined(separator: ", ")).")
            case .null?:
                throw CLIError(
                    "\(credential.key)'s field '\(shown)' is null in the provider's answer: it holds no value.")
            case let value? where value.scalarText == nil:
                // An object or an array (Slack's authed_user, a list of
                // scopes): compact JSON, for jq. It was "has no field 'X'.
                // Known: …, X".
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
                return Console.escapingInvisibles(String(decoding: try encoder.encode(value), as: UTF8.self))
            case let value?:
                return value.scalarText ?? ""
            }
        }
    }

    private func require(_ value: String?, _ field: String, of credential: Credential) throws -> String {
        // The same exit status as an unknown field: the field names nothing this credential has.
        guard let value else {
            throw CLIError(
                "\(credential.key) has no \(field): the provider issued none, or it belongs to the other protocol (a token secret is OAuth 1.0a's, a refresh token OAuth 2.0's).",
                status: .usage)
        }
        return value
    }
}
