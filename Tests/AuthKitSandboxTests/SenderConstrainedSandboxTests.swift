import AuthKit
import AuthKitSandbox
import AuthKitTestSupport
import Crypto
import CryptoExtras
import Foundation
import HTTPTypes
import Testing

/// The sandbox as a strict server of RFC 9449 (DPoP), RFC 9126 (PAR), RFC
/// 7523 (client assertions), RFC 6749 §4.4 and RFC 8693: AuthKit's engine
/// signs in to it, and each test would fail were the sandbox lenient.
@Suite struct SenderConstrainedSandboxTests {
    /// A provider that takes pushed requests only and binds tokens with DPoP.
    func fapiLike() throws -> ProviderDescriptor {
        try ProviderDescriptor(
            json: Data(
                """
                {"id": "fapi", "protocol": "oauth2", "dpop": "on",
                 "authorization": {"url": "https://as.fapi.example/authorize", "par": "https://as.fapi.example/par"},
                 "token": {"url": "https://as.fapi.example/token"}, "scopes": {"default": ["accounts"]},
                 "whoAmI": {"url": "https://api.fapi.example/me", "subject": "id", "name": "login"}}
                """.utf8))
    }

    /// A public client's refresh token is bound to its key (RFC 9449 §5).
    @Test func aPushedBoundSignInIsUsedAndRefreshedWithItsKey() async throws {
        try await Sandbox.with(emulating: try fapiLike(), options: publicClient(SandboxOptions(deterministic: true))) {
            sandbox in
            let client = try OAuth2Client(descriptor: sandbox.descriptor, settings: sandbox.clientSettings)
            let credential = try await client.authorize(using: sandbox.userAgent(account: "dana"))
            #expect(credential.tokenType == "DPoP" && credential.proofKey != nil)
            let steps = sandbox.events.map(\.step)
            #expect(steps.contains("par"))
            // The first token request lacked the nonce: refused once, then answered.
            #expect(sandbox.events.filter { $0.step == "token" }.map(\.status) == [400, 200])
            let (status, me) = try await getJSON(sandbox.whoamiURL, with: client, credential: credential)
            #expect(status == 200 && me["account"] as? String == "dana")
            // The descriptor's "who am I" call proves the key too (and answers the resource's nonce).
            let who = try await client.whoAmI(credential)
            #expect(who.subject == "sandbox-user-dana" && who.name == "dana")
            // The same token as a Bearer token is refused (RFC 9449 §7.2).
            let bearer = try await raw(
                "GET", sandbox.whoamiURL, headers: ["Authorization": "Bearer \(credential.accessToken)"])
            #expect(bearer.status == 401)
            // A refresh proves the same key; with another key it is refused.
            let refreshed = try await client.refresh(credential)
            #expect(refreshed.proofKey == credential.proofKey && refreshed.isDPoP)
            var stolen = refreshed
            stolen.proofKey = ProofKey()
            do {
                _ = try await client.refresh(stolen)
                Issue.record("a refresh proving another key was answered")
            } catch {
                let code: String? =
                    switch error.authKitReason {
                    case .providerError(_, let response)?: response.code
                    case .signInRequired(_, .refreshRefused(let response))?: response.code
                    default: nil
                    }
                #expect(code == "invalid_grant", "\(error)")
            }
            #expect(sandbox.events.last?.summary.contains("bound to another DPoP key") == true)
            // The refusal spent nothing: the holder of the key still refreshes.
            let again = try await client.refresh(refreshed)
            #expect(again.isDPoP && again.proofKey == credential.proofKey)
        }
    }

