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
    /// else only when `python3` can import oauthlib.
    public static let isEnabled: Bool = {
        let environment = ProcessInfo.processInfo.environment
        if environment["AUTHKIT_REQUIRE_INTEROP"] == "1" { return true }
        if let python = environment["AUTHKIT_PYTHON"], !python.isEmpty { return true }
        return canImportOAuthlib(python: "python3")
    }()

    public static var python: String {
        let value = ProcessInfo.processInfo.environment["AUTHKIT_PYTHON"] ?? ""
        return value.isEmpty ? "python3" : value
    }

    private static func canImportOAuthlib(python: String) -> Bool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [python, "-c", "import oauthlib.oauth1"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            return false
        }
        process.waitUntilExit()
        return process.terminationStatus == 0
    }

    public struct StartError: Error, CustomStringConvertible {
        public var description: String
    }

    private let process = Process()
    private let input = Pipe()
    private let output = Pipe()
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
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [Self.python, script.path] + arguments
        process.standardInput = input
        process.standardOutput = output
        do {
            try process.run()
        } catch {
            throw StartError(description: "could not run \(Self.python) \(script.path): \(error)")
        }
        let handle = output.fileHandleForReading
        let line: String? = await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                var bytes = [UInt8]()
                while true {
                    let chunk = handle.readData(ofLength: 1)
                    guard let byte = chunk.first else { break }
                    if byte == UInt8(ascii: "\n") { break }
                    bytes.append(byte)
                }
                continuation.resume(returning: bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self))
            }
        }
        guard let line, let port = Int(line.trimmingCharacters(in: .whitespaces)) else {
            stop()
            throw StartError(
                description:
                    "\(Self.python) \(name) did not print a port (are Tests/requirements.txt's packages installed?); it printed \(String(describing: line))"
            )
        }
        self.port = port
    }

    public func stop() {
        try? input.fileHandleForWriting.close()
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
    }

    deinit { stop() }
}
