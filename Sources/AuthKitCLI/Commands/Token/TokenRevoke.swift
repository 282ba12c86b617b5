import ArgumentParser
import AuthKit

struct TokenRevoke: WorkspaceCommand {
    static let sendsRequests = true
    static let configuration = CommandConfiguration(
        commandName: "revoke",
        abstract: "Revoke a credential at the provider, then delete it here.",
        usage: "authkit token revoke [<options>] --provider <id>",
        discussion: "Example:\n  authkit token revoke --provider qiita --label work")

    @OptionGroup var global: GlobalOptions
    @OptionGroup var account: AccountOptions
    @OptionGroup var client: ClientOptions
    @Flag(help: "Keep the local copy after revoking.") var keep = false

    func run(in workspace: Workspace) async throws {
        // Under the refresh lock: a refresh running in another process saves
        // first, and its rotated token is what gets revoked (CredentialSource).
        let source: CredentialSource
        do {
            source = try await workspace.source(account.key, explicit: client.settings())
        } catch AuthKitError.signInRequired(let key, .noCredential) {
            // "Sign in first" is no advice for a revocation.
            throw CLIError.nothingStored(key, so: "nothing was revoked")
        }
        try await source.revoke(keepingLocalCopy: keep)
        Console.err("Revoked \(account.key)\(keep ? "" : " and deleted it here").")
    }
}
