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
        let credential = try await workspace.credential(account.key)
        let authenticator = try workspace.authenticator(for: workspace.descriptor(account.provider), explicit: client.settings())
        try await authenticator.revoke(credential)
        if !keep { try await workspace.store.remove(account.key) }
        Console.err("Revoked \(account.key)\(keep ? "" : " and deleted it here").")
    }
}
