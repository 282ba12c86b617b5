import AuthKit
import AuthKitSandbox
import AuthKitTestSupport
import Foundation
import Testing

/// The sandbox as an OpenID provider (issue 46): for a descriptor with an
/// `openid` part it signs ID tokens with a key of an algorithm the
/// descriptor lists, publishes it at the descriptor's key-set URL, and
/// AuthKit's own client verifies them as it would the provider's.
@Suite struct OpenIDSandboxTests {
    static func descriptor(algorithms: [String]) throws -> ProviderDescriptor {
        let list = algorithms.map { "\"\($0)\"" }.joined(separator: ", ")
        return try ProviderDescriptor(
            json: Data(
                """
                {"id": "op", "name": "Example OP", "protocol": "oauth2",
                 "authorization": {"url": "https://op.example/authorize"}, "token": {"url": "https://op.example/token"},
                 "issuer": {"identifier": "https://op.example"},
                 "openid": {"keys": "https://keys.op.example/jwks", "signingAlgorithms": [\(list)]},
                 "scopes": {"default": ["openid", "email", "profile"]}}
                """.utf8))
    }

    @Test(arguments: ["ES256", "EdDSA", "RS256", "PS256"])
    func aSignInThroughTheSandboxNamesTheUserVerified(algorithm: String) async throws {
        try await Sandbox.with(emulating: try Self.descriptor(algorithms: [algorithm])) { sandbox in
            let client = try OAuth2Client(descriptor: sandbox.descriptor, settings: sandbox.clientSettings)
            let credential = try await client.authorize(using: sandbox.userAgent(account: "carol"))
            let identity = try #require(credential.identity)
            #expect(identity.subject == "sandbox-user-carol")
            #expect(identity.email == "carol@sandbox.example" && identity.emailVerified == true)
            #expect(identity.issuer == sandbox.descriptor.issuer?.identifier)
            // The key set was fetched from the sandbox, at the descriptor's key-set URL there.
            #expect(sandbox.events.contains { $0.step == "keys" && $0.status == 200 })
            // A refresh keeps who signed in (and verifies the new ID token).
            let refreshed = try await client.refresh(credential)
            #expect(refreshed.identity?.subject == "sandbox-user-carol")
        }
    }

    @Test func withoutTheOpenIDScopeThereIsNoIDToken() async throws {
        try await Sandbox.with(emulating: try Self.descriptor(algorithms: ["ES256"])) { sandbox in
            var settings = sandbox.clientSettings
            settings.scopes = ["email"]
            let client = try OAuth2Client(descriptor: sandbox.descriptor, settings: settings)
            let credential = try await client.authorize(using: sandbox.userAgent())
            #expect(credential.identity == nil && credential.rawFields["id_token"] == nil)
        }
    }
}
