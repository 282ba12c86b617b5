#if os(Linux)
    import AuthKitTestSupport
    import Foundation
    import HTTPTypes
    import Testing
    @testable import AuthKit

    /// The default transport's event loop (`CurlLoop`), which sends a body
    /// read whole (a token-endpoint call) when it is the one transfer in
    /// flight. Every hostile-server clause runs through it in
    /// `TransportContractTests` (its `eventLoop` transport); these are what
    /// only a loop could get wrong: the connection it keeps, the body it
    /// holds instead of streaming, and a transfer stopped midway. One at a
    /// time: the loop's connections are one cache of 32 for the process, and
    /// the many transfers at once of one test closed the kept connection of
    /// another (the oldest idle one goes first).
    @Suite(.serialized) struct CurlLoopTests {
        static let token = #"{"access_token":"at-1","token_type":"Bearer","expires_in":3600}"#

        func loop() throws -> CurlLoop {
            try CurlHTTPClient.loadLibrary(display: "test")
            return try #require(CurlLoop.shared, "no event loop could be started")
        }

        func post(_ url: String, _ form: String) throws -> (HTTPRequest, URL, Data) {
            let url = try #require(URL(string: url))
            var fields = HTTPFields()
            fields[.contentType] = "application/x-www-form-urlencoded"
            return (HTTPRequest(method: .post, url: url, headerFields: fields), url, Data(form.utf8))
        }

        /// Three token calls one after another: each request arrives whole
        /// (method, type, body), each answer comes back whole with no stream
        /// to read, and the second and third go over the first's connection.
        @Test func aConnectionIsKeptForTheNextTransfer() async throws {
            let loop = try loop()
            try await withServer { server in
                server.route("POST", "/token") { _ in StubResponse.json(Self.token).keptAlive() }
                let client = CurlHTTPClient()
                for index in 0..<3 {
                    let (request, url, body) = try post("\(server.baseURL)/token", "code=c\(index)&x=%2B")
                    let (head, answer) = try await client.send(
                        request, url: url, body: body, collectingAtMost: 1 << 20, on: loop)
                    #expect(head.status == .ok)
                    #expect(answer.complete == Data(Self.token.utf8), "held whole, not streamed")
                }
                let received = server.requests(to: "/token")
                #expect(received.map(\.bodyText) == ["code=c0&x=%2B", "code=c1&x=%2B", "code=c2&x=%2B"])
                #expect(received.allSatisfy { $0.method == "POST" })
                #expect(received.allSatisfy { $0.header("Content-Type") == "application/x-www-form-urlencoded" })
                #expect(server.connections == 1, "three transfers opened \(server.connections) connections")
            }
        }

        /// An answer larger than the caller takes is held only to one byte
        /// past the cap (never paused: libcurl 7.88 then held all that one
        /// read inflated to), so the caller's refusal names the cap.
        @Test func aBodyPastTheCapIsHeldToOneByteMore() async throws {
            let loop = try loop()
            let bomb = GzipBomb.make(inflatedSize: 64 << 20)
            try await withServer { server in
                server.route("POST", "/token") { _ in
                    StubResponse(status: 200, headers: [("Content-Encoding", "gzip")], body: bomb)
                }
                let (request, url, body) = try post("\(server.baseURL)/token", "code=c")
                let (head, answer) = try await CurlHTTPClient().send(
                    request, url: url, body: body, collectingAtMost: 100_000, on: loop)
                #expect(head.status == .ok)
                let held = try #require(answer.complete, "held whole, not streamed")
                #expect(held.count == 100_001 && held.allSatisfy { $0 == 0 })
            }
        }

        /// A server that sends the first line of its answer, then one header
        /// line every 30 s: a transfer waits on it until stopped.
        func stalledServer() async throws -> RawResponseServer {
            let server = RawResponseServer(
                .init(head: "HTTP/1.1 200 OK\r\n", repeating: "X-Wait: 1\r\n", interval: .seconds(30)))
            try await server.start()
            return server
        }

        /// Waits (up to 10 s) until the server has seen `count` connections close.
        func waitForClose(of server: RawResponseServer, count: Int = 1) async throws {
            let started = ContinuousClock.now
            while server.connectionsClosed < count, ContinuousClock.now - started < .seconds(10) {
                try await Task.sleep(for: .milliseconds(20))
            }
        }

        /// A transfer cancelled while its answer is awaited ends at once for
        /// its caller, and on the loop too: its connection closes within
        /// seconds (taken off the loop, or stopped at libcurl's next
        /// once-a-second callback), not when the server next writes, 30 s on.
        @Test(.timeLimit(.minutes(1))) func aCancelledTransferEndsWithItsConnection() async throws {
            let loop = try loop()
            let server = try await stalledServer()
            defer { Task { await server.stop() } }
            let (request, url, body) = try post("\(server.baseURL)/token", "code=c")
            let waiting = Task {
                try await CurlHTTPClient().send(request, url: url, body: body, collectingAtMost: 1 << 20, on: loop)
            }
            while server.bytesReceived == 0 { try await Task.sleep(for: .milliseconds(20)) }
            waiting.cancel()
            await #expect(throws: CancellationError.self) { _ = try await waiting.value }
            try await waitForClose(of: server)
            #expect(server.connectionsClosed == 1, "the cancelled transfer's connection is still open")
        }

        /// A request's deadline stops a transfer on the loop as it stops one
        /// on a worker: the caller hears of it at the deadline, named so, and
        /// the connection closes then.
        @Test(.timeLimit(.minutes(1))) func aDeadlineStopsATransferOnTheLoop() async throws {
            let loop = try loop()
            let server = try await stalledServer()
            defer { Task { await server.stop() } }
            let (request, url, body) = try post("\(server.baseURL)/token", "code=c")
            await #expect {
                _ = try await withDeadline(
                    .milliseconds(500), display: "the test's server", stoppedBy: .stoppingItsTransfers
                ) {
                    try await CurlHTTPClient().send(request, url: url, body: body, collectingAtMost: 1 << 20, on: loop)
                }
            } throws: { error in
                guard case .network(_, let reason)? = error.authKitReason else { return false }
                return reason.kind == .timedOut
            }
            try await waitForClose(of: server)
            #expect(server.connectionsClosed == 1, "the stopped transfer's connection is still open")
        }

        /// Many transfers on the loop at once (callers and the loop's thread
        /// taking its lock in turn), a third of them cancelled and a
        /// third given a deadline shorter than the server's delay: each ends
        /// once, the right way, and the loop goes on serving (jobs handed
        /// back and taken again, a cancel that comes after the end doing
        /// nothing to the next transfer on that job).
        @Test(.timeLimit(.minutes(2))) func manyTransfersCancelledOrStoppedEachEndOnce() async throws {
            let loop = try loop()
            try await withServer { server in
                server.route("POST", "/token") { request in
                    let delay = Int64(request.bodyText.split(separator: "=").last.flatMap { Int($0) } ?? 0)
                    let answer = StubResponse.json(#"{"n":"\#(request.bodyText)"}"#).keptAlive()
                    return answer.delayed(by: .milliseconds(delay))
                }
                let client = CurlHTTPClient()
                let outcomes = try await withThrowingTaskGroup(of: String.self) { group in
                    for index in 0..<120 {
                        group.addTask {
                            let delay = [0, 5, 40][index % 3]
                            let form = "i=\(index)&delay=\(delay)"
                            let (request, url, body) = try post("\(server.baseURL)/token", form)
                            let call = Task {
                                try await withDeadline(
                                    index % 3 == 2 ? .milliseconds(10) : .seconds(30), display: "the test's server",
                                    stoppedBy: .stoppingItsTransfers
                                ) {
                                    try await client.send(
                                        request, url: url, body: body, collectingAtMost: 4096, on: loop)
                                }
                            }
                            if index % 3 == 1 { call.cancel() }
                            do {
                                let (head, answer) = try await call.value
                                let expected = Data(#"{"n":"\#(form)"}"#.utf8)
                                return head.status == .ok && answer.complete == expected ? "answered" : "wrong answer"
                            } catch is CancellationError {
                                return index % 3 == 1 ? "cancelled" : "cancelled unasked"
                            } catch AuthKitError.Code.cancelled {
                                return index % 3 == 1 ? "cancelled" : "cancelled unasked"
                            } catch let error as AuthKitError {
                                guard case .network(_, let reason) = error.reason, reason.kind == .timedOut else {
                                    throw error
                                }
                                return index % 3 == 2 ? "stopped" : "stopped unasked"
                            }
                        }
                    }
                    return try await group.reduce(into: [String: Int]()) { $0[$1, default: 0] += 1 }
                }
                // Every answered call got its own answer; the cancelled ones
                // may have been answered first, the others not stopped.
                #expect(outcomes["wrong answer"] == nil, "\(outcomes)")
                #expect(outcomes["cancelled unasked"] == nil && outcomes["stopped unasked"] == nil, "\(outcomes)")
                #expect(outcomes.values.reduce(0, +) == 120)
                #expect((outcomes["answered"] ?? 0) >= 40, "\(outcomes)")
                // The loop still serves.
                let (request, url, body) = try post("\(server.baseURL)/token", "after=0")
                let (head, _) = try await client.send(request, url: url, body: body, collectingAtMost: 4096, on: loop)
                #expect(head.status == .ok)
            }
        }
    }
#endif
