import ArgumentParser
import AuthKit

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `authkit token git-credential get`: git's credential helper
/// (git-credential(1)), as `gh auth git-credential` is for GitHub. git runs
/// it with an operation and the request on standard input; for `get` at one
/// of the descriptor's git origins it answers the descriptor's user name and
/// the stored access token, refreshed first when due.
///
/// `store` and `erase` are read and ignored: the credential is AuthKit's,
/// kept by its sign-in, and git's `erase` after a refusal (a repository the
/// grant does not reach, a missing scope) must not delete it. Other
/// operations are ignored, as git-credential(1) asks of a helper.
struct TokenGitCredential: WorkspaceCommand {
    static let sendsRequests = true
    static let configuration = CommandConfiguration(
        commandName: "git-credential",
        abstract: "Answer git's credential requests with a stored token (git runs it; see token setup-git).",
        usage: "authkit token git-credential --provider <id> [--label <label>] get",
        discussion: """
            git runs this as a credential helper (git-credential(1)) once
            authkit token setup-git has configured it. For get at one of the git
            origins in the provider's descriptor, standard output gets
            username=… and password=<the access token>, refreshed first when due;
            for any other host, nothing. A URL with a user name (https://bob@host/…)
            gets that account's token (its label, or its name at sign-in), or nothing. store and erase change nothing: a
            refusal by the host does not delete the credential.

            Example (what git does):
              printf 'protocol=https\\nhost=github.com\\n\\n' |
                authkit token git-credential --provider github get
            """)

    /// git may run it from a terminal where `authkit sandbox serve` left
    /// `AUTHKIT_SANDBOX` exported: the user's real credentials answer git.
    static let followsSandbox = false

    @OptionGroup var global: GlobalOptions
    @OptionGroup var account: AccountOptions
    @Argument(help: ArgumentHelp("What git asks: get (store and erase change nothing).", valueName: "operation"))
    var operation: String

    func validate() throws {
        if global.sandbox != nil {
            throw ValidationError("--sandbox: git gets your real credentials; a sandbox serves no git.")
        }
    }

    func run(in workspace: Workspace) async throws {
        let request = try GitCredentialRequest.fromInput()
        guard operation == "get" else { return }
        let descriptor = try workspace.descriptor(account.provider)
        guard let git = descriptor.git else { throw Self.noGitSection(descriptor) }
        // Another host: not this helper's to answer (git asks the next one).
        guard let scheme = request.single("protocol"), let host = request.single("host"),
            let origin = GitAccess.origin(protocol: scheme, host: host)
        else { return }
        let settings = try ClientSettings.standard(
            for: descriptor, explicit: ClientSettings(), environment: workspace.environment)
        let placeholders = descriptor.placeholderValues(settings: settings)
        let match = git.origins.match(origin, placeholders: placeholders)
        guard match.outright || match.withPlaceholder else { return }
        // The descriptor, with the settings in effect, names this host: what
        // stops the token is said. A `{host}` origin has the shape of every
        // host, and git may ask a helper configured for all of them about
        // any: those this credential was not issued at are passed silently.
        let named = match.outright || match.byValuesInEffect
        guard
            let key = try await Self.account(
                asked: request, at: origin, placeholders: placeholders, git: git, options: account, in: workspace)
        else {
            return
        }
        guard let stored = try await workspace.store.credential(for: key) else {
            guard named else { return }
            throw CLIError(
                "No stored credential for \(key) to give git for \(origin.origin); sign in: authkit authorize \(ShellWord.account(key))\(Self.scopeHint(git)).",
                status: .usage)
        }
        guard git.allows(origin, for: stored, placeholders: placeholders) else {
            guard named else { return }
            throw CLIError(
                "\(key) was not issued at \(origin.origin), so its token is not given to git there; sign in at that host: authkit authorize \(ShellWord.account(key)).",
                status: .usage)
        }
        // Before a refresh: one that rotates the refresh token for nothing.
        guard stored.kind == .oauth2, stored.proofKey == nil else {
            throw CLIError(
                stored.kind == .oauth2
                    ? "\(key) is DPoP-bound (RFC 9449): its token is refused without a proof made for each request, which git cannot send."
                    : "\(key) is an OAuth 1.0a credential: its token is used only in signatures, not as git's password.",
                status: .usage)
        }
        let credential = try await workspace.source(key).current()
        // What is printed is what was checked: a sign-in in between may have
        // stored another host's credential for the account.
        guard git.allows(origin, for: credential, placeholders: placeholders), credential.proofKey == nil else {
            throw CLIError(
                "\(key) changed while its token was read (a sign-in elsewhere); git gets nothing this time: try again.",
                status: .failure)
        }
        // The token goes on a line of git's protocol: a line break in it
        // would add attributes of the provider's choosing.
        guard TokenResponseParser.isSendableAsBearer(credential.accessToken) else {
            throw CLIError(
                "The stored token for \(key) holds a character no Bearer token has (RFC 6750 §2.1); it is not given to git.",
                status: .failure)
        }
        if !git.isGranted(by: credential.scopes) {
            Console.err(Self.scopeWarning(key, git: git, granted: credential.scopes))
        }
        var answer = "username=\(git.username)\npassword=\(credential.accessToken)"
        // git 2.41+ drops a password past its expiry rather than use it.
        if let expiresAt = credential.expiresAt {
            answer += "\npassword_expiry_utc=\(Int(expiresAt.timeIntervalSince1970))"
        }
        Console.out(answer)
    }

