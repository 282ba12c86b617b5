import AuthKitTestSupport
import Foundation
import Testing

@testable import AuthKit

/// The device authorization grant (RFC 8628) against a local server, with an
/// injected clock: each rule of §3.4–3.5 is checked without waiting.
@Suite struct DeviceGrantTests {
    /// A clock that moves only when the poller sleeps, recording each sleep.
    final class FakeClock: @unchecked Sendable {
        private let lock = NSLock()
        private var elapsed: TimeInterval = 0
        private(set) var sleeps: [TimeInterval] = []
        /// How much earlier than asked each sleep wakes, by the wall clock
        /// (`Task.sleep` runs on another clock than `Date`, and the poller
        /// rounds its waits to milliseconds).
        let early: TimeInterval
        init(early: TimeInterval = 0) { self.early = early }
        var now: Date { lock.withLock { fixedNow.addingTimeInterval(elapsed) } }
        func sleep(_ duration: Duration) async throws {
            try Task.checkCancellation()
            let seconds = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
            lock.withLock {
                // (Not a short sleep's: the clock must still move.)
                elapsed += seconds > early * 10 ? seconds - early : seconds
                sleeps.append(seconds)
            }
        }
        var recorded: [TimeInterval] { lock.withLock { sleeps } }
    }

    func client(_ server: TestHTTPServer, clock: FakeClock, secret: String? = nil, device: DescriptorFile.Device? = nil)
        throws -> OAuth2Client
    {
        let descriptor = testDescriptor(
            id: "tv", protocol: .oauth2, authorization: .init(url: "\(server.baseURL)/authorize"),
            token: .init(url: "\(server.baseURL)/token", clientAuthentication: .post))
        var file = DescriptorFile(descriptor)
        file.device = device ?? .init(url: "\(server.baseURL)/device")
        var client = try OAuth2Client(
            descriptor: file.resolved(source: "tv.json (test)"),
            settings: ClientSettings(clientID: "tv-app", clientSecret: secret, scopes: ["read"]),
            now: { clock.now })
        client.deviceSleep = { try await clock.sleep($0) }
        return client
    }

    /// Answers the device authorization request, then each poll in turn from `polls`.
    func serve(_ server: TestHTTPServer, expiresIn: Int = 900, interval: Int? = 5, polls: [StubResponse]) {
        let intervalMember = interval.map { #","interval":\#($0)"# } ?? ""
        server.route("POST", "/device") { _ in
            .json(
                #"{"device_code":"dev-code-secret","user_code":"WDJB-MJHT","verification_uri":"https://as.example/device","verification_uri_complete":"https://as.example/device?user_code=WDJB-MJHT","expires_in":\#(expiresIn)\#(intervalMember)}"#
            )
        }
        let remaining = Recorder<Int>()
        server.route("POST", "/token") { _ in
            remaining.append(1)
            let index = remaining.all.count - 1
            return index < polls.count ? polls[index] : .json(#"{"error":"authorization_pending"}"#, status: 400)
        }
    }

    static let pending = StubResponse.json(#"{"error":"authorization_pending"}"#, status: 400)
    static let slowDown = StubResponse.json(#"{"error":"slow_down"}"#, status: 400)
    static let granted = StubResponse.json(
        #"{"access_token":"tv-token","token_type":"Bearer","expires_in":3600,"refresh_token":"tv-refresh"}"#)

    /// A device code started by one client is not polled by another of the
    /// same provider (another token endpoint, another client id): its
    /// device code went to the second's token endpoint (RFC 9700 §4.4).
    @Test func anotherClientsDeviceCodeIsNotPolled() async throws {
        try await withServer { first in
            try await withServer { second in
                serve(first, polls: [Self.granted])
                serve(second, polls: [Self.granted])
                let clock = FakeClock()
                let started = try await client(first, clock: clock).startDeviceAuthorization()
                await #expect(throws: AuthKitError.misuse(.attemptOfAnotherClient(providerID: "tv"))) {
                    _ = try await client(second, clock: clock).pollDeviceAuthorization(started)
                }
                #expect(second.requests(to: "/token").isEmpty)
                var otherID = try client(first, clock: clock)
                otherID = try OAuth2Client(
                    descriptor: otherID.descriptor, settings: ClientSettings(clientID: "another-app", scopes: ["read"]),
                    now: { clock.now })
                await #expect(throws: AuthKitError.misuse(.attemptOfAnotherClient(providerID: "tv"))) {
                    _ = try await otherID.pollDeviceAuthorization(started)
                }
                #expect(first.requests(to: "/token").isEmpty)
                // Its own client polls it.
                #expect(
                    try await client(first, clock: clock).pollDeviceAuthorization(started).accessToken == "tv-token")
            }
        }
    }

    @Test func pollsAtTheIntervalUntilApproved() async throws {
        try await withServer { server in
            serve(server, polls: [Self.pending, Self.pending, Self.granted])
            let clock = FakeClock()
            let client = try client(server, clock: clock)
            let shown = Recorder<DeviceAuthorization>()
            let credential = try await client.authorizeWithDeviceCode(options: AuthorizationOptions(label: "tv")) {
                shown.append($0)
            }
            let authorization = try #require(shown.all.first)
            #expect(
                authorization.userCode == "WDJB-MJHT"
                    && authorization.verificationURI.absoluteString == "https://as.example/device")
            #expect(
                authorization.verificationURIComplete?.absoluteString == "https://as.example/device?user_code=WDJB-MJHT"
            )
            #expect(authorization.expiresAt == fixedNow.addingTimeInterval(900))
            #expect(!"\(authorization)".contains("dev-code-secret"))
            #expect(clock.recorded == [5, 5, 5])
            #expect(credential.accessToken == "tv-token" && credential.label == "tv" && credential.scopes == ["read"])

            let start = try formObject(try #require(server.requests(to: "/device").first).bodyText)
            #expect(start == ["scope": "read", "client_id": "tv-app"])
            let polls = try server.requests(to: "/token").map { try formObject($0.bodyText) }
            #expect(polls.count == 3)
            #expect(
                polls.allSatisfy {
                    $0 == [
                        "grant_type": "urn:ietf:params:oauth:grant-type:device_code", "device_code": "dev-code-secret",
                        "client_id": "tv-app",
                    ]
                })
        }
    }

