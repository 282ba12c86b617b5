import ArgumentParser

struct TokenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token",
        abstract: "List, show, refresh, revoke and delete stored credentials.",
        subcommands: [TokenList.self, TokenShow.self, TokenHeader.self, TokenRefresh.self, TokenRevoke.self, TokenDelete.self])
}
