import AuthKitTestSupport
import Foundation
import HTTPTypes
import Logging
import Testing

@testable import AuthKit

/// The key-set cache against a counting server: one fetch however many
/// callers ask at once, failed fetches rate-limited as successful ones, and
/// kept copies that age out (a withdrawn key stops verifying).
@Suite struct KeySetCacheTests {
    static let transport = FlowTransport(http: defaultHTTPClient(), logger: Logger(label: "test"))

    static func keySet(kid: String) -> String {
        #"{"keys":[{"kty":"EC","crv":"P-256","kid":"\#(kid)","use":"sig","x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU","y":"x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"}]}"#
    }

    static func kids(_ set: JSONWebKeySet) -> [String] {
        set.candidates(for: .es256, kid: nil).compactMap { $0.text("kid") }
    }

    /// Twenty callers on an empty cache, then twenty asking for a fresh copy
    /// (an unknown `kid` each), while the set is held until all twenty
    /// wait for it: one fetch each time.
    @Test func callersAtOnceShareOneFetch() async throws {
        try await withServer { server in
            let release = DispatchSemaphore(value: 0)
            server.route("GET", "/jwks") { _ in
                _ = release.wait(timeout: .now() + 30)
                return .json(Self.keySet(kid: "k1"))
            }
            let url = try #require(URL(string: server.baseURL + "/jwks"))
            let cache = KeySetCache(minimumRefetchInterval: 0)
            func twenty(refetch: Bool) async throws -> [[String]] {
                try await withThrowingTaskGroup(of: [String].self) { group in
                    for _ in 0..<20 {
                        group.addTask {
                            Self.kids(try await cache.keys(at: url, refetch: refetch, transport: Self.transport))
                        }
                    }
                    let end = ContinuousClock.now.advanced(by: .seconds(30))
                    while await cache.waitingCallers(at: url, transport: Self.transport) < 20, ContinuousClock.now < end
                    {
                        try await Task.sleep(for: .milliseconds(5))
                    }
                    release.signal()
                    return try await group.reduce(into: []) { $0.append($1) }
                }
            }
            #expect(try await twenty(refetch: false).allSatisfy { $0 == ["k1"] })
            #expect(server.requests(to: "/jwks").count == 1)
            #expect(try await twenty(refetch: true).allSatisfy { $0 == ["k1"] })
            #expect(server.requests(to: "/jwks").count == 2)
        }
    }

    /// A fetch started by a caller in a shorter deadline's scope runs on its
    /// own: the set answers after 300 ms, past the end of the first caller's
    /// scope at 100 ms, and both callers get it. Inheriting the scope, it
    /// failed for every caller waiting on it.
    @Test func aSharedFetchRunsOnItsOwnDeadline() async throws {
        try await withServer { server in
            server.route("GET", "/jwks") { _ in .json(Self.keySet(kid: "k1")).delayed(by: .milliseconds(300)) }
            let url = try #require(URL(string: server.baseURL + "/jwks"))
            let cache = KeySetCache(minimumRefetchInterval: 0)
            let scope = DeadlineScope(deadline: ContinuousClock.now.advanced(by: .milliseconds(100)))
            let expiry = Task {
                try await Task.sleep(for: .milliseconds(100))
                scope.expire()
            }
            defer { expiry.cancel() }
            async let hurried = DeadlineScope.$current.withValue(scope) {
                try await cache.keys(at: url, refetch: false, transport: Self.transport)
            }
            try await Task.sleep(for: .milliseconds(30))
            let patient = try await cache.keys(at: url, refetch: false, transport: Self.transport)
            #expect(Self.kids(patient) == ["k1"])
            #expect(Self.kids(try await hurried) == ["k1"])
            #expect(server.requests(to: "/jwks").count == 1)
        }
    }

    /// A caller cancelled while the set is being fetched (a sign-in given
    /// up, a request handler gone) stops waiting at once; the fetch goes on
    /// for the other callers and the cache. It waited for the set to come,
    /// up to the request's 30 s.
    @Test func aCancelledCallerStopsWaitingForTheSharedFetch() async throws {
        try await withServer { server in
            // Answered once the test lets it: with a 5 s delay, a loaded
            // machine could answer before the second caller was checked.
            let release = DispatchSemaphore(value: 0)
            server.route("GET", "/jwks") { _ in
                _ = release.wait(timeout: .now() + 60)
                return .json(Self.keySet(kid: "k1"))
            }
            let url = try #require(URL(string: server.baseURL + "/jwks"))
            let cache = KeySetCache(minimumRefetchInterval: 0)
            let first = Task { try await cache.keys(at: url, refetch: false, transport: Self.transport) }
            let secondDone = LockedValue(false)
            let second = Task {
                defer { secondDone.withLock { $0 = true } }
                return try await cache.keys(at: url, refetch: false, transport: Self.transport)
            }
            let end = ContinuousClock.now.advanced(by: .seconds(30))
            while await cache.waitingCallers(at: url, transport: Self.transport) < 2, ContinuousClock.now < end {
                try await Task.sleep(for: .milliseconds(5))
            }
            first.cancel()
            await #expect(throws: AuthKitError.cancelled) { _ = try await first.value }
            #expect(!secondDone.current, "the cancelled caller waited for the fetch")
            release.signal()
            #expect(Self.kids(try await second.value) == ["k1"])
            #expect(Self.kids(try await cache.keys(at: url, refetch: false, transport: Self.transport)) == ["k1"])
            #expect(server.requests(to: "/jwks").count == 1)
        }
    }

