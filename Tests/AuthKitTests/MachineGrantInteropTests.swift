import AuthKitTestSupport
import Foundation
import Testing

@testable import AuthKit

/// The library's machine grants against Authlib
/// (`Tests/Interop/servers/authlib_machine_server.py`): introspection
/// (RFC 7662), revocation (RFC 7009) and token exchange (RFC 8693), which
/// the command line does not reach (`Tests/Interop/run` covers the rest).
@Suite(.enabled("Authlib (Tests/requirements.txt) is needed") { await InteropPeer.isEnabled })
struct MachineGrantInteropTests {
    @Test func introspectionRevocationAndExchangeAgainstAuthlib() async throws {
        let keys = TemporaryDirectory.url("authkit-machine-keys")
        try FileManager.default.createDirectory(at: keys, withIntermediateDirectories: true)
        let server = InteropPeer()
        try await server.start(script: "authlib_machine_server.py", arguments: ["--key-dir", keys.path])
        defer { server.stop() }
        let base = server.baseURL
        let descriptor = try ProviderDescriptor(
            json: Data(
                """
                {"id": "machine", "protocol": "oauth2", "introspection": "\(base)/introspect",
                 "authorization": {"url": "\(base)/authorize"}, "token": {"url": "\(base)/token"},
                 "revocation": {"url": "\(base)/revoke"}, "scopes": {"default": ["read"]}}
                """.utf8))
        // The RS256 key Authlib registered for machine-rs256, as a user would point at it.
        let client = try OAuth2Client(
            descriptor: descriptor,
            settings: ClientSettings(
                clientID: "machine-rs256", privateKeyFile: keys.appendingPathComponent("machine-rs256.pem").path))
        let credential = try await client.clientCredentials(scopes: ["read", "write"])

        let live = try await client.introspect(credential.accessToken, hint: "access_token")
        #expect(live.isActive && live.clientID == "machine-rs256" && live.scopes == ["read", "write"])
        #expect(live.expiresAt.map { $0 > Date() } == true)

        let exchanged = try await client.exchangeToken(
            credential.accessToken, audience: ["https://orders.internal"], scopes: ["read"])
        let answer = try await client.introspect(exchanged.accessToken)
        #expect(answer.isActive && answer.scopes == ["read"])
        #expect(answer.fields["aud"] == .array([.string("https://orders.internal")]))
        // Wider than the subject token: Authlib refuses, and nothing is issued.
        await #expect {
            _ = try await client.exchangeToken(exchanged.accessToken, scopes: ["write"])
        } throws: { error in
            guard case .providerError(_, let response)? = error.authKitReason else { return false }
            return response.code == "invalid_scope"
        }

        try await client.revoke(credential)
        #expect(try await client.introspect(credential.accessToken).isActive == false)
    }
}
