import AuthKit
import AuthKitTestSupport
import Foundation
import Testing

/// What `authkit` does when its standard output cannot take what it prints:
/// a full disk or a closed descriptor is a failure (exit 74), never a silent
/// success; a reader that stops early (`| head`) is not; and a closed
/// standard output never becomes a file authkit opens.
@Suite(.serialized) struct CLIStandardOutputTests {
    /// `authkit ARGUMENTS` run by bash with `redirection` after it.
    func run(_ arguments: [String], _ redirection: String, environment: [String: String]) async throws -> CLIResult {
        try await CLIProcess.run(
            arguments, environment: environment,
            launcher: ["/bin/bash", "-c", #""$0" "$@" "# + redirection])
    }

    @Test func aFullDiskOrAClosedOutputIsAFailure() async throws {
        let home = try CLIProcess.home("authkit-stdout")
        defer { try? FileManager.default.removeItem(at: home) }
        let environment = ["AUTHKIT_HOME": home.path]
        let full = try await run(["providers", "list"], "> /dev/full", environment: environment)
        #expect(
            full.status == 74 && full.stderr.contains("standard output could not be written (No space left on device)"),
            "\(full.status): \(full.stderr)")
        let closed = try await run(["providers", "list"], ">&-", environment: environment)
        #expect(
            closed.status == 74 && closed.stderr.contains("standard output could not be written (Bad file descriptor)"),
            "\(closed.status): \(closed.stderr)")
        // Nothing printed to standard output, nothing lost: the command's own status.
        let quiet = try await run(["token", "delete", "--provider", "github"], ">&-", environment: environment)
        #expect(quiet.status == 64 && !quiet.stderr.contains("standard output"), "\(quiet.status): \(quiet.stderr)")
        // A reader that takes one byte and leaves is not an error of authkit's.
        let head = try await CLIProcess.run(
            ["providers", "list"], environment: environment,
            launcher: [
                "/bin/bash", "-c", #""$0" "$@" | head -c 1 > /dev/null; exit ${PIPESTATUS[0]}"#,
            ])
        #expect(head.status != 74 && !head.stderr.contains("standard output"), "\(head.status): \(head.stderr)")
    }

    /// A standard error whose reader has gone (`2>&1 | head`) ends the
    /// messages, not the command: the first warning written there killed
    /// authkit with SIGPIPE (exit 141), also between a refresh's answer and
    /// its save, which loses a rotated grant. Here `token list` warns about
    /// the file's mode on a dead pipe, then lists (as JSON) on standard output.
    @Test func aStandardErrorWhoseReaderLeftDoesNotEndTheCommand() async throws {
        let home = try CLIProcess.home("authkit-stderr")
        defer { try? FileManager.default.removeItem(at: home) }
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        chmod(home.path, 0o700)
        let file = home.appendingPathComponent("credentials.json")
        try Data(#"{"version": 1, "credentials": []}"#.utf8).write(to: file)
        chmod(file.path, 0o644)
        // (Python ignores SIGPIPE, and an ignored signal stays so across exec: reset first.)
        let deadPipe =
            "import os, signal, sys; signal.signal(signal.SIGPIPE, signal.SIG_DFL); r, w = os.pipe(); os.close(r); os.dup2(w, 2); os.execvp(sys.argv[1], sys.argv[1:])"
        let result = try await CLIProcess.run(
            ["token", "list", "--json"], environment: ["AUTHKIT_HOME": home.path],
            launcher: ["/usr/bin/python3", "-c", deadPipe])
        #expect(
            result.status == 0 && result.stdout == "[]\n",
            "exit \(result.status), signal \(String(describing: result.signal)): \(result.stdout)")
    }

