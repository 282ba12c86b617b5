import ArgumentParser
import AuthKit

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

struct ProvidersValidate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "validate",
        abstract: "Check descriptor files; print each problem with its file and field.",
        discussion: """
            Exits 65 when any file has a problem, or when its provider's settings would be
            read from the same AUTHKIT_… variables as a provider of another id (bundled, or
            in $AUTHKIT_HOME/providers).

            Example:
              authkit providers validate ./my-providers/*.json
            """)

    @Argument(
        help: ArgumentHelp("Descriptor files to check.", valueName: "file"), completion: .file(extensions: ["json"]))
    var files: [String]

    func validate() throws {
        if files.isEmpty {
            throw ValidationError(
                "Name at least one descriptor file, e.g. authkit providers validate providers/qiita.json")
        }
    }

    func run() async throws {
        var failed = false
        let catalog = ProviderCatalog.standard()
        for file in files {
            if URL(fileURLWithPath: file).lastPathComponent == "schema.json" {
                // `providers validate providers/*.json` names the schema too.
                Console.out("\(file): skipped (the JSON Schema descriptors follow, not a descriptor)")
                continue
            }
            do {
                let descriptor = try DescriptorLoader().load(
                    contentsOf: URL(fileURLWithPath: file), displayPath: file, accepting: .fileOrPipe)
                if let problem = FileSystem.foreignWriteProblem(at: file) {
                    // authkit would refuse it from a providers directory (ProviderCatalog.standard).
                    failed = true
                    Console.out(
                        "\(DisplayText.sanitized(file, limit: 4096)): valid (\(descriptor.id), \(descriptor.protocol.rawValue)), but authkit will not read it: \(problem)"
                    )
                    continue
                }
                // Read beside the catalogue authkit uses (bundled, $AUTHKIT_HOME/providers),
                // it would be refused, or make another provider refused.
                let placeholders = Array(descriptor.placeholders.keys)
                if let clash = catalog.environmentClash(id: descriptor.id, placeholderNames: placeholders, file: file) {
                    failed = true
                    Console.out(
                        FileIssue(file: file, field: "id", problem: clash.problem)
                            .description)
                    continue
                }
                // The path as given, its control characters escaped (as the error lines do).
                Console.out(
                    "\(DisplayText.sanitized(file, limit: 4096)): ok (\(descriptor.id), \(descriptor.protocol.rawValue))"
                )
            } catch let error as AuthKitError {
                guard case .invalidFile(let issues) = error.reason else { throw error }
                failed = true
                for issue in issues { Console.out(issue.description) }
            }
        }
        if failed { throw CLIError("some descriptors are invalid (see above).", status: .badInput) }
    }
}
