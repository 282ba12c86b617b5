import ArgumentParser
import AuthKit

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

struct ProvidersOverride: WorkspaceCommand {
    static let usesCredentials = false
    static let configuration = CommandConfiguration(
        commandName: "override",
        abstract: "Start an override: copy a bundled descriptor to your providers directory to edit.",
        usage: "authkit providers override [<options>] <id>",
        discussion: """
            Writes $AUTHKIT_HOME/providers/ID.json from the bundled file and prints
            its path. An existing file is never replaced unless you pass --force.
            Your file then replaces the bundled one for every command ('providers
            list' marks it).

            Examples:
              $EDITOR "$(authkit providers override qiita)"         # write it, edit it
              $EDITOR "$(authkit providers override qiita --path)"  # edit it again
            """)

    @OptionGroup var global: GlobalOptions
    @Argument(help: "The bundled provider's id.", completion: .custom(Completions.bundledIDs)) var id: String
    @Flag(help: "Replace an existing file of yours.") var force = false
    @Flag(help: "Only print where the file is (or would be).") var path = false

    func validate() throws {
        // An id names a file in the providers directory: '../x' would name one outside it.
        guard DescriptorValidator.isValidName(id) else {
            throw ValidationError(
                "'\(DisplayText.sanitized(id, limit: 60))' is not a provider id; ids are lowercase letters, digits, '-' and '_' ('authkit providers list' shows them)."
            )
        }
    }

    func run(in workspace: Workspace) async throws {
        let directory = AuthKitHome.directory(environment: workspace.environment).appendingPathComponent(
            "providers", isDirectory: true)
        let target = directory.appendingPathComponent("\(id).json")
        if path {
            Console.out(target.path)
            return
        }
        guard let bundled = ProviderCatalog.bundledFile(id: id) else {
            let near = ProviderCatalog(includeBundled: true, directories: []).suggestions(for: id)
            let tail = near.isEmpty ? "" : " Did you mean \(near.map { "'\($0)'" }.joined(separator: " or "))?"
            throw CLIError(
                "No bundled descriptor is named '\(DisplayText.sanitized(id, limit: 80))'.\(tail) For a provider of your own, write \(target.path) (see docs/providers.md)."
            )
        }
        guard try UserProviderFile.write(bundled.data, to: target, replacing: force) else {
            throw CLIError(
                "\(target.path) exists already; it was left as it is. Edit it, or pass --force to start again from the bundled file.",
                status: .badInput)
        }
        Console.out(target.path)
        Console.err(
            "Wrote \(target.path) from the bundled \(id).json; edit it, then check it with: authkit providers validate \(FileSystem.shellQuoted(target.path))"
        )
    }
}
