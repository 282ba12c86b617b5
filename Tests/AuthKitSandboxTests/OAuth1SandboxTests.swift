import AuthKit
@_spi(Reproducible) import AuthKitOAuth1
import AuthKitSandbox
import AuthKitTestSupport
import Foundation
import Testing

/// X (Twitter) through the emulation: every step signed, every signature checked.
@Suite struct OAuth1SandboxTests {
    @Test func twitterSignInAndASignedRequest() async throws {
        try await Sandbox.with(emulating: try bundled("twitter")) { sandbox in
            let client = try OAuth1Client(descriptor: sandbox.descriptor, settings: sandbox.clientSettings)
            let credential = try await client.authorize(using: sandbox.userAgent(account: "dave"))
            #expect(credential.tokenSecret != nil)
            #expect(sandbox.events.map(\.step) == ["request-token", "authorize", "consent", "access-token"])
            let (status, me) = try await getJSON(sandbox.whoamiURL, with: client, credential: credential)
            #expect(status == 200 && me["account"] as? String == "dave")
        }
    }

    /// A provider whose token calls are `GET` (the descriptor's
    /// `requestTokenMethod` / `accessTokenMethod`) is emulated with them: the
    /// client signs in by `GET`, and a client that sends `POST` is not answered.
    @Test func tokenCallsByGET() async throws {
        var descriptor = try bundled("flickr")
        descriptor.oauth1?.requestTokenMethod = "GET"
        descriptor.oauth1?.accessTokenMethod = "GET"
        try await Sandbox.with(emulating: descriptor) { sandbox in
            let client = try OAuth1Client(descriptor: sandbox.descriptor, settings: sandbox.clientSettings)
            let credential = try await client.authorize(using: sandbox.userAgent())
            #expect(!credential.accessToken.isEmpty && credential.tokenSecret != nil)
            #expect(sandbox.events.map(\.step) == ["request-token", "authorize", "consent", "access-token"])

            var posting = sandbox.descriptor
            posting.oauth1?.requestTokenMethod = "POST"
            let poster = try OAuth1Client(descriptor: posting, settings: sandbox.clientSettings)
            await #expect(throws: AuthKitError.self) { try await poster.authorize(using: sandbox.userAgent()) }
        }
    }

