import AuthKit
import AuthKitTestSupport
import Foundation
import Subprocess
import SystemPackage
import Testing

/// Completion never runs what it completes (issue 44, item 6): a stored
/// label `$(touch${IFS}/tmp/x)` ran when TAB was pressed after `--label`,
/// because bash's script hands `authkit ---completion`'s words to
/// `compgen -W`, which expands them. Each shell's real script is driven
/// here against a store holding such labels and a providers directory
/// holding such a file; nothing may run, and the plain label is still offered.
@Suite(.serialized) struct ShellCompletionTests {
    /// A home whose store holds one plain label and several hostile ones,
    /// each of which creates a file in `marks` if a shell ever runs it; and a
    /// providers directory with a file named like a command.
    struct World {
        let home: URL
        let marks: URL
        let providers: URL
        var environment: [String: String] {
            [
                "AUTHKIT_HOME": home.path,
                "PATH": CLIProcess.binary.deletingLastPathComponent().path + ":/usr/bin:/bin", "HOME": home.path,
                "TERM": "xterm", "MARK_FILE": marks.appendingPathComponent("id").path,
            ]
        }
        var ran: [String] { (try? FileManager.default.contentsOfDirectory(atPath: marks.path)) ?? [] }
    }

    func world(_ name: String) async throws -> World {
        let home = try CLIProcess.home("authkit-completion-\(name)")
        let marks = home.appendingPathComponent("marks")
        let providers = home.appendingPathComponent("more")
        for directory in [marks, providers] {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        }
        let store = FileCredentialStore(file: home.appendingPathComponent("credentials.json"))
        let hostile = [
            "$(touch${IFS}\(marks.path)/dollar)", "`touch \(marks.path)/backquote`", "w;touch \(marks.path)/semicolon",
            "w x", "w'q", "w\"q", "w$HOME", "alice:work", "w&touch \(marks.path)/amp", "w|touch \(marks.path)/pipe",
            "-w",
        ]
        for label in ["work"] + hostile {
            try await store.save(Credential(providerID: "qiita", label: label, accessToken: "t"))
        }
        // A file name holds no '/': the mark's path comes from the environment.
        let command = "$(touch${IFS}${MARK_FILE})"
        try Data(
            #"{"id": "w", "protocol": "oauth2", "authorization": {"url": "https://w.example/a"}, "token": {"url": "https://w.example/t"}}"#
                .utf8
        )
        .write(to: providers.appendingPathComponent("\(command).json"))
        return World(home: home, marks: marks, providers: providers)
    }

    func script(_ shell: String, in world: World) async throws -> URL {
        let result = try await CLIProcess.run(["--generate-completion-script", shell], environment: world.environment)
        #expect(result.status == 0, "\(result.stderr)")
        let file = world.home.appendingPathComponent("completion.\(shell)")
        try Data(result.stdout.utf8).write(to: file)
        return file
    }

    static func executable(_ name: String) -> String? {
        ["/usr/bin/\(name)", "/bin/\(name)", "/usr/local/bin/\(name)"].first {
            FileManager.default.isExecutableFile(atPath: $0)
        }
    }

    func run(_ path: String, _ arguments: [String], environment: [String: String]) async throws -> String {
        let result = try await Subprocess.run(
            .path(FilePath(path)), arguments: Arguments(arguments),
            environment: .custom(
                Dictionary(uniqueKeysWithValues: environment.map { (Environment.Key(stringLiteral: $0.key), $0.value) })
            ),
            input: .none, output: .string(limit: 1 << 20), error: .string(limit: 1 << 20))
        return result.standardOutput + result.standardError
    }

