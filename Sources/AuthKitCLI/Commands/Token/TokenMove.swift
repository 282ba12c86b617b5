import ArgumentParser
import AuthKit

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `authkit token move --to keyring|file`: stored credentials carried whole
/// (refresh token, ID token, DPoP key and all) between `credentials.json`
/// and the system keyring, for a user who turns the keyring on (or off) with
/// accounts already signed in. `token print | token import` kept only the
/// access token, and with it the need to sign in again when it expired.
///
/// Each account is moved under its refresh lock and its sign-in lock (files
/// in AuthKit's directory, which both stores use): a refresh in another
/// process finishes first, or waits, and its renewal is what is moved. The
/// credential is written to the destination and read back before the source
/// lets go of it, so a failure at any step leaves it where it was (or, after
/// the write, in both; the next `move` finds the same credential in both and
/// only removes the source's).
struct TokenMove: WorkspaceCommand {
    static let configuration = CommandConfiguration(
        commandName: "move",
        abstract: "Move stored credentials between credentials.json and the system keyring, refresh tokens included.",
        usage: "authkit token move --to <store> [--provider <id>] [--label <label>]",
        discussion: """
            Every credential of the other store moves (or only --provider's, or
            only one account with --label too): written to the store named, read
            back, then removed from the other. An account the destination already
            holds a different credential for is left in both and named; the exit
            status is then 1. Choosing the store the other commands use is yours:
            AUTHKIT_STORE=keyring, or "store": "keyring" in config.json.

            Examples:
              authkit token move --to keyring && export AUTHKIT_STORE=keyring
              authkit token move --to file --provider github --label work
            """)

    /// The command moves the user's own credentials: a sandbox's stay in its file.
    static let followsSandbox = false
    /// Both stores are opened here, and a keyring that does not answer is an error, not a fallback.
    static let usesCredentials = false

    @OptionGroup var global: GlobalOptions
    @Option(help: ArgumentHelp("Where the credentials go.", valueName: "store"))
    var to: StoreChoice
    @Option(
        name: .shortAndLong, help: ArgumentHelp("Only this provider's credentials.", valueName: "id"),
        completion: .custom(Completions.providerIDs))
    var provider: String?
    @Option(help: ArgumentHelp("Only the credential with this label.", valueName: "label"))
    var label: String?

    func validate() throws {
        try AccountOptions.checkProviderID(provider)
        if label != nil, provider == nil { throw ValidationError("--label picks one account of --provider ID.") }
        if global.sandbox != nil {
            throw ValidationError(
                "--sandbox: a sandbox's credentials stay in its own file; token move moves your real ones.")
        }
    }

    /// What became of one account.
    enum Outcome {
        /// Moved; or the destination held the same credential already (an
        /// earlier move stopped before removing it), and the source's copy went.
        case moved
        /// The destination holds another credential for the account: both kept.
        case conflict(Credential)
        /// Removed from the source meanwhile (a `token delete` in another terminal).
        case gone
    }

    func run(in workspace: Workspace) async throws {
        let file = FileCredentialStore(environment: workspace.environment)
        let keyring: any CommandStore
        switch await StoreChoice.keyring(environment: workspace.environment) {
        case .success(let store): keyring = store
        case .failure(let why):
            throw CLIError("The keyring cannot be used: \(why.text). Nothing was moved.", status: .failure)
        }
        let (source, destination): (any CommandStore, any CommandStore) =
            to == .keyring ? (file, keyring) : (keyring, file)
        let keys = try await source.allCredentials().map(\.key).filter {
            (provider == nil || $0.providerID == provider) && (label == nil || $0.label == label)
        }
        guard !keys.isEmpty else {
            if let provider {
                throw CLIError(
                    "No credential for \(CredentialKey(providerID: provider, label: label)) in \(source.location); nothing was moved.",
                    status: .failure)
            }
            Console.say("\(source.location) holds no credentials; nothing to move.")
            return
        }
        var conflicts: [(CredentialKey, Credential)] = []
        var moved = 0
        for key in keys {
            switch try await Self.move(key, from: source, to: destination) {
            case .moved:
                moved += 1
                Console.say("Moved \(key) to \(destination.location).")
            case .conflict(let kept): conflicts.append((key, kept))
            case .gone: Console.err("authkit: note: \(key) was removed from \(source.location) meanwhile; not moved.")
            }
        }
        if moved > 0, let note = storeNote(workspace.environment) { Console.err(note) }
        guard conflicts.isEmpty else {
            for (key, kept) in conflicts {
                let account = Self.accountArguments(key)
                Console.err(
                    "authkit: \(key): \(destination.location) already holds another credential for this account "
                        + "(obtained \(kept.obtainedAt.formatted(.iso8601))); both are kept. "
                        + "To keep the one moved, delete the other (AUTHKIT_STORE=\(to.rawValue) authkit token delete \(account)) "
                        + "and move again; to keep the other, AUTHKIT_STORE=\(other.rawValue) authkit token delete \(account)."
                )
            }
            throw CLIError(
                "\(conflicts.count) of \(keys.count) credential\(keys.count == 1 ? "" : "s") not moved.",
                status: .failure)
        }
    }

    /// The store credentials leave.
    private var other: StoreChoice { to == .keyring ? .file : .keyring }

    /// `--provider ID [--label L]`, quoted for a shell.
    static func accountArguments(_ key: CredentialKey) -> String {
        "--provider \(ShellWord.quoted(key.providerID))" + (key.label.map { " --label \(ShellWord.quoted($0))" } ?? "")
    }

    /// Says how to make the other commands use the destination, when they do not yet.
    private func storeNote(_ environment: [String: String]) -> String? {
        guard let (choice, source) = try? StoreChoice.chosen(environment: environment), choice != to else {
            return nil
        }
        let how =
            to == .keyring
            ? "export AUTHKIT_STORE=keyring, or put \"store\": \"keyring\" in config.json"
            : "unset AUTHKIT_STORE, or remove \"store\" from config.json"
        return
            "authkit: note: commands still use \(choice == .file ? "credentials.json" : "the keyring") (\(source)); \(how)."
    }

    /// Moves `key`'s credential under its sign-in lock and refresh lock.
    static func move(_ key: CredentialKey, from source: any CommandStore, to destination: any CommandStore)
        async throws -> Outcome
    {
        // Held to the end: a sign-in finishing now would save to the source
        // after the move (its process chose that store when it started).
        let signIn = try source.beginSignIn(for: key)
        defer { withExtendedLifetime(signIn) {} }
        return try await source.withRefreshLock(for: key, timeout: .seconds(30)) {
            guard let credential = try await source.credential(for: key) else { return .gone }
            if let existing = try await destination.credential(for: key) {
                guard existing == credential else { return .conflict(existing) }
            } else {
                try await destination.save(credential)
                guard try await destination.credential(for: key) == credential else {
                    throw CLIError(
                        "\(key): \(destination.location) did not give back the credential written to it; it stays in \(source.location). Remove what was written with authkit token delete \(accountArguments(key)) (with the store chosen) and try again.",
                        status: .outputFailed)
                }
            }
            try await source.remove(key)
            return .moved
        }
    }
}