    /// The account git asks for. A URL with a user name
    /// (`https://bob@github.com/…`) makes git send `username=bob`: the
    /// stored credential of that account answers (its label, or the name its
    /// provider gave at sign-in, byte for byte), as `gh auth git-credential`
    /// answers for the user asked about; `nil` (git is told nothing) when no
    /// credential is that user's, so that another account's token does not
    /// answer for bob. Without a user name, or with the descriptor's own
    /// (`x-access-token`), the account `--label` (or `token switch`) chose;
    /// with `--label`, only that account is considered.
    static func account(
        asked request: GitCredentialRequest, at origin: URL, placeholders: [String: String],
        git: GitAccess, options: AccountOptions, in workspace: Workspace
    ) async throws -> CredentialKey? {
        let chosen = try workspace.key(options)
        guard let wanted = request.single("username"), !wanted.isEmpty, !ExactText.same(wanted, git.username) else {
            return chosen
        }
        var candidates = [chosen]
        if options.label == nil {
            candidates += try await workspace.store.accounts()
                .filter { ExactText.same($0.providerID, chosen.providerID) && $0 != chosen }
                .sorted { ($0.label ?? "") < ($1.label ?? "") }
        }
        // The first that is that user's and was issued at the host git asks
        // about; else the first that is that user's (whose refusal is then
        // said): one user may hold accounts at two hosts of a `{host}`
        // provider, and the first, another host's, hid the second.
        var first: CredentialKey?
        for key in candidates {
            let stored = try await workspace.store.credential(for: key)
            // Stored as the provider named it: "login (id)", or the id alone.
            let named = stored?.account.map { ExactText.same($0, wanted) || $0.utf8.starts(with: (wanted + " (").utf8) }
            guard key.label.map({ ExactText.same($0, wanted) }) == true || named == true else { continue }
            if let stored, git.allows(origin, for: stored, placeholders: placeholders) { return key }
            first = first ?? key
        }
        return first
    }

    static func noGitSection(_ descriptor: ProviderDescriptor) -> CLIError {
        CLIError(
            "\(descriptor.name)'s descriptor (\(descriptor.source)) names no git host: it has no \"git\" section with the origins and user name its git host takes a token with.",
            status: .usage)
    }

    /// ` --scope repo` for a descriptor that names the scopes git needs.
    static func scopeHint(_ git: GitAccess) -> String {
        git.scopes.first.map { " --scope \(ShellWord.quoted($0))" } ?? ""
    }

    static func scopeWarning(_ key: CredentialKey, git: GitAccess, granted: [String]) -> String {
        "authkit: warning: \(key) was granted \(granted.joined(separator: " ")), none of what git needs "
            + "(\(git.scopes.joined(separator: ", "))): the host will refuse it. Sign in again: authkit authorize "
            + "\(ShellWord.account(key))\(scopeHint(git))"
    }
}
