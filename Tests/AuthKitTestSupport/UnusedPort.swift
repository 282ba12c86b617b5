import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A loopback TCP port for a test to hand to a listener it starts later (a
/// `--port` flag, a fixed redirect URI).
///
/// Not one from the kernel's ephemeral range (binding port 0): in the time
/// between choosing it and the listener binding it, the many connections the
/// other tests open at once can take that port as their own local end, and
/// the listener (which, as RFC 8252 asks, shares its port with nobody) then
/// fails with "address in use". So the port comes from just below that range,
/// is free when chosen, and is never handed out twice in one process.
public enum UnusedPort {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var handedOut = Set<Int>()

    public static func next() throws -> Int {
        let low = ephemeralLow()
        var candidates = Array(max(1024, low - 8000)..<low)
        candidates.shuffle()
        for port in candidates where isFree(port) {
            let fresh = lock.withLock { handedOut.insert(port).inserted }
            if fresh { return port }
        }
        throw POSIXError(.EADDRINUSE)
    }

    /// The first port of the ephemeral range (Linux's
    /// `ip_local_port_range`; 49152 elsewhere, as IANA assigns).
    static func ephemeralLow() -> Int {
        if let text = try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8),
            let first = text.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" }).first,
            let low = Int(first)
        {
            return low
        }
        return 49152
    }

    private static func isFree(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        } == 0
    }
}
