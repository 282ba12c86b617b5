import AuthKit
import AuthKitTestSupport
import Foundation
import Testing

@testable import AuthKitLoopback

#if canImport(Glibc)
    import Glibc
#endif

/// The listener while hostile or broken local programs hammer it: 1,000
/// connections of malformed HTTP, oversized heads, senders that never finish,
/// wrong paths and forged `state`. None may end or stall the attempt; the
/// genuine redirect still completes, and the port is closed afterwards.
@Suite struct ListenerAbuseTests {
    /// What one abusive connection got back.
    enum Outcome: Sendable, Hashable {
        case status(Int)
        /// The listener closed the connection without a response.
        case closed
        case failed(String)
    }

    static let connectionTimeout = Duration.seconds(1)

    @Test(.timeLimit(.minutes(1)))
    func thousandHostileConnectionsThenTheGenuineRedirect() async throws {
        let memoryBefore = Memory.current()
        let started = ContinuousClock.now
        let attempt = TestAttempt()
        let browser = BrowserSpy()
        let events = EventLog()
        let agent = LoopbackUserAgent(
            timeout: .seconds(60), connectionTimeout: Self.connectionTimeout, onEvent: { events.append($0) },
            browser: browser.launcher)
        let (task, _) = try await start(agent, attempt, browser: browser)
        let port = attempt.port
        let state = attempt.state

        // 100 connections that never finish their request (half send nothing,
        // half a partial head), all open at once, alongside 900 quick ones.
        async let idle = blocking { try Self.holdUnfinished(count: 100, port: port) }
        let quick = try await Self.run(count: 900, concurrency: 16) { index in
            switch index % 9 {
            case 0, 1, 2:
                return try Self.exchange(Self.malformed[index % Self.malformed.count], port: port)
            case 3:
                // 70 KiB of headers, over the 64 KiB cap.
                let padding = String(
                    repeating: "X-Pad-\(index): " + String(repeating: "a", count: 1000) + "\r\n", count: 70)
                return try Self.exchange(
                    "GET /callback?code=x&state=\(state) HTTP/1.1\r\nHost: 127.0.0.1\r\n\(padding)\r\n", port: port)
            case 4, 5:
                return try Self.exchange(
                    "GET /other\(index)?code=x&state=\(state) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", port: port)
            case 6, 7:
                return try Self.exchange(
                    "GET /callback?code=x&state=forged\(index) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", port: port)
            default:
                // The genuine URL by HEAD (a link preview) must not count as the answer.
                return try Self.exchange(
                    "HEAD /callback?code=x&state=\(state) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", port: port,
                    headOnly: true)
            }
        }
        let idleSeconds = try await idle

        var histogram = [Outcome: Int]()
        for outcome in quick { histogram[outcome, default: 0] += 1 }
        print(
            "abuse outcomes: \(histogram.sorted { "\($0.key)" < "\($1.key)" }.map { "\($0.key)×\($0.value)" }.joined(separator: ", "))"
        )
        #expect(quick.count == 900)
        #expect(!quick.contains { if case .failed = $0 { return true } else { return false } }, "\(histogram)")
        // Only the HEADs of the genuine URL get a 200; nothing else is accepted.
        #expect(histogram[.status(200)] == 100)
        #expect(histogram[.status(431)] == 100)
        #expect(histogram[.status(404)] == 200)
        #expect((histogram[.status(400)] ?? 0) >= 200) // forged state, and most malformed requests
        #expect(
            !histogram.keys.contains {
                if case .status(let code) = $0 {
                    return code != 200 && !(400..<500).contains(code)
                } else {
                    return false
                }
            })
        // Unfinished requests are closed by the listener after the connection timeout.
        #expect(idleSeconds.count == 100)
        let late = idleSeconds.filter { $0 >= 2.5 }.count
        print(
            "idle connections: closed after \(idleSeconds.sorted()[idleSeconds.count / 2]) s median, \(late) after 2.5 s or more"
        )
        // Closed by the listener, not before its 1 s timeout, and long before
        // the attempt's own end (a hang check: the machine is shared).
        #expect(
            idleSeconds.allSatisfy { $0 >= 0.8 && $0 < 15 },
            "closed after \(idleSeconds.min() ?? 0)…\(idleSeconds.max() ?? 0) s")

        // The attempt is still waiting, and the genuine redirect completes it.
        let listening = ListeningSockets(port: port)
        #expect(listening.sawOne)
        let genuineStarted = ContinuousClock.now
        let genuine = try await RawHTTP.request(attempt.target("code=real"), port: port)
        #expect(genuine.status == 200)
        #expect(ContinuousClock.now - genuineStarted < .seconds(15), "the genuine redirect waited behind the abuse")
        let url = try await task.value
        #expect(url.query == "code=real&state=\(state)")
        #expect(await listening.closedSoon(), "\(listening)")

        let memoryAfter = Memory.current()
        print(
            """
            listener abuse: 1,000 connections + the genuine redirect in \(ContinuousClock.now - started); \
            idle connections closed after \(String(format: "%.2f", idleSeconds.min() ?? 0))–\(String(format: "%.2f", idleSeconds.max() ?? 0)) s; \
            test process VmHWM \(memoryBefore.peakKiB) → \(memoryAfter.peakKiB) KiB, VmRSS \(memoryBefore.currentKiB) → \(memoryAfter.currentKiB) KiB
            """)
    }

    /// RFC 8252 §8.3: the listener binds the loopback interface only, so the
    /// machine's other addresses refuse the port.
    @Test(.enabled(if: Self.nonLoopbackAddress != nil, "this machine has no non-loopback address to try"))
    func notReachableOnTheMachinesOtherAddresses() async throws {
        let address = try #require(Self.nonLoopbackAddress)
        let attempt = TestAttempt()
        let browser = BrowserSpy()
        let agent = LoopbackUserAgent(timeout: .seconds(30), browser: browser.launcher)
        let (task, _) = try await start(agent, attempt, browser: browser)
        #expect(RawHTTP.probe(port: attempt.port) != .refused)
        #expect(RawHTTP.probe(host: address, port: attempt.port) == .refused, "the listener answered on \(address)")
        let genuine = try await RawHTTP.request(attempt.target("code=abc"), port: attempt.port)
        #expect(genuine.status == 200)
        _ = try await task.value
    }

    // MARK: - Connections

    static let malformed = [
        "NOT HTTP AT ALL\r\n\r\n",
        "\u{1}\u{2}\u{3}\u{7f}\r\n\r\n",
        "GET /callback HTTP/1.1\r\nHost: 127.0.0.1\r\nBad Header Line\r\n\r\n",
        "GET /callback?code=x HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: -5\r\n\r\n",
        "GET /callback?code=x HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
        "GET\r\n\r\n",
        "GET /callback?code=x HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
        "G\0T / HTTP/1.1\r\n\r\n",
        "POST /callback?code=x HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 3\r\n\r\nabc",
        "GET * HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
        "GET http://evil.example/callback?code=x HTTP/1.1\r\nHost: evil.example\r\n\r\n",
        "GET /callback?code=%ZZ&state=%ZZ HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
    ]

    /// Sends `request`, reads one response (or the close), and hangs up.
    static func exchange(_ request: String, port: Int, headOnly: Bool = false) throws -> Outcome {
        let fd = try RawHTTP.connect(port: port)
        defer { close(fd) }
        do {
            try RawHTTP.write(fd, Data(request.utf8))
        } catch let error as SocketError where error.code == EPIPE || error.code == ECONNRESET {
            // The listener answered and stopped reading before the whole request was sent.
        }
        do {
            return .status(try RawHTTP.readResponse(fd, headOnly: headOnly).status)
        } catch let error as SocketError where error.code == 0 || error.code == ECONNRESET {
            return .closed
        } catch {
            return .failed("\(error)")
        }
    }

    /// Opens `count` connections that never complete a request and returns,
    /// for each, the seconds until the listener closed it.
    static func holdUnfinished(count: Int, port: Int) throws -> [Double] {
        var sockets = [(fd: Int32, opened: ContinuousClock.Instant)]()
        defer { for socket in sockets { close(socket.fd) } }
        for index in 0..<count {
            let fd = try RawHTTP.connect(port: port)
            sockets.append((fd, .now))
            if index % 2 == 1 {
                try RawHTTP.write(fd, Data("GET /callback?code=x HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ".utf8))
            }
        }
        var closedAfter = [Double](repeating: -1, count: count)
        var open = Set(0..<count)
        let giveUp = ContinuousClock.now + .seconds(15)
        while !open.isEmpty, ContinuousClock.now < giveUp {
            var descriptors = open.map { pollfd(fd: sockets[$0].fd, events: Int16(POLLIN), revents: 0) }
            let indices = Array(open)
            guard poll(&descriptors, nfds_t(descriptors.count), 200) >= 0 else {
                throw SocketError(call: "poll", code: errno)
            }
            for (position, descriptor) in descriptors.enumerated() where descriptor.revents != 0 {
                var byte: UInt8 = 0
                let received = recv(descriptor.fd, &byte, 1, Int32(MSG_DONTWAIT))
                if received == 0 || (received < 0 && errno != EAGAIN) {
                    let index = indices[position]
                    let elapsed = ContinuousClock.now - sockets[index].opened
                    closedAfter[index] =
                        Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
                    open.remove(index)
                }
            }
        }
        return closedAfter.filter { $0 >= 0 }
    }

    /// Runs `body(0..<count)` on threads of their own, at most `concurrency` at a time.
    static func run(count: Int, concurrency: Int, _ body: @escaping @Sendable (Int) throws -> Outcome) async throws
        -> [Outcome]
    {
        try await withThrowingTaskGroup(of: Outcome.self) { group in
            var next = 0
            var outcomes = [Outcome]()
            while next < min(concurrency, count) {
                let index = next
                group.addTask { try await blocking { try body(index) } }
                next += 1
            }
            while let outcome = try await group.next() {
                outcomes.append(outcome)
                if next < count {
                    let index = next
                    group.addTask { try await blocking { try body(index) } }
                    next += 1
                }
            }
            return outcomes
        }
    }

    // MARK: - The machine

    /// An address of this machine other than loopback (IPv4, or global IPv6), if any.
    static let nonLoopbackAddress: String? = {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0, let first = list else { return nil }
        defer { freeifaddrs(list) }
        var candidates = [String]()
        for entry in sequence(first: first, next: { $0.pointee.ifa_next }) {
            guard let address = entry.pointee.ifa_addr else { continue }
            var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
            switch Int32(address.pointee.sa_family) {
            case AF_INET:
                var ipv4 = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr }
                guard inet_ntop(AF_INET, &ipv4, &buffer, socklen_t(buffer.count)) != nil else { continue }
                let text = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
                if !text.hasPrefix("127.") { candidates.insert(text, at: 0) }
            case AF_INET6:
                var ipv6 = address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee.sin6_addr }
                guard inet_ntop(AF_INET6, &ipv6, &buffer, socklen_t(buffer.count)) != nil else { continue }
                let text = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
                // Link-local addresses need a scope id the raw client does not send.
                if text != "::1", !text.lowercased().hasPrefix("fe80") { candidates.append(text) }
            default:
                continue
            }
        }
        return candidates.first
    }()

    /// The test process's resident memory from /proc/self/status (Linux; 0 elsewhere).
    struct Memory {
        var peakKiB = 0
        var currentKiB = 0

        static func current() -> Memory {
            var memory = Memory()
            guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return memory }
            for line in status.split(separator: "\n") {
                let parts = line.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == ":" })
                guard parts.count >= 2, let value = Int(parts[1]) else { continue }
                if parts[0] == "VmHWM" { memory.peakKiB = value }
                if parts[0] == "VmRSS" { memory.currentKiB = value }
            }
            return memory
        }
    }
}
