import AuthKitTestSupport
import Crypto
import CryptoExtras
import Foundation
import HTTPTypes
import JWTKit
import Testing

@testable import AuthKit

/// DPoP (RFC 9449), PAR (RFC 9126), client assertions (RFC 7523) and the
/// client credentials grant, against a real HTTP server on 127.0.0.1: the
/// assertions are on what the server received.
@Suite struct SenderConstrainedTests {
    func descriptor(
        _ server: TestHTTPServer, dpop: Bool = false, par: Bool = false, auth: String = "basic", whoAmI: Bool = false
    ) throws -> ProviderDescriptor {
        let base = server.baseURL
        return try ProviderDescriptor(
            json: Data(
                """
                {"id": "bound", "protocol": "oauth2", "dpop": "\(dpop ? "on" : "off")",
                 \(whoAmI ? #""whoAmI": {"url": "\#(base)/me", "subject": "id"},"# : "")
                 "authorization": {"url": "\(base)/authorize"\(par ? ", \"par\": \"\(base)/par\"" : "")},
                 "token": {"url": "\(base)/token", "clientAuthentication": "\(auth)"}}
                """.utf8))
    }

    /// A source of a DPoP-bound credential, signed in at `server`'s token
    /// endpoint as a public client, kept in memory.
    func boundSource(_ server: TestHTTPServer) async throws -> CredentialSource {
        let client = try OAuth2Client(
            descriptor: descriptor(server, dpop: true),
            settings: ClientSettings(clientID: "c", redirectURI: "http://127.0.0.1:1/cb"))
        let (_, pending) = try await client.startAuthorization()
        let credential = try await client.exchange(code: "c0", pending: pending)
        return CredentialSource(
            authenticator: client, store: InMemoryCredentialStore([credential]), key: credential.key)
    }

    /// A client with a who-am-I call at `/me`, and a DPoP-bound credential
    /// it issued (code `c1`).
    func boundWhoAmI(_ server: TestHTTPServer) async throws -> (OAuth2Client, Credential) {
        let client = try OAuth2Client(
            descriptor: descriptor(server, dpop: true, whoAmI: true),
            settings: ClientSettings(clientID: "c", redirectURI: "http://127.0.0.1:1/cb"))
        let (_, pending) = try await client.startAuthorization()
        return (client, try await client.exchange(code: "c1", pending: pending))
    }

    /// The header and claims of a compact JWS, decoded (not verified).
    func parts(_ jws: String) throws -> (header: [String: Any], claims: [String: Any]) {
        let segments = jws.split(separator: ".", omittingEmptySubsequences: false)
        #expect(segments.count == 3)
        func object(_ part: Substring) throws -> [String: Any] {
            let bytes = try #require(Base64URL.decode(part))
            return try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
        }
        return (try object(segments[0]), try object(segments[1]))
    }

    // MARK: - Proofs

    /// A caller that sends requests itself passes a resource server's nonce
    /// (RFC 9449 §9) to `authorize(_:with:dpopNonce:)`: it goes in that
    /// proof and in later ones to the same origin, not to another; one that
    /// is not a nonce is refused.
    @Test func aNonceGivenToAuthorizeGoesInTheProof() async throws {
        try await withServer { server in
            let client = try OAuth2Client(
                descriptor: descriptor(server, dpop: true), settings: ClientSettings(clientID: "c"))
            var credential = Credential(providerID: "bound", accessToken: "at", tokenType: "DPoP")
            credential.proofKey = ProofKey()
            let origin = "https://rs-\(UUID().uuidString.prefix(8).lowercased()).example"
            func nonce(_ url: String, _ given: String? = nil) async throws -> String? {
                let request = try await client.authorize(
                    HTTPRequest(method: .get, url: URL(string: url)!), with: credential, dpopNonce: given)
                return try parts(try #require(request.headerFields[DPoPProof.headerName])).claims["nonce"] as? String
            }
            #expect(try await nonce("\(origin)/a") == nil)
            #expect(try await nonce("\(origin)/a", "rs-n1") == "rs-n1")
            #expect(try await nonce("\(origin)/b") == "rs-n1")
            #expect(try await nonce("https://other-\(UUID().uuidString.prefix(8).lowercased()).example/a") == nil)
            for bad in ["", "a b", "quo\"te", "back\\slash", String(repeating: "n", count: 1025)] {
                await #expect {
                    _ = try await nonce("\(origin)/a", bad)
                } throws: { error in
                    guard case .misuse(.unsignableRequest(let reason))? = error.authKitReason else { return false }
                    return reason.contains("DPoP nonce")
                }
            }
        }
    }

    @Test func aProofNamesTheRequestAndVerifiesWithItsPublicKey() async throws {
        let key = ProofKey()
        let url = try #require(URL(string: "https://api.example.com/v1/items?page=2#top"))
        let proof = try await DPoPProof.make(key: key, method: .post, url: url, nonce: "n-1", accessToken: "tok")
        let (header, claims) = try parts(proof)
        #expect(Set(header.keys) == ["typ", "alg", "jwk"])
        #expect(Set(claims.keys) == ["jti", "htm", "htu", "iat", "nonce", "ath"])
        #expect(header["typ"] as? String == "dpop+jwt")
        #expect(header["alg"] as? String == "ES256")
        let jwk = try #require(header["jwk"] as? [String: String])
        #expect(jwk["d"] == nil, "the proof carries the private key")
        #expect(jwk == key.publicJWK)
        #expect(claims["htm"] as? String == "POST")
        #expect(claims["htu"] as? String == "https://api.example.com/v1/items")
        #expect(claims["nonce"] as? String == "n-1")
        let iat = try #require(claims["iat"] as? NSNumber, "iat is a number (RFC 7519 §4.1.6)")
        #expect(abs(iat.doubleValue - Date().timeIntervalSince1970) < 60)
        let ath = SHA256.hash(data: Data("tok".utf8)).withUnsafeBytes { Base64URL.encode($0) }
        #expect(claims["ath"] as? String == ath)
        // Verified by jwt-kit with the public half only.
        let keys = JWTKeyCollection()
        await keys.add(ecdsa: try ES256PublicKey(backing: key.privateKey.publicKey))
        struct Claims: JWTPayload {
            var jti: String
            func verify(using algorithm: some JWTAlgorithm) async throws {}
        }
        _ = try await keys.verify(proof, as: Claims.self)
        // Another key's signature does not verify.
        let other = JWTKeyCollection()
        await other.add(ecdsa: try ES256PublicKey(backing: ProofKey().privateKey.publicKey))
        await #expect(throws: (any Error).self) { _ = try await other.verify(proof, as: Claims.self) }
        // Every proof is fresh (RFC 9449 §11.1).
        let again = try await DPoPProof.make(key: key, method: .post, url: url, nonce: "n-1", accessToken: "tok")
        #expect(try parts(again).claims["jti"] as? String != claims["jti"] as? String)
        // No nonce yet, no token (a token request): neither member, rather than null.
        let first = try await DPoPProof.make(key: key, method: .post, url: url, nonce: nil)
        #expect(Set(try parts(first).claims.keys) == ["jti", "htm", "htu", "iat"])
    }

