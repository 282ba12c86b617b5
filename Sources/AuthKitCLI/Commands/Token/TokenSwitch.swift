import ArgumentParser
import AuthKit

/// `gh auth switch`: which of a provider's accounts its commands use when
/// no `--label` is given (``DefaultAccounts``).
struct TokenSwitch: WorkspaceCommand {
    static let configuration = CommandConfiguration(
        commandName: "switch",
        abstract: "Choose which stored account a provider's commands use without --label.",
        usage: "authkit token switch [<options>] --provider <id> [--label <label>]",
        discussion: """
            Examples:
              # github's commands now use 'work':
              authkit token switch --provider github --label work
              # back to the account without a label:
              authkit token switch --provider github
            """)

    @OptionGroup var global: GlobalOptions
    @OptionGroup var account: AccountOptions

    func run(in workspace: Workspace) async throws {
        // The account chosen must be stored: a default naming nothing would
        // make every later command say "sign in first".
        // Checked and chosen under the account's refresh lock, which a
        // deletion holds to remove it: a `token delete` between the check
        // and the choice left a choice naming nothing.
        let key = account.key
        let (store, choices, provider) = (workspace.store, workspace.defaultAccounts, account.provider)
        let stored = try await store.withRefreshLock(for: key, timeout: .seconds(30)) {
            guard try await store.credential(for: key) != nil else { return false }
            try choices.choose(key.label, for: provider)
            return true
        }
        guard stored else {
            throw CLIError.nothingStored(
                key, so: "nothing was switched", others: await workspace.otherAccounts(than: key))
        }
        // The label and id as typed: escaped (a control character in either
        // reached the terminal as written).
        let which = key.label.map { "'\(DisplayText.sanitized($0, limit: 80))'" } ?? "the account without a label"
        Console.say(
            "\(DisplayText.sanitized(account.provider, limit: 80))'s commands without --label now use \(which) "
                + "(\(DisplayText.sanitized("\(key)", limit: 120))).")
    }
}
