import AuthKit
import AuthKitTestSupport
import Foundation
import HTTPTypes
import Testing

@_spi(Reproducible) @testable import AuthKitOAuth1

#if canImport(FoundationNetworking)
    import AuthKitFoundationNetworking
    import FoundationNetworking
#endif

/// The three-legged flow against a stub provider that records the exact bytes
/// AuthKit sends.
@Suite struct FlowTests {
    static let fixed = NonceAndTimestamp.fixed(nonce: "fixednonce0123456789", timestamp: "1700000000")

    private func routeHappyPath(_ server: TestHTTPServer) {
        server.route("POST", "/request_token") { _ in
            .form("oauth_token=request-token&oauth_token_secret=request%2Bsecret&oauth_callback_confirmed=true")
        }
        server.route("POST", "/access_token") { _ in
            .form("oauth_token=access-token&oauth_token_secret=access-secret&user_id=6253282&screen_name=twitterapi")
        }
    }

    /// A token or secret holding a control character (an escape sequence
    /// that would drive the terminal a summary prints it to) is refused.
    @Test func aTokenWithAControlCharacterIsRefused() async throws {
        try await withServer { server in
            routeHappyPath(server)
            server.route("POST", "/access_token") { _ in
                .form("oauth_token=0123456789abcdefXY%1B%5B2J&oauth_token_secret=access-secret")
            }
            let client = try OAuth1Client(
                descriptor: Fixture.descriptor(baseURL: server.baseURL),
                settings: ClientSettings(clientID: Fixture.consumerKey, clientSecret: Fixture.consumerSecret))
            let (_, pending) = try await client.startAuthorization(
                redirectURI: URL(string: "http://127.0.0.1:5555/callback")!)
            await #expect {
                _ = try await client.exchange(verifier: "the-verifier", pending: pending)
            } throws: { error in
                guard case .invalidResponse(_, let reason)? = error.authKitReason else { return false }
                return reason.kind == .invalidField("oauth_token") && !"\(error)".contains("\u{1B}")
            }
        }
    }

    // MARK: - Happy paths

    /// A provider that documents its token calls as `GET` (Flickr's examples,
    /// FatSecret) gets `GET`, signed as `GET` (RFC 5849 §3.4.1.1: the method
    /// is in the base string), with the request-token call's extra parameters
    /// in the query and no body.
    @Test func tokenCallsUseTheDescriptorsMethods() async throws {
        try await withServer { server in
            server.route("GET", "/request_token") { _ in
                .form("oauth_token=request-token&oauth_token_secret=request%2Bsecret&oauth_callback_confirmed=true")
            }
            server.route("GET", "/access_token") { _ in
                .form("oauth_token=access-token&oauth_token_secret=access-secret")
            }
            let client = try OAuth1Client(
                descriptor: Fixture.descriptor(
                    baseURL: server.baseURL, requestTokenParameters: ["perms": "read"],
                    requestTokenMethod: "GET", accessTokenMethod: "GET"),
                settings: ClientSettings(clientID: Fixture.consumerKey, clientSecret: Fixture.consumerSecret))
            let (_, pending) = try await client.startAuthorization(
                redirectURI: URL(string: "http://127.0.0.1:5555/callback")!)
            let credential = try await client.exchange(verifier: "the-verifier", pending: pending)
            #expect(credential.accessToken == "access-token")

            let requests = server.requests
            try #require(requests.count == 2)
            #expect(requests.map(\.method) == ["GET", "GET"])
            #expect(requests.map(\.uri) == ["/request_token?perms=read", "/access_token"])
            #expect(requests.allSatisfy { $0.body.isEmpty && $0.header("Content-Type") == nil })
            #expect(
                authorizationDictionary(requests[0].header("Authorization"))["oauth_signature"]
                    == (try expectedHMACSHA1(
                        method: "GET", url: URL(string: server.baseURL + "/request_token?perms=read")!,
                        contentType: nil, body: nil,
                        header: requests[0].header("Authorization"), consumerSecret: Fixture.consumerSecret,
                        tokenSecret: "")))
            #expect(
                authorizationDictionary(requests[1].header("Authorization"))["oauth_signature"]
                    == (try expectedHMACSHA1(
                        method: "GET", url: URL(string: server.baseURL + "/access_token")!, contentType: nil, body: nil,
                        header: requests[1].header("Authorization"), consumerSecret: Fixture.consumerSecret,
                        tokenSecret: "request+secret")))
        }
    }

    /// A descriptor built in code skips the file validator; the client still
    /// names the field rather than sending a method it cannot sign for.
    @Test func anUnsupportedTokenCallMethodNamesTheField() throws {
        #expect {
            try OAuth1Client(
                descriptor: Fixture.descriptor(baseURL: "https://example.com", accessTokenMethod: "get"),
                settings: ClientSettings(clientID: Fixture.consumerKey, clientSecret: Fixture.consumerSecret))
        } throws: { error in
            guard case .invalidFile(let issues)? = error.authKitReason else { return false }
            return issues.first?.field == "oauth1.accessTokenMethod"
        }
    }

    @Test func callbackFlowSendsSignedRequestsAndBuildsCredential() async throws {
        try await withServer { server in
            routeHappyPath(server)
            let client = try Fixture.client(baseURL: server.baseURL, nonceAndTimestamp: Self.fixed)
            let callback = URL(string: "http://127.0.0.1:5555/callback")!
            let agent = ScriptedAgent { session in
                #expect(session.redirectURI != nil)
                let url = try await session.makeAuthorizationURL(callback)
                #expect(url.absoluteString == server.baseURL + "/authorize?oauth_token=request-token")
                let answer = URL(
                    string: "http://127.0.0.1:5555/callback?oauth_token=request-token&oauth_verifier=the-verifier")!
                try session.validateRedirect(answer)
                return .redirect(answer)
            }
            let credential = try await client.authorize(using: agent, options: AuthorizationOptions(label: "work"))

            #expect(credential.kind == .oauth1)
            #expect(credential.providerID == "test-oauth1")
            #expect(credential.label == "work")
            #expect(credential.accessToken == "access-token")
            #expect(credential.tokenSecret == "access-secret")
            #expect(credential.tokenType == "OAuth")
            #expect(credential.rawFields == ["user_id": .string("6253282"), "screen_name": .string("twitterapi")])
            #expect(!credential.description.contains("access-secret"))

            let requests = server.requests
            try #require(requests.count == 2)
            // Step 1: request token.
            let first = requests[0]
            #expect(first.method == "POST")
            #expect(first.uri == "/request_token")
            #expect(first.body.isEmpty)
            let header1 = first.header("Authorization")
            #expect(
                header1
                    == "OAuth oauth_callback=\"http%3A%2F%2F127.0.0.1%3A5555%2Fcallback\", oauth_consumer_key=\"authkit-test-consumer\", oauth_nonce=\"fixednonce0123456789\", oauth_signature=\"\(PercentEncoding.encode(authorizationDictionary(header1)["oauth_signature"] ?? ""))\", oauth_signature_method=\"HMAC-SHA1\", oauth_timestamp=\"1700000000\", oauth_version=\"1.0\""
            )
            // Signed with `enc(consumer_secret)&` (no token yet), recomputed independently.
            #expect(
                authorizationDictionary(header1)["oauth_signature"]
                    == (try expectedHMACSHA1(
                        method: "POST", url: URL(string: server.baseURL + "/request_token")!, contentType: nil,
                        body: nil,
                        header: header1, consumerSecret: Fixture.consumerSecret, tokenSecret: "")))

            // Step 3: access token, with the request token, the verifier and its secret in the key.
            let second = requests[1]
            #expect(second.method == "POST")
            #expect(second.uri == "/access_token")
            let header2 = second.header("Authorization")
            let fields = authorizationDictionary(header2)
            #expect(fields["oauth_token"] == "request-token")
            #expect(fields["oauth_verifier"] == "the-verifier")
            #expect(fields["oauth_callback"] == nil)
            #expect(
                fields["oauth_signature"]
                    == (try expectedHMACSHA1(
                        method: "POST", url: URL(string: server.baseURL + "/access_token")!, contentType: nil,
                        body: nil,
                        header: header2, consumerSecret: Fixture.consumerSecret, tokenSecret: "request+secret")))
        }
    }

    @Test func pinFlowSendsOobAndTheTypedVerifier() async throws {
        try await withServer { server in
            routeHappyPath(server)
            let client = try Fixture.client(baseURL: server.baseURL)
            let agent = ScriptedAgent { session in
                _ = try await session.makeAuthorizationURL(nil)
                return .verificationCode(" 1234567\n")
            }
            let credential = try await client.authorize(using: agent)
            #expect(credential.accessToken == "access-token")
            let requests = server.requests
            try #require(requests.count == 2)
            #expect(authorizationDictionary(requests[0].header("Authorization"))["oauth_callback"] == "oob")
            #expect(authorizationDictionary(requests[1].header("Authorization"))["oauth_verifier"] == "1234567")
        }
    }

    @Test func configuredOobSelectsThePinFlow() throws {
        let client = try OAuth1Client(
            descriptor: Fixture.descriptor(baseURL: "https://example.com"),
            settings: ClientSettings(clientID: "k", clientSecret: "s", redirectURI: "oob"))
        #expect(client.defaultRedirectURI == nil)
        let loopback = try Fixture.client(baseURL: "https://example.com")
        #expect(loopback.defaultRedirectURI?.absoluteString == "http://127.0.0.1/callback")
        #expect(loopback.redirectPortIsFlexible)
    }

    @Test func authenticatePageAndExtraParameters() async throws {
        try await withServer { server in
            routeHappyPath(server)
            var client = try Fixture.client(
                baseURL: server.baseURL, requestTokenParameters: ["x_auth_access_type": "read"])
            client.usesAuthenticatePage = true
            let (url, pending) = try await client.startAuthorization(
                redirectURI: URL(string: "myapp:///cb")!,
                additionalParameters: ["force_login": "true", "screen_name": "a b"])
            #expect(
                url.absoluteString == server.baseURL
                    + "/authenticate?oauth_token=request-token&force_login=true&screen_name=a%20b")
            #expect(pending.requestToken == "request-token")
            #expect(pending.requestTokenSecret == "request+secret")
            #expect(pending.redirectURI == "myapp:///cb")
            var dumped = ""
            dump(pending, to: &dumped)
            for shown in [pending.description, String(reflecting: pending), dumped] {
                #expect(!shown.contains("request+secret") && shown.contains("••••"), "\(shown)")
            }
            let first = try #require(server.requests.first)
            #expect(first.uri == "/request_token?x_auth_access_type=read")
            let header = first.header("Authorization")
            #expect(authorizationDictionary(header)["oauth_callback"] == "myapp:///cb")
            // The query parameter is signed.
            #expect(
                authorizationDictionary(header)["oauth_signature"]
                    == (try expectedHMACSHA1(
                        method: "POST", url: URL(string: server.baseURL + first.uri)!, contentType: nil, body: nil,
                        header: header, consumerSecret: Fixture.consumerSecret, tokenSecret: "")))

            let (page, _) = try await client.startAuthorization(redirectURI: nil, authenticating: false)
            #expect(page.absoluteString.hasPrefix(server.baseURL + "/authorize?oauth_token="))
            await #expect(throws: AuthKitError.self) {
                _ = try await client.startAuthorization(redirectURI: nil, additionalParameters: ["oauth_token": "x"])
            }
        }
    }

    // MARK: - Request-token errors

    @Test func htmlErrorPageIsATypedError() async throws {
        try await withServer { server in
            server.route("POST", "/request_token") { _ in
                .text(
                    "<!DOCTYPE html><html><head><title>Over capacity</title></head><body>…</body></html>",
                    contentType: "text/html", status: 503)
            }
            let client = try Fixture.client(baseURL: server.baseURL)
            let error = await #expect(throws: AuthKitError.self) {
                _ = try await client.startAuthorization(redirectURI: nil)
            }
            guard case .invalidResponse(.requestToken, let reason)? = error?.reason else {
                Issue.record("unexpected \(String(describing: error))")
                return
            }
            #expect(reason.detail.contains("HTML page titled 'Over capacity'"))
            #expect(reason.detail.contains("503"))
            #expect(error?.description.contains("request token") == true)
        }
    }

    @Test func missingCallbackConfirmedIsRejected() async throws {
        try await withServer { server in
            server.route("POST", "/request_token") { _ in .form("oauth_token=rt&oauth_token_secret=rts") }
            let client = try Fixture.client(baseURL: server.baseURL)
            let error = await #expect(throws: AuthKitError.self) {
                _ = try await client.startAuthorization(redirectURI: nil)
            }
            guard case .invalidResponse(.requestToken, let reason)? = error?.reason else {
                Issue.record("unexpected \(String(describing: error))")
                return
            }
            #expect(reason.detail.contains("oauth_callback_confirmed"))
            #expect(!reason.detail.contains("rts"))

            // A descriptor may waive the check for an OAuth 1.0 server.
            let lenient = try Fixture.client(baseURL: server.baseURL, requireCallbackConfirmed: false)
            let (_, pending) = try await lenient.startAuthorization(redirectURI: nil)
            #expect(pending.requestToken == "rt")
        }
    }

    /// A protocol field named twice is refused, whichever comes first
    /// (`oauth_callback_confirmed=true&…=false` was read as true); an empty
    /// token secret is a value (RFC 5849 §3.4.2 signs with it "even when"
    /// empty), not a missing field.
    @Test func repeatedProtocolFieldsAreRefusedAndAnEmptySecretIsAValue() async throws {
        try await withServer { server in
            let client = try Fixture.client(baseURL: server.baseURL)
            for reply in [
                "oauth_token=rt&oauth_token_secret=rts&oauth_callback_confirmed=true&oauth_callback_confirmed=false",
                "oauth_token=rt&oauth_token_secret=rts&oauth_callback_confirmed=false&oauth_callback_confirmed=true",
            ] {
                server.route("POST", "/request_token") { _ in .form(reply) }
                let error = await #expect(throws: AuthKitError.self) {
                    _ = try await client.startAuthorization(redirectURI: nil)
                }
                guard case .invalidResponse(.requestToken, let reason)? = error?.reason else {
                    Issue.record("\(reply): \(String(describing: error))")
                    continue
                }
                #expect(reason.kind == .repeatedField("oauth_callback_confirmed"), "\(reason)")
            }
            server.route("POST", "/request_token") { _ in
                .form("oauth_token=rt&oauth_token_secret=&oauth_callback_confirmed=true")
            }
            let (_, pending) = try await client.startAuthorization(redirectURI: nil)
            #expect(pending.requestToken == "rt")
        }
    }

    @Test func providerMessagesAreShownForEachStep() async throws {
        try await withServer { server in
            server.route("POST", "/request_token") { _ in
                .text("Failed to validate oauth signature and token", contentType: "text/plain", status: 401)
            }
            let client = try Fixture.client(baseURL: server.baseURL)
            let error = await #expect(throws: AuthKitError.self) {
                _ = try await client.startAuthorization(redirectURI: nil)
            }
            #expect(
                error
                    == .providerError(
                        step: .requestToken,
                        ProviderErrorResponse(
                            status: 401, code: "http_401", description: "Failed to validate oauth signature and token"))
            )

            server.route("POST", "/request_token") { _ in
                .json(#"{"errors":[{"code":32,"message":"Could not authenticate you."}]}"#, status: 401)
            }
            let json = await #expect(throws: AuthKitError.self) {
                _ = try await client.startAuthorization(redirectURI: nil)
            }
            #expect(
                json
                    == .providerError(
                        step: .requestToken,
                        ProviderErrorResponse(
                            status: 401, code: "32", description: "Could not authenticate you.")))
            #expect(
                json?.description
                    == "The request token failed at the provider: 32: Could not authenticate you. [HTTP 401]")
        }
    }

    /// A server that echoes the request (here a PLAINTEXT signature, which is
    /// the secrets themselves) must not put the secrets into an error message.
    @Test func echoedSecretsAreMaskedInMessages() async throws {
        try await withServer { server in
            server.route("POST", "/request_token") { request in
                .text("Rejected: \(request.header("Authorization") ?? "")", contentType: "text/plain", status: 400)
            }
            let client = try Fixture.client(baseURL: server.baseURL, signatureMethod: "PLAINTEXT")
            let error = await #expect(throws: AuthKitError.self) {
                _ = try await client.startAuthorization(redirectURI: nil)
            }
            let text = try #require(error?.description)
            #expect(text.contains("Rejected: OAuth"))
            #expect(text.contains("••••"))
            for form in [
                Fixture.consumerSecret, PercentEncoding.encode(Fixture.consumerSecret),
                PercentEncoding.encode(PercentEncoding.encode(Fixture.consumerSecret)),
            ] {
                #expect(!text.contains(form))
            }
        }
    }

    // MARK: - Access-token errors

    @Test func accessTokenErrorsNameTheStepAndHideSecrets() async throws {
        try await withServer { server in
            let client = try Fixture.client(baseURL: server.baseURL)
            let pending = PendingAuthorization(
                providerID: "test-oauth1", requestToken: "rt", requestTokenSecret: "request-secret-value",
                redirectURI: "oob", createdAt: Date())

            server.route("POST", "/access_token") { _ in
                .form("error=invalid_request&error_description=Invalid+verifier+format.", status: 400)
            }
            let formError = await #expect(throws: AuthKitError.self) {
                _ = try await client.exchange(verifier: "v", pending: pending)
            }
            #expect(
                formError
                    == .providerError(
                        step: .accessToken,
                        ProviderErrorResponse(
                            status: 400, code: "invalid_request", description: "Invalid verifier format.")))

            server.route("POST", "/access_token") { _ in .form("oauth_token=secret-looking-token&user_id=1") }
            let missing = await #expect(throws: AuthKitError.self) {
                _ = try await client.exchange(verifier: "v", pending: pending)
            }
            guard case .invalidResponse(.accessToken, let reason)? = missing?.reason else {
                Issue.record("unexpected \(String(describing: missing))")
                return
            }
            #expect(reason.detail.contains("'oauth_token_secret'"))
            for error in [formError, missing].compactMap({ $0 }) {
                let text = error.description
                #expect(!text.contains("secret-looking-token"))
                #expect(!text.contains("request-secret-value"))
                #expect(!text.contains(Fixture.consumerSecret))
            }

            server.route("POST", "/access_token") { _ in
                .text("<html><body>Oops</body></html>", contentType: "text/html", status: 200)
            }
            let html = await #expect(throws: AuthKitError.self) {
                _ = try await client.exchange(verifier: "v", pending: pending)
            }
            #expect(
                html
                    == .invalidResponse(
                        step: .accessToken,
                        reason: .init(
                            .unreadableBody, "HTTP 200 with an HTML page instead of form-encoded OAuth fields")))

            // Flickr's API errors are XML: named as such, not as a page.
            server.route("POST", "/access_token") { _ in
                .text(
                    #"<?xml version="1.0" encoding="utf-8" ?><rsp stat="fail"><err code="98" msg="Invalid auth token" /></rsp>"#,
                    contentType: "application/xml", status: 401)
            }
            let xml = await #expect(throws: AuthKitError.self) {
                _ = try await client.exchange(verifier: "v", pending: pending)
            }
            #expect(
                xml
                    == .invalidResponse(
                        step: .accessToken,
                        reason: .init(
                            .unreadableBody, "HTTP 401 with an XML document instead of form-encoded OAuth fields")))

            // Two access tokens: which is the one? Refused rather than guessed.
            server.route("POST", "/access_token") { _ in .form("oauth_token=one&oauth_token=two&oauth_token_secret=s") }
            let twice = await #expect(throws: AuthKitError.self) {
                _ = try await client.exchange(verifier: "v", pending: pending)
            }
            #expect(
                twice
                    == .invalidResponse(
                        step: .accessToken,
                        reason: .init(.repeatedField("oauth_token"), "the reply names 'oauth_token' more than once")))
        }
    }

    // MARK: - The callback

    @Test func deniedCallbackIsAccessDeniedAndSendsNothingMore() async throws {
        try await withServer { server in
            routeHappyPath(server)
            let client = try Fixture.client(baseURL: server.baseURL)
            let callback = URL(string: "http://127.0.0.1:5555/callback")!
            let agent = ScriptedAgent { session in
                _ = try await session.makeAuthorizationURL(callback)
                let answer = URL(string: "http://127.0.0.1:5555/callback?denied=request-token")!
                try session.validateRedirect(answer) // a genuine answer: must not throw
                return .redirect(answer)
            }
            let error = await #expect(throws: AuthKitError.self) { _ = try await client.authorize(using: agent) }
            #expect(error?.code == .accessDenied)
            #expect(server.requests.map(\.path) == ["/request_token"])
        }
    }

    @Test func callbackChecks() throws {
        let client = try Fixture.client(baseURL: "https://example.com")
        let pending = PendingAuthorization(
            providerID: "test-oauth1", requestToken: "request-token", requestTokenSecret: "s",
            redirectURI: "http://127.0.0.1:5555/callback", createdAt: Date())
        func check(_ url: String) -> AuthKitError? {
            do {
                _ = try client.verifier(from: URL(string: url)!, pending: pending)
                return nil
            } catch {
                return error as? AuthKitError
            }
        }
        #expect(
            (try? client.verifier(
                from: URL(string: "http://127.0.0.1:5555/callback?oauth_token=request-token&oauth_verifier=v")!,
                pending: pending)) == "v")
        #expect(
            check("http://127.0.0.1:5555/callback?oauth_token=other-token&oauth_verifier=v")
                == .redirect(.requestTokenMismatch))
        #expect(
            check("http://127.0.0.1:5555/callback?oauth_token=request-tokeN&oauth_verifier=v")
                == .redirect(.requestTokenMismatch))
        #expect(check("http://127.0.0.1:5555/callback?oauth_verifier=v") == .redirect(.missingRequestToken))
        #expect(check("http://127.0.0.1:5555/callback?oauth_token=request-token") == .redirect(.missingVerifier))
        #expect(
            check("http://127.0.0.1:5555/callback?oauth_token=request-token&oauth_verifier=")
                == .redirect(.missingVerifier))
        #expect(
            check("http://127.0.0.1:5555/callback?oauth_token=request-token&oauth_token=request-token&oauth_verifier=v")
                == .redirect(.duplicateParameter("oauth_token")))
        #expect(
            check("http://127.0.0.1:6666/callback?oauth_token=request-token&oauth_verifier=v")
                == .redirect(
                    .unexpectedTarget(
                        expected: "http://127.0.0.1:5555/callback", received: "http://127.0.0.1:6666/callback")))
        // `denied` for another attempt's token is not this attempt's answer.
        #expect(check("http://127.0.0.1:5555/callback?denied=other-token") == .redirect(.requestTokenMismatch))
        #expect(check("http://127.0.0.1:5555/callback?denied=request-token")?.code == .accessDenied)
        #expect(check("http://127.0.0.1:5555/callback?denied=request-token")?.description.contains("denied") == true)
    }

    @Test func mismatchedCallbackIsIgnoredByTheSession() async throws {
        try await withServer { server in
            routeHappyPath(server)
            let client = try Fixture.client(baseURL: server.baseURL)
            let callback = URL(string: "http://127.0.0.1:5555/callback")!
            let agent = ScriptedAgent { session in
                _ = try await session.makeAuthorizationURL(callback)
                // A stray or forged request: the listener must keep waiting.
                #expect(throws: AuthKitError.redirect(.requestTokenMismatch)) {
                    try session.validateRedirect(
                        URL(string: "http://127.0.0.1:5555/callback?oauth_token=forged&oauth_verifier=v")!)
                }
                return .redirect(URL(string: "http://127.0.0.1:5555/callback?oauth_token=forged&oauth_verifier=v")!)
            }
            await #expect(throws: AuthKitError.redirect(.requestTokenMismatch)) {
                _ = try await client.authorize(using: agent)
            }
            #expect(server.requests.map(\.path) == ["/request_token"])
        }
    }

    // MARK: - Using, refreshing and revoking the credential

    @Test func refreshIsUnsupportedAndRevokeUsesTheDescriptor() async throws {
        try await withServer { server in
            server.route("POST", "/invalidate_token") { _ in .json(#"{"access_token":"at"}"#) }
            let credential = Credential(
                providerID: "test-oauth1", isOAuth1: true, accessToken: "at", tokenType: "OAuth", tokenSecret: "ats")
            let plain = try Fixture.client(baseURL: server.baseURL)
            await #expect(throws: AuthKitError.signInRequired(credential.key, reason: .protocolHasNoRefresh)) {
                _ = try await plain.refresh(credential)
            }
            await #expect(throws: AuthKitError.notSupported(providerID: "test-oauth1", .revocation)) {
                try await plain.revoke(credential)
            }

            let client = try Fixture.client(baseURL: server.baseURL, invalidate: true)
            try await client.revoke(credential)
            let request = try #require(server.requests.last)
            #expect(request.method == "POST" && request.path == "/invalidate_token")
            let header = request.header("Authorization")
            #expect(authorizationDictionary(header)["oauth_token"] == "at")
            #expect(
                authorizationDictionary(header)["oauth_signature"]
                    == (try expectedHMACSHA1(
                        method: "POST", url: URL(string: server.baseURL + "/invalidate_token")!, contentType: nil,
                        body: nil,
                        header: header, consumerSecret: Fixture.consumerSecret, tokenSecret: "ats")))

            server.route("POST", "/invalidate_token") { _ in
                .json(#"{"errors":[{"code":89,"message":"Invalid or expired token."}]}"#, status: 401)
            }
            await #expect(
                throws: AuthKitError.providerError(
                    step: .revocation,
                    ProviderErrorResponse(
                        status: 401, code: "89", description: "Invalid or expired token."))
            ) { try await client.revoke(credential) }
        }
    }

    @Test func signsURLRequests() throws {
        let client = try Fixture.client(baseURL: "https://example.com", nonceAndTimestamp: Self.fixed)
        let credential = Credential(
            providerID: "test-oauth1", isOAuth1: true, accessToken: "at", tokenType: "OAuth", tokenSecret: "ats")

        var get = URLRequest(url: URL(string: "https://api.example.com/1.1/search.json?q=a%20b&count=2")!)
        get = try client.authorize(get, with: credential)
        let getHeader = get.value(forHTTPHeaderField: "Authorization")
        #expect(
            authorizationDictionary(getHeader)["oauth_signature"]
                == (try expectedHMACSHA1(
                    method: "GET", url: get.url!, contentType: nil, body: nil, header: getHeader,
                    consumerSecret: Fixture.consumerSecret, tokenSecret: "ats")))

        var post = URLRequest(url: URL(string: "https://api.example.com/1.1/statuses/update.json")!)
        post.httpMethod = "POST"
        post.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
        post.httpBody = Data("status=Hello%20Ladies%20%2B%20Gentlemen".utf8)
        post = try client.authorize(post, with: credential)
        let postHeader = post.value(forHTTPHeaderField: "Authorization")
        let withBody = try expectedHMACSHA1(
            method: "POST", url: post.url!, contentType: "application/x-www-form-urlencoded",
            body: post.httpBody, header: postHeader, consumerSecret: Fixture.consumerSecret, tokenSecret: "ats")
        let withoutBody = try expectedHMACSHA1(
            method: "POST", url: post.url!, contentType: nil, body: nil, header: postHeader,
            consumerSecret: Fixture.consumerSecret, tokenSecret: "ats")
        #expect(authorizationDictionary(postHeader)["oauth_signature"] == withBody)
        #expect(withBody != withoutBody)

        // A body without a Content-Type goes as a form (URLSession says so
        // when it sends it): the request says so, and its body is signed.
        var untyped = URLRequest(url: URL(string: "https://api.example.com/1.1/statuses/update.json")!)
        untyped.httpMethod = "POST"
        untyped.httpBody = Data("status=Hello%20Ladies%20%2B%20Gentlemen".utf8)
        untyped = try client.authorize(untyped, with: credential)
        #expect(untyped.value(forHTTPHeaderField: "Content-Type") == "application/x-www-form-urlencoded")
        #expect(
            authorizationDictionary(untyped.value(forHTTPHeaderField: "Authorization"))["oauth_signature"] == withBody)
        var streamedUntyped = URLRequest(url: URL(string: "https://api.example.com/1.1/statuses/update.json")!)
        streamedUntyped.httpMethod = "POST"
        streamedUntyped.httpBodyStream = InputStream(data: Data("a=1".utf8))
        #expect(throws: AuthKitError.self) { _ = try client.authorize(streamedUntyped, with: credential) }

        // A credential of another kind or provider is refused.
        let bearer = Credential(providerID: "test-oauth1", accessToken: "t")
        #expect(throws: AuthKitError.self) { _ = try client.authorize(get, with: bearer) }
        let other = Credential(
            providerID: "other", isOAuth1: true, accessToken: "at", tokenType: "OAuth", tokenSecret: "ats")
        #expect(throws: AuthKitError.self) { _ = try client.authorize(get, with: other) }

        // A URL without a scheme (a link an API answered, `//host/x`) is
        // refused: swift-http-types stopped the process for it.
        for relative in ["//api.example.com/1.1/statuses/home_timeline.json", "/1.1/x"] {
            #expect {
                _ = try client.authorize(URLRequest(url: try #require(URL(string: relative))), with: credential)
            } throws: { error in
                guard case .misuse(.unsignableRequest(let detail))? = error.authKitReason else { return false }
                return detail.contains("no absolute URL")
            }
        }
    }

    /// The protocol's own form (swift-http-types) signs the same way, and the
    /// `URLRequest` form refuses a form body it cannot sign (a stream, readable
    /// once) but lets any other streamed body through.
    @Test func signsHTTPRequestsAndRefusesAStreamedFormBody() throws {
        let client = try Fixture.client(baseURL: "https://example.com", nonceAndTimestamp: Self.fixed)
        let credential = Credential(
            providerID: "test-oauth1", isOAuth1: true, accessToken: "at", tokenType: "OAuth", tokenSecret: "ats")
        let url = URL(string: "https://api.example.com/1.1/statuses/update.json?trim=1")!
        let body = Data("status=Hello%20Ladies%20%2B%20Gentlemen".utf8)

        var head = HTTPRequest(method: .post, url: url)
        head.headerFields[.contentType] = "application/x-www-form-urlencoded; charset=utf-8"
        let header = try client.authorize(head, body: body, with: credential).headerFields[.authorization]
        #expect(
            authorizationDictionary(header)["oauth_signature"]
                == (try expectedHMACSHA1(
                    method: "POST", url: url, contentType: "application/x-www-form-urlencoded", body: body,
                    header: header,
                    consumerSecret: Fixture.consumerSecret, tokenSecret: "ats")))

        var streamed = URLRequest(url: url)
        streamed.httpMethod = "POST"
        streamed.setValue("Application/X-WWW-Form-Urlencoded", forHTTPHeaderField: "Content-Type")
        streamed.httpBodyStream = InputStream(data: body)
        #expect {
            _ = try client.authorize(streamed, with: credential)
        } throws: { error in
            "\(error)".contains("must be set as httpBody, not as a stream")
        }
        streamed.setValue("application/json", forHTTPHeaderField: "Content-Type")
        #expect(
            try client.authorize(streamed, with: credential).value(forHTTPHeaderField: "Authorization")?.hasPrefix(
                "OAuth ") == true)
    }

    @Test func settingsAreRequired() {
        let descriptor = Fixture.descriptor(baseURL: "https://example.com")
        #expect(throws: AuthKitError.self) {
            _ = try OAuth1Client(descriptor: descriptor, settings: ClientSettings(clientID: "k"))
        }
        #expect(throws: AuthKitError.self) {
            _ = try OAuth1Client(descriptor: descriptor, settings: ClientSettings(clientSecret: "s"))
        }
        var bad = descriptor
        bad.oauth1?.signatureMethod = "RSA-SHA1"
        #expect(throws: AuthKitError.self) {
            _ = try OAuth1Client(descriptor: bad, settings: ClientSettings(clientID: "k", clientSecret: "s"))
        }
    }
}

