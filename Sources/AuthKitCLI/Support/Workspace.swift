import AuthKit
import AuthKitOAuth1
import AuthKitSandbox

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What a command needs from the environment: the provider catalogue, the
/// user's configuration, the credential store, and authenticators built from them.
struct Workspace {
    let catalog: ProviderCatalog
    /// `credentials.json`, or the keyring (``StoreChoice``); the sandbox's
    /// own file while a sandbox is in use.
    let store: any CommandStore
    let environment: [String: String]
    /// A running `authkit sandbox` every provider is pointed at (`--sandbox`,
    /// `$AUTHKIT_SANDBOX`): its client instead of the user's, and a store of
    /// its own, so a sandbox credential never replaces a real one.
    let sandbox: URL?
    /// True for `sandbox try`, which signs in with the sandbox's client and
    /// stand-ins, taking only placeholder values the user gave: a mistake in
    /// config.json is said as a warning and the file left unused, instead of
    /// stopping a run that needs nothing from it.
    var toleratesBrokenConfiguration = false

    /// - Throws: when `$AUTHKIT_BUNDLED_PROVIDERS` or a `--providers-dir` names
    ///   no directory (silently loading nothing would hide every provider), or
    ///   when `$AUTHKIT_HOME` is a relative path, or AuthKit's directory is taken by a file.
    /// - Parameter usingCredentials: false for a command that reads no
    ///   credential (`providers …`): the sandbox is not announced, and the
    ///   keyring is not asked (nor its absence reported).
    init(
        global: GlobalOptions, environment: [String: String] = ProcessInfo.processInfo.environment,
        usingCredentials: Bool = true
    ) async throws {
        if let problem = AuthKitHome.problem(environment: environment) {
            throw CLIError(problem, status: .usage)
        }
        if let problem = AuthKitHome.foreignWriteProblem(environment: environment) {
            throw CLIError(problem, status: .badInput)
        }
        for (name, url) in [
            ("$AUTHKIT_BUNDLED_PROVIDERS", ProviderCatalog.bundledDirectoryOverride(environment: environment))
        ]
            + global.providerDirectoryURLs.map({ ("--providers-dir", Optional($0)) })
        {
            guard let url else { continue }
            guard FileSystem.isDirectory(url.path) else {
                throw CLIError("\(name) names \(url.path), which is not a directory of provider files.", status: .usage)
            }
        }
        self.environment = environment
        self.catalog = ProviderCatalog.standard(additional: global.providerDirectoryURLs, environment: environment)
        self.sandbox = try Self.sandboxURL(
            global.sandbox ?? environment["AUTHKIT_SANDBOX"].flatMap { $0.isEmpty ? nil : $0 },
            from: global.sandbox == nil ? "$AUTHKIT_SANDBOX" : "--sandbox")
        // The store logs a warning (with the chmod that fixes it) when its
        // files are readable by others.
        if let sandbox {
            try Self.checkSandboxStoreIsApart(environment: environment)
            let store = FileCredentialStore(
                file: Self.sandboxStoreURL(environment: environment), environment: environment)
            self.store = store
            // One short line, and only where the sandbox's credentials are used.
            if usingCredentials {
                Console.err("authkit: sandbox at \(sandbox.absoluteString); its credentials: \(store.location)")
            }
        } else if usingCredentials {
            self.store = try await StoreChoice.store(environment: environment)
        } else {
            self.store = FileCredentialStore(environment: environment)
        }
        // An unreadable choice is said where it is used; here, none.
        let chosen = Set(((try? defaultAccounts.labels()) ?? [:]).keys)
        ShellWord.providersWithAChosenAccount.withLock { $0 = chosen }
    }

    /// Which account a provider's commands use without `--label`, beside
    /// the store in use (the sandbox's own while a sandbox is in use).
    var defaultAccounts: DefaultAccounts {
        DefaultAccounts(
            directory: sandbox == nil
                ? AuthKitHome.directory(environment: environment)
                : Self.sandboxStoreURL(environment: environment).deletingLastPathComponent())
    }

    /// The account a command works on: its `--label`, else the one
    /// `authkit token switch` chose for the provider, else the account without a label.
    func key(_ account: AccountOptions) throws -> CredentialKey {
        if account.label != nil { return account.key }
        return try key(provider: account.provider, label: nil)
    }

    /// ``key(_:)`` for a command whose provider and label are options of its own (`token refresh`).
    func key(provider: String, label: String?) throws -> CredentialKey {
        CredentialKey(providerID: provider, label: try label ?? defaultAccounts.labels()[provider])
    }

