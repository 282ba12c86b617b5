import ArgumentParser

struct TokenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token",
        abstract:
            "Stored credentials: list, show, header, print, import, switch, move, setup-git, git-credential, status, exchange, refresh, userinfo, revoke, delete.",
        discussion: """
            Examples:
              authkit token list
              authkit token show --provider qiita --field access_token
              curl -H "$(authkit token header --provider qiita)" URL
              authkit token refresh --due
              authkit token userinfo --provider google
              authkit token revoke --provider qiita --label work
              authkit token move --to keyring
              authkit token setup-git --provider github
            """,
        subcommands: [
            // The order of docs/command-line.md's table and sections (CommandLineConventionsTests).
            TokenList.self, TokenShow.self, TokenHeader.self, TokenPrint.self, TokenImport.self, TokenSwitch.self,
            TokenMove.self, TokenSetupGit.self, TokenGitCredential.self, TokenStatus.self, TokenExchange.self,
            TokenRefresh.self, TokenUserInfo.self, TokenRevoke.self, TokenDelete.self,
        ])
}
