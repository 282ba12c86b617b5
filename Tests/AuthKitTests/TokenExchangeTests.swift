import AuthKitTestSupport
import Foundation
import HTTPTypes
import Testing

@testable import AuthKit

#if canImport(FoundationNetworking)
    import AuthKitFoundationNetworking // URLSessionHTTPClient on Linux
#endif

/// Token exchanges against a real HTTP server on 127.0.0.1: the assertions are
/// on the bytes the server received and on the credential built from its answer.
@Suite struct TokenExchangeTests {
    func pending(for client: OAuth2Client, redirect: String = "http://127.0.0.1:4321/callback") async throws
        -> PendingAuthorization
    {
        try await client.startAuthorization(redirectURI: URL(string: redirect)).pending
    }

    @Test func qiitaStyleJSONBodyAnd201WithTokenField() async throws {
        try await withServer { server in
            server.route("POST", "/api/v2/access_tokens") { _ in
                .json(
                    #"{"client_id":"qiita-client","scopes":["read_qiita","write_qiita"],"token":"ea5d0a593b2655e9568f144fb1826342292f5c6b7d406fda00577b8d1530d8a5"}"#,
                    status: 201)
            }
            let client = try OAuth2Client(
                descriptor: bundledDescriptor("qiita", pointingTo: server),
                settings: ClientSettings(clientID: "qiita-client", clientSecret: "qiita-secret"), now: { fixedNow })
            let pending = try await pending(for: client)
            let credential = try await client.exchange(code: "the-code", pending: pending, label: "work")

            let request = try #require(server.requests.last)
            #expect(request.method == "POST")
            #expect(request.path == "/api/v2/access_tokens")
            #expect(request.header("Content-Type") == "application/json")
            #expect(request.header("Authorization") == nil)
            #expect(
                try jsonObject(request.body) == [
                    "client_id": "qiita-client", "client_secret": "qiita-secret", "code": "the-code",
                ])

            #expect(credential.accessToken == "ea5d0a593b2655e9568f144fb1826342292f5c6b7d406fda00577b8d1530d8a5")
            #expect(credential.tokenType == "Bearer")
            #expect(credential.scopes == ["read_qiita", "write_qiita"])
            #expect(credential.expiresAt == nil)
            #expect(credential.label == "work")
            #expect(credential.providerID == "qiita")
            #expect(credential.rawFields["client_id"] == .string("qiita-client"))
        }
    }

    @Test func qiitaStyleErrorIsTyped() async throws {
        try await withServer { server in
            server.route("POST", "/api/v2/access_tokens") { _ in
                .json(#"{"message":"Not found","type":"not_found"}"#, status: 404)
            }
            let client = try OAuth2Client(
                descriptor: bundledDescriptor("qiita", pointingTo: server),
                settings: ClientSettings(clientID: "c", clientSecret: "s"))
            await #expect {
                try await client.exchange(code: "x", pending: pending(for: client))
            } throws: { error in
                guard case .providerError(.tokenExchange, let response)? = error.authKitReason else { return false }
                return response.code == "not_found" && response.description == "Not found" && response.status == 404
            }
        }
    }

    @Test func instagramStyleFormBodyThenLongLivedExchange() async throws {
        try await withServer { server in
            server.route("POST", "/oauth/access_token") { _ in
                .json(
                    #"{"data":[{"access_token":"IGQVJshort","user_id":17841405793187218,"permissions":"instagram_business_basic,instagram_business_content_publish"}]}"#
                )
            }
            server.route("GET", "/access_token") { _ in
                .json(#"{"access_token":"IGQVJlong","token_type":"bearer","expires_in":5183944}"#)
            }
            let client = try OAuth2Client(
                descriptor: bundledDescriptor("instagram", pointingTo: server),
                settings: ClientSettings(clientID: "990602627938098", clientSecret: "a1b2c3+d4/e5"), now: { fixedNow })
            let pending = try await pending(for: client, redirect: "https://localhost/callback")
            let credential = try await client.exchange(
                redirect: URL(string: "https://localhost/callback?code=AQBx&state=\(pending.state)#_")!,
                pending: pending)

            let requests = server.requests
            #expect(requests.count == 2)
            let first = requests[0]
            #expect(first.method == "POST")
            #expect(first.header("Content-Type") == "application/x-www-form-urlencoded")
            #expect(
                try formObject(first.bodyText) == [
                    "grant_type": "authorization_code", "code": "AQBx", "redirect_uri": "https://localhost/callback",
                    "client_id": "990602627938098", "client_secret": "a1b2c3+d4/e5",
                ])
            // The secret's + and / are escaped so a form decoder reads them back.
            #expect(first.bodyText.contains("client_secret=a1b2c3%2Bd4%2Fe5"))

            let second = requests[1]
            #expect(second.method == "GET")
            #expect(second.body.isEmpty)
            #expect(
                try formObject(try #require(second.query)) == [
                    "grant_type": "ig_exchange_token", "client_secret": "a1b2c3+d4/e5", "access_token": "IGQVJshort",
                ])

            #expect(credential.accessToken == "IGQVJlong")
            #expect(credential.tokenType == "bearer")
            #expect(credential.expiresAt == fixedNow.addingTimeInterval(5_183_944))
            #expect(credential.scopes == ["instagram_business_basic", "instagram_business_content_publish"])
            // Fields of the first answer survive the follow-up, exactly.
            guard case .array(let data)? = credential.rawFields["data"], case .object(let user)? = data.first else {
                Issue.record("data[0] lost")
                return
            }
            #expect(user["user_id"] == .integer(17_841_405_793_187_218))
        }
    }

    @Test func instagramFlatResponseIsAcceptedToo() async throws {
        try await withServer { server in
            server.route("POST", "/oauth/access_token") { _ in
                .json(#"{"access_token":"short","user_id":1,"permissions":["instagram_business_basic"]}"#)
            }
            server.route("GET", "/access_token") { _ in
                .json(#"{"access_token":"long","token_type":"bearer","expires_in":"5183944"}"#)
            }
            let client = try OAuth2Client(
                descriptor: bundledDescriptor("instagram", pointingTo: server),
                settings: ClientSettings(clientID: "c", clientSecret: "s"), now: { fixedNow })
            let credential = try await client.exchange(
                code: "c", pending: pending(for: client, redirect: "https://localhost/callback"))
            #expect(credential.accessToken == "long")
            #expect(credential.scopes == ["instagram_business_basic"])
            #expect(credential.expiresAt == fixedNow.addingTimeInterval(5_183_944))
        }
    }

    @Test func instagramFollowUpErrorNamesTheStep() async throws {
        try await withServer { server in
            server.route("POST", "/oauth/access_token") { _ in .json(#"{"access_token":"short","user_id":1}"#) }
            server.route("GET", "/access_token") { _ in
                .json(
                    #"{"error":{"message":"Invalid OAuth access token.","type":"OAuthException","code":190}}"#,
                    status: 400)
            }
            let client = try OAuth2Client(
                descriptor: bundledDescriptor("instagram", pointingTo: server),
                settings: ClientSettings(clientID: "c", clientSecret: "s"))
            await #expect {
                try await client.exchange(
                    code: "c", pending: pending(for: client, redirect: "https://localhost/callback"))
            } throws: { error in
                guard case .providerError(.followUpExchange, let response)? = error.authKitReason else { return false }
                return response.code == "OAuthException" && response.description == "Invalid OAuth access token."
                    && !"\(error)".contains("short") && !"\(error)".contains("client_secret")
            }
        }
    }

    @Test func basicAuthenticationVectorAndFormEncodingBeforeBase64() async throws {
        try await withServer { server in
            server.route("POST", "/token") { _ in .json(#"{"access_token":"at","token_type":"Bearer"}"#) }
            let descriptor = testDescriptor(
                id: "rfc", name: "RFC", protocol: .oauth2,
                authorization: DescriptorFile.Authorization(url: "\(server.baseURL)/authorize"),
                token: DescriptorFile.Token(url: "\(server.baseURL)/token"), pkce: .s256)
            // security.md vector.
            let plain = try OAuth2Client(
                descriptor: descriptor, settings: ClientSettings(clientID: "CLIENT_ID", clientSecret: "CLIENT_SECRET"))
            _ = try await plain.exchange(code: "c", pending: pending(for: plain))
            #expect(server.requests.last?.header("Authorization") == "Basic Q0xJRU5UX0lEOkNMSUVOVF9TRUNSRVQ=")

            // RFC 6749 §2.3.1: form-urlencode id and secret, then base64.
            let tricky = try OAuth2Client(
                descriptor: descriptor, settings: ClientSettings(clientID: "0!1*$$", clientSecret: "1/2_3+4 5"))
            let pending = try await pending(for: tricky)
            _ = try await tricky.exchange(code: "c", pending: pending)
            let request = try #require(server.requests.last)
            let header = try #require(request.header("Authorization"))
            let decoded = String(
                decoding: try #require(Data(base64Encoded: String(header.dropFirst(6)))), as: UTF8.self)
            #expect(decoded == "0%211%2A%24%24:1%2F2_3%2B4%205")
            let body = try formObject(request.bodyText)
            #expect(body["client_secret"] == nil)
            #expect(body["code_verifier"] == pending.codeVerifier)
            #expect(body["redirect_uri"] == "http://127.0.0.1:4321/callback")
            #expect(body["grant_type"] == "authorization_code")
        }
    }

    @Test func publicClientSendsOnlyClientID() async throws {
        try await withServer { server in
            server.route("POST", "/token") { _ in .json(#"{"access_token":"at","token_type":"Bearer"}"#) }
            let descriptor = testDescriptor(
                id: "pub", name: "Pub", protocol: .oauth2,
                authorization: DescriptorFile.Authorization(url: "\(server.baseURL)/a"),
                token: DescriptorFile.Token(url: "\(server.baseURL)/token", clientAuthentication: .basic),
                pkce: .required)
            let client = try OAuth2Client(descriptor: descriptor, settings: ClientSettings(clientID: "public-app"))
            _ = try await client.exchange(code: "c", pending: pending(for: client))
            let request = try #require(server.requests.last)
            #expect(request.header("Authorization") == nil)
            let body = try formObject(request.bodyText)
            #expect(body["client_id"] == "public-app")
            #expect(body["code_verifier"]?.count == 43)
        }
    }

    /// Reddit's installed apps have no secret and must still send HTTP Basic,
    /// with an empty password (`token.publicClientAuthentication`): for the
    /// code, the refresh and the revocation. A request without it gets 401.
    @Test func publicClientSendsBasicWithAnEmptyPasswordWhereTheDescriptorSaysSo() async throws {
        try await withServer { server in
            server.route("POST", "/api/v1/access_token") { _ in
                .json(
                    #"{"access_token":"at","token_type":"bearer","expires_in":3600,"refresh_token":"rt","scope":"identity"}"#
                )
            }
            server.route("POST", "/api/v1/revoke_token") { _ in StubResponse(status: 204) }
            let client = try OAuth2Client(
                descriptor: bundledDescriptor("reddit", pointingTo: server),
                settings: ClientSettings(clientID: "installed-app", clientSecret: ""))
            let credential = try await client.exchange(code: "c", pending: pending(for: client))
            var expired = credential
            expired.expiresAt = Date(timeIntervalSinceNow: -60)
            _ = try await client.refresh(expired)
            try await client.revoke(credential)
            // The code, the refresh, then RFC 7009's two revocations: the refresh token first.
            #expect(server.requests.count == 4)
            #expect(
                try server.requests.suffix(2).map { try formObject($0.bodyText)["token_type_hint"] }
                    == ["refresh_token", "access_token"])
            for request in server.requests {
                #expect(
                    request.header("Authorization") == "Basic " + Data("installed-app:".utf8).base64EncodedString(),
                    "\(request.uri)")
                let body = try formObject(request.bodyText)
                #expect(
                    body["client_id"] == nil && body["client_secret"] == nil,
                    "\(request.uri): one way to authenticate (RFC 6749 §2.3)")
            }
        }
    }

    /// Reddit's API rules ask every request for a descriptive User-Agent:
    /// its who-am-I call carries the user's (`whoAmI.headers`), as its token
    /// requests do; it went with AuthKit's own.
    @Test func redditsWhoAmICarriesItsUserAgent() async throws {
        try await withServer { server in
            server.route("GET", "/api/v1/me") { _ in .json(#"{"id":"abc12","name":"spez"}"#) }
            let client = try OAuth2Client(
                descriptor: bundledDescriptor("reddit", pointingTo: server),
                settings: ClientSettings(
                    clientID: "c", clientSecret: "s", placeholders: ["user_agent": "linux:my-app:1.0 (by /u/spez)"]))
            let credential = Credential(providerID: "reddit", accessToken: "at", endpointOrigins: [server.baseURL])
            let who = try await client.whoAmI(credential)
            #expect(who.subject == "abc12" && who.name == "spez")
            let request = try #require(server.requests(to: "/api/v1/me").first)
            #expect(request.header("User-Agent") == "linux:my-app:1.0 (by /u/spez)")
            #expect(request.header("Authorization") == "Bearer at")
        }
    }

    /// Notion's reference lists `Notion-Version` as a required header of
    /// its token endpoint (a request without it: 400 `missing_version`), and
    /// its SDK sends it to the revocation endpoint too: both carry it,
    /// beside HTTP Basic and a JSON body.
    @Test func notionsTokenAndRevocationRequestsCarryItsVersionHeader() async throws {
        try await withServer { server in
            server.route("POST", "/v1/oauth/token") { _ in
                .json(#"{"access_token":"at","token_type":"bearer","refresh_token":"rt","bot_id":"b"}"#)
            }
            server.route("POST", "/v1/oauth/revoke") { _ in .json("{}") }
            let client = try OAuth2Client(
                descriptor: bundledDescriptor("notion", pointingTo: server),
                settings: ClientSettings(clientID: "c", clientSecret: "s"))
            let credential = try await client.exchange(code: "code-1", pending: pending(for: client))
            try await client.revoke(credential)
            #expect(server.requests.map(\.uri) == ["/v1/oauth/token", "/v1/oauth/revoke"])
            for request in server.requests {
                #expect(request.header("Notion-Version")?.isEmpty == false, "\(request.uri)")
                #expect(request.header("Authorization") == "Basic " + Data("c:s".utf8).base64EncodedString())
                #expect(request.header("Content-Type")?.hasPrefix("application/json") == true)
            }
        }
    }

    /// Atlassian's and Bitbucket's token endpoints take no public client:
    /// a sign-in without the secret is refused before anything is sent.
    @Test(arguments: ["atlassian", "bitbucket"])
    func aProviderWithoutPublicClientsRefusesAnExchangeWithoutTheSecret(provider: String) async throws {
        try await withServer { server in
            let client = try OAuth2Client(
                descriptor: bundledDescriptor(provider, pointingTo: server), settings: ClientSettings(clientID: "c"))
            await #expect {
                _ = try await client.exchange(code: "code-1", pending: pending(for: client))
            } throws: { error in
                guard case .missingSetting(_, .clientSecret)? = error.authKitReason else { return false }
                return true
            }
            #expect(server.requests.isEmpty)
        }
    }

    /// Strava lets the user untick scopes, names the granted ones in the
    /// redirect's `scope` and not in its token answer
    /// (`authorization.grantedScopesParameter`): the credential recorded the
    /// requested scopes, claiming what the user had refused.
    @Test func stravasGrantedScopesComeFromTheRedirect() async throws {
        try await withServer { server in
            server.route("POST", "/oauth/token") { _ in
                .json(
                    #"{"token_type":"Bearer","expires_at":1900000000,"expires_in":21600,"refresh_token":"r","access_token":"a","athlete":{"id":1}}"#
                )
            }
            let client = try OAuth2Client(
                descriptor: bundledDescriptor("strava", pointingTo: server),
                settings: ClientSettings(clientID: "c", clientSecret: "s"))
            let (_, pending) = try await client.startAuthorization(scopes: ["read", "activity:read_all"])
            func redirect(_ scope: String) throws -> URL {
                try #require(URL(string: "\(pending.redirectURI)?state=\(pending.state)&code=the-code&scope=\(scope)"))
            }
            #expect(try await client.exchange(redirect: redirect("read"), pending: pending).scopes == ["read"])
            #expect(
                try await client.exchange(redirect: redirect("read%2Cactivity%3Aread_all"), pending: pending).scopes
                    == ["read", "activity:read_all"])
            // Not scope tokens (it came through the browser): the requested ones are kept.
            #expect(
                try await client.exchange(redirect: redirect("read%22"), pending: pending).scopes == [
                    "read", "activity:read_all",
                ])
            #expect(
                try await client.exchange(code: "the-code", pending: pending).scopes == ["read", "activity:read_all"])
        }
    }

    @Test func githubStyleFormResponseAndErrorWithHTTP200() async throws {
        try await withServer { server in
            let calls = Recorder<Int>()
            server.route("POST", "/login/oauth/access_token") { _ in
                calls.append(1)
                if calls.all.count == 1 {
                    return .form(
                        "access_token=gho_16C7e42F292c6912E7710c838347Ae178B4a&scope=repo%2Cgist&token_type=bearer")
                }
                return .form(
                    "error=bad_verification_code&error_description=The+code+passed+is+incorrect+or+expired.&error_uri=https%3A%2F%2Fdocs.github.com"
                )
            }
            let client = try OAuth2Client(
                descriptor: bundledDescriptor("github", pointingTo: server),
                settings: ClientSettings(clientID: "Iv1.abc", clientSecret: "gh-secret"))
            let credential = try await client.exchange(code: "c", pending: pending(for: client))
            #expect(credential.accessToken == "gho_16C7e42F292c6912E7710c838347Ae178B4a")
            #expect(credential.scopes == ["repo", "gist"]) // GitHub answers with commas though it takes spaces
            #expect(server.requests.last?.header("Accept") == "application/json")

            await #expect {
                try await client.exchange(code: "c", pending: pending(for: client))
            } throws: { error in
                guard case .providerError(.tokenExchange, let response)? = error.authKitReason else { return false }
                return response.code == "bad_verification_code" && response.status == 200
                    && response.description == "The code passed is incorrect or expired."
                    && response.uri == "https://docs.github.com"
            }
        }
    }

    /// A token of a type AuthKit cannot send (RFC 6749 §7.1: not to be
    /// used) is refused at the sign-in, naming the type and the descriptor
    /// setting that fixes a provider whose tokens are Bearer tokens anyway.
    /// Before, it was stored, and every request with it then failed.
    /// A refresh's answer is kept: its rotated refresh token must be.
    @Test func aTokenOfATypeAuthKitCannotSendIsRefusedAtTheSignIn() async throws {
        try await withServer { server in
            server.route("POST", "/login/oauth/access_token") { _ in
                .json(#"{"access_token":"mac-token","token_type":"mac","mac_key":"k","refresh_token":"rotated"}"#)
            }
            let client = try OAuth2Client(
                descriptor: bundledDescriptor("github", pointingTo: server),
                settings: ClientSettings(clientID: "Iv1.abc", clientSecret: "gh-secret"), now: { fixedNow })
            let error = await #expect(throws: AuthKitError.self) {
                try await client.exchange(code: "c", pending: pending(for: client))
            }
            guard case .invalidResponse(.tokenExchange, let reason)? = error?.reason else {
                Issue.record("not an unusable token exchange: \(String(describing: error))")
                return
            }
            #expect(
                reason.detail.contains("of type 'mac'") && reason.detail.contains("nothing was stored"), "\(reason)")
            #expect(
                reason.detail.contains("token.response.assumeBearer") && reason.detail.contains("(github.json (test))"),
                "\(reason)")
            #expect(!reason.detail.contains("mac-token") && !reason.detail.contains("rotated"))

            let earlier = Credential(providerID: "github", accessToken: "old", refreshToken: "old-refresh")
            let refreshed = try await client.refresh(earlier)
            #expect(refreshed.refreshToken == "rotated" && refreshed.tokenType == "mac")
            #expect(throws: AuthKitError.misuse(.unsupportedTokenType("mac"))) {
                try client.authorize(
                    HTTPRequest(method: .get, scheme: "https", authority: "api.github.com", path: "/user"), body: nil,
                    with: refreshed)
            }
        }
    }

    /// A server that puts what it was sent into `token_type` got it printed:
    /// whole in the sign-in's "of type '…'" refusal, and, from a refresh,
    /// stored and shown by every later command. A value that is no token type
    /// (RFC 6749 Appendix A.13) is refused without being repeated, and the
    /// refusal of a well-formed type other than Bearer masks the code, the
    /// verifier and the client secret.
    /// An empty access token was "must be a non-empty string, got a string".
    @Test func anEmptyAccessTokenIsCalledEmpty() async throws {
        try await withServer { server in
            let answer = LockedValue(#"{"access_token":"","token_type":"Bearer"}"#)
            server.route("POST", "/login/oauth/access_token") { _ in .json(answer.current) }
            let client = try OAuth2Client(
                descriptor: bundledDescriptor("github", pointingTo: server),
                settings: ClientSettings(clientID: "Iv1.abc", clientSecret: "gh-secret-0123456789"), now: { fixedNow })
            for (body, said) in [
                (
                    #"{"access_token":"","token_type":"Bearer"}"#,
                    "'access_token' must be a non-empty string, got an empty one"
                ),
                (
                    #"{"access_token":7,"token_type":"Bearer"}"#,
                    "'access_token' must be a non-empty string, got a number"
                ),
            ] {
                answer.withLock { $0 = body }
                await #expect {
                    try await client.exchange(code: "c", pending: try pending(for: client))
                } throws: { error in
                    guard case .invalidResponse(_, let reason)? = error.authKitReason else { return false }
                    return reason.detail == said && reason.kind == .invalidField("access_token")
                }
            }
        }
    }

    @Test func aTokenTypeEchoingTheRequestIsNotRepeated() async throws {
        try await withServer { server in
            let echoed = LockedValue("")
            server.route("POST", "/login/oauth/access_token") { request in
                .json(#"{"access_token":"at","token_type":"\#(echoed.current)","refresh_token":"rotated"}"#)
            }
            let client = try OAuth2Client(
                descriptor: bundledDescriptor("github", pointingTo: server),
                settings: ClientSettings(clientID: "Iv1.abc", clientSecret: "gh-secret-0123456789"), now: { fixedNow })
            let attempt = try await pending(for: client)
            let verifier = try #require(attempt.codeVerifier)
            for type in [
                "refresh_token|old-refresh-token|gh-secret-0123456789", "code-value-0123" + verifier,
                "gh-secret-0123456789",
            ] {
                echoed.withLock { $0 = type }
                let error = await #expect(throws: AuthKitError.self) {
                    try await client.exchange(code: "code-value-0123", pending: attempt)
                }
                let text = String(describing: error)
                #expect(
                    !text.contains("gh-secret") && !text.contains("code-value") && !text.contains(verifier.prefix(8)),
                    "\(text)")
            }
            // A refresh's answer is kept for its rotated refresh token, with
            // the type the token had, not the echo.
            echoed.withLock { $0 = "refresh_token|old-refresh-token|gh-secret-0123456789" }
            let refreshed = try await client.refresh(
                Credential(providerID: "github", accessToken: "old", refreshToken: "old-refresh-token"))
            #expect(refreshed.tokenType == "Bearer" && refreshed.refreshToken == "rotated")
            #expect(refreshed.rawFields["token_type"] == nil, "the echo was stored with the answer")
        }
    }

    /// Granted scopes are stored and printed by `token list`: a server
    /// that put the client secret, the code or the verifier in `scope` got
    /// it shown wherever that output went. A sign-in's answer that does is
    /// refused without repeating it; a refresh's keeps its token and the
    /// scopes as before, and says why. A short secret (`read`) that is part
    /// of a real scope is not taken for an echo.
    @Test func aScopeEchoingTheRequestIsNeitherStoredNorShown() async throws {
        try await withServer { server in
            let echoed = LockedValue("")
            server.route("POST", "/login/oauth/access_token") { _ in
                .json(
                    #"{"access_token":"at","token_type":"bearer","refresh_token":"rotated-0123","scope":"\#(echoed.current)"}"#
                )
            }
            let client = try OAuth2Client(
                descriptor: bundledDescriptor("github", pointingTo: server),
                settings: ClientSettings(clientID: "Iv1.abc", clientSecret: "gh-secret-0123456789"), now: { fixedNow })
            let attempt = try await pending(for: client)
            let verifier = try #require(attempt.codeVerifier)
            for scope in [
                "repo,gh-secret-0123456789", "user code=code/value+0123", "x:code%2Fvalue%2B0123", "x:" + verifier,
            ] {
                echoed.withLock { $0 = scope }
                let error = await #expect(throws: AuthKitError.self) {
                    try await client.exchange(code: "code/value+0123", pending: attempt)
                }
                let text = String(describing: error)
                #expect(text.contains("repeats a secret the request carried"), "\(scope): \(text)")
                #expect(
                    !text.contains("gh-secret") && !text.contains("value") && !text.contains(verifier.prefix(8)),
                    "\(text)")
            }
            echoed.withLock { $0 = "repo read:old-refresh-token-0123" }
            let refreshed = try await client.refresh(
                Credential(
                    providerID: "github", accessToken: "old", refreshToken: "old-refresh-token-0123",
                    scopes: ["repo"]))
            #expect(refreshed.refreshToken == "rotated-0123" && refreshed.scopes == ["repo"], "\(refreshed.scopes)")

            let plain = try OAuth2Client(
                descriptor: bundledDescriptor("github", pointingTo: server),
                settings: ClientSettings(clientID: "Iv1.abc", clientSecret: "read"), now: { fixedNow })
            echoed.withLock { $0 = "read:user,repo" }
            let credential = try await plain.exchange(code: "code-value-0123", pending: pending(for: plain))
            #expect(credential.scopes == ["read:user", "repo"])
        }
    }

    /// A refresh answer with a usable token and a side field that is not
    /// (`expires_in: "soon"`, `1e12`, a `scope` object) was refused, and the
    /// rotated refresh token it carried thrown away, which costs the grant
    /// where reuse is detected (RFC 9700 §4.14.2). It is kept without the
    /// field, and said so; a sign-in's answer is still refused.
    @Test func aRefreshAnswerWithAnUnusableSideFieldKeepsItsRotatedToken() throws {
        let body =
            #"{"access_token":"new","token_type":"Bearer","refresh_token":"rotated","expires_in":"soon","refresh_token_expires_in":1e12,"scope":{"a":1}}"#
        let response = IncomingResponse(
            status: 200, headers: HTTPFields([HTTPField(name: .contentType, value: "application/json")]),
            body: Data(body.utf8), secrets: ["rotated-not"])
        let fields = try TokenResponseParser(step: .refresh).parse(response)
        #expect(fields.refreshToken == "rotated" && fields.accessToken == "new")
        #expect(fields.expiresIn == nil && fields.refreshTokenExpiresIn == nil && fields.scopes == nil)
        #expect(
            fields.dropped.count == 3 && fields.dropped[0].contains("'expires_in' must be a number of seconds"),
            "\(fields.dropped)")
        #expect(throws: AuthKitError.self) { try TokenResponseParser(step: .tokenExchange).parse(response) }
    }

    /// A byte-order mark before the JSON (RFC 8259 §8.1 lets a reader
    /// ignore it) was a malformed answer, and the spent code lost with it.
    @Test func aByteOrderMarkBeforeTheAnswerIsIgnored() throws {
        let body = Data([0xEF, 0xBB, 0xBF]) + Data(#"{"access_token":"a","token_type":"Bearer"}"#.utf8)
        let fields = try TokenResponseParser().parse(
            IncomingResponse(status: 200, headers: [("Content-Type", "application/json")], body: body))
        #expect(fields.accessToken == "a")
    }

    /// Only the three bytes of a whole mark are taken off, wherever the
    /// bytes start (a slice of a larger buffer): not a part of one, not
    /// a mark further in.
    @Test func onlyALeadingWholeByteOrderMarkIsTakenOff() {
        let mark: [UInt8] = [0xEF, 0xBB, 0xBF]
        let strip = TokenResponseParser.withoutByteOrderMark
        #expect(strip(Data(mark + [0x7B])) == Data([0x7B]))
        #expect(strip(Data([0x20] + mark + [0x7B]).dropFirst()) == Data([0x7B]))
        #expect(strip(Data(mark)) == Data())
        #expect(strip(Data([0xEF, 0xBB])) == Data([0xEF, 0xBB]))
        #expect(strip(Data([0xEF, 0xBB, 0x7B])) == Data([0xEF, 0xBB, 0x7B]))
        #expect(strip(Data([0x7B] + mark)) == Data([0x7B] + mark))
        #expect(strip(Data()) == Data())
    }

    @Test(arguments: [
        (#"{"access_token":"a","token_type":"Bearer","expires_in":3600}"#, 3600.0),
        (#"{"access_token":"a","token_type":"Bearer","expires_in":"3600"}"#, 3600.0),
        (#"{"access_token":"a","token_type":"Bearer","expires_in":3599.5}"#, 3599.5),
    ])
    func expiresInAsNumberOrString(body: String, seconds: Double) async throws {
        let fields = try TokenResponseParser().parse(
            IncomingResponse(status: 200, headers: [("Content-Type", "application/json")], body: Data(body.utf8)))
        #expect(fields.expiresIn == seconds)
    }

    /// An access token is sent as `Bearer <token>` (RFC 6750 §2.1): one with
    /// a space, a quote, a comma or a backslash was stored and then sent as a
    /// header that says something else (`Bearer AT with space`).
    @Test(arguments: ["AT with space", #"AT\"q"#, "AT,x=y", #"AT\\x"#])
    func anAccessTokenThatWouldChangeItsHeaderIsRefused(token: String) {
        let body = #"{"access_token":"\#(token)","token_type":"Bearer"}"#
        let error = #expect(throws: AuthKitError.self, "\(token)") {
            try TokenResponseParser().parse(
                IncomingResponse(status: 200, headers: [("Content-Type", "application/json")], body: Data(body.utf8)))
        }
        #expect(
            String(describing: error).contains("would change the Authorization header"), "\(String(describing: error))")
        let amazon = #"{"access_token":"Atza|IQEBLjAsAhRmHjNgHpi0U-Dme37rR6CuUpSR","token_type":"bearer"}"#
        #expect(throws: Never.self) {
            try TokenResponseParser().parse(
                IncomingResponse(status: 200, headers: [("Content-Type", "application/json")], body: Data(amazon.utf8)))
        }
    }

    /// `Double("0x10")` is 16, and `"inf"` and `"nan"` are numbers to it:
    /// a numeric string is read only as JSON writes a number.
    @Test(arguments: ["0x10", "inf", "nan", "e5", "1_000", "٣٦٠٠"])
    func aLifetimeStringThatIsNotADecimalNumberIsRefused(text: String) {
        let body = #"{"access_token":"a","token_type":"Bearer","expires_in":"\#(text)"}"#
        #expect(throws: AuthKitError.self, "\(text)") {
            try TokenResponseParser().parse(
                IncomingResponse(status: 200, headers: [("Content-Type", "application/json")], body: Data(body.utf8)))
        }
        #expect(
            TokenResponseParser.decimal("3600") == 3600 && TokenResponseParser.decimal("3.6e3") == 3600
                && TokenResponseParser.decimal("-1") == -1)
    }

    @Test func expiresInNullOrAbsentMeansUnknown() throws {
        for body in [
            #"{"access_token":"a","token_type":"Bearer","expires_in":null}"#,
            #"{"access_token":"a","token_type":"Bearer"}"#,
        ] {
            let fields = try TokenResponseParser().parse(IncomingResponse(status: 200, body: Data(body.utf8)))
            #expect(fields.expiresIn == nil)
        }
    }

    @Test(arguments: ["false", "{}", #""zzz""#, "[]", "-5", "1e300"])
    func expiresInOfOtherTypesIsAnError(value: String) {
        let body = #"{"access_token":"a","token_type":"Bearer","expires_in":\#(value)}"#
        #expect {
            try TokenResponseParser().parse(IncomingResponse(status: 200, body: Data(body.utf8)))
        } throws: { error in
            guard case .invalidResponse(.tokenExchange, let reason)? = error.authKitReason else { return false }
            // A number out of range is named as one, not as "got a number".
            let outOfRange = ["-5", "1e300"].contains(value)
            return reason.detail.contains("expires_in")
                && reason.detail.contains("which is not 0 to 1e11 seconds") == outOfRange
                && !reason.detail.contains("got a number")
        }
    }

    /// RFC 6749 A.12/A.17: tokens are visible ASCII. One with a CR/LF (which
    /// a header would silently turn into spaces, or a pasted header split),
    /// a NUL or non-ASCII is refused, and the error does not repeat it.
    @Test(arguments: [
        (#""access_token":"abc\r\nX-Evil: 1""#, "access_token"),
        (#""access_token":"ok-token","refresh_token":"r\u0000r""#, "refresh_token"),
        (#""access_token":"tökén""#, "access_token"),
    ])
    func aTokenNoHeaderCanCarryIsRefused(members: String, field: String) {
        let body = #"{"token_type":"Bearer",\#(members)}"#
        #expect {
            try TokenResponseParser().parse(IncomingResponse(status: 200, body: Data(body.utf8)))
        } throws: { error in
            guard case .invalidResponse(.tokenExchange, let reason)? = error.authKitReason else { return false }
            return reason.detail.contains("'\(field)'") && reason.detail.contains("§A.1")
                && !"\(error)".contains("X-Evil") && !"\(error)".contains("tök")
        }
        // (A space is visible ASCII too, but would change the Bearer header:
        // anAccessTokenThatWouldChangeItsHeaderIsRefused. A refresh token, sent form-encoded, may hold one.)
        let fine = #"{"token_type":"Bearer","access_token":"a-Z_0.9~+/=|x","refresh_token":"eyJ.abc x"}"#
        #expect(throws: Never.self) {
            try TokenResponseParser().parse(IncomingResponse(status: 200, body: Data(fine.utf8)))
        }
    }

    @Test func unknownFieldsAreKept() throws {
        let body =
            #"{"access_token":"a","token_type":"Bearer","created_at":1700000000,"team":{"id":"T1"},"id_token":null}"#
        let fields = try TokenResponseParser().parse(IncomingResponse(status: 200, body: Data(body.utf8)))
        #expect(fields.raw["created_at"] == .integer(1_700_000_000))
        #expect(fields.raw["team"] == .object(["id": .string("T1")]))
    }

    /// Members are kept within bounds (``KeptMembers``): one nested more
    /// than 8 deep or taking more than 64 KiB is left out, and so are the
    /// largest past 256 KiB in all; an `id_token` is kept whole. Each is
    /// named in `notKept`, never with its value.
    @Test func unknownFieldsAreKeptWithinBounds() throws {
        func nested(_ depth: Int) -> String {
            String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
        }
        let filler = String(repeating: "x", count: 60_000)
        let body =
            #"{"access_token":"a","token_type":"Bearer","user_id":7,"ok8":\#(nested(8)),"deep9":\#(nested(9)),"#
            + #""big":"\#(String(repeating: "y", count: 70_000))","#
            + #""id_token":"\#(String(repeating: "z", count: 100_000))","#
            + (1...5).map { #""a\#($0)":"\#(filler)""# }.joined(separator: ",") + "}"
        let fields = try TokenResponseParser().parse(IncomingResponse(status: 200, body: Data(body.utf8)))
        #expect(
            Set(fields.raw.keys) == [
                "access_token", "token_type", "user_id", "ok8", "id_token", "a1", "a2", "a3", "a4",
            ])
        #expect(fields.raw["id_token"]?.scalarText?.count == 100_000)
        #expect(
            fields.notKept == [
                "its member 'a5' was not kept: the members kept before it take all of the 256 KiB kept in all",
                "its member 'big' was not kept: it takes about 69 KiB, more than the 64 KiB kept of one member",
                "its member 'deep9' was not kept: it nests 9 levels deep, more than the 8 kept",
            ])
    }

    @Test func tokenTypeIsRequiredUnlessRelaxed() throws {
        let body = Data(#"{"access_token":"a"}"#.utf8)
        #expect(throws: AuthKitError.self) {
            try TokenResponseParser().parse(IncomingResponse(status: 200, body: body))
        }
        let relaxed = TokenResponseParser(mapping: .standard.requiringTokenType(false))
        #expect(try relaxed.parse(IncomingResponse(status: 200, body: body)).tokenType == nil)
    }

    @Test func rfc6749ErrorBodyIsTyped() throws {
        let body = Data(#"{"error":"invalid_grant","error_description":"Code expired"}"#.utf8)
        #expect {
            try TokenResponseParser().parse(
                IncomingResponse(status: 400, headers: [("Content-Type", "application/json")], body: body))
        } throws: { error in
            guard case .providerError(.tokenExchange, let response)? = error.authKitReason else { return false }
            return response.code == "invalid_grant" && response.description == "Code expired" && response.status == 400
                && "\(error)".contains("invalid_grant: Code expired")
        }
    }

    @Test func invalidClientAs401WithChallenge() throws {
        let response = IncomingResponse(
            status: 401, headers: [("WWW-Authenticate", #"Basic realm="x", error="invalid_client""#)])
        #expect {
            try TokenResponseParser().parse(response)
        } throws: { error in
            guard case .providerError(_, let r)? = error.authKitReason else { return false }
            return r.code == "invalid_client" && r.status == 401
        }
    }

    /// RFC 6749 §5.2: a 401 with a challenge is the client's refusal
    /// (`invalid_client`, or the challenge's own error) whenever its body
    /// says nothing usable: empty though it says JSON, an HTML page, JSON
    /// without `error`. Only a 401 with no body at all was read so: the
    /// others said "malformed" or "an HTML page", and the device, PAR and
    /// introspection endpoints "HTTP 401 without an OAuth error". An
    /// `error` in the body still wins; a 401 without a challenge is as before.
    @Test func a401ChallengeIsTheClientsRefusalWhateverItsBody() throws {
        func refusal(
            _ body: String, type: String?, challenge: String? = #"Basic realm="x""#, step: FlowStep,
            members: Bool
        ) -> String {
            var headers = [(String, String)]()
            if let type { headers.append(("Content-Type", type)) }
            if let challenge { headers.append(("WWW-Authenticate", challenge)) }
            let response = IncomingResponse(status: 401, headers: headers, body: Data(body.utf8))
            let parser = TokenResponseParser(step: step)
            do {
                if members { _ = try parser.members(of: response) } else { _ = try parser.parse(response) }
            } catch let error as AuthKitError {
                guard case .providerError(step, let answer) = error.reason, answer.status == 401 else {
                    return "\(error)"
                }
                return answer.code
            } catch {
                return "\(error)"
            }
            return "no error"
        }
        for (step, members) in [
            (FlowStep.tokenExchange, false), (.refresh, false), (.deviceAuthorization, true),
            (.pushedAuthorization, true), (.introspection, true),
        ] {
            for (body, type) in [
                ("", "application/json"), ("<html><body>Unauthorized</body></html>", "text/html"),
                ("<html>", nil), ("{}", "application/json"), (#"{"message":"bad credentials"}"#, "application/json"),
                (#"{"access_token":"#, "application/json"), ("", nil),
            ] {
                #expect(refusal(body, type: type, step: step, members: members) == "invalid_client", "\(step) \(body)")
            }
            #expect(
                refusal(
                    "<html>", type: "text/html", challenge: #"Bearer error="invalid_token""#, step: step,
                    members: members) == "invalid_token")
            // A token scheme's challenge without an error (a call a token
            // authorizes, as Instagram's refresh) refuses the token, not the client.
            #expect(
                refusal("<html>", type: "text/html", challenge: #"Bearer realm="api""#, step: step, members: members)
                    == "invalid_token")
            #expect(
                refusal(#"{"error":"invalid_grant"}"#, type: "application/json", step: step, members: members)
                    == "invalid_grant")
            #expect(
                refusal("<html>", type: "text/html", challenge: nil, step: step, members: members)
                    .contains("an HTML page"))
        }
    }

    /// A 401's challenge names its error in an `error` auth-param (RFC 6750
    /// §3, RFC 9110 §11.2), read as a parameter: the first `error="` in the
    /// field, found as text, made `x_error="invalid_grant"` an
    /// `invalid_grant` and kept a quoted value's escapes. What it names is
    /// masked as any text of the provider's is.
    @Test func aChallengesErrorIsItsParameter() throws {
        func code(_ challenges: [String], secrets: [String] = []) -> String? {
            var fields = HTTPFields()
            for challenge in challenges { fields.append(HTTPField(name: .wwwAuthenticate, value: challenge)) }
            do {
                _ = try TokenResponseParser().parse(
                    IncomingResponse(status: 401, headers: fields, body: Data(), secrets: secrets))
            } catch let error as AuthKitError {
                guard case .providerError(_, let response) = error.reason else { return nil }
                return response.code
            } catch {}
            return nil
        }
        #expect(code([#"Basic realm="x", x_error="invalid_grant""#]) == "invalid_client")
        #expect(code([#"Basic realm="error=\"invalid_grant\"""#]) == "invalid_client")
        #expect(code([#"Bearer error="invalid\_token""#]) == "invalid_token")
        #expect(code([#"Basic realm="x", Bearer realm="y", error="invalid_token""#]) == "invalid_token")
        #expect(code([#"Basic realm="x""#, #"DPoP error="invalid_dpop_proof""#]) == "invalid_dpop_proof")
        #expect(code([#"Basic error="s3cr3t-client-value""#], secrets: ["s3cr3t-client-value"]) == "••••")
    }

    @Test func htmlAndTruncatedBodiesAreUnusable() throws {
        let cases: [(IncomingResponse, String)] = [
            (
                IncomingResponse(
                    status: 502, headers: [("Content-Type", "text/html")],
                    body: Data("<html><title>Bad Gateway</title></html>".utf8)), "HTML page"
            ),
            (
                IncomingResponse(
                    status: 200, headers: [("Content-Type", "application/json")],
                    body: Data(#"{"access_token":"a","tok"#.utf8)), "malformed or truncated"
            ),
            (IncomingResponse(status: 200, body: Data("[1,2]".utf8)), "not an object"),
            (
                IncomingResponse(status: 500, headers: [("Content-Type", "application/json")], body: Data("{}".utf8)),
                "HTTP 500"
            ),
            (
                IncomingResponse(status: 200, body: Data(#"{"access_token":42,"token_type":"Bearer"}"#.utf8)),
                "access_token"
            ),
        ]
        for (response, fragment) in cases {
            #expect {
                try TokenResponseParser().parse(response)
            } throws: { error in
                guard case .invalidResponse(_, let reason)? = error.authKitReason else { return false }
                return reason.detail.contains(fragment)
            }
        }
    }

    @Test func networkFailureIsTypedAndNamesOnlyTheEndpoint() async throws {
        // A port nothing listens on. (Not a stopped server's: another test's
        // server may take it, and did, answering this exchange with 404.)
        let base = "http://127.0.0.1:\(try UnusedPort.next())"
        let descriptor = testDescriptor(
            id: "down", name: "Down", protocol: .oauth2, authorization: DescriptorFile.Authorization(url: "\(base)/a"),
            token: DescriptorFile.Token(url: "\(base)/token"))
        let client = try OAuth2Client(
            descriptor: descriptor, settings: ClientSettings(clientID: "c", clientSecret: "top-secret"),
            httpClient: URLSessionHTTPClient(timeout: 5))
        await #expect {
            try await client.exchange(code: "the-code", pending: pending(for: client))
        } throws: { error in
            guard case .network(let url, _)? = error.authKitReason else { return false }
            return url == "\(base)/token" && !"\(error)".contains("top-secret") && !"\(error)".contains("the-code")
        }
    }
}

@Suite struct TokenAnswerSyntaxTests {
    /// RFC 6749 Appendix A.13: a token type is a name or a URI, so the
    /// printable ASCII a URI may hold, and nothing else, for every byte.
    @Test func aTokenTypeIsWhatAURIMayHold() {
        let excluded = Set(#""<>\^`{|}"#.utf8)
        for byte in UInt8.min...UInt8.max {
            let allowed = (0x21...0x7E).contains(byte) && !excluded.contains(byte)
            #expect(
                TokenResponseParser.isTokenType(String(decoding: [UInt8(ascii: "a"), byte], as: UTF8.self)) == allowed,
                "byte \(byte)")
        }
        #expect(
            TokenResponseParser.isTokenType("Bearer")
                && TokenResponseParser.isTokenType("urn:ietf:params:oauth:token-type:jwt"))
        #expect(
            !TokenResponseParser.isTokenType("") && !TokenResponseParser.isTokenType(String(repeating: "a", count: 257))
        )
    }

    /// Granted scopes split on spaces and commas (RFC 6749 §3.3; GitHub
    /// answers with commas) and the descriptor's one-byte separator, empty
    /// pieces dropped, multi-byte scopes kept whole.
    @Test(arguments: [
        (" ", "read write", ["read", "write"]), (" ", "repo,gist", ["repo", "gist"]), (" ", " a  ,, b ", ["a", "b"]),
        (" ", "", []), (" ", "ü ☃,東京", ["ü", "☃", "東京"]), ("+", "a+b c", ["a", "b", "c"]), (";", ";;", []),
    ])
    func scopesSplitOnEverySeparator(separator: String, scope: String, expected: [String]) throws {
        let body = #"{"access_token":"at","token_type":"Bearer","scope":"\#(scope)"}"#
        let response = IncomingResponse(
            status: 200, headers: HTTPFields([HTTPField(name: .contentType, value: "application/json")]),
            body: Data(body.utf8), secrets: [])
        #expect(try TokenResponseParser(scopeSeparator: separator).parse(response).scopes == expected)
    }
}
