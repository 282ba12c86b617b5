import ArgumentParser
import AuthKit

struct ProvidersList: WorkspaceCommand {
    static let usesCredentials = false
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List the known providers and the file each comes from.",
        usage: "authkit providers list [<options>]",
        discussion: "Example:\n  authkit providers list --providers-dir ./my-providers")

    @OptionGroup var global: GlobalOptions
    @Flag(help: "Print JSON.") var json = false

    struct Row: Encodable {
        var id: String
        var name: String
        var `protocol`: String
        var file: String
        /// The file this one replaces, when it overrides another descriptor.
        var overrides: String?
    }

    func run(in workspace: Workspace) async throws {
        let rows = workspace.catalog.ids.compactMap { id in
            workspace.catalog.entries[id].map {
                Row(
                    id: id, name: $0.descriptor.name, protocol: $0.descriptor.protocol.rawValue, file: $0.file,
                    overrides: $0.replaced?.source)
            }
        }
        if json {
            try Console.json(rows)
        } else {
            for line in Self.lines(rows, columns: Console.outputColumns) { Console.out(line) }
        }
        for issue in workspace.catalog.unreadDirectories { Console.err("authkit: warning: \(issue)") }
        for (stem, issues) in workspace.catalog.fileIssues.sorted(by: { $0.key < $1.key }) {
            Console.err("authkit: warning: '\(stem)' could not be loaded:")
            for issue in issues { Console.err("  \(issue)") }
            if Workspace.isBundled(stem) { Console.err("  " + Workspace.brokenOverrideHint(stem, issues: issues)) }
        }
        for warning in Self.unreadSettings(workspace) { Console.err("authkit: warning: \(warning)") }
    }

    /// The table: id, protocol, name, and an override's file.
    ///
    /// Ids are aligned up to the longest bundled one's width and a little
    /// more: one long id of the user's own (ids are ASCII) would otherwise
    /// push every row's name past 80 columns. A longer id is shown whole, its
    /// row alone out of line. On a terminal (`columns`), an override's path
    /// that would make its row wrap goes on a line of its own below it,
    /// under the name; into a pipe, each provider stays one line, for grep.
    static func lines(_ rows: [Row], columns: Int?) -> [String] {
        let width = min(max(2, rows.map(\.id.count).max() ?? 0), Self.idColumn)
        return rows.flatMap { row -> [String] in
            let start = row.id.padded(to: max(width, row.id.count) + 2) + row.protocol.padded(to: 8)
            // A name from a file of the user's (or someone's) may be any length:
            // on a terminal it is cut to the line, as token list cuts a label.
            var name = DisplayText.sanitized(row.name)
            if let columns { name = name.cut(toColumns: max(8, columns - 1 - start.terminalColumns)) }
            let line = start + name
            guard row.overrides != nil else { return [line] }
            // A path of the user's may hold control characters (--providers-dir "$(…)").
            let origin = "(override: \(DisplayText.sanitized(row.file, limit: 4096)))"
            if let columns, (line + "  " + origin).terminalColumns >= columns {
                return [line, String(repeating: " ", count: width + 2 + 8) + origin]
            }
            return [line + "  " + origin]
        }
    }

    /// The widest the id column grows (the longest bundled id is 19).
    static let idColumn = 24

    /// config.json settings under an id no provider has: nothing reads them
    /// (a typo, or a provider file since removed), and the provider meant
    /// then reports its client id missing. Said here, where the user looks
    /// at what is configured; `authorize` names a near miss of the id asked for.
    /// A config.json that cannot be used at all is said here too: every
    /// command that needs a client id would stop on it.
    static func unreadSettings(_ workspace: Workspace) -> [String] {
        let home = AuthKitHome.directory(environment: workspace.environment)
        let configuration: UserConfiguration
        do {
            configuration = try UserConfiguration.load(home: home)
        } catch let error as AuthKitError {
            return [
                "config.json cannot be used; commands that need a client id will stop on it: "
                    + ErrorReport.message(for: error)
            ]
        } catch {
            return ["config.json cannot be used: \(error)"]
        }
        guard let entries = configuration.providers?.keys else { return [] }
        return entries.sorted().compactMap { entry in
            guard workspace.catalog.entry(id: entry) == nil, workspace.catalog.fileIssues[entry] == nil else {
                return nil
            }
            let shown = DisplayText.sanitized(entry, limit: 40)
            let guess = workspace.catalog.suggestions(for: entry).first.map { ": did you mean '\($0)'?" } ?? "."
            return
                "\(home.appendingPathComponent("config.json").path) has settings under '\(shown)', which no provider reads\(guess)"
        }
    }
}
