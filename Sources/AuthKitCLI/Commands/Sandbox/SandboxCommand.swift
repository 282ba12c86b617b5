import ArgumentParser
import AuthKit
import AuthKitSandbox

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `authkit sandbox`: a provider's emulation on this machine.
struct SandboxCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sandbox",
        abstract: "Emulate a provider on this machine, from its descriptor: sign in offline, test your app.",
        discussion: """
            Examples:
              authkit sandbox try --provider qiita      # the whole sign-in, step by step
              authkit sandbox --provider github          # serve until Ctrl-C
              AUTHKIT_SANDBOX=http://127.0.0.1:8790 authkit authorize --provider github

            The sandbox knows one client (sandbox-client, secret sandbox-secret)
            and keeps everything in memory; it listens on 127.0.0.1 only.
            """,
        subcommands: [SandboxServe.self, SandboxTry.self],
        defaultSubcommand: SandboxServe.self)
}

/// Options both sandbox commands take.
struct SandboxProviderOptions: ParsableArguments {
    @Option(
        name: [.short, .long],
        help: ArgumentHelp("The provider to emulate (an id from 'authkit providers list').", valueName: "id"),
        completion: .custom(Completions.providerIDs))
    var provider: String

    @Flag(help: "Tokens and codes from one counter (sandbox-code-1, sandbox-access-2, …) instead of random bytes.")
    var deterministic = false

    @Option(
        name: .customLong("access-ttl"),
        help: ArgumentHelp("Access tokens expire after this many seconds (default 3600).", valueName: "seconds"))
    var accessTokenLifetime: Int?

    @Option(
        help: ArgumentHelp(
            "Make every ID token wrong this way, to check that your app refuses it: "
                + SandboxOptions.idTokenFaults.joined(separator: ", ") + ".",
            valueName: "fault"))
    var idTokenFault: String?

    @Option(
        help: ArgumentHelp(
            "Hold each refresh this many seconds before handling it, and drop it if its client is gone by then (tests of a process killed mid-refresh).",
            valueName: "seconds"))
    var refreshDelay: Double?

    func validate() throws {
        try AccountOptions.checkProviderID(provider)
        if let accessTokenLifetime, !(1...31_536_000).contains(accessTokenLifetime) {
            throw ValidationError("--access-ttl takes 1–31536000 seconds; got \(accessTokenLifetime).")
        }
        if let refreshDelay, !(0...60).contains(refreshDelay) {
            throw ValidationError("--refresh-delay takes 0–60 seconds; got \(refreshDelay).")
        }
        if let idTokenFault, !SandboxOptions.idTokenFaults.contains(idTokenFault) {
            throw ValidationError(
                "--id-token-fault takes "
                    + SandboxOptions.idTokenFaults.joined(separator: ", ")
                    + "; got '\(DisplayText.sanitized(idTokenFault, limit: 40))'.")
        }
    }

    /// The emulation's settings these options change.
    func apply(to options: inout SandboxOptions) {
        if let accessTokenLifetime { options.accessTokenLifetime = TimeInterval(accessTokenLifetime) }
        options.idTokenFault = idTokenFault
        options.refreshDelay = refreshDelay ?? 0
    }
}
