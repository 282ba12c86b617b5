import ArgumentParser
import AuthKit
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HTTPTypes

struct TokenHeader: WorkspaceCommand {
    static let configuration = CommandConfiguration(
        commandName: "header",
        abstract: "Print the Authorization header for a request, refreshing an expired token first.",
        usage: "authkit token header [<options>] --provider <id> [<url>]",
        discussion: """
        OAuth 2.0 gives a Bearer header; OAuth 1.0a signs the given method and URL.
        Example:
          curl -H "$(authkit token header --provider qiita)" \\
            https://qiita.com/api/v2/authenticated_user
        """)

    @OptionGroup var global: GlobalOptions
    @OptionGroup var account: AccountOptions
    @OptionGroup var client: ClientOptions
    @Option(name: [.customShort("X"), .long], help: "The request method (OAuth 1.0a signs it).") var method = "GET"
    @Argument(help: "The request URL (required for OAuth 1.0a, which signs it).") var url: String?

    func run(in workspace: Workspace) async throws {
        let source = try await workspace.source(account.key, explicit: client.settings())
        let credential = try await source.current()
        let authenticator = source.authenticator
        guard let url = url ?? (credential.kind == .oauth2 ? "https://example.invalid/" : nil) else {
            throw CLIError("An OAuth 1.0a header signs one request: give its method and URL, e.g. authkit token header --provider \(account.provider) -X GET 'https://api.x.com/1.1/account/verify_credentials.json'.")
        }
        if let problem = TypedURL.problem(url) { throw CLIError(problem) }
        guard let target = URL(string: url), target.scheme != nil else { throw CLIError("'\(DisplayText.sanitized(url, limit: 200))' is not an absolute URL.") }
        guard let httpMethod = HTTPRequest.Method(method.uppercased()) else {
            throw CLIError("'\(DisplayText.sanitized(method, limit: 40))' is not an HTTP method (-X takes a name such as GET or POST).")
        }
        let authorized = try authenticator.authorize(HTTPRequest(method: httpMethod, url: target), body: nil, with: credential)
        guard let header = authorized.headerFields[.authorization] else {
            throw CLIError("No Authorization header was produced for \(account.key).", status: .failure)
        }
        Console.out("Authorization: \(header)")
    }
}
