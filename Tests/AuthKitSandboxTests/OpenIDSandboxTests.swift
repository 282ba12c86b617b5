import AuthKit
import AuthKitSandbox
import AuthKitTestSupport
import Foundation
import HTTPTypes
import Testing

/// The sandbox as an OpenID provider (issue 46): for a descriptor with an
/// `openid` part it signs ID tokens with a key of an algorithm the
/// descriptor lists, publishes it at the descriptor's key-set URL, and
/// AuthKit's own client verifies them as it would the provider's.
@Suite struct OpenIDSandboxTests {
    static func descriptor(algorithms: [String]) throws -> ProviderDescriptor {
        let list = algorithms.map { "\"\($0)\"" }.joined(separator: ", ")
        return try ProviderDescriptor(
            json: Data(
                """
                {"id": "op", "name": "Example OP", "protocol": "oauth2",
                 "authorization": {"url": "https://op.example/authorize"}, "token": {"url": "https://op.example/token"},
                 "issuer": {"identifier": "https://op.example"},
                 "openid": {"keys": "https://keys.op.example/jwks", "signingAlgorithms": [\(list)]},
                 "scopes": {"default": ["openid", "email", "profile"]}}
                """.utf8))
    }

    @Test(arguments: ["ES256", "EdDSA", "RS256", "PS256"])
    func aSignInThroughTheSandboxNamesTheUserVerified(algorithm: String) async throws {
        try await Sandbox.with(emulating: try Self.descriptor(algorithms: [algorithm])) { sandbox in
            let client = try OAuth2Client(descriptor: sandbox.descriptor, settings: sandbox.clientSettings)
            let credential = try await client.authorize(using: sandbox.userAgent(account: "carol"))
            let identity = try #require(credential.identity)
            #expect(identity.subject == "sandbox-user-carol")
            #expect(identity.email == "carol@sandbox.example" && identity.emailVerified == true)
            #expect(identity.issuer == sandbox.descriptor.issuer?.identifier)
            // The key set was fetched from the sandbox, at the descriptor's key-set URL there.
            #expect(sandbox.events.contains { $0.step == "keys" && $0.status == 200 })
            // A refresh keeps who signed in (and verifies the new ID token).
            let refreshed = try await client.refresh(credential)
            #expect(refreshed.identity?.subject == "sandbox-user-carol")
        }
    }

    /// A refreshed ID token gives the sign-in's `auth_time` (Core §12.2),
    /// however much later it is issued; the client holds it to that.
    @Test func aRefreshedIDTokenKeepsTheTimeOfTheSignIn() async throws {
        let clock = Clock()
        let options = SandboxOptions(approves: true, now: { clock.now })
        try await Sandbox.with(emulating: try Self.descriptor(algorithms: ["ES256"]), options: options) { sandbox in
            let client = try OAuth2Client(descriptor: sandbox.descriptor, settings: sandbox.clientSettings)
            let credential = try await client.authorize(using: sandbox.userAgent())
            let signedIn = try #require(credential.identity?.claims["auth_time"])
            clock.advance(by: 30) // within the verifier's minute of skew
            let refreshed = try await client.refresh(credential)
            #expect(refreshed.rawFields["id_token"] != credential.rawFields["id_token"])
            #expect(refreshed.identity?.claims["auth_time"] == signedIn)
        }
    }

    /// A sandbox clock a test moves on.
    final class Clock: @unchecked Sendable {
        private let lock = NSLock()
        private var offset: TimeInterval = 0
        var now: Date { lock.withLock { Date().addingTimeInterval(offset) } }
        func advance(by seconds: TimeInterval) { lock.withLock { offset += seconds } }
    }

    @Test func withoutTheOpenIDScopeThereIsNoIDToken() async throws {
        try await Sandbox.with(emulating: try Self.descriptor(algorithms: ["ES256"])) { sandbox in
            var settings = sandbox.clientSettings
            settings.scopes = ["email"]
            let client = try OAuth2Client(descriptor: sandbox.descriptor, settings: settings)
            let credential = try await client.authorize(using: sandbox.userAgent())
            #expect(credential.identity == nil && credential.rawFields["id_token"] == nil)
        }
    }

