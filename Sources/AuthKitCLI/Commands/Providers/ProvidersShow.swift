import ArgumentParser
import AuthKit

struct ProvidersShow: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show",
        abstract: "Print a provider's descriptor as AuthKit reads it.",
        discussion: "Example:\n  authkit providers show instagram")

    @OptionGroup var global: GlobalOptions
    @Argument(help: "The provider id.") var id: String

    func run() async throws {
        global.bootstrapLogging()
        let workspace = Workspace(global: global)
        let descriptor = try workspace.descriptor(id)
        Console.err("# from \(workspace.catalog.entries[id]?.file ?? "?")")
        try Console.json(descriptor)
    }
}