    /// Every stored credential that can be read, each read on its own, and
    /// the accounts whose item cannot be (not a credential: edited by hand,
    /// written by a later version), with why. One such item failed the
    /// whole `token list` or `token status`. A failure of the store itself
    /// (a locked keyring, a database away) is thrown, as before.
    func readableCredentials() async throws -> (credentials: [Credential], unreadable: [(CredentialKey, AuthKitError)])
    {
        // One file, read whole and in its order: it cannot fail one account at a time.
        if store is FileCredentialStore { return (try await store.allCredentials(), []) }
        var credentials = [Credential]()
        var unreadable = [(CredentialKey, AuthKitError)]()
        for key in try await store.accounts() {
            do {
                if let credential = try await store.credential(for: key) { credentials.append(credential) }
            } catch let error as AuthKitError {
                guard case .store(_, let reason) = error.reason, reason.kind == .invalidContents else { throw error }
                unreadable.append((key, error))
            }
        }
        let order = { (credential: Credential) in (credential.providerID, credential.label ?? "") }
        return (credentials.sorted { order($0) < order($1) }, unreadable)
    }

    /// After `key` was deleted here (`token delete`, `token revoke`): if it
    /// was the account `token switch` chose, the provider's commands go back
    /// to its account without a label, rather than to one that is gone.
    func forgetChoice(of key: CredentialKey) throws {
        // Byte for byte, as labels are compared everywhere: `==` takes a
        // label and its canonically equivalent spelling (a Kelvin sign for
        // a K) for one, and deleting the other reset the choice.
        // Said as what did not happen after what did: the credential is
        // gone already, and "nothing was changed" alone said otherwise.
        do {
            guard let label = key.label, let chosen = try defaultAccounts.labels()[key.providerID],
                ExactText.same(chosen, label)
            else { return }
            // Again under the file's lock: a `token switch` meanwhile stands.
            guard try defaultAccounts.choose(nil, for: key.providerID, ifStill: label) else { return }
        } catch {
            var reason = ErrorReport.message(forAny: error)
            if !reason.hasSuffix(".") { reason += "." }
            throw CLIError(
                "\(key) was deleted here, but the choice of it for commands without --label was not reset: \(reason) Then choose another account with: authkit token switch --provider \(ShellWord.quoted(key.providerID)) [--label LABEL]",
                status: ExitStatus(for: error))
        }
        Console.err("\(key.providerID)'s commands without --label use the account without a label again.")
    }

    /// `$AUTHKIT_HOME/sandbox/credentials.json`: apart from the real credentials.
    static func sandboxStoreURL(environment: [String: String]) -> URL {
        AuthKitHome.directory(environment: environment).appendingPathComponent("sandbox/credentials.json")
    }

    /// The sandbox's store must be a store of its own: `sandbox/` a directory
    /// (not a link, which could lead to the real store: `token header
    /// --sandbox` then printed the real token, and `request --sandbox` sent it
    /// to the sandbox's URL), and neither it nor its file the real store's.
    /// `lstat`, so no link is followed; AuthKit's directory is refused first
    /// when others can write in it (``AuthKitHome/foreignWriteProblem(environment:)``),
    /// so nobody else can swap the directory after this check.
    static func checkSandboxStoreIsApart(environment: [String: String]) throws {
        let home = AuthKitHome.directory(environment: environment)
        let directory = sandboxStoreURL(environment: environment).deletingLastPathComponent().path
        var info = stat()
        guard lstat(directory, &info) == 0 else { return } // not made yet: the first save makes it
        let type = info.st_mode & S_IFMT
        guard type == S_IFDIR else {
            let what = type == S_IFLNK ? "a symbolic link" : FileSystem.kind(type)
            throw CLIError(
                "\(directory) is \(what), not a directory; the sandbox's credentials are kept apart from your real ones, "
                    + "so AuthKit does not use it. Remove it (rm \(FileSystem.shellQuoted(directory))); the next sandbox sign-in makes the directory.",
                status: .badInput)
        }
        func identity(_ path: String) -> (dev_t, ino_t)? {
            var info = stat()
            return stat(path, &info) == 0 ? (info.st_dev, info.st_ino) : nil
        }
        let pairs = [
            (directory, home.path),
            (directory + "/credentials.json", home.appendingPathComponent("credentials.json").path),
        ]
        for (sandboxPath, realPath) in pairs {
            if let a = identity(sandboxPath), let b = identity(realPath), a == b {
                throw CLIError(
                    "\(sandboxPath) is \(realPath) under another name (a hard link or a mount); the sandbox's credentials are kept apart "
                        + "from your real ones, so AuthKit does not use it. Remove it (rm \(FileSystem.shellQuoted(sandboxPath))).",
                    status: .badInput)
            }
        }
    }

