import ArgumentParser
import AuthKit
import AuthKitLoopback
import AuthKitSandbox

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// `authkit`: sign in to OAuth providers from a terminal, keep the credentials,
/// and use them.
///
/// Every command names itself (`commandName:`): without one, argument-parser
/// derives the name with `String(describing:)` of the type, whose dynamic
/// casts scan every protocol conformance in the binary, on every start.
struct AuthKitCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "authkit",
        abstract: "Sign in to OAuth 2.0 and OAuth 1.0a providers from the terminal, and use the credentials.",
        discussion: """
            Examples:
              authkit authorize --provider qiita
              authkit token list
              authkit request --provider qiita https://qiita.com/api/v2/authenticated_user

            Client ids and secrets come from --client-id/--client-secret, from
            AUTHKIT_<ID>_CLIENT_ID / AUTHKIT_<ID>_CLIENT_SECRET, or from
            $AUTHKIT_HOME/config.json ($AUTHKIT_HOME defaults to
            $XDG_CONFIG_HOME/authkit, else ~/.config/authkit).
            """,
        version: AuthKitVersion.current,
        subcommands: [
            Authorize.self, TokenCommand.self, Request.self, Sign.self, ProvidersCommand.self, SandboxCommand.self,
        ])
}

/// Waits, before the process exits, for a refresh ahead of time that the
/// command stopped waiting for and went on with the token that still works
/// (``CredentialSource/current(at:)``): exiting lost the provider's answer,
/// a rotated refresh token among it (RFC 9700 §4.14.2), and the next
/// refresh asked the user to sign in again. Each ends by its own deadlines:
/// with a token endpoint that hangs, the command takes up to its token
/// requests' 30 s to exit, after its output. Standard output is closed
/// first (pointed at /dev/null), so that a reader that waits for its end
/// (`$(authkit token header)`, git's credential helper) has the output
/// without that wait. A renewal the store could not save is thrown (the
/// store error's exit status), or it would be exit 0 with the grant spent.
private func finishRefreshesUnderWay() async throws {
    try await CredentialSource.finishRefreshesUnderWay(of: nil) { keys in
        Console.flushStandardStreams()
        let null = open("/dev/null", O_WRONLY | O_CLOEXEC)
        if null >= 0 {
            dup2(null, STDOUT_FILENO)
            close(null)
        }
        let names = keys.map { "\($0)" }.joined(separator: ", ")
        Console.err("Waiting for the refresh of \(names) to end, so that what the provider answers is saved.")
    }
}

