import AuthKitTestSupport
import Crypto
import Foundation
import Testing

@testable import AuthKit

/// A sign-in that asks for `openid` from a provider whose descriptor has an
/// `openid` part (issue 46): the nonce goes out, the ID token comes back
/// verified against the provider's key set over HTTP, and the credential
/// says who signed in. A token that fails any check stores nothing.
@Suite struct OpenIDSignInTests {
    typealias Provider = IDTokenVerifierTests.Provider

    /// The provider's descriptor, at `server`: token endpoint, key set, issuer.
    func descriptor(_ server: TestHTTPServer, keys path: String = "/jwks") -> ProviderDescriptor {
        testDescriptor(
            id: "op", protocol: .oauth2, authorization: .init(url: "\(server.baseURL)/authorize"),
            token: .init(url: "\(server.baseURL)/token"), issuer: .init(identifier: server.baseURL),
            openid: .init(keys: "\(server.baseURL)\(path)", signingAlgorithms: ["ES256"]))
    }

    /// A provider whose keys `server` serves at /jwks; the process's kept
    /// key sets are forgotten first.
    func publishingKeys(at server: TestHTTPServer) async throws -> Provider {
        await KeySetCache.shared.removeAll(under: server.baseURL + "/")
        let provider = try Provider()
        let jwks = String(
            decoding: try JSONSerialization.data(withJSONObject: ["keys": provider.publicKeys]), as: UTF8.self)
        server.route("GET", "/jwks") { _ in .json(jwks) }
        return provider
    }

    /// A provider whose keys `server` serves at /jwks, and a client of it;
    /// the process's kept key sets are forgotten first.
    func publishingProvider(at server: TestHTTPServer) async throws -> (Provider, OAuth2Client) {
        let provider = try await publishingKeys(at: server)
        let client = try OAuth2Client(
            descriptor: descriptor(server), settings: ClientSettings(clientID: IDTokenVerifierTests.clientID))
        return (provider, client)
    }

    @Test func theVerifiedIdentityIsPartOfTheCredential() async throws {
        try await withServer { server in
            let (provider, client) = try await publishingProvider(at: server)
            let (url, pending) = try await client.startAuthorization(
                redirectURI: URL(string: "http://127.0.0.1:4321/callback"), scopes: ["openid", "email"])
            let nonce = try #require(pending.nonce)
            #expect(
                URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems?.contains {
                    $0.name == "nonce" && $0.value == nonce
                } == true)
            let token = try provider.token(IDTokenVerifierTests.claims(issuedNowBy: server.baseURL, nonce: nonce))
            server.route("POST", "/token") { _ in
                .json(#"{"access_token":"at-1","token_type":"Bearer","expires_in":3600,"id_token":"\#(token)"}"#)
            }
            let credential = try await client.exchange(code: "c-1", pending: pending)
            if let identity = credential.identity {
                print("Signed in as \(identity.displayName) (\(identity.issuer), subject \(identity.subject))")
            }
            let identity = try #require(credential.identity)
            #expect(identity.issuer == server.baseURL && identity.subject == "248289761001")
            #expect(identity.email == "alice@example.com")
            #expect(server.requests(to: "/jwks").count == 1)

            // Stored and read back, the identity is kept.
            let decoded = try JSONDecoder().decode(Credential.self, from: try JSONEncoder().encode(credential))
            #expect(decoded.identity == identity)
        }
    }