    /// `--id-token-fault`: each wrong token is refused by the check it fails.
    @Test(arguments: SandboxOptions.IDTokenFault.allCases)
    func aFaultyTokenIsRefusedForWhatIsWrongWithIt(fault: SandboxOptions.IDTokenFault) async throws {
        let options = SandboxOptions(approves: true, idTokenFault: fault.rawValue)
        try await Sandbox.with(emulating: try Self.descriptor(algorithms: ["ES256"]), options: options) { sandbox in
            let client = try OAuth2Client(descriptor: sandbox.descriptor, settings: sandbox.clientSettings)
            await #expect {
                try await client.authorize(using: sandbox.userAgent())
            } throws: { error in
                guard case .idTokenRejected(_, let problem)? = error.authKitReason else { return false }
                switch (fault, problem) {
                case (.unsigned, .algorithmNotAllowed("none")), (.unknownKey, .unknownKey),
                    (.wrongAudience, .audienceMismatch),
                    (.wrongIssuer, .issuerMismatch), (.expired, .expired), (.wrongNonce, .nonceMismatch):
                    return true
                default:
                    return false
                }
            }
        }
    }

    /// A fault the sandbox does not know is refused at start, by its field,
    /// with the names it takes; it does not start handing out good tokens.
    @Test func anUnknownFaultIsRefusedByName() async throws {
        await #expect {
            try await Sandbox.start(
                emulating: try Self.descriptor(algorithms: ["ES256"]),
                options: SandboxOptions(idTokenFault: "wrong-aud"))
        } throws: { error in
            guard let error = error as? AuthKitError else { return false }
            return error.code == .misuse && error.field == "SandboxOptions.idTokenFault"
                && "\(error)".contains("wrong-audience") && "\(error)".contains("'wrong-aud'")
        }
    }

    /// `POST /rotate-keys`: new tokens name a key the client's kept copy of
    /// the set lacks; it fetches the set once more and verifies them.
    @Test func aRotatedKeyIsFetchedAndTrusted() async throws {
        // Its own cache, which refetches at once: the process's keeps 30 s
        // between fetches, which other tests count on.
        let options = SandboxOptions(approves: true)
        try await KeySetCache.$inUse.withValue(KeySetCache(minimumRefetchInterval: 0)) {
            try await Sandbox.with(emulating: try Self.descriptor(algorithms: ["EdDSA"]), options: options) { sandbox in
                let client = try OAuth2Client(descriptor: sandbox.descriptor, settings: sandbox.clientSettings)
                _ = try await client.authorize(using: sandbox.userAgent())
                let port = try #require(sandbox.baseURL.port)
                // Not from another site's page (any page can send this POST).
                let crossSite = try await RawHTTP.send(
                    Data(
                        "POST /rotate-keys HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nOrigin: https://evil.example\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                            .utf8),
                    port: port)
                #expect(crossSite.status == 403)
                let rotated = try await RawHTTP.send(
                    Data(
                        "POST /rotate-keys HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                            .utf8),
                    port: port)
                #expect(rotated.status == 200)
                let credential = try await client.authorize(using: sandbox.userAgent())
                #expect(credential.identity?.subject == "sandbox-user-alice")
                #expect(sandbox.events.filter { $0.step == "keys" && $0.request.hasPrefix("GET") }.count == 2)
            }
        }
    }

    /// UserInfo (Core §5.3) and the end-session endpoint (RP-Initiated
    /// Logout 1.0) of a descriptor that names them, emulated.
    @Test func userInfoAndEndSessionAreEmulated() async throws {
        let descriptor = try ProviderDescriptor(
            json: Data(
                """
                {"id": "op", "name": "Example OP", "protocol": "oauth2",
                 "authorization": {"url": "https://op.example/authorize"}, "token": {"url": "https://op.example/token"},
                 "issuer": {"identifier": "https://op.example"},
                 "openid": {"keys": "https://op.example/jwks", "signingAlgorithms": ["ES256"],
                            "userInfo": "https://op.example/userinfo", "endSession": "https://op.example/logout"},
                 "scopes": {"default": ["openid", "email"]}}
                """.utf8))
        let options = SandboxOptions(redirectURIs: ["http://127.0.0.1/callback", "https://app.example/bye"])
        try await Sandbox.with(emulating: descriptor, options: options) { sandbox in
            let client = try OAuth2Client(descriptor: sandbox.descriptor, settings: sandbox.clientSettings)
            let credential = try await client.authorize(using: sandbox.userAgent(account: "dave"))
            let info = try await client.userInfo(credential)
            #expect(info.subject == "sandbox-user-dave" && info.email == "dave@sandbox.example")

            let port = try #require(sandbox.baseURL.port)
            func get(_ url: URL) async throws -> RawResponse {
                let target = url.absoluteString.dropFirst(sandbox.baseURL.absoluteString.count)
                return try await RawHTTP.send(
                    Data(
                        "GET /\(target.drop { $0 == "/" }) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n\r\n"
                            .utf8),
                    port: port)
            }
            let back = try await get(
                try client.endSession(credential, postLogoutRedirectURI: "https://app.example/bye", state: "s-1").url)
            #expect(back.status == 302 && back.header("Location") == "https://app.example/bye?state=s-1")
            let elsewhere = try await get(
                try client.endSession(credential, postLogoutRedirectURI: "https://attacker.example/", state: "s").url)
            #expect(elsewhere.status == 400 && elsewhere.header("Location") == nil)
            var forged = credential
            forged.rawFields["id_token"] = .string("eyJhbGciOiJub25lIn0.e30.")
            let hint = try client.endSession(forged, postLogoutRedirectURI: "https://app.example/bye")
            var components = URLComponents(url: hint.url, resolvingAgainstBaseURL: false)!
            components.queryItems! += [URLQueryItem(name: "id_token_hint", value: "eyJhbGciOiJub25lIn0.e30.")]
            let refused = try await get(components.url!)
            #expect(refused.status == 400 && refused.body.contains("not an ID token this sandbox issued"))
        }
    }

    /// OpenID Connect Core §3.1.2.1: `prompt=none` shows no page. The sandbox
    /// keeps no sign-in, so with consent `ask` the answer is `login_required`
    /// (§3.1.2.6), with `deny` `consent_required`, with `approve` a code;
    /// `none` beside another value is `invalid_request`. It showed the
    /// consent page. And an OpenID request must send `redirect_uri` (it was
    /// taken without, the registered one used).
    @Test func promptNoneShowsNoPageAndRedirectURIIsRequired() async throws {
        let query =
            "response_type=code&client_id=sandbox-client&scope=openid&state=s"
            + "&code_challenge=gmuJ-1-ACpQ7ZYWZVgMSPEM2foDK5jJHAKJX0Zg1kYw&code_challenge_method=S256"
        let redirect = "&redirect_uri=http%3A%2F%2F127.0.0.1%3A5555%2Fcallback"
        for (consent, prompt, expected) in [
            (Bool?.none, "none", "error=login_required"),
            (false, "none", "error=consent_required"),
            (true, "none", "code="),
            (true, "none%20login", "error=invalid_request"),
        ] {
            try await Sandbox.with(
                emulating: try Self.descriptor(algorithms: ["ES256"]), options: SandboxOptions(approves: consent)
            ) { sandbox in
                let url = try #require(
                    URL(
                        string: sandbox.baseURL.absoluteString
                            + "/op.example/authorize?\(query)\(redirect)&prompt=\(prompt)"))
                let answer = try await raw("GET", url)
                #expect(
                    answer.status == 302 && answer.headers[.location]?.contains(expected) == true
                        && answer.headers[.location]?.contains("state=s") == true,
                    "\(consent) \(prompt): \(answer.status) \(answer.headers[.location] ?? answer.body)")
            }
        }
        try await Sandbox.with(emulating: try Self.descriptor(algorithms: ["ES256"])) { sandbox in
            let url = try #require(URL(string: sandbox.baseURL.absoluteString + "/op.example/authorize?\(query)"))
            let answer = try await raw("GET", url)
            #expect(
                answer.status == 400 && answer.headers[.location] == nil && answer.body.contains("redirect_uri"),
                "\(answer.status) \(answer.body)")
        }
    }

    /// The consent page's answer is a redirect to the client, on another
    /// origin; a browser holds a redirect after a form post to the page's
    /// `form-action` (CSP 3), so the redirect URI's origin is listed there
    /// (without it, Chromium stayed on the page after Approve).
    @Test func theConsentPageLetsItsFormEndAtTheClient() async throws {
        try await Sandbox.with(emulating: try Self.descriptor(algorithms: ["ES256"])) { sandbox in
            let port = try #require(sandbox.baseURL.port)
            let query =
                "response_type=code&client_id=sandbox-client&redirect_uri=http%3A%2F%2F127.0.0.1%3A5555%2Fcallback"
                + "&scope=openid&state=s&code_challenge=gmuJ-1-ACpQ7ZYWZVgMSPEM2foDK5jJHAKJX0Zg1kYw&code_challenge_method=S256"
            let page = try await RawHTTP.send(
                Data(
                    "GET /op.example/authorize?\(query) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n\r\n"
                        .utf8),
                port: port)
            #expect(page.status == 200 && page.body.contains("Approve"))
            #expect(
                page.header("Content-Security-Policy")?.contains("form-action 'self' http://127.0.0.1:5555;") == true)
        }
    }
}