/// Runs the command and turns every error into one line on standard error and
/// a distinct exit code (see ``ExitStatus``).
@main
enum AuthKitMain {
    static func main() async {
        // A parent may hand authkit a blocked signal mask (Foundation's Process
        // on Linux blocks every signal in its children), and every process
        // authkit starts would inherit it: a $BROWSER wrapper that waits for its
        // child would then ignore `kill`. Cleared here, before any thread
        // exists, so that every thread inherits the empty mask.
        var none = sigset_t()
        sigemptyset(&none)
        sigprocmask(SIG_SETMASK, &none, nil)
        // A reader that leaves (`2>&1 | head`) ends the output, not the
        // command: with SIGPIPE's default, the first message written to a
        // closed standard error killed authkit, also between a refresh's
        // answer and its save, which loses a rotated grant. Writes then fail
        // with EPIPE, which ``Console/write(_:to:)`` takes as the reader gone.
        // (swift-subprocess resets every signal for the programs it starts.)
        signal(SIGPIPE, SIG_IGN)
        Console.reopenClosedStandardDescriptors()
        do {
            var command: ParsableCommand
            do {
                // `authkit sandbox` alone shows its help, as `authkit token` does:
                // its default command (serve) needs a provider to emulate.
                if Array(CommandLine.arguments.dropFirst()) == ["sandbox"] {
                    // Through the root, so that its usage names `authkit sandbox` (alone it said `sandbox`).
                    Console.out(AuthKitCommand.helpMessage(for: SandboxCommand.self, columns: Console.outputColumns))
                    ExitStatus.success.terminate()
                }
                command = try AuthKitCommand.parseAsRoot()
            } catch {
                // Only a command line that does not parse pays for the walk
                // over the command tree (a few milliseconds of every start).
                let arguments = Array(CommandLine.arguments.dropFirst())
                if let suggestion = suggestion(for: arguments) {
                    fail(suggestion, status: .usage)
                }
                throw misspeltInsteadOfMissing(error, arguments: arguments) ?? error
            }
            do {
                if var asyncCommand = command as? AsyncParsableCommand {
                    try await asyncCommand.run()
                } else {
                    try command.run()
                }
            } catch {
                // The command's own error is the one that ends it; a renewal
                // not saved meanwhile is said before it.
                do {
                    try await finishRefreshesUnderWay()
                } catch let unsaved as AuthKitError {
                    Console.err("authkit: error: \(ErrorReport.message(for: unsaved))")
                } catch let unsaved {
                    Console.err("authkit: error: \(unsaved)")
                }
                throw error
            }
            try await finishRefreshesUnderWay()
            // The runtime calls exit() when main returns: not while libcurl loads.
            settleDefaultHTTPClient()
            if let reason = Console.outputFailureReason {
                fail(
                    "standard output could not be written (\(reason)); what this command printed there is incomplete.",
                    status: .outputFailed)
            }
        } catch let error as AuthKitError {
            if case .sandbox(let problem) = error.reason {
                // What went wrong, with the flag that chooses the port here.
                fail(
                    problem.summary + " Choose another with --port, or --port 0 for any free one.",
                    status: ExitStatus(for: error))
            }
            fail(ErrorReport.message(for: error), status: ExitStatus(for: error))
        } catch let error as CLIError {
            fail(error.message, status: error.status)
        } catch {
            // Help, version, usage errors and ExitCode: argument-parser's own
            // handling, except that a usage error, which quotes what was
            // typed ("Unknown option '--x<ESC>[2J'"), is printed with its
            // control characters written out, as every message here is.
            settleDefaultHTTPClient()
            let code = AuthKitCommand.exitCode(for: error)
            guard code != .success else { printRequested(error) }
            var message = AuthKitCommand.fullMessage(for: error)
            // argument-parser suggests among a command's own options, which
            // --help is not: `--hlep` got no "Did you mean".
            if let typed = message.firstMatch(of: /^Error: Unknown option '--([a-z]+)'/)?.1,
                // Near, and its first letter (`--keep` is two edits from it too).
                ProviderCatalog.editDistance(String(typed), "help") <= (typed.hasPrefix("h") ? 2 : 1),
                !message.contains("Did you mean")
            {
                message = message.replacing(
                    "Unknown option '--\(typed)'", with: "Unknown option '--\(typed)'. Did you mean '--help'?")
            }
            // `authkit -v token list`: the options every command takes go after
            // the command's name, which argument-parser does not say.
            if let hint = misplacedCommonOption(message, arguments: Array(CommandLine.arguments.dropFirst())) {
                message = hint
            }
            if let hint = providerGivenWithoutFlag(message, arguments: Array(CommandLine.arguments.dropFirst())) {
                message = hint
            }
            message = withoutUnexpectedValues(message)
            // `authkit request -k …`: curl's other options are curl's; the header is AuthKit's.
            // (Not when argument-parser already suggested the option meant: `--provder`.)
            if CommandLine.arguments.dropFirst().first == "request", message.hasPrefix("Error: Unknown option '-"),
                !message.contains("Did you mean")
            {
                let first = message.split(separator: "\n", maxSplits: 1).first.map(String.init) ?? message
                message = message.replacing(
                    first,
                    with: first
                        + ". authkit request takes curl's -X, -d, -H, -L, -i, -o, -f and -s; for any other, run curl with AuthKit's header: curl -H \"$(authkit token header --provider ID URL)\" … URL"
                )
            }
            // One prefix for every error, argument-parser's too.
            if message.hasPrefix("Error: ") { message = "authkit: error: " + message.dropFirst("Error: ".count) }
            if !message.isEmpty { Console.err(message) }
            Console.flushStandardStreams()
            _exit(code.rawValue)
        }
    }

