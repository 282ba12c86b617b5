import Foundation
import Subprocess

#if canImport(System)
    import System
#else
    import SystemPackage
#endif

/// A child process a test starts and talks to: the `authkit` binary, a
/// Python peer, the store stress writer, `openssl`, `swiftc`.
///
/// Started with swift-subprocess, as the project's own child processes are,
/// not with Foundation's `Process`: on Linux a child of `Process` inherits
/// the blocked signal mask and ignored signals of the thread that started it
/// (a tmux server so started never noticed its command end), so a test of
/// Ctrl-C or of a closed pipe would run the binary in a world no terminal
/// gives it. Subprocess resets both. Its reads wait on the kernel, not on a
/// thread of the concurrency pool, and end when the child does even if a
/// grandchild holds the pipes open.
///
/// Standard output and standard error are gathered as they come; a test can
/// react to standard error as it grows (`onStandardError`), write to standard
/// input, send signals, and await the exit.
public final class ChildProcess: Sendable {
    /// How the child ended.
    public struct Exit: Sendable, Equatable {
        /// The exit status, or 128 plus the signal's number when a signal ended it.
        public var status: Int32
        /// The signal that ended the child, if one did.
        public var signal: Int32?
    }

    /// Everything a finished child left, for the tests that only run one to its end.
    public struct Outcome: Sendable {
        public var exit: Exit
        public var standardOutput: String
        public var standardError: String
    }

    public struct StartError: Error, CustomStringConvertible {
        public var description: String
    }

    private enum InputCommand: Sendable {
        case write(String)
        case close
    }

    private let state = State()
    private let input: AsyncStream<InputCommand>.Continuation
    private let inputCommands: AsyncStream<InputCommand>
    private let onStandardError: (@Sendable (ChildProcess, String) -> Void)?
    private let run = TaskBox()

    private init(onStandardError: (@Sendable (ChildProcess, String) -> Void)?) {
        (inputCommands, input) = AsyncStream.makeStream(of: InputCommand.self)
        self.onStandardError = onStandardError
    }

    /// Starts `executable` with `arguments`. With `environment`, the child
    /// gets exactly those variables; without, it inherits the test's.
    /// `onStandardError` is called with all of standard error so far each
    /// time more arrives (on the task reading it: keep it short).
    public static func start(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil,
        workingDirectory: URL? = nil,
        onStandardError: (@Sendable (ChildProcess, String) -> Void)? = nil
    ) async throws -> ChildProcess {
        let child = ChildProcess(onStandardError: onStandardError)
        var variables = Environment.inherit
        if let environment {
            variables = .custom(
                Dictionary(uniqueKeysWithValues: environment.map { (Environment.Key(rawValue: $0.key)!, $0.value) }))
        }
        let configuration = Configuration(
            executable: .path(FilePath(executable)), arguments: Arguments(arguments), environment: variables,
            workingDirectory: workingDirectory.map { FilePath($0.path) })
        let started = AsyncStream<Result<pid_t, any Error>>.makeStream()
        child.run.task = Task {
            do {
                let result = try await Subprocess.run(
                    configuration, input: .inputWriter, output: .sequence, error: .sequence
                ) { execution in
                    started.continuation.yield(.success(execution.processIdentifier.value))
                    try await child.serve(
                        input: execution.standardInputWriter, output: execution.standardOutput,
                        error: execution.standardError)
                }
                let exit: Exit
                switch result.terminationStatus {
                case .exited(let code): exit = Exit(status: code, signal: nil)
                // As a shell reports it: a signal's number as the status
                // would read as an exit code (SIGILL, a Swift trap, as 4).
                case .signaled(let number): exit = Exit(status: 128 + number, signal: number)
                }
                child.state.finish(exit)
                return exit
            } catch {
                started.continuation.yield(.failure(error))
                child.state.finish(nil)
                throw error
            }
        }
        for await outcome in started.stream {
            switch outcome {
            case .success(let pid):
                child.state.setPID(pid)
                return child
            case .failure(let error):
                throw StartError(description: "could not start \(executable): \(error)")
            }
        }
        throw StartError(description: "could not start \(executable)")
    }

    /// Runs `executable` to its end, with `input` (if any) on standard input,
    /// which is then closed.
    public static func run(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil,
        workingDirectory: URL? = nil, input: String? = nil
    ) async throws -> Outcome {
        let child = try await start(
            executable, arguments, environment: environment, workingDirectory: workingDirectory)
        if let input { child.write(input) }
        child.closeInput()
        let exit = try await child.exit()
        return Outcome(exit: exit, standardOutput: child.standardOutput, standardError: child.standardError)
    }

