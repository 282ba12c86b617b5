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
/// global git configuration, after the helpers it has there (which stay):
///
///     credential.<origin>.helper = ""          (the helpers before it are not asked there)
///     credential.<origin>.helper = !'<this authkit>' token git-credential --provider='ID' [--label='L']
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
            It prints how to undo it.

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
                "\(descriptor.name)'s git origin \(wildcard) is a pattern: git's configuration matches its * to one host label, where the descriptor's *. means any subdomain. List each git host in the descriptor's git.origins.",
                status: .badInput)
        }
        // The account first: a mistyped --label replaced a working helper
        // with one that finds nothing, and its advice made an account of the typo.
        // Only a --label given: without one, git may pick among labelled
        // accounts by the URL's user name (https://bob@github.com/…).
        let key = try workspace.key(account)
        let stored = try await workspace.store.credential(for: key)
        if stored == nil, account.label != nil, let others = await workspace.otherAccounts(than: key) {
            throw CLIError.nothingStored(key, so: "git's configuration was left as it was", others: others)
        }
        // $AUTHKIT_SANDBOX exported and nothing real stored: someone trying
        // the sandbox, about to point their real git at an empty account
        // (a newcomer following README's block did). Said before anything
        // is changed; with a real credential stored, it is set up as asked.
        // (The process's own environment: the workspace's has the variable
        // taken out, as this command does not follow it.)
        if stored == nil, !(ProcessInfo.processInfo.environment["AUTHKIT_SANDBOX"] ?? "").isEmpty {
            throw CLIError(
                "Nothing is stored for \(key) in your real store, and AUTHKIT_SANDBOX is set: setup-git configures your real git (~/.gitconfig) for \(origins.joined(separator: ", ")), which no sandbox serves. git's configuration was left as it was. Sign in for real first (unset AUTHKIT_SANDBOX; authkit authorize \(ShellWord.account(key))), then run it again.",
                status: .usage)
        }
        let helper = "!" + (try helperCommand(descriptor.id, in: workspace))
        // As git compares: scheme and host in lower case, no default port,
        // no final dot (which git's own matching would not see through).
        let names = origins.map { "credential.\(APIOrigins.normalizedOrigin($0) ?? $0).helper" }
        // One setup at a time, from reading what git has to the end of any
        // roll-back: two at once each read the old helpers and both added
        // theirs, or the one that failed on git's lock undid the other's.
        let home = AuthKitHome.directory(environment: workspace.environment)
        let lock = RefreshLockFile(
            path: home.appendingPathComponent(".setup-git.lock").path, activity: "setting up git's helpers")
        try FileSystem.createPrivateDirectory(home.path)
        let before = try await lock.withLock(timeout: .seconds(30)) { [workspace] in
            // What each origin had, read whole (-z: a value may hold a line break)
            // before anything is changed.
            var before = [(name: String, values: [String])]()
            for name in names {
                let values = try await Self.git(
                    ["--get-all", "-z", name], environment: workspace.environment, missingIsEmpty: true)
                before.append(
                    (name, values.split(separator: "\0", omittingEmptySubsequences: false).dropLast().map(String.init)))
            }
            try await Self.append(helper, after: before, environment: workspace.environment)
            return before
        }
        Console.out("git asks authkit for \(descriptor.name)'s token at \(origins.joined(separator: ", ")).")
        let changed = before.filter { !Self.isSetUp($0.values, helper: helper) }
        if changed.isEmpty {
            Console.err("authkit: note: git was set up so already; nothing changed.")
        } else {
            // Named by a safe summary only: an inline helper holds a secret.
            let others = changed.flatMap(\.values).filter { !$0.isEmpty && !Self.isAuthKitHelper($0) }
            if !others.isEmpty {
                var seen = Set<String>()
                let summaries = others.map(Self.summary(ofHelper:)).filter { seen.insert($0).inserted }
                Console.err(
                    "authkit: note: git no longer asks these helpers there: " + summaries.joined(separator: "; ")
                        + ". They stay in git's configuration, before the empty entry that stops git asking them.")
            }
            Console.err("authkit: note: to undo: " + changed.map(Self.undo).joined(separator: "; "))
        }
        if let credential = stored {
            if !git.isGranted(by: credential.scopes) {
                Console.err(TokenGitCredential.scopeWarning(key, git: git, granted: credential.scopes))
            }
        } else {
            Console.err(
                "authkit: note: nothing is stored for \(key) yet; sign in: authkit authorize \(ShellWord.account(key))\(TokenGitCredential.scopeHint(git))"
            )
        }
    }

    /// Adds, after what each origin has, an empty helper (git asks none of
    /// those before it: git-config(1), `credential.helper`) and `helper`.
    /// Nothing is removed or rewritten: an origin's helpers may be inline
    /// (`!f() { echo password=…; }; f`), and a value written again would be
    /// on git's command line, which every user of the machine can read in
    /// `/proc` while git runs; so the user's helpers never leave the file
    /// they are in. An origin whose last two values are these already is
    /// left as it is. A failure part-way leaves each origin done set up (git
    /// asks authkit there) and takes away an empty entry added alone (git
    /// would ask no helper there) where that can be done exactly.
    static func append(
        _ helper: String, after before: [(name: String, values: [String])], environment: [String: String]
    ) async throws {
        var done = [String]()
        for (name, values) in before where !isSetUp(values, helper: helper) {
            var reset = false
            do {
                try await git(["--add", name, ""], environment: environment)
                reset = true
                try await git(["--add", name, helper], environment: environment)
                done.append(origin(of: name))
            } catch let failure as CLIError {
                var said = failure.message
                if !reset {
                    said += " \(origin(of: name)) was left as it was."
                } else if !values.contains(""),
                    (try? await git(["--unset-all", name, "^$"], environment: environment)) != nil
                {
                    // The origin's only empty entry is the one just added.
                    said += " \(origin(of: name)) was left as it was."
                } else {
                    said +=
                        " git asks no helper at \(origin(of: name)) now: remove the last empty helper line under [credential \"\(origin(of: name))\"] in your global git configuration, or run this again."
                }
                if !done.isEmpty { said += " git asks authkit at \(done.joined(separator: ", ")) already." }
                throw CLIError(said, status: failure.status)
            }
        }
    }

    /// Whether an origin's helpers end with the empty entry and `helper`.
    static func isSetUp(_ values: [String], helper: String) -> Bool {
        values.suffix(2) == ["", helper]
    }

    /// A helper `setup-git` writes, for any account; it holds no secret.
    static func isAuthKitHelper(_ value: String) -> Bool {
        value.hasPrefix("!") && value.contains(" token git-credential --provider")
    }

    /// The origin in `credential.<origin>.helper`.
    static func origin(of name: String) -> String {
        String(name.dropFirst("credential.".count).dropLast(".helper".count))
    }

    /// How to take away what ``append(_:after:environment:)`` added at an
    /// origin that had `values`: every value, where there was none; the
    /// empty entry and authkit's helper by a pattern, where no value before
    /// was either; else by hand (the pattern would take the user's own
    /// empty entry too).
    static func undo(_ origin: (name: String, values: [String])) -> String {
        if origin.values.isEmpty { return "git config --global --unset-all \(origin.name)" }
        if !origin.values.contains(where: { $0.isEmpty || isAuthKitHelper($0) }) {
            return "git config --global --unset-all \(origin.name) '^$| token git-credential --provider'"
        }
        return
            "remove the last two helper lines under [credential \"\(Self.origin(of: origin.name))\"] in your global git configuration"
    }

    /// A helper as it may be shown: its first word (`store`, `!f()`,
    /// `/usr/bin/git-credential-manager`), cut after any `=`, and `…` for
    /// the rest. Shown whole, an inline helper put its password on standard
    /// error (a CI log).
    static func summary(ofHelper helper: String) -> String {
        let words = helper.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" })
        guard let first = words.first else { return "''" }
        var shown = String(first)
        var cut = words.count > 1
        if let equals = shown.firstIndex(of: "=") {
            shown = String(shown[...equals])
            cut = true
        }
        shown = DisplayText.sanitized(shown, limit: 60)
        return cut ? shown + " …" : shown
    }

    /// What git runs (through `sh -c`, with the operation appended): this
    /// authkit, with what the credential was found through here and git's
    /// environment may lack (`AUTHKIT_HOME`, the store chosen, directories
    /// of descriptors), and the account as `--provider=`/`--label=`, so that
    /// a label starting with `-` stays a value. No secret: client settings
    /// come from config.json or git's environment when a refresh needs them.
    func helperCommand(_ providerID: String, in workspace: Workspace) throws -> String {
        var words = [String]()
        for name in ["AUTHKIT_HOME", "AUTHKIT_STORE"] {
            if let value = workspace.environment[name], !value.isEmpty {
                words.append(name + "=" + ShellWord.literal(value))
            }
        }
        // Made absolute, as --providers-dir is: git runs the helper in the
        // repository's directory, where a relative one names nothing.
        if let bundled = ProviderCatalog.bundledDirectoryOverride(environment: workspace.environment) {
            words.append("AUTHKIT_BUNDLED_PROVIDERS=" + ShellWord.literal(bundled.standardizedFileURL.path))
        }
        // A home found through XDG_CONFIG_HOME is written out: git run
        // without that variable (from a GUI, cron, systemd, sudo) would
        // look in ~/.config/authkit and find nothing.
        if workspace.environment["AUTHKIT_HOME"]?.isEmpty ?? true,
            workspace.environment["XDG_CONFIG_HOME"]?.hasPrefix("/") == true
        {
            words.insert(
                "AUTHKIT_HOME=" + ShellWord.literal(AuthKitHome.directory(environment: workspace.environment).path),
                at: 0)
        }
        words.append(ShellWord.literal(try Self.ownExecutable(environment: workspace.environment)))
        words += ["token", "git-credential"]
        words += global.providerDirectoryURLs.map { "--providers-dir=" + ShellWord.literal($0.path) }
        words.append("--provider=" + ShellWord.literal(providerID))
        // `--label=VALUE` keeps a label that starts with `-` a value; an
        // empty one is two words: `--label=''` is `--label=` to the shell,
        // which argument-parser read as wanting the next word, and took
        // the `get` git appends for the label.
        if let label = account.label {
            words.append(label.isEmpty ? "--label ''" : "--label=" + ShellWord.literal(label))
        }
        return words.joined(separator: " ")
    }

    /// `git config --global ARGUMENTS`: its standard output; its failure,
    /// with what it said. `missingIsEmpty`: a `--get-all` of a key that is
    /// not set (exit 1) is no output.
    @discardableResult
    static func git(_ arguments: [String], environment: [String: String], missingIsEmpty: Bool = false)
        async throws -> String
    {
        let status: TerminationStatus
        let output: String
        let said: String
        do {
            let result = try await Subprocess.run(
                .name("git"), arguments: Arguments(["config", "--global"] + arguments),
                environment: .custom(ChildEnvironment.variables(environment, for: .git)),
                input: .none, output: .string(limit: 64 << 10), error: .string(limit: 16 << 10))
            status = result.terminationStatus
            output = result.standardOutput
            said = result.standardError
        } catch let error as SubprocessError where error.code == .outputLimitExceeded {
            // git ran; what it had to say (a helper list of another tool's
            // making, over 64 KiB) is more than setup-git reads.
            throw CLIError(
                "git config --global \(arguments.first ?? "") printed more than the 64 KiB setup-git reads (the helpers configured for this host?). Look with: git config --global --get-regexp '^credential'",
                status: .failure)
        } catch {
            throw CLIError("git could not be run (\(error)); is git installed and on PATH?", status: .failure)
        }
        if case .exited(0) = status { return output }
        if missingIsEmpty, case .exited(1) = status { return "" }
        let how: String =
            switch status {
            case .exited(let code): "exit status \(code)"
            case .signaled(let signal): "signal \(signal)"
            }
        // git's own words, on one line: a line break showed as `\u{A}` mid-sentence.
        let words = said.split(whereSeparator: \.isNewline).map { String($0.trimmingSpaces()) }.joined(separator: " ")
        throw CLIError(
            "git config --global \(arguments.first ?? "") failed (\(how)): \(DisplayText.sanitized(words, limit: 400))",
            status: .failure)
    }

    /// The path git is to run authkit by: the `PATH` entry this authkit was
    /// found through when it leads to the same file (a package manager's
    /// link, which outlives an upgrade, where the file it points to is in a
    /// versioned directory), else the file itself. A bare name is looked up
    /// in `PATH` only, never in the current directory.
    static func ownExecutable(environment: [String: String]) throws -> String {
        let started = CommandLine.arguments.first ?? "authkit"
        let name = started.split(separator: "/").last.map(String.init) ?? "authkit"
        let running = Self.runningFile() ?? (started.contains("/") ? Self.resolved(started) : nil)
        for directory in (environment["PATH"] ?? "").split(separator: ":") where directory.hasPrefix("/") {
            let candidate = "\(directory)/\(name)"
            if access(candidate, X_OK) == 0, let file = Self.resolved(candidate), running == nil || file == running {
                return candidate
            }
        }
        if started.hasPrefix("/") { return started }
        if started.contains("/"), let running { return running }
        guard let running else {
            throw CLIError(
                "The file authkit runs from cannot be found for git to run it ('\(started)' is not on PATH).")
        }
        return running
    }

    /// The file this process runs: `/proc/self/exe` where there is one.
    private static func runningFile() -> String? {
        #if os(Linux)
            return resolved("/proc/self/exe")
        #else
            return nil
        #endif
    }

    private static func resolved(_ path: String) -> String? {
        guard let pointer = realpath(path, nil) else { return nil }
        defer { free(pointer) }
        return String(cString: pointer)
    }
}