    /// What `--help`, `--version` or `--generate-completion-script` asked
    /// for, on standard output, then exit 0, as argument-parser prints it;
    /// except that output that could not be written exits 74, as every
    /// other command's does (`--help > /dev/full` succeeded), and `help`
    /// followed by a name no command has is the usage error it is
    /// (`authkit help nosuch` printed the overview and succeeded).
    static func printRequested(_ request: Error) -> Never {
        let arguments = Array(CommandLine.arguments.dropFirst())
        if arguments.first == "help", let suggestion = suggestion(for: Array(arguments.dropFirst())) {
            fail(suggestion, status: .usage)
        }
        // `authkit config --help` printed the overview, and `token lst --help`
        // token's help, both exiting 0: a misspelt command is the same usage
        // error with --help as without.
        if arguments.contains(where: { $0 == "--help" || $0 == "-h" }),
            let suggestion = suggestion(for: arguments.filter { $0 != "--help" && $0 != "-h" })
        {
            fail(suggestion, status: .usage)
        }
        Console.out(AuthKitCommand.fullMessage(for: request))
        if let reason = Console.outputFailureReason {
            fail(
                "standard output could not be written (\(reason)); what this command printed there is incomplete.",
                status: .outputFailed)
        }
        ExitStatus.success.terminate()
    }