    /// Reads both outputs and feeds standard input until the child closes its
    /// outputs or ends (Subprocess then ends the reads).
    private func serve(
        input writer: StandardInputWriter, output: SubprocessOutputSequence, error: SubprocessOutputSequence
    ) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for try await buffer in output { self.state.appendOut(buffer.withUnsafeBytes { Data($0) }) }
            }
            group.addTask {
                for try await buffer in error {
                    let text = self.state.appendErr(buffer.withUnsafeBytes { Data($0) })
                    self.onStandardError?(self, text)
                }
            }
            let commands = inputCommands
            let feeding = Task {
                for await command in commands {
                    switch command {
                    case .write(let text):
                        // The child may have gone (what it wrote was its
                        // error): a write to its closed pipe is no failure here.
                        _ = try? await writer.write(text, using: UTF8.self)
                    case .close:
                        try? await writer.finish()
                        return
                    }
                }
            }
            try await group.waitForAll()
            feeding.cancel()
            await feeding.value
        }
    }

    /// The child's process ID.
    public var processIdentifier: pid_t { state.pid }

    /// Writes `text` to standard input (after any earlier writes).
    public func write(_ text: String) { input.yield(.write(text)) }

    /// Closes standard input, as end of file: a child reading it sees the end.
    public func closeInput() { input.yield(.close) }

    /// Sends `signal` (SIGINT is what Ctrl-C sends) unless the child has ended.
    public func send(_ signal: Int32) {
        state.whileRunning { kill($0, signal) }
    }

    /// Whether the child has ended and been reaped.
    public var hasExited: Bool { state.exit != nil || state.failed }

    /// Waits for the child to end.
    public func exit() async throws -> Exit {
        guard let task = run.task else { throw StartError(description: "not started") }
        return try await task.value
    }

    /// Standard output so far (all of it, once `exit()` has returned).
    public var standardOutput: String { state.out }
    /// Standard error so far.
    public var standardError: String { state.err }

    /// The first line of standard output, once it is complete, or nil if
    /// the child ends first or `timeout` passes.
    public func firstLine(timeout: Duration = .seconds(20)) async -> String? {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while ContinuousClock.now < deadline {
            let out = state.out
            if let newline = out.firstIndex(of: "\n") { return String(out[..<newline]) }
            if hasExited { return nil }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return nil
    }
}

/// The child's output and fate, shared by its reading tasks and the test.
private final class State: @unchecked Sendable {
    private let lock = NSLock()
    private var outData = Data(), errData = Data()
    private var _pid: pid_t = 0
    private var _exit: ChildProcess.Exit?
    private var _failed = false

    func setPID(_ pid: pid_t) { lock.withLock { _pid = pid } }
    var pid: pid_t { lock.withLock { _pid } }
    func appendOut(_ data: Data) { lock.withLock { outData.append(data) } }
    func appendErr(_ data: Data) -> String {
        lock.withLock {
            errData.append(data)
            return String(decoding: errData, as: UTF8.self)
        }
    }
    var out: String { lock.withLock { String(decoding: outData, as: UTF8.self) } }
    var err: String { lock.withLock { String(decoding: errData, as: UTF8.self) } }
    var exit: ChildProcess.Exit? { lock.withLock { _exit } }
    var failed: Bool { lock.withLock { _failed } }
    func finish(_ exit: ChildProcess.Exit?) {
        lock.withLock {
            if let exit { _exit = exit } else { _failed = true }
        }
    }
    /// Runs `body` with the PID while the child has not been reported
    /// ended. Signals go by PID (Subprocess's process descriptor is only valid
    /// inside its closure); the window between its reaping the child and
    /// `finish` is too short for the kernel to hand the PID to another process
    /// in practice.
    func whileRunning(_ body: (pid_t) -> Void) {
        lock.withLock {
            if _exit == nil && !_failed && _pid != 0 { body(_pid) }
        }
    }
}

/// The task running the child, set once right after the child is created.
private final class TaskBox: @unchecked Sendable {
    private let lock = NSLock()
    private var _task: Task<ChildProcess.Exit, any Error>?
    var task: Task<ChildProcess.Exit, any Error>? {
        get { lock.withLock { _task } }
        set { lock.withLock { _task = newValue } }
    }
}
