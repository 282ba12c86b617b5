import ArgumentParser
import AuthKit
import AuthKitLoopback
import Foundation

/// `authkit`: sign in to OAuth providers from a terminal, keep the credentials,
/// and use them.
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
        $AUTHKIT_HOME/config.json ($AUTHKIT_HOME defaults to ~/.config/authkit).
        """,
        subcommands: [Authorize.self, TokenCommand.self, Request.self, Sign.self, ProvidersCommand.self])
}

/// Runs the command and turns every error into one line on standard error and
/// a distinct exit code (see ``ExitStatus``).
@main
enum AuthKitMain {
    static func main() async {
        do {
            var command = try AuthKitCommand.parseAsRoot()
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch let error as AuthKitError {
            fail(ErrorReport.message(for: error), status: ExitStatus(for: error))
        } catch let error as LoopbackError {
            fail(error.description, status: ExitStatus(for: error))
        } catch let error as CLIError {
            fail(error.message, status: error.status)
        } catch {
            // Help, version, usage errors and ExitCode: argument-parser's own handling.
            AuthKitCommand.exit(withError: error)
        }
    }

    static func fail(_ message: String, status: ExitStatus) -> Never {
        Console.err("authkit: error: \(message)")
        exit(status.rawValue)
    }
}
