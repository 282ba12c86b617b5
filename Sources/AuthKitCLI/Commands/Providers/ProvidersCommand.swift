import ArgumentParser

struct ProvidersCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "providers",
        abstract: "List, show, validate, override and add provider descriptors.",
        discussion: """
            Examples:
              authkit providers list
              authkit providers show github
              authkit providers validate ./my-providers/*.json
              authkit providers override qiita      # a copy to edit
              authkit providers add acme --issuer https://auth.acme.example
            """,
        subcommands: [
            ProvidersList.self, ProvidersShow.self, ProvidersValidate.self, ProvidersOverride.self, ProvidersAdd.self,
        ])
}
