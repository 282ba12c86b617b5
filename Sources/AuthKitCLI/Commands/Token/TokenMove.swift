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
/// Each account is moved under its refresh lock and its sign-in lock, the
/// file's (in AuthKit's directory) and the keyring's (in the user's runtime
/// directory, or AuthKit's where there is none): a refresh in another
/// process, of either store, finishes first, or waits, and its renewal is
/// what is moved. The credential is written to the destination and read
/// back before the source lets go of it, so a failure at any step leaves it
/// where it was (or, after the write, in both; the next `move` finds the
/// same credential in both and only removes the source's).
struct TokenMove: WorkspaceCommand {
    static let configuration = CommandConfiguration(
        commandName: "move",
        abstract: "Move stored credentials between credentials.json and the system keyring, refresh tokens included.",
        usage: "authkit token move --to <store> [--provider <id>] [--label <label>]",
        discussion: """
            Every credential of the other store moves (or only --provider's, or
            only one account with --label too): written to the store named, read
            back, then removed from the other, under the account's locks. An
            account that cannot move (another credential for it there, a sign-in
            under way) is named and left where it was; the exit status is then 1.
            Choosing the store the other commands use is yours: AUTHKIT_STORE, or
            "store" in config.json.

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
    @OptionGroup var accounts: AccountFilterOptions

    func validate() throws {
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
        switch await StoreChoice.keyring(
            environment: workspace.environment,
            timeout: try StoreChoice.keyringTimeout(environment: workspace.environment))
        {
        case .success(let store): keyring = store
        case .failure(let why):
            throw CLIError("The keyring cannot be used: \(why.text). Nothing was moved.", status: .failure)
        }
        let (source, destination): (any CommandStore, any CommandStore) =
            to == .keyring ? (file, keyring) : (keyring, file)
        // The accounts only: a keyring's items are read one at a time, as
        // each is moved, so one broken item of another provider stops
        // nothing but itself.
        // Each account once: a file merged by hand may list one twice
        // (moveHoldingTheLocks refuses to move such an account).
        var seen = Set<CredentialKey>()
        let keys = try await source.accounts().filter(accounts.matches).filter { seen.insert($0).inserted }
        guard !keys.isEmpty else {
            guard let provider = accounts.provider else {
                Console.say("\(source.location) holds no credentials; nothing to move.")
                return
            }
            // Moved already (a second run): said, not an error.
            let there = try await destination.accounts().filter(accounts.matches)
            let named =
                accounts.label == nil ? provider : "\(CredentialKey(providerID: provider, label: accounts.label))"
            guard there.isEmpty else {
                Console.say("\(source.location) holds nothing for \(named); \(destination.location) has it already.")
                return
            }
            throw CLIError("No credential for \(named) in either store; nothing was moved.", status: .usage)
        }
        var moved = 0
        var failed = 0
        // Every account is tried: one that cannot move (a sign-in under way,
        // a broken item, another credential there) is said and left as it was.
        for key in keys {
            do {
                switch try await Self.move(key, from: source, to: destination, named: to) {
                case .moved:
                    moved += 1
                    Console.say("Moved \(key) to \(destination.location).")
                case .conflict(let kept):
                    failed += 1
                    Console.err(conflictMessage(key, kept: kept, in: destination))
                case .gone:
                    Console.err("authkit: note: \(key) was removed from \(source.location) meanwhile; not moved.")
                }
            } catch {
                failed += 1
                Console.err("authkit: \(key) not moved: \(ErrorReport.message(forAny: error))")
            }
        }
        if moved > 0, let note = storeNote(workspace.environment) { Console.err(note) }
        if failed > 0 {
            throw CLIError(
                "\(failed) of \(keys.count) credential\(keys.count == 1 ? "" : "s") not moved (why, and where each is, above).",
                status: .failure)
        }
    }

    /// Says that `key` is in both stores, and the two commands that settle
    /// it (the account without a label named `--label ''` where `token
    /// switch` chose another: ``ShellWord/account(_:)``).
    private func conflictMessage(
        _ key: CredentialKey, kept: Credential, in destination: any CommandStore
    ) -> String {
        let account = ShellWord.account(key)
        return "authkit: \(key): \(destination.location) already holds another credential for this account "
            + "(obtained \(kept.obtainedAt.formatted(.iso8601))); both are kept. "
            + "To keep the one moved, delete the other (AUTHKIT_STORE=\(to.rawValue) authkit token delete \(account)) "
            + "and move again; to keep the other, AUTHKIT_STORE=\(other.rawValue) authkit token delete \(account)."
    }

    /// The store credentials leave.
    private var other: StoreChoice { to == .keyring ? .file : .keyring }

    /// Says how to make the other commands use the destination, when they do not yet.
    private func storeNote(_ environment: [String: String]) -> String? {
        guard let (choice, source) = try? StoreChoice.chosen(environment: environment), choice != to else {
            return nil
        }
        return "authkit: note: commands still use \(choice == .file ? "credentials.json" : "the keyring") (\(source)); "
            + "export AUTHKIT_STORE=\(to.rawValue), or put \"store\": \"\(to.rawValue)\" in config.json."
    }

    /// Moves `key`'s credential under its sign-in lock and refresh lock,
    /// with Ctrl-C held back from the write to the removal (as a refresh
    /// holds it from the answer to the save): stopped between them, the
    /// credential would be left in both, to be refreshed apart.
    static func move(
        _ key: CredentialKey, from source: any CommandStore, to destination: any CommandStore, named: StoreChoice
    ) async throws -> Outcome {
        // Both stores' locks, in one order (by folder) whichever way the
        // move goes, so that two moves the opposite ways do not each hold
        // one store's and wait for the other's; one store's when they share
        // a folder (the same files).
        let stores: [any CommandStore] =
            source.lockFolder == destination.lockFolder
            ? [source] : [source, destination].sorted { $0.lockFolder < $1.lockFolder }
        return try await withLocks(of: key, in: stores[...]) {
            try await moveHoldingTheLocks(key, from: source, to: destination, named: named)
        }
    }

    /// `body` holding `key`'s sign-in lock and refresh lock in each of `stores`, in order.
    static func withLocks(
        of key: CredentialKey, in stores: ArraySlice<any CommandStore>, _ body: @Sendable () async throws -> Outcome
    ) async throws -> Outcome {
        guard let store = stores.first else { return try await body() }
        // Held to the end: a sign-in finishing now would save to the source
        // after the move (its process chose that store when it started).
        let signIn = try store.beginSignIn(for: key)
        defer { withExtendedLifetime(signIn) {} }
        let rest = stores.dropFirst()
        return try await store.withRefreshLock(for: key, timeout: .seconds(30)) {
            try await withLocks(of: key, in: rest, body)
        }
    }

    static func moveHoldingTheLocks(
        _ key: CredentialKey, from source: any CommandStore, to destination: any CommandStore, named: StoreChoice
    ) async throws -> Outcome {
        guard let read = try await source.credential(for: key) else { return .gone }
        // As a store writes it (dates to the whole second): a file written
        // by another tool with fractional seconds was read back from the
        // keyring without them, taken for another credential, and never
        // moved ("did not give back", then "already holds another").
        let credential = try JSONDecoder.credentials.decode(
            Credential.self, from: JSONEncoder.credentials.encode(read))
        // Two entries for one account (a file merged from two machines, as
        // the store warns; a keyring item in two collections, saved while
        // another was the default): the first would be moved and the
        // removal would take both, the other copy (its refresh token
        // perhaps the live one) lost. The user keeps one first.
        let copies = try await source.copies(of: key)
        guard copies <= 1 else {
            throw CLIError(
                "\(source.location) holds \(copies) credentials for this account; moving one would remove them all. Keep one (edit the file, delete the older item in your keyring manager, or authkit token delete \(ShellWord.account(key)) and sign in again), then move it.",
                status: .failure)
        }
        // A later AuthKit's members of the entry (the file's, or a keyring
        // item's: it was checked for the file only) would not go along.
        let unknown = try await source.unknownMembers(of: key)
        guard unknown.isEmpty else {
            throw CLIError(
                "its entry in \(source.location) holds members this authkit does not know (\(unknown.map { DisplayText.sanitized($0, limit: 40) }.joined(separator: ", "))), written by a later version; moving would drop them. Move it with that version.",
                status: .failure)
        }
        if let existing = try await destination.credential(for: key) {
            guard existing == credential else { return .conflict(existing) }
            try await source.remove(key)
            return .moved
        }
        return try await Interrupt.shielding {
            try await destination.save(credential)
            guard try await destination.credential(for: key) == credential else {
                throw CLIError(
                    "\(destination.location) did not give back the credential written to it; it stays in \(source.location) too. Remove the copy (AUTHKIT_STORE=\(named.rawValue) authkit token delete \(ShellWord.account(key))) and try again.",
                    status: .failure)
            }
            do {
                try await source.remove(key)
            } catch {
                // Written there, and still here: not "where it was".
                throw CLIError(
                    "it was copied to \(destination.location), but could not be removed from \(source.location) (\(ErrorReport.message(forAny: error))), so it is in both. Remove the old copy (AUTHKIT_STORE=\(named == .file ? StoreChoice.keyring.rawValue : StoreChoice.file.rawValue) authkit token delete \(ShellWord.account(key))).",
                    status: .failure)
            }
            return .moved
        }
    }
}
