import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// An HTTP response as read off a plain socket.
public struct RawResponse: Sendable {
    public var status: Int
    public var headers: [(name: String, value: String)]
    public var body: String

    public func header(_ name: String) -> String? {
        headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }
}

public struct SocketError: Error, CustomStringConvertible {
    public var call: String
    public var code: Int32
    public init(call: String, code: Int32) {
        self.call = call
        self.code = code
    }
    public var description: String { "\(call): \(String(cString: strerror(code))) (errno \(code))" }
}

/// A deliberately plain HTTP/1.1 client on BSD sockets, so tests control every
/// byte (odd methods, absolute-form targets, oversized or unfinished requests)
/// and see exactly what the listener sends. Blocking calls run on a Dispatch
/// queue, never on the Swift concurrency pool.
public enum RawHTTP {
    /// Sends `GET target` (or another method) and reads the whole response.
    public static func request(
        _ target: String, method: String = "GET", host: String = "127.0.0.1", port: Int,
        extraHeaders: String = "", holdOpen: Duration = .zero
    ) async throws -> RawResponse {
        let hostHeader = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        let text =
            "\(method) \(target) HTTP/1.1\r\nHost: \(hostHeader)\r\nUser-Agent: RawHTTP\r\n\(extraHeaders)Connection: close\r\n\r\n"
        return try await send(Data(text.utf8), host: host, port: port, headOnly: method == "HEAD", holdOpen: holdOpen)
    }

    /// Sends raw bytes and reads one response: headers, then `Content-Length`
    /// bytes of body; then waits `holdOpen` before closing, like a browser that
    /// is slow to hang up.
    public static func send(
        _ bytes: Data, host: String = "127.0.0.1", port: Int, headOnly: Bool = false,
        holdOpen: Duration = .zero
    ) async throws -> RawResponse {
        try await blocking {
            let fd = try connect(host: host, port: port)
            defer { close(fd) }
            try write(fd, bytes)
            let response = try readResponse(fd, headOnly: headOnly)
            if holdOpen > .zero {
                usleep(
                    UInt32(
                        holdOpen.components.attoseconds / 1_000_000_000_000 + holdOpen.components.seconds * 1_000_000))
            }
            return response
        }
    }

    /// A connected TCP socket with 10-second send and receive timeouts.
    public static func connect(host: String = "127.0.0.1", port: Int) throws -> Int32 {
        let ipv6 = host.contains(":")
        let fd = socket(ipv6 ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw SocketError(call: "socket", code: errno) }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let result = withSocketAddress(host: host, port: port) { Glibc.connect(fd, $0, $1) }
        guard result == 0 else {
            let code = errno
            close(fd)
            throw SocketError(call: "connect", code: code)
        }
        return fd
    }

