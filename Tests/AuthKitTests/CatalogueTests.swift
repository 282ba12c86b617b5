import AuthKitTestSupport
import Foundation
import Testing

@testable import AuthKit

/// The bundled catalogue: every file loads (schema and validator), cites the
/// provider's documentation, and docs/providers.md's table is generated from the files.
@Suite struct CatalogueTests {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..").standardized

    @Test func atLeastThirtyProvidersEachCitingItsDocumentation() throws {
        let catalog = ProviderCatalog(includeBundled: true, directories: [])
        #expect(catalog.fileIssues.isEmpty, "\(catalog.fileIssues)")
        #expect(catalog.ids.count >= 30)
        for id in catalog.ids {
            let descriptor = try #require(catalog.entries[id]?.descriptor)
            let documentation = try #require(
                descriptor.documentation.flatMap(URL.init(string:)), "\(id) has no documentation URL")
            #expect(documentation.scheme == "https", "\(id): documentation is not https")
        }
    }

    @Test func readmeTableIsTheFiles() throws {
        let readme = try String(contentsOf: root.appendingPathComponent("docs/providers.md"), encoding: .utf8)
        let start = try #require(readme.range(of: "<!-- catalogue -->\n"))
        let end = try #require(readme.range(of: "<!-- /catalogue -->", range: start.upperBound..<readme.endIndex))
        let rows = readme[start.upperBound..<end.lowerBound].split(separator: "\n").dropFirst(2)
        let catalog = ProviderCatalog(includeBundled: true, directories: [])
        #expect(rows.count == catalog.ids.count, "run scripts/embed-providers")
        for (row, id) in zip(rows, catalog.ids.sorted()) {
            let descriptor = try #require(catalog.entries[id]?.descriptor)
            let cells = row.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            #expect(cells.first == "`\(id)`", "run scripts/embed-providers")
            #expect(cells.dropFirst().first == descriptor.name, "\(id): name differs from the file")
            #expect(
                row.contains("(\(descriptor.documentation ?? "-"))"), "\(id): documentation link differs from the file")
            #expect(
                cells.count == 6 && cells[3].contains("device") == (descriptor.device != nil),
                "\(id): sign-in column differs from the file")
        }
    }

    /// The bundled Slack descriptor pointed at `server`, and a sign-in started.
    func slackSignIn(at server: TestHTTPServer) async throws -> (OAuth2Client, PendingAuthorization) {
        let client = try OAuth2Client(
            descriptor: bundledDescriptor("slack", pointingTo: server),
            settings: ClientSettings(clientID: "slack-client", clientSecret: "slack-secret"))
        let pending = try await client.startAuthorization(redirectURI: URL(string: "http://localhost:8765/callback"))
        return (client, pending.pending)
    }

    /// Slack's user token with rotation: the sign-in's answer nests the
    /// tokens in `authed_user`, a refresh's answer has them at the top
    /// level. The refreshed credential kept the sign-in's `authed_user`
    /// whole, its spent refresh token and first access token with it,
    /// stored and shown as the credential's own; what says whose the grant
    /// is (`authed_user.id`, `team`) is kept.
    @Test func aSlackRefreshKeepsNoneOfTheSignInsTokens() async throws {
        try await withServer { server in
            server.route("POST", "/api/oauth.v2.access") { request in
                request.bodyText.contains("grant_type=refresh_token")
                    ? .json(
                        #"{"ok":true,"access_token":"xoxe.xoxp-2","refresh_token":"xoxe-2","expires_in":43200,"token_type":"user","scope":"users:read"}"#
                    )
                    : .json(
                        #"{"ok":true,"authed_user":{"id":"U1","scope":"users:read","access_token":"xoxe.xoxp-1","refresh_token":"xoxe-1","expires_in":43200,"token_type":"user"},"team":{"id":"T1"}}"#
                    )
            }
            let (client, pending) = try await slackSignIn(at: server)
            let signedIn = try await client.exchange(code: "c", pending: pending)
            #expect(signedIn.accessToken == "xoxe.xoxp-1" && signedIn.refreshToken == "xoxe-1")
            let refreshed = try await client.refresh(signedIn)
            #expect(refreshed.accessToken == "xoxe.xoxp-2" && refreshed.refreshToken == "xoxe-2")
            let user = refreshed.rawFields["authed_user"]
            #expect(user == .object(["id": .string("U1"), "token_type": .string("user")]))
            #expect(refreshed.rawFields["team"] == .object(["id": .string("T1")]))
            let stored = String(decoding: try JSONEncoder().encode(refreshed.rawFields), as: UTF8.self)
            #expect(!stored.contains("xoxe.xoxp-1") && !stored.contains("xoxe-1\""), "\(stored)")
        }
    }

    /// Slack's `token_type` says `user` or `bot`: `assumeBearer` makes the
    /// token usable as a Bearer token, read from `authed_user`.
    @Test func slackUserTokenIsReadFromAuthedUserAsBearer() async throws {
        try await withServer { server in
            server.route("POST", "/api/oauth.v2.access") { _ in
                .json(
                    #"{"ok":true,"app_id":"A1","authed_user":{"id":"U1","scope":"users:read","access_token":"xoxp-1234","token_type":"user"},"team":{"id":"T1"}}"#
                )
            }
            let (client, pending) = try await slackSignIn(at: server)
            let credential = try await client.exchange(code: "c", pending: pending)
            #expect(credential.accessToken == "xoxp-1234")
            #expect(credential.tokenType == "Bearer")
            #expect(credential.scopes == ["users:read"])
            #expect(
                server.requests.last?.header("Authorization") == "Basic "
                    + Data("slack-client:slack-secret".utf8).base64EncodedString())
            // Slack's errors come with HTTP 200.
            server.route("POST", "/api/oauth.v2.access") { _ in .json(#"{"ok":false,"error":"invalid_code"}"#) }
            await #expect {
                try await client.exchange(code: "c", pending: pending)
            } throws: { error in
                guard case .providerError(.tokenExchange, let response)? = error.authKitReason else { return false }
                return response.code == "invalid_code"
            }
            // So do its revocation's (auth.revoke): reported, so the credential is kept, not deleted as revoked.
            server.route("POST", "/api/auth.revoke") { _ in .json(#"{"ok":false,"error":"invalid_auth"}"#) }
            await #expect {
                try await client.revoke(credential)
            } throws: { error in
                guard case .providerError(.revocation, let response)? = error.authKitReason else { return false }
                return response.code == "invalid_auth"
            }
            #expect(server.requests.last?.header("Authorization") == "Bearer xoxp-1234")
            server.route("POST", "/api/auth.revoke") { _ in .json(#"{"ok":true,"revoked":true}"#) }
            try await client.revoke(credential)
        }
    }

    /// Figma refreshes at an endpoint of its own, with Basic and no
    /// `grant_type`, and answers with a new access token and its lifetime
    /// only (arcticjs.dev): no `token_type`, no new refresh token. The
    /// refresh must succeed, keep the refresh token and assume Bearer.
    @Test func figmaRefreshAnswerWithoutTokenTypeOrRefreshToken() async throws {
        try await withServer { server in
            server.route("POST", "/v1/oauth/refresh") { _ in .json(#"{"access_token":"figd_new","expires_in":7776000}"#)
            }
            let client = try OAuth2Client(
                descriptor: bundledDescriptor("figma", pointingTo: server),
                settings: ClientSettings(clientID: "figma-client", clientSecret: "figma-secret"))
            let old = Credential(
                providerID: "figma", accessToken: "figd_old", refreshToken: "figr_keep",
                expiresAt: Date(timeIntervalSinceNow: -60))
            let refreshed = try await client.refresh(old)
            #expect(refreshed.accessToken == "figd_new")
            #expect(refreshed.tokenType == "Bearer")
            #expect(refreshed.refreshToken == "figr_keep")
            let request = try #require(server.requests.last)
            #expect(
                request.header("Authorization") == "Basic "
                    + Data("figma-client:figma-secret".utf8).base64EncodedString())
            #expect(try formObject(request.bodyText) == ["refresh_token": "figr_keep"])
        }
    }
}
