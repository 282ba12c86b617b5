import ArgumentParser
import AuthKit
import Logging

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Options every command takes, `sandbox serve` and `sandbox try` too.
struct CommonOptions: ParsableArguments {
    @Option(
        name: .customLong("providers-dir"),
        help: ArgumentHelp(
            "A directory of provider descriptors to load after the bundled ones and $AUTHKIT_HOME/providers (repeatable).",
            valueName: "dir"), completion: .directory)
    var providersDirectories: [String] = []

    @Flag(name: [.short, .long], help: "Log what happens (to standard error; secrets are never logged).")
    var verbose = false
}

/// Options every command that works with providers takes: the common ones
/// and `--sandbox`, which `sandbox serve` and `sandbox try` (the sandbox
/// itself) do not take, and so do not list in their help.
struct GlobalOptions: ParsableArguments {
    @OptionGroup var common: CommonOptions

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Use the AuthKit sandbox at this URL (what 'authkit sandbox' prints) instead of the real provider. Default: $AUTHKIT_SANDBOX.",
            valueName: "url"))
    var sandbox: String?

    /// The sandbox's own commands' options, as the workspace reads them:
    /// theirs, and no sandbox. Made by parsing an empty command line, as a
    /// property wrapper's value exists only once parsed (`init()` alone
    /// leaves them unset, and reading one traps).
    static func withoutSandbox(_ common: CommonOptions) -> GlobalOptions {
        // An empty command line always parses: every option here is optional.
        var options = try! GlobalOptions.parse([])
        options.common = common
        return options
    }

    /// Sends swift-log output to standard error, at `debug` with `--verbose`.
    func bootstrapLogging() {
        let level: Logger.Level = common.verbose ? .debug : .warning
        LoggingSystem.bootstrap { label in ConsoleLogHandler(logLevel: level, label: label) }
    }

    var providerDirectoryURLs: [URL] {
        common.providersDirectories.map { URL(fileURLWithPath: $0, isDirectory: true) }
    }
}

/// A command that works on the user's providers, settings and credentials.
///
/// The shared setup — logging to standard error, the catalogue, the store —
/// happens once here; each command implements ``run(in:)``.
protocol WorkspaceCommand: AsyncParsableCommand {
    var global: GlobalOptions { get }
    /// True for a command whose work is a request (a sign-in, `request`,
    /// `token refresh`): its HTTP library is loaded on another thread while
    /// the workspace is read, instead of at the first request. False for the
    /// rest, which would otherwise wait at exit for a load they rarely use
    /// (`token header` sends one only to refresh an expired token).
    static var sendsRequests: Bool { get }
    /// False for `sandbox serve` and `sandbox try`: they are the sandbox, not
    /// its clients. `$AUTHKIT_SANDBOX`, left exported in the terminal as
    /// `sandbox serve` suggests, is not theirs to follow, check or announce.
    static var followsSandbox: Bool { get }
    /// False for a command that reads no credential (`providers list`,
    /// `show`…): with a sandbox in use it says nothing of it, as it has
    /// nothing of the sandbox's to use, and the keyring is not asked.
    static var usesCredentials: Bool { get }
    func run(in workspace: Workspace) async throws
}

extension WorkspaceCommand {
    static var sendsRequests: Bool { false }
    static var followsSandbox: Bool { true }
    static var usesCredentials: Bool { true }

    func run() async throws {
        if Self.sendsRequests { preloadDefaultHTTPClient() }
        global.bootstrapLogging()
        var environment = ProcessInfo.processInfo.environment
        if !Self.followsSandbox { environment["AUTHKIT_SANDBOX"] = nil }
        try await run(
            in: try await Workspace(global: global, environment: environment, usingCredentials: Self.usesCredentials))
    }
}