    /// The sandbox's base URL, checked: plain http to this machine, as
    /// `authkit sandbox` serves (anything else would send tokens elsewhere),
    /// at 127.0.0.1 byte for byte: the sandbox listens there only and names
    /// itself so (its issuer, `iss`, DPoP's `htu`, an assertion's `aud`), and
    /// a sign-in through `http://localhost:PORT` was refused for another
    /// issuer, then waited for ever.
    static func sandboxURL(_ text: String?, from source: String) throws -> URL? {
        guard let text else { return nil }
        guard let url = URL(string: text), url.scheme == "http", url.host == "127.0.0.1", url.port != nil,
            url.path.isEmpty || url.path == "/", url.query == nil, url.fragment == nil, url.user == nil,
            url.password == nil
        else {
            throw CLIError(
                "\(source) takes the URL 'authkit sandbox' prints, such as http://127.0.0.1:\(SandboxOptions.standardPort); got '\(DisplayText.sanitized(text, limit: 80))'. The sandbox runs on this machine only.",
                status: .usage)
        }
        return url
    }

    /// Refuses `url` when `providerID`'s descriptor names where its API
    /// lives (`api.origins`) and `url` is elsewhere: a mistyped host, or a
    /// URL pasted from someone else, must not receive the stored credential.
    /// Nothing is read from the store for this, so it comes first, and says
    /// how to add an origin; an origin with a placeholder, which depends on
    /// where the credential was issued, is `CredentialSource`'s to check.
    /// With a sandbox, ``checkSandboxOrigin(_:)`` keeps the credential to it instead.
    func checkAPIOrigin(_ url: URL, providerID: String, explicit: ClientSettings) throws {
        guard sandbox == nil, let descriptor = try? catalog.descriptor(id: providerID),
            descriptor.apiOrigins.isRestricted
        else { return }
        // A config.json that cannot be read is reported as such, not as a missing origin.
        let values = descriptor.placeholderValues(
            settings: try ClientSettings.standard(for: descriptor, explicit: explicit, environment: environment))
        let match = descriptor.apiOrigins.match(url, placeholders: values)
        guard !match.outright, !match.withPlaceholder else { return }
        let origins = DisplayText.sanitized(
            descriptor.apiOrigins.shown(placeholders: values).joined(separator: ", "), limit: 300)
        let host = url.host(percentEncoded: true) ?? ""
        if host.contains("%") {
            throw CLIError(
                "The URL's host '\(DisplayText.sanitized(host, limit: 120))' is percent-encoded; write it plainly "
                    + "(\(descriptor.name)'s API lives at \(origins)).")
        }
        let file =
            descriptor.source.hasPrefix("(bundled)")
            ? "an override (authkit providers override \(descriptor.id) prints the file to edit)"
            : descriptor.source
        throw CLIError(
            "\(DisplayText.sanitized(url.origin, limit: 120)) is not where \(descriptor.name)'s API lives "
                + "(\(origins)), so the stored credential is not sent there. "
                + "Check the URL; if \(descriptor.name)'s API is there too, add \"\(DisplayText.sanitized(url.origin, limit: 120))\" to api.origins in \(file)."
        )
    }

    /// With a sandbox, the credential is the sandbox's, and only the
    /// endpoints are rewritten, not a URL the user gives: a real API's URL
    /// would get the sandbox's token (and fail, or be refused, out there).
    func checkSandboxOrigin(_ url: URL) throws {
        guard let sandbox, url.origin != sandbox.origin else { return }
        throw CLIError(
            "With a sandbox (\(sandbox.absoluteString)), the credential is the sandbox's and goes only to it: "
                + "use its API, \(sandbox.appendingPathComponent("whoami").absoluteString) or …/echo, "
                + "not \(url.redactedForLogs).")
    }

