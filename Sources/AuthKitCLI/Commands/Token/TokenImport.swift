import ArgumentParser
import AuthKit
import AuthKitSandbox

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `authkit token import`: a token made elsewhere (a provider's settings
/// page, another tool), read from standard input as `gh auth login
/// --with-token` reads one, and stored like a sign-in's.
struct TokenImport: WorkspaceCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Store an access token read from standard input (one line), as a sign-in's.",
        usage: "authkit token import [<options>] --provider <id> < token.txt",
        discussion: """
            The token is read from standard input, not from an argument (a command
            line is visible to other users and kept in shell history). It is
            stored as a Bearer token with no refresh token: when it expires, import
            a new one or sign in. A credential already stored for the account is
            replaced, and the command says so; one that renews itself (a
            sign-in's refresh token, a client credentials grant) only with --force.

            Examples:
              authkit token import --provider github < ~/github-token.txt
              pass show github/token | authkit token import --provider github --label ci
            """)

    @OptionGroup var global: GlobalOptions
    @OptionGroup var account: AccountOptions
    @Option(help: ArgumentHelp("A scope the token carries (repeatable), as recorded.", valueName: "scope"))
    var scope: [String] = []
    // Taken whatever it starts with: `--expires-in -5` was "Missing value"
    // (a flag, to the parser), not what is wrong with it.
    @Option(
        parsing: .unconditional, help: ArgumentHelp("Seconds until the token expires, if known.", valueName: "seconds"))
    var expiresIn: Int?
    @Flag(help: "Replace a stored credential that renews itself (a sign-in's, with a refresh token).")
    var force = false
    @Option(
        help: ArgumentHelp(
            "A host placeholder value such as host=ghe.example.com: where the token was issued, for descriptors with {host} in their URLs (repeatable).",
            valueName: "name=value"))
    var placeholder: [String] = []

    func validate() throws {
        try account.checkNewLabel()
        // As authorize takes them: `--scope repo,read:org` is two scopes.
        try Authorize.checkScopes(Authorize.scopes(scope))
        // Below the bound the library holds a token answer's lifetime to
        // (three thousand years): a date past it is one no later reader may
        // be able to parse, and the whole store would then be unreadable.
        if let expiresIn, expiresIn <= 0 || TokenResponseParser.lifetime(Double(expiresIn)) == nil {
            throw ValidationError(
                "--expires-in takes a positive number of seconds below 100000000000 (1e11), not \(expiresIn).")
        }
    }

    /// Whether `stored` renews itself, so an import would lose what no
    /// second import gives back: a refresh token not past its stated expiry,
    /// or a client credentials grant (asked for again).
    static func renewsItself(_ stored: Credential, at now: Date = Date()) -> Bool {
        guard stored.isRenewable else { return false }
        if stored.refreshToken != nil, let expiry = stored.refreshTokenExpiresAt, expiry <= now { return false }
        return true
    }

    func run(in workspace: Workspace) async throws {
        let key = try workspace.key(account)
        let descriptor = try workspace.descriptor(account.provider)
        guard descriptor.protocol == .oauth2 else {
            throw CLIError(
                "\(descriptor.name) uses OAuth 1.0a, whose tokens come with a secret and are used only in signatures; sign in with authkit authorize \(ShellWord.account(key)).",
                status: .usage)
        }
        let origins = try endpointOrigins(of: descriptor, in: workspace)
        // Before the token is asked for. A sign-in's credential renews itself
        // with its refresh token; the imported one cannot, and replacing it
        // silently (the account `token switch` chose, when --label is left
        // out) lost the grant: the user had to sign in again.
        let refusal = CLIError(
            "\(key) holds a credential that renews itself (a sign-in's refresh token, or a client credentials grant), which an imported token would replace for good; nothing was imported. Import under another label (--label NAME), or pass --force to replace it.",
            status: .badInput)
        if !force, let stored = try await workspace.store.credential(for: key), Self.renewsItself(stored) {
            throw refusal
        }
        let token: String
        // Typed or pasted at a terminal, the token is not echoed: echo goes
        // off before the prompt shows, so a paste that follows the prompt at
        // once is not shown either (it was, when the prompt came first).
        let read = Console.readLine(limit: 16 << 10, echo: false, prompt: "Paste the token, then press Enter:")
        switch read {
        case .line(let line):
            // A file a Windows editor saved starts with a byte-order mark
            // (U+FEFF), which cannot be seen: it was refused as "not a token"
            // with nothing to see. One is dropped, as the library drops one
            // before a token endpoint's answer (RFC 8259 §8.1).
            let text = line.unicodeScalars.first == "\u{FEFF}" ? String(line.unicodeScalars.dropFirst()) : line
            token = text.trimmingSpaces()
        case .end: throw CLIError("No token on standard input: pipe one in (< token.txt).", status: .badInput)
        case .tooLong(let limit):
            throw CLIError("The line on standard input is longer than \(limit) bytes: no token is.", status: .badInput)
        }
        guard TokenResponseParser.isSendableAsBearer(token) else {
            throw CLIError(
                "What standard input holds is not a token a Bearer header can carry (empty, or a space, control or non-ASCII character; RFC 6750 §2.1). It is not repeated here.",
                status: .badInput)
        }
        if let shape = Self.notATokenAlone(token) {
            throw CLIError(
                "The first line of standard input is \(shape), not a token alone; nothing was stored. Give the token itself, e.g. authkit token print --format bare, or jq -r .access_token.",
                status: .badInput)
        }
        let now = Date()
        let credential = Credential(
            providerID: descriptor.id, label: key.label, accessToken: token,
            expiresAt: expiresIn.map { now.addingTimeInterval(TimeInterval($0)) }, scopes: Authorize.scopes(scope),
            obtainedAt: now, endpointOrigins: origins)
        // Asked again under the lock: a sign-in that ended while the token
        // was being pasted is replaced only with --force too.
        let force = self.force
        let previous = try await workspace.store.withRefreshLock(for: key, timeout: .seconds(30)) {
            let previous = try await workspace.store.credential(for: key)
            if !force, let previous, Self.renewsItself(previous) { throw refusal }
            try await workspace.store.save(credential)
            return previous
        }
        if let previous {
            Console.err(
                Authorize.replacementNote(previous, key: key, sandbox: workspace.sandbox != nil))
        }
        Console.say("Imported a token for \(key). Stored in \(workspace.store.location).")
    }

    /// Where the token was issued, as a sign-in records it
    /// (``Credential/endpointOrigins``): for a provider whose hosts are
    /// placeholders (`github-enterprise`'s `{host}`), the values in effect.
    /// Without them the token was stored and then refused everywhere
    /// (`request`, git, `token status`: "issued elsewhere"), so a
    /// placeholder the endpoints need and nothing gives is refused first.
    func endpointOrigins(of descriptor: ProviderDescriptor, in workspace: Workspace) throws -> [String] {
        let given = try ClientOptions.placeholders(placeholder)
        if let unknown = descriptor.undeclaredPlaceholder(in: Array(given.keys)) {
            throw CLIError("--placeholder: \(unknown.problem)")
        }
        let explicit = ClientSettings(placeholders: given.isEmpty ? nil : given)
        var settings = try ClientSettings.standard(
            for: descriptor, explicit: explicit, environment: workspace.environment)
        if workspace.sandbox != nil {
            settings.placeholders = (settings.placeholders ?? [:]).merging(Sandbox.standInPlaceholders(for: descriptor))
            { given, _ in given }
        }
        try PlaceholderSetting.check(
            settings, explicit: explicit, descriptor: descriptor, environment: workspace.environment)
        let values = descriptor.placeholderValues(settings: settings)
        for name in descriptor.placeholders.keys.sorted() where values[name] == nil {
            guard descriptor.endpointURLs.contains(where: { $0.contains("{\(name)}") }) else { continue }
            throw CLIError(
                "\(descriptor.name)'s URLs name {\(name)}, which has no value here: give the one the token was issued at, with --placeholder \(name)=VALUE or \(ClientSettings.placeholderVariable(providerID: descriptor.id, name: name)). Nothing was imported.",
                status: .usage)
        }
        return descriptor.endpointOrigins(placeholderValues: values)
    }

    /// What a first line is when it is not a token alone, though a Bearer
    /// header could carry it: the start of a JSON document (`token show
    /// --json` or `token print --format json` piped in stored `{`), or a
    /// variable assignment from an env file (`GITHUB_TOKEN=ghp_…` stored
    /// whole). An assignment is an upper-case name, `=`, and a value that
    /// is not padding: a base64 or base32 token may end in `=`s
    /// (`QUJD`, `PAT_JBSWY3DPEE======`), but nothing follows them.
    static func notATokenAlone(_ line: String) -> String? {
        if line.hasPrefix("{") || line.hasPrefix("[") { return "the start of a JSON document" }
        guard let equals = line.firstIndex(of: "=") else { return nil }
        let name = line[..<equals].utf8
        let isName =
            name.allSatisfy { ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == UInt8(ascii: "_") }
            && name.first.map { $0 >= 0x41 && $0 <= 0x5A } == true
        let value = line[line.index(after: equals)...]
        return isName && value.contains(where: { $0 != "=" })
            ? "a variable assignment (\(String(line[..<equals]))=…)" : nil
    }
}