    /// A confidential client's refresh token is not bound to the proof's key
    /// (RFC 9449 §5: its authentication constrains it): a refresh proving a
    /// new key is answered, and the new token is bound to that key. The
    /// sandbox bound every refresh token, so a client that changed keys
    /// was refused where a conforming server answers.
    @Test func aConfidentialClientsRefreshTakesANewKey() async throws {
        try await Sandbox.with(emulating: try fapiLike(), options: SandboxOptions(deterministic: true)) { sandbox in
            #expect(sandbox.clientSettings.clientSecret != nil)
            let client = try OAuth2Client(descriptor: sandbox.descriptor, settings: sandbox.clientSettings)
            var credential = try await client.authorize(using: sandbox.userAgent(account: "erin"))
            let newKey = ProofKey()
            credential.proofKey = newKey
            let refreshed = try await client.refresh(credential)
            #expect(refreshed.isDPoP && refreshed.proofKey == newKey)
            let (status, me) = try await getJSON(sandbox.whoamiURL, with: client, credential: refreshed)
            #expect(status == 200 && me["account"] as? String == "erin")
        }
    }

    @Test func anAuthorizationRequestWithoutAPushedOneIsRefused() async throws {
        try await Sandbox.with(emulating: try fapiLike()) { sandbox in
            let authorize = try #require(URL(string: sandbox.baseURL.absoluteString + "/as.fapi.example/authorize"))
            let answer = try await raw(
                "GET",
                try #require(
                    URL(string: authorize.absoluteString + "?response_type=code&client_id=sandbox-client&state=s")))
            #expect(answer.status == 400 && answer.body.contains("request_uri is missing"))
        }
    }

    @Test func aProofIsGoodOnce() async throws {
        try await Sandbox.with(emulating: try fapiLike(), options: SandboxOptions(approves: true)) { sandbox in
            let client = try OAuth2Client(descriptor: sandbox.descriptor, settings: sandbox.clientSettings)
            let credential = try await client.authorize(using: sandbox.userAgent())
            var request = HTTPRequest(method: .get, url: sandbox.whoamiURL)
            request = try await client.authorize(request, with: credential)
            let headers = [
                "Authorization": request.headerFields[.authorization]!,
                "DPoP": request.headerFields[DPoPProof.headerName]!,
            ]
            // The resource's own nonce first, then the proof with it works once.
            let first = try await raw("GET", sandbox.whoamiURL, headers: headers)
            #expect(first.status == 401 && first.body.contains("use_dpop_nonce"))
            #expect(try await getJSON(sandbox.whoamiURL, with: client, credential: credential).0 == 200)
            let proofHeaders = ["Authorization": "DPoP \(credential.accessToken)"]
            var again = HTTPRequest(method: .get, url: sandbox.whoamiURL)
            again = try await client.authorize(again, with: credential)
            let proof = again.headerFields[DPoPProof.headerName]!
            let ok = try await raw("GET", sandbox.whoamiURL, headers: proofHeaders.merging(["DPoP": proof]) { $1 })
            let replayed = try await raw(
                "GET", sandbox.whoamiURL, headers: proofHeaders.merging(["DPoP": proof]) { $1 })
            #expect(ok.status == 200 && replayed.status == 401 && replayed.body.contains("used before"))
        }
    }

    /// A new P-256 key in a file of its own, mode 0600, as a client keeps it.
    static func clientKeyFile() throws -> (key: P256.Signing.PrivateKey, path: String) {
        let key = P256.Signing.PrivateKey()
        let directory = TemporaryDirectory.url("authkit-sandbox-key")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent("client.pem").path
        _ = FileManager.default.createFile(
            atPath: path, contents: Data(key.pemRepresentation.utf8), attributes: [.posixPermissions: 0o600])
        return (key, path)
    }

    /// An RSA key whose JWK says PS256 (FAPI 2.0 allows no RS256) signs
    /// PS256 assertions, which the sandbox takes: it refused them (only
    /// HS256, ES256, RS256), so `sandbox serve --client-key` could not stand
    /// in for such a provider.
    @Test func aPS256AssertionIsTaken() async throws {
        let key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let members = try #require(RSAJWK.members(pkcs1: [UInt8](key.derRepresentation), alg: "PS256"))
        let directory = TemporaryDirectory.url("authkit-sandbox-ps256")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("client.json").path
        let json = try JSONSerialization.data(withJSONObject: members)
        _ = FileManager.default.createFile(atPath: path, contents: json, attributes: [.posixPermissions: 0o600])
        var options = SandboxOptions(deterministic: true)
        options.clientKey = key.publicKey.pemRepresentation
        try await Sandbox.with(emulating: try bundled("github"), options: options) { sandbox in
            var settings = sandbox.clientSettings
            settings.clientSecret = nil
            settings.privateKeyFile = path
            let client = try OAuth2Client(descriptor: sandbox.descriptor, settings: settings)
            let credential = try await client.clientCredentials(scopes: ["repo"])
            #expect(!credential.accessToken.isEmpty)
        }
    }

    /// Qiita's token endpoint takes JSON, so a client with a key puts its
    /// assertion in the JSON object: the sandbox read assertions from form
    /// bodies only, never checked this one's signature, and refused the
    /// exchange as "client_assertion is missing" after the user consented.
    @Test func anAssertionInAJSONBodyIsChecked() async throws {
        let (key, path) = try Self.clientKeyFile()
        defer { try? FileManager.default.removeItem(at: URL(fileURLWithPath: path).deletingLastPathComponent()) }
        var options = SandboxOptions(deterministic: true)
        options.clientKey = key.publicKey.pemRepresentation
        try await Sandbox.with(emulating: try bundled("qiita"), options: options) { sandbox in
            var settings = sandbox.clientSettings
            settings.clientSecret = nil
            settings.privateKeyFile = path
            let client = try OAuth2Client(descriptor: sandbox.descriptor, settings: settings)
            let credential = try await client.authorize(using: sandbox.userAgent())
            #expect(!credential.accessToken.isEmpty)
            // Another key's assertion, in the same JSON body, is refused by its signature.
            let other = URL(fileURLWithPath: path).deletingLastPathComponent().appendingPathComponent("other.pem").path
            _ = FileManager.default.createFile(
                atPath: other, contents: Data(P256.Signing.PrivateKey().pemRepresentation.utf8),
                attributes: [.posixPermissions: 0o600])
            settings.privateKeyFile = other
            let impostor = try OAuth2Client(descriptor: sandbox.descriptor, settings: settings)
            await #expect {
                _ = try await impostor.authorize(using: sandbox.userAgent())
            } throws: { error in
                guard case .providerError(_, let response)? = error.authKitReason else { return false }
                return response.code == "invalid_client" && response.description?.contains("missing") != true
            }
        }
    }

    /// The token an introspection request names is refused in a POST's
    /// URL query, as the table says of every secret there: it was answered
    /// `active`, so a client that put it there was never told.
    @Test func aTokenInAnIntrospectionRequestsURLIsRefused() async throws {
        var introspecting = DescriptorFile(try bundled("github"))
        introspecting.introspection = "https://github.com/login/oauth/introspect"
        let descriptor = try ProviderDescriptor(json: try JSONEncoder().encode(introspecting))
        try await Sandbox.with(emulating: descriptor, options: SandboxOptions(deterministic: true)) { sandbox in
            let client = try OAuth2Client(descriptor: sandbox.descriptor, settings: sandbox.clientSettings)
            let credential = try await client.authorize(using: sandbox.userAgent())
            let endpoint = try #require(sandbox.descriptor.introspectionURL.flatMap(URL.init(string:)))
            let port = try #require(endpoint.port)
            let body =
                "client_id=\(sandbox.clientSettings.clientID ?? "")&client_secret=\(sandbox.clientSettings.clientSecret ?? "")"
            let answer = try await RawHTTP.send(
                Data(
                    """
                    POST \(endpoint.path)?token=\(credential.accessToken) HTTP/1.1\r
                    Host: 127.0.0.1:\(port)\r
                    Content-Type: application/x-www-form-urlencoded\r
                    Content-Length: \(body.utf8.count)\r
                    Connection: close\r
                    \r
                    \(body)
                    """.utf8),
                port: port)
            #expect(answer.status == 400 && answer.body.contains("invalid_request"), "\(answer.body)")
        }
    }

    @Test func clientCredentialsWithAKeyAndATokenExchange() async throws {
        let (key, path) = try Self.clientKeyFile()
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent()
        var options = SandboxOptions(deterministic: true)
        options.clientKey = key.publicKey.pemRepresentation
        let github = try bundled("github")
        var introspecting = DescriptorFile(github)
        introspecting.introspection = "https://github.com/login/oauth/introspect"
        let descriptor = try ProviderDescriptor(json: try JSONEncoder().encode(introspecting))
        try await Sandbox.with(emulating: descriptor, options: options) { sandbox in
            var settings = sandbox.clientSettings
            settings.clientSecret = nil
            settings.privateKeyFile = path
            let client = try OAuth2Client(descriptor: sandbox.descriptor, settings: settings)
            let credential = try await client.clientCredentials(scopes: ["repo"])
            let (status, me) = try await getJSON(sandbox.whoamiURL, with: client, credential: credential)
            #expect(status == 200 && me["account"] as? String == "client:sandbox-client")
            // Renewed by asking again, with a fresh assertion (a jti is good once).
            let renewed = try await client.refresh(credential)
            #expect(renewed.accessToken != credential.accessToken)
            // Traded for a token with fewer scopes; more is refused.
            let narrowed = try await client.exchangeToken(renewed.accessToken, scopes: ["repo"])
            #expect(narrowed.scopes == ["repo"] && narrowed.rawFields["issued_token_type"] != nil)
            // Introspection: the renewed token is live, the first one too (no rotation), an unknown one is not.
            let live = try await client.introspect(narrowed.accessToken)
            // sub: the client itself (RFC 9068 §2.2), as the credential's identity would say.
            #expect(live.isActive && live.subject == "sandbox-client" && live.scopes == ["repo"])
            #expect(try await client.introspect("no-such-token").isActive == false)
            await #expect(throws: AuthKitError.self) {
                _ = try await client.exchangeToken(renewed.accessToken, scopes: ["admin:org"])
            }
            // Another key is refused by the sandbox.
            let other = directory.appendingPathComponent("other.pem").path
            _ = FileManager.default.createFile(
                atPath: other, contents: Data(P256.Signing.PrivateKey().pemRepresentation.utf8),
                attributes: [.posixPermissions: 0o600])
            settings.privateKeyFile = other
            let impostor = try OAuth2Client(descriptor: sandbox.descriptor, settings: settings)
            await #expect {
                _ = try await impostor.clientCredentials()
            } throws: { error in
                guard case .providerError(_, let response)? = error.authKitReason else { return false }
                return response.code == "invalid_client"
            }
        }
    }

    /// A provider that authenticates its clients with client_secret_jwt (HS256, RFC 7523 §2.2).
    func hs256Provider() throws -> ProviderDescriptor {
        try ProviderDescriptor(
            json: Data(
                """
                {"id": "hs", "protocol": "oauth2",
                 "authorization": {"url": "https://as.hs.example/authorize"},
                 "token": {"url": "https://as.hs.example/token", "clientAuthentication": "client_secret_jwt"},
                 "scopes": {"default": ["read"], "known": ["read", "write"]}}
                """.utf8))
    }

    /// `client_assertion=<an HS256 JWS of the sandbox's client, MACed with secret>` for `tokenURL`.
    func hs256Assertion(secret: String, tokenURL: URL) throws -> String {
        let header = Base64URL.encode(Data(#"{"alg":"HS256","typ":"JWT"}"#.utf8))
        let claims = try JSONSerialization.data(withJSONObject: [
            "iss": "sandbox-client", "sub": "sandbox-client", "aud": tokenURL.absoluteString,
            "jti": UUID().uuidString, "exp": Int(Date().timeIntervalSince1970) + 60,
        ])
        let input = header + "." + Base64URL.encode(claims)
        let mac = HMAC<SHA256>.authenticationCode(for: Data(input.utf8), using: SymmetricKey(data: Data(secret.utf8)))
        return "grant_type=client_credentials&client_id=sandbox-client"
            + "&client_assertion_type=urn%3Aietf%3Aparams%3Aoauth%3Aclient-assertion-type%3Ajwt-bearer"
            + "&client_assertion=" + input + "." + Base64URL.encode(Data(mac))
    }

    /// client_secret_jwt both ways. With the defaults, a descriptor that asks
    /// for it gets a secret long enough for HS256 (RFC 7518 §3.2: 256 bits),
    /// and AuthKit signs in and gets client credentials with it. A sandbox
    /// given a shorter secret answers an HS256 assertion `invalid_client`
    /// (one request whose header said HS256 stopped a debug build: jwt-kit
    /// asserts on a short key) and keeps serving; a descriptor that does not
    /// say client_secret_jwt takes no HS256 assertion (RFC 6749 §2.3).
    @Test func clientSecretJWTNeedsASecretLongEnoughForHS256() async throws {
        let form = ["Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json"]
        try await Sandbox.with(emulating: try hs256Provider(), options: SandboxOptions(approves: true)) { sandbox in
            #expect((sandbox.options.clientSecret?.utf8.count ?? 0) >= 32)
            #expect(sandbox.clientSettings.clientSecret == sandbox.options.clientSecret)
            let client = try OAuth2Client(descriptor: sandbox.descriptor, settings: sandbox.clientSettings)
            #expect(!(try await client.clientCredentials(scopes: ["write"]).accessToken.isEmpty))
            #expect(!(try await client.authorize(using: sandbox.userAgent()).accessToken.isEmpty))
            let token = try #require(URL(string: sandbox.baseURL.absoluteString + "/as.hs.example/token"))
            let secret = try #require(sandbox.options.clientSecret)
            let good = try await raw(
                "POST", token, headers: form, body: try hs256Assertion(secret: secret, tokenURL: token))
            #expect(good.status == 200 && good.body.contains("access_token"), "\(good.body)")
        }
        var short = SandboxOptions()
        short.clientSecret = "short-secret"
        try await Sandbox.with(emulating: try hs256Provider(), options: short) { sandbox in
            let token = try #require(URL(string: sandbox.baseURL.absoluteString + "/as.hs.example/token"))
            let answer = try await raw(
                "POST", token, headers: form, body: try hs256Assertion(secret: "short-secret", tokenURL: token))
            #expect(
                answer.status == 401 && answer.body.contains("invalid_client") && answer.body.contains("RFC 7518 §3.2")
                    && !answer.body.contains("short-secret"),
                "\(answer.status) \(answer.body)")
            // The review's request: a header saying HS256 and no more.
            let bare = try await raw(
                "POST", token, headers: form,
                body:
                    "grant_type=client_credentials&client_assertion_type=urn%3Aietf%3Aparams%3Aoauth%3Aclient-assertion-type%3Ajwt-bearer&client_assertion="
                    + Base64URL.encode(Data(#"{"alg":"HS256"}"#.utf8)) + ".e30.AAAA")
            #expect(bare.status == 401 && bare.body.contains("invalid_client"), "\(bare.body)")
            #expect(try await raw("GET", sandbox.baseURL).status == 200, "still serving")
            // AuthKit refuses to sign with it before sending anything.
            #expect(throws: AuthKitError.self) {
                _ = try OAuth2Client(descriptor: sandbox.descriptor, settings: sandbox.clientSettings)
            }
        }
        var long = SandboxOptions()
        long.clientSecret = String(repeating: "s", count: 40)
        try await Sandbox.with(emulating: try bundled("github"), options: long) { sandbox in
            let token = try #require(
                URL(string: sandbox.baseURL.absoluteString + "/github.com/login/oauth/access_token"))
            let answer = try await raw(
                "POST", token, headers: form, body: try hs256Assertion(secret: long.clientSecret!, tokenURL: token))
            // (GitHub answers its errors with 200.)
            #expect(
                answer.body.contains("invalid_client") && answer.body.contains("clientAuthentication")
                    && !answer.body.contains("access_token"),
                "\(answer.body)")
        }
    }

    /// An OpenID provider that binds tokens with DPoP and has UserInfo and introspection.
    func boundOpenIDProvider() throws -> ProviderDescriptor {
        try ProviderDescriptor(
            json: Data(
                """
                {"id": "bop", "name": "Bound OP", "protocol": "oauth2", "dpop": "on",
                 "authorization": {"url": "https://op.example/authorize"}, "token": {"url": "https://op.example/token"},
                 "introspection": "https://op.example/introspect",
                 "issuer": {"identifier": "https://op.example"},
                 "openid": {"keys": "https://op.example/jwks", "signingAlgorithms": ["ES256"],
                            "userInfo": "https://op.example/userinfo"},
                 "scopes": {"default": ["openid", "email"]}}
                """.utf8))
    }

    /// RFC 9449 §7.2: a bound token sent as a Bearer token is refused at
    /// UserInfo as at /whoami (UserInfo took it); with its proof it is answered.
    @Test func aBoundTokenIsRefusedAsBearerAtUserInfo() async throws {
        try await Sandbox.with(emulating: try boundOpenIDProvider(), options: SandboxOptions(approves: true)) {
            sandbox in
            let client = try OAuth2Client(descriptor: sandbox.descriptor, settings: sandbox.clientSettings)
            let credential = try await client.authorize(using: sandbox.userAgent())
            #expect(credential.isDPoP)
            #expect(try await client.userInfo(credential).subject == "sandbox-user-alice")
            let userInfo = try #require(URL(string: sandbox.baseURL.absoluteString + "/op.example/userinfo"))
            let bearer = try await raw("GET", userInfo, headers: ["Authorization": "Bearer \(credential.accessToken)"])
            #expect(
                bearer.status == 401 && bearer.body.contains("invalid_token") && !bearer.body.contains("alice"),
                "\(bearer.status) \(bearer.body)")
        }
    }

    /// Introspection (RFC 7662) names the user as the ID token and UserInfo
    /// do (it said `alice` where they said `sandbox-user-alice`), gives a
    /// bound token's key as `cnf.jkt` (RFC 9449 §6.2), and answers for a live
    /// refresh token (it said every one was inactive).
    @Test func introspectionAgreesWithTheIDTokenAndNamesTheKey() async throws {
        try await Sandbox.with(emulating: try boundOpenIDProvider(), options: SandboxOptions(approves: true)) {
            sandbox in
            let client = try OAuth2Client(descriptor: sandbox.descriptor, settings: sandbox.clientSettings)
            let credential = try await client.authorize(using: sandbox.userAgent())
            let key = try #require(credential.proofKey)
            let access = try await client.introspect(credential.accessToken)
            #expect(access.isActive && access.subject == credential.identity?.subject && access.subject != nil)
            #expect(access.fields["cnf"] == .object(["jkt": .string(key.thumbprint)]), "\(access.fields)")
            let refreshToken = try #require(credential.refreshToken)
            let refresh = try await client.introspect(refreshToken)
            #expect(refresh.isActive && refresh.subject == access.subject && refresh.scopes == access.scopes)
            // A confidential client's refresh token is not bound (RFC 9449 §5): no key named.
            #expect(refresh.fields["cnf"] == nil, "\(refresh.fields)")
            _ = try await client.refresh(credential)
            #expect(try await client.introspect(refreshToken).isActive == false, "a rotated refresh token is spent")
        }
    }

    /// `Authorization: Basic` for the sandbox's standard client.
    static let basic = "Basic " + Data("sandbox-client:sandbox-secret".utf8).base64EncodedString()

    /// `dpop_jkt` at a provider without DPoP is ignored, as an unknown
    /// parameter is (RFC 6749 §3.1): kept, it bound the code to a key the
    /// exchange is never asked to prove, and the code could not be redeemed.
    @Test func aDPoPKeyIsIgnoredWhereTheProviderHasNoDPoP() async throws {
        try await Sandbox.with(emulating: try bundled("github"), options: SandboxOptions(approves: true)) {
            sandbox in
            let client = try OAuth2Client(descriptor: sandbox.descriptor, settings: sandbox.clientSettings)
            let (url, pending) = try await client.startAuthorization()
            let bound = try #require(URL(string: url.absoluteString + "&dpop_jkt=" + ProofKey().thumbprint))
            let location = try #require(try await raw("GET", bound).headers[.location])
            let code = try #require(URLComponents(string: location)?.queryItems?.first { $0.name == "code" }?.value)
            let credential = try await client.exchange(code: code, pending: pending)
            #expect(!credential.accessToken.isEmpty)
        }
    }

    /// RFC 9126 §2.1: the pushed endpoint checks the request as the
    /// authorization endpoint would (an unregistered redirect URI and an
    /// unknown scope got 201). RFC 9449 §10.1: a DPoP proof sent there binds
    /// the code to its key, as `dpop_jkt` does (it was ignored: the code
    /// was exchanged with another key), and a `dpop_jkt` that is not the
    /// proof's key is refused.
    @Test func aPushedRequestIsCheckedAndBoundByItsProof() async throws {
        let descriptor = try ProviderDescriptor(
            json: Data(
                """
                {"id": "fapi", "protocol": "oauth2", "dpop": "on",
                 "authorization": {"url": "https://as.fapi.example/authorize", "par": "https://as.fapi.example/par"},
                 "token": {"url": "https://as.fapi.example/token"},
                 "scopes": {"default": ["accounts"], "known": ["accounts", "payments"]}}
                """.utf8))
        try await Sandbox.with(emulating: descriptor, options: SandboxOptions(approves: true)) { sandbox in
            let base = sandbox.baseURL.absoluteString
            let par = try #require(URL(string: base + "/as.fapi.example/par"))
            let token = try #require(URL(string: base + "/as.fapi.example/token"))
            let redirect = sandbox.descriptor.redirect.uri.absoluteString
            func push(_ pairs: [(String, String)], proof: String? = nil) async throws -> (
                status: Int, headers: HTTPFields, body: String
            ) {
                var headers = ["Content-Type": "application/x-www-form-urlencoded", "Authorization": Self.basic]
                if let proof { headers["DPoP"] = proof }
                return try await raw(
                    "POST", par, headers: headers,
                    body: FormURLEncoding.encode([("response_type", "code"), ("state", "s")] + pairs))
            }
            let elsewhere = try await push([("redirect_uri", "https://attacker.example/cb"), ("scope", "accounts")])
            #expect(elsewhere.status == 400 && elsewhere.body.contains("not registered"), "\(elsewhere.body)")
            let unknown = try await push([("redirect_uri", redirect), ("scope", "accounts root")])
            #expect(unknown.status == 400 && unknown.body.contains("invalid_scope"), "\(unknown.body)")

            let key = ProofKey()
            let first = try await push(
                [("redirect_uri", redirect)],
                proof: try await DPoPProof.make(key: key, method: .post, url: par, nonce: nil))
            #expect(first.status == 400 && first.body.contains("use_dpop_nonce"), "\(first.body)")
            let nonce = try #require(first.headers[HTTPField.Name("DPoP-Nonce")!])
            let mismatched = try await push(
                [("redirect_uri", redirect), ("dpop_jkt", ProofKey().thumbprint)],
                proof: try await DPoPProof.make(key: key, method: .post, url: par, nonce: nonce))
            #expect(mismatched.status == 400 && mismatched.body.contains("dpop_jkt"), "\(mismatched.body)")
            let pushed = try await push(
                [("redirect_uri", redirect)],
                proof: try await DPoPProof.make(key: key, method: .post, url: par, nonce: nonce))
            #expect(pushed.status == 201, "\(pushed.body)")
            let answer = try #require(try JSONSerialization.jsonObject(with: Data(pushed.body.utf8)) as? [String: Any])
            let requestURI = try #require(answer["request_uri"] as? String)
            // Refused before the pushed request is used up: no client id, or
            // a second request_uri (the last of two was taken).
            for pairs in [
                [("request_uri", requestURI)],
                [("client_id", "sandbox-client"), ("request_uri", "urn:x"), ("request_uri", requestURI)],
            ] {
                let refused = try await raw(
                    "GET",
                    try #require(URL(string: base + "/as.fapi.example/authorize?" + FormURLEncoding.encode(pairs))))
                #expect(refused.status == 400 && refused.headers[.location] == nil, "\(pairs): \(refused.body)")
            }
            let authorize = try #require(
                URL(
                    string: base + "/as.fapi.example/authorize?"
                        + FormURLEncoding.encode([("client_id", "sandbox-client"), ("request_uri", requestURI)])))
            let location = try #require(try await raw("GET", authorize).headers[.location])
            let code = try #require(URLComponents(string: location)?.queryItems?.first { $0.name == "code" }?.value)
            // The code is the proof's key's: another key's proof is refused.
            let stolen = try await raw(
                "POST", token,
                headers: [
                    "Content-Type": "application/x-www-form-urlencoded", "Authorization": Self.basic,
                    "DPoP": try await DPoPProof.make(key: ProofKey(), method: .post, url: token, nonce: nonce),
                ],
                body: FormURLEncoding.encode([
                    ("grant_type", "authorization_code"), ("code", code), ("redirect_uri", redirect),
                ]))
            #expect(stolen.status == 400 && stolen.body.contains("bound to another key"), "\(stolen.body)")
        }
    }

    /// A client registered with a key and no secret is confidential: the
    /// sandbox refuses its id alone (a client that stopped sending its
    /// assertion would otherwise pass), and takes its assertion.
    @Test func aClientWithAKeyAndNoSecretMustSendItsAssertion() async throws {
        let (key, path) = try Self.clientKeyFile()
        var options = SandboxOptions(clientSecret: nil)
        options.clientKey = key.publicKey.pemRepresentation
        try await Sandbox.with(emulating: try bundled("github"), options: options) { sandbox in
            let token = try #require(
                URL(string: sandbox.baseURL.absoluteString + "/github.com/login/oauth/access_token"))
            let bare = try await raw(
                "POST", token,
                headers: ["Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json"],
                body: "grant_type=client_credentials&client_id=sandbox-client")
            // (GitHub answers its errors with 200.)
            #expect(
                bare.body.contains("invalid_client") && !bare.body.contains("access_token"),
                "\(bare.status) \(bare.body)")
            var settings = sandbox.clientSettings
            settings.clientSecret = nil
            settings.privateKeyFile = path
            let client = try OAuth2Client(descriptor: sandbox.descriptor, settings: settings)
            #expect(try await client.clientCredentials(scopes: ["repo"]).accessToken.isEmpty == false)
        }
    }

    /// A client with a key and no secret is confidential at the
    /// authorization endpoint too: where the provider takes no PKCE (Box),
    /// its sign-in sends no challenge, which the sandbox refused as a public
    /// client's ("code_challenge is required") after the user consented.
    @Test func aClientWithAKeyAndNoSecretSignsInWithoutPKCEWhereTheProviderHasNone() async throws {
        let (key, path) = try Self.clientKeyFile()
        defer { try? FileManager.default.removeItem(at: URL(fileURLWithPath: path).deletingLastPathComponent()) }
        var options = SandboxOptions(deterministic: true)
        options.clientSecret = nil
        options.clientKey = key.publicKey.pemRepresentation
        let box = try bundled("box")
        #expect(box.pkce == .none)
        try await Sandbox.with(emulating: box, options: options) { sandbox in
            var settings = sandbox.clientSettings
            settings.clientSecret = nil
            settings.privateKeyFile = path
            let client = try OAuth2Client(descriptor: sandbox.descriptor, settings: settings)
            let credential = try await client.authorize(using: sandbox.userAgent())
            #expect(!credential.accessToken.isEmpty)
        }
    }
}
