import AuthKitTestSupport
import Foundation
import Subprocess
import Testing

#if canImport(System)
    import System
#else
    import SystemPackage
#endif

/// The wait screen in a real 80×24 terminal (tmux): the status line fits and
/// is redrawn in place, so the sign-in URL stays on the screen.
@Suite(.serialized) struct CLIWaitScreenTests {
    static let tmuxPath = ["/usr/bin/tmux", "/usr/local/bin/tmux"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }

    /// Runs tmux through swift-subprocess: a tmux server started by
    /// `Foundation.Process` on Linux inherits a blocked signal mask and never
    /// notices its session's command start or end.
    @discardableResult
    func tmux(_ arguments: [String]) async throws -> String {
        let result = try await Subprocess.run(
            .path(FilePath(Self.tmuxPath ?? "/usr/bin/tmux")), arguments: Arguments(arguments),
            input: .none, output: .string(limit: 1 << 20), error: .string(limit: 1 << 16))
        // tmux's own complaints (no server, no such session) belong in a failure message.
        return result.standardOutput + result.standardError
    }

    /// The pane of `session` once it shows `text`, or as it is after 40 s
    /// (counted in 100 ms polls: the whole suite may be running). With
    /// `history`, its last 100 lines of scrollback too.
    func screen(of session: String, showing text: String, history: Bool = false) async throws -> String {
        var screen = ""
        for _ in 0..<400 where !screen.contains(text) {
            try await Task.sleep(for: .milliseconds(100))
            screen = try await tmux(["capture-pane", "-p"] + (history ? ["-S", "-100"] : []) + ["-t", session])
        }
        return screen
    }

