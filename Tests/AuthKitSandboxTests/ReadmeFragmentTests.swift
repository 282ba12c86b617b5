import AuthKit
import AuthKitSandbox
import AuthKitTestSupport
import Foundation
import HTTPTypes
import Testing

/// README.md's shorter Swift fragments (the web backend's two requests, the
/// device grant, `CredentialSource`), run against the sandbox. They appear
/// here line for line, as README shows them (`ReadmeTests` checks it), so a
/// fragment that no longer compiles, or no longer works, fails here.
@Suite struct ReadmeFragmentTests {
    @Test func aWebBackendSignsInWithTwoRequests() async throws {
        let qiita = try ProviderCatalog.standard().descriptor(id: "qiita")
        let options = SandboxOptions(redirectURIs: ["https://app.example/oauth/callback"])
        try await Sandbox.with(emulating: qiita, options: options) { sandbox in
            let backend = WebBackend(descriptor: sandbox.descriptor, settings: sandbox.clientSettings)
            let url = try await backend.startSignIn()
            let callbackURL = try await sandbox.userAgent(account: "alice").redirect(for: url)
            #expect(callbackURL.absoluteString.hasPrefix("https://app.example/oauth/callback?"))

            let credential = try await backend.finishSignIn(callbackURL: callbackURL)
            let client = try OAuth2Client(descriptor: sandbox.descriptor, settings: sandbox.clientSettings)
            let (status, me) = try await getJSON(sandbox.whoamiURL, with: client, credential: credential)
            #expect(status == 200)
            #expect(me["account"] as? String == "alice")

            // The same callback again (a reload, or a replay): its state was taken.
            await #expect(throws: SessionStore.Missing.self) {
                try await backend.finishSignIn(callbackURL: callbackURL)
            }

            // A user who says no comes back with access_denied, not a code.
            let denied = try await sandbox.userAgent(approving: false).redirect(for: try await backend.startSignIn())
            await #expect { try await backend.finishSignIn(callbackURL: denied) } throws: { error in
                (error as? AuthKitError)?.code == .accessDenied
            }
        }
    }

    @Test func theDeviceGrantAndACredentialSource() async throws {
        let github = try ProviderCatalog.standard().descriptor(id: "github")
        try await Sandbox.with(emulating: github, options: SandboxOptions(approves: true, deviceInterval: 1)) {
            sandbox in
            let client = try OAuth2Client(descriptor: sandbox.descriptor, settings: sandbox.clientSettings)
            let credential = try await client.authorizeWithDeviceCode(
                options: AuthorizationOptions(scopes: ["read:user"])
            ) { code in
                // or show code.verificationURIComplete as a QR code
                print("Open \(code.verificationURI) and enter \(code.userCode)")
            }
            #expect(credential.scopes == ["read:user"])

            // README's FileCredentialStore() is the user's own store
            // ($AUTHKIT_HOME/credentials.json); here it is a temporary file.
            let file = TemporaryDirectory.url("authkit-readme").appendingPathComponent("credentials.json")
            // swift-format-ignore: AlwaysUseLowerCamelCase
            let FileCredentialStore = { AuthKit.FileCredentialStore(file: file) }
            try await FileCredentialStore().save(credential)
            let apiURL = sandbox.whoamiURL

            let source = CredentialSource(authenticator: client, store: FileCredentialStore(), key: credential.key)
            let current = try await source.current() // refreshed once, and saved, when due
            let (response, body) = try await source.send(HTTPRequest(method: .get, url: apiURL)) // credential attached
            // Code .signInRequired: nothing stored, no refresh token, or the provider refused it — sign in again.
            try await source.revoke() // sign out: revoke per the descriptor, then remove

            #expect(current.accessToken == credential.accessToken)
            #expect(response.status == .ok)
            body.cancel()
            #expect(try await FileCredentialStore().credential(for: credential.key) == nil)
            // Revoked at the provider too: the token no longer reads the API.
            #expect(try await getJSON(apiURL, with: client, credential: credential).0 == 401)
        }
    }
}

/// The README's web backend: one handler sends the browser to the provider,
/// the next takes the callback. Each builds its own client, as separate
/// requests to a server would.
private struct WebBackend {
    let descriptor: ProviderDescriptor
    let settings: ClientSettings
    /// The session of the browser that signs in (one browser here).
    let browserSession = SessionStore()

    /// Request 1; returns where to send the browser.
    func startSignIn() async throws -> URL {
        let client = try OAuth2Client(descriptor: descriptor, settings: settings)

        // Request 1: send the browser to the provider; keep `pending` server-side, in
        // this browser's session (it holds the PKCE verifier, so never in a cookie).
        let (url, pending) = try await client.startAuthorization(
            redirectURI: URL(string: "https://app.example/oauth/callback")!, scopes: ["read_qiita"])
        try await browserSession.put(pending, key: "sign-in " + pending.state)
        return url
    }

    /// Request 2, at the redirect URI.
    func finishSignIn(callbackURL: URL) async throws -> Credential {
        let query = URLComponents(url: callbackURL, resolvingAgainstBaseURL: false)?.queryItems ?? []
        let stateFromQuery = query.first { $0.name == "state" }?.value ?? ""
        let client = try OAuth2Client(descriptor: descriptor, settings: settings)

        // Request 2: the browser comes back; only the one that started it finds it.
        let kept = try await browserSession.take(key: "sign-in " + stateFromQuery) // delete it: single-use
        let credential = try await client.exchange(redirect: callbackURL, pending: kept)
        return credential
    }
}

/// A web framework's session store, reduced to what the backend needs. It
/// keeps `PendingAuthorization` encoded, as a store shared by several
/// servers would.
private actor SessionStore {
    struct Missing: Error {}
    private var entries: [String: Data] = [:]

    func put(_ pending: PendingAuthorization, key: String) throws {
        entries[key] = try JSONEncoder().encode(pending)
    }

    func take(key: String) throws -> PendingAuthorization {
        guard let data = entries.removeValue(forKey: key) else { throw Missing() }
        return try JSONDecoder().decode(PendingAuthorization.self, from: data)
    }
}
