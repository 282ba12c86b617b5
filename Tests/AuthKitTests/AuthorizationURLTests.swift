import AuthKitTestSupport
import Foundation
import Testing

@testable import AuthKit

@Suite struct AuthorizationURLTests {
    func client(
        _ id: String, settings: ClientSettings = ClientSettings(clientID: "the-client", clientSecret: "s3cr3t-value")
    ) throws -> OAuth2Client {
        try OAuth2Client(descriptor: bundledDescriptor(id), settings: settings)
    }

    func parameters(_ url: URL) throws -> [String: String] {
        let query = try #require(URLComponents(url: url, resolvingAgainstBaseURL: false)?.percentEncodedQuery)
        return try formObject(query)
    }

    @Test func githubURLHasStatePKCEAndScopes() async throws {
        let client = try client("github")
        let (url, pending) = try await client.startAuthorization(
            redirectURI: URL(string: "http://127.0.0.1:4321/callback"), scopes: ["repo", "read:user"])
        #expect(url.absoluteString.hasPrefix("https://github.com/login/oauth/authorize?"))
        let p = try parameters(url)
        #expect(p["response_type"] == "code")
        #expect(p["client_id"] == "the-client")
        #expect(p["redirect_uri"] == "http://127.0.0.1:4321/callback")
        #expect(p["scope"] == "repo read:user")
        #expect(p["state"] == pending.state)
        #expect(p["code_challenge_method"] == "S256")
        #expect(p["code_challenge"] == PKCE.challenge(for: try #require(pending.codeVerifier)))
        #expect(pending.redirectURI == "http://127.0.0.1:4321/callback")
        #expect(pending.providerID == "github")
    }

    @Test func stateHasAtLeast128BitsAndIsFreshPerAttempt() async throws {
        let client = try client("github")
        var states = [String]()
        for _ in 0..<100 { states.append(try await client.startAuthorization().pending.state) }
        #expect(Set(states).count == 100)
        // 43 base64url characters carry 258 bits; anything ≥ 22 would carry ≥ 128.
        #expect(states.allSatisfy { $0.count == 43 })
    }