    /// "unknown command 'tokn'; did you mean 'token'?" for a word where a
    /// subcommand belongs that names none (argument-parser only says
    /// "Unexpected argument").
    static func suggestion(for arguments: [String]) -> String? {
        var command: ParsableCommand.Type = AuthKitCommand.self
        var path = ["authkit"]
        for word in arguments {
            let subcommands = command.configuration.subcommands
            guard !subcommands.isEmpty, !word.hasPrefix("-") else { return nil }
            let names = subcommands.map { $0._commandName }
            if let next = subcommands.first(where: { $0._commandName == word }) {
                command = next
                path.append(word)
                continue
            }
            if word == "help" { return nil }
            let near = names.map { ($0, ProviderCatalog.editDistance(word.lowercased(), $0)) }.filter { $0.1 <= 2 }.min
            { $0.1 < $1.1 }?.0
            let hint = near.map { " Did you mean '\(path.joined(separator: " ")) \($0)'?" } ?? ""
            // Repeated only when it reads as a command (a near miss, or a
            // short word of lowercase letters): a word where a command goes
            // is as often a token pasted in its place (a GitHub token is 40
            // characters, the limit words were shown to).
            let commandLike =
                near != nil
                || (word.utf8.count <= 20
                    && word.utf8.allSatisfy {
                        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) || $0 == UInt8(ascii: "-")
                    })
            let named =
                commandLike
                ? " '\(DisplayText.sanitized(word, limit: 40))'" : " (not repeated here: it may be a secret)"
            return
                "unknown command\(named).\(hint) '\(path.joined(separator: " ")) --help' lists the commands: \(names.joined(separator: ", "))."
        }
        return nil
    }

    /// argument-parser reports a missing required option before an unknown
    /// one, so `authorize --provder github` said only "Missing expected
    /// argument '--provider <id>'", and the typo went unmentioned. When
    /// `error` is that, the command line is parsed once more with a stand-in
    /// for the missing option; an unknown option found then ("Did you mean
    /// '--provider'?") is the error to report.
    static func misspeltInsteadOfMissing(_ error: Error, arguments: [String]) -> Error? {
        let message = AuthKitCommand.message(for: error)
        guard message.hasPrefix("Missing expected argument '--"),
            let name = message.dropFirst("Missing expected argument '".count).split(separator: " ").first,
            name.hasPrefix("--"), arguments.contains(where: { $0.hasPrefix("-") && !$0.hasPrefix(name) })
        else { return nil }
        // A stand-in the option's own check accepts, or that check fails first.
        for standIn in ["stand-in", "https://stand-in.example"] {
            do {
                _ = try AuthKitCommand.parseAsRoot(arguments + [String(name), standIn])
                return nil
            } catch let second where AuthKitCommand.message(for: second).hasPrefix("Unknown option") {
                return second
            } catch {
                continue
            }
        }
        return nil
    }

    /// `message` with where the option belongs, when it is one every command
    /// takes given before the command's name (`authkit -v token list`).
    static func misplacedCommonOption(_ message: String, arguments: [String]) -> String? {
        guard let first = arguments.first, message.hasPrefix("Error: Unknown option '\(first)'") else { return nil }
        let common = ["-v", "--verbose", "--sandbox", "--providers-dir"]
        guard common.contains(where: { first == $0 || first.hasPrefix($0 + "=") }) else { return nil }
        var names = [String]()
        for subcommand in AuthKitCommand.configuration.subcommands { names.append(subcommand._commandName) }
        // `sandbox serve` and `sandbox try` take no --sandbox: no place to move it to.
        guard let command = arguments.first(where: { names.contains($0) }),
            !(command == "sandbox" && first.hasPrefix("--sandbox"))
        else { return nil }
        return message.replacing(
            "Unknown option '\(first)'",
            with: "Unknown option '\(first)'. It belongs after the command: authkit \(command) … \(first)")
    }

    /// `authkit authorize github`: the provider typed as a word, where
    /// `--provider` was missing. The message then names the flag.
    static func providerGivenWithoutFlag(_ message: String, arguments: [String]) -> String? {
        guard message.hasPrefix("Error: Missing expected argument '--provider <id>'") else { return nil }
        var names = Set<String>()
        for subcommand in AuthKitCommand.configuration.subcommands {
            names.insert(subcommand._commandName)
            for nested in subcommand.configuration.subcommands { names.insert(nested._commandName) }
        }
        let known = Set(ProviderCatalog.standard().ids)
        for (index, word) in arguments.enumerated() where !word.hasPrefix("-") && !names.contains(word) {
            // Not the value of an option before it (`--label work`).
            if index > 0, arguments[index - 1].hasPrefix("-"), !arguments[index - 1].contains("=") { continue }
            guard known.contains(word) else { continue }
            // The command's words, not the rest of the line: that may hold a
            // secret (`--client-secret S`, `-H 'X-Api-Key: K'`) that an
            // error must not repeat into a terminal's scrollback or a CI log.
            let command = arguments.prefix { names.contains($0) }.joined(separator: " ")
            let others = arguments.count > command.split(separator: " ").count + 1 ? " and your other options" : ""
            return message.replacing(
                "Missing expected argument '--provider <id>'",
                with:
                    "Missing expected argument '--provider <id>'. Did you mean: authkit \(command) --provider \(word)\(others)"
            )
        }
        return nil
    }

    /// argument-parser's "Unexpected argument 'X'" without X: a word where
    /// no command takes one is as often a secret pasted in its place
    /// (`authkit token import --provider github gho_…`, whose token comes on
    /// standard input) as a typo, and a terminal's scrollback or a CI log
    /// must not get it. The usage line that follows says what is taken.
    static func withoutUnexpectedValues(_ message: String) -> String {
        var message = message
        if let match = message.firstMatch(
            of: /(?s)^Error: (?:Unexpected argument '.*?'|(\d+) unexpected arguments: .*?)(?=\nUsage:|\z)/)
        {
            let count = match.1.flatMap { Int($0) } ?? 1
            let said =
                count == 1
                ? "Error: Unexpected argument (not repeated here: it may be a secret)"
                : "Error: \(count) unexpected arguments (not repeated here: one may be a secret)"
            message.replaceSubrange(match.range, with: said + "; values go after the option they belong to")
        }
        return message
    }

    static func fail(_ message: String, status: ExitStatus) -> Never {
        Console.err("authkit: error: \(message)")
        status.terminate()
    }
}
