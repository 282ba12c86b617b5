import AuthKit
import AuthKitTestSupport
import Foundation
import Testing

@testable import AuthKitLoopback

/// What the listener answers to each request, and which request ends the wait.
@Suite struct LoopbackRedirectHandlingTests {
    @Test func genuineRedirectCompletesWithTheFullURL() async throws {
        let attempt = TestAttempt()
        let browser = BrowserSpy()
        let events = EventLog()
        let agent = LoopbackUserAgent(timeout: .seconds(30), onEvent: { events.append($0) }, browser: browser.launcher)
        let (task, authorizationURL) = try await start(agent, attempt, browser: browser)

        // The authorization URL was built with the bound port.
        let port = attempt.port
        #expect(port > 0)
        let redirectURI = try #require(attempt.redirectURI)
        #expect(redirectURI.absoluteString == "http://127.0.0.1:\(port)/callback")
        let query = try #require(authorizationURL.query(percentEncoded: true))
        let sent = try #require(FormURLEncoding.decode(query))
        #expect(sent.first { $0.0 == "redirect_uri" }?.1 == redirectURI.absoluteString)

        let response = try await RawHTTP.request(attempt.target("code=abc%2B1"), port: port)
        #expect(response.status == 200)
        #expect(response.body.contains("Local &lt;Test&gt; answered. You can close this tab"))
        #expect(!response.body.contains("<Test>"))

        let result = try await task.value
        #expect(
            result == URL(string: "http://127.0.0.1:\(port)/callback?code=abc%2B1&state=\(attempt.state)")!)
        #expect(events.all.contains(.listening(authorizationURL: authorizationURL, redirectURI: redirectURI)))
        #expect(!events.all.contains { if case .browserFailed = $0 { return true } else { return false } })
    }

    @Test func everyResponseCarriesTheSecurityHeaders() async throws {
        let attempt = TestAttempt()
        let browser = BrowserSpy()
        let agent = LoopbackUserAgent(timeout: .seconds(30), browser: browser.launcher)
        let (task, _) = try await start(agent, attempt, browser: browser)
        let port = attempt.port

        let responses = [
            try await RawHTTP.request("/favicon.ico", port: port),
            try await RawHTTP.request(
                attempt.target("code=x").replacingOccurrences(of: attempt.state, with: "forged"), port: port),
            try await RawHTTP.request(
                attempt.target("code=x"), method: "POST", port: port, extraHeaders: "Content-Length: 0\r\n"),
            try await RawHTTP.request(attempt.target("code=x"), port: port),
        ]
        #expect(responses.map(\.status) == [404, 400, 405, 200])
        for response in responses {
            #expect(response.header("Referrer-Policy") == "no-referrer")
            #expect(
                response.header("Content-Security-Policy")?.hasPrefix("default-src 'none'; style-src 'unsafe-inline'")
                    == true)
            #expect(response.header("Cache-Control") == "no-store")
            #expect(response.header("Content-Type") == "text/html; charset=utf-8")
            #expect(response.header("Connection") == "close")
            #expect(response.header("Location") == nil)
            // Self-contained: nothing to fetch from anywhere.
            #expect(!response.body.contains("src="))
            #expect(!response.body.contains("href="))
            #expect(!response.body.contains("<script"))
        }
        #expect(responses[2].header("Allow") == "GET, HEAD")
        _ = try await task.value
    }

    /// A redirect URI whose path ends in `/`: a malformed answer there
    /// (a raw `|` in the code) is a refused answer, said to the caller, not
    /// a stray at another path. `URL.path` dropped the slash, the request
    /// got a 404, and the sign-in waited out its timeout in silence.
    @Test func aMalformedAnswerAtAPathEndingInASlashIsRefusedNotIgnored() async throws {
        let attempt = TestAttempt(redirectURI: "http://127.0.0.1/callback/")
        let browser = BrowserSpy()
        let events = EventLog()
        let agent = LoopbackUserAgent(timeout: .seconds(30), onEvent: { events.append($0) }, browser: browser.launcher)
        let (task, _) = try await start(agent, attempt, browser: browser)
        let malformed = try await RawHTTP.request(attempt.target("code=a|b", path: "/callback/"), port: attempt.port)
        #expect(malformed.status == 400, "\(malformed.status)")
        #expect(events.rejectedCount == 1 && events.ignoredCount == 1, "\(events.all)")
        let genuine = try await RawHTTP.request(attempt.target("code=abc", path: "/callback/"), port: attempt.port)
        #expect(genuine.status == 200)
        _ = try await task.value
    }

    @Test func straysGetErrorPagesAndTheListenerKeepsWaiting() async throws {
        let attempt = TestAttempt()
        let browser = BrowserSpy()
        let events = EventLog()
        let agent = LoopbackUserAgent(timeout: .seconds(30), onEvent: { events.append($0) }, browser: browser.launcher)
        let (task, _) = try await start(agent, attempt, browser: browser)
        let port = attempt.port

        let favicon = try await RawHTTP.request("/favicon.ico", port: port)
        #expect(favicon.status == 404)
        // Another path with a character no URL holds is a stray too, not a
        // refused answer at the redirect address (the parser's character
        // check came before its path check).
        let scanner = try await RawHTTP.request("/favicon.ico?a|b", port: port)
        #expect(scanner.status == 404)
        let wrongPath = try await RawHTTP.request(attempt.target("code=abc", path: "/other"), port: port)
        #expect(wrongPath.status == 404)
        let wrongState = try await RawHTTP.request("/callback?code=abc&state=forged", port: port)
        #expect(wrongState.status == 400)
        #expect(wrongState.body.contains("does not match this sign-in"))
        let missingState = try await RawHTTP.request("/callback?code=abc", port: port)
        #expect(missingState.status == 400)
        #expect(missingState.body.contains("no &#39;state&#39; parameter"))
        let forgedError = try await RawHTTP.request("/callback?error=access_denied&state=forged", port: port)
        #expect(forgedError.status == 400)
        let duplicated = try await RawHTTP.request(attempt.target("code=a&code=b"), port: port)
        #expect(duplicated.status == 400)
        // The listener never trusts a target naming another host, and never redirects there.
        let absolute = try await RawHTTP.request("http://evil.example\(attempt.target("code=abc"))", port: port)
        #expect(absolute.status == 400)
        #expect(absolute.header("Location") == nil)
        // Only GET and HEAD.
        let post = try await RawHTTP.request(
            attempt.target("code=abc"), method: "POST", port: port, extraHeaders: "Content-Length: 0\r\n")
        #expect(post.status == 405)
        let garbage = try await RawHTTP.send(Data("NOT HTTP AT ALL\r\n\r\n".utf8), port: port)
        #expect(garbage.status == 400)
        // The genuine answer, from a page that reached the listener by
        // another name (DNS rebinding: rebind.example resolving to
        // 127.0.0.1): refused unread (421), and it ends nothing; two Hosts: 400.
        let rebound = try await RawHTTP.send(
            Data("GET \(attempt.target("code=abc")) HTTP/1.1\r\nHost: rebind.example:\(port)\r\n\r\n".utf8),
            port: port)
        #expect(rebound.status == 421 && !rebound.body.contains("answered"))
        // A Host of bytes no browser sends, a digit with a combining mark
        // (0xCC 0x81) after it, from any local process: 421, not a crash.
        let combining = try await RawHTTP.send(
            Data("GET \(attempt.target("code=abc")) HTTP/1.1\r\nHost: 127.0.0.1".utf8) + Data([0xCC, 0x81])
                + Data("\r\n\r\n".utf8),
            port: port)
        #expect(combining.status == 421)
        let twoHosts = try await RawHTTP.send(
            Data("GET \(attempt.target("code=abc")) HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: x\r\n\r\n".utf8),
            port: port)
        #expect(twoHosts.status == 400)
        // HTTP/1.1 without a Host (RFC 9112 §3.2): 400, however right its state.
        let noHost = try await RawHTTP.send(
            Data("GET \(attempt.target("code=abc")) HTTP/1.1\r\n\r\n".utf8), port: port)
        #expect(noHost.status == 400)
        // A HEAD of the genuine URL gets the headers but does not count as
        // the answer (its code is another, so the answer taken tells them apart).
        let head = try await RawHTTP.request(attempt.target("code=from-head"), method: "HEAD", port: port)
        #expect(head.status == 200)
        #expect(head.body.isEmpty)
        #expect(Int(head.header("Content-Length") ?? "") ?? 0 > 0)

        #expect(events.ignoredCount == 7) // strays and refused answers; the last six never reach validateRedirect
        // Wrong, missing and forged-error state, and a parameter twice: refused
        // answers (the last was counted as a stray, and the wait said nothing of it).
        #expect(events.rejectedCount == 4)
        // None of these ended the attempt: the genuine answer still does.
        let genuine = try await RawHTTP.request(attempt.target("code=abc"), port: port)
        #expect(genuine.status == 200)
        let url = try await task.value
        #expect(url.query == "code=abc&state=\(attempt.state)")
        // Reasons never repeat the request's query.
        for event in events.all {
            if case .ignoredRequest(let reason) = event { #expect(!reason.contains("code=abc")) }
            if case .rejectedAnswer(let reason) = event { #expect(!reason.contains("code=abc")) }
        }
    }

    /// The names a browser sends for the redirect URI's host, and what a
    /// rebinding page (or anything else) would send instead.
    @Test func onlyLoopbackHostNamesAreServed() {
        for host in [
            "127.0.0.1", "127.0.0.1:8765", "localhost", "LocalHost:80", "[::1]", "[::1]:49152", "127.1.2.3:1",
        ] {
            #expect(LoopbackRequestHandler.namesLoopback(host), "\(host)")
        }
        for host in [
            "rebind.example", "rebind.example:8765", "128.0.0.1", "127.0.0.1.evil.example", "localhost.example",
            "[::2]:80", "[::1]x", "127.0.0.1:80x", "127.0.0.256", "", "[::1", "0x7f.0.0.1", "127.0.0.1:", "[::1]:",
            // A digit and a combining mark are one Character among the digits (this crashed):
            "127.0.0.1\u{301}", "127.0.0.1:8765\u{301}", "1\u{301}27.0.0.1", "[::1]:80\u{301}", "localhost\u{301}",
            "127.0.0.\u{661}", "LOCALHO\u{17F}T",
        ] {
            #expect(!LoopbackRequestHandler.namesLoopback(host), "\(host)")
        }
    }

    @Test func genuineProviderErrorIsShownEscapedAndReturned() async throws {
        let attempt = TestAttempt()
        let browser = BrowserSpy()
        let agent = LoopbackUserAgent(timeout: .seconds(30), browser: browser.launcher)
        let (task, _) = try await start(agent, attempt, browser: browser)
        let port = attempt.port

        let response = try await RawHTTP.request(
            attempt.target("error=access_denied&error_description=%3Cscript%3Ealert(1)%3C%2Fscript%3E+%26+more"),
            port: port)
        #expect(response.status == 200)
        #expect(response.body.contains("access_denied"))
        #expect(response.body.contains("&lt;script&gt;alert(1)&lt;/script&gt; &amp; more"))
        #expect(!response.body.contains("<script>"))
        #expect(!response.body.contains("answered. You can close"))

        let url = try await task.value
        #expect(url.query?.hasPrefix("error=access_denied&") == true)
    }

    @Test func aFailedBrowserLaunchIsReportedAndTheListenerKeepsWaiting() async throws {
        let attempt = TestAttempt()
        let events = EventLog()
        let opened = BrowserSpy()
        let failing: @Sendable (URL) async throws -> Void = { url in
            try await opened.launcher(url)
            throw SystemBrowser.LaunchError(command: "nobrowser", reason: "no such program on PATH")
        }
        let agent = LoopbackUserAgent(timeout: .seconds(30), onEvent: { events.append($0) }, browser: failing)
        let (task, authorizationURL) = try await start(agent, attempt, browser: opened)
        // The user opens the URL by hand and approves.
        let response = try await RawHTTP.request(attempt.target("code=abc"), port: attempt.port)
        #expect(response.status == 200)
        _ = try await task.value
        let redirectURI = try #require(attempt.redirectURI)
        #expect(events.all.contains(.listening(authorizationURL: authorizationURL, redirectURI: redirectURI)))
        #expect(
            events.all.contains {
                if case .browserFailed(authorizationURL, _) = $0 { return true } else { return false }
            })
    }

    /// `browser: nil` opens nothing and says so (`browserFailed`), so the
    /// URL is shown and the pasted-by-hand answer still ends the wait. And
    /// the documented `LoopbackUserAgent { event in … }` gives its closure
    /// to `onEvent`, with the system browser kept: `browser` is declared
    /// last for that (SE-0286's forward scan).
    @Test func noBrowserIsReportedAsAFailedLaunchAndTheTrailingClosureIsTheEventHandler() async throws {
        let documented = LoopbackUserAgent { _ in }
        #expect(documented.onEvent != nil && documented.browser != nil)

        let attempt = TestAttempt()
        let (failures, failed) = AsyncStream.makeStream(of: String.self)
        let agent = LoopbackUserAgent(
            timeout: .seconds(30),
            onEvent: { event in
                if case .browserFailed(_, let reason) = event { failed.yield(reason) }
            }, browser: nil)
        let task = Task { try await agent.run(attempt.session) }
        var reasons = failures.makeAsyncIterator()
        let reason = try #require(await reasons.next())
        #expect(reason.contains("no browser is configured"), "\(reason)")
        let response = try await RawHTTP.request(attempt.target("code=abc"), port: attempt.port)
        #expect(response.status == 200)
        let url = try await task.value
        #expect(url.query?.hasPrefix("code=abc") == true)
    }
}