    @Test func clientSecretIsNeverInTheURL() async throws {
        let secret = "s3cr3t-value"
        for id in ["github", "qiita", "instagram"] {
            let (url, _) = try await client(id).startAuthorization()
            #expect(!url.absoluteString.contains(secret), "\(id)")
            #expect(!url.absoluteString.contains("client_secret"), "\(id)")
        }
        await #expect(throws: AuthKitError.self) {
            try await client("github").startAuthorization(additionalParameters: ["client_secret": secret])
        }
    }

    @Test func qiitaSendsNeitherRedirectURINorResponseType() async throws {
        let (url, pending) = try await client("qiita").startAuthorization(scopes: ["read_qiita", "write_qiita"])
        let p = try parameters(url)
        #expect(Set(p.keys) == ["client_id", "scope", "state"])
        #expect(p["scope"] == "read_qiita write_qiita")
        #expect(pending.codeVerifier == nil) // Qiita documents no PKCE
        #expect(pending.redirectURI == "http://127.0.0.1:8765/callback") // its registered default
    }

    @Test func instagramJoinsScopesWithCommas() async throws {
        let (url, _) = try await client("instagram").startAuthorization(
            scopes: ["instagram_business_basic", "instagram_business_content_publish"])
        let p = try parameters(url)
        #expect(p["scope"] == "instagram_business_basic,instagram_business_content_publish")
        #expect(p["redirect_uri"] == "https://localhost/callback")
        #expect(p["response_type"] == "code")
    }

    @Test func aRedirectSchemeTheProviderRefusesIsAnErrorUpFront() async throws {
        await #expect {
            try await client("instagram").startAuthorization(redirectURI: URL(string: "http://127.0.0.1:5000/callback"))
        } throws: { error in
            guard case .unusableRedirectURI(_, let text)? = error.authKitReason else { return false }
            return text.contains("only accepts https") && text.contains("https://localhost/callback")
        }
        #expect(
            try await client("instagram").startAuthorization(redirectURI: URL(string: "https://localhost:8443/cb"))
                .pending
                .redirectURI == "https://localhost:8443/cb")
    }

    /// A configured redirect URI that is not a usable one is refused when the
    /// client is made, not replaced: one `URL(string:)` could not parse left
    /// the descriptor's default in its place, to fail at the provider after
    /// the user approved. `oob` is OAuth 1.0a's, not a redirect URI here.
    @Test func aConfiguredRedirectURIThatCannotBeOneIsRefused() async throws {
        for (configured, expected) in [
            ("http://127.0.0.1:8765x/callback", "is not an absolute URI"), ("oob", "is not an absolute URI"),
            ("http://127.0.0.1/callback#top", "has a fragment"), ("http://127.0.0.1/c%zz", "holds '%zz'"),
            ("http://127.0.0.1:70000/callback", "names port 70000"),
        ] {
            #expect("\(configured)") {
                try client("github", settings: ClientSettings(clientID: "the-client", redirectURI: configured))
            } throws: { error in
                guard case .unusableRedirectURI(_, let reason)? = error.authKitReason else { return false }
                return reason.contains(expected) && reason.contains("AUTHKIT_GITHUB_REDIRECT_URI")
            }
        }
        let fine = try client(
            "github",
            settings: ClientSettings(clientID: "the-client", redirectURI: "http://127.0.0.1:8765/callback?x=%2F"))
        #expect(fine.defaultRedirectURI?.absoluteString == "http://127.0.0.1:8765/callback?x=%2F")
    }

    @Test func defaultScopesComeFromDescriptorThenSettings() async throws {
        #expect(try await parameters(client("qiita").startAuthorization().url)["scope"] == "read_qiita")
        let configured = try client("qiita", settings: ClientSettings(clientID: "c", scopes: ["write_qiita"]))
        #expect(try await parameters(configured.startAuthorization().url)["scope"] == "write_qiita")
    }

    /// `URLComponents` leaves `+` raw, which form decoders read as a space; every
    /// value must come back byte for byte through a form decoder.
    @Test func valuesSurviveAFormDecoder() async throws {
        let tricky = "a+b&c=d e/é☃?#%"
        let (url, _) = try await client("github").startAuthorization(
            redirectURI: URL(string: "http://127.0.0.1:1/cb"), scopes: ["x+y", "z&w"],
            additionalParameters: ["login_hint": tricky])
        let query = try #require(url.query(percentEncoded: true))
        #expect(!query.contains("+"), "a raw + would decode as a space")
        let p = try parameters(url)
        #expect(p["login_hint"] == tricky)
        #expect(p["scope"] == "x+y z&w")
        // And through URLComponents' own decoder (no plus-as-space rule).
        let items = try #require(URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems)
        #expect(items.first { $0.name == "login_hint" }?.value == tricky)
    }

    /// Slack's user scopes go in `user_scope` (`authorization.scopeParameter`):
    /// in `scope` they asked for bot scopes, which an app on a desktop
    /// redirect may not request, and `--scope` could not reach `user_scope`.
    @Test func slackUserScopesGoInUserScope() async throws {
        let client = try client("slack", settings: ClientSettings(clientID: "the-client"))
        let redirect = URL(string: "http://localhost:8765/callback")
        let standard = try await parameters(client.startAuthorization(redirectURI: redirect).url)
        #expect(standard["user_scope"] == "users:read" && standard["scope"] == nil, "\(standard)")
        let asked = try await parameters(
            client.startAuthorization(redirectURI: redirect, scopes: ["chat:write", "users:read"]).url)
        #expect(asked["user_scope"] == "chat:write,users:read" && asked["scope"] == nil, "\(asked)")
        await #expect(throws: AuthKitError.self) {
            try await client.startAuthorization(additionalParameters: ["user_scope": "x"])
        }
    }

    @Test func reservedParametersCannotBeOverridden() async throws {
        // `request` (RFC 9101): a server that takes a request object uses
        // only its values, state and redirect_uri among them.
        for name in ["state", "code_challenge", "redirect_uri", "client_id", "request"] {
            await #expect(throws: AuthKitError.self) {
                try await client("github").startAuthorization(additionalParameters: [name: "x"])
            }
        }
    }

    /// AuthKit reads the code from the redirect's query (RFC 6749 §4.1.2):
    /// a `response_mode` that puts it elsewhere (`fragment`, `form_post`) is
    /// refused at the start, naming the parameter, in a caller's parameters
    /// and in a descriptor's (its parameters, its URL). Sent, the user
    /// signed in at the provider and the sign-in then failed at a redirect
    /// with no code in it. `query` is what the redirect does anyway.
    @Test func aResponseModeThatMovesTheCodeIsRefused() async throws {
        for mode in ["fragment", "form_post"] {
            await #expect {
                try await client("github").startAuthorization(additionalParameters: ["response_mode": mode])
            } throws: { error in
                guard case .misuse(.invalidParameter("response_mode", let problem))? = error.authKitReason else {
                    return false
                }
                return problem.contains("'\(mode)'") && problem.contains("query")
            }
        }
        let (url, _) = try await client("github").startAuthorization(additionalParameters: ["response_mode": "query"])
        #expect(try parameters(url)["response_mode"] == "query")

        for (field, authorization) in [
            (
                "authorization.parameters.response_mode",
                #"{"url": "https://example.com/authorize", "parameters": {"response_mode": "form_post"}}"#
            ),
            ("authorization.url", #"{"url": "https://example.com/authorize?response_mode=fragment"}"#),
        ] {
            let json = """
                {"id": "modes", "protocol": "oauth2", "authorization": \(authorization),
                 "token": {"url": "https://example.com/token"}}
                """
            #expect {
                _ = try DescriptorLoader().decode(Data(json.utf8), file: "/tmp/modes.json")
            } throws: { error in
                guard case .invalidFile(let issues)? = error.authKitReason else { return false }
                return issues.contains { $0.field == field && $0.problem.contains("set it to 'query'") }
            }
        }
        let plain = """
            {"id": "modes", "protocol": "oauth2",
             "authorization": {"url": "https://example.com/authorize", "parameters": {"response_mode": "query"}},
             "token": {"url": "https://example.com/token"}}
            """
        _ = try DescriptorLoader().decode(Data(plain.utf8), file: "/tmp/modes.json")
    }

    /// An attempt is finished only by the client that started it: the
    /// provider id alone let another client of the same descriptor (another
    /// tenant's `{host}`, another client id) take the redirect and send the
    /// code with the PKCE verifier to its own token endpoint (the outcome
    /// of a mix-up, RFC 9700 §4.4). Refused before anything is sent.
    @Test func anAttemptIsFinishedOnlyByTheClientThatStartedIt() async throws {
        func gitlab(host: String, clientID: String = "the-client") throws -> OAuth2Client {
            try client(
                "gitlab-self-managed",
                settings: ClientSettings(clientID: clientID, clientSecret: "s3cr3t-value", placeholders: ["host": host])
            )
        }
        let started = try gitlab(host: "a.example")
        let (url, pending) = try await started.startAuthorization()
        let state = try #require(try parameters(url)["state"])
        let redirect = try #require(URL(string: pending.redirectURI + "?code=the-code&state=\(state)"))
        #expect(try started.authorizationCode(from: redirect, pending: pending) == "the-code")
        for other in [try gitlab(host: "b.example"), try gitlab(host: "a.example", clientID: "another-client")] {
            #expect(throws: AuthKitError.misuse(.attemptOfAnotherClient(providerID: "gitlab-self-managed"))) {
                try other.authorizationCode(from: redirect, pending: pending)
            }
            await #expect(throws: AuthKitError.misuse(.attemptOfAnotherClient(providerID: "gitlab-self-managed"))) {
                try await other.exchange(code: "the-code", pending: pending)
            }
        }
        // One kept by an earlier version, without them, is still finished.
        var earlier = pending
        (earlier.clientID, earlier.tokenEndpoint) = (nil, nil)
        #expect(try started.authorizationCode(from: redirect, pending: earlier) == "the-code")
    }

    /// An "any tenant" endpoint (Microsoft's `common`) answers for many
    /// issuers, and a redirect's `iss` was then not compared at all:
    /// `iss=https://evil.example` passed. A present one is compared as one
    /// of them (RFC 9207 §2.4), one tenant in the placeholder's place; an
    /// absent one is still taken (Microsoft does not say it sends one),
    /// but not where the descriptor says the provider sends it.
    @Test func anAnyTenantRedirectsIssuerIsOneOfItsIssuers() async throws {
        let microsoft = try client(
            "microsoft", settings: ClientSettings(clientID: "the-client", placeholders: ["tenant": "common"]))
        let (url, pending) = try await microsoft.startAuthorization()
        let state = try #require(try parameters(url)["state"])
        func code(iss: String?) throws -> String {
            let query =
                "code=the-code&state=\(state)"
                + (iss.map { "&iss=" + FormURLEncoding.encode([("", $0)]).dropFirst() } ?? "")
            return try microsoft.authorizationCode(
                from: try #require(URL(string: pending.redirectURI + "?" + query)), pending: pending)
        }
        #expect(try code(iss: nil) == "the-code")
        #expect(
            try code(iss: "https://login.microsoftonline.com/9188040d-6c67-4c5b-b112-36a304b66dad/v2.0") == "the-code")
        for hostile in [
            "https://evil.example", "https://login.microsoftonline.com//v2.0",
            "https://login.microsoftonline.com/a/b/v2.0", "https://login.microsoftonline.com/x/v2.0/",
        ] {
            #expect(throws: AuthKitError.self, "\(hostile)") { try code(iss: hostile) }
        }

        // A descriptor that says the provider sends `iss` has it required
        // here as with one issuer (§2.4: a response without it is refused).
        var sending = try bundledDescriptor("microsoft")
        try #require(sending.issuer != nil)
        sending.issuer?.includedInResponse = true
        let strict = try OAuth2Client(
            descriptor: sending, settings: ClientSettings(clientID: "the-client", placeholders: ["tenant": "common"]))
        let (strictURL, strictPending) = try await strict.startAuthorization()
        let strictState = try #require(try parameters(strictURL)["state"])
        let without = try #require(URL(string: strictPending.redirectURI + "?code=the-code&state=\(strictState)"))
        #expect(
            throws: AuthKitError.redirect(.missingIssuer(expected: "https://login.microsoftonline.com/{tenant}/v2.0"))
        ) {
            try strict.authorizationCode(from: without, pending: strictPending)
        }
        let with = try #require(
            URL(
                string: without.absoluteString
                    + "&iss=https%3A%2F%2Flogin.microsoftonline.com%2F9188040d-6c67-4c5b-b112-36a304b66dad%2Fv2.0"))
        #expect(try strict.authorizationCode(from: with, pending: strictPending) == "the-code")
    }

    /// Scopes are joined with the descriptor's separator, so one element
    /// holding a space is one unknown scope to a comma-separated provider,
    /// and a line break reaches the provider as %0A, refused only after the
    /// user approved. The library refuses them before the URL exists; the
    /// command line and config.json check them in their own words.
    @Test func scopesThatAreNotScopeTokensAreRefused() async throws {
        for bad in ["openid profile", "", " repo", "repo\n", "caf\u{E9}", #"a"b"#] {
            await #expect(throws: AuthKitError.misuse(.invalidScope(bad))) {
                try await client("github").startAuthorization(scopes: ["user", bad])
            }
            await #expect(throws: AuthKitError.misuse(.invalidScope(bad))) {
                try await client("github").startDeviceAuthorization(scopes: [bad])
            }
        }
        // Settings made in code are held to the same rule.
        let configured = try client(
            "github", settings: ClientSettings(clientID: "c", scopes: ["read:user write"]))
        await #expect(throws: AuthKitError.misuse(.invalidScope("read:user write"))) {
            try await configured.startAuthorization()
        }
        let message = "\(AuthKitError.misuse(.invalidScope("openid profile")))"
        #expect(message.contains("is several scopes; list each on its own: \"openid\", \"profile\""), "\(message)")
        // The scope is shown, its escape sequence as text: it is the caller's, maybe read from a file.
        #expect(!"\(AuthKitError.misuse(.invalidScope("a\u{1B}[2Jb")))".contains("\u{1B}"))
        // Every scope token passes, the unusual ones included.
        let url = try await client("github").startAuthorization(scopes: [
            "a+b", "z&w", "https://x.example/s?q=1", "!#$",
        ]).url
        #expect(try parameters(url)["scope"] == "a+b z&w https://x.example/s?q=1 !#$")
    }

    @Test func endpointQueryIsRetained() async throws {
        var descriptor = try bundledDescriptor("github")
        descriptor.authorization?.url = "https://example.com/authorize?tenant=a%2Bb"
        let client = try OAuth2Client(descriptor: descriptor, settings: ClientSettings(clientID: "c"))
        let url = try await client.startAuthorization().url
        #expect(url.absoluteString.hasPrefix("https://example.com/authorize?tenant=a%2Bb&response_type=code"))
    }

    @Test func missingClientIDSaysHowToSetIt() async throws {
        #expect {
            try OAuth2Client(descriptor: bundledDescriptor("qiita"), settings: ClientSettings())
        } throws: { error in
            let text = "\(error)"
            // The library speaks of its own ways in; the command line adds its flags.
            return error as? AuthKitError == .missingSetting(providerID: "qiita", .clientID)
                && text.contains("AUTHKIT_QIITA_CLIENT_ID") && text.contains("config.json") && !text.contains("--")
        }
    }

    @Test func hostPlaceholdersAreFilledOrReported() async throws {
        let team = try bundledDescriptor("qiita-team")
        #expect {
            try OAuth2Client(descriptor: team, settings: ClientSettings(clientID: "c"))
        } throws: { error in
            guard case .missingSetting(let provider, let setting)? = error.authKitReason else { return false }
            return provider == "qiita-team" && setting == .placeholder(name: "team", usedIn: "authorization.url")
                && "\(error)".contains("AUTHKIT_QIITA_TEAM_TEAM")
        }
        let client = try OAuth2Client(
            descriptor: team, settings: ClientSettings(clientID: "c", placeholders: ["team": "acme"]))
        #expect(
            try await client.startAuthorization().url.absoluteString.hasPrefix(
                "https://acme.qiita.com/api/v2/oauth/team_authorize?"))
    }

    /// A self-managed server's host setting may hold a port and a path (GitLab
    /// under a relative URL root), as gitlab-self-managed.json documents; no
    /// other delimiter of a value reaches the URL raw.
    @Test func aHostPlaceholderMayCarryAPortAndAPath() async throws {
        let gitlab = try bundledDescriptor("gitlab-self-managed")
        let client = try OAuth2Client(
            descriptor: gitlab,
            settings: ClientSettings(clientID: "c", placeholders: ["host": "gitlab.example.com:8443/gitlab"]))
        #expect(
            try await client.startAuthorization().url.absoluteString.hasPrefix(
                "https://gitlab.example.com:8443/gitlab/oauth/authorize?"))

        // The token request goes to the same place (here a closed port, named in the error).
        let local = try OAuth2Client(
            descriptor: gitlab, settings: ClientSettings(clientID: "c", placeholders: ["host": "127.0.0.1:1/gitlab"]))
        let (_, pending) = try await local.startAuthorization()
        await #expect {
            _ = try await local.exchange(code: "code", pending: pending)
        } throws: { error in
            guard case .network(let url, _)? = error.authKitReason else { return false }
            return url == "https://127.0.0.1:1/gitlab/oauth/token"
        }

        // Values that would add user info, a query or a fragment make no
        // host, and are refused before any URL is made (they used to be
        // percent-encoded into a host nobody has).
        for hostile in ["me@evil.example", "gitlab.example.com?x=1", "gitlab.example.com#x", "evil.example&a=b"] {
            #expect {
                try OAuth2Client(
                    descriptor: gitlab, settings: ClientSettings(clientID: "c", placeholders: ["host": hostile]))
            } throws: { error in
                guard
                    case .invalidSetting(
                        "gitlab-self-managed", .placeholder(name: "host", _), let problem)? = error.authKitReason
                else { return false }
                return problem.hasPrefix("'\(hostile)' holds '")
                    && "\(error)".contains("the value for {host} (used in the endpoint URLs) cannot be used")
            }
        }
    }

    /// A library user that takes `{team}` from its own user (a server app's
    /// web form) must not have its client secret sent elsewhere: a `/` in a
    /// value inside a host name ended the name early, and
    /// `https://evil.example/.qiita.com/api/v2/team_access_tokens` received
    /// the token request. The client now refuses the value when it is made.
    @Test func aPlaceholderValueCannotMoveTheTokenRequestToAnotherHost() async throws {
        let team = try bundledDescriptor("qiita-team")
        for value in ["evil.example/", "evil.example:443/", "evil.example?"] {
            #expect {
                try OAuth2Client(
                    descriptor: team,
                    settings: ClientSettings(clientID: "c", clientSecret: "the-secret", placeholders: ["team": value]))
            } throws: { error in
                guard case .invalidSetting("qiita-team", .placeholder(name: "team", _), _)? = error.authKitReason else {
                    return false
                }
                return !"\(error)".contains("the-secret")
            }
        }
    }

    @Test func pendingAuthorizationRoundTripsThroughJSON() async throws {
        let (_, pending) = try await client("github").startAuthorization()
        let decoded = try JSONDecoder().decode(PendingAuthorization.self, from: JSONEncoder().encode(pending))
        #expect(decoded.state == pending.state)
        #expect(decoded.codeVerifier == pending.codeVerifier)
        #expect(decoded.redirectURI == pending.redirectURI)
        #expect(abs(decoded.createdAt.timeIntervalSince(pending.createdAt)) < 0.001)
    }
}

