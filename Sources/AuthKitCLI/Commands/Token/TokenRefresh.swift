import ArgumentParser
import AuthKit

struct TokenRefresh: WorkspaceCommand {
    static let configuration = CommandConfiguration(
        commandName: "refresh",
        abstract: "Refresh a stored credential now and save the result.",
        discussion: "Example:\n  authkit token refresh --provider instagram")

    @OptionGroup var global: GlobalOptions
    @OptionGroup var account: AccountOptions
    @OptionGroup var client: ClientOptions

    func run(in workspace: Workspace) async throws {
        let credential = try await workspace.credential(account.key)
        let authenticator = try workspace.authenticator(for: workspace.descriptor(account.provider), explicit: client.settings())
        let refreshed = try await authenticator.refresh(credential)
        try await workspace.store.save(refreshed)
        CredentialSummary.lines(refreshed).forEach(Console.out)
    }
}