    @Test func outOfBandPIN() async throws {
        try await Sandbox.with(emulating: try bundled("twitter"), options: SandboxOptions(redirectURIs: ["oob"])) {
            sandbox in
            var settings = sandbox.clientSettings
            settings.redirectURI = OAuth1Client.outOfBand
            let client = try OAuth1Client(descriptor: sandbox.descriptor, settings: settings)
            let credential = try await client.authorize(using: sandbox.userAgent())
            #expect(!credential.accessToken.isEmpty)
            await #expect { try await client.authorize(using: sandbox.userAgent(approving: false)) } throws: { error in
                (error as? AuthKitError)?.code == .accessDenied
            }
        }
    }

    /// A web backend's OAuth 1.0a sign-in, split over two requests: the
    /// agent's `redirect(for:)` plays the browser. An out-of-band attempt has
    /// no redirect, and the agent says so instead of returning the PIN page
    /// (or, as a loopback browser, instead of returning quietly).
    @Test func aBackendSignsInWithRedirectFor() async throws {
        let callback = "https://app.example/oauth/callback"
        try await Sandbox.with(
            emulating: try bundled("twitter"), options: SandboxOptions(redirectURIs: [callback, "oob"])
        ) { sandbox in
            let client = try OAuth1Client(descriptor: sandbox.descriptor, settings: sandbox.clientSettings)
            let (url, pending) = try await client.startAuthorization(redirectURI: URL(string: callback))
            let back = try await sandbox.userAgent(account: "erin").redirect(for: url)
            #expect(back.absoluteString.hasPrefix(callback + "?"))
            let credential = try await client.exchange(redirect: back, pending: pending)
            #expect(
                try await getJSON(sandbox.whoamiURL, with: client, credential: credential).1["account"] as? String
                    == "erin")

            // As a browser for a loopback listener, the agent says so too,
            // rather than returning and leaving the listener to wait.
            for browse in [false, true] {
                let (pinPage, _) = try await client.startAuthorization(redirectURI: nil)
                await #expect {
                    if browse {
                        try await sandbox.userAgent().browse(pinPage)
                    } else {
                        _ = try await sandbox.userAgent().redirect(for: pinPage)
                    }
                } throws: { error in
                    guard case .misuse(.userAgentBrokeProtocol(let detail))? = error.authKitReason else {
                        return false
                    }
                    return detail.contains("PIN")
                }
            }
        }
    }

    /// A request token is decided once: two consent pages opened for it
    /// (two tabs) cannot both approve: the second answer replaced the
    /// verifier and the account, as no provider lets it. An authorization
    /// URL naming `oauth_token` twice is refused.
    @Test func aRequestTokenIsApprovedOnce() async throws {
        let callback = "https://app.example/oauth/callback"
        try await Sandbox.with(
            emulating: try bundled("twitter"), options: SandboxOptions(redirectURIs: [callback])
        ) { sandbox in
            let client = try OAuth1Client(descriptor: sandbox.descriptor, settings: sandbox.clientSettings)
            let (url, pending) = try await client.startAuthorization(redirectURI: URL(string: callback))
            var pages = [(request: String, approval: String)]()
            for _ in 0..<2 {
                let page = try await raw("GET", url)
                pages.append(
                    (
                        try #require(hiddenValue("request", in: page.body), "\(page.status) \(page.body.prefix(300))"),
                        try #require(hiddenValue("approval", in: page.body))
                    ))
            }
            var answers = [(status: Int, location: String?)]()
            for (page, account) in zip(pages, ["alice", "bob"]) {
                let answer = try await raw(
                    "POST", sandbox.baseURL.appendingPathComponent("consent"),
                    headers: ["Content-Type": "application/x-www-form-urlencoded"],
                    body: "request=\(page.request)&approval=\(page.approval)&decision=approve&account=\(account)")
                answers.append((answer.status, answer.headers[.location]))
            }
            #expect(answers[0].status == 302 && answers[1].status == 400 && answers[1].location == nil, "\(answers)")
            let back = try #require(answers[0].location.flatMap(URL.init(string:)))
            let credential = try await client.exchange(redirect: back, pending: pending)
            #expect(
                try await getJSON(sandbox.whoamiURL, with: client, credential: credential).1["account"] as? String
                    == "alice")

            let token = try #require(URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems?.first?.value)
            let twice = try await raw("GET", URL(string: url.absoluteString + "&oauth_token=\(token)")!)
            #expect(twice.status == 400 && twice.body.contains("more than once"), "\(twice.status)")
        }
    }

    /// The sandbox's signature check against an independent signer: a
    /// request oauthlib signs, the sandbox accepts (and one it tampers with, it refuses).
    @Test(.enabled { await InteropPeer.isEnabled }) func acceptsWhatOauthlibSigns() async throws {
        try await Sandbox.with(emulating: try bundled("twitter")) { sandbox in
            let url = sandbox.baseURL.absoluteString + "/api.x.com/oauth/request_token?x_auth_access_type=read"
            let script = """
                import sys
                from oauthlib.oauth1 import Client
                client = Client('sandbox-client', client_secret='sandbox-secret', callback_uri='http://127.0.0.1:8765/callback')
                print(client.sign(sys.argv[1], http_method='POST')[1]['Authorization'])
                for realm in ['Photos, Inc', '100%']:
                    client = Client('sandbox-client', client_secret='sandbox-secret', callback_uri='oob', realm=realm)
                    print(client.sign(sys.argv[1], http_method='POST')[1]['Authorization'])
                """
            let signed = try await ChildProcess.run("/usr/bin/env", [InteropPeer.python, "-c", script, url])
            let headers = signed.standardOutput.split(separator: "\n").map(String.init)
            let header = try #require(headers.first)
            #expect(signed.exit.status == 0 && headers.count == 3, "\(signed.standardError)")
            // A realm with a comma or a '%', as oauthlib writes it (a quoted string).
            for withRealm in headers.dropFirst() {
                let answer = try await raw(
                    "POST", try #require(URL(string: url)), headers: ["Authorization": withRealm])
                #expect(answer.status == 200, "\(withRealm): \(answer.body)")
            }
            #expect(header.hasPrefix("OAuth "))
            let accepted = try await raw("POST", try #require(URL(string: url)), headers: ["Authorization": header])
            #expect(
                accepted.status == 200 && accepted.body.contains("oauth_callback_confirmed=true"), "\(accepted.body)")
            let tampered = try await raw(
                "POST", try #require(URL(string: url.replacingOccurrences(of: "read", with: "write"))),
                headers: ["Authorization": header.replacingOccurrences(of: "oauth_nonce=\"", with: "oauth_nonce=\"x")])
            #expect(tampered.status == 401)
        }
    }

    @Test func aForgedSignatureAReplayedNonceAndAStaleTimestampAreRefused() async throws {
        let now = Date()
        try await Sandbox.with(emulating: try bundled("twitter"), options: SandboxOptions(now: { now })) { sandbox in
            let url = try #require(URL(string: sandbox.baseURL.absoluteString + "/api.x.com/oauth/request_token"))
            func send(_ signer: OAuth1Signer, secretOverride: String? = nil) async throws -> Int {
                var header = try signer.authorizationHeader(
                    method: "POST", url: url,
                    protocolParameters: [("oauth_callback", "http://127.0.0.1:8765/callback")])
                if let secretOverride {
                    header = header.replacingOccurrences(
                        of: "oauth_signature=\"", with: "oauth_signature=\"\(secretOverride)")
                }
                return try await raw("POST", url, headers: ["Authorization": header]).status
            }
            let stamp = String(Int(now.timeIntervalSince1970))
            let fixed = OAuth1Signer(
                consumerKey: "sandbox-client", consumerSecret: "sandbox-secret",
                nonceAndTimestamp: .fixed(nonce: "n1", timestamp: stamp))
            #expect(try await send(fixed) == 200)
            #expect(try await send(fixed) == 401) // same nonce and timestamp again
            let wrongSecret = OAuth1Signer(
                consumerKey: "sandbox-client", consumerSecret: "guess",
                nonceAndTimestamp: .fixed(nonce: "n2", timestamp: stamp))
            #expect(try await send(wrongSecret) == 401)
            let stale = OAuth1Signer(
                consumerKey: "sandbox-client", consumerSecret: "sandbox-secret",
                nonceAndTimestamp: .fixed(nonce: "n3", timestamp: String(Int(now.timeIntervalSince1970) - 3600)))
            #expect(try await send(stale) == 401)
            #expect(sandbox.events.map(\.summary).contains { $0.hasPrefix("invalid_signature") })
            #expect(sandbox.events.map(\.summary).contains { $0.hasPrefix("nonce_used") })
            #expect(sandbox.events.map(\.summary).contains { $0.hasPrefix("timestamp_refused") })
        }
    }

    /// A nonce counts only once its request's signature verifies: anyone can
    /// send a request with the client's next nonce, and an unsigned one took
    /// that nonce away from the client. One longer than 128 bytes is
    /// refused by name (each is kept for five minutes).
    @Test func aNonceCountsOnlyOnceItsSignatureVerifies() async throws {
        let now = Date()
        try await Sandbox.with(emulating: try bundled("twitter"), options: SandboxOptions(now: { now })) { sandbox in
            let url = try #require(URL(string: sandbox.baseURL.absoluteString + "/api.x.com/oauth/request_token"))
            let stamp = String(Int(now.timeIntervalSince1970))
            func send(secret: String, nonce: String) async throws -> (status: Int, body: String) {
                let signer = OAuth1Signer(
                    consumerKey: "sandbox-client", consumerSecret: secret,
                    nonceAndTimestamp: .fixed(nonce: nonce, timestamp: stamp))
                let header = try signer.authorizationHeader(
                    method: "POST", url: url, protocolParameters: [("oauth_callback", "oob")])
                let answer = try await raw("POST", url, headers: ["Authorization": header])
                return (answer.status, answer.body)
            }
            let forged = try await send(secret: "guess", nonce: "n1")
            #expect(forged.status == 401 && forged.body.contains("invalid_signature"), "\(forged.body)")
            let signed = try await send(secret: "sandbox-secret", nonce: "n1")
            #expect(signed.status == 200, "\(signed.body)")
            let replayed = try await send(secret: "sandbox-secret", nonce: "n1")
            #expect(replayed.status == 401 && replayed.body.contains("nonce_used"), "\(replayed.body)")
            let long = try await send(secret: "sandbox-secret", nonce: String(repeating: "n", count: 129))
            #expect(long.status == 400 && long.body.contains("oauth_nonce is 129 bytes"), "\(long.body)")
        }
    }
}

