import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// An independent server of `Tests/Interop/servers` as a child process, for
/// interoperability tests in Swift: oauthlib's OAuth 1.0a endpoints
/// (``start(consumerKey:consumerSecret:)``), or any other peer there
/// (``start(script:arguments:)``).
///
/// The Python is `$AUTHKIT_PYTHON`, else `python3`. The server prints its port
/// as its first line; ``stop()`` terminates it, and closing its stdin stops it
/// too, so it does not outlive a crashed test run.
public final class InteropPeer: @unchecked Sendable {
    public static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../Interop/servers/oauth1_server.py").standardized

    /// Whether the interoperability tests run: always when `AUTHKIT_REQUIRE_INTEROP=1`
    /// or `AUTHKIT_PYTHON` is set (then a server that cannot start is a failure),
    /// else only when `python3` can import oauthlib. Asked once, in a trait:
    /// `.enabled("…") { await InteropPeer.isEnabled }`.
    public static var isEnabled: Bool {
        get async { await probe.value }
    }

    private static let probe = Task { () -> Bool in
        let environment = ProcessInfo.processInfo.environment
        if environment["AUTHKIT_REQUIRE_INTEROP"] == "1" { return true }
        if let python = environment["AUTHKIT_PYTHON"], !python.isEmpty { return true }
        let outcome = try? await ChildProcess.run("/usr/bin/env", ["python3", "-c", "import oauthlib.oauth1"])
        return outcome?.exit.status == 0
    }

    public static var python: String {
        let value = ProcessInfo.processInfo.environment["AUTHKIT_PYTHON"] ?? ""
        return value.isEmpty ? "python3" : value
    }

    public struct StartError: Error, CustomStringConvertible {
        public var description: String
    }

    private let lock = NSLock()
    private var process: ChildProcess?
    public private(set) var port = 0

    public init() {}
    public var baseURL: String { "http://127.0.0.1:\(port)" }

    /// Starts oauthlib's OAuth 1.0a server and waits (up to 20 s) for its port.
    public func start(consumerKey: String, consumerSecret: String) async throws {
        try await start(
            script: Self.script.lastPathComponent,
            arguments: ["--consumer-key", consumerKey, "--consumer-secret", consumerSecret])
    }

    /// Starts `Tests/Interop/servers/<script>` with `arguments` and waits for its port.
    public func start(script name: String, arguments: [String]) async throws {
        let script = Self.script.deletingLastPathComponent().appendingPathComponent(name)
        let child: ChildProcess
        do {
            child = try await ChildProcess.start("/usr/bin/env", [Self.python, script.path] + arguments)
        } catch {
            throw StartError(description: "could not run \(Self.python) \(script.path): \(error)")
        }
        lock.withLock { process = child }
        let line = await child.firstLine(timeout: .seconds(20))
        guard let line, let port = Int(line.trimmingCharacters(in: .whitespaces)) else {
            stop()
            throw StartError(
                description:
                    "\(Self.python) \(name) did not print a port (are Tests/requirements.txt's packages installed?); it printed \(String(describing: line)), and on standard error: \(child.standardError.suffix(2000))"
            )
        }
        self.port = port
    }

    /// Closes the server's standard input and sends it SIGTERM; either stops it.
    public func stop() {
        guard let child = lock.withLock({ process }) else { return }
        child.closeInput()
        child.send(SIGTERM)
    }

    deinit { stop() }
}
