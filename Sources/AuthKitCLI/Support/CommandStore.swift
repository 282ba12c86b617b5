import ArgumentParser
import AuthKit

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if os(macOS)
    import AuthKitApple
#endif

/// Where the command line keeps credentials: `credentials.json` (the
/// default), or the system keyring — the Secret Service on Linux, the
/// Keychain on macOS — chosen with `AUTHKIT_STORE=keyring` or
/// `"store": "keyring"` in config.json.
///
/// What a command needs of a store beyond ``CredentialStore``: a place to
/// name after "Stored in", a check before a sign-in asks anything of the
/// user, and the lock that keeps two sign-ins to one account apart.
protocol CommandStore: CredentialStore {
    /// A path, or which keyring.
    var location: String { get }
    /// Throws, before a sign-in asks the user anything, when what it brings could not be kept.
    func checkWritable() async throws
    /// Holds the sign-in of `key` against a second one at once.
    func beginSignIn(for key: CredentialKey) throws -> FileCredentialStore.SignInLock
    /// Where the refresh and sign-in lock files are: two stores with the
    /// same one exclude each other with the same locks.
    var lockFolder: String { get }
    /// The accounts stored, without waiting on a lock or unlocking anything: for shell completion.
    func keysForCompletion() -> [CredentialKey]
    /// The accounts stored, read without their secrets where the store can
    /// (a keyring's item attributes), so that one unreadable credential does
    /// not hide the others (`token move` reads each as it moves it).
    func accounts() async throws -> [CredentialKey]
    /// Members of `key`'s stored credential this authkit does not know (a
    /// later version's): a move to another store would drop them.
    func unknownMembers(of key: CredentialKey) async throws -> [String]
    /// How many entries this store holds for `key` (a file merged from two
    /// machines, a keyring item in two collections): reading takes one,
    /// removing takes them all.
    func copies(of key: CredentialKey) async throws -> Int
}

extension CommandStore {
    func accounts() async throws -> [CredentialKey] { try await allCredentials().map(\.key) }
    func unknownMembers(of key: CredentialKey) async throws -> [String] { [] }
    func copies(of key: CredentialKey) async throws -> Int { try await accounts().filter { $0 == key }.count }
}

extension FileCredentialStore: CommandStore {
    var location: String { fileURL.path }
    var lockFolder: String { fileURL.deletingLastPathComponent().standardizedFileURL.path }
    func keysForCompletion() -> [CredentialKey] { ((try? unlockedSnapshot()) ?? []).map(\.key) }
}

#if canImport(CAuthKitLinux)
    extension SecretServiceCredentialStore: CommandStore {
        var location: String { Self.keyringName }
        var lockFolder: String { lockDirectory.standardizedFileURL.path }
        func keysForCompletion() -> [CredentialKey] { (try? keysNow()) ?? [] }
        func accounts() async throws -> [CredentialKey] { try await keys() }
        func copies(of key: CredentialKey) async throws -> Int { try await itemKeys().filter { $0 == key }.count }
    }
#endif

#if os(macOS)
    extension KeychainCredentialStore: CommandStore {
        var location: String { "the login Keychain (service \(service))" }
        var lockFolder: String { (lockDirectory ?? AuthKitHome.directory()).standardizedFileURL.path }
        /// Before a browser opens: a Keychain that cannot save (a session
        /// without a login; locked, over SSH) fails here, not after consent.
        func checkWritable() async throws { try checkSaves() }
        func beginSignIn(for key: CredentialKey) throws -> FileCredentialStore.SignInLock {
            let directory = lockDirectory ?? AuthKitHome.directory()
            try FileSystem.createPrivateDirectory(directory.path)
            return try FileCredentialStore.beginSignIn(for: key, in: directory)
        }
        func keysForCompletion() -> [CredentialKey] { [] }
        func accounts() async throws -> [CredentialKey] { try keys() }
    }
#endif

/// The choice between the file and the keyring, and the store it makes.
enum StoreChoice: String, CaseIterable, ExpressibleByArgument {
    case file, keyring