    /// A listening socket on `host`, port 0 unless given; returns it and its port.
    public static func listen(host: String = "127.0.0.1", port: Int = 0, reusePort: Bool = false) throws -> (
        fd: Int32, port: Int
    ) {
        let ipv6 = host.contains(":")
        let fd = socket(ipv6 ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw SocketError(call: "socket", code: errno) }
        if reusePort {
            var one: Int32 = 1
            setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
            setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, socklen_t(MemoryLayout<Int32>.size))
        }
        guard withSocketAddress(host: host, port: port, { bind(fd, $0, $1) }) == 0 else {
            let code = errno
            close(fd)
            throw SocketError(call: "bind", code: code)
        }
        guard Glibc.listen(fd, 4) == 0 else {
            let code = errno
            close(fd)
            throw SocketError(call: "listen", code: code)
        }
        return (fd, localPort(of: fd) ?? 0)
    }

    /// A port that was free a moment ago, and that no other test's
    /// connection will take meanwhile (``UnusedPort``).
    public static func freePort() throws -> Int {
        try UnusedPort.next()
    }

    public static func write(_ fd: Int32, _ bytes: Data) throws {
        try bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let sent = Glibc.send(fd, buffer.baseAddress! + offset, buffer.count - offset, Int32(MSG_NOSIGNAL))
                guard sent > 0 else { throw SocketError(call: "send", code: errno) }
                offset += sent
            }
        }
    }

    /// Reads until the peer closes (or resets: the loopback listener ends a
    /// silent connection so, leaving no TIME_WAIT) or `limit` bytes; returns
    /// what was read.
    public static func readUntilClosed(_ fd: Int32, limit: Int = 1 << 20) throws -> Data {
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while data.count < limit {
            let count = recv(fd, &buffer, buffer.count, 0)
            if count < 0 && errno == EINTR { continue } // a signal arrived; read again
            if count == 0 || (count < 0 && errno == ECONNRESET) { break }
            guard count > 0 else { throw SocketError(call: "recv", code: errno) }
            data.append(contentsOf: buffer[0..<count])
        }
        return data
    }

    public static func readResponse(_ fd: Int32, headOnly: Bool) throws -> RawResponse {
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 4096)
        let separator = Data("\r\n\r\n".utf8)
        var headEnd: Range<Data.Index>?
        var expected: Int?
        while true {
            if headEnd == nil, let range = data.range(of: separator) { headEnd = range }
            if let headEnd {
                let headText = String(decoding: data[..<headEnd.lowerBound], as: UTF8.self)
                let length = headText.split(separator: "\r\n").dropFirst()
                    .first { $0.lowercased().hasPrefix("content-length:") }
                    .flatMap { Int($0.split(separator: ":", maxSplits: 1)[1].trimmingCharacters(in: .whitespaces)) }
                expected = headOnly ? 0 : (length ?? Int.max)
                if data.count - headEnd.upperBound >= expected! { break }
            }
            let count = recv(fd, &buffer, buffer.count, 0)
            if count < 0 && errno == EINTR { continue } // a signal arrived; read again
            if count == 0 { break }
            guard count > 0 else { throw SocketError(call: "recv", code: errno) }
            data.append(contentsOf: buffer[0..<count])
        }
        guard let headEnd else { throw SocketError(call: "response without a complete head", code: 0) }
        let lines = String(decoding: data[..<headEnd.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
        let statusParts = lines[0].split(separator: " ")
        guard statusParts.count >= 2, let status = Int(statusParts[1]) else {
            throw SocketError(call: "status line '\(lines[0])'", code: 0)
        }
        let headers = lines.dropFirst().compactMap { line -> (name: String, value: String)? in
            let parts = line.split(separator: ":", maxSplits: 1)
            guard parts.count == 2 else { return nil }
            return (String(parts[0]), parts[1].trimmingCharacters(in: .whitespaces))
        }
        let body = String(decoding: data[headEnd.upperBound...], as: UTF8.self)
        return RawResponse(status: status, headers: headers, body: body)
    }

    /// What a connection to `port` finds: ``PortProbe/refused`` when nothing
    /// accepts connections there any more.
    ///
    /// A connection to a closed port in the ephemeral range can still
    /// succeed: when the kernel picks that same port as the source, the two
    /// ends meet in a TCP simultaneous open (RFC 9293 §3.5), a connection to
    /// itself. That is no listener, and counts as refused.
    public static func probe(host: String = "127.0.0.1", port: Int) -> PortProbe {
        do {
            let fd = try connect(host: host, port: port)
            defer { close(fd) }
            let source = localPort(of: fd)
            if source == port { return .refused }
            return .accepted(fromPort: source ?? 0, listening: listeningSockets(port: port))
        } catch let error as SocketError {
            return error.code == ECONNREFUSED ? .refused : .failed(error.description)
        } catch {
            return .failed("\(error)")
        }
    }

    /// How many listening TCP sockets the kernel lists on `port` (IPv4 and
    /// IPv6): for a failure message, to tell a listener still open from a
    /// connection taken by something else.
    static func listeningSockets(port: Int) -> Int { ListeningSockets.inodes(port: port).count }

    /// The port `fd` is bound to on this machine, or nil.
    static func localPort(of fd: Int32) -> Int? {
        var storage = sockaddr_in6()
        var length = socklen_t(MemoryLayout<sockaddr_in6>.size)
        let named = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        // sin_port and sin6_port sit at the same offset.
        return named == 0 ? Int(UInt16(bigEndian: storage.sin6_port)) : nil
    }

    public static func withSocketAddress<T>(host: String, port: Int, _ body: (UnsafePointer<sockaddr>, socklen_t) -> T)
        -> T
    {
        if host.contains(":") {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = UInt16(port).bigEndian
            _ = inet_pton(AF_INET6, host, &address.sin6_addr)
            return withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    body($0, socklen_t(MemoryLayout<sockaddr_in6>.size))
                }
            }
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        _ = inet_pton(AF_INET, host, &address.sin_addr)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
    }

    /// True when this machine can bind `::1`.
    public static let ipv6Available: Bool = {
        guard let (fd, _) = try? listen(host: "::1") else { return false }
        close(fd)
        return true
    }()
}

/// What a connection attempt to a port found (``RawHTTP/probe(host:port:)``);
/// its description is the failure message when a test expected another.
public enum PortProbe: Equatable, Sendable, CustomStringConvertible {
    /// Nothing accepts connections there.
    case refused
    /// Something accepted the connection, made from `fromPort`; the kernel
    /// listed `listening` listening sockets on the port just after.
    case accepted(fromPort: Int, listening: Int)
    /// The attempt failed otherwise (a timeout, an unreachable address).
    case failed(String)

    public var description: String {
        switch self {
        case .refused: return "refused"
        case .accepted(let from, let listening):
            return "accepted (from port \(from); \(listening) listening socket(s) on the port)"
        case .failed(let reason): return "failed: \(reason)"
        }
    }
}