@Suite struct ClientSettingsTests {
    @Test func environmentNamingRule() {
        #expect(ClientSettings.environmentPrefix(for: "qiita") == "AUTHKIT_QIITA")
        #expect(ClientSettings.environmentPrefix(for: "my-gitlab.v2") == "AUTHKIT_MY_GITLAB_V2")
    }

    @Test func callerThenEnvironmentThenFile() {
        let file = UserConfiguration(providers: [
            "qiita": ClientSettings(
                clientID: "from-file", clientSecret: "file-secret", redirectURI: "http://127.0.0.1:1/f")
        ])
        let environment = ["AUTHKIT_QIITA_CLIENT_ID": "from-env", "AUTHKIT_QIITA_TEAM_TEAM": "acme"]
        let merged = ClientSettings.resolve(
            providerID: "qiita", explicit: ClientSettings(redirectURI: "http://127.0.0.1:2/x"),
            environment: environment, configuration: file)
        #expect(merged.clientID == "from-env")
        #expect(merged.clientSecret == "file-secret")
        #expect(merged.redirectURI == "http://127.0.0.1:2/x")

        let team = ClientSettings.resolve(
            providerID: "qiita-team", placeholderNames: ["team"], environment: environment)
        #expect(team.placeholders?["team"] == "acme")
    }

