import Foundation

/// An HTTP proxy that tunnels `CONNECT` (RFC 9110 §9.3.6) to one local
/// port, whatever host the client names, and answers the `CONNECT` with a
/// head of the test's choosing: a proxy that adds headers of its own, as a
/// hostile or careless one does. The tunnel's bytes pass unread (TLS).
/// Blocking sockets on threads of their own, never the concurrency pool.
public final class ConnectProxy: @unchecked Sendable {
    public let port: Int
    private let listener: Int32
    private let target: Int
    private let answer: String
    private let lock = NSLock()
    private var tunnels = 0

    /// Listens on 127.0.0.1; every `CONNECT` is answered with `answer` (a
    /// whole head, ending in an empty line) and tunnelled to `target`.
    public init(tunnellingTo target: Int, answer: String) throws {
        (listener, port) = try RawHTTP.listen()
        self.target = target
        self.answer = answer
        Thread { [self] in acceptLoop() }.start()
    }

    /// How many tunnels were opened.
    public var tunnelCount: Int { lock.withLock { tunnels } }

    public func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    private func acceptLoop() {
        while true {
            let client = accept(listener, nil, nil)
            guard client >= 0 else { return }
            Thread { [self] in serve(client) }.start()
        }
    }

    private func serve(_ client: Int32) {
        defer { close(client) }
        var head = [UInt8]()
        var byte: UInt8 = 0
        while !head.ends(with: Array("\r\n\r\n".utf8)), head.count < 16 << 10, recv(client, &byte, 1, 0) == 1 {
            head.append(byte)
        }
        guard String(decoding: head, as: UTF8.self).hasPrefix("CONNECT "),
            let upstream = try? RawHTTP.connect(port: target)
        else { return }
        defer { close(upstream) }
        lock.withLock { tunnels += 1 }
        try? RawHTTP.write(client, Data(answer.utf8))
        let done = DispatchSemaphore(value: 0)
        Thread {
            Self.pump(from: upstream, to: client)
            done.signal()
        }.start()
        Self.pump(from: client, to: upstream)
        shutdown(upstream, Int32(SHUT_WR))
        done.wait()
    }

    private static func pump(from source: Int32, to sink: Int32) {
        var buffer = [UInt8](repeating: 0, count: 16 << 10)
        while true {
            let count = recv(source, &buffer, buffer.count, 0)
            guard count > 0, (try? RawHTTP.write(sink, Data(buffer[0..<count]))) != nil else { break }
        }
        shutdown(sink, Int32(SHUT_WR))
    }
}

extension Array where Element == UInt8 {
    fileprivate func ends(with suffix: [UInt8]) -> Bool {
        count >= suffix.count && Array(self[(count - suffix.count)...]) == suffix
    }
}
