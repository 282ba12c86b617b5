import ArgumentParser
import AuthKit

struct ProvidersList: WorkspaceCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List the known providers and the file each comes from.",
        discussion: "Example:\n  authkit providers list --providers-dir ./my-providers")

    @OptionGroup var global: GlobalOptions
    @Flag(help: "Print JSON.") var json = false

    struct Row: Encodable {
        var id: String
        var name: String
        var `protocol`: String
        var file: String
    }

    func run(in workspace: Workspace) async throws {
        let rows = workspace.catalog.ids.compactMap { id in
            workspace.catalog.entries[id].map {
                Row(id: id, name: $0.descriptor.name, protocol: $0.descriptor.protocol.rawValue, file: $0.file)
            }
        }
        if json {
            try Console.json(rows)
        } else {
            let width = max(2, rows.map(\.id.count).max() ?? 0)
            for row in rows {
                Console.out(row.id.padding(toLength: width + 2, withPad: " ", startingAt: 0)
                    + row.protocol.padding(toLength: 8, withPad: " ", startingAt: 0) + row.name)
            }
        }
        for (stem, issues) in workspace.catalog.problems.sorted(by: { $0.key < $1.key }) {
            Console.err("authkit: warning: '\(stem)' could not be loaded:")
            for issue in issues { Console.err("  \(issue)") }
        }
    }
}
