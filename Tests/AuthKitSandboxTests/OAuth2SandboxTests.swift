import AuthKit
import AuthKitSandbox
import AuthKitTestSupport
import Foundation
import HTTPTypes
import Testing

#if canImport(FoundationNetworking)
    import AuthKitFoundationNetworking // URLSessionHTTPClient on Linux
#endif

/// Sign-ins through the emulation with AuthKit's own engine, and the rules a
/// strict server enforces: each test would fail if the sandbox were lenient.
@Suite struct OAuth2SandboxTests {
    @Test func qiitaSignInFollowsQiitasShape() async throws {
        try await Sandbox.with(emulating: try bundled("qiita"), options: SandboxOptions(deterministic: true)) {
            sandbox in
            let client = try OAuth2Client(descriptor: sandbox.descriptor, settings: sandbox.clientSettings)
            let credential = try await client.authorize(using: sandbox.userAgent(account: "carol"))
            #expect(credential.accessToken.hasPrefix("sandbox-access-"))
            #expect(credential.scopes == ["read_qiita"])
            // Qiita's token step: JSON body, 201, the token in `token`, no token_type.
            let exchange = try #require(sandbox.events.first { $0.step == "token" })
            #expect(exchange.status == 201)
            #expect(credential.rawFields["token"] != nil && credential.rawFields["token_type"] == nil)
            let (status, me) = try await getJSON(sandbox.whoamiURL, with: client, credential: credential)
            #expect(status == 200 && me["account"] as? String == "carol")
            // Events never carry the token or the code.
            #expect(
                !sandbox.events.contains {
                    $0.description.contains(credential.accessToken) || $0.description.contains("sandbox-code-")
                })
            // Nor the revocation's, whose path names the token (Qiita's
            // `DELETE /api/v2/access_tokens/{access_token}`), even one the
            // server refuses before routing it (here: no Host).
            let port = try #require(sandbox.baseURL.port)
            let refused = try await RawHTTP.send(
                Data(
                    "DELETE /qiita.com/api/v2/access_tokens/\(credential.accessToken) HTTP/1.1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                        .utf8), port: port)
            #expect(refused.status == 400)
            let unrouted = try #require(sandbox.events.last)
            #expect(unrouted.status == 400 && unrouted.request.hasSuffix("/••••"), "\(unrouted)")
            try await client.revoke(credential)
            let revocation = try #require(sandbox.events.last)
            #expect(revocation.request.hasPrefix("DELETE ") && revocation.request.hasSuffix("/••••"), "\(revocation)")
            #expect(!sandbox.events.contains { $0.description.contains(credential.accessToken) })
        }
    }

    @Test func qiitaTokenEndpointRefusesAFormBody() async throws {
        try await Sandbox.with(emulating: try bundled("qiita")) { sandbox in
            let token = try #require(URL(string: sandbox.baseURL.absoluteString + "/qiita.com/api/v2/access_tokens"))
            let answer = try await raw(
                "POST", token, headers: ["Content-Type": "application/x-www-form-urlencoded"],
                body: "client_id=sandbox-client&client_secret=sandbox-secret&code=x")
            #expect(answer.status == 400)
            #expect(answer.body.contains("expected a JSON body"))
            // A member twice in the JSON is a parameter sent twice: the last
            // value won, and a wrong secret beside the right one passed.
            let twice = try await raw(
                "POST", token, headers: ["Content-Type": "application/json"],
                body: #"{"client_id":"sandbox-client","client_secret":"x","client_secret":"sandbox-secret","code":"c"}"#
            )
            #expect(
                twice.status == 400 && twice.body.contains("'client_secret' is sent more than once"), "\(twice.body)")
        }
    }