extension FlowTests {
    /// A refusal's `oauth_problem_advice` is the provider's text: one that
    /// repeats the consumer secret had it printed whole.
    @Test func aCallbackRefusalRepeatingTheSecretIsMasked() async throws {
        try await withServer { server in
            routeHappyPath(server)
            let client = try Fixture.client(baseURL: server.baseURL, nonceAndTimestamp: Self.fixed)
            let (_, pending) = try await client.startAuthorization(
                redirectURI: URL(string: "http://127.0.0.1:5555/callback")!)
            let advice =
                "secret+is+" + Fixture.consumerSecret.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            let callback = URL(
                string:
                    "http://127.0.0.1:5555/callback?oauth_token=\(pending.requestToken)&oauth_problem=permission_denied&oauth_problem_advice=\(advice)"
            )!
            let error = #expect(throws: AuthKitError.self) { try client.verifier(from: callback, pending: pending) }
            #expect(
                !"\(String(describing: error))".contains(Fixture.consumerSecret)
                    && "\(String(describing: error))".contains("••••"),
                "\(String(describing: error))")
        }
    }
}

extension FlowTests {
    /// The PIN flow's answer is a short code: a callback URL pasted there was
    /// sent whole as `oauth_verifier`, and a PIN with a control character as
    /// typed; the provider answered only "invalid verifier". Neither reaches
    /// the access-token endpoint now, and the error does not repeat it.
    @Test func aVerifierNoProviderIssuesIsNotSent() async throws {
        try await withServer { server in
            routeHappyPath(server)
            let client = try Fixture.client(baseURL: server.baseURL, nonceAndTimestamp: Self.fixed)
            let (_, pending) = try await client.startAuthorization(redirectURI: nil)
            for (typed, said) in [
                (
                    "http://127.0.0.1:8766/callback?oauth_token=\(pending.requestToken)&oauth_verifier=v",
                    "is a URL: this sign-in uses the PIN flow"
                ),
                ("12\u{1B}]0;x\u{7}34", "holds a space, a control character"), ("12 34", "holds a space"),
                ("12\u{3000}34", "outside ASCII"), ("12\u{A0}34", "outside ASCII"),
            ] {
                let error = await #expect(throws: AuthKitError.self) {
                    try await client.exchange(verifier: typed, pending: pending)
                }
                let text = String(describing: error)
                #expect(text.contains(said) && !text.contains(pending.requestToken), "\(text)")
            }
            #expect(server.requests.filter { $0.uri.contains("access_token") }.isEmpty)
            // A PIN as a provider shows it still goes through.
            _ = try await client.exchange(verifier: " 1234567 \n", pending: pending)
        }
    }
}

