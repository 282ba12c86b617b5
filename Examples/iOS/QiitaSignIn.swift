#if canImport(UIKit)
    import AuthKit
    import AuthKitApple
    import UIKit

    /// Sign in to Qiita from an iOS app with ASWebAuthenticationSession. Register
    /// `com.example.qiitareader://oauth-callback` as the Qiita application's
    /// callback URL. The app holds no client secret: Qiita's token request needs
    /// one, so the app sends the code to its own backend, which exchanges it and
    /// answers with the credential.
    @MainActor
    final class QiitaSignIn {
        let client: OAuth2Client
        let store = KeychainCredentialStore()
        let backend = URL(string: "https://api.example.com/qiita/token")!

        init() throws {
            let qiita = try ProviderCatalog.standard().descriptor(id: "qiita")
            client = try OAuth2Client(
                descriptor: qiita,
                settings: ClientSettings(
                    clientID: "your-qiita-client-id", redirectURI: "com.example.qiitareader://oauth-callback"))
        }

        func signIn(over window: UIWindow) async throws -> Credential {
            let (url, pending) = try await client.startAuthorization(scopes: ["read_qiita"])
            let agent = WebAuthenticationUserAgent { window }
            let redirect = try await agent.redirect(opening: url, redirectURI: URL(string: pending.redirectURI)!)
            let code = try client.authorizationCode(from: redirect, pending: pending) // checks state

            var request = URLRequest(url: backend)
            request.httpMethod = "POST"
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = try JSONEncoder().encode(CodeForBackend(code: code, pending: pending))
            let (data, response) = try await URLSession.shared.data(for: request)
            guard (response as? HTTPURLResponse)?.statusCode == 200 else { throw URLError(.badServerResponse) }
            let credential = try JSONDecoder().decode(Credential.self, from: data)
            try await store.saveSignIn(credential) // the Keychain, this device only
            return credential
        }
    }

    /// What the app sends its backend, which runs
    /// `try await OAuth2Client(descriptor: qiita, settings: withTheSecret).exchange(code: body.code, pending: body.pending)`
    /// and answers with the credential as JSON.
    struct CodeForBackend: Codable {
        var code: String
        var pending: PendingAuthorization
    }
#endif