    /// A fetch started from a refresh runs in a task of its own, not as
    /// the refresh's (`DedicatedTask`): a deadline there would cancel the
    /// refresh, and not stop the fetch every other caller waits for.
    @Test func aFetchFromARefreshIsNotTheRefreshsTask() async throws {
        let transport = KeySetAnsweringTransport(Self.keySet(kid: "k1"))
        let flow = FlowTransport(http: transport, logger: Logger(label: "test"))
        let url = try #require(URL(string: "https://idp.test/jwks"))
        let cache = KeySetCache()
        let refreshed = try await RefreshCoordinator().refresh(Credential(providerID: "p", accessToken: "a")) {
            #expect(DedicatedTask.current != nil)
            _ = try await cache.keys(at: url, refetch: false, transport: flow)
            return Credential(providerID: "p", accessToken: "b")
        }
        #expect(refreshed.accessToken == "b")
        #expect(transport.sentInADedicatedTask == [false])
    }

    /// At most `maximumSets` sets are kept, the least recently used let go:
    /// a server verifying tokens of issuers its users name kept them all.
    @Test func theLeastRecentlyUsedSetIsLetGo() async throws {
        try await withServer { server in
            for name in ["a", "b", "c"] {
                server.route("GET", "/jwks/\(name)") { _ in .json(Self.keySet(kid: name)) }
            }
            let cache = KeySetCache(maximumSets: 2)
            func keys(_ name: String) async throws -> [String] {
                let url = try #require(URL(string: server.baseURL + "/jwks/\(name)"))
                return Self.kids(try await cache.keys(at: url, refetch: false, transport: Self.transport))
            }
            var seen = [try await keys("a"), try await keys("b")]
            seen.append(try await keys("a")) // a kept copy: b is now the least recently used
            seen.append(try await keys("c")) // b let go
            seen += [try await keys("a"), try await keys("b")]
            #expect(seen == [["a"], ["b"], ["a"], ["c"], ["a"], ["b"]])
            #expect(server.requests(to: "/jwks/a").count == 1)
            #expect(server.requests(to: "/jwks/b").count == 2)
            #expect(server.requests(to: "/jwks/c").count == 1)
        }
    }