    /// `privateKeyFile`, as `--private-key`'s help and docs/command-line.md say.
    @Test func configurationNamesAPrivateKeyFile() async throws {
        let home = TemporaryDirectory.url("authkit-config-key")
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: home) }
        try #"{"providers": {"corp": {"clientID": "machine", "privateKeyFile": "/keys/corp.pem"}}}"#.write(
            to: home.appendingPathComponent("config.json"), atomically: true, encoding: .utf8)
        let settings = try UserConfiguration.load(home: home).providers?["corp"]
        #expect(settings?.privateKeyFile == "/keys/corp.pem" && settings?.clientID == "machine")
    }

    @Test func configurationFileErrorsNameTheFile() async throws {
        let home = TemporaryDirectory.url("authkit-config")
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: home) }
        #expect(try UserConfiguration.load(home: home) == UserConfiguration())
        try #"{"providers": {"qiita": {"clientID": 42}}}"#.write(
            to: home.appendingPathComponent("config.json"), atomically: true, encoding: .utf8)
        #expect {
            try UserConfiguration.load(home: home)
        } throws: { error in
            guard case .invalidFile(let issues)? = error.authKitReason else { return false }
            return issues.first?.file.hasSuffix("config.json") == true
                && issues.first?.field == "providers.qiita.clientID"
        }
    }

    /// Scopes in config.json are RFC 6749 §3.3 tokens: "repo user" is named
    /// as two scopes, a line break or an empty one refused, each by field;
    /// before, they were sent as one scope with `%20`, `%0A` or an empty name.
    @Test func configurationScopesAreScopeTokens() async throws {
        let home = TemporaryDirectory.url("authkit-config-scopes")
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: home) }
        let file = home.appendingPathComponent("config.json")
        try #"{"providers": {"github": {"scopes": ["read:user", "repo user", "a\nb", "", " repo"]}}}"#.write(
            to: file, atomically: true, encoding: .utf8)
        #expect {
            try UserConfiguration.load(home: home)
        } throws: { error in
            guard case .invalidFile(let issues)? = error.authKitReason else { return false }
            return issues.map(\.problem) == [
                #"'repo user' is several scopes; list each on its own: "repo", "user"."#,
                #"'a\u{A}b' holds a control character, a non-ASCII one, '"' or '\', which no scope has (RFC 6749 §3.3)."#,
                "holds an empty scope; remove it.", #"' repo' begins or ends with a space; write "repo"."#,
            ]
                && issues.map(\.field) == [
                    "providers.github.scopes[1]", "providers.github.scopes[2]", "providers.github.scopes[3]",
                    "providers.github.scopes[4]",
                ]
                && issues.allSatisfy { $0.file == file.path }
        }
        try #"{"providers": {"google": {"scopes": ["openid", "https://www.googleapis.com/auth/drive.readonly"]}}}"#
            .write(to: file, atomically: true, encoding: .utf8)
        #expect(try UserConfiguration.load(home: home).providers?["google"]?.scopes?.count == 2)
    }
}
