import ArgumentParser
import AuthKit

struct TokenDelete: WorkspaceCommand {
    static let configuration = CommandConfiguration(
        commandName: "delete",
        abstract: "Delete a stored credential here (the provider is not told; see 'token revoke').",
        usage: "authkit token delete [<options>] --provider <id>",
        discussion: "Example:\n  authkit token delete --provider github")

    @OptionGroup var global: GlobalOptions
    @OptionGroup var account: AccountOptions

    func run(in workspace: Workspace) async throws {
        let key = try workspace.key(account)
        // Under the refresh lock, so that a refresh running in another
        // process cannot save the credential back after it is deleted. An
        // account with nothing stored (a mistyped label) is said first:
        // taking its lock created $AUTHKIT_HOME and left a lock file named
        // after the typo. Reading creates nothing. The accounts, not the
        // credential: a keyring item that does not decode is deleted all
        // the same (its error says to), and a locked keyring is said at the
        // delete (74), where reading the item stopped both with a read error.
        // A list refused as locked (gnome-keyring's keyring read back from
        // its file, whose items cannot be named until unlocked) goes on to
        // the delete, which then says the keyring is locked (74), as for
        // any locked keyring.
        let listed: Bool
        do {
            listed = try await workspace.store.accounts().contains(key)
        } catch let error as AuthKitError {
            guard case .store(_, let reason) = error.reason, reason.kind == .locked else { throw error }
            listed = true
        }
        guard listed, try await CredentialSource.remove(key, from: workspace.store) != nil
        else {
            throw CLIError.nothingStored(
                key, so: "nothing was deleted", others: await workspace.otherAccounts(than: key))
        }
        Console.err("Deleted \(key).")
        try workspace.forgetChoice(of: key)
    }
}
