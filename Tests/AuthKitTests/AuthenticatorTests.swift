import AuthKitTestSupport
import Foundation
import HTTPTypes
import Testing

@testable import AuthKit

#if canImport(FoundationNetworking)
    import AuthKitFoundationNetworking
    import FoundationNetworking
#endif

@Suite struct AuthenticatorTests {
    func server(_ server: TestHTTPServer, issuer: DescriptorFile.Issuer? = nil) -> ProviderDescriptor {
        server.route("POST", "/token") { request in
            let body = (try? formObject(request.bodyText)) ?? [:]
            guard body["code"] == "good-code" else { return .json(#"{"error":"invalid_grant"}"#, status: 400) }
            return .json(
                #"{"access_token":"at-123","token_type":"Bearer","expires_in":3600,"refresh_token":"rt-1","scope":"read write"}"#
            )
        }
        return testDescriptor(
            id: "local", name: "Local", protocol: .oauth2,
            authorization: DescriptorFile.Authorization(url: "\(server.baseURL)/authorize"),
            token: DescriptorFile.Token(url: "\(server.baseURL)/token"), pkce: .s256, issuer: issuer)
    }

    @Test func wholeFlowThroughAUserAgent() async throws {
        try await withServer { server in
            let client = try OAuth2Client(
                descriptor: self.server(server), settings: ClientSettings(clientID: "c", clientSecret: "s"),
                now: { fixedNow })
            let agent = ScriptedUserAgent(redirectPort: 50123) { p, redirect in
                "\(redirect.absoluteString)?code=good-code&state=\(PercentEncoding.encode(p["state"] ?? ""))"
            }
            let credential = try await client.authorize(
                using: agent, options: AuthorizationOptions(scopes: ["read", "write"], label: "alice"))
            #expect(credential.accessToken == "at-123")
            #expect(credential.label == "alice")
            #expect(credential.scopes == ["read", "write"])
            #expect(credential.expiresAt == fixedNow.addingTimeInterval(3600))

            // The port the agent chose is the redirect_uri sent in both requests.
            let authorizeURL = try #require(agent.seenURLs.all.first)
            let sent = try formObject(try #require(authorizeURL.query(percentEncoded: true)))
            #expect(sent["redirect_uri"] == "http://127.0.0.1:50123/callback")
            let tokenBody = try formObject(try #require(server.requests.last).bodyText)
            #expect(tokenBody["redirect_uri"] == "http://127.0.0.1:50123/callback")
            #expect(tokenBody["code_verifier"].map { PKCE.challenge(for: $0) } == sent["code_challenge"])
        }
    }

    @Test func forgedRedirectIsRejectedBeforeAnyTokenRequest() async throws {
        try await withServer { server in
            let client = try OAuth2Client(descriptor: self.server(server), settings: ClientSettings(clientID: "c"))
            let agent = ScriptedUserAgent { _, redirect in "\(redirect.absoluteString)?code=good-code&state=attacker" }
            await #expect(throws: AuthKitError.redirect(.stateMismatch)) {
                try await client.authorize(using: agent)
            }
            #expect(server.requests.isEmpty)
        }
    }

    @Test func deniedConsentIsTypedAndNothingIsExchanged() async throws {
        try await withServer { server in
            let client = try OAuth2Client(descriptor: self.server(server), settings: ClientSettings(clientID: "c"))
            let agent = ScriptedUserAgent { p, redirect in
                "\(redirect.absoluteString)?error=access_denied&error_description=User%20declined&state=\(PercentEncoding.encode(p["state"] ?? ""))"
            }
            await #expect {
                try await client.authorize(using: agent)
            } throws: { error in
                (error as? AuthKitError)?.code == .accessDenied && "\(error)".contains("User declined")
            }
            #expect(server.requests.isEmpty)
        }
    }

    @Test func mixUpIsRejected() async throws {
        try await withServer { server in
            let descriptor = self.server(
                server, issuer: DescriptorFile.Issuer(identifier: "https://as.local", includedInResponse: true))
            let client = try OAuth2Client(descriptor: descriptor, settings: ClientSettings(clientID: "c"))
            let agent = ScriptedUserAgent { p, redirect in
                "\(redirect.absoluteString)?code=good-code&state=\(PercentEncoding.encode(p["state"] ?? ""))&iss=https%3A%2F%2Fattacker.example"
            }
            await #expect(
                throws: AuthKitError.redirect(
                    .issuerMismatch(expected: "https://as.local", received: "https://attacker.example"))
            ) {
                try await client.authorize(using: agent)
            }
            #expect(server.requests.isEmpty)
        }
    }

    /// The pasted URL is read; the redirect URI the browser is sent to names
    /// a port nothing listens on (the provider takes any loopback port):
    /// the descriptor's port-less one sent the code to port 80, where a
    /// local web server could log it.
    @Test func manualAgentReadsThePastedURL() async throws {
        try await withServer { server in
            let client = try OAuth2Client(descriptor: self.server(server), settings: ClientSettings(clientID: "c"))
            #expect(client.redirectPortIsFlexible)
            let output = Recorder<String>()
            let sent = LockedValue<[String: String]>([:])
            let write: @Sendable (String) -> Void = { text in
                output.append(text)
                if let url = text.split(separator: "\n").map({ $0.trimmingCharacters(in: .whitespaces) }).first(
                    where: { $0.hasPrefix("http") }),
                    let query = URL(string: url)?.query(percentEncoded: true), let p = try? formObject(query)
                {
                    sent.withLock { $0 = p }
                }
            }
            let agent = manualUserAgent(
                write: write,
                readLine: {
                    let p = sent.current
                    return "\(p["redirect_uri"] ?? "")?code=good-code&state=\(PercentEncoding.encode(p["state"] ?? ""))"
                })
            let credential = try await client.authorize(using: agent)
            #expect(credential.accessToken == "at-123")
            #expect(output.all.joined().contains("\(server.baseURL)/authorize?"))
            let redirect = try #require(sent.current["redirect_uri"].flatMap(URL.init(string:)))
            #expect(redirect.host == "127.0.0.1" && redirect.path == "/callback")
            #expect(redirect.port != nil && redirect.port != 80, "\(redirect)")
            // The exchange names the same redirect URI (RFC 6749 §4.1.3).
            let exchange = try #require(server.requests.last { $0.path == "/token" })
            #expect(try formObject(exchange.bodyText)["redirect_uri"] == redirect.absoluteString)

            // A pasted URL with another attempt's state is an error, not a hang.
            let wrong = ManualUserAgent(
                write: write, readLine: { "\(sent.current["redirect_uri"] ?? "")?code=good-code&state=old" })
            await #expect(throws: AuthKitError.redirect(.stateMismatch)) { try await client.authorize(using: wrong) }
            let nothing = ManualUserAgent(write: { _ in }, readLine: { nil })
            await #expect(throws: AuthKitError.cancelled) { try await client.authorize(using: nothing) }
        }
    }

    /// A URL pasted with the quotes or angle brackets it was copied with
    /// (from a shell command, a log, a chat message) is read without them;
    /// it was "not an absolute URL". Only one surrounding pair goes.
    @Test func aPastedURLMayComeInQuotesOrAngleBrackets() {
        let url = "http://127.0.0.1/callback?code=c&state=s"
        for pasted in ["'\(url)'", "\"\(url)\"", "<\(url)>", "  '\(url)'  ", " < \(url) > "] {
            #expect(ManualUserAgent.unwrapped(pasted) == url, "\(pasted)")
        }
        #expect(ManualUserAgent.unwrapped("''\(url)''") == "'\(url)'")
        #expect(ManualUserAgent.unwrapped("'\(url)") == "'\(url)")
        #expect(ManualUserAgent.unwrapped("'") == "'" && ManualUserAgent.unwrapped("''").isEmpty)
        #expect(ManualUserAgent.unwrapped("123-456-789") == "123-456-789")
    }

    @Test func authorizesURLRequestsWithABearerHeaderOnly() throws {
        let client = try OAuth2Client(descriptor: bundledDescriptor("qiita"), settings: ClientSettings(clientID: "c"))
        let request = URLRequest(url: URL(string: "https://qiita.com/api/v2/authenticated_user?x=1")!)
        let authorized = try client.authorize(request, with: Credential(providerID: "qiita", accessToken: "tok"))
        #expect(authorized.value(forHTTPHeaderField: "Authorization") == "Bearer tok")
        #expect(authorized.url == request.url) // no token in the query

        #expect(throws: AuthKitError.self) {
            try client.authorize(request, with: Credential(providerID: "qiita", accessToken: "t", tokenType: "MAC"))
        }
        #expect(throws: AuthKitError.self) {
            try client.authorize(
                request, with: Credential(providerID: "twitter", isOAuth1: true, accessToken: "t", tokenType: "OAuth"))
        }
    }

    /// A token no Bearer header can carry, in a credential the sign-in did
    /// not check (a store edited by hand, one made in code): the header
    /// field turned its NUL, CR and LF into spaces and sent another token.
    @Test(arguments: ["abc\u{0}def\r\nX-Evil: 1", "tok en", "caf\u{E9}", "a\"b", ""])
    func aStoredTokenNoHeaderCanCarryIsNotSent(token: String) throws {
        let client = try OAuth2Client(descriptor: bundledDescriptor("qiita"), settings: ClientSettings(clientID: "c"))
        let request = HTTPRequest(
            method: .get, scheme: "https", authority: "qiita.com", path: "/api/v2/authenticated_user")
        let error = #expect(throws: AuthKitError.self) {
            try client.authorize(request, body: nil, with: Credential(providerID: "qiita", accessToken: token))
        }
        let said = String(describing: error)
        #expect(
            said.contains("is empty or holds a character a Bearer header cannot carry")
                && said.contains("Sign in again"), "\(said)")
        #expect(token.isEmpty || !said.contains(token))
    }

    /// The protocol's own form, on swift-http-types (what `URLRequest` signing is built on):
    /// an `Authorization` the caller had set is replaced, not doubled.
    @Test func authorizesHTTPRequestsReplacingAnyAuthorization() throws {
        let client = try OAuth2Client(descriptor: bundledDescriptor("qiita"), settings: ClientSettings(clientID: "c"))
        var request = HTTPRequest(method: .post, url: URL(string: "https://qiita.com/api/v2/items?x=1")!)
        request.headerFields[.authorization] = "Basic c3RhbGU="
        request.headerFields[.contentType] = "application/json"
        let authorized = try client.authorize(
            request, body: Data("{}".utf8), with: Credential(providerID: "qiita", accessToken: "tok"))
        #expect(authorized.headerFields[values: .authorization] == ["Bearer tok"])
        #expect(authorized.url == request.url && authorized.method == .post)
        #expect(authorized.headerFields[.contentType] == "application/json")
    }

    /// A method `HTTPRequest` cannot carry is refused by name, not sent as something else.
    @Test func aURLRequestWithAnInvalidMethodIsRefusedByName() throws {
        let client = try OAuth2Client(descriptor: bundledDescriptor("qiita"), settings: ClientSettings(clientID: "c"))
        var request = URLRequest(url: URL(string: "https://qiita.com/api/v2/items")!)
        request.httpMethod = "GE T"
        #expect {
            try client.authorize(request, with: Credential(providerID: "qiita", accessToken: "tok"))
        } throws: { error in
            "\(error)".contains("'GE T' is not an HTTP method")
        }
    }
}