    /// The descriptor for `id`. One that replaces a bundled descriptor and
    /// sends to hosts the bundled one did not, or weakens its sign-in, is
    /// announced on standard error (``ProviderCatalog/overrideNotes(for:)``):
    /// a file someone else placed must not redirect sign-ins silently.
    func descriptor(_ id: String) throws -> ProviderDescriptor {
        let descriptor: ProviderDescriptor
        do {
            descriptor = try catalog.descriptor(id: id)
        } catch let error as AuthKitError {
            guard case .invalidFile(let issues) = error.reason, Self.isBundled(id) else { throw error }
            // A broken override hides the bundled provider: say how to get it back.
            throw CLIError(
                AuthKitError.invalidFile(issues).description + "\n" + Self.brokenOverrideHint(id, issues: issues),
                status: .badInput)
        }
        if let sandbox { return descriptor.pointed(atSandbox: sandbox) }
        // Files passed over, and an override that moves or weakens a sign-in.
        for note in catalog.overrideNotes(for: id) { Console.errOnce("authkit: note: \(note)") }
        return descriptor
    }

    /// Whether `id` names a provider AuthKit ships.
    static func isBundled(_ id: String) -> Bool {
        ProviderCatalog(includeBundled: true, directories: []).entry(id: id) != nil
    }

    /// What to do about a file that fails and so hides the bundled `id`.
    static func brokenOverrideHint(_ id: String, issues: [FileIssue]) -> String {
        let file = issues.first.map { $0.file } ?? "the file"
        return
            "It overrides the bundled \(id), which is not used while it fails: fix it, delete \(file), or start again from the bundled one with: authkit providers override \(id) --force"
    }

    /// The authenticator for `descriptor`'s protocol, with settings from
    /// `explicit`, then the environment, then config.json.
    func authenticator(for descriptor: ProviderDescriptor, explicit: ClientSettings = ClientSettings()) throws
        -> any Authenticator
    {
        if let unknown = descriptor.undeclaredPlaceholder(in: explicit.placeholders.map { Array($0.keys) } ?? []) {
            throw CLIError("--placeholder: \(unknown.problem)")
        }
        var settings: ClientSettings
        do {
            settings = try ClientSettings.standard(for: descriptor, explicit: explicit, environment: environment)
        } catch let error as AuthKitError where toleratesBrokenConfiguration {
            Console.err("authkit: warning: \(error.description) (not used here: the sandbox needs none of it)")
            settings = ClientSettings.resolve(
                providerID: descriptor.id, placeholderNames: descriptor.placeholders.keys.sorted(), explicit: explicit,
                environment: environment)
        }
        if sandbox != nil {
            // The sandbox's client, never the user's real id and secret.
            settings.clientID = explicit.clientID ?? SandboxOptions.standardClientID
            settings.clientSecret = explicit.clientSecret ?? SandboxOptions.standardClientSecret(for: descriptor)
            // Nor the user's private key (config.json, AUTHKIT_<ID>_PRIVATE_KEY_FILE):
            // an assertion signed with it went to the sandbox's port.
            settings.privateKeyFile = explicit.privateKeyFile
            // A placeholder nobody gave gets the sandbox's stand-in
            // (`sandbox try` takes no --placeholder).
            settings.placeholders = (settings.placeholders ?? [:]).merging(Sandbox.standInPlaceholders(for: descriptor))
            { given, _ in given }
        }
        try PastedClientValue.check(settings, explicit: explicit, descriptor: descriptor, environment: environment)
        // Against the provider's own URLs, also with --sandbox (whose copy
        // points elsewhere): a value the real provider could not use fails here too.
        let real = sandbox == nil ? descriptor : (try? catalog.descriptor(id: descriptor.id)) ?? descriptor
        try PlaceholderSetting.check(settings, explicit: explicit, descriptor: real, environment: environment)
        switch descriptor.protocol {
        case .oauth2:
            return try OAuth2Client(descriptor: descriptor, settings: settings)
        case .oauth1:
            return try OAuth1Client(descriptor: descriptor, settings: settings)
        }
    }

    /// The stored credential for `key`, or an error that says how to get one.
    func credential(_ key: CredentialKey) async throws -> Credential {
        guard let credential = try await store.credential(for: key) else {
            if let others = await otherAccounts(than: key) {
                throw CLIError("No stored credential for \(key). \(others)")
            }
            if let inSandbox = sandboxCredentialHint(for: key) {
                throw CLIError("No stored credential for \(key). \(inSandbox)")
            }
            // A mistyped provider (`githbu`) was told to sign in to it; one
            // no file describes is said so, with the near ids, as `token list` does.
            if catalog.entry(id: key.providerID) == nil { _ = try descriptor(key.providerID) }
            throw AuthKitError.signInRequired(key, reason: .noCredential)
        }
        return credential
    }