extension FlowTests {
    /// A 2xx reply without a required field is said with the names it has:
    /// names only, masked as the provider's other text is, at most ten of
    /// them and each cut short; a body with no `=` is no form at all. The
    /// names were listed whole: a server echoing the Authorization header as
    /// a field name had the PLAINTEXT signature (the secrets) printed, a
    /// plain-text 200 became one long "field name", 20,000 fields a 269 KB line.
    @Test func aReplyWithoutAFieldNamesWhatItHasMaskedAndBounded() async throws {
        try await withServer { server in
            let client = try Fixture.client(baseURL: server.baseURL, signatureMethod: "PLAINTEXT")
            func requestTokenError(_ reply: @escaping @Sendable (RecordedRequest) -> StubResponse) async
                -> AuthKitError?
            {
                server.route("POST", "/request_token", reply)
                return await #expect(throws: AuthKitError.self) {
                    _ = try await client.startAuthorization(redirectURI: nil)
                }
            }
            let secrets = [
                Fixture.consumerSecret, PercentEncoding.encode(Fixture.consumerSecret),
                PercentEncoding.encode(PercentEncoding.encode(Fixture.consumerSecret)),
            ]

            // Plain text with a 200: no name=value pair, so not read as names.
            let text = await requestTokenError { _ in
                .text(
                    "Signature mismatch. We computed it with the key consumer-SECRET-xyz& over POST&http…",
                    contentType: "text/plain", status: 200)
            }
            guard case .invalidResponse(.requestToken, let reason)? = text?.reason else {
                Issue.record("\(String(describing: text))")
                return
            }
            #expect(reason.kind == .unreadableBody, "\(reason)")
            #expect(reason.detail.contains("no name=value pair") && !reason.detail.contains("consumer-SECRET"))

            // The Authorization header (a PLAINTEXT signature: the secrets) echoed as a field name.
            let echoed = await requestTokenError { request in
                .form(
                    "oauth_token_secret=x&oauth_callback_confirmed=true&"
                        + PercentEncoding.encode(request.header("Authorization") ?? "") + "=1")
            }
            let echoedText = try #require(echoed?.description)
            #expect(echoedText.contains("'oauth_token'") && echoedText.contains("'oauth_callback_confirmed'"))
            for form in secrets { #expect(!echoedText.contains(form), "\(echoedText)") }

            // 20,000 fields: ten names and a count.
            let many = await requestTokenError { _ in
                .form((0..<20_000).map { "field\($0)=x" }.joined(separator: "&"))
            }
            let manyText = try #require(many?.description)
            #expect(manyText.count < 1_000 && manyText.contains("and 19990 more"), "\(manyText.count)")

            // The access-token step: a name that holds the request token's secret is masked, not cut.
            let pending = PendingAuthorization(
                providerID: "test-oauth1", requestToken: "rt", requestTokenSecret: "request-secret-value",
                redirectURI: "oob", createdAt: Date())
            server.route("POST", "/access_token") { _ in
                .form("oauth_token_secret=x&request-secret-value-echoed=1")
            }
            let access = await #expect(throws: AuthKitError.self) {
                _ = try await client.exchange(verifier: "v", pending: pending)
            }
            let accessText = try #require(access?.description)
            #expect(
                accessText.contains("'••••-echoed'") && !accessText.contains("request-secret-value"), "\(accessText)")
            server.route("POST", "/access_token") { _ in
                .text("Invalid verifier request-secret-value", contentType: "text/plain", status: 200)
            }
            let accessPlain = await #expect(throws: AuthKitError.self) {
                _ = try await client.exchange(verifier: "v", pending: pending)
            }
            guard case .invalidResponse(.accessToken, let plain)? = accessPlain?.reason else {
                Issue.record("\(String(describing: accessPlain))")
                return
            }
            #expect(plain.kind == .unreadableBody && !plain.detail.contains("request-secret-value"))
        }
    }

    /// A reply of many `oauth_…` fields is checked for repeats in one count
    /// (each name was compared with every field, 60,000 of them 3.6 × 10⁹
    /// times), and the error lists ten of them, not 60,000. The time bound
    /// is a guard against that hang, set for a loaded debug build, not a
    /// measure of speed.
    @Test func manyProtocolFieldsAreCheckedInTime() async throws {
        try await withServer { server in
            let client = try Fixture.client(baseURL: server.baseURL)
            server.route("POST", "/request_token") { _ in
                .form((0..<60_000).map { "oauth_x\($0)=1" }.joined(separator: "&"))
            }
            let start = ContinuousClock.now
            do {
                _ = try await client.startAuthorization(redirectURI: nil)
                Issue.record("a reply without a token was taken")
            } catch let error as AuthKitError {
                guard case .invalidResponse(_, let reason) = error.reason else { throw error }
                #expect(reason.kind == .missingField("oauth_token"), "\(reason)")
                #expect(reason.detail.contains("and 59990 more") && reason.detail.utf8.count < 1_000)
            }
            #expect(ContinuousClock.now - start < .seconds(20))
        }
    }
}

