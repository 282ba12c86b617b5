import AuthKit
import AuthKitTestSupport
import Foundation
import Testing

@testable import AuthKitApple

/// What ASWebAuthenticationSession is told to catch, and how its end becomes
/// AuthKit's answer: the logic of the Apple user agents, checked on Linux.
@Suite struct WebAuthenticationTests {
    /// Linux's compiler ignores Apple availability, so `scripts/typecheck-apple`
    /// cannot catch a missing platform: an API newer than visionOS 1.0's
    /// baseline (iOS 17.0) must name visionOS where it is checked, or the
    /// package stops building for visionOS 1.0 (the SwiftUI agent's iOS 17.4
    /// check lacked it). Read in the sources and in the SDK stubs.
    @Test func availabilityPastIOS17NamesVisionOS() throws {
        let pattern = try NSRegularExpression(pattern: #"available\(([^)]*)\)"#)
        var checked = 0
        let folders = ["Sources/AuthKitApple", "Sources/AuthKit", "Tests/AppleSDKStubs", "Examples/iOS"]
        for (file, text) in try SourceFiles.swift(under: folders) {
            for list in SourceFiles.captures(of: pattern, in: text) {
                guard let iOS = list.firstMatch(of: /iOS (\d+)\.?(\d*)/) else { continue }
                let major = Int(iOS.1) ?? 0
                let minor = Int(iOS.2) ?? 0
                guard major > 17 || (major == 17 && minor > 0) else { continue }
                checked += 1
                #expect(list.contains("visionOS"), "\(file.lastPathComponent): available(\(list))")
            }
        }
        #expect(checked >= 3, "the iOS 17.4 checks were not found")
    }

    @Test func callbacksFromRedirectURIs() throws {
        #expect(
            try WebAuthenticationCallback(redirectURI: URL(string: "com.example.app:/oauth")!)
                == .customScheme("com.example.app"))
        #expect(try WebAuthenticationCallback(redirectURI: URL(string: "MyApp://callback")!) == .customScheme("myapp"))
        #expect(
            try WebAuthenticationCallback(redirectURI: URL(string: "https://App.Example/oauth/cb")!)
                == .https(host: "app.example", path: "/oauth/cb"))
        #expect(
            try WebAuthenticationCallback(redirectURI: URL(string: "https://app.example")!)
                == .https(host: "app.example", path: "/"))
        // The path as registered: a final slash kept, escapes not decoded.
        #expect(
            try WebAuthenticationCallback(redirectURI: URL(string: "https://app.example/auth/callback/")!)
                == .https(host: "app.example", path: "/auth/callback/"))
        #expect(
            try WebAuthenticationCallback(redirectURI: URL(string: "https://app.example/a%2Fb")!)
                == .https(host: "app.example", path: "/a%2Fb"))
        #expect(try WebAuthenticationCallback(redirectURI: URL(string: "myapp://x")!).scheme == "myapp")
        #expect(try WebAuthenticationCallback(redirectURI: URL(string: "https://app.example/cb")!).scheme == nil)
    }

    @Test func redirectsItCannotCatchAreRefusedWithWhatToRegister() throws {
        for (uri, hint) in [
            ("http://127.0.0.1:8765/callback", "cannot catch a plain http redirect"),
            ("https:/no-host", "needs a host"), ("/relative/only", "has no scheme"),
            // Instagram's usual https://localhost/callback: no app can be associated with it.
            ("https://localhost/callback", "webcredentials:"), ("https://127.0.0.1/cb", "webcredentials:"),
            // Any address, and localhost with its root dot: no domain to associate either.
            ("https://127.0.0.2/cb", "webcredentials:"), ("https://[0:0:0:0:0:0:0:1]/cb", "webcredentials:"),
            ("https://localhost./cb", "webcredentials:"), ("https://192.0.2.1/cb", "webcredentials:"),
        ] {
            #expect {
                try WebAuthenticationCallback(redirectURI: URL(string: uri)!)
            } throws: { error in
                guard case .unusableRedirectURI(_, let reason)? = error.authKitReason else { return false }
                return reason.contains(hint)
            }
        }
        // Before iOS 17.4 / macOS 14.4, an https callback is refused when the
        // agent starts (before a request token is asked for); a scheme is not.
        #expect {
            try WebAuthenticationCallback(
                redirectURI: URL(string: "https://app.example/cb")!, httpsCallbacksAvailable: false)
        } throws: { error in
            guard case .unusableRedirectURI(_, let reason)? = error.authKitReason else { return false }
            return reason.contains("iOS 17.4")
        }
        #expect(
            try WebAuthenticationCallback(redirectURI: URL(string: "myapp:/cb")!, httpsCallbacksAvailable: false)
                == .customScheme("myapp"))
    }

    @Test func aCallbackMatchesOnlyItsOwnRedirect() throws {
        let scheme = try WebAuthenticationCallback(redirectURI: URL(string: "com.example.app:/oauth")!)
        #expect(scheme.matches(URL(string: "com.example.app:/oauth?code=x&state=y")!))
        #expect(!scheme.matches(URL(string: "com.example.other:/oauth?code=x")!))
        let https = try WebAuthenticationCallback(redirectURI: URL(string: "https://app.example/cb")!)
        #expect(https.matches(URL(string: "https://APP.example/cb?code=x")!))
        #expect(!https.matches(URL(string: "https://app.example/other?code=x")!))
        #expect(!https.matches(URL(string: "http://app.example/cb?code=x")!))
        let slashed = try WebAuthenticationCallback(redirectURI: URL(string: "https://app.example/cb/")!)
        #expect(slashed.matches(URL(string: "https://app.example/cb/?code=x")!))
        #expect(!slashed.matches(URL(string: "https://app.example/cb?code=x")!))
    }

    @Test func closingTheSheetIsCancellationAndOtherEndsAreNamed() {
        let domain = WebAuthenticationOutcome.errorDomain
        let url = URL(string: "myapp:/cb?code=x")!
        #expect(WebAuthenticationOutcome.map(callbackURL: url, error: nil) == .success(url))
        #expect(WebAuthenticationOutcome.map(callbackURL: nil, error: (domain, 1, "cancelled")) == .failure(.cancelled))
        for (code, words) in [(2, "no presentation anchor"), (3, "not a usable window")] {
            guard
                case .failure(let failure) = WebAuthenticationOutcome.map(callbackURL: nil, error: (domain, code, "x")),
                case .misuse(.userAgentBrokeProtocol(let text)) = failure.reason
            else {
                Issue.record("code \(code) not mapped to misuse")
                continue
            }
            #expect(text.contains(words))
        }
        guard
            case .failure(let failure) = WebAuthenticationOutcome.map(
                callbackURL: nil, error: ("NSURLErrorDomain", -1009, "offline")),
            case .misuse(.userAgentBrokeProtocol(let other)) = failure.reason
        else {
            Issue.record("a foreign error must not pass as cancellation")
            return
        }
        #expect(other.contains("offline") && other.contains("NSURLErrorDomain"))
        // The user closing the sheet is not an error an app should report.
        #expect(
            WebAuthenticationOutcome.map(callbackURL: nil, error: ("NSURLErrorDomain", 1, "x")) != .failure(.cancelled))
    }
}