/// What a strict server (oauthlib) refuses, the sandbox refuses too, saying
/// why; each request here is signed correctly, so only the check refuses it.
extension OAuth1SandboxTests {
    /// `OAuth k="v", …` with the pairs as given (names and values §3.6-encoded),
    /// signed over them by AuthKit's signer: a careless or hostile client.
    private static func header(
        _ pairs: [(String, String)], method: String = "POST", url: URL, contentType: String? = nil, body: String? = nil
    ) throws -> String {
        let signer = OAuth1Signer(consumerKey: "sandbox-client", consumerSecret: "sandbox-secret")
        let signature = try signer.signature(
            method: method, url: url, contentType: contentType, body: body.map { Data($0.utf8) },
            protocolParameters: pairs, tokenSecret: nil)
        return "OAuth "
            + (pairs + [("oauth_signature", signature)]).map {
                "\(PercentEncoding.encode($0.0))=\"\(PercentEncoding.encode($0.1))\""
            }.joined(separator: ", ")
    }

    /// RFC 5849 §3.1: each protocol parameter once (a second `oauth_callback`
    /// was taken over the first); `oauth_version` 1.0 if given; §3.3: the
    /// timestamp a positive integer in digits (`….5`, `1.7…e+09`, `+…` were
    /// read as numbers; a leading zero writes the same second as another
    /// text); §3.5: an `oauth_` parameter in the header and the query or
    /// body too. Each is 400 naming the parameter; the query's and body's
    /// own parameters are still signed and taken.
    @Test func aProtocolParameterTwiceElsewhereOrMalformedIsRefused() async throws {
        let now = Date()
        let stamp = String(Int(now.timeIntervalSince1970))
        try await Sandbox.with(emulating: try bundled("twitter"), options: SandboxOptions(now: { now })) { sandbox in
            let endpoint = sandbox.baseURL.absoluteString + "/api.x.com/oauth/request_token"
            var nonce = 0
            func common(timestamp: String = stamp, version: String = "1.0") -> [(String, String)] {
                nonce += 1
                return [
                    ("oauth_consumer_key", "sandbox-client"), ("oauth_nonce", "nonce\(nonce)"),
                    ("oauth_signature_method", "HMAC-SHA1"), ("oauth_timestamp", timestamp),
                    ("oauth_version", version),
                ]
            }
            let callback = ("oauth_callback", "http://127.0.0.1:8765/callback")
            func send(
                _ pairs: [(String, String)], query: String = "", body: String? = nil
            ) async throws -> (status: Int, body: String) {
                let url = try #require(URL(string: endpoint + query))
                let type = body == nil ? nil : "application/x-www-form-urlencoded"
                var headers = ["Authorization": try Self.header(pairs, url: url, contentType: type, body: body)]
                if let type { headers["Content-Type"] = type }
                let answer = try await raw("POST", url, headers: headers, body: body)
                return (answer.status, answer.body)
            }

            let fine = try await send([callback] + common(), query: "?x_auth_access_type=read", body: "a=1")
            #expect(fine.status == 200, "\(fine.body)")
            for (pairs, query, body, said) in [
                (
                    [("oauth_callback", "http://evil.example/cb"), callback] + common(), "", nil,
                    "oauth_callback is in the Authorization header twice"
                ),
                (
                    [callback, ("oauth_consumer_key", "someone-else")] + common(), "", nil,
                    "oauth_consumer_key is in the Authorization header twice"
                ),
                ([callback] + common(version: "2.0"), "", nil, "oauth_version is '2.0'"),
                (
                    [callback] + common(), "?oauth_callback=http%3A%2F%2Fevil.example%2F", nil,
                    "oauth_callback is in the query"
                ),
                ([callback] + common(), "?oauth%5Fnonce=x&z=1", nil, "oauth_nonce is in the query"),
                ([callback] + common(), "", "a=1&oauth_verifier=v", "oauth_verifier is in the form body"),
                (
                    [callback] + common(timestamp: stamp + ".5"), "", nil,
                    "oauth_timestamp '\(stamp).5' is not a positive integer"
                ),
                (
                    [callback] + common(timestamp: String(format: "%.9e", now.timeIntervalSince1970.rounded(.down))),
                    "", nil, "is not a positive integer"
                ),
                ([callback] + common(timestamp: "+" + stamp), "", nil, "is not a positive integer"),
                ([callback] + common(timestamp: "0" + stamp), "", nil, "is not a positive integer"),
            ] as [([(String, String)], String, String?, String)] {
                let answer = try await send(pairs, query: query, body: body)
                #expect(answer.status == 400 && answer.body.contains(said), "\(said): \(answer.status) \(answer.body)")
            }
        }
    }

