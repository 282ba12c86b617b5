import ArgumentParser

struct TokenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token",
        abstract:
            "Stored credentials: list, show, print, header, refresh, status, userinfo, import, exchange, switch, revoke, delete, move, setup-git, git-credential.",
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
            TokenList.self, TokenShow.self, TokenHeader.self, TokenRefresh.self, TokenUserInfo.self, TokenRevoke.self,
            TokenDelete.self, TokenExchange.self, TokenPrint.self, TokenStatus.self,
            TokenImport.self, TokenSwitch.self, TokenMove.self, TokenSetupGit.self, TokenGitCredential.self,
        ])
}
