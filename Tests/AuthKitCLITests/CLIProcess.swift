import AuthKitTestSupport
import Foundation

/// Runs the built `authkit` binary as a user would, with its own environment,
/// and captures exit status, standard output and standard error.
struct CLIResult {
    /// The exit status, or the signal's number when a signal ended it (see `signal`).
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
    ///
    /// The waiting happens on a thread of its own, not on the concurrency
    /// pool: a test awaiting the binary must not hold up the other tests'
    /// tasks (with the pool's few threads blocked, a 200 ms deadline elsewhere
    /// was seen to fire after 16 s).
    static func run(
        _ arguments: [String], environment: [String: String], timeout: TimeInterval = 60, workingDirectory: URL? = nil,
        launcher: [String] = [], bareLauncher: Bool = false,
        respond: (@Sendable (String) -> String?)? = nil,
        interruptWhen: (@Sendable (String) -> Bool)? = nil,
        interruptAfter: TimeInterval? = nil,
        signalWhen: (@Sendable () -> Bool)? = nil, signals: [Int32] = [SIGINT]
    ) async throws -> CLIResult {
        try await withCheckedThrowingContinuation { continuation in
            Thread {
                continuation.resume(
                    with: Result {
                        try runBlocking(
                            arguments, environment: environment, timeout: timeout, workingDirectory: workingDirectory,
                            launcher: launcher, bareLauncher: bareLauncher, respond: respond,
                            interruptWhen: interruptWhen,
                            interruptAfter: interruptAfter, signalWhen: signalWhen, signals: signals)
                    })
            }.start()
        }
    }

    private static func runBlocking(
        _ arguments: [String], environment: [String: String], timeout: TimeInterval, workingDirectory: URL?,
        launcher: [String], bareLauncher: Bool, respond: (@Sendable (String) -> String?)?,
        interruptWhen: (@Sendable (String) -> Bool)?,
        interruptAfter: TimeInterval?, signalWhen: (@Sendable () -> Bool)?, signals: [Int32]
    ) throws -> CLIResult {
        let process = Process()
        if let wrapper = launcher.first {
            process.executableURL = URL(fileURLWithPath: wrapper)
            process.arguments = launcher.dropFirst() + (bareLauncher ? [] : [binary.path]) + arguments
        } else {
            process.executableURL = binary
            process.arguments = arguments
        }
        if let workingDirectory { process.currentDirectoryURL = workingDirectory }
        var env = [
            "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin",
            "HOME": environment["AUTHKIT_HOME"] ?? "/nonexistent",
        ]
        env.merge(environment) { _, new in new }
        process.environment = env
        let stdin = Pipe()
        let stdout = Pipe()
        let stderr = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr

        let collected = Collected()
        // Plain blocking reads on two threads, not `readabilityHandler`: its
        // dispatch sources race with the pipe's descriptor being closed and its
        // number reused (other tests open and close many sockets at once), which
        // crashed libdispatch's event loop on Linux.
        let outDone = DispatchSemaphore(value: 0)
        let errDone = DispatchSemaphore(value: 0)
        let stdoutReader = stdout.fileHandleForReading
        let stderrReader = stderr.fileHandleForReading
        let stdinWriter = stdin.fileHandleForWriting
        try process.run()
        if respond == nil && interruptWhen == nil { try? stdinWriter.close() }
        if let interruptAfter {
            Thread.detachNewThread {
                Thread.sleep(forTimeInterval: interruptAfter)
                if process.isRunning { process.interrupt() } // SIGINT, as Ctrl-C sends
            }
        }
        if let signalWhen {
            // Once the condition holds (the server has a request, say), the
            // signals in turn, 200 ms apart: a second Ctrl-C is a second press.
            Thread.detachNewThread {
                while process.isRunning && !signalWhen() { Thread.sleep(forTimeInterval: 0.01) }
                for number in signals where process.isRunning {
                    kill(process.processIdentifier, number)
                    Thread.sleep(forTimeInterval: 0.2)
                }
            }
        }
        Thread.detachNewThread {
            while case let chunk = stdoutReader.availableData, !chunk.isEmpty { collected.appendOut(chunk) }
            outDone.signal()
        }
        Thread.detachNewThread {
            while case let chunk = stderrReader.availableData, !chunk.isEmpty {
                let text = collected.appendErr(chunk)
                guard !collected.hasResponded else { continue }
                if let interruptWhen, interruptWhen(text) {
                    collected.hasResponded = true
                    process.interrupt() // SIGINT, as Ctrl-C sends
                } else if let respond, let answer = respond(text) {
                    collected.hasResponded = true
                    // The throwing write: the child may have exited (the text
                    // answered is its error), and Foundation's old write(_:)
                    // traps on the broken pipe, taking every test with it.
                    try? stdinWriter.write(contentsOf: Data((answer + "\n").utf8))
                    try? stdinWriter.close()
                }
            }
            errDone.signal()
        }

        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        if process.isRunning {
            process.terminate()
            // A process that ignores SIGTERM (as one waiting for a paste once
            // did) must not hang the whole test run.
            let grace = Date().addingTimeInterval(5)
            while process.isRunning && Date() < grace { Thread.sleep(forTimeInterval: 0.02) }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
            _ = outDone.wait(timeout: .now() + 5)
            _ = errDone.wait(timeout: .now() + 5)
            throw CLIError.timedOut(arguments, collected.err)
        }
        process.waitUntilExit()
        _ = outDone.wait(timeout: .now() + 10)
        _ = errDone.wait(timeout: .now() + 10)
        if !collected.hasResponded { try? stdinWriter.close() }
        return CLIResult(
            status: process.terminationStatus, stdout: collected.out, stderr: collected.err,
            signal: process.terminationReason == .uncaughtSignal ? process.terminationStatus : nil)
    }

    enum CLIError: Error { case timedOut([String], String) }
}

/// Output gathered from the reader threads.
private final class Collected: @unchecked Sendable {
    private let lock = NSLock()
    private var outData = Data(), errData = Data()
    private var responded = false

    func appendOut(_ data: Data) { lock.withLock { outData.append(data) } }
    func appendErr(_ data: Data) -> String {
        lock.withLock {
            errData.append(data)
            return String(decoding: errData, as: UTF8.self)
        }
    }
    var hasResponded: Bool {
        get { lock.withLock { responded } }
        set { lock.withLock { responded = newValue } }
    }
    var out: String { lock.withLock { String(decoding: outData, as: UTF8.self) } }
    var err: String { lock.withLock { String(decoding: errData, as: UTF8.self) } }
}