/// The sockets listening on an address and port at one moment, known by
/// the kernel's inode numbers (/proc/net/tcp and tcp6): whether *these*
/// sockets closed, which a connection to the port cannot tell once another
/// test's listener has been given the freed ephemeral port. Where there is
/// no /proc (macOS), it falls back to that connection.
public struct ListeningSockets: Sendable, CustomStringConvertible {
    public let host: String
    public let port: Int
    public let inodes: Set<String>

    /// The sockets listening on `host` (127.0.0.1 or ::1) and `port` now.
    ///
    /// The kernel writes its table a page at a time, and a reader that comes
    /// back for the next page after other tests' sockets came and went can
    /// skip a line (it resumes at a count of lines into a bucket): so the
    /// listeners are those of any of three reads, and a socket is gone
    /// when two reads in a row lack it.
    public init(host: String = "127.0.0.1", port: Int) {
        self.host = host
        self.port = port
        self.inodes = (0..<3).reduce(into: Set<String>()) { found, _ in
            found.formUnion(Self.inodes(host: host, port: port))
        }
    }

    /// Whether the kernel's tables can be read here.
    static var tablesReadable: Bool { FileManager.default.isReadableFile(atPath: "/proc/net/tcp") }

    /// Whether a listener was seen (always true where the tables cannot be read).
    public var sawOne: Bool { !inodes.isEmpty || !Self.tablesReadable }

    /// Whether none of these sockets listens any more (a socket that
    /// stopped listening leaves the table at once: no TIME_WAIT for it).
    public var haveClosed: Bool {
        guard Self.tablesReadable else { return RawHTTP.probe(host: host, port: port) == .refused }
        return Self.inodes(host: host, port: port).isDisjoint(with: inodes)
            && Self.inodes(host: host, port: port).isDisjoint(with: inodes)
    }

    /// ``haveClosed``, waited for up to `limit`: a process that this test
    /// process spawns at the moment of the close (the CLI tests run beside
    /// these) holds a copy of every descriptor from its fork to its exec,
    /// where posix_spawn's child closes them, so a closed listener may
    /// outlive `close()` by that window (seen once in 855 tests: open at the
    /// check, gone when the message was written). One that stays open is
    /// still caught.
    public func closedSoon(within limit: Duration = .seconds(3)) async -> Bool {
        let end = ContinuousClock.now.advanced(by: limit)
        while !haveClosed {
            guard ContinuousClock.now < end else { return false }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return true
    }

    public var description: String {
        let now = Self.inodes(host: host, port: port)
        let holders = now.intersection(inodes).sorted().map { "\($0) held by \(Self.holders(of: $0))" }
        return "\(host) port \(port): listening then \(inodes.sorted()), now \(now.sorted())"
            + (holders.isEmpty ? "" : "; " + holders.joined(separator: "; "))
    }

    /// The processes with a descriptor on socket `inode` (`pid (name) fd N`),
    /// from /proc/*/fd: which one kept a listener open that should have closed
    /// (this process, or a child that inherited it).
    static func holders(of inode: String) -> String {
        let target = "socket:[\(inode)]"
        var found = [String]()
        let processes = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        for pid in processes where pid.allSatisfy(\.isNumber) {
            let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? []
            for fd in descriptors
            where (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\(fd)")) == target {
                let name =
                    (try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8))?
                    .trimmingCharacters(in: .whitespacesAndNewlines) ?? "?"
                let own = Int32(pid) == getpid() ? ", this process" : ""
                found.append("\(pid) (\(name)\(own)) fd \(fd)")
            }
        }
        return found.isEmpty ? "no process found" : found.joined(separator: ", ")
    }

    /// `host` as the tables write a local address: 127.0.0.1 as 0100007F
    /// (the bytes of each 32-bit word in the machine's order, little-endian here).
    static func tableAddress(_ host: String) -> String {
        host.contains(":") ? "00000000000000000000000001000000" : "0100007F"
    }

    static func inodes(host: String? = nil, port: Int) -> Set<String> {
        let localAddress = (host.map(tableAddress) ?? "") + String(format: ":%04X", port)
        var found = Set<String>()
        for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
            guard let text = KernelFile.contents(of: table) else { continue }
            for line in text.split(separator: "\n").dropFirst() {
                let fields = line.split(separator: " ")
                // local_address is ADDR:PORT in hex; state 0A is LISTEN; the tenth field is the inode.
                if fields.count > 9, fields[1].hasSuffix(localAddress), fields[3] == "0A" {
                    found.insert(String(fields[9]))
                }
            }
        }
        return found
    }
}

/// A file of /proc, read to its end. `String(contentsOfFile:)` read one
/// page of such a file (4 KB: it reports no size): with more than some 25
/// sockets listening in the test process (the web and device grant tests'
/// servers), a listener past the first page of /proc/net/tcp was never seen.
public enum KernelFile {
    public static func contents(of path: String) -> String? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return count == 0 ? String(decoding: bytes, as: UTF8.self) : nil }
            bytes += buffer[..<count]
        }
    }
}