extension FlowTests {
    /// What to do about a verifier no provider issues depends on the flow:
    /// the PIN flow's is typed again from the provider's page; a callback
    /// flow's is the callback's `oauth_verifier`, which no one types. Both
    /// were told to "enter the code (PIN) the provider shows".
    @Test func anUnusableVerifierIsSaidPerFlow() async throws {
        try await withServer { server in
            routeHappyPath(server)
            let client = try Fixture.client(baseURL: server.baseURL, nonceAndTimestamp: Self.fixed)
            let (_, pin) = try await client.startAuthorization(redirectURI: nil)
            let (_, callback) = try await client.startAuthorization(
                redirectURI: URL(string: "http://127.0.0.1:5555/callback")!)
            for (pending, said, notSaid) in [
                (pin, "enter the code (PIN) the provider shows", "callback"),
                (callback, "the callback's oauth_verifier", "PIN"),
            ] {
                let error = await #expect(throws: AuthKitError.self) {
                    try await client.exchange(verifier: "12 34", pending: pending)
                }
                let text = String(describing: error)
                #expect(text.contains(said) && !text.contains(notSaid), "\(text)")
            }
            let redirect = try #require(
                URL(
                    string: "http://127.0.0.1:5555/callback?oauth_token=\(callback.requestToken)&oauth_verifier=12%2034"
                ))
            let fromCallback = await #expect(throws: AuthKitError.self) {
                try await client.exchange(redirect: redirect, pending: callback)
            }
            #expect(!String(describing: fromCallback).contains("PIN"), "\(String(describing: fromCallback))")
            #expect(server.requests.filter { $0.uri.contains("access_token") }.isEmpty)
        }
    }

    // MARK: - Another client's attempt, secrets in the transport's errors

    /// An attempt another provider's or another consumer's client started
    /// is refused before its request token and verifier go anywhere (the
    /// PIN path went straight to signing); one an older version kept, with
    /// no consumer recorded, is compared by provider only.
    @Test func anAttemptOfAnotherClientIsRefusedBeforeAnythingIsSent() async throws {
        try await withServer { server in
            routeHappyPath(server)
            let client = try Fixture.client(baseURL: server.baseURL)
            let (_, pending) = try await client.startAuthorization(redirectURI: nil)
            #expect(pending.consumerKey == Fixture.consumerKey)
            let other = try OAuth1Client(
                descriptor: Fixture.descriptor(baseURL: server.baseURL),
                settings: ClientSettings(clientID: "another-consumer", clientSecret: "another-secret"))
            var otherProvider = pending
            otherProvider.providerID = "another-provider"
            var otherEndpoint = pending
            otherEndpoint.tokenEndpoint = server.baseURL + "/access_token/"
            let cases: [(OAuth1Client, PendingAuthorization, AuthKitError)] = [
                (other, pending, .misuse(.attemptOfAnotherClient(providerID: "test-oauth1"))),
                (client, otherEndpoint, .misuse(.attemptOfAnotherClient(providerID: "test-oauth1"))),
                (
                    client, otherProvider,
                    .misuse(.attemptOfAnotherProvider(attempt: "another-provider", providerID: "test-oauth1"))
                ),
            ]
            for (client, pending, expected) in cases {
                let pin = await #expect(throws: AuthKitError.self) {
                    _ = try await client.exchange(verifier: "1234", pending: pending)
                }
                #expect(pin == expected)
                let redirect = try #require(
                    URL(string: "oob:?oauth_token=\(pending.requestToken)&oauth_verifier=1234"))
                let callback = await #expect(throws: AuthKitError.self) {
                    _ = try await client.exchange(redirect: redirect, pending: pending)
                }
                #expect(callback == expected)
            }
            #expect(server.requests.filter { $0.uri.contains("access_token") }.isEmpty)

            var older = pending
            (older.clientID, older.tokenEndpoint) = (nil, nil)
            let credential = try await client.exchange(verifier: "1234", pending: older)
            #expect(credential.accessToken == "access-token")
        }
    }

    /// PLAINTEXT's signature is the consumer secret and the request
    /// token's secret themselves (§3.4.4): a token call redirected to a host
    /// named after one does not repeat it in the error the transport throws
    /// (the request-token call, then the access-token call).
    @Test func aRedirectedTokenCallDoesNotRepeatTheSecret() async throws {
        let secret = "lowercase-secret-0123"
        let requestSecret = "lowercase-request-secret-4567"
        try await withServer { server in
            server.route("POST", "/request_token") { _ in .redirect(302, to: "https://\(secret).evil.example/") }
            server.route("POST", "/access_token") { _ in .redirect(302, to: "https://\(requestSecret).evil.example/") }
            let client = try OAuth1Client(
                descriptor: Fixture.descriptor(baseURL: server.baseURL, signatureMethod: "PLAINTEXT"),
                settings: ClientSettings(clientID: Fixture.consumerKey, clientSecret: secret))
            let first = await #expect(throws: AuthKitError.self) {
                _ = try await client.startAuthorization(redirectURI: nil)
            }
            let pending = PendingAuthorization(
                providerID: "test-oauth1", requestToken: "rt", requestTokenSecret: requestSecret, redirectURI: "oob",
                createdAt: Date())
            let second = await #expect(throws: AuthKitError.self) {
                _ = try await client.exchange(verifier: "1234", pending: pending)
            }
            for error in [first, second] {
                #expect(error != nil)
                for hidden in [secret, requestSecret] {
                    #expect(!String(describing: error).contains(hidden), "\(String(describing: error))")
                    #expect(!String(reflecting: error).contains(hidden))
                }
            }
        }
    }

    /// A verifier read from the callback is sent as the provider issued it
    /// or refused: `%20abc` was trimmed and `abc` sent, a value the
    /// provider never issued (§2.3).
    @Test func aCallbacksVerifierIsNotTrimmed() async throws {
        try await withServer { server in
            routeHappyPath(server)
            let client = try Fixture.client(baseURL: server.baseURL)
            let (_, pending) = try await client.startAuthorization(
                redirectURI: URL(string: "http://127.0.0.1:5555/callback")!)
            let redirect = try #require(
                URL(
                    string: "http://127.0.0.1:5555/callback?oauth_token=\(pending.requestToken)&oauth_verifier=%20abc"))
            let error = await #expect(throws: AuthKitError.self) {
                _ = try await client.exchange(redirect: redirect, pending: pending)
            }
            guard case .redirect(.unusableVerifier)? = error?.reason else {
                Issue.record("unexpected \(String(describing: error))")
                return
            }
            // Read from the callback by the caller, then passed: the same.
            let read = try client.verifier(from: redirect, pending: pending)
            #expect(read == " abc")
            let passed = await #expect(throws: AuthKitError.self) {
                _ = try await client.exchange(verifier: read, pending: pending)
            }
            guard case .redirect(.unusableVerifier)? = passed?.reason else {
                Issue.record("unexpected \(String(describing: passed))")
                return
            }
            #expect(server.requests.filter { $0.uri.contains("access_token") }.isEmpty)
            // Typed in the PIN flow, the spaces around it go.
            let (_, pin) = try await client.startAuthorization(redirectURI: nil)
            _ = try await client.exchange(verifier: " abc\n", pending: pin)
            let sent = authorizationDictionary(server.requests.last?.header("Authorization"))
            #expect(sent["oauth_verifier"] == "abc")
        }
    }
}
