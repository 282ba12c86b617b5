import AuthKitTestSupport
import Foundation
import Testing

@testable import AuthKit

/// `token.requiresClientSecret` / `device.requiresClientSecret`: a provider
/// without public clients refuses a grant without the secret, so AuthKit
/// refuses it first — before the user approves, before a device code is
/// shown, before a refresh is sent — naming the setting to give.
@Suite struct ClientSecretRequirementTests {
    /// A descriptor whose token endpoint requires the secret and whose device
    /// grant, with `deviceRequires` nil, inherits that.
    func descriptor(_ server: TestHTTPServer, deviceRequires: Bool? = nil) throws -> ProviderDescriptor {
        let device = deviceRequires.map { #", "requiresClientSecret": \#($0)"# } ?? ""
        return try ProviderDescriptor(
            json: Data(
                """
                {"id": "strict", "protocol": "oauth2",
                 "authorization": {"url": "\(server.baseURL)/authorize"},
                 "token": {"url": "\(server.baseURL)/token", "clientAuthentication": "post", "requiresClientSecret": true},
                 "device": {"url": "\(server.baseURL)/device"\(device)}}
                """.utf8))
    }

    static func isMissingSecret(_ error: any Error) -> Bool {
        guard case .missingSetting(let provider, .clientSecret)? = error.authKitReason else { return false }
        return provider == "strict"
    }

    @Test func theCodeGrantIsRefusedBeforeTheUserAgentRuns() async throws {
        try await withServer { server in
            let client = try OAuth2Client(descriptor: try descriptor(server), settings: ClientSettings(clientID: "app"))
            let agent = ScriptedUserAgent { parameters, redirect in
                "\(redirect)?code=c&state=\(parameters["state"] ?? "")"
            }
            await #expect { try await client.authorize(using: agent) } throws: { Self.isMissingSecret($0) }
            #expect(agent.seenURLs.all.isEmpty, "the user was sent to approve")
            #expect(server.requests.isEmpty)

            // With the secret, the same sign-in goes through.
            server.route("POST", "/token") { _ in .json(#"{"access_token":"at","token_type":"Bearer"}"#) }
            let configured = try OAuth2Client(
                descriptor: try descriptor(server), settings: ClientSettings(clientID: "app", clientSecret: "s"))
            #expect(try await configured.authorize(using: agent).accessToken == "at")
            #expect(agent.seenURLs.all.count == 1)
        }
    }

    /// An app without the secret starts the sign-in, and its backend, which
    /// has it, exchanges the code (the iOS example in docs/library.md): starting is
    /// allowed; exchanging without the secret is refused before it is sent.
    @Test func anAppMayStartWhatItsBackendFinishes() async throws {
        try await withServer { server in
            server.route("POST", "/token") { _ in .json(#"{"access_token":"at","token_type":"Bearer"}"#) }
            let app = try OAuth2Client(descriptor: try descriptor(server), settings: ClientSettings(clientID: "app"))
            let (url, pending) = try await app.startAuthorization(
                redirectURI: URL(string: "com.example.app://callback"))
            #expect(url.absoluteString.contains("code_challenge="), "a client without a secret uses PKCE")
            await #expect { try await app.exchange(code: "c", pending: pending) } throws: { Self.isMissingSecret($0) }
            #expect(server.requests.isEmpty)
            let backend = try OAuth2Client(
                descriptor: try descriptor(server), settings: ClientSettings(clientID: "app", clientSecret: "s"))
            #expect(try await backend.exchange(code: "c", pending: pending).accessToken == "at")
            let form = try formObject(String(decoding: try #require(server.requests.first).body, as: UTF8.self))
            #expect(form["client_secret"] == "s" && form["code_verifier"] == pending.codeVerifier)
        }
    }

    @Test func aRefreshIsRefusedBeforeItIsSent() async throws {
        try await withServer { server in
            let client = try OAuth2Client(descriptor: try descriptor(server), settings: ClientSettings(clientID: "app"))
            let credential = Credential(
                providerID: "strict", accessToken: "old", refreshToken: "rt", expiresAt: fixedNow)
            await #expect { try await client.refresh(credential) } throws: { Self.isMissingSecret($0) }
            #expect(server.requests.isEmpty)
        }
    }

    @Test func theDeviceGrantInheritsTheRuleUnlessItsSectionSaysOtherwise() async throws {
        try await withServer { server in
            server.route("POST", "/device") { _ in
                .json(
                    #"{"device_code":"d","user_code":"U","verification_uri":"https://as.example/device","expires_in":60}"#
                )
            }
            let inherits = try OAuth2Client(
                descriptor: try descriptor(server), settings: ClientSettings(clientID: "app"))
            let shown = Recorder<DeviceAuthorization>()
            await #expect {
                try await inherits.authorizeWithDeviceCode(options: AuthorizationOptions()) { shown.append($0) }
            } throws: { Self.isMissingSecret($0) }
            #expect(shown.all.isEmpty, "a code was shown that could not be redeemed")
            #expect(server.requests.isEmpty)

            // GitHub's shape: the code exchange needs the secret, the device grant does not.
            let open = try OAuth2Client(
                descriptor: try descriptor(server, deviceRequires: false), settings: ClientSettings(clientID: "app"))
            #expect(try await open.startDeviceAuthorization().userCode == "U")
            await #expect {
                try await open.exchange(code: "c", pending: try await open.startAuthorization().pending)
            } throws: { Self.isMissingSecret($0) }
        }
    }

    @Test func theFieldSurvivesTheRoundTripThroughAFile() throws {
        let descriptor = try ProviderDescriptor(
            json: Data(
                """
                {"id": "strict", "protocol": "oauth2", "authorization": {"url": "https://as.example/authorize"},
                 "token": {"url": "https://as.example/token", "requiresClientSecret": true},
                 "device": {"url": "https://as.example/device", "requiresClientSecret": false}}
                """.utf8))
        #expect(descriptor.token?.requiresClientSecret == true)
        #expect(descriptor.device?.requiresClientSecret == false)
        let again = DescriptorFile(descriptor).resolved(source: descriptor.source)
        #expect(again == descriptor)
        // Absent: false, as before the field existed.
        let plain = try ProviderDescriptor(
            json: Data(
                #"{"id": "p", "protocol": "oauth2", "authorization": {"url": "https://as.example/a"}, "token": {"url": "https://as.example/t"}, "device": {"url": "https://as.example/d"}}"#
                    .utf8))
        #expect(plain.token?.requiresClientSecret == false && plain.device?.requiresClientSecret == false)
    }
}
