import Subprocess

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
// swift-subprocess's FilePath: the SDK's System on Apple platforms (where
// SystemPackage may be built too, for other packages, and is another type).
#if canImport(System)
    import System
#else
    import SystemPackage
#endif

/// Launches the user's browser the way other command-line tools do: what
/// ``LoopbackUserAgent/systemBrowser`` runs.
///
/// `$BROWSER`, when set, wins: the convention `xdg-open` and Python's
/// `webbrowser` follow. It is a list of commands separated by `:`, each tried
/// in turn; a command may carry arguments separated by spaces
/// (`firefox --new-window`) and may say where the URL goes with `%s`,
/// otherwise the URL is appended as the last argument. Without `$BROWSER`,
/// `xdg-open` on Linux and `open` on macOS.
///
/// The URL is passed as one argument to the program, never through a shell, so
/// nothing in it is interpreted. The program's standard output goes to standard
/// error, so a caller's standard output stays clean for `--json` and pipes.
///
/// The child is started with swift-subprocess, which spawns with an empty
/// signal mask and default signal dispositions (`POSIX_SPAWN_SETSIGMASK |
/// POSIX_SPAWN_SETSIGDEF`): Foundation's `Process` on Linux hands the child
/// the parent's blocked mask, so a `$BROWSER` wrapper that waits for its own
/// child hangs and ignores `kill`. Its environment is the caller's without any
/// `AUTHKIT_*` variable, which may hold client secrets, handed over in
/// swift-subprocess's typed form (``ChildEnvironment``).
package struct SystemBrowser: Sendable {
    /// A browser command that could not be started or that reported failure.
    package struct LaunchError: Error, Sendable, Hashable, CustomStringConvertible {
        package var command: String
        package var reason: String

        package init(command: String, reason: String) {
            self.command = command
            self.reason = reason
        }

        package var description: String { "Could not open a browser with '\(command)' (\(reason))." }
    }

    /// The environment `$BROWSER` is read from.
    package var environment: [String: String]
    /// How long to watch a launched command for a quick failure (a missing
    /// program, `xdg-open` finding no browser). A command still running after
    /// this is taken as a browser that opened.
    package var failureWindow: Duration

    package init(
        environment: [String: String] = ProcessInfo.processInfo.environment,
        failureWindow: Duration = .seconds(2)
    ) {
        self.environment = environment
        self.failureWindow = failureWindow
    }

    /// The candidate command lines for `url`, in the order they are tried.
    package func commands(for url: URL) -> [[String]] {
        let text = url.absoluteString
        if let browser = environment["BROWSER"]?.trimmingSpaces(), !browser.isEmpty {
            let commands = browser.split(separator: ":").compactMap { entry -> [String]? in
                let words = entry.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
                guard !words.isEmpty else { return nil }
                // `%s` anywhere in a word, as xdg-open and Python's webbrowser
                // read it (`chromium --app=%s`); no shell, so the URL stays one word.
                if words.contains(where: { $0.contains("%s") }) { return words.map { $0.replacing("%s", with: text) } }
                return words + [text]
            }
            if !commands.isEmpty { return commands }
        }
        #if os(macOS)
            return [["open", text]]
        #else
            return [["xdg-open", text]]
        #endif
    }

    /// Tries each of ``commands(for:)`` until one starts and does not fail
    /// within ``failureWindow``.
    /// - Throws: ``LaunchError`` for the last command tried, when none worked;
    ///   at once, starting nothing, for a URL that is not http or https
    ///   (`xdg-open` and `open` hand `file:` and other schemes to whatever
    ///   program claims them, and a sign-in only ever opens web pages).
    package func open(_ url: URL) async throws {
        guard let scheme = url.scheme?.lowercased(), scheme == "https" || scheme == "http" else {
            throw LaunchError(
                command: "(none)",
                reason: "only http and https pages are opened, and this is a '\(url.scheme ?? "")' URL.")
        }
        var lastError = LaunchError(command: "(none)", reason: "no command to try")
        for command in commands(for: url) {
            do {
                try await launch(command)
                return
            } catch let error as LaunchError {
                lastError = error
            }
        }
        throw lastError
    }

    /// The browser's environment: the caller's, less every `AUTHKIT_*`
    /// variable and every credential-like one (``ChildEnvironment/Child/browser``).
    var childEnvironment: [String: String] { ChildEnvironment.filtered(environment, for: .browser) }

    /// ``childEnvironment`` as swift-subprocess takes it (``ChildEnvironment/variables(_:for:)``).
    var childEnvironmentVariables: [Environment.Key: String] {
        ChildEnvironment.variables(environment, for: .browser)
    }

    /// Starts `command` (its first word searched in `PATH`) and watches it for
    /// ``failureWindow``: exit status 0 or still running is success; a
    /// non-zero exit (127: no such program) is failure. A browser that keeps
    /// running is left running; a task keeps waiting for it to exit.
    private func launch(_ command: [String]) async throws {
        let name = command[0]
        let exit = ProcessExitWatcher()
        let environment = Environment.custom(childEnvironmentVariables)
        let arguments = Arguments(Array(command.dropFirst()))
        // A session of its own, as Python's webbrowser starts one: in
        // authkit's process group, the browser got the terminal's Ctrl-C
        // (which cancels the sign-in), Ctrl-Z and hang-up too, and a browser
        // started by `$BROWSER` (or xdg-open's generic mode) was killed with
        // every tab of the user's.
        var options = PlatformOptions()
        options.createSession = true
        Task.detached {
            do {
                // A name is searched in the browser's PATH; a path is run as given.
                let executable: Executable = name.contains("/") ? .path(FilePath(name)) : .name(name)
                // swift-subprocess asks posix_spawn for an empty signal mask and
                // default dispositions (a Foundation Process child would inherit
                // a blocked mask on Linux).
                let result = try await Subprocess.run(
                    executable, arguments: arguments, environment: environment, platformOptions: options,
                    input: .none, output: .currentStandardError, error: .currentStandardError)
                switch result.terminationStatus {
                case .exited(let code): exit.finish(Int32(code))
                case .signaled(let signal): exit.finish(128 + Int32(signal))
                }
            } catch {
                exit.finish(127) // not found, or could not be started
            }
        }
        if let status = await exit.status(within: failureWindow), status != 0 {
            let reason = status == 127 ? "no such program on PATH" : "it exited with status \(status)"
            throw LaunchError(command: name, reason: reason)
        }
    }
}
