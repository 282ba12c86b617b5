import AuthKit
import AuthKitSandbox
import HTTPTypes
import Testing

// Your code, signed in to an emulated Qiita: no network, no registered app.
@Test func signsInToQiitaAndCallsTheAPI() async throws {
    let qiita = try ProviderCatalog.standard().descriptor(id: "qiita")
    try await Sandbox.with(emulating: qiita) { sandbox in
        // The descriptor points at the sandbox; the settings are its client's.
        let client = try OAuth2Client(descriptor: sandbox.descriptor, settings: sandbox.clientSettings)
        let credential = try await client.authorize(using: sandbox.userAgent(account: "alice"))

        let store = inMemoryCredentialStore([credential])
        let source = CredentialSource(authenticator: client, store: store, key: credential.key)
        let (response, _) = try await source.send(HTTPRequest(method: .get, url: sandbox.whoamiURL))
        #expect(response.status == .ok)

        // A user who says no is an error your code must handle.
        await #expect { try await client.authorize(using: sandbox.userAgent(approving: false)) } throws: { error in
            (error as? AuthKitError)?.code == .accessDenied
        }
    }
}