    /// A set that answers 500 is asked once per hold, not once per token;
    /// a refetch for an unknown key waits for the interval since the last
    /// attempt, failed ones included.
    @Test func failedFetchesAreRateLimitedToo() async throws {
        try await withServer { server in
            server.route("GET", "/jwks") { _ in .json("{}", status: 500) }
            let url = try #require(URL(string: server.baseURL + "/jwks"))
            let cache = KeySetCache(minimumRefetchInterval: 30)
            let start = Date()
            for second in 0..<4 {
                await #expect(throws: AuthKitError.IDTokenProblem.self) {
                    _ = try await cache.keys(
                        at: url, refetch: true, transport: Self.transport, now: start + Double(second))
                }
            }
            #expect(server.requests(to: "/jwks").count == 1)
            // Past the hold, it is asked again.
            _ = try? await cache.keys(at: url, refetch: false, transport: Self.transport, now: start + 6)
            #expect(server.requests(to: "/jwks").count == 2)

            // A kept copy: refetches for unknown keys are one per interval.
            server.route("GET", "/jwks") { _ in .json(Self.keySet(kid: "k1")) }
            _ = try await cache.keys(at: url, refetch: false, transport: Self.transport, now: start + 12)
            #expect(server.requests(to: "/jwks").count == 3)
            for second in 13..<20 {
                _ = try await cache.keys(at: url, refetch: true, transport: Self.transport, now: start + Double(second))
            }
            #expect(server.requests(to: "/jwks").count == 3)
            _ = try await cache.keys(at: url, refetch: true, transport: Self.transport, now: start + 43)
            #expect(server.requests(to: "/jwks").count == 4)
            // The clock stepped back an hour (a fast clock corrected): the
            // time since the last fetch is unknown, not negative, so a token
            // naming an unknown key still gets one refetch (none came for
            // the hour, and a rotated key failed every sign-in).
            _ = try await cache.keys(at: url, refetch: true, transport: Self.transport, now: start + 43 - 3600)
            #expect(server.requests(to: "/jwks").count == 5)
        }
    }

    /// A kept copy older than the maximum age is fetched again: the
    /// provider withdrew `k1`, and it stops verifying once that fetch is in.
    /// Meanwhile, and while the set cannot be fetched, the aged copy serves:
    /// callers waited for the fetch, up to its deadline when the endpoint
    /// hung (every sign-in, each time the copy aged). A caller whose token
    /// names a key the copy lacks waits for it.
    @Test func aKeptCopyAgesOut() async throws {
        try await withServer { server in
            server.route("GET", "/jwks") { _ in .json(Self.keySet(kid: "k1")) }
            let url = try #require(URL(string: server.baseURL + "/jwks"))
            let cache = KeySetCache(minimumRefetchInterval: 30, maximumAge: 600)
            let start = Date()
            #expect(
                Self.kids(try await cache.keys(at: url, refetch: false, transport: Self.transport, now: start)) == [
                    "k1"
                ])
            // The endpoint now takes 2 s to answer, with `k2`.
            server.route("GET", "/jwks") { _ in .json(Self.keySet(kid: "k2")).delayed(by: .seconds(2)) }
            let young = try await cache.keys(at: url, refetch: false, transport: Self.transport, now: start + 599)
            #expect(Self.kids(young) == ["k1"])
            let aged = try await cache.keys(at: url, refetch: false, transport: Self.transport, now: start + 600)
            #expect(Self.kids(aged) == ["k1"], "the aged copy, at once, while it is fetched again")
            let during = try await cache.keys(at: url, refetch: false, transport: Self.transport, now: start + 601)
            #expect(Self.kids(during) == ["k1"])
            // A copy an idle server kept far longer is not taken on trust while
            // it is fetched: that caller waits (here for the fetch under way).
            let idle = try await cache.keys(at: url, refetch: false, transport: Self.transport, now: start + 3000)
            #expect(Self.kids(idle) == ["k2"])
            // A token naming a key the copy lacks waits for that fetch (no second one).
            let unknownKey = try await cache.keys(at: url, refetch: true, transport: Self.transport, now: start + 602)
            #expect(Self.kids(unknownKey) == ["k2"])
            #expect(server.requests(to: "/jwks").count == 2)

            server.route("GET", "/jwks") { _ in .json("{}", status: 503) }
            let kept = try await cache.keys(at: url, refetch: false, transport: Self.transport, now: start + 1300)
            #expect(Self.kids(kept) == ["k2"])
            for _ in 0..<200 where server.requests(to: "/jwks").count < 3 {
                try await Task.sleep(for: .milliseconds(20))
            }
            #expect(server.requests(to: "/jwks").count == 3)
            // Until the limit: an hour from its fetch (at start + 600), a copy
            // that could not be renewed since is not trusted any more, whether
            // the attempt is made now or was made a moment ago.
            let young2 = try await cache.keys(at: url, refetch: false, transport: Self.transport, now: start + 1310)
            #expect(Self.kids(young2) == ["k2"], "within the refetch interval, no request")
            await #expect(throws: AuthKitError.IDTokenProblem.self) {
                _ = try await cache.keys(at: url, refetch: false, transport: Self.transport, now: start + 600 + 3600)
            }
            await #expect(throws: AuthKitError.IDTokenProblem.self) {
                _ = try await cache.keys(at: url, refetch: false, transport: Self.transport, now: start + 600 + 3610)
            }
            // Fetched again once the endpoint answers.
            server.route("GET", "/jwks") { _ in .json(Self.keySet(kid: "k3")) }
            let renewed = try await cache.keys(
                at: url, refetch: false, transport: Self.transport, now: start + 600 + 3700)
            #expect(Self.kids(renewed) == ["k3"])
        }
    }
}

/// Answers every request with a key set, noting whether it was sent from
/// within a ``DedicatedTask``.
final class KeySetAnsweringTransport: HTTPClient, @unchecked Sendable {
    private let answer: String
    private let lock = NSLock()
    private var seen: [Bool] = []

    init(_ answer: String) { self.answer = answer }

    var sentInADedicatedTask: [Bool] { lock.withLock { seen } }

    func send(_ request: HTTPRequest, body: Data?) async throws -> (HTTPResponse, HTTPResponseBody) {
        let dedicated = DedicatedTask.current != nil
        lock.withLock { seen.append(dedicated) }
        return (
            HTTPResponse(status: .ok, headerFields: [.contentType: "application/json"]),
            HTTPResponseBody(Data(answer.utf8))
        )
    }
}
