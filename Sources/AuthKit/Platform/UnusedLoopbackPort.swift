#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A loopback port that nothing listens on now: the kernel's choice of a
/// free one (bind to port 0), released at once.
///
/// For ``manualUserAgent(write:readLine:)`` with a provider that accepts any loopback port
/// (RFC 8252 §7.3): the port-less redirect URI would send the browser, with the
/// authorization code in its address, to port 80, where a local web server
/// may be listening and keep it in its log. On a port nothing listens on,
/// the browser fails to connect, and its address bar holds the URL to paste.
package enum UnusedLoopbackPort {
    /// A free port on `host`'s loopback address (`::1` for an IPv6 host,
    /// else 127.0.0.1; for `localhost`, free on both, as a browser may try
    /// either), or nil when no socket could be bound.
    package static func find(host: String) -> Int? {
        if host.contains(":") { return free(ipv6: true, port: 0) }
        guard host.lowercased() == "localhost" else { return free(ipv6: false, port: 0) }
        for _ in 0..<8 {
            guard let port = free(ipv6: false, port: 0) else { return nil }
            // No IPv6 on this machine (EADDRNOTAVAIL) leaves 127.0.0.1 alone to check.
            if free(ipv6: true, port: port) != nil || errno == EADDRNOTAVAIL || errno == EAFNOSUPPORT { return port }
        }
        return nil
    }

    /// Binds a socket to `port` (0: any) on the loopback address, then lets
    /// it go; the port bound, or nil (errno says why).
    private static func free(ipv6: Bool, port: Int) -> Int? {
        #if canImport(Glibc)
            let stream = Int32(SOCK_STREAM.rawValue)
        #else
            let stream = SOCK_STREAM
        #endif
        let fd = socket(ipv6 ? AF_INET6 : AF_INET, stream, 0)
        guard fd >= 0 else { return nil }
        defer {
            let saved = errno
            close(fd)
            errno = saved
        }
        if ipv6 {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_addr = in6addr_loopback
            address.sin6_port = UInt16(port).bigEndian
            return bound(fd, &address)
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        address.sin_port = UInt16(port).bigEndian
        return bound(fd, &address)
    }

    /// Binds `fd` to `address` and returns the port bound.
    private static func bound<Address>(_ fd: Int32, _ address: inout Address) -> Int? {
        let size = socklen_t(MemoryLayout<Address>.size)
        let result = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer -> Int? in
                guard bind(fd, pointer, size) == 0 else { return nil }
                var length = size
                guard getsockname(fd, pointer, &length) == 0 else { return nil }
                return 0
            }
        }
        guard result != nil else { return nil }
        let port: UInt16 = withUnsafeBytes(of: &address) { bytes in
            // sin_port and sin6_port are both at offset 2, in network order.
            UInt16(bytes[2]) << 8 | UInt16(bytes[3])
        }
        return port == 0 ? nil : Int(port)
    }
}
