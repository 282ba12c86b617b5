@_spi(Benchmarks) import AuthKit
import Foundation

/// ID token verification (rows id-token-rs256, id-token-es256): the fixture
/// `oidcverify make` wrote (a key set and a token it signed), verified as a
/// sign-in does (signature by jwt-kit, then iss, aud, exp, iat, nonce), the
/// key set parsed once, as a sign-in's cache holds it. go-oidc verifies the
/// same token against the same keys.
struct IDTokenBenchmark {
    let run: IDTokenVerificationRun
    let subject: String

    init(fixture path: String) throws {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        guard let fixture = try JSONSerialization.jsonObject(with: data) as? [String: Any],
            let token = fixture["token"] as? String, let issuer = fixture["issuer"] as? String,
            let clientID = fixture["clientID"] as? String, let nonce = fixture["nonce"] as? String,
            let subject = fixture["subject"] as? String, let algorithm = fixture["algorithm"] as? String,
            let jwks = fixture["jwks"]
        else { throw BenchmarkFailure("\(path) is not an oidcverify fixture") }
        self.run = try IDTokenVerificationRun(
            token: token, jwks: try JSONSerialization.data(withJSONObject: jwks), issuer: issuer, clientID: clientID,
            nonce: nonce, algorithm: algorithm)
        self.subject = subject
    }

    func measure(seconds: Double) async throws -> Measurement {
        // Checked before it is timed: a verification that fails is no measurement.
        guard try await run.verify() == subject else {
            throw BenchmarkFailure("the token's subject is not the fixture's")
        }
        _ = try await Measurement.loop(seconds: 0.2, batch: 50) { for _ in 0..<50 { _ = try await run.verify() } }
        return try await Measurement.loop(seconds: seconds, batch: 50) {
            for _ in 0..<50 { _ = try await run.verify() }
        }
    }
}