    /// Help, the version and the completion scripts are output like any
    /// other: written to a full disk, they exit 74 (they exited 0); `help`
    /// with a name no command has is a usage error (it printed the overview
    /// and exited 0), and `help` with a command's name still helps.
    @Test func helpAndVersionAreOutputToo() async throws {
        let environment = ["AUTHKIT_HOME": "/nonexistent/authkit"]
        for arguments in [
            ["--help"], ["--version"], ["token", "list", "--help"], ["help", "request"],
            ["--generate-completion-script", "bash"],
        ] {
            let full = try await run(arguments, "> /dev/full", environment: environment)
            #expect(
                full.status == 74 && full.stderr.contains("No space left on device"),
                "\(arguments): \(full.status) \(full.stderr)")
            let fine = try await CLIProcess.run(arguments, environment: environment)
            #expect(
                fine.status == 0 && !fine.stdout.isEmpty && fine.stderr.isEmpty,
                "\(arguments): \(fine.status) \(fine.stderr)")
        }
        let unknown = try await CLIProcess.run(["help", "nosuch"], environment: environment)
        #expect(
            unknown.status == 64 && unknown.stdout.isEmpty && unknown.stderr.contains("unknown command 'nosuch'"),
            "\(unknown.stderr)")
        // A token pasted where a command goes is not repeated.
        let token = "gho_16C7e42F292c6912E7710c838347Ae178B4a"
        for arguments in [["token", token], [token], ["help", token]] {
            let pasted = try await CLIProcess.run(arguments, environment: environment)
            #expect(
                pasted.status == 64 && !pasted.stderr.contains("16C7e42F") && pasted.stderr.contains("not repeated"),
                "\(arguments): \(pasted.stderr)")
        }
        // A path's query (an API key as often as not) is not repeated in the error about the path.
        let path = try await CLIProcess.run(
            ["request", "--provider", "google", "/drive/v3/files?key=AIzaSyD-SECRETKEY123"], environment: environment)
        #expect(
            path.status == 64 && !path.stderr.contains("SECRETKEY") && path.stderr.contains("/drive/v3/files?…"),
            "\(path.stderr)")
        // --sandbox is the URL the sandbox prints: a fragment or user info made
        // every endpoint another page (its index, answered 200).
        for url in ["http://127.0.0.1:9#x", "http://u:p@127.0.0.1:9", "http://u@127.0.0.1:9/"] {
            let sandbox = try await CLIProcess.run(["token", "list", "--sandbox", url], environment: environment)
            #expect(sandbox.status == 64 && sandbox.stderr.contains("--sandbox"), "\(url): \(sandbox.stderr)")
        }
        let misspelt = try await CLIProcess.run(["help", "token", "lst"], environment: environment)
        #expect(
            misspelt.status == 64 && misspelt.stderr.contains("Did you mean 'authkit token list'?"),
            "\(misspelt.stderr)")
        // With --help, a misspelt command is as much a usage error (it printed the parent's help, exit 0).
        for arguments in [["config", "--help"], ["token", "lst", "--help"], ["-h", "tokn"]] {
            let help = try await CLIProcess.run(arguments, environment: environment)
            #expect(
                help.status == 64 && help.stdout.isEmpty && help.stderr.contains("unknown command"),
                "\(arguments): \(help.status) \(help.stderr)")
        }
        let nested = try await CLIProcess.run(["help", "token", "list"], environment: environment)
        #expect(nested.status == 0 && nested.stdout.hasPrefix("OVERVIEW: List stored credentials"), "\(nested.stdout)")
    }

    /// With standard output closed, the next file, socket or event
    /// descriptor opened takes its number, and what is printed goes there
    /// (before, `providers list >&-` failed on an event descriptor with
    /// "Invalid argument" and exited 0). Now /dev/null holds the number, the
    /// sign-in is stored whole, and the lost "Signed in" line makes the exit
    /// status 74.
    @Test func aSignInWithItsOutputClosedIsStoredAndReported() async throws {
        let home = try CLIProcess.home("authkit-stdout-signin")
        defer { try? FileManager.default.removeItem(at: home) }
        let port = try UnusedPort.next()
        let result = try await run(
            ["sandbox", "try", "--provider", "qiita", "--deterministic", "--port", String(port)], ">&-",
            environment: ["AUTHKIT_HOME": home.path])
        #expect(result.status == 74, "\(result.status): \(result.stderr)")
        let stored = try await FileCredentialStore(file: home.appendingPathComponent("sandbox/credentials.json"))
            .allCredentials()
        #expect(stored.map(\.providerID) == ["qiita"])
    }
}