@Suite struct CredentialTests {
    /// RFC 6749 §5.1: `token_type` is case-insensitive, and nothing but
    /// the six letters of "bearer" in either case is Bearer.
    @Test(arguments: [
        ("Bearer", true), ("bearer", true), ("BEARER", true), ("bEaReR", true),
        ("Bearer ", false), ("Bearers", false), ("bear", false), ("mac", false), ("ｂearer", false),
        ("Bea\u{0}er", false),
    ])
    func aBearerTokenIsNamedSoInEitherCase(type: String, bearer: Bool) {
        #expect(Credential(providerID: "p", accessToken: "t", tokenType: type).isBearer == bearer)
    }

    let credential = Credential(
        providerID: "qiita", label: "work", accessToken: "ea5d0a593b2655e9568f144fb1826342292f5c6b",
        refreshToken: "refresh-secret-value", tokenSecret: "token-secret-value",
        expiresAt: fixedNow, scopes: ["read_qiita"], obtainedAt: fixedNow,
        rawFields: ["user_id": .integer(17_841_405_793_187_218)])

    @Test func descriptionMasksEverySecret() {
        let text = "\(credential)"
        #expect(!text.contains("ea5d0a593b2655e9568f144fb1826342292f5c6b"))
        #expect(!text.contains("refresh-secret-value"))
        #expect(!text.contains("token-secret-value"))
        #expect(text.contains("••••5c6b"))
        #expect(text.contains("qiita"))
        #expect(Credential.mask("short") == "••••")
        // An escape sequence at the end of a token is not printed.
        #expect(Credential.mask("0123456789abcdefXY\u{1B}[2J") == "••••")
        #expect(Credential.mask("0123456789abcdefXY\u{E9}") == "••••")
        // debugPrint and dump, which a log may use too.
        var dumped = ""
        dump(credential, to: &dumped)
        for shown in [String(reflecting: credential), dumped] {
            #expect(
                !shown.contains("ea5d0a593b2655e9568f144fb1826342292f5c6b") && !shown.contains("refresh-secret-value"))
            #expect(!shown.contains("token-secret-value") && shown.contains("••••5c6b"), "\(shown)")
        }
    }

    /// What a provider granted (scopes) or a file held (a label, a token
    /// type) reaches a terminal through `print(credential)`, as the docs
    /// show it, with its control characters written out: a scope's escape
    /// sequence retitled and cleared the terminal.
    @Test func aDescriptionSendsNoControlCharacterToTheTerminal() {
        var hostile = credential
        hostile.scopes = ["read", "\u{1B}]0;PWNED\u{07}\u{1B}[2J"]
        hostile.label = "w\u{1B}[2J"
        hostile.tokenType = "Bearer\u{1B}[31m"
        var dumped = ""
        dump(hostile, to: &dumped)
        for shown in ["\(hostile)", String(reflecting: hostile), dumped] {
            #expect(!shown.unicodeScalars.contains { $0.isTerminalControl && $0 != "\n" }, "\(shown)")
            #expect(shown.contains(#"scopes: read \u{1B}]0;PWNED\u{7}\u{1B}[2J"#), "\(shown)")
            #expect(shown.contains(#"label: w\u{1B}[2J"#) && shown.contains(#"type: Bearer\u{1B}[31m"#), "\(shown)")
        }
    }

    /// A pending sign-in holds the PKCE verifier, `state` and `nonce`:
    /// printed or dumped into a log, none of them shows.
    @Test func aPendingAuthorizationPrintsNoSecret() {
        var pending = PendingAuthorization(
            providerID: "qiita", state: "STATE-secret-0123456789", codeVerifier: "VERIFIER-secret-0123456789",
            redirectURI: "http://127.0.0.1:8765/callback", expectedIssuer: nil, issuerRequired: false,
            scopes: ["read_qiita"], createdAt: fixedNow, nonce: "NONCE-secret-0123456789")
        pending.proofKey = ProofKey()
        var dumped = ""
        dump(pending, to: &dumped)
        for shown in ["\(pending)", String(reflecting: pending), dumped] {
            #expect(!shown.contains("secret") && !shown.contains("BEGIN") && !shown.contains("d\":"), "\(shown)")
            #expect(shown.contains("qiita") && shown.contains("http://127.0.0.1:8765/callback"), "\(shown)")
        }
    }

    /// An agent's result (the redirect's code and `state`, an OAuth 1.0a
    /// verifier) and an end-session request (its `id_token_hint` is the ID
    /// token): not in a print or a dump.
    @Test func aRedirectAndAnEndSessionRequestPrintNoSecret() {
        let redirect = UserAgentResult.redirect(
            URL(string: "http://127.0.0.1:8765/callback?code=CODE-secret-0123&state=STATE-secret-0123")!)
        let end = EndSessionRequest(
            endpoint: URL(string: "https://op.example/logout")!,
            parameters: ["id_token_hint": "eyJ-secret-0123", "client_id": "app", "state": "s1"])
        let shownValues: [(any Sendable, marker: String)] = [
            (redirect, "127.0.0.1:8765/callback"), (UserAgentResult.verificationCode("PIN-secret-0123"), "••••"),
            (end, "••••"),
        ]
        for (value, marker) in shownValues {
            var dumped = ""
            dump(value, to: &dumped)
            for shown in ["\(value)", String(reflecting: value), dumped] {
                #expect(!shown.contains("secret") && shown.contains(marker), "\(shown)")
            }
        }
        #expect("\(end)".contains("https://op.example/logout") && "\(end)".contains("client_id: app"))
        #expect("\(redirect)".contains("127.0.0.1:8765/callback"))
    }

    /// A device authorization's device code (a public client's token is
    /// polled for with it alone) and DPoP key: not in a dump either.
    @Test func aDeviceAuthorizationPrintsNoDeviceCode() {
        var authorization = DeviceAuthorization(
            providerID: "github", deviceCode: "DEVICE-secret-0123456789", userCode: "WDJB-MJHT",
            verificationURI: URL(string: "https://github.com/login/device")!, verificationURIComplete: nil,
            expiresAt: fixedNow, interval: 5, scopes: [])
        authorization.proofKey = ProofKey()
        var dumped = ""
        dump(authorization, to: &dumped)
        for shown in ["\(authorization)", String(reflecting: authorization), dumped] {
            #expect(!shown.contains("secret") && !shown.contains("d\":"), "\(shown)")
            #expect(shown.contains("WDJB-MJHT"), "\(shown)")
        }
    }

    /// Settings, a client and a credential source hold the client secret:
    /// printed, debug-printed or dumped (a `print(settings)` while debugging
    /// a sign-in), it does not show. Their default forms showed it.
    @Test func aClientAndItsSettingsPrintNoSecret() throws {
        let settings = ClientSettings(clientID: "visible-client-id", clientSecret: "CLIENT-secret-0123456789")
        let client = try OAuth2Client(
            descriptor: ProviderCatalog(includeBundled: true, directories: []).descriptor(id: "qiita"),
            settings: settings)
        let source = CredentialSource(authenticator: client, store: InMemoryCredentialStore(), key: credential.key)
        for value in [settings, client, source] as [Any] {
            var dumped = ""
            dump(value, to: &dumped)
            for shown in ["\(value)", String(reflecting: value), dumped] {
                #expect(!shown.contains("CLIENT-secret") && shown.contains("visible-client-id"), "\(shown)")
            }
        }
    }

    @Test func roundTripsThroughJSON() throws {
        let decoded = try JSONDecoder.credentials.decode(
            Credential.self, from: JSONEncoder.credentials.encode(credential))
        #expect(decoded == credential)
    }

    /// Copies share their members until one changes (copy on write): a
    /// change to a copy, in place or whole, never reaches the original.
    @Test func aChangedCopyLeavesTheOriginalAsItWas() throws {
        var original = credential
        original.rawFields = ["id_token": .string("header.payload.signature"), "ext": .number(1)]
        original.grantParameters = [["audience", "api"]]
        let before = try JSONEncoder.credentials.encode(original)
        var copy = original
        #expect(copy == original && copy.hashValue == original.hashValue)
        copy.rawFields["ext"] = .string("changed")
        copy.scopes.append("extra")
        copy.grantParameters?[0][1] = "other"
        copy.endpointOrigins = ["https://elsewhere.example"]
        copy.accessToken = "another-token"
        copy.label = "" // normalized to the default account, as before
        #expect(copy.label == nil)
        #expect(copy != original)
        #expect(try JSONEncoder.credentials.encode(original) == before)
        #expect(original.rawFields["ext"] == .number(1) && original.grantParameters == [["audience", "api"]])
        // Changed back member by member, the copy is equal again.
        copy.rawFields = original.rawFields
        copy.scopes = original.scopes
        copy.grantParameters = original.grantParameters
        copy.endpointOrigins = original.endpointOrigins
        copy.accessToken = original.accessToken
        copy.label = original.label
        #expect(copy == original && copy.hashValue == original.hashValue)
    }

    /// Encoded as Swift's synthesized conformance wrote it: every member
    /// that has a value under its name, no key for one that is `nil`.
    @Test func encodesItsMembersAndNoKeyForAnAbsentOne() throws {
        var full = credential
        full.label = "work"
        full.tokenSecret = "s"
        full.endpointOrigins = ["https://p.example"]
        full.refreshTokenExpiresAt = fixedNow
        full.identity = Identity(issuer: "https://p.example", subject: "u1")
        full.grantType = "client_credentials"
        full.grantParameters = [["resource", "https://api.example"]]
        full.account = "someone"
        func keys(_ value: Credential) throws -> Set<String> {
            let object = try JSONSerialization.jsonObject(with: JSONEncoder.credentials.encode(value))
            return Set((object as? [String: Any] ?? [:]).keys)
        }
        #expect(try keys(full) == Credential.memberNames.subtracting(["dpopKey"]))
        let bare = Credential(providerID: "p", accessToken: "a", obtainedAt: fixedNow)
        #expect(
            try keys(bare) == ["providerID", "kind", "accessToken", "tokenType", "scopes", "obtainedAt", "rawFields"])
    }

    @Test func expiry() {
        #expect(credential.isExpired(at: fixedNow.addingTimeInterval(-30))) // within the 60 s margin
        #expect(!credential.isExpired(at: fixedNow.addingTimeInterval(-120)))
        #expect(!Credential(providerID: "p", accessToken: "a").isExpired()) // unknown expiry
    }
}
