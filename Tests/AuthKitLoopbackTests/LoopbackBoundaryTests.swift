import AuthKit
import AuthKitTestSupport
import Foundation
import Testing

@testable import AuthKitLoopback

#if canImport(Glibc)
    import Glibc
#endif

/// The listener at its boundaries: a `localhost` redirect leaves no loopback
/// family for another program to take, and what arrives reaches the strict
/// redirect parser exactly as sent.
@Suite struct LoopbackBoundaryTests {
    /// A port past 65535 is refused as an unusable redirect, typed, before
    /// any socket: SwiftNIO's socket address traps on it (authkit crashed).
    @Test func aPortPast65535IsAnUnusableRedirect() {
        for uri in ["http://127.0.0.1:99999/cb", "http://[::1]:65536/cb", "http://localhost:4294967297/cb"] {
            do {
                _ = try LoopbackRedirect(requested: URL(string: uri), portIsFlexible: false)
                Issue.record("\(uri) was accepted")
            } catch let error as AuthKitError {
                guard case .unusableRedirectURI(_, let reason) = error.reason else {
                    Issue.record("\(uri): \(error)")
                    continue
                }
                #expect(reason.contains("is not a TCP port"), "\(uri): \(reason)")
            } catch { Issue.record("\(uri): \(error)") }
        }
        #expect(throws: Never.self) {
            _ = try LoopbackRedirect(requested: URL(string: "http://127.0.0.1:65535/cb"), portIsFlexible: false)
        }
    }

    /// 127.0.0.2 is loopback (RFC 8252 §8.3's 127.0.0.0/8), but the listener
    /// binds 127.0.0.1 and ::1 only: the refusal says so. It said the host
    /// did not point to this machine's loopback interface, which is untrue.
    @Test func anotherLoopbackAddressIsNamedAsOneNotBound() {
        for (uri, expected) in [
            ("http://127.0.0.2:8765/cb", "its host 127.0.0.2 is a loopback address the listener does not bind"),
            ("http://192.168.1.2:8765/cb", "does not point to this machine's loopback interface"),
        ] {
            do {
                _ = try LoopbackRedirect(requested: URL(string: uri), portIsFlexible: false)
                Issue.record("\(uri) was accepted")
            } catch let error as AuthKitError {
                guard case .unusableRedirectURI(_, let reason) = error.reason else {
                    Issue.record("\(uri): \(error)")
                    continue
                }
                #expect(reason.contains(expected), "\(uri): \(reason)")
            } catch { Issue.record("\(uri): \(error)") }
        }
    }

    @Test(.enabled(if: RawHTTP.ipv6Available, "this machine cannot bind ::1 (no IPv6 loopback)"))
    func aLocalhostRedirectListensOnBothFamilies() async throws {
        let attempt = TestAttempt(redirectURI: "http://localhost/callback")
        let browser = BrowserSpy()
        let agent = LoopbackUserAgent(timeout: .seconds(30), browser: browser.launcher)
        let (task, _) = try await start(agent, attempt, browser: browser)
        let port = attempt.port
        #expect(attempt.redirectURI?.absoluteString == "http://localhost:\(port)/callback")
        // Nobody else can take [::1] on this port: the code cannot go there.
        #expect(throws: SocketError.self) { _ = try RawHTTP.listen(host: "::1", port: port) }
        // And the browser reaching ::1 gets the listener.
        let response = try await RawHTTP.request(attempt.target("code=v6"), host: "::1", port: port)
        #expect(response.status == 200)
        let url = try await task.value
        #expect(url.absoluteString.contains("code=v6"))
    }

    /// A fixed `localhost` port whose ::1 side another program holds fails
    /// clearly rather than listening on 127.0.0.1 alone.
    @Test(.enabled(if: RawHTTP.ipv6Available, "this machine cannot bind ::1 (no IPv6 loopback)"))
    func aTakenIPv6PortFailsClearly() async throws {
        // The port is free on ::1 only by chance for 127.0.0.1: another test may
        // hold it there, which is a different (also clear) refusal; pick again.
        for _ in 0..<5 {
            let (fd, port) = try RawHTTP.listen(host: "::1")
            defer { close(fd) }
            let attempt = TestAttempt(redirectURI: "http://localhost:\(port)/callback", flexible: false)
            let agent = LoopbackUserAgent(timeout: .seconds(10), browser: BrowserSpy().launcher)
            do {
                _ = try await agent.run(attempt.session)
                Issue.record("the sign-in listened although [::1]:\(port) was taken")
            } catch let error as AuthKitError where error == .loopback(.portInUse(host: "127.0.0.1", port: port)) {
                continue
            } catch {
                #expect(error as? AuthKitError == .loopback(.portInUse(host: "[::1]", port: port)), "\(error)")
            }
            return
        }
        Issue.record("127.0.0.1 was taken on every port tried")
    }

    /// `%ZZ`, a raw `|` or `[` in the query: the parser refuses them on the
    /// listener too (a `URL` made from the request would have re-encoded them
    /// into something acceptable), and the wait goes on.
    @Test func theListenerHandsTheParserWhatArrived() async throws {
        let attempt = TestAttempt()
        let browser = BrowserSpy()
        let events = EventLog()
        let agent = LoopbackUserAgent(timeout: .seconds(30), onEvent: { events.append($0) }, browser: browser.launcher)
        let (task, _) = try await start(agent, attempt, browser: browser)
        for hostile in ["code=a%ZZ", "code=a|b", "code=a[0]"] {
            let response = try await RawHTTP.request(attempt.target(hostile), port: attempt.port)
            #expect(response.status == 400, "\(hostile) was accepted")
        }
        #expect(events.ignoredCount == 3)
        let genuine = try await RawHTTP.request(attempt.target("code=fine"), port: attempt.port)
        #expect(genuine.status == 200)
        let url = try await task.value
        #expect(url.absoluteString.contains("code=fine"))
    }
}