    /// A hostile device endpoint cannot make AuthKit show or open anything
    /// but an https page of a server (http only on loopback): not a file,
    /// not a scheme that starts another program, not plain http elsewhere.
    @Test(arguments: [
        (#""verification_uri":"file:///etc/passwd""#, "verification_uri"),
        (#""verification_uri":"http://as.example/device""#, "verification_uri"),
        (#""verification_uri":"javascript:alert(1)""#, "verification_uri"),
        (
            #""verification_uri":"https://as.example/device","verification_uri_complete":"ms-settings:network""#,
            "verification_uri_complete"
        ),
        (
            #""verification_uri":"https://as.example/device","verification_uri_complete":"file://as.example/x""#,
            "verification_uri_complete"
        ),
        // A user name before the host makes evil.example's page read as github.com's.
        (#""verification_uri":"https://github.com@evil.example/login/device""#, "verification_uri"),
        (
            #""verification_uri":"https://as.example/device","verification_uri_complete":"https://as.example:pw@evil.example/x""#,
            "verification_uri_complete"
        ),
        // A percent-encoded dot: browsers open github.com.evil.example.
        (#""verification_uri":"https://github.com%2eevil.example/login/device""#, "verification_uri"),
        (#""verification_uri":"https://as.example/\#(String(repeating: "a", count: 2100))""#, "verification_uri"),
    ])
    func aVerificationURIThatIsNotAnHTTPSPageIsRefused(members: String, field: String) async throws {
        try await withServer { server in
            server.route("POST", "/device") { _ in
                .json(#"{"device_code":"d","user_code":"U","expires_in":60,\#(members)}"#)
            }
            let client = try client(server, clock: FakeClock())
            let shown = Recorder<DeviceAuthorization>()
            await #expect {
                _ = try await client.authorizeWithDeviceCode(options: AuthorizationOptions()) { shown.append($0) }
            } throws: { error in
                guard case .invalidResponse(.deviceAuthorization, let reason)? = error.authKitReason else {
                    return false
                }
                return reason.detail.contains("its \(field) ") && reason.detail.contains("not an https page")
            }
            #expect(shown.all.isEmpty && server.requests(to: "/token").isEmpty)
        }
    }

    /// The page a browser opens (verification_uri_complete) is on the
    /// origin of the one the user reads (verification_uri), or it is left
    /// out: the user read as.example and the browser opened evil.example.
    /// A user code or page that repeats the client secret, or the device
    /// code, is not shown.
    @Test func theOpenedPageIsTheOneShownAndNoSecretIsShown() async throws {
        try await withServer { server in
            let answer = LockedValue("")
            server.route("POST", "/device") { _ in
                .json(#"{"device_code":"the-device-code-42","expires_in":60,\#(answer.current)}"#)
            }
            let client = try client(server, clock: FakeClock(), secret: "tv-client-secret-0123")
            answer.withLock {
                $0 =
                    #""user_code":"U","verification_uri":"https://as.example/device","verification_uri_complete":"https://evil.example/device?user_code=U""#
            }
            #expect(try await client.startDeviceAuthorization().verificationURIComplete == nil)
            answer.withLock {
                $0 =
                    #""user_code":"U","verification_uri":"https://as.example/device","verification_uri_complete":"https://AS.example:443/device?user_code=U""#
            }
            #expect(
                try await client.startDeviceAuthorization().verificationURIComplete?.absoluteString
                    == "https://AS.example:443/device?user_code=U")
            for members in [
                #""user_code":"tv-client-secret-0123","verification_uri":"https://as.example/device""#,
                #""user_code":"U","verification_uri":"https://as.example/device?leak=tv-client-secret-0123""#,
                #""user_code":"U","verification_uri":"https://as.example/device","verification_uri_complete":"https://as.example/?s=tv-client-secret-0123""#,
                // The device code: with the client id, it polls for the tokens.
                #""user_code":"the-device-code-42","verification_uri":"https://as.example/device""#,
                #""user_code":"U","verification_uri":"https://as.example/device","verification_uri_complete":"https://as.example/?c=the-device-code-42""#,
            ] {
                answer.withLock { $0 = members }
                await #expect {
                    _ = try await client.startDeviceAuthorization()
                } throws: { error in
                    guard case .invalidResponse(.deviceAuthorization, let reason)? = error.authKitReason else {
                        return false
                    }
                    return reason.detail.contains("repeats a secret")
                        && !"\(error)".contains("tv-client-secret") && !"\(error)".contains("the-device-code-42")
                }
            }
        }
    }

    /// A user agent that only records that it was started.
    struct RecordingUserAgent: UserAgent {
        let started = Recorder<Int>()
        func run(_ session: AuthorizationSession) async throws -> URL {
            started.append(1)
            throw AuthKitError.cancelled
        }
    }

    /// A descriptor with a `device` section and no `authorization` endpoint
    /// signs in with a code; asked for the browser flow, it says which way
    /// in it has, before any user agent is started or URL is built.
    @Test func aDeviceOnlyProviderSignsInWithACodeAndNamesItWhenAskedForABrowser() async throws {
        try await withServer { server in
            serve(server, interval: 1, polls: [Self.granted])
            let json =
                #"{"id": "tv", "protocol": "oauth2", "token": {"url": "\#(server.baseURL)/token"}, "device": {"url": "\#(server.baseURL)/device"}}"#
            let clock = FakeClock()
            var client = try OAuth2Client(
                descriptor: ProviderDescriptor(json: Data(json.utf8), source: "tv.json"),
                settings: ClientSettings(clientID: "tv-app"), now: { clock.now })
            client.deviceSleep = { try await clock.sleep($0) }

            func isNoAuthorizationEndpoint(_ error: any Error) -> Bool {
                guard case .notSupported("tv", .authorizationCodeGrant)? = error.authKitReason else { return false }
                return "\(error)".contains("device grant") && "\(error)".contains("authorizeWithDeviceCode")
            }
            await #expect(performing: { _ = try await client.startAuthorization() }, throws: isNoAuthorizationEndpoint)
            let agent = RecordingUserAgent()
            await #expect(
                performing: { _ = try await client.authorize(using: agent, options: AuthorizationOptions()) },
                throws: isNoAuthorizationEndpoint)
            #expect(agent.started.all.isEmpty, "the user agent must not be started for a flow that cannot run")
            #expect(server.requests(to: "/token").isEmpty)

            let credential = try await client.authorizeWithDeviceCode(options: AuthorizationOptions()) { _ in }
            #expect(credential.accessToken == "tv-token" && credential.key.providerID == "tv")
        }
    }

    /// RFC 8628 §3.5: slow_down adds 5 seconds to this and every later interval.
    @Test func slowDownAddsFiveSecondsForGood() async throws {
        try await withServer { server in
            serve(server, polls: [Self.pending, Self.slowDown, Self.pending, Self.granted])
            let clock = FakeClock()
            _ = try await client(server, clock: clock).authorizeWithDeviceCode(options: AuthorizationOptions()) { _ in }
            #expect(clock.recorded == [5, 5, 10, 10])
        }
    }

    /// RFC 8628 §3.5: a connection that fails is retried at a lower
    /// frequency (the interval doubled each time), and so is a server in
    /// trouble (an HTML 502, a 503). One such poll ended the sign-in, though
    /// the user may have approved already and the tokens were waiting.
    @Test func aFailedConnectionOrAServerErrorIsRetriedLessOften() async throws {
        try await withServer { server in
            serve(
                server,
                polls: [
                    .text("<h1>502 Bad Gateway</h1>", contentType: "text/html", status: 502),
                    .text("<h1>504 Gateway Timeout</h1>", contentType: "text/html", status: 504), Self.pending,
                    .text("down for maintenance", contentType: "text/plain", status: 503), Self.granted,
                ])
            let clock = FakeClock()
            let credential = try await client(server, clock: clock).authorizeWithDeviceCode(
                options: AuthorizationOptions()
            ) { _ in }
            #expect(credential.accessToken == "tv-token")
            // Doubled after each failure in a row; the pending answer between
            // ends the back-off: a blip early on does not slow every later poll.
            #expect(clock.recorded == [5, 10, 20, 5, 10], "\(clock.recorded)")
        }
    }

    /// A back-off that would reach the codes' expiry is cut to leave one
    /// interval before it: three failures near the end (5, 10, 20 s) then
    /// waited 40 s past a code with 10 s left, and the sign-in ended as
    /// expired without the last poll, which found it approved.
    @Test func aBackOffDoesNotSkipTheLastPoll() async throws {
        try await withServer { server in
            let failed = StubResponse.text("<h1>502 Bad Gateway</h1>", contentType: "text/html", status: 502)
            serve(server, expiresIn: 45, polls: [failed, failed, failed, Self.granted])
            let clock = FakeClock()
            let credential = try await client(server, clock: clock).authorizeWithDeviceCode(
                options: AuthorizationOptions()
            ) { _ in }
            #expect(credential.accessToken == "tv-token")
            #expect(clock.recorded == [5, 10, 20, 5], "\(clock.recorded)")
        }
    }

    /// A verification page over plain http on this machine is taken from
    /// a device endpoint on this machine (a test server), not from a remote
    /// one: a proxy leaking its back end's `http://localhost:8080/…` sent
    /// the user, code in hand, to whatever another user runs on that port.
    @Test func aPlainHTTPLoopbackPageIsTakenOnlyFromALoopbackEndpoint() throws {
        let answer: [String: JSONValue] = [
            "device_code": .string("d"), "user_code": .string("u"),
            "verification_uri": .string("http://localhost:8080/realms/x/device"), "expires_in": .integer(600),
        ]
        func read(from endpoint: String) throws -> DeviceAuthorization {
            try DeviceAuthorization(
                answer: answer, providerID: "p", sentAt: Date(), scopes: [], endpoint: URL(string: endpoint))
        }
        #expect(throws: AuthKitError.self) { _ = try read(from: "https://idp.example/device") }
        #expect(try read(from: "http://127.0.0.1:4444/device").verificationURI.host == "localhost")
    }

    /// A device answer's field quoted in its refusal could repeat the
    /// client secret the request carried: masked, as a token answer's are.
    @Test func aRefusedDeviceAnswerDoesNotRepeatASecret() {
        let secret = "client-secret-0123"
        for (name, value) in [("expires_in", secret), ("interval", secret)] {
            var answer: [String: JSONValue] = [
                "device_code": .string("d"), "user_code": .string("u"),
                "verification_uri": .string("https://x.example/device"), "expires_in": .integer(600),
            ]
            answer[name] = .string(value)
            let error = #expect(throws: AuthKitError.self) {
                _ = try DeviceAuthorization(
                    answer: answer, providerID: "p", sentAt: Date(), scopes: [], secrets: [secret])
            }
            #expect(!"\(String(describing: error))".contains("0123"), "\(String(describing: error))")
        }
    }

    /// A server's own words for a passing trouble (`server_error`,
    /// `temporarily_unavailable`) and a 429 with no body ended a sign-in
    /// the user may have approved; they are retried as a 503 page is.
    @Test func aServerSayingItIsInTroubleIsRetried() async throws {
        try await withServer { server in
            serve(
                server,
                polls: [
                    .json(#"{"error":"temporarily_unavailable"}"#, status: 503),
                    .json(#"{"error":"server_error"}"#, status: 500), Self.pending,
                    StubResponse(status: 429), .json(#"{"error":"slow_down"}"#, status: 429), Self.granted,
                ])
            let clock = FakeClock()
            let credential = try await client(server, clock: clock).authorizeWithDeviceCode(
                options: AuthorizationOptions()
            ) { _ in }
            #expect(credential.accessToken == "tv-token")
            // A 429 that says slow_down is slow_down (5 s more, for good), not a failure.
            #expect(clock.recorded == [5, 10, 20, 5, 10, 10], "\(clock.recorded)")
        }
    }

    /// A server that keeps failing is reported with its own error after
    /// three retries, not waited on until the code expires.
    @Test func aServerThatKeepsFailingIsReportedAfterThreeRetries() async throws {
        try await withServer { server in
            let down = StubResponse.text("<h1>500</h1>", contentType: "text/html", status: 500)
            serve(server, polls: [Self.pending, down, down, down, down, Self.granted])
            let clock = FakeClock()
            let error = await #expect(throws: AuthKitError.self) {
                _ = try await client(server, clock: clock).authorizeWithDeviceCode(options: AuthorizationOptions()) {
                    _ in
                }
            }
            guard case .invalidResponse(.devicePolling, let reason)? = error?.reason else {
                Issue.record("not the server's own error: \(String(describing: error))")
                return
            }
            #expect(reason.detail.contains("HTTP 500 with an HTML page"), "\(reason)")
            #expect(clock.recorded == [5, 5, 10, 20, 40], "\(clock.recorded)")
        }
        // An answer about the grant (access_denied), whatever its status, is not retried.
        try await withServer { server in
            serve(server, polls: [.json(#"{"error":"access_denied"}"#, status: 500)])
            let denied = await #expect(throws: AuthKitError.self) {
                _ = try await client(server, clock: FakeClock()).authorizeWithDeviceCode(
                    options: AuthorizationOptions()
                ) { _ in }
            }
            #expect(denied?.code == .accessDenied)
        }
    }

    @Test func withoutAnIntervalTheDefaultIsFiveSeconds() async throws {
        try await withServer { server in
            serve(server, interval: nil, polls: [Self.granted])
            let clock = FakeClock()
            _ = try await client(server, clock: clock).authorizeWithDeviceCode(options: AuthorizationOptions()) { _ in }
            #expect(clock.recorded == [5])
        }
    }

    @Test func aDenialIsAccessDenied() async throws {
        try await withServer { server in
            serve(server, polls: [Self.pending, .json(#"{"error":"access_denied"}"#, status: 400)])
            let clock = FakeClock()
            let error = await #expect(throws: AuthKitError.self) {
                _ = try await client(server, clock: clock).authorizeWithDeviceCode(options: AuthorizationOptions()) {
                    _ in
                }
            }
            #expect(error?.code == .accessDenied)
        }
    }

    /// A device sign-in's token of a type AuthKit cannot send is refused
    /// when it comes, as a browser sign-in's is, not stored to fail later.
    @Test func aTokenOfATypeAuthKitCannotSendEndsThePolling() async throws {
        try await withServer { server in
            serve(
                server,
                polls: [Self.pending, .json(#"{"access_token":"tv-token","token_type":"DPoP","expires_in":3600}"#)])
            let clock = FakeClock()
            let error = await #expect(throws: AuthKitError.self) {
                _ = try await client(server, clock: clock).authorizeWithDeviceCode(options: AuthorizationOptions()) {
                    _ in
                }
            }
            guard case .invalidResponse(.devicePolling, let reason)? = error?.reason else {
                Issue.record("not an unusable poll answer: \(String(describing: error))")
                return
            }
            #expect(reason.detail.contains("of type 'DPoP'") && reason.detail.contains("tv.json (test)"), "\(reason)")
            #expect(server.requests(to: "/token").count == 2, "polling went on after the token came")
        }
    }

    @Test func theServersExpiryEndsIt() async throws {
        try await withServer { server in
            serve(server, polls: [.json(#"{"error":"expired_token"}"#, status: 400)])
            await #expect {
                _ = try await client(server, clock: FakeClock()).authorizeWithDeviceCode(
                    options: AuthorizationOptions()
                ) { _ in }
            } throws: { error in
                guard case .providerError(.devicePolling, let response)? = error.authKitReason else { return false }
                return response.code == "expired_token"
            }
        }
    }

    /// The codes expire after 12 s: polls at 5 and 10, and none after.
    @Test func ourOwnClockStopsAtExpiry() async throws {
        try await withServer { server in
            serve(server, expiresIn: 12, polls: [])
            let clock = FakeClock()
            let error = await #expect(throws: DevicePoller.expired) {
                _ = try await client(server, clock: clock).authorizeWithDeviceCode(options: AuthorizationOptions()) {
                    _ in
                }
            }
            #expect(server.requests(to: "/token").count == 2)
            // The same step as the provider's expired_token: a caller matching one matches both.
            guard case .providerError(.devicePolling, let response)? = error?.reason else {
                Issue.record("\(String(describing: error))")
                return
            }
            #expect(response.code == "expired_token" && response.status == nil)
            // Said as what it is: no provider answered expired_token.
            let text = String(describing: try #require(error))
            #expect(
                text.hasPrefix("The device token request ended: expired_token")
                    && text.contains("on this computer's clock")
                    && !text.contains("at the provider"), "\(text)")
        }
    }

    /// Hostile numbers end the sign-in with a message instead of trapping on
    /// an overflowing wait; an interval longer than the codes live is waited
    /// only until they expire.
    @Test func hostileNumbersAreRefusedAndNoWaitOutlivesTheCodes() async throws {
        for (members, field) in [
            (#""expires_in":"inf","interval":5"#, "expires_in"), (#""expires_in":60,"interval":"1e300""#, "interval"),
            (#""expires_in":60,"interval":"nan""#, "interval"), (#""expires_in":1e300"#, "expires_in"),
        ] {
            try await withServer { server in
                server.route("POST", "/device") { _ in
                    .json(
                        #"{"device_code":"d","user_code":"U","verification_uri":"https://as.example/device",\#(members)}"#
                    )
                }
                await #expect {
                    _ = try await client(server, clock: FakeClock()).authorizeWithDeviceCode(
                        options: AuthorizationOptions()
                    ) { _ in }
                } throws: { error in
                    guard case .invalidResponse(.deviceAuthorization, let reason)? = error.authKitReason else {
                        return false
                    }
                    // Present but out of range: said so, not "it lacks … expires_in".
                    return reason.detail.contains("its \(field) ") && !reason.detail.contains("lacks")
                }
            }
        }
        // An interval no shorter than the codes live allows no poll: said at
        // once, not after the user approved and waited out the lifetime to
        // be told the code expired before it was approved.
        try await withServer { server in
            serve(server, expiresIn: 30, interval: 3600, polls: [])
            let clock = FakeClock()
            await #expect {
                _ = try await client(server, clock: clock).authorizeWithDeviceCode(options: AuthorizationOptions()) {
                    _ in
                }
            } throws: { error in
                guard
                    case .invalidResponse(.deviceAuthorization, .invalidField("interval", let detail))? =
                        error.authKitReason
                else { return false }
                return detail.contains("no poll could be sent")
            }
            #expect(clock.recorded.isEmpty)
            #expect(server.requests(to: "/token").isEmpty)
        }
    }

    /// A wait cut short to the codes' expiry ends the sign-in when it ends,
    /// even when the wall clock reads a moment before expiry then (the
    /// sleep's clock is another): a poll there came sooner than the
    /// interval, `slow_down`'s included, allows (RFC 8628 §3.5).
    @Test(arguments: [(30, 20, 1), (12, 5, 1)])
    func noPollAtTheEndOfAWaitCutToTheExpiry(expiresIn: Int, interval: Int, slowDowns: Int) async throws {
        try await withServer { server in
            serve(
                server, expiresIn: expiresIn, interval: interval,
                polls: Array(repeating: Self.slowDown, count: slowDowns))
            let clock = FakeClock(early: 0.002)
            await #expect(throws: DevicePoller.expired) {
                _ = try await client(server, clock: clock).authorizeWithDeviceCode(options: AuthorizationOptions()) {
                    _ in
                }
            }
            // The polls the interval allowed (5 s, then 10 after slow_down:
            // past the 12 s the codes live), none at their expiry.
            #expect(server.requests(to: "/token").count == slowDowns, "\(clock.recorded)")
        }
    }

    @Test func cancellingStopsThePolling() async throws {
        try await withServer { server in
            serve(server, polls: [])
            var client = try client(server, clock: FakeClock())
            client.deviceSleep = { try await Task.sleep(for: $0 / 50) } // real, short sleeps
            let task = Task { [client] in
                try await client.authorizeWithDeviceCode(options: AuthorizationOptions()) { _ in }
            }
            try await Task.sleep(for: .milliseconds(300))
            task.cancel()
            await #expect(throws: AuthKitError.cancelled) { _ = try await task.value }
            // Not once after, over five intervals (100 ms here).
            let polled = server.requests(to: "/token").count
            try await Task.sleep(for: .milliseconds(500))
            #expect(server.requests(to: "/token").count == polled)
        }
    }

    /// Cancelled while a poll is under way, the poll is seen through: its
    /// answer issued the tokens (and spent the device code), so they are
    /// returned, not dropped with the grant left at the provider. Before, the
    /// request was cancelled with the task and the answer never read.
    @Test func aPollUnderWayWhenCancelledIsSeenThrough() async throws {
        try await withServer { server in
            serve(server, polls: [])
            let polled = Recorder<Int>()
            server.route("POST", "/token") { _ in
                polled.append(1)
                Thread.sleep(forTimeInterval: 0.6)
                return Self.granted
            }
            let client = try client(server, clock: FakeClock())
            let task = Task { [client] in
                try await client.authorizeWithDeviceCode(options: AuthorizationOptions()) { _ in }
            }
            while polled.all.isEmpty { try await Task.sleep(for: .milliseconds(10)) }
            task.cancel()
            let credential = try await task.value
            #expect(credential.accessToken == "tv-token" && polled.all.count == 1)
        }
    }

    /// GitHub's device flow takes the client id alone, even from a client with a secret.
    /// The bundled descriptor itself, pointed at the test server: a client
    /// configured with a secret sends it neither in a body nor in Basic.
    @Test func githubsDescriptorPollsWithTheClientIDAlone() async throws {
        let github = try bundledDescriptor("github")
        #expect(github.supportsDeviceGrant && github.device?.url == "https://github.com/login/device/code")
        try await withServer { server in
            server.route("POST", "/login/device/code") { _ in
                .json(
                    #"{"device_code":"dev-code-secret","user_code":"WDJB-MJHT","verification_uri":"https://github.com/login/device","expires_in":900,"interval":5}"#
                )
            }
            server.route("POST", "/login/oauth/access_token") { _ in Self.granted }
            var client = try OAuth2Client(
                descriptor: bundledDescriptor("github", pointingTo: server),
                settings: ClientSettings(clientID: "gh-app", clientSecret: "gh-secret"))
            client.deviceSleep = { _ in }
            let credential = try await client.authorizeWithDeviceCode(options: AuthorizationOptions()) { _ in }
            #expect(credential.accessToken == "tv-token")
            #expect(server.requests.map(\.path) == ["/login/device/code", "/login/oauth/access_token"])
            for request in server.requests {
                #expect(
                    !request.bodyText.contains("gh-secret") && request.header("Authorization") == nil,
                    "\(request.headers)")
                #expect(try formObject(request.bodyText)["client_id"] == "gh-app", "\(request.bodyText)")
            }
        }
    }

    /// Twitch takes the device grant's scopes as `scopes`, in the request and
    /// in each poll (`device.scopeParameter`, `sendScopesWhenPolling`): sent
    /// as `scope`, Twitch would grant none of them. Its refresh of a public
    /// client's token needs no secret (`token.refreshRequiresClientSecret`),
    /// though its code exchange does.
    @Test func twitchsDeviceGrantSendsScopesAndRefreshesWithoutASecret() async throws {
        try await withServer { server in
            server.route("POST", "/oauth2/device") { _ in
                .json(
                    #"{"device_code":"dev-code-secret","user_code":"WDJB-MJHT","verification_uri":"https://www.twitch.tv/activate","expires_in":1800,"interval":5}"#
                )
            }
            server.route("POST", "/oauth2/token") { _ in Self.granted }
            var client = try OAuth2Client(
                descriptor: bundledDescriptor("twitch", pointingTo: server),
                settings: ClientSettings(clientID: "public-app", scopes: ["user:read:email", "chat:read"]))
            client.deviceSleep = { _ in }
            var credential = try await client.authorizeWithDeviceCode(options: AuthorizationOptions()) { _ in }
            let sent = try server.requests.map { try formObject($0.bodyText) }
            #expect(
                sent.count == 2
                    && sent.allSatisfy { $0["scopes"] == "user:read:email chat:read" && $0["scope"] == nil }, "\(sent)")
            credential.expiresAt = Date(timeIntervalSinceNow: -60)
            _ = try await client.refresh(credential)
            let refresh = try formObject(try #require(server.requests.last).bodyText)
            #expect(
                refresh["grant_type"] == "refresh_token" && refresh["client_id"] == "public-app"
                    && refresh["client_secret"] == nil)
            // The code exchange still needs the secret.
            await #expect(throws: AuthKitError.missingSetting(providerID: "twitch", .clientSecret)) {
                _ = try await client.exchange(code: "c", pending: client.startAuthorization().pending)
            }
        }
    }

    /// Twitch says where a poll stands in `message`, not `error` (`{"status":
    /// 400,"message":"authorization_pending"}`, with or without `"error":
    /// "Bad Request"`): its descriptor reads `message` first
    /// (`token.response.errorCode`). Read as `error`, the first poll before
    /// the user approved ended the sign-in. A spent refresh token is its
    /// `Invalid refresh token` (`token.refreshRefusedErrors`): sign in again.
    @Test func twitchsPollsAndRefusalsAreReadFromItsMessage() async throws {
        try await withServer { server in
            server.route("POST", "/oauth2/device") { _ in
                .json(
                    #"{"device_code":"dev-code-secret","user_code":"WDJB-MJHT","verification_uri":"https://www.twitch.tv/activate","expires_in":1800,"interval":5}"#
                )
            }
            let polls: [StubResponse] = [
                .json(#"{"status":400,"message":"authorization_pending"}"#, status: 400),
                .json(#"{"error":"Bad Request","status":400,"message":"slow_down"}"#, status: 400),
                Self.granted,
                .json(#"{"error":"Bad Request","status":400,"message":"Invalid refresh token"}"#, status: 400),
            ]
            let answered = Recorder<Int>()
            server.route("POST", "/oauth2/token") { _ in
                answered.append(1)
                return polls[min(answered.all.count, polls.count) - 1]
            }
            let clock = FakeClock()
            var client = try OAuth2Client(
                descriptor: bundledDescriptor("twitch", pointingTo: server),
                settings: ClientSettings(clientID: "public-app"), now: { clock.now })
            client.deviceSleep = { try await clock.sleep($0) }
            var credential = try await client.authorizeWithDeviceCode(options: AuthorizationOptions()) { _ in }
            #expect(credential.accessToken == "tv-token" && clock.recorded == [5, 5, 10], "\(clock.recorded)")
            credential.expiresAt = Date(timeIntervalSinceNow: -60)
            await #expect {
                _ = try await client.refresh(credential)
            } throws: { error in
                guard case .signInRequired(_, .refreshRefused(let response))? = error.authKitReason else {
                    return false
                }
                return response.code == "Invalid refresh token"
            }
        }
    }

    /// Microsoft's device flow says the user declined with
    /// `authorization_declined`: a refusal (``AuthKitError/Code/accessDenied``),
    /// as RFC 8628's `access_denied` is, not a provider's failure.
    @Test func microsoftsDeclineIsADenial() async throws {
        try await withServer { server in
            serve(server, polls: [Self.pending, .json(#"{"error":"authorization_declined"}"#, status: 400)])
            let error = await #expect(throws: AuthKitError.self) {
                _ = try await client(server, clock: FakeClock()).authorizeWithDeviceCode(
                    options: AuthorizationOptions()
                ) { _ in }
            }
            guard case .authorizationFailed(let response)? = error?.reason else {
                Issue.record("\(String(describing: error))")
                return
            }
            #expect(response.code == "authorization_declined" && error?.code == .accessDenied)
        }
    }

    @Test func aProviderWithoutTheGrantSaysSo() async throws {
        let qiita = try OAuth2Client(descriptor: bundledDescriptor("qiita"), settings: ClientSettings(clientID: "c"))
        await #expect(throws: AuthKitError.notSupported(providerID: "qiita", .deviceGrant)) {
            _ = try await qiita.authorizeWithDeviceCode(options: AuthorizationOptions()) { _ in }
        }
    }

    @Test func anIncompleteAnswerNamesWhatIsMissing() async throws {
        try await withServer { server in
            server.route("POST", "/device") { _ in
                .json(#"{"device_code":"d","verification_uri":"https://as.example/device"}"#)
            }
            await #expect {
                _ = try await client(server, clock: FakeClock()).startDeviceAuthorization()
            } throws: { error in
                guard case .invalidResponse(.deviceAuthorization, let reason)? = error.authKitReason else {
                    return false
                }
                return reason.detail.hasPrefix("it lacks user_code, expires_in; RFC 8628 §3.2 requires each")
                    && reason.detail.contains("'device_code', 'verification_uri'")
            }
        }
    }

    /// A member that is there but empty is not called missing (before: "it
    /// lacks … user_code …", with user_code among the fields present); a
    /// user code no one could type is refused, not shown cut short.
    @Test(arguments: [
        (#""user_code":"""#, "its user_code is empty or not text; RFC 8628 §3.2 requires each"),
        (#""user_code":{}"#, "its user_code is empty or not text"),
        (
            #""user_code":"\#(String(repeating: "A", count: 41))""#,
            "its user_code (41 characters) is not a code a person can type: at most 40"
        ),
        (
            #""user_code":"WDJB\u001b[2JMJHT""#,
            "its user_code (12 characters, one of them a control or invisible character) is not a code a person can type"
        ),
        // Shown as "WDJBMJHT" or "WDJB MJHT", and typed so it does not match.
        (#""user_code":"WDJB\u200bMJHT""#, "one of them a control or invisible character"),
        (#""user_code":"WDJB\u00a0MJHT""#, "one of them a control or invisible character"),
        // 21 letters with a combining accent each: 21 Characters, 42 scalars,
        // shown cut at 40 (the display counts scalars) and so not typeable.
        (
            #""user_code":"\#(String(repeating: "e\u{301}", count: 21))""#,
            "its user_code (42 characters) is not a code a person can type: at most 40"
        ),
    ])
    func aUserCodeNoOneCouldTypeIsRefused(member: String, expected: String) async throws {
        try await withServer { server in
            server.route("POST", "/device") { _ in
                .json(
                    #"{"device_code":"d",\#(member),"verification_uri":"https://as.example/device","expires_in":600}"#)
            }
            await #expect {
                _ = try await client(server, clock: FakeClock()).startDeviceAuthorization()
            } throws: { error in
                guard case .invalidResponse(.deviceAuthorization, let reason)? = error.authKitReason else {
                    return false
                }
                return reason.detail.contains(expected) && !reason.detail.contains("lacks")
            }
        }
    }
}
