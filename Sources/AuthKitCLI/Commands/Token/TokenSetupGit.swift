import ArgumentParser
import AuthKit
import AuthKitLoopback
import Subprocess

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(System)
    import System
#else
    import SystemPackage
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// `authkit token setup-git --provider github`: makes git ask `authkit token
/// git-credential` for the provider's git hosts, as `gh auth setup-git`
/// does. For each origin of the descriptor's `git` section, in the user's
/// global git configuration:
///
///     credential.<origin>.helper = ""          (the helpers configured before are not asked there)
///     credential.<origin>.helper = !'<this authkit>' token git-credential --provider ID [--label L]
///
/// git is run with the environment less every `AUTHKIT_*` variable
/// (``ChildEnvironment``), and is given no secret: the token is read when
/// git asks, never written into git's configuration.
struct TokenSetupGit: WorkspaceCommand {
    static let configuration = CommandConfiguration(
        commandName: "setup-git",
        abstract: "Configure git to use a provider's stored token for its git hosts over HTTPS.",
        usage: "authkit token setup-git --provider <id> [--label <label>]",
        discussion: """
            For each git origin in the provider's descriptor (github: https://github.com
            and https://gist.github.com), git's global configuration gets authkit token
            git-credential as its only credential helper there. The token itself is
            read each time git asks, refreshed when due; nothing secret is written.
            Undo: git config --global --unset-all credential.https://github.com.helper

            Examples:
              authkit authorize --provider github --scope repo
              authkit token setup-git --provider github
              git clone https://github.com/OWNER/PRIVATE-REPO.git
            """)

    static let followsSandbox = false

    @OptionGroup var global: GlobalOptions
    @OptionGroup var account: AccountOptions

    func validate() throws {
        if global.sandbox != nil {
            throw ValidationError("--sandbox: git is set up with your real credentials; a sandbox serves no git.")
        }
    }

    func run(in workspace: Workspace) async throws {
        let descriptor = try workspace.descriptor(account.provider)
        guard let git = descriptor.git else { throw TokenGitCredential.noGitSection(descriptor) }
        let settings = try ClientSettings.standard(
            for: descriptor, explicit: ClientSettings(), environment: workspace.environment)
        let origins = git.origins.shown(placeholders: descriptor.placeholderValues(settings: settings))
        if let unfilled = origins.first(where: { $0.contains("{") }) {
            throw CLIError(
                "\(descriptor.name)'s git origin \(unfilled) needs its placeholder's value: set it as for signing in (authkit providers show \(descriptor.id) names the variable and the config.json key).",
                status: .usage)
        }
        if let wildcard = origins.first(where: { $0.contains("*") }) {
            throw CLIError(
                "\(descriptor.name)'s git origin \(wildcard) is a pattern, which git's configuration does not take; list each git host in the descriptor's git.origins.",
                status: .badInput)
        }
        let helper =
            "!" + Self.shellQuoted(try Self.ownExecutable()) + " token git-credential --provider "
            + Self.shellQuoted(descriptor.id) + (account.label.map { " --label " + Self.shellQuoted($0) } ?? "")
        for origin in origins {
            let name = "credential.\(origin).helper"
            try await Self.gitConfig(["--replace-all", name, ""], environment: workspace.environment)
            try await Self.gitConfig(["--add", name, helper], environment: workspace.environment)
        }
        Console.out(
            "git asks authkit for \(descriptor.name)'s token at \(origins.joined(separator: ", ")) "
                + "(git config --global --get-all credential.\(origins[0]).helper shows it).")
        let key = try workspace.key(account)
        if let credential = try await workspace.store.credential(for: key) {
            if !git.isGranted(by: credential.scopes) {
                Console.err(TokenGitCredential.scopeWarning(key, git: git, granted: credential.scopes))
            }
        } else {
            Console.err(
                "authkit: note: nothing is stored for \(key) yet; sign in: authkit authorize \(ShellWord.account(key))\(TokenGitCredential.scopeHint(git))"
            )
        }
    }

    /// `git config --global ARGUMENTS`, its output to standard error.
    static func gitConfig(_ arguments: [String], environment: [String: String]) async throws {
        let status: TerminationStatus
        let said: String
        do {
            let result = try await Subprocess.run(
                .name("git"), arguments: Arguments(["config", "--global"] + arguments),
                environment: .custom(ChildEnvironment.variables(environment)),
                input: .none, output: .discarded, error: .string(limit: 16 << 10))
            status = result.terminationStatus
            said = result.standardError
        } catch {
            throw CLIError(
                "git could not be run (\(error)); is git installed and on PATH?", status: .failure)
        }
        guard case .exited(0) = status else {
            throw CLIError(
                "git config --global \(arguments.first ?? "") failed (\(status)): \(DisplayText.sanitized(said, limit: 400))",
                status: .failure)
        }
    }

    /// The path this authkit runs from, for git to run it again: what it was
    /// started as, resolved (a bare name through `PATH`, as the shell did).
    static func ownExecutable() throws -> String {
        var started = CommandLine.arguments.first ?? "authkit"
        if !started.contains("/") {
            let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
            let candidates = path.split(separator: ":").map { "\($0)/\(started)" }
            if let found = candidates.first(where: { access($0, X_OK) == 0 }) { started = found }
        }
        guard let resolved = realpath(started, nil) else {
            throw CLIError("The path authkit runs from ('\(started)') cannot be resolved for git to run it.")
        }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// `text` in single quotes for git's `sh -c`, whatever it holds.
    static func shellQuoted(_ text: String) -> String {
        "'" + text.replacing("'", with: #"'\''"#) + "'"
    }
}
