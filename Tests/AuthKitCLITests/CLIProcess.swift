import AuthKitTestSupport
import Foundation
import Testing

/// Runs the built `authkit` binary as a user would, with its own environment,
/// and captures exit status, standard output and standard error.
struct CLIResult {
    /// The exit status, or 128 plus the signal's number when a signal ended it (see `signal`).
    var status: Int32
    var stdout: String
    var stderr: String
    /// The signal that ended the process, if one did.
    var signal: Int32? = nil
}

enum CLIProcess {
    /// A fresh `$AUTHKIT_HOME` for one test, with its `providers` folder.
    static func home(_ name: String) throws -> URL {
        let home = TemporaryDirectory.url(name)
        try FileManager.default.createDirectory(
            at: home.appendingPathComponent("providers"), withIntermediateDirectories: true)
        // Private, as authkit makes a home it creates: otherwise every
        // command would warn that the store is readable by others.
        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: home.path)
        return home
    }

    /// `authkit` sits beside the test bundle in the build directory.
    static var binary: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("authkit")
    }

    /// Runs `authkit arguments…`. `respond` is called with standard error as it
    /// grows; whatever it returns (once) is written to standard input, which is
    /// then closed — this plays a person pasting a URL at a prompt. With a
    /// `launcher`, runs `launcher… authkit arguments…` instead (a wrapper that
    /// changes the world authkit runs in, then runs it); with `bareLauncher`,
    /// `launcher… arguments…`, the arguments naming authkit themselves.
    /// `interruptWhen` is asked about standard error as it grows;
    /// `interruptWhenOutput` about standard output, every 10 ms: once either
    /// holds, SIGINT is sent, as Ctrl-C sends it.
    ///
    /// The child runs under `ChildProcess` (swift-subprocess): its output is
    /// read as the kernel delivers it, so a test awaiting the binary holds no
    /// thread of the concurrency pool the other tests share.
    static func run(
        _ arguments: [String], environment: [String: String], timeout: TimeInterval = 60, workingDirectory: URL? = nil,
        launcher: [String] = [], bareLauncher: Bool = false,
        respond: (@Sendable (String) -> String?)? = nil,
        interruptWhen: (@Sendable (String) -> Bool)? = nil,
        interruptWhenOutput: (@Sendable (String) -> Bool)? = nil,
        interruptAfter: TimeInterval? = nil,
        signalWhen: (@Sendable () -> Bool)? = nil, signals: [Int32] = [SIGINT]
    ) async throws -> CLIResult {
        let executable: String
        let argv: [String]
        if let wrapper = launcher.first {
            executable = wrapper
            argv = launcher.dropFirst() + (bareLauncher ? [] : [binary.path]) + arguments
        } else {
            executable = binary.path
            argv = arguments
        }
        var env = [
            "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin",
            "HOME": environment["AUTHKIT_HOME"] ?? "/nonexistent",
        ]
        env.merge(environment) { _, new in new }

        let answered = Answered()
        let child = try await ChildProcess.start(
            executable, argv, environment: env, workingDirectory: workingDirectory
        ) { child, text in
            guard !answered.value else { return }
            if let interruptWhen, interruptWhen(text) {
                answered.value = true
                child.send(SIGINT) // as Ctrl-C sends
            } else if let respond, let answer = respond(text) {
                answered.value = true
                child.write(answer + "\n")
                child.closeInput()
            }
        }
        if respond == nil && interruptWhen == nil { child.closeInput() }

        let helpers = Task {
            await withTaskGroup(of: Void.self) { group in
                if let interruptAfter {
                    group.addTask {
                        guard (try? await Task.sleep(for: .seconds(interruptAfter))) != nil else { return }
                        child.send(SIGINT) // as Ctrl-C sends
                    }
                }
                if let interruptWhenOutput {
                    // Standard output has no callback of its own (a banner a
                    // server prints once it listens): polled, as `signalWhen` is.
                    group.addTask {
                        while !child.hasExited && !interruptWhenOutput(child.standardOutput) {
                            guard (try? await Task.sleep(for: .milliseconds(10))) != nil else { return }
                        }
                        child.send(SIGINT) // as Ctrl-C sends
                    }
                }
                if let signalWhen {
                    // Once the condition holds (the server has a request, say), the
                    // signals in turn, 200 ms apart: a second Ctrl-C is a second press.
                    group.addTask {
                        while !child.hasExited && !signalWhen() {
                            guard (try? await Task.sleep(for: .milliseconds(10))) != nil else { return }
                        }
                        for number in signals where !child.hasExited && !Task.isCancelled {
                            child.send(number)
                            try? await Task.sleep(for: .milliseconds(200))
                        }
                    }
                }
            }
        }
        defer { helpers.cancel() }

        let deadline = ContinuousClock.now.advanced(by: .seconds(timeout))
        while !child.hasExited && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        if !child.hasExited {
            child.send(SIGTERM)
            // A process that ignores SIGTERM (as one waiting for a paste once
            // did) must not hang the whole test run.
            let grace = ContinuousClock.now.advanced(by: .seconds(5))
            while !child.hasExited && ContinuousClock.now < grace { try await Task.sleep(for: .milliseconds(20)) }
            child.send(SIGKILL)
            _ = try await child.exit()
            throw CLIError.timedOut(arguments, child.standardError)
        }
        let exit = try await child.exit()
        if !answered.value { child.closeInput() }
        // A crash is never what a test expects, whatever else it checks:
        // no test sends these signals, only a trap or a bad access raises them.
        if let signal = exit.signal, Self.crashSignals.contains(signal) {
            Issue.record(
                "\(executable) \(argv.joined(separator: " ")) crashed (signal \(signal)): \(child.standardError.suffix(2000))"
            )
        }
        return CLIResult(
            status: exit.status, stdout: child.standardOutput, stderr: child.standardError, signal: exit.signal)
    }

    enum CLIError: Error { case timedOut([String], String) }

    /// SIGILL (a Swift trap on x86_64), SIGTRAP (on arm64), SIGABRT, SIGBUS, SIGFPE, SIGSEGV.
    static let crashSignals: Set<Int32> = [SIGILL, SIGTRAP, SIGABRT, SIGBUS, SIGFPE, SIGSEGV]
}

/// Whether the prompt has had its answer (or its Ctrl-C): once only.
private final class Answered: @unchecked Sendable {
    private let lock = NSLock()
    private var answered = false
    var value: Bool {
        get { lock.withLock { answered } }
        set { lock.withLock { answered = newValue } }
    }
}
