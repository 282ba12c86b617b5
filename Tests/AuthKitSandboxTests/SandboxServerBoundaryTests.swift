import AuthKit
import AuthKitTestSupport
import Dispatch
import Foundation
import Testing

@testable import AuthKitSandbox

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The sandbox's HTTP server against clients that misbehave on the wire: one
/// that announces a huge body, one that streams a chunked body without end,
/// one that connects and says nothing. Each would hold the server (a
/// descriptor, a thread's time) for as long as the client liked before.
@Suite struct SandboxServerBoundaryTests {
    /// Runs `body` with a server that answers every request 200 "ok".
    private func withServer(
        requestTimeout: Duration = SandboxHTTPServer.standardRequestTimeout,
        _ body: (Int) async throws -> Void
    ) async throws {
        // Answered at once, on the event loop, as the sandbox answers a
        // request without a signature to check.
        let server = SandboxHTTPServer(
            requestTimeout: requestTimeout, respond: { _ in .empty(status: 200, step: "test", summary: "ok") },
            respondNow: { _ in .empty(status: 200, step: "test", summary: "ok") })
        let port = try await server.start(port: 0)
        do {
            try await body(port)
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }

    /// A path longer than any endpoint's is refused before routing (414),
    /// and the matcher decides each position once: a 75 KB path of repeated
    /// literals had it try every split, for half a minute, on the server's
    /// only thread.
    @Test func longPathsAreRefusedAndPathsAreMatchedInTime() async throws {
        try await withServer { port in
            let long = "/x" + String(repeating: "/api/v3/applications/b/token", count: 400)
            let refused = try await RawHTTP.request(long, method: "DELETE", port: port)
            #expect(refused.status == 414)
            let fine = try await RawHTTP.request("/token?" + String(repeating: "a", count: 9000), port: port)
            #expect(fine.status == 200, "the query is not the path")
        }
        let pattern = TemplatePattern("/{host}/api/v3/applications/{client_id}/token")
        #expect(
            pattern.match("/h.example/api/v3/applications/c1/token", decodingPercent: true)
                == ["host": "h.example", "client_id": "c1"])
        // GitLab's {host} may hold a path (GitLab under a relative URL root).
        #expect(
            TemplatePattern("/{host}/oauth/authorize").match("/git.example.com/gitlab/oauth/authorize")
                == ["host": "git.example.com/gitlab"])
        // A path made to make the matcher try every split: decided once per
        // position, at once (a bound on a hang, not a speed check).
        let started = ContinuousClock.now
        let hostile = "/x" + String(repeating: "/api/v3/applications/b/token", count: 280) + "/zz"
        #expect(pattern.match(hostile, decodingPercent: true) == nil)
        #expect(ContinuousClock.now - started < .seconds(10))
        #expect(TemplatePattern("Bearer {t}").match("Bearer a/b+c=") == ["t": "a/b+c="])
    }

    /// The connection's deadline moves past `--refresh-delay`: it closed
    /// the connection at the deadline, so a delay above it dropped every refresh.
    @Test func aRefreshDelayedPastTheDeadlineIsStillAnswered() async throws {
        let server = SandboxHTTPServer(
            requestTimeout: .milliseconds(300), respond: { _ in .empty(status: 200, step: "test", summary: "ok") },
            respondNow: { _ in .empty(status: 200, step: "test", summary: "ok") })
        server.refreshDelay = .milliseconds(900)
        let port = try await server.start(port: 0)
        defer { Task { await server.stop() } }
        let body = "grant_type=refresh_token&refresh_token=r"
        let answer = try await RawHTTP.send(
            Data(
                "POST /token HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
                    .utf8), port: port)
        #expect(answer.status == 200)
    }

    @Test func anAnnouncedHugeBodyIsRefusedBeforeItIsSent() async throws {
        try await withServer { port in
            let head =
                "POST /token HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 1000000000\r\n\r\n"
            // Nothing of the body is sent: the answer must come from the head alone.
            let response = try await RawHTTP.send(Data(head.utf8), port: port)
            #expect(response.status == 413)
        }
    }

    @Test func anEndlessChunkedBodyIsCutOffAtTheLimit() async throws {
        try await withServer { port in
            let outcome = try await blocking { () -> (sent: Int, answer: String) in
                let fd = try RawHTTP.connect(port: port)
                defer { close(fd) }
                try RawHTTP.write(
                    fd, Data("POST /token HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n".utf8))
                let chunk =
                    Data("10000\r\n".utf8) + Data(repeating: UInt8(ascii: "a"), count: 0x10000) + Data("\r\n".utf8)
                var sent = 0
                // Up to 64 MiB; the server must stop this long before.
                while sent < 64 << 20 {
                    do { try RawHTTP.write(fd, chunk) } catch { break }
                    sent += 0x10000
                }
                return (sent, String(decoding: (try? RawHTTP.readUntilClosed(fd)) ?? Data(), as: UTF8.self))
            }
            #expect(outcome.sent < 64 << 20, "the server read \(outcome.sent) bytes and still wanted more")
            // The 413 may be lost to a reset when the client is still sending as
            // the server closes; when anything arrives, it is the 413.
            #expect(outcome.answer.isEmpty || outcome.answer.hasPrefix("HTTP/1.1 413"), "\(outcome.answer.prefix(80))")
        }
    }

    @Test func aSilentConnectionIsClosedAndOthersAreStillServed() async throws {
        try await withServer(requestTimeout: .milliseconds(300)) { port in
            let closedAfter = try await blocking { () -> Duration in
                let fd = try RawHTTP.connect(port: port)
                defer { close(fd) }
                let start = ContinuousClock.now
                _ = try RawHTTP.readUntilClosed(fd) // connection-level receive timeout: 10 s
                return ContinuousClock.now - start
            }
            #expect(closedAfter < .seconds(5), "the server held a silent connection \(closedAfter)")
            let response = try await RawHTTP.request("/", port: port)
            #expect(response.status == 200)
        }
    }

    /// Requests the HTTP layer refuses before any route sees them are in the
    /// sandbox's log too (`authkit sandbox serve` prints it), with their
    /// line when one was read and never the query.
    @Test func requestsRefusedBeforeRoutingAreLogged() async throws {
        try await Sandbox.with(emulating: try bundled("qiita")) { sandbox in
            let port = try #require(sandbox.baseURL.port)
            let huge = "POST /token?code=SECRETCODE HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1000000000\r\n\r\n"
            #expect(try await RawHTTP.send(Data(huge.utf8), port: port).status == 413)
            let oversized = try await RawHTTP.request(
                "/x", port: port, extraHeaders: "X-Big: \(String(repeating: "a", count: 100_000))\r\n")
            #expect(oversized.status == 400)
            let garbage = try await RawHTTP.send(Data("NOT HTTP AT ALL\r\n\r\n".utf8), port: port)
            #expect(garbage.status == 400)
            // The 400s are logged as the connection closes, after the answer was read.
            var events = sandbox.events
            for _ in 0..<100 where events.count < 3 {
                try await Task.sleep(for: .milliseconds(20))
                events = sandbox.events
            }
            #expect(events.count == 3, "\(events)")
            #expect(
                events.first?.description
                    == "POST /token → 413: refused before routing: request body over 1048576 bytes", "\(events)")
            #expect(
                events.contains { $0.status == 400 && $0.summary.contains("header section over NIO's 80 KiB") },
                "\(events)")
            #expect(
                events.contains { $0.status == 400 && $0.summary.contains("not a well-formed HTTP/1.1 request") },
                "\(events)")
            #expect(!events.description.contains("SECRETCODE"))
        }
    }

    /// Waits (up to 10 s) until `condition` holds; fails the test if it never does.
    private func until(_ what: String, _ condition: () -> Bool) async throws {
        for _ in 0..<1000 where !condition() { try await Task.sleep(for: .milliseconds(10)) }
        #expect(condition(), "never: \(what)")
    }

    /// Holds the calling thread until `semaphore` is signalled (called from a
    /// check, it holds the checks' one thread, as a slow check would).
    private static func hold(_ semaphore: DispatchSemaphore) { semaphore.wait() }

    /// Requests with a signature to check wait for one thread: at most
    /// `maxPendingSignatureChecks` at once (each holds its body, up to a
    /// MiB), one more is answered 503 with Retry-After, and one whose client
    /// has gone by its turn is dropped unchecked. The queue had no bound, and
    /// checked requests nobody waited for: 1,000 posts of 1 MB with `DPoP: x`
    /// held 900 MB and kept valid proofs waiting for minutes.
    @Test func signatureChecksWaitingAreBoundedAndGoneClientsAreSkipped() async throws {
        let first = DispatchSemaphore(value: 0)
        let checked = LockedValue(0)
        let refused = LockedValue<[Int]>([])
        let server = SandboxHTTPServer(
            refused: { _, status, _ in refused.withLock { $0.append(status) } },
            respond: { _ in
                if checked.withLock({ count -> Int in
                    count += 1
                    return count
                }) == 1 {
                    Self.hold(first)
                }
                return .empty(status: 200, step: "test", summary: "ok")
            }, respondNow: { _ in nil })
        let port = try await server.start(port: 0)
        let request = Data("POST /token HTTP/1.1\r\nHost: 127.0.0.1\r\nDPoP: x\r\nContent-Length: 0\r\n\r\n".utf8)
        let held = try RawHTTP.connect(port: port)
        var waiting = [Int32]()
        do {
            try RawHTTP.write(held, request)
            try await until("the first check started") { checked.current == 1 }
            for _ in 1..<SandboxHTTPServer.maxPendingSignatureChecks {
                let fd = try RawHTTP.connect(port: port)
                waiting.append(fd)
                try RawHTTP.write(fd, request)
            }
            try await until("the queue is full") {
                server.pendingSignatureChecks == SandboxHTTPServer.maxPendingSignatureChecks
            }
            let busy = try await RawHTTP.send(request, port: port)
            #expect(busy.status == 503 && busy.header("Retry-After") == "1", "\(busy.status)")
            #expect(server.pendingSignatureChecks == SandboxHTTPServer.maxPendingSignatureChecks)
            // The waiting clients go away before their turn.
            for fd in waiting { close(fd) }
            waiting = []
            try await until("the server saw them go") { server.openConnections == 1 }
        } catch {
            first.signal()
            throw error
        }
        first.signal()
        let answer = try await blocking { try RawHTTP.readResponse(held, headOnly: false) }
        close(held)
        #expect(answer.status == 200)
        try await until("every check ended") { server.pendingSignatureChecks == 0 }
        // Each dropped request is said on its event loop after its place in
        // the queue is freed: waited for (a loaded run counted 38 of 63).
        try await until("every dropped request was said") {
            refused.current.filter { $0 == 499 }.count >= SandboxHTTPServer.maxPendingSignatureChecks - 1
        }
        #expect(checked.current == 1, "requests whose client had gone were checked")
        #expect(refused.current.filter { $0 == 499 }.count == SandboxHTTPServer.maxPendingSignatureChecks - 1)
        #expect(refused.current.filter { $0 == 503 }.count == 1)
        await server.stop()
    }

    /// Idle connections are capped: past `maxConnections`, the oldest one
    /// that has not sent its request is closed, so a request still gets in.
    /// 250 idle connections used up what `ulimit -n 256` allowed, and a
    /// legitimate request was never accepted.
    @Test func idleConnectionsAreCappedOldestFirst() async throws {
        // A deadline past the socket's 10 s read timeout: only the cap closes them.
        try await withServer(requestTimeout: .seconds(60)) { port in
            var idle = [Int32]()
            defer { for fd in idle { close(fd) } }
            for _ in 0..<(SandboxHTTPServer.maxConnections + 10) { idle.append(try RawHTTP.connect(port: port)) }
            let response = try await RawHTTP.request("/", port: port)
            #expect(response.status == 200)
            // The oldest were closed: reading one ends at once, with nothing.
            let oldest = idle[0]
            let read = try await blocking { try RawHTTP.readUntilClosed(oldest) }
            #expect(read.isEmpty)
            // No more than the cap are left open: in a burst (NIO accepts
            // several per read) each new one picked the same, still-counted
            // victim, and a few got past the cap at every burst.
            var stillOpen = idle.count
            for _ in 0..<50 {
                try await Task.sleep(for: .milliseconds(100))
                stillOpen =
                    idle.dropFirst().filter { fd in
                        var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                        return poll(&entry, 1, 0) == 0 // nothing to read: not closed by the server
                    }.count
                if stillOpen <= SandboxHTTPServer.maxConnections { break }
            }
            #expect(stillOpen <= SandboxHTTPServer.maxConnections, "\(stillOpen) idle connections left open")
        }
    }

    /// RFC 9112 §3.2: an HTTP/1.1 request without `Host`, or any request with
    /// two, gets 400 (both were answered 200). HTTP/1.0 may leave it out.
    @Test func aRequestWithoutOneHostIsRefused() async throws {
        try await withServer { port in
            let none = try await RawHTTP.send(Data("GET / HTTP/1.1\r\nConnection: close\r\n\r\n".utf8), port: port)
            #expect(none.status == 400)
            let two = try await RawHTTP.send(
                Data("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n".utf8),
                port: port)
            #expect(two.status == 400)
            let old = try await RawHTTP.send(Data("GET / HTTP/1.0\r\n\r\n".utf8), port: port)
            #expect(old.status == 200)
        }
    }

    @Test func aBodyWithinTheLimitIsStillServed() async throws {
        try await withServer { port in
            let body = String(repeating: "a", count: SandboxHTTPServer.maxBodyBytes)
            let request = "POST /token HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: \(body.utf8.count)\r\n\r\n" + body
            let response = try await RawHTTP.send(Data(request.utf8), port: port)
            #expect(response.status == 200)
        }
    }
}