    @Test(.enabled(if: tmuxPath != nil, "tmux is not installed (.ci/run installs it)"))
    func theURLStaysVisibleAt80Columns() async throws {
        let home = TemporaryDirectory.url("authkit-wait")
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: home) }
        let session = "authkit-wait-\(UUID().uuidString.prefix(8))"
        let command =
            "env AUTHKIT_HOME='\(home.path)' AUTHKIT_GITHUB_CLIENT_ID=wait-test AUTHKIT_GITHUB_CLIENT_SECRET=wait-secret '\(CLIProcess.binary.path)' authorize --provider github --no-browser --timeout 300"
        // Should the program end early, the pane stays with its last words and
        // its status, for the failure message.
        let kept = "\(command); echo \"[authkit exited with status $?]\"; sleep 120"
        let started = try await tmux(["new-session", "-d", "-s", session, "-x", "80", "-y", "24", kept])
        #expect(started.isEmpty, "tmux: \(started)")
        // The wait screen first, then 35 redraws of the spinner, which must
        // not leave stale lines. In a full test run this process's own tasks
        // can be held up for many seconds (CI once resumed this test only
        // after a 30 s --timeout had ended the sign-in, leaving no status line
        // to see): the program waits 300 s, and this loop goes by the clock.
        let deadline = ContinuousClock.now.advanced(by: .seconds(120))
        while ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(250))
            if try await tmux(["capture-pane", "-p", "-t", session]).contains("Waiting for you") { break }
        }
        try await Task.sleep(for: .milliseconds(3500))
        let screen = try await tmux(["capture-pane", "-p", "-J", "-t", session]) // -J joins lines the terminal wrapped
        let raw = try await tmux(["capture-pane", "-p", "-t", session])
        try await tmux(["kill-session", "-t", session])

        let lines = screen.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(
            lines.contains {
                $0.trimmingCharacters(in: .whitespaces).hasPrefix("https://github.com/login/oauth/authorize?")
            },
            "the sign-in URL is not on the screen:\n\(screen)")
        #expect(lines.filter { $0.contains("Waiting for you to approve") }.count == 1, "stale status lines:\n\(screen)")
        #expect(
            lines.filter { $0.contains("Could not open a browser") || $0.contains("no browser launcher") }.isEmpty,
            "--no-browser printed a launch failure:\n\(screen)")
        let statusRow = raw.split(separator: "\n").first { $0.contains("Waiting for you") }
        #expect(statusRow.map { $0.count <= 80 } == true, "the status line wrapped:\n\(raw)")
    }

    /// Prose is broken at word boundaries at 80 columns: the terminal folds
    /// only what cannot be broken (a URL, a JSON body). Before, `sandbox try`
    /// showed "n|othing leaves" and "accou|nt alice".
    @Test(.enabled(if: tmuxPath != nil, "tmux is not installed (.ci/run installs it)"))
    func proseIsWrappedAtWordsAt80Columns() async throws {
        let home = TemporaryDirectory.url("authkit-wrap")
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: home) }
        let session = "authkit-wrap-\(UUID().uuidString.prefix(8))"
        let command =
            "env -u DISPLAY -u BROWSER AUTHKIT_HOME='\(home.path)' '\(CLIProcess.binary.path)' sandbox try --provider qiita"
        let kept = "\(command); echo \"[authkit exited with status $?]\"; sleep 120"
        let started = try await tmux(["new-session", "-d", "-s", session, "-x", "80", "-y", "60", kept])
        #expect(started.isEmpty, "tmux: \(started)")
        let deadline = ContinuousClock.now.advanced(by: .seconds(120))
        var joined = ""
        while ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(250))
            joined = try await tmux(["capture-pane", "-p", "-J", "-t", session])
            if joined.contains("[authkit exited") { break }
        }
        let raw = try await tmux(["capture-pane", "-p", "-t", session])
        try await tmux(["kill-session", "-t", session])
        #expect(joined.contains("[authkit exited with status 0]"), "\(joined)")
        let rawLines = raw.split(separator: "\n").map(String.init)
        for phrase in ["nothing leaves this machine", "(your own", "account alice"] {
            #expect(rawLines.contains { $0.contains(phrase) }, "'\(phrase)' is split:\n\(raw)")
        }
        // A line the terminal folded (joined back by -J) is one it had to: a
        // URL or a body with no space to break at.
        for line in joined.split(separator: "\n").map(String.init) where line.count > 80 {
            #expect(line.contains("http://") || line.contains("{\""), "folded mid-word:\n\(line)")
        }
        // Continuations are indented under their text.
        #expect(rawLines.contains { $0.hasPrefix("   listener waits at") }, "\(raw)")
    }

    /// Lines printed while the status line is drawn (`sandbox try`'s events
    /// come as the scripted browser works) start at the left edge: before,
    /// they were written after the spinner, on the status line's row.
    @Test(.enabled(if: tmuxPath != nil, "tmux is not installed (.ci/run installs it)"))
    func linesPrintedDuringTheWaitDoNotJoinTheStatusLine() async throws {
        let home = TemporaryDirectory.url("authkit-wait-try")
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: home) }
        let session = "authkit-try-\(UUID().uuidString.prefix(8))"
        // The trailing sleep keeps the pane (and its history) to capture.
        let command =
            "env AUTHKIT_HOME='\(home.path)' '\(CLIProcess.binary.path)' sandbox try --provider google --deterministic; echo EXIT=$?; sleep 30"
        try await tmux(["new-session", "-d", "-s", session, "-x", "80", "-y", "24", command])
        var screen = ""
        for _ in 0..<400 where !screen.contains("EXIT=") { // up to 40 s: the whole suite may be running
            try await Task.sleep(for: .milliseconds(100))
            screen = try await tmux(["capture-pane", "-p", "-J", "-S", "-200", "-t", session])
        }
        try await tmux(["kill-session", "-t", session])

        #expect(screen.contains("EXIT=0"), "\(screen)")
        let lines = screen.split(separator: "\n").map(String.init)
        let events = lines.filter { $0.contains("sandbox: ") }
        #expect(events.count >= 3, "\(screen)")
        #expect(events.allSatisfy { $0.hasPrefix("   sandbox: ") }, "an event joined another line:\n\(screen)")
        #expect(!lines.contains { $0.contains("Waiting for") && $0.contains("sandbox:") }, "\(screen)")
    }

    /// With `TERM=dumb` (an Emacs shell buffer), which shows escape
    /// sequences as text, the wait is said once, without the spinner's
    /// redraws (`\r`, erase-line), as in a pipe.
    @Test(.scriptGivesATerminal)
    func aDumbTerminalGetsNoEscapes() async throws {
        let home = TemporaryDirectory.url("authkit-wait-dumb")
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: home) }
        let command =
            "env TERM=dumb AUTHKIT_HOME='\(home.path)' AUTHKIT_GITHUB_CLIENT_ID=wait-test AUTHKIT_GITHUB_CLIENT_SECRET=wait-secret '\(CLIProcess.binary.path)' authorize --provider github --no-browser --timeout 2"
        let terminal = try await CLIProcess.run(
            ["-qec", command, "/dev/null"], environment: [:], launcher: ["/usr/bin/script"], bareLauncher: true)
        #expect(terminal.status == 5, "\(terminal.stdout)")
        #expect(
            terminal.stdout.components(separatedBy: "Waiting for you to approve").count - 1 == 1, "\(terminal.stdout)")
        #expect(
            !terminal.stdout.contains("\u{1B}[K") && !terminal.stdout.contains("⠋"),
            "\(terminal.stdout.debugDescription)")
    }

    /// The bytes `pid` has read so far, from any file (`rchar` in
    /// /proc/PID/io), or nil where the kernel does not say.
    static func bytesRead(by pid: Int32) -> Int? {
        KernelFile.contents(of: "/proc/\(pid)/io")?.split(separator: "\n")
            .first { $0.hasPrefix("rchar: ") }
            .flatMap { Int($0.dropFirst("rchar: ".count)) }
    }

    /// `token import` at a terminal reads the token with echo off, as a
    /// password prompt does: it is neither on the screen nor in the
    /// scrollback; echo is back afterwards, and after a Ctrl-C at the prompt.
    /// A token longer than the terminal's line (4,095 bytes in Linux's
    /// canonical mode) is read whole, and Backspace erases: the kernel's
    /// line editing cut a long paste short, and the prefix was stored.
    @Test(.enabled(if: tmuxPath != nil, "tmux is not installed (.ci/run installs it)"))
    func aPastedTokenIsNotEchoed() async throws {
        let home = try CLIProcess.home("authkit-import-echo")
        defer { try? FileManager.default.removeItem(at: home) }
        let pasted = "tok-pasted-" + String(repeating: "0123456789", count: 500)
        for interrupted in [false, true] {
            let session = "authkit-echo-\(UUID().uuidString.prefix(8))"
            // The inner shell says its PID and becomes authkit (exec). The
            // pane is kept long after (the session is killed below): its two
            // waits of up to 40 s each outlasted a 60 s one on a loaded run,
            // and the pane was gone ("no server running") with what it said.
            let command =
                "sh -c \"echo [pid \\$\\$]; exec env AUTHKIT_HOME='\(home.path)' '\(CLIProcess.binary.path)' token import --provider github\"; echo \"[status $?]\"; stty -a | tr ' ' '\\n' | grep -x -- '-\\?echo'; sleep 300"
            try await tmux(["new-session", "-d", "-s", session, "-x", "80", "-y", "24", command])
            var screen = try await self.screen(of: session, showing: "Paste the token")
            if interrupted {
                // SIGINT to authkit alone, as Ctrl-C would send it (tmux's C-c
                // would end the shell that runs the checks too).
                let pid = try #require(
                    screen.split(separator: "\n").lazy.compactMap { line -> Int32? in
                        guard line.hasPrefix("[pid ") else { return nil }
                        return Int32(line.dropFirst(5).prefix { $0.isNumber })
                    }.first, "\(screen)")
                let typed = "tok-half-typed"
                let before = Self.bytesRead(by: pid)
                try await tmux(["send-keys", "-t", session, typed])
                // The terminal must take the keys in while echo is off: taken
                // in only after the SIGINT (a loaded machine's tty work queue
                // ran late), they were echoed by the terminal authkit had
                // already given back. authkit reads a byte at a time and reads
                // nothing else at the prompt: once what it has read (rchar)
                // grew by the keys, the terminal took them in. A fixed 1 s was
                // a guess; it stays where /proc does not say.
                if let before {
                    let deadline = ContinuousClock.now.advanced(by: .seconds(20))
                    while ContinuousClock.now < deadline,
                        (Self.bytesRead(by: pid) ?? .max) - before < typed.utf8.count
                    {
                        try await Task.sleep(for: .milliseconds(10))
                    }
                } else {
                    try await Task.sleep(for: .seconds(1))
                }
                #expect(kill(pid, SIGINT) == 0)
            } else {
                // A mistyped last character, erased.
                try await tmux(["send-keys", "-t", session, "-l", pasted + "#"])
                try await tmux(["send-keys", "-t", session, "BSpace", "Enter"])
            }
            screen = try await self.screen(of: session, showing: "[status", history: true)
            try await Task.sleep(for: .milliseconds(300))
            screen = try await tmux(["capture-pane", "-p", "-S", "-100", "-t", session])
            try await tmux(["kill-session", "-t", session])
            #expect(!screen.contains("tok-"), "the token was echoed:\n\(screen)")
            #expect(screen.contains(interrupted ? "[status 130]" : "[status 0]"), "\(screen)")
            let lines = screen.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
            #expect(lines.contains("echo") && !lines.contains("-echo"), "echo was left off:\n\(screen)")
        }
        let printed = try await CLIProcess.run(
            ["token", "print", "--provider", "github"], environment: ["AUTHKIT_HOME": home.path])
        #expect(printed.stdout == pasted + "\n", "\(printed.stdout.count) characters; \(printed.stderr)")
    }

    /// A paste longer than `token import` takes (16 KiB) is refused, and
    /// none of it is left in the terminal: left there, the shell read its
    /// tail as a command once authkit ended (and kept it in its history).
    @Test(.enabled(if: tmuxPath != nil, "tmux is not installed (.ci/run installs it)"))
    func aPasteTooLongLeavesNothingForTheShell() async throws {
        let home = try CLIProcess.home("authkit-import-long")
        defer { try? FileManager.default.removeItem(at: home) }
        let session = "authkit-long-\(UUID().uuidString.prefix(8))"
        // What the terminal still holds after authkit ends, read for 2 s.
        let command =
            "env AUTHKIT_HOME='\(home.path)' '\(CLIProcess.binary.path)' token import --provider github; echo \"[status $?]\"; echo \"[left $(timeout 2 cat | wc -c)]\"; sleep 300"
        try await tmux(["new-session", "-d", "-s", session, "-x", "80", "-y", "24", command])
        _ = try await screen(of: session, showing: "Paste the token")
        try await tmux(["send-keys", "-t", session, "-l", String(repeating: "0123456789abcdef", count: 1_200)])
        try await tmux(["send-keys", "-t", session, "Enter"])
        let screen = try await self.screen(of: session, showing: "[left", history: true)
        try await tmux(["kill-session", "-t", session])
        #expect(screen.contains("[status 65]") && screen.contains("[left 0]"), "\(screen)")
        #expect(!screen.contains("0123456789abcdef"), "the paste was echoed:\n\(screen)")
    }
}
