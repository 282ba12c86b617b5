#if os(Linux)
    import AuthKitTestSupport
    import Foundation
    import HTTPTypes
    import Logging
    import Testing
    @testable import AuthKit

    /// `CurlHTTPClient` (the default transport on Linux) keeps each worker's easy
    /// handle, and with it the connections of finished transfers (`CurlWorkers`).
    /// A connection is reused only when the previous answer was read to its end
    /// on a connection the server keeps open; never one a reader stopped midway,
    /// whose unread bytes would otherwise be read as the next answer.
    @Suite struct CurlConnectionReuseTests {
        static let token = #"{"access_token":"at-1","token_type":"Bearer","expires_in":3600}"#

        /// A pool of its own, so tests running beside this one do not take its
        /// workers; closed when the test ends, so that its threads do not stay parked.
        let pool = ClosingPool(keptIdle: 8)
        var workers: CurlWorkers { pool.workers }

        func client(_ server: TestHTTPServer) throws -> OAuth2Client {
            let descriptor = testDescriptor(
                id: "reuse", protocol: .oauth2, authorization: .init(url: "\(server.baseURL)/authorize"),
                token: .init(url: "\(server.baseURL)/token", clientAuthentication: .post), pkce: .s256)
            return try OAuth2Client(
                descriptor: descriptor, settings: ClientSettings(clientID: "app", clientSecret: "secret"),
                httpClient: CurlHTTPClient(timeout: 10, workers: workers))
        }

        func exchange(_ client: OAuth2Client) async throws -> Credential {
            let pending = try await client.startAuthorization(
                redirectURI: URL(string: "http://127.0.0.1:5000/callback")
            )
            .pending
            return try await client.exchange(code: "c", pending: pending)
        }

        /// A body its reader holds unread (an answer over 64 KiB, streamed,
        /// whose request's deadline scope has been left) stops a second past
        /// the request's deadline, freeing the worker and its connection:
        /// waiting inside libcurl's write callback, where libcurl's own time
        /// limit cannot act, it held both until the reader read again.
        @Test func aBodyNobodyReadsStopsAtItsDeadline() async throws {
            let server = RawResponseServer(
                .init(
                    head:
                        "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: 100000000\r\n\r\n",
                    repeating: String(repeating: "a", count: 16384)))
            try await server.start()
            defer { Task { await server.stop() } }
            let http = CurlHTTPClient(timeout: 30, workers: workers)
            let request = HTTPRequest(method: .get, url: URL(string: "\(server.baseURL)/large")!)
            // 3 s for the head to come (1 s was tight with every suite at once on two cores).
            let (head, body) = try await withDeadline(
                .seconds(3), display: "the test's server", stoppedBy: .stoppingItsTransfers
            ) {
                try await http.send(request, body: nil)
            }
            #expect(head.status.code == 200)
            let started = ContinuousClock.now
            while server.connectionsClosed == 0, ContinuousClock.now - started < .seconds(60) {
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(server.connectionsClosed == 1, "the unread body's connection was still open 60 s on")
            withExtendedLifetime(body) {}
        }

        @Test func aSecondTokenRequestToTheSameServerReusesTheConnection() async throws {
            try await withServer { server in
                server.route("POST", "/token") { _ in StubResponse.json(Self.token).keptAlive() }
                let client = try client(server)
                for _ in 0..<3 { #expect(try await exchange(client).accessToken == "at-1") }
                #expect(server.requests(to: "/token").count == 3)
                #expect(server.connections == 1, "three requests opened \(server.connections) connections")
            }
        }

        /// The path goes as given, dot segments included: libcurl removed
        /// them, and an OAuth 1.0a signature is over the path given (RFC 5849
        /// §3.4.1.2), so the server checked it against another.
        @Test func thePathIsSentAsGiven() async throws {
            try await withServer { server in
                server.route("GET", "/a/./b/../c") { _ in .json("{}") }
                let http = CurlHTTPClient(timeout: 10, workers: workers)
                let url = try #require(URL(string: "\(server.baseURL)/a/./b/../c?x=1"))
                let (head, body) = try await http.send(HTTPRequest(method: .get, url: url), body: nil)
                for try await _ in body {}
                #expect(head.status.code == 200)
                #expect(server.requests.map(\.uri) == ["/a/./b/../c?x=1"])
            }
        }

        /// libcurl's limit on a stalled transfer (under a byte a second for the
        /// timeout) was reported as "no data for 30 s" of a server that was
        /// sending, slowly; one that sends nothing is told apart.
        @Test func aStallIsToldFromSilence() async throws {
            try await withServer { server in
                server.route("GET", "/drip") { _ in .streaming(.drip(every: .milliseconds(1500))) }
                server.route("GET", "/silent") { _ in StubResponse.json("{}").delayed(by: .seconds(30)) }
                let client = CurlHTTPClient(timeout: 2, workers: workers)
                for (path, expected) in [
                    ("/drip", "it sent less than a byte a second for 2 s, and was cut off"),
                    ("/silent", "no answer for 2 s"),
                ] {
                    await #expect {
                        let (_, body) = try await client.send(
                            HTTPRequest(method: .get, url: URL(string: server.baseURL + path)!), body: nil)
                        for try await _ in body {}
                    } throws: { error in
                        guard case .network(_, let reason)? = error.authKitReason else { return false }
                        return reason.detail == expected
                    }
                }
            }
        }

        /// A deadline set far off to mean none (`.seconds(1 << 60)`, or
        /// `Int64.max` seconds) and a timeout of `.infinity` are no limit,
        /// not a crash: their milliseconds, or whole seconds, overflowed
        /// `Int` on the way to libcurl and stopped the process.
        @Test func aDeadlineOrTimeoutFarOffIsNoLimit() async throws {
            try await withServer { server in
                server.route("GET", "/me") { _ in .json("{}") }
                let url = try #require(URL(string: "\(server.baseURL)/me"))
                for (timeout, deadline) in [
                    (10, Duration.seconds(1 << 60)), (10, .seconds(Int64.max)), (TimeInterval.infinity, .seconds(30)),
                ] {
                    let transport = FlowTransport(
                        http: CurlHTTPClient(timeout: timeout, workers: workers), logger: Logger(label: "test"))
                    let response = try await transport.send(
                        OutgoingRequest(method: .get, url: url), step: .apiRequest,
                        policy: RequestPolicy(redirects: .refuse, maximumBodySize: 1 << 20, deadline: deadline))
                    #expect(response.status == 200, "timeout \(timeout), deadline \(deadline)")
                }
            }
            #expect(Duration.seconds(1 << 60).int32Milliseconds == nil)
            #expect(Duration.milliseconds(1500).int32Milliseconds == 1500)
            #expect(Duration.milliseconds(-5).int32Milliseconds == 1)
        }

        /// A body dropped unread (a caller that wanted only the head) stops
        /// its transfer: its worker is idle again, not waiting for ever for
        /// a reader to make room for an endless body.
        @Test func aBodyDroppedUnreadStopsItsTransfer() async throws {
            try await withServer { server in
                server.route("GET", "/flood") { _ in .streaming(.flood, headers: [("Content-Type", "text/plain")]) }
                let http = CurlHTTPClient(timeout: 10, workers: workers)
                let url = try #require(URL(string: "\(server.baseURL)/flood"))
                do {
                    let (head, _) = try await http.send(HTTPRequest(method: .get, url: url), body: nil)
                    #expect(head.status.code == 200)
                }
                let deadline = ContinuousClock.now + .seconds(10)
                while workers.idleCount == 0, ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(20))
                }
                #expect(workers.idleCount == 1, "the worker is still held by a body nobody reads")
            }
        }

        @Test func aConnectionTheServerClosesIsNotReused() async throws {
            try await withServer { server in
                server.route("POST", "/token") { _ in .json(Self.token) } // Connection: close
                let client = try client(server)
                for _ in 0..<2 { #expect(try await exchange(client).accessToken == "at-1") }
                #expect(server.connections == 2)
            }
        }

        /// The first answer is larger than the 1 MiB cap, on a connection the
        /// server keeps open: AuthKit stops reading it. The second request must
        /// get its own answer on a new connection, not the first one's remains.
        @Test func aConnectionLeftMidBodyIsNeverReused() async throws {
            try await withServer { server in
                let oversized =
                    #"{"access_token":""# + String(repeating: "x", count: 4 << 20) + #"","token_type":"Bearer"}"#
                // The server records a request before routing it: the first one gets the oversized answer.
                server.route("POST", "/token") { [server] _ in
                    StubResponse.json(server.requests(to: "/token").count == 1 ? oversized : Self.token).keptAlive()
                }
                let client = try client(server)
                await #expect(throws: AuthKitError.responseTooLarge(url: "\(server.baseURL)/token", limit: 1 << 20)) {
                    _ = try await exchange(client)
                }
                #expect(try await exchange(client).accessToken == "at-1")
                #expect(server.connections == 2, "the stopped connection was reused")
            }
        }

        /// An answer followed on its kept-alive connection by more bytes than its
        /// `Content-Length` — here a whole second answer, written before the
        /// second request was sent (response smuggling). The next request must
        /// not read that planted answer as its own.
        @Test func bytesPastAnAnswerAreNeverReadAsTheNextOne() async throws {
            let planted = #"{"access_token":"planted","token_type":"Bearer"}"#
            let server = RawResponseServer(
                RawResponseServer.Script(
                    head:
                        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: \(Self.token.utf8.count)\r\n\r\n\(Self.token)"
                        + "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: \(planted.utf8.count)\r\n\r\n\(planted)",
                    repeating: "", interval: .hours(1))) // the connection stays open
            try await server.start()
            defer { Task { await server.stop() } }
            let descriptor = testDescriptor(
                id: "reuse", protocol: .oauth2, authorization: .init(url: "\(server.baseURL)/authorize"),
                token: .init(url: "\(server.baseURL)/token", clientAuthentication: .post), pkce: .s256)
            let client = try OAuth2Client(
                descriptor: descriptor, settings: ClientSettings(clientID: "app", clientSecret: "secret"),
                httpClient: CurlHTTPClient(timeout: 10, workers: workers))
            #expect(try await exchange(client).accessToken == "at-1")
            // A new connection gets the script's first answer again; a reused one
            // would hand back the planted one.
            #expect(try await exchange(client).accessToken == "at-1")
        }

        /// Transfers at once each get a worker; afterwards no more than the kept
        /// number wait idle, and the next request still gets its answer.
        @Test func concurrentTransfersEachGetAWorker() async throws {
            try await withServer { server in
                server.route("POST", "/token") { _ in StubResponse.json(Self.token).keptAlive() }
                let client = try client(server)
                try await withThrowingTaskGroup(of: String.self) { group in
                    for _ in 0..<16 { group.addTask { try await exchange(client).accessToken } }
                    for try await token in group { #expect(token == "at-1") }
                }
                #expect(server.requests(to: "/token").count == 16)
                #expect(workers.idleCount <= workers.keptIdle)
                #expect(try await exchange(client).accessToken == "at-1")
            }
        }

        /// Each kept worker reuses the connections its handle left open; a
        /// worker that ends (more were busy than are kept idle) takes its
        /// own with it, since libcurl does not support sharing a connection
        /// cache between threads (the handles share TLS sessions and DNS).
        @Test func keptWorkersKeepTheirConnections() async throws {
            let few = ClosingPool(keptIdle: 2)
            try await withServer { server in
                server.route("POST", "/token") { _ in StubResponse.json(Self.token).keptAlive() }
                let descriptor = testDescriptor(
                    id: "reuse", protocol: .oauth2, authorization: .init(url: "\(server.baseURL)/authorize"),
                    token: .init(url: "\(server.baseURL)/token", clientAuthentication: .post), pkce: .s256)
                let client = try OAuth2Client(
                    descriptor: descriptor, settings: ClientSettings(clientID: "app", clientSecret: "secret"),
                    httpClient: CurlHTTPClient(timeout: 10, workers: few.workers))
                for _ in 0..<3 {
                    try await withThrowingTaskGroup(of: String.self) { group in
                        for _ in 0..<4 { group.addTask { try await exchange(client).accessToken } }
                        for try await token in group { #expect(token == "at-1") }
                    }
                }
                #expect(server.requests(to: "/token").count == 12)
                // Each round needs four. The two workers kept reuse their own
                // connections; the other two end after every round, with
                // theirs (libcurl does not share connections across threads),
                // and new workers open new ones: 4 + 2 + 2.
                #expect(server.connections <= 8, "12 requests, 4 at a time, opened \(server.connections) connections")
            }
        }

        /// A transfer runs on a thread named `authkit.curl`, which `top -H`,
        /// `ps -L` and a debugger show; read from inside the transfer, by the
        /// thread itself.
        @Test func transfersRunOnThreadsNamedForThem() async throws {
            try CurlHTTPClient.loadLibrary(display: "test")
            let pool = CurlWorkers(keptIdle: 0) // the worker ends after its transfer
            let name = await withCheckedContinuation { (done: CheckedContinuation<String?, Never>) in
                pool.run(origin: "http://127.0.0.1:1") { slot in
                    let name = try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)
                    let hasHandle = if case .handle = slot { true } else { false }
                    return { done.resume(returning: hasHandle ? name : "no handle") }
                }
            }
            #expect(name?.trimmingCharacters(in: .newlines) == CurlWorkers.threadName)
            #expect(CurlWorkers.threadName == "authkit.curl")
        }

        /// A transfer's thread has the SCHED_BATCH policy (read from
        /// inside the transfer, field 41 of `/proc/thread-self/stat`): a
        /// worker woken by its answer waits for the running thread's turn,
        /// not preempting the pool thread that runs the callers' tasks.
        @Test func transfersRunOnThreadsThatDoNotPreemptWhenWoken() async throws {
            try CurlHTTPClient.loadLibrary(display: "test")
            let pool = CurlWorkers(keptIdle: 0)
            let stat = await withCheckedContinuation { (done: CheckedContinuation<String?, Never>) in
                pool.run(origin: "http://127.0.0.1:1") { _ in
                    let stat = try? String(contentsOfFile: "/proc/thread-self/stat", encoding: .utf8)
                    return { done.resume(returning: stat) }
                }
            }
            // After the name in parentheses (which may hold spaces), field 3 on.
            let fields = try #require(stat?.split(separator: ")").last?.split(separator: " "))
            let schedBatch = "3"
            #expect(
                fields.count > 38 && fields[38] == schedBatch,
                "policy field: \(fields.count > 38 ? fields[38] : "none")")
        }

        /// A transfer handed over at once after the last one (while its
        /// worker still looks for the next: ``CurlWorkers/spinBudget``) and
        /// one handed over well after (its worker asleep) both run, on the
        /// one worker's thread: neither hand-over is lost or needs a second
        /// thread.
        @Test func aTransferRightAfterAnotherAndOneLaterRunOnTheSameWorker() async throws {
            try CurlHTTPClient.loadLibrary(display: "test")
            let pool = ClosingPool(keptIdle: 1)
            // The thread the transfer ran on, or "lost" when it has not
            // reported within 10 s (a hand-over that never woke its worker).
            @Sendable func transferRecordingItsThread() async -> String {
                await withCheckedContinuation { (done: CheckedContinuation<String, Never>) in
                    let once = ResumedOnce(done)
                    pool.workers.run(origin: "http://127.0.0.1:1") { _ in
                        let link =
                            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self")) ?? "?"
                        return { once.resume(link) }
                    }
                    DispatchQueue.global().asyncAfter(deadline: .now() + 10) { once.resume("lost") }
                }
            }
            let first = await transferRecordingItsThread()
            let rightAfter = await transferRecordingItsThread()
            try await Task.sleep(for: .milliseconds(50)) // a thousand times the budget: the worker sleeps
            let later = await transferRecordingItsThread()
            #expect(first != "?" && rightAfter == first && later == first, "\(first), \(rightAfter), \(later)")
            #expect(pool.workers.idleCount == 1)
        }

        /// A process at its limit of threads: `pthread_create` fails with
        /// EAGAIN, and the request fails saying so, naming the endpoint.
        @Test func aTransferWithNoThreadSaysSo() async throws {
            let pool = CurlWorkers(keptIdle: 1, startThread: { _ in EAGAIN })
            let transport = FlowTransport(
                http: CurlHTTPClient(timeout: 5, workers: pool), logger: Logger(label: "test"))
            let request = OutgoingRequest(method: .post, url: URL(string: "http://127.0.0.1:1/token?code=c")!)
            await #expect(
                throws: AuthKitError.network(
                    url: "http://127.0.0.1:1/token?…", // the query is never shown
                    reason: .init(
                        .transportUnavailable,
                        "no thread could be started for the transfer (\(String(cString: strerror(EAGAIN)))); the process is at its limit of threads or memory"
                    ))
            ) {
                _ = try await transport.send(request, step: .tokenExchange)
            }
            #expect(pool.idleCount == 0)
        }

        /// Closing a pool ends the threads of its idle workers.
        @Test func closingAPoolEndsItsIdleWorkers() async throws {
            let started = ThreadIDs()
            let pool = CurlWorkers(
                keptIdle: 4,
                startThread: { body in
                    CurlWorkers.startDetachedThread {
                        started.addCurrent()
                        body()
                    }
                })
            try await withServer { server in
                server.route("POST", "/token") { _ in StubResponse.json(Self.token).keptAlive() }
                let transport = FlowTransport(
                    http: CurlHTTPClient(timeout: 10, workers: pool), logger: Logger(label: "test"))
                let request = OutgoingRequest(method: .post, url: URL(string: "\(server.baseURL)/token")!)
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for _ in 0..<3 { group.addTask { _ = try await transport.send(request, step: .tokenExchange) } }
                    try await group.waitForAll()
                }
            }
            let threads = started.all
            #expect(threads.count >= 1 && pool.idleCount == threads.count)
            #expect(
                threads.allSatisfy { FileManager.default.fileExists(atPath: "/proc/self/task/\($0)") },
                "a kept worker's thread ended")
            pool.close()
            #expect(pool.idleCount == 0)
            let deadline = ContinuousClock.now + .seconds(5)
            while threads.contains(where: { FileManager.default.fileExists(atPath: "/proc/self/task/\($0)") }),
                ContinuousClock.now < deadline
            {
                try await Task.sleep(for: .milliseconds(20))
            }
            let left = threads.filter { FileManager.default.fileExists(atPath: "/proc/self/task/\($0)") }
            #expect(left.isEmpty, "threads \(left) still run after close()")
        }
    }

    /// A test's own worker pool, closed when the test's suite value goes away.
    final class ClosingPool: Sendable {
        let workers: CurlWorkers
        init(keptIdle: Int) { workers = CurlWorkers(keptIdle: keptIdle) }
        deinit { workers.close() }
    }

    /// A continuation resumed by the first of its callers; the others are ignored.
    final class ResumedOnce: @unchecked Sendable {
        private let lock = NSLock()
        private var continuation: CheckedContinuation<String, Never>?
        init(_ continuation: CheckedContinuation<String, Never>) { self.continuation = continuation }
        func resume(_ value: String) {
            let waiting = lock.withLock { () -> CheckedContinuation<String, Never>? in
                defer { continuation = nil }
                return continuation
            }
            waiting?.resume(returning: value)
        }
    }

    /// Thread ids (as `/proc/self/task` lists them), each recorded by the thread itself.
    final class ThreadIDs: @unchecked Sendable {
        private let lock = NSLock()
        private var ids: [String] = []

        /// Records the calling thread: `/proc/thread-self` links to `PID/task/TID`.
        func addCurrent() {
            let link = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self")) ?? "?"
            lock.withLock { ids.append(String(link.split(separator: "/").last ?? "?")) }
        }

        var all: [String] { lock.withLock { ids } }
    }
#endif
