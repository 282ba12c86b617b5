import ArgumentParser
import AuthKit

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `authkit token print`: the access token alone, fresh, for scripts (as
/// `gh auth token` and `oauth2l fetch` print theirs).
struct TokenPrint: WorkspaceCommand {
    static let sendsRequests = true
    static let configuration = CommandConfiguration(
        commandName: "print",
        abstract: "Print the access token, refreshed first when it is due, for a script.",
        usage: "authkit token print [<options>] --provider <id>",
        discussion: """
            Standard output gets the token and nothing else (with --format header,
            the Authorization header; with json, the token, its type, expiry and
            scopes). A token that has expired and cannot be refreshed is not
            printed: the exit status is non-zero and standard error says what to do.

            Examples:
              TOKEN=$(authkit token print --provider github)
              curl -H "$(authkit token print --provider github --format header)" \\
                https://api.github.com/user
            """)

    enum Format: String, ExpressibleByArgument, CaseIterable { case bare, header, json }

    @OptionGroup var global: GlobalOptions
    @OptionGroup var account: AccountOptions
    @OptionGroup var client: ClientOptions
    @Option(help: ArgumentHelp("bare (the token), header (Authorization: …) or json.", valueName: "format"))
    var format: Format = .bare

    func run(in workspace: Workspace) async throws {
        let key = try workspace.key(account)
        // Said before the client is looked for: an OAuth 1.0a token has no
        // bare form whatever the client, and "no client id" sent the user
        // to configure one only to hear this next.
        let oauth1 = CLIError(
            "\(key) is an OAuth 1.0a credential: its token is used only in a signature made for each request. Use authkit token header \(ShellWord.account(key)) -X METHOD URL.",
            status: .usage)
        // (A store that cannot be read is said by the source, after the provider id is checked.)
        if (try? await workspace.store.credential(for: key))?.kind == .oauth1 { throw oauth1 }
        let source = try await workspace.source(key, explicit: client.settings())
        let credential = try await source.current()
        guard credential.kind == .oauth2 else { throw oauth1 }
        if credential.proofKey != nil, format != .json {
            // RFC 9449 §7.1: the token alone is refused without a proof made for the request.
            let hint =
                "\(key) is DPoP-bound: the token alone is refused without a proof made for each request. Use authkit token header \(ShellWord.account(key)) URL, which prints both header lines."
            guard format == .bare else { throw CLIError(hint, status: .usage) }
            Console.err("authkit: warning: " + hint)
        }
        // As `token header` and `git-credential` check: a token saved by a
        // library or an editor, not by a sign-in here, may hold a line break
        // (`curl -H "$(authkit token print --format header)"` then sends a
        // header of the file's choosing) or a terminal's escape sequence.
        // JSON escapes what it prints.
        if format != .json, !TokenResponseParser.isSendableAsBearer(credential.accessToken) {
            throw CLIError(
                "The stored token for \(key) holds a character no Bearer token has (RFC 6750 §2.1); it is not printed. Print it escaped with --format json, or sign in again: authkit authorize \(ShellWord.account(key))",
                status: .failure)
        }
        if format == .header, !credential.isBearer, credential.proofKey == nil {
            throw CLIError(
                "\(key)'s token is of type '\(DisplayText.sanitized(credential.tokenType, limit: 40))', not Bearer: an 'Authorization: Bearer' line would not be accepted. Use --format json, which gives its type.",
                status: .usage)
        }
        switch format {
        case .bare:
            Console.out(credential.accessToken)
        case .header:
            Console.out("Authorization: Bearer \(credential.accessToken)")
        case .json:
            var object: [String: JSONValue] = [
                "access_token": .string(credential.accessToken), "token_type": .string(credential.tokenType),
                "scope": .string(credential.scopes.joined(separator: " ")),
            ]
            if let expiresAt = credential.expiresAt { object["expires_at"] = .string(expiresAt.formatted(.iso8601)) }
            try Console.json(JSONValue.object(object))
        }
    }
}
