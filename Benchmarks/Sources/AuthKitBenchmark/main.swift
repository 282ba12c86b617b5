// AuthKit's side of the benchmark suite (Benchmarks/run-benchmarks runs it
// beside golang.org/x/oauth2, liboauth and oauthlib doing the same work).
// Each mode runs for a number of seconds after a warm-up, checks its result
// first, and prints one JSON line: {"ops": N, "seconds": S}.
//
//   AuthKitBenchmark library-exchange -seconds S
//   AuthKitBenchmark library-refresh -seconds S
//   AuthKitBenchmark exchanges -token-url URL -seconds S -concurrency C [-transport default|ahc]
//   AuthKitBenchmark transport-exchanges -token-url URL -seconds S   (the exchange's POST alone, default transport)
//   AuthKitBenchmark ahc-exchanges -token-url URL -seconds S -concurrency C   (the POST through AsyncHTTPClient alone)
//   AuthKitBenchmark sign fixed|live -seconds S
//   AuthKitBenchmark sign-ratio -seconds S   (live ÷ fixed, alternating batches in one process)
//   AuthKitBenchmark id-token FIXTURE -seconds S   (a token and key set `oidcverify make` wrote)
//   AuthKitBenchmark request dpop|bearer -seconds S   (a resource request's client-side work)
//   AuthKitBenchmark p256-sign -seconds S   (one P-256 signature: the floor of a DPoP proof)
//   AuthKitBenchmark tls-requests -base URL -seconds S -concurrency C [-max-body N]   (batches of 200 GETs; trusts SSL_CERT_FILE)
//   AuthKitBenchmark tls-transport-requests -base URL -seconds S -concurrency C   (the same, default transport alone)
//   AuthKitBenchmark handoff -seconds S   (a task's round trip to a waiting thread and back)
//
// The looping modes also take -batches N: exactly N batches of operations in
// the warm-up and in the timed loop (with -concurrency, N batches of ten in
// each task, no warm-up), to count events per operation (perf).
import Foundation

let arguments = Array(CommandLine.arguments.dropFirst())
let mode = arguments.first ?? ""

func flag(_ name: String) -> String? {
    guard let index = arguments.firstIndex(of: "-\(name)"), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}

let seconds = flag("seconds").flatMap(Double.init) ?? 2

do {
    let result: Measurement
    switch mode {
    case "library-exchange":
        result = try await ExchangeBenchmark.inMemory().measureExchanges(seconds: seconds)
    case "library-refresh":
        result = try await ExchangeBenchmark.inMemory().measureRefreshes(seconds: seconds)
    case "exchanges":
        guard let tokenURL = flag("token-url") else { throw BenchmarkFailure("exchanges needs -token-url URL") }
        let concurrency = flag("concurrency").flatMap(Int.init) ?? 1
        result = try await ExchangeBenchmark.loopback(tokenURL: tokenURL, transport: flag("transport"))
            .measureNetworkExchanges(seconds: seconds, concurrency: concurrency)
    case "transport-exchanges":
        guard let tokenURL = flag("token-url") else {
            throw BenchmarkFailure("transport-exchanges needs -token-url URL")
        }
        result = try await TransportExchangeBenchmark(tokenURL: tokenURL).measure(seconds: seconds)
    case "ahc-exchanges":
        guard let tokenURL = flag("token-url") else { throw BenchmarkFailure("ahc-exchanges needs -token-url URL") }
        result = try await AsyncHTTPClientExchangeBenchmark(tokenURL: tokenURL)
            .measure(seconds: seconds, concurrency: flag("concurrency").flatMap(Int.init) ?? 1)
    case "sign":
        let live = arguments.dropFirst().first == "live"
        result = try SignBenchmark(live: live).measure(seconds: seconds)
    case "id-token":
        guard arguments.count > 1 else { throw BenchmarkFailure("id-token needs the fixture's path") }
        result = try await IDTokenBenchmark(fixture: arguments[1]).measure(seconds: seconds)
    case "p256-sign":
        result = try SignatureFloor.measure(seconds: seconds)
    case "request":
        let bound = arguments.dropFirst().first == "dpop"
        result = try await DPoPBenchmark.signedIn(bound: bound).measure(seconds: seconds)
    case "tls-requests", "tls-transport-requests":
        guard let base = flag("base") else { throw BenchmarkFailure("\(mode) needs -base https://127.0.0.1:PORT") }
        result = try await TLSRequestBenchmark(
            base: base, transportAlone: mode == "tls-transport-requests",
            maximumBodySize: flag("max-body").flatMap(Int.init) ?? 1 << 16
        )
        .measure(seconds: seconds, concurrency: flag("concurrency").flatMap(Int.init) ?? 1)
    case "handoff":
        result = await HandoffBenchmark().measure(seconds: seconds)
    case "sign-ratio":
        let (ratio, fixed, live) = try SignBenchmark.liveOverFixed(seconds: seconds)
        print(#"{"ratio": \#(ratio), "fixed": \#(fixed.json), "live": \#(live.json)}"#)
        exit(0)
    default:
        throw BenchmarkFailure(
            "usage: AuthKitBenchmark library-exchange|library-refresh|exchanges|transport-exchanges|ahc-exchanges|sign|sign-ratio|id-token|request|p256-sign|tls-requests|tls-transport-requests|handoff … (see main.swift)"
        )
    }
    print(result.json)
} catch {
    FileHandle.standardError.write(Data("AuthKitBenchmark: \(error)\n".utf8))
    exit(1)
}