    /// RFC 5849 §3.5.1's header read as RFC 9110's auth-params: a quoted
    /// `realm` may hold a comma or a `%` (it is not §3.6-encoded) or an
    /// escaped quote. Each was "no OAuth Authorization header" (the header
    /// was split on every comma and `realm` percent-decoded).
    @Test func aRealmIsAQuotedStringThatMayHoldCommas() async throws {
        try await Sandbox.with(emulating: try bundled("twitter")) { sandbox in
            let url = try #require(URL(string: sandbox.baseURL.absoluteString + "/api.x.com/oauth/request_token"))
            let signer = OAuth1Signer(consumerKey: "sandbox-client", consumerSecret: "sandbox-secret")
            for realm in ["Photos, Inc", "100%", #"Say "hi", \ bye"#, "http://sp.example.com/"] {
                let header = try signer.authorizationHeader(
                    method: "POST", url: url, protocolParameters: [("oauth_callback", "oob")], realm: realm)
                let answer = try await raw("POST", url, headers: ["Authorization": header])
                #expect(answer.status == 200, "\(realm): \(answer.body)")
            }
            let broken = try await raw(
                "POST", url, headers: ["Authorization": #"OAuth realm="Photos, oauth_consumer_key="sandbox-client""#])
            #expect(broken.status == 400 && broken.body.contains("quoted string"), "\(broken.body)")
        }
    }

    /// An escape that is not UTF-8 (`%FF`) is signed as its byte by AuthKit
    /// and as U+FFFD by oauthlib (RFC 5849 §3.6 encodes UTF-8 text): the
    /// sandbox refuses it, naming it, instead of accepting one signer's
    /// reading and calling the other's signature wrong.
    @Test func anEscapeThatIsNotUTF8IsRefusedByName() async throws {
        try await Sandbox.with(emulating: try bundled("twitter")) { sandbox in
            let signer = OAuth1Signer(consumerKey: "sandbox-client", consumerSecret: "sandbox-secret")
            for (query, status) in [("?q=%C3%A9", 200), ("?q=%FF", 400), ("?q=%C3&r=1", 400)] {
                let url = try #require(
                    URL(string: sandbox.baseURL.absoluteString + "/api.x.com/oauth/request_token" + query))
                let header = try signer.authorizationHeader(
                    method: "POST", url: url, protocolParameters: [("oauth_callback", "oob")])
                let answer = try await raw("POST", url, headers: ["Authorization": header])
                #expect(answer.status == status, "\(query): \(answer.body)")
                if status == 400 { #expect(answer.body.contains("not UTF-8"), "\(answer.body)") }
            }
        }
    }
}