    /// What every shell's script asks for: only shell-safe words come back.
    @Test func theWordsOfferedAreShellSafe() async throws {
        let world = try await world("words")
        let labels = try await CLIProcess.run(
            [
                "---completion", "token", "show", "--", "--label", "6", "0",
                "authkit", "token", "show", "--provider", "qiita", "--label", "",
            ], environment: world.environment)
        #expect(labels.status == 0 && labels.stdout.split(separator: "\n") == ["work"], "\(labels.stdout)")
        let ids = try await CLIProcess.run(
            [
                "---completion", "token", "show", "--", "--provider", "6", "0",
                "authkit", "token", "show", "--providers-dir", world.providers.path, "--provider", "",
            ],
            environment: world.environment)
        #expect(
            ids.status == 0 && ids.stdout.contains("qiita\n") && !ids.stdout.contains("$")
                && !ids.stdout.contains("touch"), "\(ids.stdout)")
        #expect(world.ran.isEmpty, "\(world.ran)")
    }

    /// bash: the generated `_authkit` with the line as bash would give it.
    @Test(.enabled(if: executable("bash") != nil, "bash is not installed"))
    func bashRunsNothing() async throws {
        let world = try await world("bash")
        let file = try await script("bash", in: world)
        let output = try await run(
            Self.executable("bash")!,
            [
                "--norc", "--noprofile", "-c",
                """
                source '\(file.path)'
                for line in "authkit token show --provider qiita --label " "authkit token show --providers-dir \(world.providers.path) --provider "; do
                    read -r -a COMP_WORDS <<< "$line"; COMP_WORDS+=(""); COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
                    COMP_LINE="$line"; COMP_POINT=${#COMP_LINE}; COMPREPLY=()
                    _authkit authkit "" "${COMP_WORDS[COMP_CWORD-1]}"
                    printf 'offered:%s\\n' "${COMPREPLY[@]}"
                done
                """,
            ], environment: world.environment)
        #expect(output.contains("offered:work\n") && output.contains("offered:qiita\n"), "\(output)")
        #expect(!output.contains("touch") && !output.contains("offered:w "), "\(output)")
        #expect(world.ran.isEmpty, "bash ran \(world.ran)")
    }

    /// A person's TAB in a real terminal (tmux): `shell` started bare, `setup`
    /// typed to load the generated script, then each line of `lines` typed
    /// and completed, waiting until the screen shows what that line's
    /// completion should offer. Returns the screen after each.
    ///
    /// The awaited text must not be part of the typed line itself: a wait for
    /// "--provider qiita" after typing "--provider qiita --label " ended
    /// before fish had answered.
    func pressTab(in shell: [String], setup: String, lines: [(typed: String, offered: String)], world: World)
        async throws -> [String]
    {
        let tmux = CLIWaitScreenTests.tmuxPath!
        let socket = world.home.appendingPathComponent("tmux.sock").path
        func send(_ arguments: [String]) async throws -> String {
            try await run(tmux, ["-S", socket] + arguments, environment: world.environment)
        }
        _ = try await send(["new-session", "-d", "-s", "completion", "-x", "200", "-y", "40"] + shell)
        defer { Task { _ = try? await send(["kill-server"]) } }
        try await Task.sleep(for: .milliseconds(500))
        // Typed ahead of a prompt that is still loading (compinit under a
        // busy CI took longer than any fixed pause), TAB reaches the terminal
        // rather than the shell's line editor: wait for the setup to say it
        // is done, on a line of its own, before typing what is to complete.
        let ready = "completion-ready"
        _ = try await send(["send-keys", "-t", "completion", "-l", "\(setup); echo \(ready)"])
        _ = try await send(["send-keys", "-t", "completion", "Enter"])
        var loaded = false
        for _ in 0..<120 where !loaded {
            try await Task.sleep(for: .milliseconds(250))
            let screen = try await send(["capture-pane", "-p", "-t", "completion"])
            loaded = screen.split(separator: "\n").contains { $0.trimmingCharacters(in: .whitespaces) == ready }
        }
        #expect(loaded, "the shell did not finish loading the completion script within 30 s")
        var screens = [String]()
        for line in lines {
            precondition(!line.typed.contains(line.offered), "wait for something the TAB adds")
            try await Task.sleep(for: .milliseconds(500))
            _ = try await send(["send-keys", "-t", "completion", "C-l"])
            _ = try await send(["send-keys", "-t", "completion", "-l", line.typed])
            _ = try await send(["send-keys", "-t", "completion", "Tab"])
            var screen = ""
            for attempt in 0..<60 {
                try await Task.sleep(for: .milliseconds(250))
                screen = try await send(["capture-pane", "-p", "-t", "completion"])
                if screen.contains(line.offered) { break }
                // Under a full test run, a TAB typed on the heels of the line
                // was seen to go unanswered: a person would press it again.
                if attempt == 20 { _ = try await send(["send-keys", "-t", "completion", "Tab"]) }
            }
            screens.append(screen)
            _ = try await send(["send-keys", "-t", "completion", "C-u"])
            _ = try await send(["send-keys", "-t", "completion", "Escape"])
        }
        return screens
    }

    func lines(_ world: World) -> [(typed: String, offered: String)] {
        [
            ("authkit token show --provider qiita --label ", "--label work"),
            ("authkit token show --providers-dir \(world.providers.path) --provider qi", "--provider qiita"),
        ]
    }

    /// fish, at a real prompt.
    @Test(
        .enabled(
            if: executable("fish") != nil && CLIWaitScreenTests.tmuxPath != nil,
            "fish or tmux is not installed (.ci/run installs them)"))
    func fishRunsNothing() async throws {
        let world = try await world("fish")
        let file = try await script("fish", in: world)
        let screens = try await pressTab(
            in: [Self.executable("fish")!, "--no-config"], setup: "source '\(file.path)'", lines: lines(world),
            world: world)
        #expect(
            screens.count == 2 && screens[0].contains("--label work") && screens[1].contains("--provider qiita"),
            "\(screens)")
        #expect(!screens.joined().contains("touch"))
        #expect(world.ran.isEmpty, "fish ran \(world.ran)")
    }

    /// zsh, at a real prompt, with its completion system (`compinit`).
    @Test(
        .enabled(
            if: executable("zsh") != nil && CLIWaitScreenTests.tmuxPath != nil,
            "zsh or tmux is not installed (.ci/run installs them)"))
    func zshRunsNothing() async throws {
        let world = try await world("zsh")
        let file = try await script("zsh", in: world)
        let screens = try await pressTab(
            in: [Self.executable("zsh")!, "-f"], setup: "autoload -U compinit && compinit -u && source '\(file.path)'",
            lines: lines(world), world: world)
        #expect(
            screens.count == 2 && screens[0].contains("--label work") && screens[1].contains("--provider qiita"),
            "\(screens)")
        #expect(!screens.joined().contains("touch"))
        #expect(world.ran.isEmpty, "zsh ran \(world.ran)")
    }

    /// A new label is held to the same set, refused with what to do.
    @Test func authorizeRefusesALabelAShellWouldRead() async throws {
        let world = try await world("authorize")
        for label in ["$(touch${IFS}$MARK_FILE)", "a b", "w;x", "`x`", "alice:work", "=cmd"] {
            let result = try await CLIProcess.run(
                ["authorize", "--provider", "qiita", "--label", label, "--no-browser"], environment: world.environment)
            #expect(
                result.status == 64 && result.stderr.contains("which a shell reads")
                    && result.stderr.contains("such as work"), "\(label): \(result.stderr)")
        }
        #expect(world.ran.isEmpty)
    }
}