    /// `htu` is the URL without query and fragment (RFC 9449 §4.2), its path
    /// as written: an encoded `?` in the path stays.
    @Test func theTargetURIDropsOnlyTheQueryAndFragment() {
        func htu(_ text: String) -> String { DPoPProof.targetURI(URL(string: text)!) }
        #expect(htu("https://api.example/v1/items?page=2") == "https://api.example/v1/items")
        #expect(htu("https://api.example/v1/items?page=2#top") == "https://api.example/v1/items")
        #expect(htu("https://api.example/v1#a?b") == "https://api.example/v1")
        #expect(htu("https://api.example/a%3Fb/c?x") == "https://api.example/a%3Fb/c")
        #expect(htu("https://api.example:8443/") == "https://api.example:8443/")
        // As a server rebuilds it from the request (RFC 3986 §6.2.2–6.2.3):
        // the default port left out (not in `Host`), an empty path `/` (the
        // request line's), scheme and host in lower case.
        #expect(htu("https://api.example:443/v1/items?x") == "https://api.example/v1/items")
        #expect(htu("http://127.0.0.1:80/token") == "http://127.0.0.1/token")
        #expect(htu("https://api.example") == "https://api.example/")
        #expect(htu("https://api.example?x=1") == "https://api.example/")
        #expect(htu("HTTPS://API.Example:8443/V1") == "https://api.example:8443/V1")
        #expect(htu("https://[::1]:443/a") == "https://[::1]/a")
        #expect(htu("https://user:Pass@API.example/a") == "https://api.example/a")
        #expect(htu("https://api.example:/a") == "https://api.example/a")
        #expect(
            DPoPProof.targetURI(URL(string: "items?x=1", relativeTo: URL(string: "https://api.example/v1/"))!)
                == "https://api.example/v1/items")
    }

    /// `htu` is written on the URL's bytes; the steps it took before on
    /// characters (a substring search, Unicode case mapping), kept here as
    /// the reference, give the same answer for every URL built from these parts.
    @Test func theTargetURIOnBytesAgreesWithItOnCharacters() {
        func onCharacters(_ text: String) -> String {
            let cut = text.firstIndex(where: { $0 == "?" || $0 == "#" }) ?? text.endIndex
            let uri = text[..<cut]
            guard let separator = uri.firstRange(of: "://") else { return String(uri) }
            let scheme = uri[..<separator.lowerBound].lowercased()
            let rest = uri[separator.upperBound...]
            let pathStart = rest.firstIndex(of: "/") ?? rest.endIndex
            var authority = rest[..<pathStart]
            if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
            var host = authority.lowercased()
            let defaultPort = scheme == "https" ? ":443" : scheme == "http" ? ":80" : nil
            if let defaultPort, host.hasSuffix(defaultPort) { host.removeLast(defaultPort.count) }
            if host.hasSuffix(":") { host.removeLast() }
            let path = rest[pathStart...]
            return scheme + "://" + host + (path.isEmpty ? "/" : String(path))
        }
        var checked = 0
        for scheme in ["https", "HTTP", "hTTps", "wss"] {
            for authority in ["api.example", "API.Example:443", "h:80", "u:p@H:8443", "[::1]:443", "a@b@c", "h:"] {
                for path in ["", "/", "/V1/a%3Fb", "/a@b:443"] {
                    for tail in ["", "?q=1", "#f", "?a#b", "?"] {
                        let text = "\(scheme)://\(authority)\(path)\(tail)"
                        guard let url = URL(string: text) else { continue }
                        #expect(DPoPProof.targetURI(url) == onCharacters(url.absoluteString), "\(text)")
                        checked += 1
                    }
                }
            }
        }
        #expect(checked > 400)
    }

    @Test func theKeyIsStoredAsAJWKAndItsThumbprintIsRFC7638s() throws {
        let key = ProofKey()
        let data = try JSONEncoder().encode(key)
        #expect(try JSONDecoder().decode(ProofKey.self, from: data) == key)
        let stored = try #require(try JSONSerialization.jsonObject(with: data) as? [String: String])
        #expect(stored["kty"] == "EC" && stored["crv"] == "P-256" && stored["d"] != nil)
        // RFC 7638 §3: the required members, sorted, no white space, hashed.
        let canonical = try JSONSerialization.data(
            withJSONObject: ["crv": "P-256", "kty": "EC", "x": stored["x"]!, "y": stored["y"]!],
            options: [.sortedKeys, .withoutEscapingSlashes])
        #expect(key.thumbprint == SHA256.hash(data: canonical).withUnsafeBytes { Base64URL.encode($0) })
        // A credential never shows it.
        var credential = Credential(providerID: "bound", accessToken: "a")
        credential.proofKey = key
        #expect(!credential.description.contains(stored["d"]!))
        #expect(try JSONDecoder().decode(Credential.self, from: JSONEncoder().encode(credential)).proofKey == key)
    }

    // MARK: - Token endpoint

    @Test func aSignInProvesTheKeyAnswersTheNonceOnceAndRefusesBearer() async throws {
        try await withServer { server in
            let tokenType = Recorder<String>()
            let refreshToken = Recorder<String>()
            server.route("POST", "/token") { request in
                let proof = request.header("DPoP") ?? ""
                let nonce = (try? parts(proof).claims["nonce"] as? String) ?? nil
                guard nonce == "server-nonce" else {
                    return .json(
                        #"{"error":"use_dpop_nonce"}"#, status: 400, headers: [("DPoP-Nonce", "server-nonce")])
                }
                let type = tokenType.all.last ?? "DPoP"
                let typeMember = type.isEmpty ? "" : #""token_type":"\#(type)","#
                let refresh = refreshToken.all.last ?? "rt"
                return .json(
                    #"{"access_token":"at",\#(typeMember)"refresh_token":"\#(refresh)","expires_in":60}"#)
            }
            let client = try OAuth2Client(
                descriptor: descriptor(server, dpop: true),
                settings: ClientSettings(clientID: "c", redirectURI: "http://127.0.0.1:1/cb"))
            let (url, pending) = try await client.startAuthorization()
            let key = try #require(pending.proofKey)
            #expect(url.query?.contains("dpop_jkt=\(key.thumbprint)") == true)
            let credential = try await client.exchange(code: "c0", pending: pending)
            #expect(credential.isDPoP && credential.proofKey == key)
            let proofs = server.requests(to: "/token").map { $0.header("DPoP") ?? "" }
            #expect(proofs.count == 2, "one retry with the nonce")
            #expect(Set(try proofs.map { try parts($0).claims["jti"] as? String }).count == 2)
            for proof in proofs {
                #expect(try parts(proof).header["jwk"] as? [String: String] == key.publicJWK)
                #expect(try parts(proof).claims["htu"] as? String == "\(server.baseURL)/token")
            }
            // The refresh proves the same key, with the nonce now known: one request.
            _ = try await client.refresh(credential)
            #expect(server.requests(to: "/token").count == 3)
            // A Bearer answer to a proof is a downgrade: refused.
            tokenType.append("Bearer")
            let (_, again) = try await client.startAuthorization()
            await #expect {
                _ = try await client.exchange(code: "c1", pending: again)
            } throws: { error in
                guard case .invalidResponse(_, .invalidField("token_type", let detail))? = error.authKitReason else {
                    return false
                }
                return detail.contains("not DPoP")
            }
            // So is a refresh's; when its answer carried a new refresh token,
            // the refusal says the stored one may be spent.
            for (answered, rotated) in [("rt", false), ("rt-rotated", true)] {
                refreshToken.append(answered)
                await #expect {
                    _ = try await client.refresh(credential)
                } throws: { error in
                    guard
                        case .invalidResponse(.refresh, .invalidField("token_type", let detail))? = error.authKitReason
                    else { return false }
                    return detail.contains("not DPoP") && detail.contains("may have spent the stored one") == rotated
                        && !detail.contains("rt-rotated")
                }
            }
            // A refresh answer with no token_type keeps an unbound
            // credential's earlier type; a bound one's is not taken on trust.
            tokenType.append("")
            refreshToken.append("rt-rotated-again")
            await #expect {
                _ = try await client.refresh(credential)
            } throws: { error in
                guard case .invalidResponse(.refresh, .invalidField("token_type", let detail))? = error.authKitReason
                else { return false }
                return detail.contains("not DPoP") && detail.contains("may have spent the stored one")
            }
        }
    }

    @Test func aNonceThatChangesAtEveryAnswerIsRetriedOnceOnly() async throws {
        try await withServer { server in
            let counter = Recorder<Int>()
            server.route("POST", "/token") { _ in
                counter.append(0)
                return .json(
                    #"{"error":"use_dpop_nonce"}"#, status: 400, headers: [("DPoP-Nonce", "n\(counter.all.count)")])
            }
            let client = try OAuth2Client(
                descriptor: descriptor(server, dpop: true),
                settings: ClientSettings(clientID: "c", redirectURI: "http://127.0.0.1:1/cb"))
            let (_, pending) = try await client.startAuthorization()
            await #expect {
                _ = try await client.exchange(code: "c0", pending: pending)
            } throws: { error in
                guard case .providerError(_, let response)? = error.authKitReason else { return false }
                return response.code == "use_dpop_nonce"
            }
            #expect(server.requests(to: "/token").count == 2)
        }
    }

    /// The retry after `use_dpop_nonce` carries the nonce that refusal
    /// named, not the process's latest for the origin: another answer of
    /// the same server (a sign-in beside this one) kept meanwhile is not
    /// the one this server asked for here, and the retry was refused again.
    @Test func theRetryCarriesTheNonceItsRefusalNamed() async throws {
        try await withServer { server in
            server.route("POST", "/token") { request in
                let nonce = (try? parts(request.header("DPoP") ?? "").claims["nonce"] as? String) ?? nil
                guard nonce == "asked-for" else {
                    return .json(#"{"error":"use_dpop_nonce"}"#, status: 400, headers: [("DPoP-Nonce", "asked-for")])
                }
                return .json(#"{"access_token":"at","token_type":"DPoP","expires_in":3600}"#)
            }
            let client = try OAuth2Client(
                descriptor: descriptor(server, dpop: true),
                settings: ClientSettings(clientID: "c", redirectURI: "http://127.0.0.1:1/cb"))
            let key = ProofKey()
            let origin = try #require(URL(string: "\(server.baseURL)/token")).origin
            let builds = Recorder<Int>()
            let response = try await client.calls.sendToAuthorizationServer(step: .tokenExchange, proofKey: key) {
                builds.append(0)
                // Between the refusal and the retry, another answer of this
                // server left its own nonce.
                if builds.all.count == 2 {
                    DPoPNonces.shared.remember(
                        [DPoPProof.nonceHeaderName: "someone-elses"], for: origin, from: .authorization)
                }
                var request = OutgoingRequest(method: .post, url: URL(string: "\(server.baseURL)/token")!)
                request.body = Data("grant_type=authorization_code&code=c0".utf8)
                return request
            }
            #expect(response.status == 200)
            #expect(server.requests(to: "/token").count == 2)
        }
    }

    /// A sign-in rebuilt without its key (a backend that keeps the attempt's
    /// fields itself) is refused before the code is sent: the exchange would
    /// prove nothing, and a server ignoring `dpop_jkt` would answer Bearer.
    /// Nonces are kept per origin (§9), for a bounded number of origins: an
    /// app that reaches a host per tenant does not grow the map for ever.
    /// The newest origin's nonce is always kept; a value outside §8's
    /// characters never is.
    @Test func nonceOriginsAreBounded() {
        let nonces = DPoPNonces()
        for index in 0..<(DPoPNonces.keptOrigins + 50) {
            nonces.remember(
                [DPoPProof.nonceHeaderName: "n-\(index)"], for: "https://t\(index).example", from: .resource)
        }
        #expect(nonces.count == DPoPNonces.keptOrigins)
        // The origins kept longest went first.
        #expect(
            nonces["https://t49.example", server: .resource] == nil
                && nonces["https://t50.example", server: .resource] == "n-50")
        let last = DPoPNonces.keptOrigins + 49
        #expect(nonces["https://t\(last).example", server: .resource] == "n-\(last)")
        // A kept origin's new nonce replaces its old one without letting another go.
        nonces.remember([DPoPProof.nonceHeaderName: "fresh"], for: "https://t\(last).example", from: .resource)
        #expect(
            nonces.count == DPoPNonces.keptOrigins && nonces["https://t\(last).example", server: .resource] == "fresh")
        nonces.remember([DPoPProof.nonceHeaderName: "with \"quote"], for: "https://q.example", from: .resource)
        #expect(nonces["https://q.example", server: .resource] == nil)
    }

    @Test func anExchangeWithoutTheSignInsKeyIsRefusedWhenDPoPIsOn() async throws {
        try await withServer { server in
            server.route("POST", "/token") { _ in .json(#"{"access_token":"a","token_type":"Bearer"}"#) }
            let client = try OAuth2Client(
                descriptor: descriptor(server, dpop: true),
                settings: ClientSettings(clientID: "c", redirectURI: "http://127.0.0.1:1/cb"))
            let (_, started) = try await client.startAuthorization()
            let rebuilt = PendingAuthorization(
                providerID: started.providerID, state: started.state, codeVerifier: started.codeVerifier,
                redirectURI: started.redirectURI, expectedIssuer: started.expectedIssuer,
                issuerRequired: started.issuerRequired, scopes: started.scopes, createdAt: started.createdAt)
            await #expect {
                _ = try await client.exchange(code: "c0", pending: rebuilt)
            } throws: { error in
                guard case .misuse(.invalidParameter("pending", let problem))? = error.authKitReason else {
                    return false
                }
                return problem.contains("no DPoP key")
            }
            #expect(server.requests(to: "/token").isEmpty)
        }
    }

    /// A request template sends no proof: a descriptor with dpop on and a
    /// refresh or follow-up template is refused, naming both.
    @Test func dpopWithARequestTemplateIsRefused() throws {
        for field in ["refresh", "followUp"] {
            let json = """
                {"id": "bound", "protocol": "oauth2", "dpop": "on",
                 "authorization": {"url": "https://as.example/authorize"}, "token": {"url": "https://as.example/token"},
                 "\(field)": {"method": "POST", "url": "https://as.example/renew", "body": {"t": "{refresh_token}"}}}
                """
            #expect("\(field)") {
                _ = try ProviderDescriptor(json: Data(json.utf8))
            } throws: { error in
                guard case .invalidFile(let issues)? = error.authKitReason else { return false }
                return issues.contains { $0.field == "dpop" && $0.problem.contains("'\(field)' is a request template") }
            }
        }
        // A revocation that authorizes with the token itself would send a
        // bound token as Bearer; RFC 7009's (the token a parameter) is kept.
        func revoking(_ revocation: String) -> String {
            """
            {"id": "bound", "protocol": "oauth2", "dpop": "on",
             "authorization": {"url": "https://as.example/authorize"}, "token": {"url": "https://as.example/token"},
             "revocation": \(revocation)}
            """
        }
        #expect {
            _ = try ProviderDescriptor(
                json: Data(
                    revoking(
                        #"{"url": "https://as.example/revoke", "parameters": {}, "headers": {"authorization": "Bearer {access_token}"}}"#
                    ).utf8))
        } throws: { error in
            guard case .invalidFile(let issues)? = error.authKitReason else { return false }
            return issues.contains { $0.field == "revocation.headers" && $0.problem.contains("RFC 9449 §7.1") }
        }
        _ = try ProviderDescriptor(json: Data(revoking(#"{"url": "https://as.example/revoke"}"#).utf8))
    }

    // MARK: - PAR

    @Test func pushedParametersLeaveOnlyClientIDAndRequestURIInTheURL() async throws {
        try await withServer { server in
            server.route("POST", "/par") { _ in
                .json(#"{"request_uri":"urn:ietf:params:oauth:request_uri:abc","expires_in":60}"#, status: 201)
            }
            let client = try OAuth2Client(
                descriptor: descriptor(server, par: true),
                settings: ClientSettings(clientID: "c", clientSecret: "s", redirectURI: "http://127.0.0.1:1/cb"))
            let (url, pending) = try await client.startAuthorization(scopes: ["read"])
            let query = try formObject(try #require(url.query))
            #expect(query == ["client_id": "c", "request_uri": "urn:ietf:params:oauth:request_uri:abc"])
            let pushed = try #require(server.requests(to: "/par").first)
            let form = try formObject(pushed.bodyText)
            #expect(form["state"] == pending.state && form["scope"] == "read" && form["code_challenge"] != nil)
            #expect(form["client_secret"] == nil && pushed.header("Authorization")?.hasPrefix("Basic ") == true)
            // Quoted, as some servers quote a token answer's: read as the number it holds.
            server.route("POST", "/par") { _ in .json(#"{"request_uri":"urn:x","expires_in":"60"}"#, status: 201) }
            #expect(
                try await client.startAuthorization(scopes: ["read"]).url.query?.contains("request_uri=urn") == true)
            // §2.2: expires_in is required and positive; without it, nothing goes to the browser.
            for answer in [
                #"{"request_uri":"urn:x"}"#, #"{"request_uri":"urn:x","expires_in":0}"#,
                #"{"request_uri":"urn:x","expires_in":"soon"}"#, #"{"request_uri":"urn:x","expires_in":"-5"}"#,
                #"{"request_uri":"urn:x","expires_in":"0x1p4"}"#, #"{"request_uri":"urn:x","expires_in":1e300}"#,
            ] {
                server.route("POST", "/par") { _ in .json(answer, status: 201) }
                await #expect(
                    throws: AuthKitError.invalidResponse(
                        step: .pushedAuthorization,
                        reason: .init(
                            .invalidField("expires_in"),
                            "its expires_in is missing or not a positive number of seconds (RFC 9126 §2.2)")),
                    "\(answer)"
                ) { _ = try await client.startAuthorization(scopes: ["read"]) }
            }
            // §2.2: request_uri is required, a string; without one, nothing goes to the browser either.
            for answer in [
                #"{"expires_in":60}"#, #"{"request_uri":42,"expires_in":60}"#, #"{"request_uri":"","expires_in":60}"#,
            ] {
                server.route("POST", "/par") { _ in .json(answer, status: 201) }
                await #expect(throws: AuthKitError.self, "\(answer)") {
                    _ = try await client.startAuthorization(scopes: ["read"])
                }
            }
        }
    }

    /// A resource server that names a fresh nonce at every 401 (RFC 9449
    /// §9) gets the request once more with it, not again and again: its
    /// 401 is the answer. Who-am-I (and UserInfo, on the same path) holds
    /// to the same.
    @Test func aResourceServerAskingForAFreshNonceEveryTimeIsAskedTwice() async throws {
        try await withServer { server in
            server.route("POST", "/token") { _ in
                .json(#"{"access_token":"at","token_type":"DPoP","expires_in":3600}"#)
            }
            let counter = LockedValue(0)
            for path in ["/api", "/me"] {
                server.route("GET", path) { _ in
                    let n = counter.withLock { value -> Int in
                        value += 1
                        return value
                    }
                    return .json(
                        "{}", status: 401,
                        headers: [("WWW-Authenticate", #"DPoP error="use_dpop_nonce""#), ("DPoP-Nonce", "n-\(n)")])
                }
            }
            let source = try await boundSource(server)
            let (response, _) = try await source.send(
                HTTPRequest(method: .get, url: URL(string: "\(server.baseURL)/api")!))
            #expect(response.status == .unauthorized)
            #expect(server.requests(to: "/api").count == 2)
            let nonces = try server.requests(to: "/api").map {
                try parts($0.header("DPoP") ?? "").claims["nonce"] as? String
            }
            #expect(nonces.last == "n-1", "the second request carries the nonce the first answer named")
            // The provider's own calls about the user (who-am-I, UserInfo: one path).
            let (client, credential) = try await boundWhoAmI(server)
            await #expect(throws: AuthKitError.self) { _ = try await client.whoAmI(credential) }
            let asked = try server.requests(to: "/me").map {
                try parts($0.header("DPoP") ?? "").claims["nonce"] as? String
            }
            #expect(asked.count == 2 && asked.last == "n-3", "\(asked)")
        }
    }

    /// The retry after a resource server's `use_dpop_nonce` is signed with
    /// the nonce that refusal named, not the origin's latest: two requests
    /// to one API at once, the other's answer (with an older nonce) came
    /// between the refusal and the retry, and the retry was refused again.
    /// Here the origin's latest is another one when the retry is signed.
    @Test func aRetryIsSignedWithItsRefusalsNonceWhateverCameSince() async throws {
        let origin = "https://rs-\(UUID().uuidString.prefix(8).lowercased()).example"
        let url = URL(string: "\(origin)/api")!
        var credential = Credential(providerID: "bound", accessToken: "at", tokenType: "DPoP")
        credential.proofKey = ProofKey()
        let json = """
            {"id": "bound", "protocol": "oauth2", "authorization": {"url": "https://as.example/a"},
             "token": {"url": "https://as.example/t"}}
            """
        let descriptor = try ProviderDescriptor(json: Data(json.utf8), source: "bound.json")
        DPoPNonces.shared.remember([DPoPProof.nonceHeaderName: "another-answers"], for: origin, from: .resource)
        func nonce(given: String?) async throws -> String? {
            let request = try await DPoPProof.authorized(
                HTTPRequest(method: .get, url: url), url: url, token: credential, key: credential.proofKey!,
                descriptor: descriptor, nonce: given)
            return try parts(try #require(request.headerFields[DPoPProof.headerName])).claims["nonce"] as? String
        }
        #expect(try await nonce(given: "the-refusals") == "the-refusals")
        #expect(try await nonce(given: nil) == "another-answers")
    }

    /// A `use_dpop_nonce` refusal that names no nonce (or one that is not
    /// one) is the answer: a retry would carry the same proof's nonce and be
    /// refused again. Who-am-I and UserInfo sent it once more.
    @Test func aNonceRefusalWithoutANonceIsNotRetried() async throws {
        try await withServer { server in
            server.route("POST", "/token") { _ in
                .json(#"{"access_token":"at","token_type":"DPoP","expires_in":3600}"#)
            }
            for path in ["/api", "/me"] {
                server.route("GET", path) { _ in
                    .json("{}", status: 401, headers: [("WWW-Authenticate", #"DPoP error="use_dpop_nonce""#)])
                }
            }
            let source = try await boundSource(server)
            let (response, _) = try await source.send(
                HTTPRequest(method: .get, url: URL(string: "\(server.baseURL)/api")!))
            #expect(response.status == .unauthorized)
            #expect(server.requests(to: "/api").count == 1)
            let (client, credential) = try await boundWhoAmI(server)
            await #expect(throws: AuthKitError.self) { _ = try await client.whoAmI(credential) }
            #expect(server.requests(to: "/me").count == 1)
        }
    }

    /// The client credentials grant with `dpop: on`: a Bearer answer to
    /// the proof is refused, not stored (RFC 9449 §5), as at a sign-in.
    @Test func aClientCredentialsTokenAnsweredBearerToAProofIsRefused() async throws {
        try await withServer { server in
            server.route("POST", "/token") { _ in
                .json(#"{"access_token":"plain","token_type":"Bearer","expires_in":3600}"#)
            }
            let client = try OAuth2Client(
                descriptor: descriptor(server, dpop: true), settings: ClientSettings(clientID: "m", clientSecret: "s"))
            await #expect {
                _ = try await client.clientCredentials(scopes: ["read"])
            } throws: { error in
                guard case .invalidResponse(_, let reason)? = error.authKitReason else { return false }
                return reason.kind == .invalidField("token_type") && !"\(error)".contains("plain")
            }
            #expect(server.requests(to: "/token").first?.header("DPoP") != nil)
        }
    }

    @Test func aRequestURIThatPointsElsewhereIsRefused() async throws {
        for (answer, refused) in [
            ("urn:ietf:params:oauth:request_uri:x", false), ("https://evil.example/req/1", true),
            ("http://127.0.0.1:1/req", true), ("urn:x\u{7}y", true), ("", true),
        ] {
            #expect(
                (TokenEndpointCalls.requestURIProblem(answer, endpoint: "https://as.example/par") != nil) == refused,
                "\(answer)")
        }
        #expect(
            TokenEndpointCalls.requestURIProblem("https://as.example/r/1", endpoint: "https://as.example/par") == nil)
    }

    // MARK: - Client authentication with a key; client credentials

    /// A client credentials token is renewed for what it was asked for: its
    /// extra parameters (Auth0's `audience`, RFC 8707's `resource`) are sent
    /// again, and a stored credential with no expiry is renewed when the API
    /// answers 401 `invalid_token` (§4.4.3: there is no refresh token).
    @Test func aClientCredentialsRenewalAsksForTheSameAudience() async throws {
        try await withServer { server in
            let counter = LockedCounter()
            server.route("POST", "/token") { _ in
                counter.add()
                return .json(#"{"access_token":"m\#(counter.value)","token_type":"Bearer"}"#)
            }
            server.route("GET", "/api") { request in
                request.header("Authorization") == "Bearer m2"
                    ? .json("{}")
                    : StubResponse(status: 401, headers: [("WWW-Authenticate", #"Bearer error="invalid_token""#)])
            }
            let client = try OAuth2Client(
                descriptor: descriptor(server), settings: ClientSettings(clientID: "machine", clientSecret: "s"))
            let credential = try await client.clientCredentials(
                scopes: ["read"], additionalParameters: ["audience": "https://api.example"])
            let store = InMemoryCredentialStore()
            await store.save(credential)
            let source = CredentialSource(authenticator: client, store: store, key: credential.key)
            let (response, _) = try await source.send(
                HTTPRequest(method: .get, url: URL(string: server.baseURL + "/api")!))
            #expect(response.status == .ok)
            let forms = try server.requests(to: "/token").map { try formObject($0.bodyText) }
            #expect(forms.count == 2 && forms.allSatisfy { $0["audience"] == "https://api.example" }, "\(forms)")
            #expect(await store.credential(for: credential.key)?.accessToken == "m2")
        }
    }

    /// A client-credentials token bound while the descriptor said dpop on
    /// is renewed, once it says off, as the Bearer token it asks for: the
    /// renewal sends no proof, and the old key stays behind (it was put back
    /// on the Bearer token, which was then refused as unbound, for good).
    /// A credential that lost its key (a store that kept only the public
    /// fields) is refreshed with a new key, and a Bearer answer is refused:
    /// sent without a proof, the refresh brought a Bearer token, stored in
    /// place of the bound one and sent as Bearer from then on.
    @Test func aBoundCredentialWithoutItsKeyIsNotRefreshedToBearer() async throws {
        try await withServer { server in
            server.route("POST", "/token") { request in
                request.header("DPoP") == nil
                    ? .json(#"{"access_token":"plain","token_type":"Bearer","expires_in":3600}"#)
                    : .json(#"{"access_token":"bound","token_type":"DPoP","expires_in":3600,"refresh_token":"r2"}"#)
            }
            let settings = ClientSettings(clientID: "c", clientSecret: "s")
            for dpop in [true, false] {
                var keyless = Credential(
                    providerID: "bound", accessToken: "old", tokenType: "DPoP", refreshToken: "r1",
                    expiresAt: Date(timeIntervalSinceNow: -60))
                keyless.proofKey = nil
                let renewed = try await OAuth2Client(descriptor: descriptor(server, dpop: dpop), settings: settings)
                    .refresh(keyless)
                #expect(renewed.accessToken == "bound" && renewed.isDPoP && renewed.proofKey != nil)
            }
            #expect(server.requests(to: "/token").map { $0.header("DPoP") != nil } == [true, true])
            // Descriptor says dpop on, the stored one is Bearer without a key
            // (signed in before DPoP was turned on): bound from now on.
            let earlier = Credential(
                providerID: "bound", accessToken: "old", refreshToken: "r1", expiresAt: Date(timeIntervalSinceNow: -60))
            let bound = try await OAuth2Client(descriptor: descriptor(server, dpop: true), settings: settings)
                .refresh(earlier)
            #expect(bound.isDPoP && bound.proofKey != nil)
        }
        // A server (or something between) that answers the proof with a
        // Bearer token: refused, with the rotated refresh token said.
        try await withServer { server in
            server.route("POST", "/token") { _ in
                .json(
                    #"{"access_token":"plain","token_type":"Bearer","expires_in":3600,"refresh_token":"rotated-secret"}"#
                )
            }
            var keyless = Credential(
                providerID: "bound", accessToken: "old", tokenType: "DPoP", refreshToken: "r1",
                expiresAt: Date(timeIntervalSinceNow: -60))
            keyless.proofKey = nil
            let client = try OAuth2Client(
                descriptor: descriptor(server, dpop: true), settings: ClientSettings(clientID: "c", clientSecret: "s"))
            do {
                _ = try await client.refresh(keyless)
                Issue.record("a Bearer answer to a proof was taken")
            } catch let error as AuthKitError {
                guard case .invalidResponse(.refresh, let reason) = error.reason else { throw error }
                #expect(reason.kind == .invalidField("token_type") && reason.detail.contains("not bound"))
                #expect(reason.detail.contains("new refresh token") && !reason.detail.contains("rotated-secret"))
            }
            #expect(server.requests(to: "/token").map { $0.header("DPoP") != nil } == [true])
        }
    }

    @Test func aBoundClientCredentialsTokenIsRenewedAsBearerOnceDPoPIsOff() async throws {
        try await withServer { server in
            server.route("POST", "/token") { request in
                request.header("DPoP") == nil
                    ? .json(#"{"access_token":"plain","token_type":"Bearer","expires_in":3600}"#)
                    : .json(#"{"access_token":"bound","token_type":"DPoP","expires_in":3600}"#)
            }
            let settings = ClientSettings(clientID: "machine", clientSecret: "s")
            let bound = try await OAuth2Client(descriptor: descriptor(server, dpop: true), settings: settings)
                .clientCredentials(scopes: ["read"])
            #expect(bound.isDPoP && bound.proofKey != nil)
            let renewed = try await OAuth2Client(descriptor: descriptor(server, dpop: false), settings: settings)
                .refresh(bound)
            #expect(renewed.accessToken == "plain" && renewed.proofKey == nil && renewed.isBearer)
            #expect(server.requests(to: "/token").map { $0.header("DPoP") != nil } == [true, false])
        }
    }

    /// A call of the descriptor's own that says `query` authenticates in
    /// the URL only where nothing secret goes there: with a private key
    /// configured, its `basic` becomes a signed assertion, which is refused
    /// rather than put in a URL (access logs, proxies), as `post`'s secret is.
    @Test func aClientsAssertionOrSecretIsNotPutInAURL() async throws {
        try await withServer { server in
            server.route("GET", "/renew") { _ in .json(#"{"access_token":"new","token_type":"Bearer"}"#) }
            let directory = TemporaryDirectory.url("authkit-key-query")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let path = directory.appendingPathComponent("client.pem").path
            try Data(P256.Signing.PrivateKey().pemRepresentation.utf8).write(to: URL(fileURLWithPath: path))
            chmod(path, 0o600)
            for (authentication, settings) in [
                ("basic", ClientSettings(clientID: "c", privateKeyFile: path)),
                ("post", ClientSettings(clientID: "c", clientSecret: "s3cret")),
            ] {
                let descriptor = try ProviderDescriptor(
                    json: Data(
                        """
                        {"id": "bound", "protocol": "oauth2",
                         "authorization": {"url": "\(server.baseURL)/authorize"},
                         "token": {"url": "\(server.baseURL)/token"},
                         "refresh": {"method": "GET", "url": "\(server.baseURL)/renew", "encoding": "query",
                                     "secretsInURL": true, "clientAuthentication": "\(authentication)",
                                     "parameters": {"refresh_token": "{refresh_token}"}}}
                        """.utf8))
                let stored = Credential(
                    providerID: "bound", accessToken: "old", refreshToken: "r1",
                    expiresAt: Date(timeIntervalSinceNow: -60))
                await #expect {
                    _ = try await OAuth2Client(descriptor: descriptor, settings: settings).refresh(stored)
                } throws: { error in
                    guard case .invalidFile(let issues)? = error.authKitReason else { return false }
                    return issues.contains { $0.problem.contains("'query'") && !$0.problem.contains("s3cret") }
                }
            }
            #expect(server.requests(to: "/renew").isEmpty)
        }
    }

    /// A private key the code exchange cannot use (readable by others,
    /// missing, not a key) is said when the sign-in starts, naming the
    /// file: it was found at the exchange, after the person had signed in
    /// for nothing. A usable one starts the sign-in.
    @Test func anUnusableKeyFileIsSaidBeforeTheSignIn() async throws {
        try await withServer { server in
            let directory = TemporaryDirectory.url("authkit-key-start")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let path = directory.appendingPathComponent("client.pem").path
            try Data(P256.Signing.PrivateKey().pemRepresentation.utf8).write(to: URL(fileURLWithPath: path))
            let garbage = directory.appendingPathComponent("garbage.pem").path
            try Data("not a key".utf8).write(to: URL(fileURLWithPath: garbage))
            chmod(garbage, 0o600)
            func start(_ file: String) async throws {
                let client = try OAuth2Client(
                    descriptor: descriptor(server, auth: "private_key_jwt"),
                    settings: ClientSettings(
                        clientID: "c", redirectURI: "http://127.0.0.1:1/cb", privateKeyFile: file))
                _ = try await client.startAuthorization()
            }
            for file in [path, directory.appendingPathComponent("absent.pem").path, garbage] {
                if file == path { chmod(path, 0o644) }
                await #expect {
                    try await start(file)
                } throws: { error in
                    guard case .invalidSetting(_, .privateKey, let problem)? = error.authKitReason else { return false }
                    return problem.contains(file)
                }
            }
            chmod(path, 0o600)
            try await start(path)
            // private_key_jwt with a secret and no key: the setting missing, said as early.
            let secretOnly = try OAuth2Client(
                descriptor: descriptor(server, auth: "private_key_jwt"),
                settings: ClientSettings(clientID: "c", clientSecret: "s", redirectURI: "http://127.0.0.1:1/cb"))
            await #expect(throws: AuthKitError.missingSetting(providerID: "bound", .privateKey)) {
                _ = try await secretOnly.startAuthorization()
            }
            #expect(server.requests.isEmpty, "nothing is sent at a sign-in's start")
        }
    }

    @Test func privateKeyJWTSignsAFreshAssertionForTheTokenEndpoint() async throws {
        try await withServer { server in
            server.route("POST", "/token") { _ in .json(#"{"access_token":"m1","token_type":"Bearer"}"#) }
            let directory = TemporaryDirectory.url("authkit-key")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let key = P256.Signing.PrivateKey()
            let path = directory.appendingPathComponent("client.pem").path
            try Data(key.pemRepresentation.utf8).write(to: URL(fileURLWithPath: path))
            chmod(path, 0o600)
            let client = try OAuth2Client(
                descriptor: descriptor(server),
                settings: ClientSettings(clientID: "machine", privateKeyFile: path))
            let credential = try await client.clientCredentials(scopes: ["read"])
            #expect(credential.grantType == "client_credentials" && credential.refreshToken == nil)
            _ = try await client.refresh(credential) // asks again
            let forms = try server.requests(to: "/token").map { try formObject($0.bodyText) }
            #expect(forms.count == 2)
            var seen = Set<String>()
            for form in forms {
                #expect(form["grant_type"] == "client_credentials" && form["client_secret"] == nil)
                #expect(form["client_assertion_type"] == ClientAssertion.type)
                let (header, claims) = try parts(try #require(form["client_assertion"]))
                #expect(header["alg"] as? String == "ES256")
                #expect(claims["iss"] as? String == "machine" && claims["sub"] as? String == "machine")
                #expect(claims["aud"] as? String == "\(server.baseURL)/token")
                seen.insert(try #require(claims["jti"] as? String))
            }
            #expect(seen.count == 2, "a jti was reused")
            // Others can read it: refused before anything is sent.
            chmod(path, 0o644)
            await #expect {
                _ = try await client.clientCredentials()
            } throws: { error in
                guard case .invalidSetting(_, .privateKey, let problem)? = error.authKitReason else { return false }
                return problem.contains("chmod 600") && problem.contains(path)
            }
            #expect(server.requests(to: "/token").count == 2)
            chmod(path, 0o600)
            // An assertion (audience: the token endpoint) goes to no other
            // origin, where it could be replayed at the token endpoint.
            try await withServer { elsewhere in
                elsewhere.route("POST", "/introspect") { _ in .json(#"{"active":true}"#) }
                var split = try descriptor(server)
                split.introspectionURL = "\(elsewhere.baseURL)/introspect"
                let splitClient = try OAuth2Client(
                    descriptor: split, settings: ClientSettings(clientID: "machine", privateKeyFile: path))
                await #expect {
                    _ = try await splitClient.introspect("some-token")
                } throws: { error in
                    guard case .invalidFile(let issues)? = error.authKitReason else { return false }
                    return issues.first?.problem.contains("another origin than the token endpoint") == true
                }
                #expect(elsewhere.requests.isEmpty)
                // On the token endpoint's origin, it goes.
                server.route("POST", "/introspect") { _ in .json(#"{"active":true}"#) }
                split.introspectionURL = "\(server.baseURL)/introspect"
                let sameOrigin = try OAuth2Client(
                    descriptor: split, settings: ClientSettings(clientID: "machine", privateKeyFile: path))
                #expect(try await sameOrigin.introspect("some-token").isActive)
            }
        }
    }

    /// `token.assertionAudience: "issuer"` (draft-ietf-oauth-rfc7523bis,
    /// FAPI 2.0: a strict server takes its issuer as the sole audience and
    /// refuses the token endpoint's URL): the assertion's `aud` is the
    /// issuer, one string. Without an issuer in the descriptor, the file is
    /// refused naming the field.
    @Test func anAssertionNamesTheIssuerWhenTheDescriptorSaysSo() async throws {
        try await withServer { server in
            let issuer = "\(server.baseURL)/realms/main"
            server.route("POST", "/token") { request in
                let form = (try? formObject(request.bodyText)) ?? [:]
                let claims = (try? parts(form["client_assertion"] ?? "").claims) ?? [:]
                // As a strict server: its issuer, alone, or invalid_client.
                return claims["aud"] as? String == issuer
                    ? .json(#"{"access_token":"m1","token_type":"Bearer"}"#)
                    : .json(#"{"error":"invalid_client"}"#, status: 401)
            }
            func descriptor(issuer: String?) throws -> ProviderDescriptor {
                try ProviderDescriptor(
                    json: Data(
                        """
                        {"id": "strict", "protocol": "oauth2", "authorization": {"url": "\(server.baseURL)/authorize"},
                         \(issuer.map { #""issuer": {"identifier": "\#($0)"},"# } ?? "")
                         "token": {"url": "\(server.baseURL)/token", "clientAuthentication": "client_secret_jwt",
                                   "assertionAudience": "issuer"}}
                        """.utf8))
            }
            let secret = String(repeating: "s", count: 32)
            let client = try OAuth2Client(
                descriptor: descriptor(issuer: issuer),
                settings: ClientSettings(clientID: "machine", clientSecret: secret))
            #expect(try await client.clientCredentials().accessToken == "m1")
            #expect {
                _ = try descriptor(issuer: nil)
            } throws: { error in
                guard case .invalidFile(let issues)? = error.authKitReason else { return false }
                return issues.contains {
                    $0.field == "token.assertionAudience" && $0.problem.contains("issuer.identifier")
                }
            }
        }
    }

    /// A client_secret_jwt assertion is an HS256 MAC with the client secret,
    /// whose key RFC 7518 §3.2 wants at least 256 bits long: a shorter secret
    /// is refused when the client is made, naming the setting and the RFC,
    /// before any request (jwt-kit asserts on it: `authorize
    /// --client-credentials` with a 14-byte secret stopped a debug build
    /// with SIGILL). A 32-byte one signs; a private key, which signs
    /// instead, makes the secret's length not matter.
    @Test func aClientSecretTooShortForHS256IsRefusedBeforeAnyRequest() async throws {
        try await withServer { server in
            server.route("POST", "/token") { _ in .json(#"{"access_token":"m1","token_type":"Bearer"}"#) }
            let descriptor = try descriptor(server, auth: "client_secret_jwt")
            let short = "fourteen-bytes"
            #expect {
                _ = try OAuth2Client(
                    descriptor: descriptor, settings: ClientSettings(clientID: "c", clientSecret: short))
            } throws: { error in
                guard case .invalidSetting("bound", .clientSecret, let problem)? = error.authKitReason else {
                    return false
                }
                let text = (error as? AuthKitError)?.description ?? ""
                return problem.contains("14 bytes") && problem.contains("RFC 7518 §3.2") && !text.contains(short)
                    && text.contains("client secret")
            }
            // The assertion itself refuses it too, whoever calls it: never a trap.
            await #expect(throws: AuthKitError.self) {
                _ = try await ClientAssertion.parameters(
                    clientID: "c", audience: "\(server.baseURL)/token", signer: .secret(short), providerID: "bound")
            }
            #expect(server.requests.isEmpty)
            let long = String(repeating: "k", count: ClientAssertion.minimumSecretBytes)
            let client = try OAuth2Client(
                descriptor: descriptor, settings: ClientSettings(clientID: "c", clientSecret: long))
            _ = try await client.clientCredentials()
            let form = try formObject(try #require(server.requests(to: "/token").first).bodyText)
            let (header, _) = try parts(try #require(form["client_assertion"]))
            #expect(header["alg"] as? String == "HS256" && form["client_secret"] == nil)
        }
    }

    @Test func keyFilesThatHoldNoPrivateKeyAreRefusedByName() throws {
        let directory = TemporaryDirectory.url("authkit-key")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        func refusal(_ text: String) -> String? {
            let path = directory.appendingPathComponent("key-\(text.count)").path
            _ = FileManager.default.createFile(
                atPath: path, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600])
            do {
                _ = try ClientKey.load(path: path, providerID: "p")
                return nil
            } catch let error as AuthKitError {
                guard case .invalidSetting(_, .privateKey, let problem) = error.reason else {
                    return "\(error)"
                }
                return problem
            } catch {
                return "\(error)"
            }
        }
        let publicPEM = P256.Signing.PrivateKey().publicKey.pemRepresentation
        #expect(refusal(publicPEM)?.contains("public key") == true)
        #expect(refusal(#"{"kty":"EC","crv":"P-256","x":"a","y":"b"}"#)?.contains("no \"d\"") == true)
        #expect(refusal("not a key")?.contains("neither PEM") == true)
        #expect(refusal(P256.Signing.PrivateKey().pemRepresentation) == nil)
        // A bundle of the key and its certificate (mTLS tools write them): the key is used.
        let certificate = "-----BEGIN CERTIFICATE-----\nMIIBfake\n-----END CERTIFICATE-----"
        #expect(refusal(certificate + "\n" + P256.Signing.PrivateKey().pemRepresentation) == nil)
        #expect(refusal(certificate)?.contains("certificate alone") == true)
        // Two keys would be a guess; an encrypted one cannot be read.
        let two = P256.Signing.PrivateKey().pemRepresentation + "\n" + P256.Signing.PrivateKey().pemRepresentation
        #expect(refusal(two)?.contains("holds 2 private keys") == true)
        let encrypted = "-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIIB\n-----END ENCRYPTED PRIVATE KEY-----"
        #expect(refusal(encrypted)?.contains("openssl pkey") == true)
        #expect(refusal(#"{"kty":"RSA","n":"a","e":"AQAB","d":"b","alg":"HS256"}"#)?.contains("alg \"HS256\"") == true)
    }

    /// An RSA JWK whose `alg` is PS256 signs its assertions PS256 (FAPI 2.0
    /// allows no RS256), verified here with swift-crypto's RSASSA-PSS; one
    /// without `alg` signs RS256, as before.
    @Test func anRSAKeyWhoseJWKSaysPS256SignsPS256() async throws {
        let key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let der = [UInt8](key.derRepresentation)
        let directory = TemporaryDirectory.url("authkit-key")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        for alg in ["PS256", nil] {
            let members = try #require(RSAJWK.members(pkcs1: der, alg: alg))
            let path = directory.appendingPathComponent("rsa-\(alg ?? "none").json").path
            _ = FileManager.default.createFile(
                atPath: path, contents: try JSONSerialization.data(withJSONObject: members),
                attributes: [.posixPermissions: 0o600])
            let loaded = try ClientKey.load(path: path, providerID: "p")
            #expect(loaded.algorithm == (alg ?? "RS256"))
            let parameters = try await ClientAssertion.parameters(
                clientID: "machine", audience: "https://as.example/token", signer: .privateKey(loaded),
                providerID: "p")
            let assertion = try #require(parameters.first { $0.0 == "client_assertion" }?.1)
            let (header, _) = try parts(assertion)
            #expect(header["alg"] as? String == (alg ?? "RS256") && header["kid"] as? String == "k1")
            let segments = assertion.split(separator: ".")
            let signature = _RSA.Signing.RSASignature(
                rawRepresentation: Data(try #require(Base64URL.decode(segments[2]))))
            let input = Data("\(segments[0]).\(segments[1])".utf8)
            #expect(
                key.publicKey.isValidSignature(signature, for: input, padding: alg == nil ? .insecurePKCS1v1_5 : .PSS))
            #expect(
                !key.publicKey.isValidSignature(signature, for: input, padding: alg == nil ? .PSS : .insecurePKCS1v1_5))
        }
    }

    @Test func aClientWithNeitherSecretNorKeyGetsNoClientCredentials() async throws {
        try await withServer { server in
            let client = try OAuth2Client(descriptor: descriptor(server), settings: ClientSettings(clientID: "c"))
            await #expect(throws: AuthKitError.missingSetting(providerID: "bound", .clientSecret)) {
                _ = try await client.clientCredentials()
            }
            #expect(server.requests.isEmpty)
        }
    }

    // MARK: - Token exchange and introspection

    @Test func aTokenIsExchangedForAnotherAudience() async throws {
        try await withServer { server in
            server.route("POST", "/token") { _ in
                .json(
                    #"{"access_token":"downstream","token_type":"Bearer","expires_in":60,"issued_token_type":"urn:ietf:params:oauth:token-type:access_token"}"#
                )
            }
            let client = try OAuth2Client(
                descriptor: descriptor(server), settings: ClientSettings(clientID: "svc", clientSecret: "s"))
            let credential = try await client.exchangeToken(
                "upstream-token", audience: ["https://api.example"], scopes: ["read"])
            #expect(credential.accessToken == "downstream")
            let form = try formObject(try #require(server.requests(to: "/token").first).bodyText)
            #expect(form["grant_type"] == "urn:ietf:params:oauth:grant-type:token-exchange")
            #expect(
                form["subject_token"] == "upstream-token" && form["subject_token_type"] == OAuth2Client.accessTokenType)
            #expect(form["audience"] == "https://api.example" && form["scope"] == "read")
        }
    }

    /// RFC 8693 §2.2.1: a token that is not an access token comes with
    /// `token_type` N_A; returned as it came (not sendable as Bearer), while
    /// an access token of type N_A is still refused.
    @Test func anIssuedTokenThatIsNoAccessTokenMayBeOfTypeNA() async throws {
        try await withServer { server in
            let issued = Recorder<String>()
            server.route("POST", "/token") { _ in
                .json(
                    #"{"access_token":"header.payload.sig","token_type":"N_A","issued_token_type":"\#(issued.all.last ?? "")"}"#
                )
            }
            let client = try OAuth2Client(
                descriptor: descriptor(server), settings: ClientSettings(clientID: "svc", clientSecret: "s"))
            let idTokenType = "urn:ietf:params:oauth:token-type:id_token"
            issued.append(idTokenType)
            let token = try await client.exchangeToken("upstream-token", requestedTokenType: idTokenType)
            #expect(token.accessToken == "header.payload.sig" && token.tokenType == "N_A" && !token.isBearer)
            issued.append(OAuth2Client.accessTokenType)
            await #expect {
                _ = try await client.exchangeToken("upstream-token")
            } throws: { error in
                guard case .invalidResponse(_, .invalidField("token_type", _))? = error.authKitReason else {
                    return false
                }
                return true
            }
        }
    }

    /// A token endpoint that takes JSON (`token.encoding: json`) gets a
    /// parameter given more than once (RFC 8693's `audience`) as an array,
    /// not only its last value; an answer that echoes the actor token shows
    /// it masked.
    @Test func repeatedParametersInJSONAreArraysAndTheActorTokenIsMasked() async throws {
        try await withServer { server in
            server.route("POST", "/token") { _ in
                .json(
                    #"{"error":"invalid_request","error_description":"actor actor-secret-token-0123456789 refused"}"#,
                    status: 400)
            }
            var json = try descriptor(server)
            json.token?.encoding = .json
            let client = try OAuth2Client(
                descriptor: json, settings: ClientSettings(clientID: "svc", clientSecret: "s"))
            await #expect {
                _ = try await client.exchangeToken(
                    "upstream-token", audience: ["https://a.example", "https://b.example"],
                    actorToken: ("actor-secret-token-0123456789", OAuth2Client.accessTokenType))
            } throws: { error in
                guard case .providerError? = error.authKitReason else { return false }
                return !"\(error)".contains("actor-secret-token-0123456789")
            }
            let body = try #require(server.requests(to: "/token").first).body
            let object = try #require(try JSONSerialization.jsonObject(with: body) as? [String: Any])
            #expect(object["audience"] as? [String] == ["https://a.example", "https://b.example"])
            #expect(object["subject_token"] as? String == "upstream-token")
        }
    }

    /// The token endpoint and the resource share an origin, each with its
    /// own nonce (RFC 9449 §8, §9): after a 401 `invalid_token` (with the
    /// resource's nonce) and a refresh (with the token endpoint's), the
    /// request is sent again with the resource's nonce, and succeeds.
    @Test func aResourceNonceIsAnsweredAgainAfterARefresh() async throws {
        try await withServer { server in
            server.route("POST", "/token") { request in
                let nonce = (try? parts(request.header("DPoP") ?? "").claims["nonce"] as? String) ?? nil
                guard nonce == "as-nonce" else {
                    return .json(#"{"error":"use_dpop_nonce"}"#, status: 400, headers: [("DPoP-Nonce", "as-nonce")])
                }
                let access = request.bodyText.contains("grant_type=refresh_token") ? "at2" : "at1"
                return .json(
                    #"{"access_token":"\#(access)","token_type":"DPoP","refresh_token":"rt","expires_in":3600}"#,
                    headers: [("DPoP-Nonce", "as-nonce")])
            }
            server.route("GET", "/api") { request in
                let nonce = (try? parts(request.header("DPoP") ?? "").claims["nonce"] as? String) ?? nil
                func refuse(_ code: String) -> StubResponse {
                    .json(
                        "{}", status: 401,
                        headers: [("WWW-Authenticate", #"DPoP error="\#(code)""#), ("DPoP-Nonce", "rs-nonce")])
                }
                guard request.header("Authorization") == "DPoP at2" else { return refuse("invalid_token") }
                // The proof is for this request and this token (§4.2, §4.3): the
                // one after the refresh must hash at2, not the token it replaced.
                let claims = (try? parts(request.header("DPoP") ?? "").claims) ?? [:]
                let ath = Data(SHA256.hash(data: Data("at2".utf8))).base64EncodedString()
                    .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                    .replacingOccurrences(of: "=", with: "")
                guard claims["ath"] as? String == ath, claims["htm"] as? String == "GET",
                    claims["htu"] as? String == "\(server.baseURL)/api"
                else { return .json(#"{"error":"wrong proof"}"#, status: 400) }
                return nonce == "rs-nonce" ? .json(#"{"ok":true}"#) : refuse("use_dpop_nonce")
            }
            let client = try OAuth2Client(
                descriptor: descriptor(server, dpop: true),
                settings: ClientSettings(clientID: "c", redirectURI: "http://127.0.0.1:1/cb"))
            let (_, pending) = try await client.startAuthorization()
            let credential = try await client.exchange(code: "c0", pending: pending)
            let store = InMemoryCredentialStore([credential])
            let source = CredentialSource(authenticator: client, store: store, key: credential.key)
            let (response, _) = try await source.send(
                HTTPRequest(method: .get, url: URL(string: "\(server.baseURL)/api")!))
            #expect(response.status == .ok)
            // The resource's nonce, kept apart from the token endpoint's, goes
            // with the request after the refresh: it was refused once more
            // when the refresh's nonce had replaced it.
            #expect(
                server.requests(to: "/api").map { $0.header("Authorization") ?? "" } == ["DPoP at1", "DPoP at2"])
            #expect(await store.credential(for: credential.key)?.accessToken == "at2")
        }
    }

    /// RFC 9449 §9: a resource server may hand out the next nonce with any
    /// answer, a redirect's too. Dropped there, the next hop's proof carried
    /// the old one, was refused with `use_dpop_nonce`, and the whole chain
    /// was sent again.
    @Test func aNonceGivenWithARedirectIsUsedByTheNextHop() async throws {
        try await withServer { server in
            server.route("POST", "/token") { request in
                let nonce = (try? parts(request.header("DPoP") ?? "").claims["nonce"] as? String) ?? nil
                guard nonce == "as-nonce" else {
                    return .json(#"{"error":"use_dpop_nonce"}"#, status: 400, headers: [("DPoP-Nonce", "as-nonce")])
                }
                return .json(
                    #"{"access_token":"at1","token_type":"DPoP","refresh_token":"rt","expires_in":3600}"#,
                    headers: [("DPoP-Nonce", "as-nonce")])
            }
            server.route("GET", "/start") { _ in
                StubResponse(status: 307, headers: [("Location", "/api"), ("DPoP-Nonce", "rs-nonce")])
            }
            server.route("GET", "/api") { request in
                let nonce = (try? parts(request.header("DPoP") ?? "").claims["nonce"] as? String) ?? nil
                return nonce == "rs-nonce"
                    ? .json(#"{"ok":true}"#)
                    : .json(
                        "{}", status: 401,
                        headers: [("WWW-Authenticate", #"DPoP error="use_dpop_nonce""#), ("DPoP-Nonce", "rs-nonce")])
            }
            let source = try await boundSource(server)
            let (response, body) = try await source.send(
                HTTPRequest(method: .get, url: URL(string: "\(server.baseURL)/start")!), followRedirects: true)
            body.cancel()
            #expect(response.status == .ok)
            #expect(server.requests(to: "/start").count == 1 && server.requests(to: "/api").count == 1)
        }
    }

    @Test func introspectionReadsActiveAndRefusesAnAnswerWithout() async throws {
        try await withServer { server in
            let answers = Recorder<String>()
            server.route("POST", "/introspect") { _ in
                answers.append("")
                return answers.all.count == 1
                    ? .json(#"{"active":true,"scope":"read write","client_id":"svc","sub":"alice","exp":2000000000}"#)
                    : .json(#"{"scope":"read"}"#)
            }
            let base = server.baseURL
            let descriptor = try ProviderDescriptor(
                json: Data(
                    """
                    {"id": "bound", "protocol": "oauth2", "introspection": "\(base)/introspect",
                     "authorization": {"url": "\(base)/authorize"}, "token": {"url": "\(base)/token"}}
                    """.utf8))
            let client = try OAuth2Client(
                descriptor: descriptor, settings: ClientSettings(clientID: "svc", clientSecret: "s"))
            let answer = try await client.introspect("tok", hint: "access_token")
            #expect(answer.isActive && answer.scopes == ["read", "write"] && answer.subject == "alice")
            #expect(answer.expiresAt == Date(timeIntervalSince1970: 2_000_000_000))
            let form = try formObject(try #require(server.requests(to: "/introspect").first).bodyText)
            #expect(form == ["token": "tok", "token_type_hint": "access_token"])
            await #expect {
                _ = try await client.introspect("tok")
            } throws: { error in
                guard case .invalidResponse(.introspection, .missingField("active", _))? = error.authKitReason else {
                    return false
                }
                return true
            }
        }
    }

    /// docs/sender-constrained.md's fragment, as it is shown.
    @Test func theGuidesExchangeAndIntrospectionFragmentRuns() async throws {
        try await withServer { server in
            server.route("POST", "/token") { _ in .json(#"{"access_token":"orders-token","token_type":"Bearer"}"#) }
            server.route("POST", "/introspect") { _ in .json(#"{"active":true,"scope":"orders:read"}"#) }
            let base = server.baseURL
            let client = try OAuth2Client(
                descriptor: try ProviderDescriptor(
                    json: Data(
                        """
                        {"id": "corp", "protocol": "oauth2", "introspection": "\(base)/introspect",
                         "authorization": {"url": "\(base)/authorize"}, "token": {"url": "\(base)/token"}}
                        """.utf8)), settings: ClientSettings(clientID: "svc", clientSecret: "s"))
            let upstream = Credential(providerID: "corp", accessToken: "user-token")
            let downstream = try await client.exchangeToken(
                upstream.accessToken, audience: ["https://orders.internal"], scopes: ["orders:read"])
            let state = try await client.introspect(downstream.accessToken, hint: "access_token")
            print(state.isActive, state.scopes ?? [])
            #expect(state.isActive && state.scopes == ["orders:read"])
            #expect(
                try formObject(try #require(server.requests(to: "/introspect").first).bodyText)["token"]
                    == "orders-token")
        }
    }
}
