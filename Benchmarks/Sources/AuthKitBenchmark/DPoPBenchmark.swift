import AuthKit
import Crypto
import Foundation
import HTTPTypes

/// A DPoP-bound request's client-side work (row dpop-request): the proof
/// (a fresh ES256 JWT with `htm`, `htu`, `iat`, `jti` and `ath`, RFC 9449
/// §4.2) and the request through `CredentialSource.send`, beside the same
/// request with a Bearer token. Both over an in-memory transport that answers
/// at once, so what is measured is AuthKit's own work.
struct DPoPBenchmark {
    let source: CredentialSource

    /// `bound`: signed in to a provider whose descriptor says `"dpop": "on"`,
    /// whose token endpoint answers `token_type: DPoP`; else a Bearer sign-in.
    static func signedIn(bound: Bool) async throws -> DPoPBenchmark {
        let json = """
            {"id": "bench", "name": "Benchmark", "protocol": "oauth2",
             "authorization": {"url": "https://bench.example/authorize"},
             "token": {"url": "https://bench.example/token", "clientAuthentication": "post"},
             "api": {"origins": ["https://api.bench.example"]},
             "pkce": "S256", \(bound ? #""dpop": "on","# : "")
             "redirect": {"port": 8765}}
            """
        let transport = ResourceHTTPClient(tokenType: bound ? "DPoP" : "Bearer")
        let client = try OAuth2Client(
            descriptor: try ProviderDescriptor(json: Data(json.utf8), source: "benchmark"),
            settings: ClientSettings(clientID: "bench-client", clientSecret: "bench-secret"), httpClient: transport)
        let (_, pending) = try await client.startAuthorization()
        let credential = try await client.exchange(code: "bench-code", pending: pending)
        guard credential.tokenType == (bound ? "DPoP" : "Bearer") else {
            throw BenchmarkFailure("the sign-in gave a \(credential.tokenType) token")
        }
        let store = inMemoryCredentialStore([credential])
        return DPoPBenchmark(
            source: CredentialSource(authenticator: client, store: store, key: credential.key, httpClient: transport))
    }

    static let request = HTTPRequest(method: .get, url: URL(string: "https://api.bench.example/v1/items?page=2")!)

    func sendOnce() async throws {
        let (response, body) = try await source.send(Self.request, maximumBodySize: 1 << 16, deadline: .seconds(10))
        for try await _ in body {}
        guard response.status == .ok else { throw BenchmarkFailure("the resource answered \(response.status)") }
    }

    func measure(seconds: Double) async throws -> Measurement {
        try await sendOnce()
        _ = try await Measurement.loop(seconds: 0.2, batch: 50) { for _ in 0..<50 { try await sendOnce() } }
        return try await Measurement.loop(seconds: seconds, batch: 50) { for _ in 0..<50 { try await sendOnce() } }
    }
}

/// One P-256 signature (swift-crypto, BoringSSL) of a proof-sized input:
/// the least any DPoP proof costs, whoever makes it (RFC 9449 §4.2: ES256).
enum SignatureFloor {
    static func measure(seconds: Double) throws -> Measurement {
        let key = P256.Signing.PrivateKey()
        let input = Data(repeating: 0x61, count: 420) // a proof's header and claims, base64url
        guard key.publicKey.isValidSignature(try key.signature(for: input), for: input) else {
            throw BenchmarkFailure("the signature does not verify")
        }
        _ = try Measurement.loop(seconds: 0.2, batch: 50) { for _ in 0..<50 { _ = try key.signature(for: input) } }
        return try Measurement.loop(seconds: seconds, batch: 50) {
            for _ in 0..<50 { _ = try key.signature(for: input) }
        }
    }
}

/// The token endpoint's answer for `/token`, and `{"ok":true}` for anything
/// else; a resource request must carry the token in the way its type says
/// (a DPoP request its proof), or it is refused, so neither side can skip it.
struct ResourceHTTPClient: HTTPClient {
    let tokenType: String

    func send(_ request: HTTPRequest, body: Data?) async throws -> (HTTPResponse, HTTPResponseBody) {
        var fields = HTTPFields()
        fields[.contentType] = "application/json"
        if request.path == "/token" {
            let answer = #"{"access_token":"bench-access","token_type":"\#(tokenType)","expires_in":3600}"#
            return (HTTPResponse(status: .ok, headerFields: fields), HTTPResponseBody(Data(answer.utf8)))
        }
        let authorization = request.headerFields[.authorization] ?? ""
        let proof = request.headerFields[HTTPField.Name("DPoP")!]
        guard authorization == "\(tokenType) bench-access", (tokenType == "DPoP") == (proof != nil) else {
            return (HTTPResponse(status: .unauthorized, headerFields: fields), HTTPResponseBody(Data()))
        }
        return (HTTPResponse(status: .ok, headerFields: fields), HTTPResponseBody(Data(#"{"ok":true}"#.utf8)))
    }
}
