import AuthKit

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Refuses a placeholder value that would not make a usable URL
/// (``PlaceholderValue``) before the browser opens, naming where the value
/// came from: `--placeholder`, the environment variable, or the field of
/// `config.json` (as a file issue, exit 65).
enum PlaceholderSetting {
    static func check(
        _ settings: ClientSettings, explicit: ClientSettings, descriptor: ProviderDescriptor,
        environment: [String: String]
    ) throws {
        for (name, value) in (settings.placeholders ?? [:]).sorted(by: { $0.key < $1.key }) {
            guard let problem = descriptor.problem(placeholder: name, value: value) else { continue }
            if explicit.placeholders?[name] != nil { throw CLIError("--placeholder \(name)=…: \(problem)") }
            let variable = ClientSettings.placeholderVariable(providerID: descriptor.id, name: name)
            if environment[variable]?.isEmpty == false { throw CLIError("\(variable): \(problem)") }
            // Not given here or in the environment: config.json (a descriptor's
            // own default was checked when the file was loaded).
            let file = AuthKitHome.directory(environment: environment).appendingPathComponent("config.json").path
            throw AuthKitError.invalidFile([
                FileIssue(file: file, field: "providers.\(descriptor.id).placeholders.\(name)", problem: problem)
            ])
        }
    }
}
