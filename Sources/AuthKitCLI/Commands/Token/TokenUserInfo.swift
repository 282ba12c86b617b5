import ArgumentParser
import AuthKit

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `authkit token userinfo`: what the provider's UserInfo endpoint (OpenID
/// Connect Core §5.3) says about a stored credential's user, its `sub`
/// checked against the verified ID token's.
struct TokenUserInfo: WorkspaceCommand {
    static let sendsRequests = true
    static let configuration = CommandConfiguration(
        commandName: "userinfo",
        abstract: "Ask the provider's OpenID Connect UserInfo endpoint about the signed-in user.",
        usage: "authkit token userinfo [<options>] --provider <id>",
        discussion: """
            The credential must come from a sign-in that asked for the openid scope: \
            the answer's sub is compared with its verified ID token's, and an answer \
            about anyone else is refused. An expired access token is refreshed first.

            Examples:
              authkit token userinfo --provider google
              authkit token userinfo --provider google --json | jq -r .email
            """)

    @OptionGroup var global: GlobalOptions
    @OptionGroup var account: AccountOptions
    @OptionGroup var client: ClientOptions
    @Flag(help: "Print the answer's claims as a JSON object.") var json = false

    func run(in workspace: Workspace) async throws {
        let key = try workspace.key(account)
        // A provider without a UserInfo endpoint is said first: no client
        // id, credential or refresh could make one (it asked for a client id).
        if let descriptor = try? workspace.descriptor(key.providerID), descriptor.protocol == .oauth2,
            descriptor.openID?.userInfoURL == nil
        {
            throw AuthKitError.notSupported(providerID: descriptor.id, .userInfo)
        }
        let source = try await workspace.source(key, explicit: client.settings())
        // UserInfo is asked as the client (its descriptor's endpoints and
        // origins): an OAuth 2.0 token without one says what is missing.
        if let clientless = source.authenticator as? ClientlessAuthenticator { throw clientless.missing }
        guard let oauth2 = source.authenticator as? OAuth2Client else {
            throw CLIError(
                "\(key) is an OAuth 1.0a credential; UserInfo is OpenID Connect's, over OAuth 2.0.",
                status: .usage)
        }
        let info: UserInfo
        do {
            info = try await oauth2.userInfo(try await source.current())
        } catch let error as AuthKitError {
            guard case .providerError(.userInfo, let answer) = error.reason, answer.code == "invalid_token" else {
                throw error
            }
            // RFC 6750 §3.1: expired or revoked before its recorded expiry; one refresh, one more try.
            info = try await oauth2.userInfo(try await source.refresh())
        }
        if json {
            try Console.json(JSONValue.object(info.claims))
            return
        }
        // One column for the values, after the longest name (names longer
        // than 24 characters, rare, push only their own value along).
        let lines =
            [("subject:", DisplayText.sanitized(info.subject, limit: 200) + " (the ID token's)")]
            + info.claims.sorted(by: { $0.key < $1.key }).filter { $0.key != "sub" }.map { name, value in
                (
                    DisplayText.sanitized(name, limit: 40) + ":",
                    DisplayText.sanitized(value.scalarText ?? Self.compact(value), limit: 300)
                )
            }
        let column = min((lines.map(\.0.count).max() ?? 0) + 1, 25)
        for (label, text) in lines {
            Console.out(label + String(repeating: " ", count: max(1, column - label.count)) + text)
        }
    }

    /// An object or array claim (an address, a list of groups) on one line.
    static func compact(_ value: JSONValue) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? value.typeName
    }
}