    /// `AUTHKIT_STORE`, else config.json's `store`, else the file.
    static func chosen(environment: [String: String]) throws -> (choice: StoreChoice, source: String) {
        if let value = environment["AUTHKIT_STORE"], !value.isEmpty {
            guard let choice = StoreChoice(rawValue: value) else {
                throw CLIError(
                    "AUTHKIT_STORE is '\(DisplayText.sanitized(value, limit: 40))'; set it to file or keyring, or unset it.",
                    status: .usage)
            }
            return (choice, "AUTHKIT_STORE=\(value)")
        }
        let home = AuthKitHome.directory(environment: environment)
        if let value = try UserConfiguration.storeSetting(home: home), let choice = StoreChoice(rawValue: value) {
            return (choice, "\"store\": \"\(value)\" in \(home.appendingPathComponent("config.json").path)")
        }
        return (.file, "the default")
    }

    /// The store chosen. Where the keyring is chosen and none answers, the
    /// file is used, and that is said on standard error every time: a
    /// credential kept somewhere the user did not choose must not go unnoticed
    /// (gh falls back to a plain file silently).
    static func store(environment: [String: String]) async throws -> any CommandStore {
        let (choice, source) = try chosen(environment: environment)
        let file = FileCredentialStore(environment: environment)
        guard choice == .keyring else { return file }
        switch await keyring(environment: environment, timeout: try keyringTimeout(environment: environment)) {
        case .success(let keyring): return keyring
        case .failure(let why):
            Console.err(
                "authkit: warning: \(source) asks for the keyring, but \(why.text); using \(file.location) instead. "
                    + (why.canStart
                        ? "Start a keyring (gnome-keyring-daemon, KeePassXC) or choose the file to silence this."
                        : ""))
            return file
        }
    }

    /// Why there is no keyring to use: a clause ("no Secret Service answers (…)").
    struct NoKeyring: Error {
        let text: String
        /// False where this system has none at all.
        let canStart: Bool
    }

    /// `AUTHKIT_KEYRING_TIMEOUT`: the seconds one call to the Secret Service
    /// may take, its unlock prompt's wait for the user included (60 unless
    /// set): a prompt shown where no one sees it would be waited for without end.
    static func keyringTimeout(environment: [String: String]) throws -> Duration {
        guard let text = environment["AUTHKIT_KEYRING_TIMEOUT"], !text.isEmpty else {
            #if canImport(CAuthKitLinux)
                return SecretServiceCredentialStore.defaultCallTimeout
            #else
                return .seconds(60)
            #endif
        }
        guard let seconds = Double(text), seconds.isFinite, seconds >= 0.1, seconds <= 3600 else {
            throw CLIError(
                "AUTHKIT_KEYRING_TIMEOUT is '\(DisplayText.sanitized(text, limit: 40))'; set it to the seconds a keyring call may take (0.1 to 3600, e.g. 60), or unset it.",
                status: .usage)
        }
        return .milliseconds(Int64(seconds * 1000))
    }

    /// The system keyring, or why none answers.
    static func keyring(environment: [String: String], timeout: Duration) async -> Result<any CommandStore, NoKeyring> {
        #if canImport(CAuthKitLinux)
            if let reason = await SecretServiceCredentialStore.unavailableReason(timeout: timeout) {
                return .failure(
                    NoKeyring(
                        text: "no Secret Service answers (\(DisplayText.sanitized(reason, limit: 200)))",
                        canStart: true))
            }
            return .success(SecretServiceCredentialStore(callTimeout: timeout, environment: environment))
        #elseif os(macOS)
            // The file-based login keychain: the data protection keychain
            // needs an entitlement a command-line tool cannot carry (TN3137).
            let store = KeychainCredentialStore(
                dataProtectionKeychain: false, lockDirectory: AuthKitHome.directory(environment: environment))
            // Whether there is a keychain, not whether it is unlocked: a
            // locked one is still the store chosen (its reads say `locked`,
            // exit 75), not a reason to fall back to the file.
            do {
                try store.checkAnswers()
            } catch {
                return .failure(
                    NoKeyring(
                        text: "the login Keychain does not answer (\(ErrorReport.message(forAny: error)))",
                        canStart: false))
            }
            return .success(store)
        #else
            return .failure(NoKeyring(text: "this system has no keyring AuthKit can use", canStart: false))
        #endif
    }
}
