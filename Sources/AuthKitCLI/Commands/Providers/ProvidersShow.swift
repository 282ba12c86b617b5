import ArgumentParser
import AuthKit
import Foundation

struct ProvidersShow: WorkspaceCommand {
    static let configuration = CommandConfiguration(
        commandName: "show",
        abstract: "Print a provider's descriptor as AuthKit reads it, every default written out.",
        discussion: "Example:\n  authkit providers show instagram")

    @OptionGroup var global: GlobalOptions
    @Argument(help: "The provider id.") var id: String

    func run(in workspace: Workspace) async throws {
        let descriptor = try workspace.descriptor(id)
        Console.err("# from \(descriptor.source)")
        FileHandle.standardOutput.write(try descriptor.encodedAsFile() + Data("\n".utf8))
    }
}