    /// How many credentials (of `provider`, or all) the sandbox's own store
    /// holds, when no sandbox is named; nil when one is, or it cannot be read.
    func sandboxCredentialCount(provider: String?) -> Int? {
        guard sandbox == nil else { return nil }
        // Read as completion reads: no wait on its lock, nothing written.
        let store = FileCredentialStore(file: Self.sandboxStoreURL(environment: environment), environment: environment)
        return (try? store.unlockedSnapshot())?.filter { provider == nil || $0.providerID == provider }.count
    }

    /// Without a sandbox named, a credential for `key` in the sandbox's own
    /// store (signed in with `--sandbox`, then the variable unset in a new
    /// shell) was met with "sign in first", which would sign in to the real
    /// provider. Nil when that store holds none, or a sandbox is in use.
    func sandboxCredentialHint(for key: CredentialKey) -> String? {
        let file = Self.sandboxStoreURL(environment: environment)
        guard sandbox == nil,
            (try? FileCredentialStore(file: file, environment: environment).unlockedSnapshot())?.contains(where: {
                $0.key == key
            }) == true
        else { return nil }
        return
            "The sandbox's store (\(file.path)) has one: to use it, pass --sandbox with the URL of a running 'authkit sandbox' "
            + "or set AUTHKIT_SANDBOX. To sign in to the real provider: authkit authorize \(ShellWord.account(key))"
    }

    /// "Stored for google: the default account, work. Name one with --label
    /// (none for the default)." when the provider holds accounts other than
    /// `key`'s: a mistyped or forgotten `--label` is the likelier slip then,
    /// and "sign in first" would make a second account of the typo. Nil
    /// when it holds none.
    func otherAccounts(than key: CredentialKey) async -> String? {
        // The accounts' keys only: one unreadable item (of any provider)
        // made allCredentials throw, and the hint was silently skipped.
        let others = ((try? await store.accounts()) ?? []).filter {
            $0.providerID == key.providerID && $0 != key
        }
        guard !others.isEmpty else { return nil }
        let names = others.sorted { ($0.label ?? "") < ($1.label ?? "") }
            .map { $0.label.map(ShellWord.quoted) ?? "the default account" }
        return
            "Stored for \(ShellWord.quoted(key.providerID)): \(names.joined(separator: ", ")). Name one with --label ("
            + (ShellWord.providersWithAChosenAccount.current.contains(key.providerID)
                ? "'' for the default: token switch chose another)." : "none for the default).")
    }

    /// The credential source for `key`: its provider's authenticator (with
    /// `explicit` settings), this store; refreshes are shared with other
    /// processes through the store's refresh lock, and a signal waits until
    /// a refresh has saved what it renewed (``ShieldedCredentialStore``).
    func source(_ key: CredentialKey, explicit: ClientSettings = ClientSettings()) async throws -> CredentialSource {
        let descriptor: ProviderDescriptor
        do {
            descriptor = try self.descriptor(key.providerID)
        } catch let error as AuthKitError {
            guard case .unknownProvider(let id, let suggestions) = error.reason else { throw error }
            // A credential stored for a provider whose file has since gone:
            // "did you mean …" would point at some other provider.
            guard (try? await store.credential(for: key)) != nil else {
                throw AuthKitError.unknownProvider(id: id, suggestions: suggestions)
            }
            // The id and label come from the store: shown escaped, as everywhere on the terminal.
            let shownID = DisplayText.sanitized(id, limit: 40)
            throw CLIError(
                "The credential \(DisplayText.sanitized("\(key)", limit: 80)) was issued by '\(shownID)', which no provider file describes any more: "
                    + "put its file back in \(AuthKitHome.directory(environment: environment).appendingPathComponent("providers").path) "
                    + "(or give the --providers-dir it was signed in from), "
                    + "or delete the credential: authkit token delete \(ShellWord.account(key))")
        }
        // Nothing stored is said before a missing client id: signing in
        // first is the step that helps, and it asks for the client id itself.
        let stored = try await credential(key)
        let authenticator: any Authenticator
        do {
            authenticator = try self.authenticator(for: descriptor, explicit: explicit)
        } catch let missing as AuthKitError where stored.kind == .oauth2 && descriptor.protocol == .oauth2 {
            // A token that is not due is sent without the client; a refresh says what is missing.
            guard case .missingSetting = missing else { throw missing }
            // With the settings in effect: its placeholders name the API's origins.
            let settings =
                (try? ClientSettings.standard(for: descriptor, explicit: explicit, environment: environment))
                ?? explicit
            authenticator = ClientlessAuthenticator(descriptor: descriptor, settings: settings, missing: missing)
        }
        return CredentialSource(authenticator: authenticator, store: ShieldedCredentialStore(base: store), key: key)
    }
}