    /// A refusal quotes the ID token's header (read before its signature is
    /// checked) and claims: a token endpoint that puts a secret it was sent
    /// there (the client secret as `kid`, the PKCE verifier as `iss`), or
    /// redirects to a host named by one, has it masked in the error, which
    /// the CLI prints and a web app logs.
    @Test func aRefusalQuotesNoSecretTheAnswerEchoed() async throws {
        try await withServer { server in
            let provider = try await publishingKeys(at: server)
            let secret = "client-secret-0123456789abcdef"
            let client = try OAuth2Client(
                descriptor: descriptor(server),
                settings: ClientSettings(clientID: IDTokenVerifierTests.clientID, clientSecret: secret))
            let (_, pending) = try await client.startAuthorization(
                redirectURI: URL(string: "http://127.0.0.1:4321/callback"), scopes: ["openid"])
            let verifier = try #require(pending.codeVerifier)
            let claims = IDTokenVerifierTests.claims(issuedNowBy: server.baseURL, nonce: pending.nonce)
            var echoingIssuer = claims
            echoingIssuer["iss"] = verifier
            for token in [
                try provider.token(claims, header: ["alg": "ES256", "kid": secret]),
                try provider.token(echoingIssuer),
            ] {
                server.route("POST", "/token") { _ in
                    .json(#"{"access_token":"at-1","token_type":"Bearer","id_token":"\#(token)"}"#)
                }
                do {
                    _ = try await client.exchange(code: "c-1", pending: pending)
                    Issue.record("an ID token echoing a secret was taken")
                } catch let error as AuthKitError {
                    guard case .idTokenRejected = error else {
                        Issue.record("not an ID token refusal: \(error)")
                        continue
                    }
                    #expect(!"\(error)".contains(secret) && !"\(error)".contains(verifier), "\(error)")
                    #expect("\(error)".contains("••••"), "\(error)")
                }
            }
            server.route("POST", "/token") { _ in .redirect(302, to: "https://\(secret).example/token") }
            do {
                _ = try await client.exchange(code: "c-1", pending: pending)
                Issue.record("a redirect was followed")
            } catch let error as AuthKitError {
                guard case .redirectNotFollowed(_, let status, let location) = error.reason else { throw error }
                #expect(status == 302 && !location.contains(secret) && location.contains("example"), "\(location)")
            }
        }
    }

    /// A verified token's claims are kept within the bounds an answer's
    /// members are (`KeptMembers`): a claim nested past 8 levels or larger
    /// than 64 KiB is left out, with a warning naming it; the token itself
    /// is kept whole. Kept as signed, a claim nested 125 deep sat past the
    /// credentials file's depth, and the file was refused for every account.
    @Test func anIDTokensClaimsAreKeptWithinBounds() async throws {
        try await withServer { server in
            let provider = try await publishingKeys(at: server)
            let log = RecordedLog()
            let client = try OAuth2Client(
                descriptor: descriptor(server), settings: ClientSettings(clientID: IDTokenVerifierTests.clientID),
                logger: log.logger)
            let (_, pending) = try await client.startAuthorization(
                redirectURI: URL(string: "http://127.0.0.1:4321/callback"), scopes: ["openid"])
            var claims = IDTokenVerifierTests.claims(issuedNowBy: server.baseURL, nonce: pending.nonce)
            var deep: Any = [Any]()
            for _ in 0..<11 { deep = [deep] }
            claims["deep"] = deep
            claims["big"] = String(repeating: "b", count: 70_000)
            claims["hd"] = "example.com"
            let token = try provider.token(claims)
            server.route("POST", "/token") { _ in
                .json(#"{"access_token":"at-1","token_type":"Bearer","expires_in":3600,"id_token":"\#(token)"}"#)
            }
            let credential = try await client.exchange(code: "c-1", pending: pending)
            let kept = try #require(credential.identity).claims
            #expect(kept["deep"] == nil && kept["big"] == nil)
            #expect(kept["hd"] == .string("example.com") && kept["email"] == .string("alice@example.com"))
            #expect(credential.rawFields["id_token"] == .string(token))
            let warnings = log.warnings.joined(separator: "\n")
            #expect(warnings.contains("the claim 'deep' was not kept: it nests 12 levels deep"), "\(warnings)")
            #expect(warnings.contains("the claim 'big' was not kept: it takes about 69 KiB"), "\(warnings)")
            #expect(!warnings.contains("bbbb"))
        }
    }

    /// A provider without an `openid` part that answers an ID token gets a
    /// warning that it was not verified; one that answers `"id_token":
    /// false` (Tumblr's documented answer) sent none, and gets no warning.
    @Test(arguments: [(#""id_token":"e30.e30.sig""#, true), (#""id_token":false"#, false)])
    func anUnverifiableIDTokenIsWarnedOfAndANonTokenIsNot(member: String, warned: Bool) async throws {
        try await withServer { server in
            let log = RecordedLog()
            let client = try OAuth2Client(
                descriptor: testDescriptor(
                    id: "plain", protocol: .oauth2, authorization: .init(url: "\(server.baseURL)/authorize"),
                    token: .init(url: "\(server.baseURL)/token")),
                settings: ClientSettings(clientID: "c"), logger: log.logger)
            let (_, pending) = try await client.startAuthorization(
                redirectURI: URL(string: "http://127.0.0.1:4321/callback"), scopes: [])
            server.route("POST", "/token") { _ in .json(#"{"access_token":"at-1","token_type":"Bearer",\#(member)}"#) }
            let credential = try await client.exchange(code: "c-1", pending: pending)
            #expect(credential.identity == nil)
            #expect(log.warnings.contains { $0.contains("AuthKit did not verify") } == warned, "\(log.warnings)")
        }
    }

    /// A refresh keeps who signed in (Core §12.2), and never loses the
    /// rotated refresh token to an ID token it need not or cannot check:
    /// an answer without one keeps the sign-in's (not verified again: its
    /// `at_hash` names the old access token, and it expires); one whose keys
    /// cannot be fetched, or whose key the set lacks, or that this machine's
    /// clock calls expired or not yet valid, is kept aside, the sign-in's
    /// identity and ID token kept; one that names another user is refused.
    @Test func aRefreshKeepsWhoSignedIn() async throws {
        try await withServer { server in
            let (provider, client) = try await publishingProvider(at: server)
            let (_, pending) = try await client.startAuthorization(
                redirectURI: URL(string: "http://127.0.0.1:4321/callback"), scopes: ["openid"])
            func token(accessToken: String, nonce: String?, subject: String = "248289761001") throws -> String {
                var claims = IDTokenVerifierTests.claims
                claims["iss"] = server.baseURL
                claims["sub"] = subject
                claims["nonce"] = nonce
                claims["exp"] = Int(Date().timeIntervalSince1970) + 600
                claims["iat"] = Int(Date().timeIntervalSince1970)
                claims["at_hash"] = IDTokenVerifierTests.b64(
                    Array(SHA256.hash(data: Data(accessToken.utf8))).prefix(16))
                return try provider.token(claims)
            }
            let signInToken = try token(accessToken: "at-1", nonce: pending.nonce)
            server.route("POST", "/token") { _ in
                .json(
                    #"{"access_token":"at-1","token_type":"Bearer","expires_in":3600,"refresh_token":"rt-1","id_token":"\#(signInToken)"}"#
                )
            }
            let signedIn = try await client.exchange(code: "c-1", pending: pending)
            let identity = try #require(signedIn.identity)

            // No ID token in the answer.
            server.route("POST", "/token") { _ in
                .json(#"{"access_token":"at-2","token_type":"Bearer","expires_in":3600,"refresh_token":"rt-2"}"#)
            }
            let second = try await client.refresh(signedIn)
            #expect(second.accessToken == "at-2" && second.refreshToken == "rt-2" && second.identity == identity)

            // An `id_token` that is no string: the sign-in's stays with its
            // identity (it took its place, and a logout then sent no hint).
            server.route("POST", "/token") { _ in
                .json(#"{"access_token":"at-2","token_type":"Bearer","refresh_token":"rt-2","id_token":123}"#)
            }
            let notAString = try await client.refresh(signedIn)
            #expect(notAString.identity == identity && notAString.rawFields["id_token"] == .string(signInToken))

            // A new ID token, and the key set cannot be fetched.
            let thirdToken = try token(accessToken: "at-3", nonce: nil)
            server.route("POST", "/token") { _ in
                .json(
                    #"{"access_token":"at-3","token_type":"Bearer","refresh_token":"rt-3","id_token":"\#(thirdToken)"}"#
                )
            }
            await KeySetCache.shared.removeAll(under: server.baseURL + "/")
            server.route("GET", "/jwks") { _ in .json("{}", status: 503) }
            let third = try await client.refresh(second)
            #expect(third.refreshToken == "rt-3" && third.identity == identity)
            #expect(third.rawFields["id_token"] == .string(signInToken))

            // A new ID token naming someone else, checked: refused.
            let jwks = String(
                decoding: try JSONSerialization.data(withJSONObject: ["keys": provider.publicKeys]), as: UTF8.self)
            await KeySetCache.shared.removeAll(under: server.baseURL + "/")
            server.route("GET", "/jwks") { _ in .json(jwks) }
            let otherToken = try token(accessToken: "at-4", nonce: nil, subject: "someone-else")
            server.route("POST", "/token") { _ in
                .json(
                    #"{"access_token":"at-4","token_type":"Bearer","refresh_token":"rt-4","id_token":"\#(otherToken)"}"#
                )
            }
            await #expect(throws: AuthKitError.idTokenRejected(providerID: "op", reason: .identityChanged("sub"))) {
                _ = try await client.refresh(third)
            }

            // A new ID token under a key the set just fetched lacks (a rotation
            // seen by the token endpoint first; no refetch within 30 s): it
            // cannot be checked yet, and the rotated refresh token was lost.
            var claims = IDTokenVerifierTests.claims
            claims["iss"] = server.baseURL
            claims["exp"] = Int(Date().timeIntervalSince1970) + 600
            claims["iat"] = Int(Date().timeIntervalSince1970)
            let rotatedKey = try provider.token(claims, header: ["alg": "ES256", "kid": "ec-2"])
            server.route("POST", "/token") { _ in
                .json(
                    #"{"access_token":"at-5","token_type":"Bearer","refresh_token":"rt-5","id_token":"\#(rotatedKey)"}"#
                )
            }
            let fifth = try await client.refresh(third)
            #expect(fifth.refreshToken == "rt-5" && fifth.identity == identity)
            #expect(fifth.rawFields["id_token"] == .string(signInToken))

            // A new ID token this machine's clock calls not yet valid (the
            // clock minutes slow) or expired (minutes fast): the provider's
            // answer is right, and refusing it lost the rotated refresh token.
            // But not one naming another user: its signature verified, it is
            // checked as of a time it was valid, and refused (Core §12.2).
            // Nor one whose `nbf` comes long after its `iat`, or whose `exp`
            // comes before it (no moment at which it was valid): checked as
            // of its `iat` or just before its `exp`, the clock refused it
            // again there, and its `sub` was never compared.
            let now = Int(Date().timeIntervalSince1970)
            let lifetimes: [(name: String, iat: Int, nbf: Int?, exp: Int)] = [
                ("issued in the future", now + 300, nil, now + 900), ("expired", now - 1200, nil, now - 600),
                ("valid only from an nbf after its iat", now + 3600, now + 7200, now + 9000),
                ("expired before it was issued", now, nil, 1000),
            ]
            for (name, iat, nbf, exp) in lifetimes {
                for subject in ["248289761001", "someone-else"] {
                    var claims = IDTokenVerifierTests.claims
                    claims["iss"] = server.baseURL
                    claims["sub"] = subject
                    claims["nonce"] = nil
                    claims["iat"] = iat
                    claims["nbf"] = nbf
                    claims["exp"] = exp
                    let skewed = try provider.token(claims)
                    server.route("POST", "/token") { _ in
                        .json(
                            #"{"access_token":"at-6","token_type":"Bearer","refresh_token":"rt-6","id_token":"\#(skewed)"}"#
                        )
                    }
                    guard subject == "someone-else" else {
                        let sixth = try await client.refresh(fifth)
                        #expect(sixth.refreshToken == "rt-6" && sixth.identity == identity, "\(name)")
                        #expect(sixth.rawFields["id_token"] == .string(signInToken), "\(name)")
                        continue
                    }
                    await #expect(
                        throws: AuthKitError.idTokenRejected(providerID: "op", reason: .identityChanged("sub")),
                        "\(name)"
                    ) { _ = try await client.refresh(fifth) }
                }
            }
        }
    }

    /// An `id_token` in the answer to a grant no user signs in with: the
    /// client credentials grant's is not kept (it was stored unverified, for
    /// a caller to read a user from); token exchange's (OpenID Connect Native
    /// SSO answers with one) is verified as the device grant's is: one
    /// signed with a key the provider does not publish stores nothing, a
    /// good one is the credential's identity.
    @Test func anIDTokenBesideAGrantWithoutASignIn() async throws {
        try await withServer { server in
            let provider = try await publishingKeys(at: server)
            let client = try OAuth2Client(
                descriptor: descriptor(server),
                settings: ClientSettings(clientID: IDTokenVerifierTests.clientID, clientSecret: "client-secret"))
            let forged = try Provider().token(IDTokenVerifierTests.claims(issuedNowBy: server.baseURL, nonce: nil))
            server.route("POST", "/token") { _ in
                .json(#"{"access_token":"at-1","token_type":"Bearer","expires_in":3600,"id_token":"\#(forged)"}"#)
            }
            let machine = try await client.clientCredentials(scopes: [])
            #expect(machine.accessToken == "at-1" && machine.rawFields["id_token"] == nil && machine.identity == nil)
            await #expect(throws: AuthKitError.idTokenRejected(providerID: "op", reason: .signatureInvalid)) {
                _ = try await client.exchangeToken("subject-token")
            }
            let good = try provider.token(IDTokenVerifierTests.claims(issuedNowBy: server.baseURL, nonce: nil))
            server.route("POST", "/token") { _ in
                .json(#"{"access_token":"at-2","token_type":"Bearer","expires_in":3600,"id_token":"\#(good)"}"#)
            }
            let exchanged = try await client.exchangeToken("subject-token")
            #expect(exchanged.identity?.subject == "248289761001" && exchanged.identity?.issuer == server.baseURL)
        }
    }

    @Test func aTokenThatFailsAnyCheckIsRefusedByThatCheck() async throws {
        try await withServer { server in
            let (provider, client) = try await publishingProvider(at: server)
            let now = Int(Date().timeIntervalSince1970)
            // Each token, made for the sign-in's nonce, fails one check alone.
            let answers: [(token: (String?) throws -> String, problem: AuthKitError.IDTokenProblem)] = [
                // A replayed token: another sign-in's nonce.
                (
                    { _ in
                        try provider.token([
                            "iss": server.baseURL, "sub": "u", "aud": IDTokenVerifierTests.clientID,
                            "exp": now + 600, "iat": now, "nonce": "another",
                        ])
                    }, .nonceMismatch
                ),
                (
                    { nonce in
                        try provider.token([
                            "iss": server.baseURL, "sub": "u", "aud": IDTokenVerifierTests.clientID,
                            "exp": now - 3600, "iat": now - 7200, "nonce": nonce as Any,
                        ])
                    },
                    .expired(at: Date(timeIntervalSince1970: TimeInterval(now - 3600)))
                ),
                (
                    { _ in try provider.token(["iss": server.baseURL, "sub": "u"], header: ["alg": "none"]) },
                    .algorithmNotAllowed("none")
                ),
            ]
            for (makeToken, problem) in answers {
                let (_, pending) = try await client.startAuthorization(
                    redirectURI: URL(string: "http://127.0.0.1:4321/callback"), scopes: ["openid"])
                let token = try makeToken(pending.nonce)
                server.route("POST", "/token") { _ in
                    .json(#"{"access_token":"at-1","token_type":"Bearer","id_token":"\#(token)"}"#)
                }
                await #expect {
                    try await client.exchange(code: "c-1", pending: pending)
                } throws: { error in
                    error as? AuthKitError == .idTokenRejected(providerID: "op", reason: problem)
                }
            }
            // No id_token at all, though openid was asked for.
            server.route("POST", "/token") { _ in .json(#"{"access_token":"at-1","token_type":"Bearer"}"#) }
            let (_, pending) = try await client.startAuthorization(
                redirectURI: URL(string: "http://127.0.0.1:4321/callback"), scopes: ["openid"])
            await #expect(throws: AuthKitError.idTokenRejected(providerID: "op", reason: .missing)) {
                try await client.exchange(code: "c-1", pending: pending)
            }
        }
    }

    @Test func aHostileKeySetIsRefused() async throws {
        try await withServer { server in
            let provider = try Provider()
            let now = Int(Date().timeIntervalSince1970)
            let cases: [(String, StubResponse)] = [
                ("/redirected", .redirect(302, to: "https://attacker.example/jwks")),
                ("/html", .text("<html>keys</html>", contentType: "application/json", status: 200)),
                ("/huge", .streaming(.flood)),
                ("/missing", .json("{}", status: 404)),
            ]
            for (path, response) in cases {
                await KeySetCache.shared.removeAll(under: server.baseURL + "/")
                server.route("GET", path) { _ in response }
                let client = try OAuth2Client(
                    descriptor: descriptor(server, keys: path),
                    settings: ClientSettings(clientID: IDTokenVerifierTests.clientID))
                let (_, pending) = try await client.startAuthorization(
                    redirectURI: URL(string: "http://127.0.0.1:4321/callback"), scopes: ["openid"])
                let token = try provider.token([
                    "iss": server.baseURL, "sub": "u", "aud": IDTokenVerifierTests.clientID,
                    "exp": now + 600, "iat": now, "nonce": pending.nonce ?? "",
                ])
                server.route("POST", "/token") { _ in
                    .json(#"{"access_token":"at-1","token_type":"Bearer","id_token":"\#(token)"}"#)
                }
                await #expect("\(path)") {
                    try await client.exchange(code: "c-1", pending: pending)
                } throws: { error in
                    guard case .idTokenRejected(_, .keySetUnusable(let detail))? = error.authKitReason else {
                        return false
                    }
                    return !detail.contains("at-1")
                }
            }
            #expect(server.requests(to: "/redirected").count >= 1)
        }
    }

    /// A key set sent a byte at a time is cut off by the token endpoint's
    /// limits (a byte a second, a deadline), not waited for: the sign-in
    /// fails as a network failure, with nothing stored.
    @Test func aKeySetThatDripsIsCutOff() async throws {
        try await withServer { server in
            await KeySetCache.shared.removeAll(under: server.baseURL + "/")
            let provider = try Provider()
            server.route("GET", "/slow") { _ in .streaming(.drip(every: .milliseconds(1500))) }
            let client = try OAuth2Client(
                descriptor: descriptor(server, keys: "/slow"),
                settings: ClientSettings(clientID: IDTokenVerifierTests.clientID))
            let (_, pending) = try await client.startAuthorization(
                redirectURI: URL(string: "http://127.0.0.1:4321/callback"), scopes: ["openid"])
            let now = Int(Date().timeIntervalSince1970)
            let token = try provider.token([
                "iss": server.baseURL, "sub": "u", "aud": IDTokenVerifierTests.clientID, "exp": now + 600, "iat": now,
                "nonce": pending.nonce ?? "",
            ])
            server.route("POST", "/token") { _ in
                .json(#"{"access_token":"at-1","token_type":"Bearer","id_token":"\#(token)"}"#)
            }
            let started = Date()
            await #expect {
                try await client.exchange(code: "c-1", pending: pending)
            } throws: { error in
                guard case .network(_, .timedOut)? = error.authKitReason else { return false }
                return true
            }
            #expect(Date().timeIntervalSince(started) < 45)
        }
    }

    @Test func withoutOpenIDInTheScopesNoNonceIsSentAndNoIdentityKept() async throws {
        try await withServer { server in
            let client = try OAuth2Client(
                descriptor: descriptor(server), settings: ClientSettings(clientID: IDTokenVerifierTests.clientID))
            let (url, pending) = try await client.startAuthorization(
                redirectURI: URL(string: "http://127.0.0.1:4321/callback"), scopes: ["email"])
            #expect(pending.nonce == nil && !url.absoluteString.contains("nonce="))
            server.route("POST", "/token") { _ in .json(#"{"access_token":"at-1","token_type":"Bearer"}"#) }
            let credential = try await client.exchange(code: "c-1", pending: pending)
            #expect(credential.identity == nil)
        }
    }

    /// `max_age` goes out with the request and is held to on the way back.
    @Test func maxAgeIsSentAndItsAuthTimeChecked() async throws {
        try await withServer { server in
            let (provider, client) = try await publishingProvider(at: server)
            await #expect {
                try await client.startAuthorization(scopes: ["openid"], additionalParameters: ["max_age": "soon"])
            } throws: { error in
                guard case .misuse(.invalidParameter(name: "max_age", _))? = error.authKitReason else {
                    return false
                }
                return true
            }
            let (url, pending) = try await client.startAuthorization(
                redirectURI: URL(string: "http://127.0.0.1:4321/callback"), scopes: ["openid"],
                additionalParameters: ["max_age": "60"])
            #expect(pending.maxAge == 60 && url.absoluteString.contains("max_age=60"))
            let now = Int(Date().timeIntervalSince1970)
            let token = try provider.token([
                "iss": server.baseURL, "sub": "u", "aud": IDTokenVerifierTests.clientID, "exp": now + 600,
                "iat": now, "nonce": pending.nonce ?? "", "auth_time": now - 3600,
            ])
            server.route("POST", "/token") { _ in
                .json(#"{"access_token":"at-1","token_type":"Bearer","id_token":"\#(token)"}"#)
            }
            await #expect {
                try await client.exchange(code: "c-1", pending: pending)
            } throws: { error in
                guard case .idTokenRejected(_, .authenticationTooOld(_, 60))? = error.authKitReason else {
                    return false
                }
                return true
            }
        }
    }

    /// A follow-up call's answer (a descriptor's `followUp`) that names an ID
    /// token of its own does not replace the one verified: it was kept
    /// unverified, and later sent as `id_token_hint` and compared with at
    /// each refresh.
    @Test func aFollowUpDoesNotReplaceTheVerifiedIDToken() async throws {
        try await withServer { server in
            let provider = try await publishingKeys(at: server)
            server.route("GET", "/exchange") { _ in
                .json(#"{"access_token":"at-2","token_type":"Bearer","id_token":"unverified.token.here"}"#)
            }
            let client = try OAuth2Client(
                descriptor: testDescriptor(
                    id: "op", protocol: .oauth2, authorization: .init(url: "\(server.baseURL)/authorize"),
                    token: .init(url: "\(server.baseURL)/token"), issuer: .init(identifier: server.baseURL),
                    followUp: .init(url: "\(server.baseURL)/exchange", method: "GET"),
                    openid: .init(keys: "\(server.baseURL)/jwks", signingAlgorithms: ["ES256"])),
                settings: ClientSettings(clientID: IDTokenVerifierTests.clientID))
            let (_, pending) = try await client.startAuthorization(
                redirectURI: URL(string: "http://127.0.0.1:4321/callback"), scopes: ["openid"])
            let token = try provider.token(
                IDTokenVerifierTests.claims(issuedNowBy: server.baseURL, nonce: pending.nonce))
            server.route("POST", "/token") { _ in
                .json(#"{"access_token":"at-1","token_type":"Bearer","id_token":"\#(token)"}"#)
            }
            let credential = try await client.exchange(code: "c-1", pending: pending)
            #expect(credential.accessToken == "at-2" && credential.identity != nil)
            #expect(credential.rawFields["id_token"] == .string(token))
        }
    }

    /// A descriptor's own `max_age` was sent and never held to (`auth_time`
    /// unchecked); a caller's beside it sent the parameter twice.
    @Test func aDescriptorsMaxAgeIsHeldToAndACallersReplacesIt() async throws {
        try await withServer { server in
            await KeySetCache.shared.removeAll(under: server.baseURL + "/")
            var file = DescriptorFile.Authorization(url: "\(server.baseURL)/authorize")
            file.parameters = ["max_age": "60"]
            let client = try OAuth2Client(
                descriptor: testDescriptor(
                    id: "op", protocol: .oauth2, authorization: file, token: .init(url: "\(server.baseURL)/token"),
                    issuer: .init(identifier: server.baseURL),
                    openid: .init(keys: "\(server.baseURL)/jwks", signingAlgorithms: ["ES256"])),
                settings: ClientSettings(clientID: IDTokenVerifierTests.clientID))
            let redirect = URL(string: "http://127.0.0.1:4321/callback")
            let (url, pending) = try await client.startAuthorization(redirectURI: redirect, scopes: ["openid"])
            #expect(pending.maxAge == 60 && url.absoluteString.contains("max_age=60"))
            let (replaced, again) = try await client.startAuthorization(
                redirectURI: redirect, scopes: ["openid"], additionalParameters: ["max_age": "120"])
            #expect(again.maxAge == 120)
            let sent = URLComponents(url: replaced, resolvingAgainstBaseURL: false)?.queryItems?.filter {
                $0.name == "max_age"
            }
            #expect(sent?.map(\.value) == ["120"])
        }
    }

    /// The device grant sends no nonce, but an ID token it brings is verified
    /// like any other, and a wrong one stores nothing.
    @Test func theDeviceGrantsIDTokenIsVerified() async throws {
        try await withServer { server in
            let provider = try await publishingKeys(at: server)
            server.route("POST", "/device") { _ in
                .json(
                    #"{"device_code":"dc-1","user_code":"ABCD-EFGH","verification_uri":"\#(server.baseURL)/activate","expires_in":600,"interval":1}"#
                )
            }
            let descriptor = try ProviderDescriptor(
                json: Data(
                    """
                    {"id": "op", "name": "OP", "protocol": "oauth2", "token": {"url": "\(server.baseURL)/token"},
                     "device": {"url": "\(server.baseURL)/device"}, "issuer": {"identifier": "\(server.baseURL)"},
                     "openid": {"keys": "\(server.baseURL)/jwks", "signingAlgorithms": ["ES256"]}}
                    """.utf8))
            var client = try OAuth2Client(
                descriptor: descriptor, settings: ClientSettings(clientID: IDTokenVerifierTests.clientID))
            client.deviceSleep = { _ in }
            let now = Int(Date().timeIntervalSince1970)
            for (audience, accepted) in [(IDTokenVerifierTests.clientID, true), ("someone-else", false)] {
                let token = try provider.token([
                    "iss": server.baseURL, "sub": "device-user", "aud": audience, "exp": now + 600, "iat": now,
                ])
                server.route("POST", "/token") { _ in
                    .json(#"{"access_token":"at-1","token_type":"Bearer","id_token":"\#(token)"}"#)
                }
                let authorization = try await client.startDeviceAuthorization(scopes: ["openid"])
                if accepted {
                    let credential = try await client.pollDeviceAuthorization(authorization)
                    #expect(credential.identity?.subject == "device-user")
                } else {
                    await #expect {
                        try await client.pollDeviceAuthorization(authorization)
                    } throws: { error in
                        guard case .idTokenRejected(_, .audienceMismatch)? = error.authKitReason else {
                            return false
                        }
                        return true
                    }
                }
            }

            // A device answer without an ID token leaves no identity; a
            // refresh's ID token is then verified all the same (it was kept
            // unchecked, later sent as id_token_hint): one signed by another
            // key is refused, a good one becomes the identity.
            server.route("POST", "/token") { _ in
                .json(#"{"access_token":"at-2","token_type":"Bearer","refresh_token":"rt-2"}"#)
            }
            let signedIn = try await client.pollDeviceAuthorization(
                try await client.startDeviceAuthorization(scopes: ["openid"]))
            #expect(signedIn.identity == nil)
            let claims: [String: Any] = [
                "iss": server.baseURL, "sub": "device-user", "aud": IDTokenVerifierTests.clientID, "exp": now + 600,
                "iat": now,
            ]
            let forged = try Provider().token(claims.merging(["sub": "mallory"]) { $1 })
            server.route("POST", "/token") { _ in
                .json(#"{"access_token":"at-3","token_type":"Bearer","refresh_token":"rt-3","id_token":"\#(forged)"}"#)
            }
            await #expect {
                try await client.refresh(signedIn)
            } throws: { error in
                guard case .idTokenRejected(_, .signatureInvalid)? = error.authKitReason else { return false }
                return true
            }
            let genuine = try provider.token(claims)
            server.route("POST", "/token") { _ in
                .json(#"{"access_token":"at-4","token_type":"Bearer","refresh_token":"rt-4","id_token":"\#(genuine)"}"#)
            }
            #expect(try await client.refresh(signedIn).identity?.subject == "device-user")
        }
    }
}
