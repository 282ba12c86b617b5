import AuthKitTestSupport
import Foundation
import Testing

@testable import AuthKit

/// After an OpenID Connect sign-in (issue 46): the UserInfo endpoint (Core
/// §5.3), whose answer must be about the user the ID token names, and the
/// provider's end-session endpoint (RP-Initiated Logout 1.0), which never
/// gets the ID token in a URL.
@Suite struct UserInfoAndLogoutTests {
    typealias Provider = IDTokenVerifierTests.Provider

    func descriptor(_ server: TestHTTPServer, userInfo: Bool = true, endSession: Bool = true) -> ProviderDescriptor {
        testDescriptor(
            id: "op", protocol: .oauth2, authorization: .init(url: "\(server.baseURL)/authorize"),
            token: .init(url: "\(server.baseURL)/token"), issuer: .init(identifier: server.baseURL),
            openid: .init(
                keys: "\(server.baseURL)/jwks", signingAlgorithms: ["ES256"],
                userInfo: userInfo ? "\(server.baseURL)/userinfo" : nil,
                endSession: endSession ? "\(server.baseURL)/logout?from=op" : nil))
    }

    /// A client signed in to the provider at `server`, its ID token verified.
    func signedIn(at server: TestHTTPServer, userInfo: Bool = true, endSession: Bool = true) async throws
        -> (OAuth2Client, Credential)
    {
        await KeySetCache.shared.removeAll(under: server.baseURL + "/")
        let provider = try Provider()
        let jwks = String(
            decoding: try JSONSerialization.data(withJSONObject: ["keys": provider.publicKeys]), as: UTF8.self)
        server.route("GET", "/jwks") { _ in .json(jwks) }
        let client = try OAuth2Client(
            descriptor: descriptor(server, userInfo: userInfo, endSession: endSession),
            settings: ClientSettings(clientID: IDTokenVerifierTests.clientID))
        let (_, pending) = try await client.startAuthorization(
            redirectURI: URL(string: "http://127.0.0.1:4321/callback"), scopes: ["openid", "email"])
        let token = try provider.token(IDTokenVerifierTests.claims(issuedNowBy: server.baseURL, nonce: pending.nonce))
        server.route("POST", "/token") { _ in
            .json(#"{"access_token":"at-1","token_type":"Bearer","expires_in":3600,"id_token":"\#(token)"}"#)
        }
        return (client, try await client.exchange(code: "c-1", pending: pending))
    }

    /// The answer's `sub` must be the ID token's; anything else about it is refused by a case.
    @Test func userInfoIsAboutTheSignedInUserOrRefused() async throws {
        try await withServer { server in
            let (client, credential) = try await signedIn(at: server)
            server.route("GET", "/userinfo") { _ in
                .json(#"{"sub":"248289761001","email":"alice@example.com","picture":"https://img.example/a.png"}"#)
            }
            let info = try await client.userInfo(credential)
            let picture = info.claims["picture"]?.scalarText
            #expect(info.subject == "248289761001" && info.email == "alice@example.com")
            #expect(picture == "https://img.example/a.png")
            let sent = try #require(server.requests(to: "/userinfo").last)
            #expect(sent.method == "GET" && sent.header("Authorization") == "Bearer at-1" && sent.query == nil)

            typealias Check = @Sendable (AuthKitError) -> Bool
            let hostile: [(String, StubResponse, Check)] = [
                (
                    "another user", .json(#"{"sub":"someone-else","email":"mallory@example.com"}"#),
                    { error in
                        guard case .invalidResponse(.userInfo, .invalidField("sub", _)) = error.reason else {
                            return false
                        }
                        return !"\(error)".contains("mallory")
                    }
                ),
                (
                    "a look-alike sub", .json(#"{"sub":"248289761001 "}"#),
                    { if case .invalidResponse(.userInfo, .invalidField("sub", _)) = $0.reason { true } else { false } }
                ),
                (
                    "no sub", .json(#"{"email":"alice@example.com"}"#),
                    { if case .invalidResponse(.userInfo, .missingField("sub", _)) = $0.reason { true } else { false } }
                ),
                (
                    "sub twice", .json(#"{"sub":"someone-else","sub":"248289761001"}"#),
                    { if case .invalidResponse(.userInfo, .unreadableBody) = $0.reason { true } else { false } }
                ),
                (
                    "expired token",
                    .json(
                        #"{"error":"invalid_token"}"#, status: 401,
                        headers: [("WWW-Authenticate", #"Bearer error="invalid_token", error_description="expired""#)]),
                    {
                        $0
                            == .providerError(
                                step: .userInfo, .init(status: 401, code: "invalid_token", description: "expired"))
                    }
                ),
                (
                    // Both schemes (RFC 9449 §7.2), the error in the second:
                    // said (it was "HTTP 401", the bare Bearer one read alone).
                    "an error in the second challenge",
                    .json(
                        "{}", status: 401,
                        headers: [
                            ("WWW-Authenticate", #"Bearer realm="api", DPoP error="invalid_token", algs="ES256""#)
                        ]),
                    {
                        $0
                            == .providerError(
                                step: .userInfo, .init(status: 401, code: "invalid_token", description: nil))
                    }
                ),
                (
                    // The refusal's text echoing the token: masked (it was printed whole).
                    "a refusal that echoes the token",
                    .json(
                        "{}", status: 401,
                        headers: [
                            ("WWW-Authenticate", #"Bearer error="invalid_token", error_description="at-1 expired""#)
                        ]),
                    {
                        guard case .providerError(.userInfo, let refusal) = $0.reason else { return false }
                        return refusal.code == "invalid_token" && refusal.description == "•••• expired"
                    }
                ),
                (
                    "a signed answer", .text("eyJhbGciOi.e30.sig", contentType: "application/jwt", status: 200),
                    { if case .invalidResponse(.userInfo, .unreadableBody) = $0.reason { true } else { false } }
                ),
                (
                    "HTML that says it is JSON", .text("<html>hi</html>", contentType: "application/json", status: 200),
                    { if case .invalidResponse(.userInfo, .unreadableBody) = $0.reason { true } else { false } }
                ),
                (
                    "a redirect elsewhere", .redirect(302, to: "https://attacker.example/userinfo"),
                    { if case .redirectNotFollowed(.userInfo, 302, _) = $0.reason { true } else { false } }
                ),
                (
                    "a flood", .streaming(.flood),
                    { if case .responseTooLarge = $0 { true } else { false } }
                ),
            ]
            for (name, response, check) in hostile {
                server.route("GET", "/userinfo") { _ in response }
                await #expect(Comment(rawValue: name)) {
                    try await client.userInfo(credential)
                } throws: { error in
                    guard let error = error as? AuthKitError else { return false }
                    return check(error) && !"\(error)".contains("at-1")
                }
            }
        }
    }

    @Test func userInfoNeedsAVerifiedIdentityAndAnEndpoint() async throws {
        try await withServer { server in
            let (client, credential) = try await signedIn(at: server)
            var anonymous = credential
            anonymous.identity = nil
            await #expect(throws: AuthKitError.signInRequired(credential.key, reason: .noVerifiedIdentity)) {
                try await client.userInfo(anonymous)
            }
            let (plain, signedIn) = try await signedIn(at: server, userInfo: false)
            await #expect(throws: AuthKitError.notSupported(providerID: "op", .userInfo)) {
                try await plain.userInfo(signedIn)
            }
            #expect(server.requests(to: "/userinfo").isEmpty)
        }
    }

    /// RP-Initiated Logout 1.0 §2: the GET URL has the client id in place of
    /// the ID token; the posted form has both, every value escaped.
    @Test func endSessionKeepsTheIDTokenOutOfTheURL() async throws {
        try await withServer { server in
            let (client, credential) = try await signedIn(at: server)
            let idToken = try #require(credential.rawFields["id_token"]?.scalarText)
            let state = #"s"><script>1</script>"#
            let request = try client.endSession(
                credential, postLogoutRedirectURI: "https://app.example/bye", state: state)
            let url = request.url.absoluteString
            #expect(url.hasPrefix("\(server.baseURL)/logout?from=op&"))
            let query = Dictionary(
                uniqueKeysWithValues: (URLComponents(string: url)?.queryItems ?? []).map { ($0.name, $0.value ?? "") })
            #expect(query["client_id"] == IDTokenVerifierTests.clientID)
            #expect(query["post_logout_redirect_uri"] == "https://app.example/bye" && query["state"] == state)
            #expect(query["id_token_hint"] == nil && !url.contains(idToken))
            #expect(request.parameters["id_token_hint"] == idToken)

            let page = request.formHTML()
            #expect(page.contains(#"name="id_token_hint" value="\#(idToken)""#))
            #expect(page.contains(#"action="\#(server.baseURL)/logout?from=op""#))
            #expect(!page.contains("<script>") && page.contains("&lt;script&gt;"))

            // A credential whose recorded origins do not include the
            // end-session endpoint's (a placeholder that now names another
            // host) gets no hint: the ID token goes only where it was issued for.
            var elsewhere = credential
            elsewhere.endpointOrigins = ["https://as.example"]
            #expect(try client.endSession(elsewhere).parameters["id_token_hint"] == nil)

            let (plain, signedIn) = try await signedIn(at: server, endSession: false)
            #expect(throws: AuthKitError.notSupported(providerID: "op", .endSession)) {
                try plain.endSession(signedIn)
            }
        }
    }
}
