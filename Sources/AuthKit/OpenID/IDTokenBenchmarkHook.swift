#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

// ID token verification exactly as a sign-in runs it, for
// Benchmarks/run-benchmarks (rows id-token-rs256, id-token-es256), which is
// a package of its own that `package` declarations do not reach. `@_spi`:
// not API (a caller must ask for it by name), not counted among the public types.

/// One ID token and what it must match, checked by ``IDTokenVerifier`` with
/// its key set parsed once (the keys a sign-in holds in its cache).
@_spi(Benchmarks) public struct IDTokenVerificationRun: Sendable {
    let verifier: IDTokenVerifier
    let token: String
    let expectations: IDTokenVerifier.Expectations

    /// - Parameters:
    ///   - jwks: the provider's key set, as published (RFC 7517 §5).
    ///   - algorithm: the provider's signing algorithm (`RS256`, `ES256`).
    public init(token: String, jwks: Data, issuer: String, clientID: String, nonce: String, algorithm: String) throws {
        guard let algorithm = IDTokenAlgorithm(rawValue: algorithm) else {
            throw AuthKitError.IDTokenProblem.algorithmNotAllowed(algorithm)
        }
        let keys = try JSONWebKeySet.parse(jwks)
        self.verifier = IDTokenVerifier(issuer: issuer, clientID: clientID, algorithms: [algorithm]) { _ in keys }
        self.token = token
        self.expectations = IDTokenVerifier.Expectations(nonce: nonce)
    }

    /// Verifies the token; returns its subject.
    public func verify() async throws -> String {
        try await verifier.verify(token, expectations).subject
    }
}