    /// GitHub refuses a refresh token that no longer works with a code of
    /// its own, `bad_refresh_token` (`token.refreshRefusedErrors`): the user
    /// is asked to sign in again, as for `invalid_grant`. It was a provider
    /// error, and nobody was asked.
    @Test func githubsOwnRefusalOfARefreshTokenAsksToSignInAgain() async throws {
        try await Sandbox.with(emulating: try bundled("github")) { sandbox in
            let client = try OAuth2Client(descriptor: sandbox.descriptor, settings: sandbox.clientSettings)
            var credential = try await client.authorize(using: sandbox.userAgent())
            credential.refreshToken = "no-such-refresh-token"
            let spent = credential
            await #expect {
                _ = try await client.refresh(spent)
            } throws: { error in
                guard case .signInRequired(_, .refreshRefused(let response))? = error.authKitReason else {
                    return false
                }
                return response.code == "bad_refresh_token"
            }
        }
    }

    @Test func deniedConsentIsAccessDenied() async throws {
        try await Sandbox.with(emulating: try bundled("github")) { sandbox in
            let client = try OAuth2Client(descriptor: sandbox.descriptor, settings: sandbox.clientSettings)
            await #expect { try await client.authorize(using: sandbox.userAgent(approving: false)) } throws: { error in
                (error as? AuthKitError)?.code == .accessDenied
            }
        }
    }

    @Test func aCodeWorksOnceAndItsReplayRevokesTheGrant() async throws {
        try await Sandbox.with(emulating: try bundled("google")) { sandbox in
            let client = try OAuth2Client(descriptor: sandbox.descriptor, settings: sandbox.clientSettings)
            let (url, pending) = try await client.startAuthorization()
            let location = try await sandbox.userAgent().redirect(for: url)
            let code = try client.authorizationCode(from: location, pending: pending)
            let first = try await client.exchange(code: code, pending: pending)
            #expect(try await getJSON(sandbox.whoamiURL, with: client, credential: first).0 == 200)
            await #expect(throws: AuthKitError.self) { try await client.exchange(code: code, pending: pending) }
            #expect(sandbox.events.last?.summary.contains("already used") == true)
            // RFC 6749 §4.1.2: the tokens the code gave are revoked too.
            #expect(try await getJSON(sandbox.whoamiURL, with: client, credential: first).0 == 401)
        }
    }

    @Test func aWrongCodeVerifierIsRefused() async throws {
        try await Sandbox.with(emulating: try bundled("google")) { sandbox in
            let client = try OAuth2Client(descriptor: sandbox.descriptor, settings: sandbox.clientSettings)
            let (url, pending) = try await client.startAuthorization()
            let other = try await client.startAuthorization().pending
            let location = try await sandbox.userAgent().redirect(for: url)
            let code = try client.authorizationCode(from: location, pending: pending)
            // The code, sent with another attempt's verifier (a stolen code).
            await #expect(throws: AuthKitError.self) { try await client.exchange(code: code, pending: other) }
            #expect(sandbox.events.last?.summary.contains("code_verifier does not match") == true)
        }
    }

    @Test func aPublicClientMustUsePKCE() async throws {
        try await Sandbox.with(emulating: try bundled("reddit"), options: publicClient()) { sandbox in
            // Reddit's descriptor says no PKCE (its installed apps have no
            // secret); AuthKit still sends S256 for a client without a
            // secret, and the sandbox insists on it.
            let client = try OAuth2Client(descriptor: sandbox.descriptor, settings: sandbox.clientSettings)
            let credential = try await client.authorize(using: sandbox.userAgent())
            #expect(!credential.accessToken.isEmpty)
            let authorize = try #require(
                URL(
                    string: sandbox.baseURL.absoluteString
                        + "/www.reddit.com/api/v1/authorize?client_id=sandbox-client&state=s"))
            let answer = try await raw("GET", authorize)
            #expect(answer.status == 302)
            #expect(answer.headers[.location]?.contains("error=invalid_request") == true)
            #expect(answer.headers[.location]?.contains("state=s") == true)
        }
    }

    /// Reddit's installed apps (no secret) authenticate with HTTP Basic and
    /// an empty password (`token.publicClientAuthentication`); the
    /// emulation refuses the usual public client's `client_id` in the body,
    /// as Reddit does, and AuthKit's refresh and revocation get through.
    @Test func redditsInstalledAppsSendBasicWithAnEmptyPassword() async throws {
        try await Sandbox.with(emulating: try bundled("reddit"), options: publicClient()) { sandbox in
            let client = try OAuth2Client(descriptor: sandbox.descriptor, settings: sandbox.clientSettings)
            var credential = try await client.authorize(using: sandbox.userAgent())
            credential.expiresAt = Date(timeIntervalSinceNow: -60)
            let refreshed = try await client.refresh(credential)
            #expect(refreshed.accessToken != credential.accessToken)
            let token = try #require(
                URL(string: sandbox.baseURL.absoluteString + "/www.reddit.com/api/v1/access_token"))
            let answer = try await raw(
                "POST", token, headers: ["Content-Type": "application/x-www-form-urlencoded"],
                body: "grant_type=refresh_token&refresh_token=\(refreshed.refreshToken ?? "")&client_id=sandbox-client")
            #expect(answer.status == 401 && answer.body.contains("invalid_client"), "\(answer.status) \(answer.body)")
            #expect(
                sandbox.events.last?.summary.contains("publicClientAuthentication is basic") == true,
                "\(sandbox.events.map(\.description))")
            try await client.revoke(refreshed) // Reddit's revocation authenticates the client too
        }
    }

    /// The emulation holds a client to what the descriptor says the
    /// provider takes: no public client where it requires the secret
    /// (GitHub's code exchange and refresh; they got tokens), no secret or
    /// code in a POST's URL (RFC 6749 §2.3.1), and a redirect on another
    /// loopback port only where the descriptor's port is not fixed.
    @Test func theEmulationRefusesWhatTheProviderRefuses() async throws {
        try await Sandbox.with(emulating: try bundled("github"), options: publicClient()) { sandbox in
            let token = try #require(
                URL(string: sandbox.baseURL.absoluteString + "/github.com/login/oauth/access_token"))
            for body in [
                "grant_type=authorization_code&code=c&client_id=sandbox-client&code_verifier=\(String(repeating: "v", count: 43))",
                "grant_type=refresh_token&refresh_token=r&client_id=sandbox-client",
            ] {
                let answer = try await raw(
                    "POST", token, headers: ["Content-Type": "application/x-www-form-urlencoded"], body: body)
                #expect(
                    answer.body.contains("invalid_client") && answer.body.contains("no public clients"),
                    "\(body): \(answer.status) \(answer.body)")
            }
        }
        try await Sandbox.with(emulating: try bundled("github")) { sandbox in
            let token = try #require(
                URL(string: sandbox.baseURL.absoluteString + "/github.com/login/oauth/access_token?client_secret=x"))
            let answer = try await raw(
                "POST", token, headers: ["Content-Type": "application/x-www-form-urlencoded"],
                body: "grant_type=refresh_token&refresh_token=r&client_id=sandbox-client")
            #expect(
                answer.body.contains("invalid_request") && answer.body.contains("in the URL's query"),
                "\(answer.status) \(answer.body)")
        }
        try await Sandbox.with(emulating: try bundled("discord")) { sandbox in
            // Discord's descriptor fixes the port (8765): another is refused.
            let authorize = try #require(
                URL(
                    string: sandbox.baseURL.absoluteString
                        + "/discord.com/oauth2/authorize?response_type=code&client_id=sandbox-client&state=s&code_challenge=\(String(repeating: "c", count: 43))&code_challenge_method=S256&redirect_uri=http%3A%2F%2F127.0.0.1%3A40000%2Fcallback"
                ))
            let answer = try await raw("GET", authorize)
            #expect(answer.status != 302 && answer.body.contains("not registered"), "\(answer.status) \(answer.body)")
        }
    }

    /// What a strict server refuses, the sandbox refuses: a secret in the
    /// authorization request (the browser's history holds it), a redirect
    /// URI whose host is spelled with an escape, two `Authorization` fields,
    /// a body naming another client than HTTP Basic authenticated, a wrong
    /// secret where the step needs none (GitHub's device grant).
    @Test func theSandboxIsAsStrictAsAServer() async throws {
        try await Sandbox.with(emulating: try bundled("github")) { sandbox in
            let client = try OAuth2Client(descriptor: sandbox.descriptor, settings: sandbox.clientSettings)
            let url = try await client.startAuthorization().url.absoluteString
            for extra in ["client_secret=sandbox-secret", "code_verifier=\(String(repeating: "v", count: 43))"] {
                let answer = try await raw("GET", try #require(URL(string: url + "&" + extra)))
                #expect(
                    answer.status == 400 && answer.headers[.location] == nil
                        && answer.body.contains("authorization request, which the browser carries"),
                    "\(extra): \(answer.status) \(answer.body)")
            }
            let port = try #require(sandbox.baseURL.port)
            let escaped = url.replacingOccurrences(
                of: "redirect_uri=http%3A%2F%2F127.0.0.1", with: "redirect_uri=http%3A%2F%2F127.0.0.%2531")
            #expect(escaped != url)
            let answer = try await raw("GET", try #require(URL(string: escaped)))
            #expect(answer.status == 400 && answer.body.contains("not registered"), "\(port): \(answer.body)")

            let device = try #require(URL(string: sandbox.baseURL.absoluteString + "/github.com/login/device/code"))
            let form = ["Content-Type": "application/x-www-form-urlencoded"]
            let wrongSecret = try await raw(
                "POST", device, headers: form, body: "client_id=sandbox-client&client_secret=wrong&scope=read:user")
            #expect(wrongSecret.body.contains("invalid_client"), "\(wrongSecret.status) \(wrongSecret.body)")
            let rightSecret = try await raw(
                "POST", device, headers: form,
                body: "client_id=sandbox-client&client_secret=sandbox-secret&scope=read:user")
            #expect(rightSecret.status == 200 && rightSecret.body.contains("device_code"), "\(rightSecret.body)")
        }
        try await Sandbox.with(emulating: try bundled("reddit")) { sandbox in
            let token = try #require(URL(string: sandbox.descriptor.token?.url ?? ""))
            let basic = "Basic " + Data("sandbox-client:sandbox-secret".utf8).base64EncodedString()
            let other = try await raw(
                "POST", token, headers: ["Content-Type": "application/x-www-form-urlencoded", "Authorization": basic],
                body: "grant_type=refresh_token&refresh_token=r&client_id=another-client")
            #expect(
                other.status == 400 && other.body.contains("not the client HTTP Basic authenticated"),
                "\(other.status) \(other.body)")
            // Two Authorization fields: which one a server reads is its own choice.
            var head = HTTPRequest(method: .post, url: token)
            head.headerFields[.contentType] = "application/x-www-form-urlencoded"
            head.headerFields.append(HTTPField(name: .authorization, value: basic))
            head.headerFields.append(HTTPField(name: .authorization, value: "Bearer x"))
            // The default transport sends both (URLSession joins them into one).
            let (response, body) = try await defaultHTTPClient().send(
                head, body: Data("grant_type=refresh_token&refresh_token=r".utf8))
            var text = Data()
            for try await chunk in body { text.append(chunk) }
            #expect(
                response.status.code == 400
                    && String(decoding: text, as: UTF8.self).contains("more than one Authorization field"),
                "\(response.status) \(String(decoding: text, as: UTF8.self))")
        }
        // Redirect URIs given to the sandbox match on any port; the
        // descriptor's own, listed beside them, keeps Discord's fixed port.
        let given = "http://127.0.0.1:9999/elsewhere"
        try await Sandbox.with(
            emulating: try bundled("discord"),
            options: SandboxOptions(redirectURIs: ["http://127.0.0.1:8765/callback", given])
        ) { sandbox in
            let base =
                sandbox.baseURL.absoluteString
                + "/discord.com/oauth2/authorize?response_type=code&client_id=sandbox-client&state=s&code_challenge=\(String(repeating: "c", count: 43))&code_challenge_method=S256&redirect_uri="
            let onAnotherPort = try await raw(
                "GET", try #require(URL(string: base + "http%3A%2F%2F127.0.0.1%3A40000%2Fcallback")))
            #expect(onAnotherPort.status == 400 && onAnotherPort.body.contains("not registered"))
            let givenOnAnotherPort = try await raw(
                "GET", try #require(URL(string: base + "http%3A%2F%2F127.0.0.1%3A40000%2Felsewhere")))
            #expect(!givenOnAnotherPort.body.contains("not registered"), "\(givenOnAnotherPort.body)")
        }
    }

    /// A refresh that narrows the scope (RFC 6749 §6) issues a token for
    /// those scopes alone: the resource and introspection see no more.
    @Test func aNarrowedRefreshsTokenCarriesOnlyItsScopes() async throws {
        try await Sandbox.with(emulating: try bundled("google")) { sandbox in
            let client = try OAuth2Client(descriptor: sandbox.descriptor, settings: sandbox.clientSettings)
            let signedIn = try await client.authorize(using: sandbox.userAgent())
            #expect(signedIn.scopes.count > 1 && signedIn.scopes.contains("openid"), "\(signedIn.scopes)")
            let token = try #require(URL(string: sandbox.descriptor.token?.url ?? ""))
            let refreshed = try await raw(
                "POST", token, headers: ["Content-Type": "application/x-www-form-urlencoded"],
                body: FormURLEncoding.encode([
                    ("grant_type", "refresh_token"), ("refresh_token", try #require(signedIn.refreshToken)),
                    ("scope", "openid"), ("client_id", "sandbox-client"), ("client_secret", "sandbox-secret"),
                ]))
            let answer = try #require(
                try JSONSerialization.jsonObject(with: Data(refreshed.body.utf8)) as? [String: Any], "\(refreshed.body)"
            )
            let narrow = try #require(answer["access_token"] as? String)
            let me = try await raw("GET", sandbox.whoamiURL, headers: ["Authorization": "Bearer \(narrow)"])
            let scopes = (try JSONSerialization.jsonObject(with: Data(me.body.utf8)) as? [String: Any])?["scopes"]
            #expect(scopes as? [String] == ["openid"], "\(me.body)")
            // The sign-in's token keeps what it was issued for.
            let wide = try await raw(
                "GET", sandbox.whoamiURL, headers: ["Authorization": "Bearer \(signedIn.accessToken)"])
            let wideScopes = (try JSONSerialization.jsonObject(with: Data(wide.body.utf8)) as? [String: Any])?["scopes"]
            #expect((wideScopes as? [String])?.count == signedIn.scopes.count, "\(wide.body)")
        }
    }

    @Test func anUnregisteredRedirectGetsAnErrorPageNotARedirect() async throws {
        try await Sandbox.with(emulating: try bundled("github")) { sandbox in
            var settings = sandbox.clientSettings
            settings.redirectURI = "https://attacker.example/callback"
            let client = try OAuth2Client(descriptor: sandbox.descriptor, settings: settings)
            let answer = try await raw("GET", try await client.startAuthorization().url)
            #expect(answer.status == 400)
            #expect(answer.headers[.location] == nil)
            #expect(answer.body.contains("redirect_uri is not registered"))
        }
    }

    @Test func aRotatedRefreshTokenUsedTwiceRevokesTheGrant() async throws {
        try await Sandbox.with(emulating: try bundled("google")) { sandbox in
            let client = try OAuth2Client(descriptor: sandbox.descriptor, settings: sandbox.clientSettings)
            let signedIn = try await client.authorize(using: sandbox.userAgent())
            let refreshed = try await client.refresh(signedIn)
            #expect(refreshed.refreshToken != signedIn.refreshToken)
            #expect(try await getJSON(sandbox.whoamiURL, with: client, credential: refreshed).0 == 200)
            // A second party replays the old refresh token.
            await #expect(throws: AuthKitError.self) { try await client.refresh(signedIn) }
            #expect(sandbox.events.last?.summary.contains("reused") == true)
            await #expect(throws: AuthKitError.self) { try await client.refresh(refreshed) }
            #expect(try await getJSON(sandbox.whoamiURL, with: client, credential: refreshed).0 == 401)
        }
    }

    /// A refresh the sandbox refuses (here: a scope wider than the grant,
    /// RFC 6749 §6) leaves the refresh token as it was (§5.2): it was
    /// rotated away first, so the client's retry counted as a reuse and
    /// revoked the whole grant.
    @Test func aRefusedRefreshLeavesTheTokenValid() async throws {
        try await Sandbox.with(emulating: try bundled("google")) { sandbox in
            let client = try OAuth2Client(descriptor: sandbox.descriptor, settings: sandbox.clientSettings)
            let signedIn = try await client.authorize(using: sandbox.userAgent())
            let refreshToken = try #require(signedIn.refreshToken)
            let token = try #require(URL(string: sandbox.baseURL.absoluteString + "/oauth2.googleapis.com/token"))
            let wider = try await raw(
                "POST", token, headers: ["Content-Type": "application/x-www-form-urlencoded"],
                body: "grant_type=refresh_token&refresh_token=\(refreshToken)&client_id=sandbox-client"
                    + "&client_secret=sandbox-secret&scope=openid%20https%3A%2F%2Fmail.google.com%2F")
            #expect(wider.status == 400 && wider.body.contains("invalid_scope"), "\(wider.body)")
            let refreshed = try await client.refresh(signedIn)
            #expect(refreshed.refreshToken != refreshToken)
            #expect(try await getJSON(sandbox.whoamiURL, with: client, credential: refreshed).0 == 200)
        }
    }

    /// Salesforce tells no `expires_in`; its tokens last the org's session
    /// timeout (here 900 s, the shortest). The credential records no expiry,
    /// and a ``CredentialSource`` refreshes it at the descriptor's assumed
    /// lifetime, before the sandbox refuses it.
    @Test func salesforceGivesNoExpiryAndIsRefreshedAtTheAssumedLifetime() async throws {
        let skew = LockedValue<TimeInterval>(0)
        let options = SandboxOptions(accessTokenLifetime: 900, now: { Date().addingTimeInterval(skew.current) })
        try await Sandbox.with(emulating: try bundled("salesforce"), options: options) { sandbox in
            let client = try OAuth2Client(descriptor: sandbox.descriptor, settings: sandbox.clientSettings)
            let signedIn = try await client.authorize(using: sandbox.userAgent())
            #expect(signedIn.expiresAt == nil, "the sandbox sent expires_in")
            let source = CredentialSource(
                authenticator: client, store: InMemoryCredentialStore([signedIn]), key: signedIn.key)
            #expect(
                try await source.current(at: signedIn.obtainedAt.addingTimeInterval(600)).accessToken
                    == signedIn.accessToken)

            skew.withLock { $0 = 850 } // 50 s before the sandbox refuses it, inside the 60 s margin
            let current = try await source.current(at: signedIn.obtainedAt.addingTimeInterval(850))
            #expect(current.accessToken != signedIn.accessToken)
            #expect(sandbox.events.last?.step == "refresh" && sandbox.events.last?.status == 200)
            skew.withLock { $0 = 1000 } // the first token is refused now; the refreshed one is not
            // (Sent raw: through a CredentialSource the 401 would refresh with the spent refresh token.)
            #expect(
                try await raw("GET", sandbox.whoamiURL, headers: ["Authorization": "Bearer " + signedIn.accessToken])
                    .status == 401)
            #expect(try await getJSON(sandbox.whoamiURL, with: client, credential: current).0 == 200)
        }
    }

    @Test func instagramFollowUpAndRefreshTemplates() async throws {
        try await Sandbox.with(emulating: try bundled("instagram")) { sandbox in
            let client = try OAuth2Client(descriptor: sandbox.descriptor, settings: sandbox.clientSettings)
            // https://localhost/callback#_ : the agent hands the redirect back without following it.
            let credential = try await client.authorize(using: sandbox.userAgent())
            #expect(sandbox.events.map(\.step).contains("follow-up"))
            let lifetime = try #require(credential.expiresAt).timeIntervalSince(credential.obtainedAt)
            #expect(lifetime > 59 * 86_400)
            let refreshed = try await client.refresh(credential)
            #expect(refreshed.accessToken != credential.accessToken)
            #expect(sandbox.events.last?.step == "refresh" && sandbox.events.last?.status == 200)
        }
    }

    @Test func githubRevocationWithBasicAndDelete() async throws {
        try await Sandbox.with(emulating: try bundled("github")) { sandbox in
            let client = try OAuth2Client(descriptor: sandbox.descriptor, settings: sandbox.clientSettings)
            let credential = try await client.authorize(using: sandbox.userAgent())
            try await client.revoke(credential)
            #expect(sandbox.events.last?.step == "revocation" && sandbox.events.last?.status == 204)
            #expect(sandbox.events.last?.summary == "grant revoked")
            #expect(try await getJSON(sandbox.whoamiURL, with: client, credential: credential).0 == 401)
        }
    }

    /// RFC 7009 §2.1: `token_type_hint` is optional. A client that sends
    /// none (one found through the metadata's `revocation_endpoint`, or
    /// curl) was answered 405: the emulation's routes each required a hint.
    @Test func anRFC7009RevocationWithoutAHintIsTaken() async throws {
        try await Sandbox.with(emulating: try bundled("gitlab")) { sandbox in
            let client = try OAuth2Client(descriptor: sandbox.descriptor, settings: sandbox.clientSettings)
            let credential = try await client.authorize(using: sandbox.userAgent())
            let refreshToken = try #require(credential.refreshToken)
            let revoke = try #require(URL(string: sandbox.baseURL.absoluteString + "/gitlab.com/oauth/revoke"))
            let settings = sandbox.clientSettings
            let form = FormURLEncoding.encode([
                ("token", refreshToken), ("client_id", settings.clientID ?? ""),
                ("client_secret", settings.clientSecret ?? ""),
            ])
            let answer = try await raw(
                "POST", revoke, headers: ["Content-Type": "application/x-www-form-urlencoded"], body: form)
            #expect(answer.status == 200, "\(answer.body)")
            #expect(sandbox.events.last?.summary == "grant revoked")
            // The grant is over: its access token no longer works.
            #expect(try await getJSON(sandbox.whoamiURL, with: client, credential: credential).0 == 401)
            // A hint the server does not know is only a hint (§2.1): still taken, still authenticated.
            let other = try await raw(
                "POST", revoke, headers: ["Content-Type": "application/x-www-form-urlencoded"],
                body: FormURLEncoding.encode([("token", "x"), ("token_type_hint", "id_token"), ("client_id", "nobody")])
            )
            #expect(other.status != 405 && other.body.contains("invalid_client"), "\(other.body)")
        }
    }

    /// A revocation URL that is also the token URL (a provider file may say
    /// so; RFC 7009 §2 leaves the endpoint's location to the server): the
    /// revocation route that takes a request with no hint took every code
    /// exchange too, answered "nothing to revoke", and no sign-in ended.
    @Test func aRevocationURLSharedWithTheTokenURLLeavesTheExchangeToTheTokenEndpoint() async throws {
        var shared = DescriptorFile(try bundled("gitlab"))
        shared.revocation?.url = "https://gitlab.com/oauth/token"
        let descriptor = try ProviderDescriptor(json: try JSONEncoder().encode(shared))
        try await Sandbox.with(emulating: descriptor) { sandbox in
            let client = try OAuth2Client(descriptor: sandbox.descriptor, settings: sandbox.clientSettings)
            let credential = try await client.authorize(using: sandbox.userAgent())
            #expect(try await getJSON(sandbox.whoamiURL, with: client, credential: credential).0 == 200)
            // And a revocation there, with its hint (as AuthKit sends it), is
            // still one (one without a hint is the token endpoint's there).
            let endpoint = try #require(URL(string: sandbox.baseURL.absoluteString + "/gitlab.com/oauth/token"))
            let settings = sandbox.clientSettings
            let answer = try await raw(
                "POST", endpoint, headers: ["Content-Type": "application/x-www-form-urlencoded"],
                body: FormURLEncoding.encode([
                    ("token", credential.accessToken), ("token_type_hint", "access_token"),
                    ("client_id", settings.clientID ?? ""), ("client_secret", settings.clientSecret ?? ""),
                ]))
            #expect(answer.status == 200, "\(answer.body)")
            #expect(try await getJSON(sandbox.whoamiURL, with: client, credential: credential).0 == 401)
        }
    }

    /// RFC 9110 §15.5.6: a 405 names the methods the endpoint takes in
    /// `Allow` (a client, or a person with curl, learns what to send
    /// instead); it had none.
    @Test func aMethodAnEndpointDoesNotTakeIsAnsweredWithWhatItTakes() async throws {
        try await Sandbox.with(emulating: try bundled("google")) { sandbox in
            let base = sandbox.baseURL.absoluteString
            let token = try #require(URL(string: base + "/oauth2.googleapis.com/token"))
            let get = try await raw("GET", token)
            #expect(get.status == 405, "\(get.body)")
            #expect(get.headers[.allow] == "POST")
            let authorize = try #require(URL(string: base + "/accounts.google.com/o/oauth2/v2/auth"))
            let deleteAuthorize = try await raw("DELETE", authorize)
            #expect(deleteAuthorize.status == 405, "\(deleteAuthorize.body)")
            #expect(deleteAuthorize.headers[.allow] == "GET")
            let userInfo = try #require(URL(string: base + "/openidconnect.googleapis.com/v1/userinfo"))
            let delete = try await raw("DELETE", userInfo)
            #expect(delete.status == 405, "\(delete.body)")
            #expect(delete.headers[.allow] == "GET, POST")
            // A method it takes is still answered by the endpoint.
            let taken = try await raw("POST", token).status
            #expect([400, 401].contains(taken), "answered \(taken)")
        }
    }

    /// A Basic header that does not decode (not base64; a secret with a bare
    /// `%` sent unencoded, as `curl -u id:'s%cret'` does) is refused as such.
    /// It was taken for no header: beside the body's credentials, a request
    /// that authenticated two ways passed (RFC 6749 §2.3).
    @Test func aBasicHeaderThatDoesNotDecodeIsRefused() async throws {
        try await Sandbox.with(emulating: try bundled("gitlab")) { sandbox in
            let token = try #require(URL(string: sandbox.baseURL.absoluteString + "/gitlab.com/oauth/token"))
            let settings = sandbox.clientSettings
            let form = FormURLEncoding.encode([
                ("grant_type", "authorization_code"), ("code", "no-such-code"),
                ("client_id", settings.clientID ?? ""), ("client_secret", settings.clientSecret ?? ""),
            ])
            for header in [
                "Basic !!!", "Basic " + Data("\(settings.clientID ?? ""):s%cret".utf8).base64EncodedString(),
            ] {
                let answer = try await raw(
                    "POST", token,
                    headers: ["Content-Type": "application/x-www-form-urlencoded", "Authorization": header], body: form)
                #expect(
                    answer.body.contains("invalid_client") && answer.body.contains("do not decode"),
                    "\(header): \(answer.body)")
            }
        }
    }

    @Test func githubErrorsComeInGitHubsShape() async throws {
        var options = SandboxOptions()
        options.clientSecret = "the-real-one"
        try await Sandbox.with(emulating: try bundled("github"), options: options) { sandbox in
            var settings = sandbox.clientSettings
            settings.clientSecret = "a-wrong-one"
            let client = try OAuth2Client(descriptor: sandbox.descriptor, settings: settings)
            await #expect { try await client.authorize(using: sandbox.userAgent()) } throws: { error in
                guard case .providerError(_, let response)? = error.authKitReason else { return false }
                return response.code == "invalid_client" && !"\(error)".contains("a-wrong-one")
            }
            // GitHub answers token errors with HTTP 200 (its descriptor's errorStatus).
            #expect(sandbox.events.last?.step == "token" && sandbox.events.last?.status == 200)
        }
    }

    @Test func theDeviceGrant() async throws {
        try await Sandbox.with(
            emulating: try bundled("github"), options: SandboxOptions(approves: true, deviceInterval: 1)
        ) { sandbox in
            let client = try OAuth2Client(descriptor: sandbox.descriptor, settings: sandbox.clientSettings)
            let credential = try await client.authorizeWithDeviceCode(options: AuthorizationOptions()) { _ in }
            #expect(!credential.accessToken.isEmpty)
            let polls = sandbox.events.filter { $0.step == "token" }
            #expect(polls.first?.summary.hasPrefix("authorization_pending") == true)
            #expect(polls.last?.status == 200)
        }
    }

    /// Twitch's device grant in public mode, through its emulation: the
    /// scopes travel as `scopes` (`scope` is refused, where Twitch would
    /// grant none), and the public client's token refreshes without a
    /// secret though Twitch's code exchange needs one.
    @Test func twitchsPublicDeviceGrantGetsItsScopesAndRefreshes() async throws {
        try await Sandbox.with(
            emulating: try bundled("twitch"),
            options: publicClient(SandboxOptions(approves: true, deviceInterval: 1))
        ) { sandbox in
            var settings = sandbox.clientSettings
            settings.scopes = ["user:read:email", "chat:read"]
            let client = try OAuth2Client(descriptor: sandbox.descriptor, settings: settings)
            var credential = try await client.authorizeWithDeviceCode(options: AuthorizationOptions()) { _ in }
            #expect(Set(credential.scopes) == ["user:read:email", "chat:read"], "\(credential.scopes)")
            credential.expiresAt = Date(timeIntervalSinceNow: -60)
            let refreshed = try await client.refresh(credential)
            #expect(refreshed.accessToken != credential.accessToken)
            let device = try #require(URL(string: sandbox.baseURL.absoluteString + "/id.twitch.tv/oauth2/device"))
            let answer = try await raw(
                "POST", device, headers: ["Content-Type": "application/x-www-form-urlencoded"],
                body: "client_id=sandbox-client&scope=chat%3Aread")
            #expect(
                answer.status == 400 && answer.body.contains("invalid_scope") && answer.body.contains("'scopes'"),
                "\(answer.body)")
        }
    }

    /// A device-only provider (no authorization endpoint): its metadata
    /// leaves out `authorization_endpoint` and `response_types_supported`, as
    /// RFC 8414 §2 has such a server do, and what discovery makes of it signs
    /// in with a code.
    @Test func aDeviceOnlyProviderIsEmulatedAndDiscovered() async throws {
        let tv = try ProviderDescriptor(
            json: Data(
                #"{"id": "tv", "protocol": "oauth2", "token": {"url": "https://tv.example/token"}, "device": {"url": "https://tv.example/device"}}"#
                    .utf8))
        try await Sandbox.with(emulating: tv, options: SandboxOptions(approves: true, deviceInterval: 1)) {
            sandbox in
            let issuer = try #require(URL(string: sandbox.baseURL.absoluteString + "/tv.example"))
            let metadata = try await raw(
                "GET",
                try #require(
                    URL(string: sandbox.baseURL.absoluteString + "/.well-known/oauth-authorization-server/tv.example")))
            let members = try #require(
                try JSONSerialization.jsonObject(with: Data(metadata.body.utf8)) as? [String: Any])
            #expect(metadata.status == 200 && members["issuer"] as? String == issuer.absoluteString, "\(metadata.body)")
            #expect(
                members["authorization_endpoint"] == nil && members["response_types_supported"] == nil,
                "\(metadata.body)")
            #expect(
                (members["grant_types_supported"] as? [String])?.contains("authorization_code") == false,
                "\(metadata.body)")

            let discovered = try await ProviderDescriptor.discover(issuer: issuer, id: "found")
            #expect(discovered.isDeviceOnly)
            let client = try OAuth2Client(descriptor: discovered, settings: sandbox.clientSettings)
            let credential = try await client.authorizeWithDeviceCode(options: AuthorizationOptions()) { _ in }
            #expect(!credential.accessToken.isEmpty)
            #expect(sandbox.events.contains { $0.step == "token" && $0.status == 200 })
        }
    }

    @Test func discoveryReadsTheSandboxesMetadata() async throws {
        try await Sandbox.with(emulating: try bundled("google")) { sandbox in
            let issuer = try #require(sandbox.descriptor.issuer.flatMap { URL(string: $0.identifier) })
            let discovered = try await ProviderDescriptor.discover(issuer: issuer, id: "found")
            let client = try OAuth2Client(descriptor: discovered, settings: sandbox.clientSettings)
            let credential = try await client.authorize(using: sandbox.userAgent())
            #expect(!credential.accessToken.isEmpty)
        }
    }

    @Test func anUnknownScopeIsRedirectedAsInvalidScope() async throws {
        try await Sandbox.with(emulating: try bundled("github")) { sandbox in
            let client = try OAuth2Client(descriptor: sandbox.descriptor, settings: sandbox.clientSettings)
            let answer = try await raw("GET", try await client.startAuthorization(scopes: ["read:user", "root"]).url)
            #expect(answer.status == 302)
            #expect(answer.headers[.location]?.contains("error=invalid_scope") == true)
        }
    }

    /// The device and client credentials grants check the scopes against the
    /// descriptor's list, as the authorization endpoint does (both granted
    /// whatever was asked); client credentials gets no ID token (Google's
    /// emulation gave one for `sub: sandbox-user-client:sandbox-client`: no
    /// user signed in); the metadata lists the grants for machines only for
    /// a client that can use them (it listed them for every descriptor).
    @Test func theMachineAndDeviceGrantsTakeOnlyKnownScopes() async throws {
        let form = ["Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json"]
        try await Sandbox.with(emulating: try bundled("github")) { sandbox in
            let device = try #require(URL(string: sandbox.baseURL.absoluteString + "/github.com/login/device/code"))
            let answer = try await raw(
                "POST", device, headers: form, body: "client_id=sandbox-client&scope=read%3Auser%20root")
            #expect(answer.body.contains("invalid_scope") && !answer.body.contains("device_code"), "\(answer.body)")
        }
        try await Sandbox.with(emulating: try bundled("google")) { sandbox in
            let token = try #require(URL(string: sandbox.baseURL.absoluteString + "/oauth2.googleapis.com/token"))
            let grant = "grant_type=client_credentials&client_id=sandbox-client&client_secret=sandbox-secret&scope="
            let nonsense = try await raw("POST", token, headers: form, body: grant + "openid%20nonsense")
            #expect(nonsense.status == 400 && nonsense.body.contains("invalid_scope"), "\(nonsense.body)")
            let known = try await raw("POST", token, headers: form, body: grant + "openid%20email")
            #expect(
                known.status == 200 && known.body.contains("access_token") && !known.body.contains("id_token"),
                "\(known.body)")
            let metadata = try await raw(
                "GET",
                try #require(
                    URL(
                        string: sandbox.baseURL.absoluteString
                            + "/.well-known/oauth-authorization-server/accounts.google.com")))
            #expect(metadata.body.contains("\"client_credentials\""), "\(metadata.body)")
        }
        try await Sandbox.with(emulating: try bundled("google"), options: publicClient()) { sandbox in
            let metadata = try await raw(
                "GET",
                try #require(
                    URL(
                        string: sandbox.baseURL.absoluteString
                            + "/.well-known/oauth-authorization-server/accounts.google.com")))
            #expect(metadata.status == 200, "\(metadata.body)")
            #expect(
                !metadata.body.contains("client_credentials") && !metadata.body.contains("token-exchange"),
                "\(metadata.body)")
        }
    }

    /// RFC 7636 §4.2 lets a server take `plain`; the sandbox's metadata says
    /// S256 only, and it took `plain` (and no method, which means plain).
    /// RFC 9700 §2.1.1 has clients use S256, and no descriptor says its
    /// provider takes plain.
    @Test func aPlainChallengeIsRefused() async throws {
        try await Sandbox.with(emulating: try bundled("github")) { sandbox in
            let challenge = String(repeating: "c", count: 43)
            for method in ["&code_challenge_method=plain", ""] {
                let authorize = try #require(
                    URL(
                        string: sandbox.baseURL.absoluteString
                            + "/github.com/login/oauth/authorize?response_type=code&client_id=sandbox-client&state=s&code_challenge=\(challenge)\(method)"
                    ))
                let answer = try await raw("GET", authorize)
                #expect(
                    answer.status == 302 && answer.headers[.location]?.contains("error=invalid_request") == true,
                    "\(method): \(answer.status) \(answer.headers[.location] ?? "")")
            }
        }
    }

    /// Printed or dumped, the options mask the client secret and key (the
    /// key is `--client-key`'s text, possibly a private key), as
    /// `ClientSettings` does; `print(options)` showed both.
    @Test func printedOptionsMaskTheSecretAndKey() {
        var options = SandboxOptions(clientSecret: "s3cret-value")
        options.clientKey = "-----BEGIN PRIVATE KEY-----\nMIIBprivate\n-----END PRIVATE KEY-----"
        var dumped = ""
        dump(options, to: &dumped)
        for text in [options.description, options.debugDescription, "\(options)", String(reflecting: options), dumped] {
            #expect(!text.contains("s3cret-value") && !text.contains("MIIBprivate"), "\(text)")
            #expect(text.contains("sandbox-client"), "\(text)")
        }
    }

    @Test func pollingFasterThanTheIntervalIsSlowDown() async throws {
        // An interval no loaded machine takes between two requests: with 5 s,
        // the whole suite on two cores once put the second poll past it.
        try await Sandbox.with(emulating: try bundled("github"), options: SandboxOptions(deviceInterval: 120)) {
            sandbox in
            let form = ["Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json"]
            let start = try await raw(
                "POST", try #require(URL(string: sandbox.baseURL.absoluteString + "/github.com/login/device/code")),
                headers: form, body: "client_id=sandbox-client&scope=read%3Auser")
            #expect(start.status == 200)
            let json = try #require(try JSONSerialization.jsonObject(with: Data(start.body.utf8)) as? [String: Any])
            let deviceCode = try #require(json["device_code"] as? String)
            let token = try #require(
                URL(string: sandbox.baseURL.absoluteString + "/github.com/login/oauth/access_token"))
            let poll =
                "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Adevice_code&device_code=\(deviceCode)&client_id=sandbox-client&client_secret=sandbox-secret"
            let first = try await raw("POST", token, headers: form, body: poll)
            #expect(first.body.contains("authorization_pending"))
            let second = try await raw("POST", token, headers: form, body: poll)
            // GitHub's errors come with 200
            #expect(second.status == 200 && second.body.contains("slow_down"), "\(second.body)")
        }
    }

    @Test func hostileRequestsAreBounded() async throws {
        try await Sandbox.with(emulating: try bundled("github")) { sandbox in
            let token = try #require(
                URL(string: sandbox.baseURL.absoluteString + "/github.com/login/oauth/access_token"))
            let flood = try await raw(
                "POST", token, headers: ["Content-Type": "application/x-www-form-urlencoded"],
                body: String(repeating: "a", count: 2 << 20))
            #expect(flood.status == 413)
            let repeated = try await raw(
                "POST", token, headers: ["Content-Type": "application/x-www-form-urlencoded"],
                body:
                    "grant_type=authorization_code&code=a&code=b&client_id=sandbox-client&client_secret=sandbox-secret")
            #expect(repeated.status == 200 && repeated.body.contains("more than once")) // GitHub's errors come with 200
            let unknown = try await raw("GET", sandbox.baseURL.appendingPathComponent("nowhere"))
            #expect(unknown.status == 404)
            // Malformed headers and encodings are refused, and the sandbox keeps answering.
            for headers in [
                ["Content-Type": ";"],
                ["Content-Type": "application/x-www-form-urlencoded", "Authorization": "Basic !!!"],
                [
                    "Content-Type": "application/x-www-form-urlencoded",
                    "Authorization": "Basic " + Data("no-colon".utf8).base64EncodedString(),
                ],
            ] {
                let answer = try await raw(
                    "POST", token, headers: headers, body: "code=%ZZ&grant_type=authorization_code")
                // GitHub's errors come with 200
                #expect(answer.status == 200 && answer.body.contains("\"error\""), "\(headers): \(answer.body)")
            }
            let badQuery = try await raw(
                "GET",
                try #require(
                    URL(string: sandbox.baseURL.absoluteString + "/github.com/login/oauth/authorize?client_id=%ZZ")))
            #expect(badQuery.status == 400)
            let signedNonsense = try await raw("GET", sandbox.whoamiURL, headers: ["Authorization": "OAuth ,,=\""])
            #expect(signedNonsense.status == 401)
            #expect(try await raw("GET", sandbox.baseURL).status == 200, "still serving")
        }
    }

    /// The consent form's account name is what any local process may post:
    /// the event the operator's terminal shows writes its escape sequences
    /// and line breaks out (it cleared the screen and forged a log line);
    /// such a name is refused now (a `sub` is ASCII), and its refusal too
    /// is logged clean.
    @Test func aHostileAccountNameCannotDriveTheLog() async throws {
        try await Sandbox.with(emulating: try bundled("qiita")) { sandbox in
            let authorize = try #require(
                URL(
                    string: sandbox.baseURL.absoluteString
                        + "/qiita.com/api/v2/oauth/authorize?client_id=sandbox-client&redirect_uri=http%3A%2F%2F127.0.0.1%3A8765%2Fcallback&scope=read_qiita&state=abc"
                ))
            let page = try await raw("GET", authorize)
            let consent = try #require(
                page.body.firstMatch(of: /sandbox-consent-[A-Za-z0-9_-]+/).map { String($0.output) },
                "\(page.status) \(page.body.prefix(300))")
            let approval = try #require(hiddenValue("approval", in: page.body))
            let account = FormURLEncoding.encode([
                ("account", "\u{1B}[2J\u{1B}]0;pwned\u{07}\u{202E}evil\nGET /fake → 200: all good")
            ])
            _ = try await raw(
                "POST", sandbox.baseURL.appendingPathComponent("consent"),
                headers: ["Content-Type": "application/x-www-form-urlencoded"],
                body: "request=\(consent)&approval=\(approval)&decision=approve&" + account)
            let event = try #require(sandbox.events.last)
            // Refused (an ID token's `sub` is ASCII), and the refusal logged clean.
            #expect(event.step == "consent" && event.summary.contains("ASCII"), "\(event)")
            #expect(
                !event.description.unicodeScalars.contains { $0.value < 0x20 || $0 == "\u{202E}" },
                "\(event.description.debugDescription)")
            // A 5,000-character path was logged whole.
            _ = try await raw("GET", sandbox.baseURL.appendingPathComponent(String(repeating: "a", count: 5000)))
            let long = try #require(sandbox.events.last)
            #expect(long.request.count < 250 && long.request.hasPrefix("GET /aaaa"), "\(long.request.count)")
        }
    }

    /// Only the consent page the sandbox showed can approve its request
    /// (issue 44, item 5): in deterministic mode the request id is a
    /// counter, and a form on another site posted `request=sandbox-consent-1
    /// &decision=approve&account=mallory`. Such a post is refused, with the
    /// request still pending for the person; so is one a browser marks as
    /// cross-site, even with the right value. No page may be framed.
    @Test func onlyItsOwnPageApprovesAConsent() async throws {
        try await Sandbox.with(emulating: try bundled("qiita"), options: SandboxOptions(deterministic: true)) {
            sandbox in
            let authorize = try #require(
                URL(
                    string: sandbox.baseURL.absoluteString
                        + "/qiita.com/api/v2/oauth/authorize?client_id=sandbox-client&redirect_uri=http%3A%2F%2F127.0.0.1%3A8765%2Fcallback&scope=read_qiita&state=abc"
                ))
            let page = try await raw("GET", authorize)
            #expect(
                page.headers[HTTPField.Name("Content-Security-Policy")!]?.contains("frame-ancestors 'none'") == true)
            #expect(page.headers[HTTPField.Name("X-Frame-Options")!] == "DENY")
            let approval = try #require(hiddenValue("approval", in: page.body))
            #expect(
                !approval.hasPrefix("sandbox-") && approval.count >= 32,
                "deterministic mode must not make it guessable: \(approval)")
            let form = ["Content-Type": "application/x-www-form-urlencoded"]
            let consentURL = sandbox.baseURL.appendingPathComponent("consent")
            for forged in [
                "request=sandbox-consent-1&decision=approve&account=mallory",
                "request=sandbox-consent-1&approval=&decision=approve&account=mallory",
                "request=sandbox-consent-1&approval=\(approval.dropLast())x&decision=approve&account=mallory",
            ] {
                let answer = try await raw("POST", consentURL, headers: form, body: forged)
                #expect(answer.status == 403 && answer.headers[.location] == nil, "\(answer.status) \(forged)")
            }
            let right = "request=sandbox-consent-1&approval=\(approval)&decision=approve&account=mallory"
            for crossSite in [["Sec-Fetch-Site": "cross-site"], ["Origin": "https://evil.example"], ["Origin": "null"]]
            {
                let answer = try await raw("POST", consentURL, headers: form.merging(crossSite) { $1 }, body: right)
                #expect(answer.status == 403 && answer.headers[.location] == nil, "\(crossSite)")
            }
            // The person's own answer, from the page (same origin), still works.
            let host = "\(sandbox.baseURL.host!):\(sandbox.baseURL.port!)"
            let own = try await raw(
                "POST", consentURL,
                headers: form.merging(["Origin": "http://\(host)", "Sec-Fetch-Site": "same-origin"]) { $1 },
                body: right.replacingOccurrences(of: "mallory", with: "alice"))
            #expect(
                own.status == 302 && own.headers[.location]?.contains("code=") == true,
                "\(own.status) \(own.body.prefix(200))")
            // A page under another name pointed at 127.0.0.1 (DNS rebinding)
            // is, to the browser, same-origin with its own requests: every
            // request naming another host is refused, the device page's too.
            let port = try #require(sandbox.baseURL.port)
            for request in ["GET /device HTTP/1.1", "GET / HTTP/1.1"] {
                let rebound = try await RawHTTP.send(
                    Data("\(request)\r\nHost: evil.example:\(port)\r\nConnection: close\r\n\r\n".utf8), port: port)
                #expect(rebound.status == 421 && !rebound.body.contains("approval"), "\(request): \(rebound.status)")
            }
            let local = try await RawHTTP.send(
                Data("GET / HTTP/1.1\r\nHost: localhost:\(port)\r\nConnection: close\r\n\r\n".utf8), port: port)
            #expect(local.status == 200)
        }
    }

    /// Every bundled OAuth 2.0 descriptor signs in through its own emulation:
    /// the engine, the descriptors and the sandbox agree on every quirk.
    @Test func everyBundledOAuth2ProviderSignsIn() async throws {
        let catalog = ProviderCatalog(includeBundled: true, directories: [])
        var tried = 0
        for id in catalog.ids {
            let descriptor = try catalog.descriptor(id: id)
            guard descriptor.protocol == .oauth2 else { continue }
            tried += 1
            try await Sandbox.with(emulating: descriptor) { sandbox in
                // The sandbox's settings alone: a placeholder without a default gets a stand-in.
                let client = try OAuth2Client(descriptor: sandbox.descriptor, settings: sandbox.clientSettings)
                do {
                    let credential = try await client.authorize(using: sandbox.userAgent())
                    #expect(!credential.accessToken.isEmpty, "\(id)")
                } catch {
                    Issue.record("\(id): \(error) — \(sandbox.events.map(\.description))")
                }
            }
        }
        #expect(tried >= 25)
    }
}
