import AuthKit
import AuthKitAsyncHTTPClient
import Foundation
import HTTPTypes

/// The authorization code exchange and the refresh (RFC 6749 §4.1.3, §6) as
/// an app runs them, against Benchmarks/peers/tokenserver's provider: client
/// `bench-client`, secret sent in the body, PKCE, the answer below.
struct ExchangeBenchmark {
    let client: OAuth2Client

    /// The token answer the in-memory transport gives, and the tokenserver too.
    static let answer = Data(
        #"{"access_token":"bench-access","token_type":"Bearer","expires_in":3600,"refresh_token":"bench-refresh","scope":"read write"}"#
            .utf8)

    static func descriptor(tokenURL: String) throws -> ProviderDescriptor {
        let authorizeURL = tokenURL.replacingOccurrences(of: "/token", with: "/authorize")
        let json = """
            {"id": "bench", "name": "Benchmark", "protocol": "oauth2",
             "authorization": {"url": "\(authorizeURL)"},
             "token": {"url": "\(tokenURL)", "clientAuthentication": "post"},
             "scopes": {"default": ["read", "write"]},
             "pkce": "S256",
             "redirect": {"port": 8765}}
            """
        return try ProviderDescriptor(json: Data(json.utf8), source: "benchmark")
    }

    /// Library work only: the transport answers at once from memory, as
    /// x/oauth2's peer does with an in-memory RoundTripper.
    static func inMemory() throws -> ExchangeBenchmark {
        try ExchangeBenchmark(
            client: OAuth2Client(
                descriptor: descriptor(tokenURL: "http://127.0.0.1:9/token"),
                settings: ClientSettings(clientID: "bench-client", clientSecret: "bench-secret"),
                httpClient: InstantHTTPClient()))
    }

    /// To a real loopback token endpoint, through the default transport
    /// (`nil`) or AsyncHTTPClient (`"ahc"`).
    static func loopback(tokenURL: String, transport: String?) throws -> ExchangeBenchmark {
        let http: (any HTTPClient)? =
            switch transport {
            case nil, "default": nil
            case "ahc": asyncHTTPClientTransport()
            case let other?: throw BenchmarkFailure("unknown -transport \(other) (default or ahc)")
            }
        return try ExchangeBenchmark(
            client: OAuth2Client(
                descriptor: descriptor(tokenURL: tokenURL),
                settings: ClientSettings(clientID: "bench-client", clientSecret: "bench-secret"), httpClient: http))
    }

    /// One op: a fresh authorization request (state, PKCE) and its code exchanged.
    func exchangeOnce() async throws -> Credential {
        let (_, pending) = try await client.startAuthorization()
        return try await client.exchange(code: "bench-code", pending: pending)
    }

    func measureExchanges(seconds: Double) async throws -> Measurement {
        let credential = try await exchangeOnce()
        guard credential.accessToken == "bench-access", credential.refreshToken == "bench-refresh" else {
            throw BenchmarkFailure("unexpected credential")
        }
        _ = try await Measurement.loop(seconds: 0.2, batch: 100) { for _ in 0..<100 { _ = try await exchangeOnce() } }
        return try await Measurement.loop(seconds: seconds, batch: 100) {
            for _ in 0..<100 { _ = try await exchangeOnce() }
        }
    }

    func measureRefreshes(seconds: Double) async throws -> Measurement {
        let expired = try await exchangeOnce()
        let refreshed = try await client.refresh(expired)
        guard refreshed.accessToken == "bench-access" else { throw BenchmarkFailure("unexpected refresh") }
        _ = try await Measurement.loop(seconds: 0.2, batch: 100) {
            for _ in 0..<100 { _ = try await client.refresh(expired) }
        }
        return try await Measurement.loop(seconds: seconds, batch: 100) {
            for _ in 0..<100 { _ = try await client.refresh(expired) }
        }
    }

    /// `concurrency` tasks, each exchanging codes one after another until time is up.
    func measureNetworkExchanges(seconds: Double, concurrency: Int) async throws -> Measurement {
        guard try await exchangeOnce().accessToken == "bench-access" else {
            throw BenchmarkFailure("unexpected credential")
        }
        return try await Measurement.concurrently(seconds: seconds, concurrency: concurrency) {
            _ = try await exchangeOnce()
        }
    }
}

/// The exchanges-sequential row's middle line: the code exchange's POST (the
/// form curlrequests -exchange sends) through AuthKit's default transport
/// alone, `platformHTTPClient()`, its answer read whole; no state, PKCE,
/// request building or answer parsing. `send` streams the body, so a worker
/// carries it (a token call alone in flight takes the event loop, which
/// public API does not reach without the OAuth work). Beside libcurl alone from C and the
/// whole exchange, it splits an exchange's time between the socket,
/// the transport (its thread handoffs) and the OAuth work.
struct TransportExchangeBenchmark {
    let client = platformHTTPClient()
    let request: HTTPRequest
    static let form = Data(
        ("grant_type=authorization_code&code=bench-code&redirect_uri=http%3A%2F%2F127.0.0.1%3A8765%2Fcallback"
            + "&client_id=bench-client&client_secret=bench-secret"
            + "&code_verifier=dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk").utf8)

    init(tokenURL: String) throws {
        guard let url = URL(string: tokenURL) else { throw BenchmarkFailure("-token-url \(tokenURL) is not a URL") }
        var fields = HTTPFields()
        fields[.accept] = "application/json"
        fields[.contentType] = "application/x-www-form-urlencoded"
        request = HTTPRequest(method: .post, url: url, headerFields: fields)
    }

    func post() async throws -> Int {
        let (response, body) = try await client.send(request, body: Self.form)
        var bytes = 0
        for try await chunk in body { bytes += chunk.count }
        guard response.status == .ok, bytes > 0 else {
            throw BenchmarkFailure("the token endpoint answered \(response.status.code) with \(bytes) bytes")
        }
        return bytes
    }

    func measure(seconds: Double) async throws -> Measurement {
        _ = try await post()
        _ = try await Measurement.loop(seconds: 0.2, batch: 100) { for _ in 0..<100 { _ = try await post() } }
        return try await Measurement.loop(seconds: seconds, batch: 100) { for _ in 0..<100 { _ = try await post() } }
    }
}

/// Answers every request at once with the token answer, as an in-memory
/// `http.RoundTripper` does for x/oauth2.
struct InstantHTTPClient: HTTPClient {
    func send(_ request: HTTPRequest, body: Data?) async throws -> (HTTPResponse, HTTPResponseBody) {
        var fields = HTTPFields()
        fields[.contentType] = "application/json"
        return (HTTPResponse(status: .ok, headerFields: fields), HTTPResponseBody(ExchangeBenchmark.answer))
    }
}
