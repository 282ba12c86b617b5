import ArgumentParser

struct ProvidersCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "providers",
        abstract: "List, show and validate provider descriptors.",
        subcommands: [ProvidersList.self, ProvidersShow.self, ProvidersValidate.self])
}
