import AuthKitTestSupport
import Foundation
import Testing

@testable import AuthKit

/// Providers' error and token answers in their own shapes, read through
/// their bundled descriptors: a refresh token they no longer take asks for
/// a sign-in (``AuthKitError/SignInReason/refreshRefused(_:)``), not a
/// provider error the user cannot act on; an answer without `token_type`
/// is taken where the provider never sends one.
@Suite struct ProviderErrorAnswerTests {
    struct Refusal: Sendable, CustomTestStringConvertible {
        let provider: String
        let method: String
        let path: String
        let status: Int
        let body: String
        let code: String
        var testDescription: String { provider }
    }

    static let refusals = [
        // Slack: HTTP 200, `ok: false` (oauth.v2.access's error table).
        Refusal(
            provider: "slack", method: "POST", path: "/api/oauth.v2.access", status: 200,
            body: #"{"ok":false,"error":"invalid_refresh_token"}"#, code: "invalid_refresh_token"),
        // Strava: in `errors`, "invalid" (at a refresh, as wide as invalid_grant).
        Refusal(
            provider: "strava", method: "POST", path: "/oauth/token", status: 400,
            body:
                #"{"message":"Bad Request","errors":[{"resource":"RefreshToken","field":"refresh_token","code":"invalid"}]}"#,
            code: "invalid"),
        // Microsoft: Conditional Access or MFA wants the user back at /authorize.
        Refusal(
            provider: "microsoft", method: "POST", path: "/common/oauth2/v2.0/token", status: 400,
            body: #"{"error":"interaction_required","error_description":"AADSTS50076: multi-factor authentication"}"#,
            code: "interaction_required"),
        // Instagram's refresh call: a Graph API error, code 190 (the token is dead).
        Refusal(
            provider: "instagram", method: "GET", path: "/refresh_access_token", status: 400,
            body:
                #"{"error":{"message":"Error validating access token: Session has expired","type":"OAuthException","code":190,"fbtrace_id":"A1"}}"#,
            code: "190"),
        // Twitch: in `message`, its `error` the HTTP reason.
        Refusal(
            provider: "twitch", method: "POST", path: "/oauth2/token", status: 400,
            body: #"{"error":"Bad Request","status":400,"message":"Invalid refresh token"}"#,
            code: "Invalid refresh token"),
    ]

    @Test(arguments: refusals)
    func aRefreshTokenTheProviderNoLongerTakesAsksForASignIn(_ refusal: Refusal) async throws {
        try await withServer { server in
            server.route(refusal.method, refusal.path) { _ in .json(refusal.body, status: refusal.status) }
            let client = try OAuth2Client(
                descriptor: bundledDescriptor(refusal.provider, pointingTo: server),
                settings: ClientSettings(clientID: "app", clientSecret: "secret"))
            let expired = Credential(
                providerID: refusal.provider, accessToken: "old-access", refreshToken: "spent-refresh",
                expiresAt: Date(timeIntervalSinceNow: -60), obtainedAt: Date(timeIntervalSinceNow: -5 * 86400))
            await #expect {
                _ = try await client.refresh(expired)
            } throws: { error in
                guard case .signInRequired(_, .refreshRefused(let response))? = error.authKitReason else {
                    return false
                }
                return response.code == refusal.code
            }
            #expect(server.requests(to: refusal.path).count == 1)
        }
    }

    /// LinkedIn's code exchange answers access_token, expires_in and scope,
    /// no token_type: the sign-in was refused as "no token type".
    @Test func linkedInsAnswerWithoutATokenTypeIsTaken() async throws {
        try await withServer { server in
            server.route("POST", "/oauth/v2/accessToken") { _ in
                .json(#"{"access_token":"AQU-linkedin","expires_in":5184000,"scope":"openid,profile"}"#)
            }
            let client = try OAuth2Client(
                descriptor: bundledDescriptor("linkedin", pointingTo: server),
                settings: ClientSettings(clientID: "app", clientSecret: "secret", scopes: ["r_liteprofile"]))
            let (_, pending) = try await client.startAuthorization()
            let credential = try await client.exchange(code: "c", pending: pending)
            #expect(credential.accessToken == "AQU-linkedin" && credential.tokenType == "Bearer")
        }
    }

    /// Zoom explains an error in `reason`, Figma in `message`: the
    /// description shown names what went wrong, where it showed only the code.
    @Test(arguments: [
        ("zoom", "/oauth/token", #"{"reason":"Invalid client_id or client_secret","error":"invalid_client"}"#),
        ("figma", "/v1/oauth/token", #"{"error":true,"status":400,"message":"Invalid client_id or client_secret"}"#),
    ])
    func theProvidersExplanationIsTheDescription(provider: String, path: String, body: String) async throws {
        try await withServer { server in
            server.route("POST", path) { _ in .json(body, status: 400) }
            let client = try OAuth2Client(
                descriptor: bundledDescriptor(provider, pointingTo: server),
                settings: ClientSettings(clientID: "app", clientSecret: "s3cr3t-value"))
            let (_, pending) = try await client.startAuthorization()
            await #expect {
                _ = try await client.exchange(code: "c", pending: pending)
            } throws: { error in
                guard case .providerError(.tokenExchange, let response)? = error.authKitReason else { return false }
                return response.description == "Invalid client_id or client_secret"
            }
        }
    }
}
