import Foundation
import Testing
import AuthKitTestSupport
@testable import AuthKit

@Suite struct RefreshTests {
    func descriptor(_ server: TestHTTPServer, revocation: DescriptorFile.Template? = nil) -> ProviderDescriptor {
        testDescriptor(
            id: "rotating", name: "Rotating", protocol: .oauth2,
            authorization: DescriptorFile.Authorization(url: "\(server.baseURL)/authorize"),
            token: DescriptorFile.Token(url: "\(server.baseURL)/token", clientAuthentication: .post), pkce: .s256,
            revocation: revocation)
    }

    let expired = Credential(providerID: "rotating", label: "me", accessToken: "old-access", refreshToken: "refresh-1",
                             expiresAt: fixedNow.addingTimeInterval(-10), scopes: ["read"], obtainedAt: fixedNow.addingTimeInterval(-3600))

    @Test func concurrentRefreshesShareOneRequest() async throws {
        try await withServer { server in
            server.route("POST", "/token") { _ in
                Thread.sleep(forTimeInterval: 0.3) // keep the first request in flight while the others arrive
                return .json(#"{"access_token":"new-access","token_type":"Bearer","expires_in":3600,"refresh_token":"refresh-2"}"#)
            }
            let persisted = Recorder<Credential>()
            var configured = try OAuth2Client(descriptor: descriptor(server), settings: ClientSettings(clientID: "c", clientSecret: "s"), now: { fixedNow })
            configured.onRefresh = { persisted.append($0) }
            let client = configured
            let expired = self.expired
            let results = try await withThrowingTaskGroup(of: Credential.self) { group in
                for _ in 0..<8 { group.addTask { try await client.refresh(expired) } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(server.requests(to: "/token").count == 1)
            #expect(results.allSatisfy { $0.accessToken == "new-access" && $0.refreshToken == "refresh-2" })
            #expect(!persisted.all.isEmpty)
            #expect(persisted.all.allSatisfy { $0.refreshToken == "refresh-2" })

            let body = try formObject(try #require(server.requests.first).bodyText)
            #expect(body == ["grant_type": "refresh_token", "refresh_token": "refresh-1", "client_id": "c", "client_secret": "s"])
        }
    }

    @Test func keepsTheOldRefreshTokenWhenNoneIsReturned() async throws {
        try await withServer { server in
            server.route("POST", "/token") { _ in .json(#"{"access_token":"new-access","token_type":"Bearer","expires_in":60}"#) }
            let client = try OAuth2Client(descriptor: descriptor(server), settings: ClientSettings(clientID: "c", clientSecret: "s"), now: { fixedNow })
            let refreshed = try await client.refresh(expired)
            #expect(refreshed.refreshToken == "refresh-1")
            #expect(refreshed.accessToken == "new-access")
            #expect(refreshed.label == "me")
            #expect(refreshed.scopes == ["read"])
            #expect(refreshed.expiresAt == fixedNow.addingTimeInterval(60))
        }
    }

    @Test func refreshErrorIsTypedAndNoRefreshTokenIsUnsupported() async throws {
        try await withServer { server in
            server.route("POST", "/token") { _ in .json(#"{"error":"invalid_grant"}"#, status: 400) }
            let client = try OAuth2Client(descriptor: descriptor(server), settings: ClientSettings(clientID: "c", clientSecret: "s"))
            await #expect {
                try await client.refresh(expired)
            } throws: { error in
                // invalid_grant at refresh: the grant is gone, so the caller must show its sign-in.
                if case AuthKitError.signInRequired(expired.key, .refreshRefused(let r)) = error { return r.code == "invalid_grant" }
                return false
            }
            var noRefresh = expired
            noRefresh.refreshToken = nil
            await #expect {
                try await client.refresh(noRefresh)
            } throws: { error in
                error as? AuthKitError == .signInRequired(noRefresh.key, reason: .noRefreshToken)
            }
            #expect(server.requests.count == 1)
        }
    }

    @Test func validCredentialRefreshesOnlyWhenExpired() async throws {
        try await withServer { server in
            server.route("POST", "/token") { _ in .json(#"{"access_token":"fresh","token_type":"Bearer","expires_in":3600}"#) }
            let client = try OAuth2Client(descriptor: descriptor(server), settings: ClientSettings(clientID: "c", clientSecret: "s"), now: { fixedNow })
            var valid = expired
            valid.expiresAt = fixedNow.addingTimeInterval(3600)
            let unchanged = try await client.validCredential(valid, now: fixedNow)
            #expect(!unchanged.refreshed)
            #expect(server.requests.isEmpty)
            let renewed = try await client.validCredential(expired, now: fixedNow)
            #expect(renewed.refreshed)
            #expect(renewed.credential.accessToken == "fresh")
        }
    }

    @Test func instagramRefreshRunsTheDescriptorsCall() async throws {
        try await withServer { server in
            server.route("GET", "/refresh_access_token") { _ in
                .json(#"{"access_token":"IGlonger","token_type":"bearer","expires_in":5184000}"#)
            }
            let client = try OAuth2Client(descriptor: bundledDescriptor("instagram", pointingTo: server),
                                          settings: ClientSettings(clientID: "c", clientSecret: "s"), now: { fixedNow })
            let current = Credential(providerID: "instagram", accessToken: "IGlong", tokenType: "bearer", expiresAt: fixedNow)
            let refreshed = try await client.refresh(current)
            #expect(refreshed.accessToken == "IGlonger")
            let request = try #require(server.requests.last)
            #expect(request.method == "GET")
            #expect(try formObject(try #require(request.query)) == ["grant_type": "ig_refresh_token", "access_token": "IGlong"])
        }
    }
}

@Suite struct RevocationTests {
    let credential = Credential(providerID: "p", accessToken: "tok/en+1", refreshToken: "r")

    /// A provider whose revocation is RFC 7009 with every default.
    func rfc7009Provider(_ server: TestHTTPServer) -> ProviderDescriptor {
        testDescriptor(
            id: "p", name: "P", protocol: .oauth2, authorization: DescriptorFile.Authorization(url: "\(server.baseURL)/a"),
            token: DescriptorFile.Token(url: "\(server.baseURL)/token"), revocation: DescriptorFile.Template(url: "\(server.baseURL)/revoke"))
    }

    @Test func rfc7009DefaultsWithClientAuthentication() async throws {
        try await withServer { server in
            server.route("POST", "/revoke") { _ in StubResponse(status: 200) }
            let descriptor = rfc7009Provider(server)
            let client = try OAuth2Client(descriptor: descriptor, settings: ClientSettings(clientID: "CLIENT_ID", clientSecret: "CLIENT_SECRET"))
            try await client.revoke(credential)
            let request = try #require(server.requests.last)
            #expect(request.method == "POST")
            #expect(request.header("Authorization") == "Basic Q0xJRU5UX0lEOkNMSUVOVF9TRUNSRVQ=")
            #expect(try formObject(request.bodyText) == ["token": "tok/en+1", "token_type_hint": "access_token"])
        }
    }

    @Test func unavailableServerIsReportedForRetry() async throws {
        try await withServer { server in
            server.route("POST", "/revoke") { _ in StubResponse(status: 503) }
            let descriptor = rfc7009Provider(server)
            let client = try OAuth2Client(descriptor: descriptor, settings: ClientSettings(clientID: "c"))
            await #expect {
                try await client.revoke(credential)
            } throws: { error in
                if case AuthKitError.providerError(.revocation, let r) = error { return r.code == "temporarily_unavailable" && r.status == 503 }
                return false
            }
        }
    }

    @Test func qiitaDeletesTheTokenPathWithoutPrintingIt() async throws {
        try await withServer { server in
            let token = "ea5d0a593b2655e9568f144fb1826342292f5c6b"
            server.route("DELETE", "/api/v2/access_tokens/\(token)") { _ in StubResponse(status: 204) }
            let client = try OAuth2Client(descriptor: bundledDescriptor("qiita", pointingTo: server),
                                          settings: ClientSettings(clientID: "c", clientSecret: "s"))
            try await client.revoke(Credential(providerID: "qiita", accessToken: token))
            let request = try #require(server.requests.last)
            #expect(request.method == "DELETE")
            #expect(request.body.isEmpty)
            #expect(request.header("Content-Type") == nil)

            // A failing revocation names the templated URL, not the token in it.
            await #expect {
                try await client.revoke(Credential(providerID: "qiita", accessToken: "unknown-token-value"))
            } throws: { error in
                guard case AuthKitError.invalidResponse(.revocation, let reason) = error else { return false }
                return reason.contains("HTTP 404") && !"\(error)".contains("unknown-token-value")
            }
        }
    }

    @Test func providersWithoutRevocationSaySo() async throws {
        let client = try OAuth2Client(descriptor: bundledDescriptor("github"), settings: ClientSettings(clientID: "c"))
        await #expect {
            try await client.revoke(Credential(providerID: "github", accessToken: "t"))
        } throws: { error in
            guard error as? AuthKitError == .notSupported(providerID: "github", .revocation) else { return false }
            return "\(error)".contains("github descriptor names no way to revoke")
        }
    }
}
