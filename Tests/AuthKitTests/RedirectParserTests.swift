import Foundation
import Testing

@testable import AuthKit

@Suite struct RedirectParserTests {
    let state = "kN3r7Zxq0k7mR4vYV1fQ8u6m2oXgH5sJc9tLwBpAeDy"

    func pending(redirect: String = "http://127.0.0.1:4321/callback", issuer: String? = nil, required: Bool = false)
        -> PendingAuthorization
    {
        PendingAuthorization(
            providerID: "p", state: state, codeVerifier: nil, redirectURI: redirect,
            expectedIssuer: issuer, issuerRequired: required, scopes: [], createdAt: fixedNow)
    }

    func parse(_ url: String, _ pending: PendingAuthorization? = nil, fragment: String? = nil) throws -> String {
        try RedirectParser(appendedFragment: fragment).code(from: url, for: pending ?? self.pending())
    }

    func redirectError(_ url: String, _ pending: PendingAuthorization? = nil) -> RedirectError? {
        do {
            _ = try parse(url, pending)
            return nil
        } catch let error as AuthKitError {
            guard case .redirect(let error) = error.reason else {
                return nil
            }
            return error
        } catch {
            return nil
        }
    }

    @Test func acceptsTheGenuineRedirect() throws {
        #expect(try parse("http://127.0.0.1:4321/callback?code=abc%2B1&state=\(state)") == "abc+1")
    }

    @Test func rejectsOtherTargets() {
        for url in [
            "https://127.0.0.1:4321/callback?code=a&state=\(state)", // scheme
            "http://127.0.0.2:4321/callback?code=a&state=\(state)", // host
            "http://127.0.0.1:4322/callback?code=a&state=\(state)", // port
            "http://127.0.0.1/callback?code=a&state=\(state)", // port (default 80)
            "http://127.0.0.1:4321/callback/x?code=a&state=\(state)", // path
            "http://127.0.0.1:4321/Callback?code=a&state=\(state)", // path is case-sensitive
        ] {
            guard case .unexpectedTarget? = redirectError(url) else {
                Issue.record("accepted \(url)")
                continue
            }
        }
    }

    @Test func customSchemes() throws {
        let custom = pending(redirect: "myapp:///cb")
        #expect(try parse("myapp:///cb?code=z&state=\(state)", custom) == "z")
        #expect(redirectError("otherapp:///cb?code=z&state=\(state)", custom) != nil)
        #expect(redirectError("myapp:///other?code=z&state=\(state)", custom) != nil)
        #expect(redirectError("myapp://evil/cb?code=z&state=\(state)", custom) != nil)
    }

    @Test func stateIsCheckedBeforeErrorOrCode() {
        #expect(redirectError("http://127.0.0.1:4321/callback?code=a") == .missingState)
        #expect(redirectError("http://127.0.0.1:4321/callback?code=a&state=forged") == .stateMismatch)
        // A forged *error* response is rejected as forged, not shown as the provider's error.
        #expect(redirectError("http://127.0.0.1:4321/callback?error=access_denied") == .missingState)
        #expect(redirectError("http://127.0.0.1:4321/callback?error=access_denied&state=forged") == .stateMismatch)
    }

    /// RFC 6749 §10.12's `state` is compared byte for byte: one that Swift's
    /// `==` takes as equal (a Kelvin sign for a K) is another state.
    @Test func stateIsComparedByBytes() throws {
        var kelvin = pending()
        kelvin.state = "state-K"
        #expect(try parse("http://127.0.0.1:4321/callback?code=a&state=state-K", kelvin) == "a")
        #expect(redirectError("http://127.0.0.1:4321/callback?code=a&state=state-%E2%84%AA", kelvin) == .stateMismatch)
    }

    @Test func duplicatedParametersAreRejected() {
        #expect(
            redirectError("http://127.0.0.1:4321/callback?code=a&code=b&state=\(state)") == .duplicateParameter("code"))
        #expect(
            redirectError("http://127.0.0.1:4321/callback?code=a&state=\(state)&state=\(state)")
                == .duplicateParameter("state"))
        #expect(RedirectError.duplicateParameter("code").description.contains("'code'"))
    }

    /// A repeated parameter is refused before `state` is checked, so anyone
    /// who can open the redirect URI names it: a name that is a sentence is
    /// not repeated on the listener's page or in the terminal.
    @Test func aRepeatedParametersNameIsQuotedOnlyWhenItIsAName() {
        let name = "Sign-in blocked: get the fix at evil.example"
        let encoded = "Sign-in%20blocked%3A%20get%20the%20fix%20at%20evil.example"
        let error = redirectError("http://127.0.0.1:4321/callback?\(encoded)=1&\(encoded)=2")
        #expect(error == .duplicateParameter(name))
        let text = error?.description ?? ""
        #expect(text.contains("a parameter more than once") && !text.contains("evil"), "\(text)")
    }

    @Test func missingCodeIsDistinct() {
        #expect(redirectError("http://127.0.0.1:4321/callback?state=\(state)") == .missingCode)
        #expect(redirectError("http://127.0.0.1:4321/callback?code=&state=\(state)") == .missingCode)
    }

    @Test func providerErrorsAreTyped() {
        #expect {
            try parse(
                "http://127.0.0.1:4321/callback?error=access_denied&error_description=The+user+said+no&error_uri=https%3A%2F%2Fe.x%2Fe&state=\(state)"
            )
        } throws: { error in
            guard case .authorizationFailed(let response)? = error.authKitReason else { return false }
            return response.code == "access_denied" && response.description == "The user said no"
                && response.uri == "https://e.x/e" && (error as? AuthKitError)?.code == .accessDenied
        }
    }

    @Test func issuerIsCheckedPerRFC9207() throws {
        let withIssuer = pending(issuer: "https://as.example")
        #expect(
            try parse("http://127.0.0.1:4321/callback?code=a&state=\(state)&iss=https%3A%2F%2Fas.example", withIssuer)
                == "a")
        #expect(
            redirectError(
                "http://127.0.0.1:4321/callback?code=a&state=\(state)&iss=https%3A%2F%2Fevil.example", withIssuer)
                == .issuerMismatch(expected: "https://as.example", received: "https://evil.example"))
        // A mismatched iss on an error response is rejected too.
        #expect(
            redirectError(
                "http://127.0.0.1:4321/callback?error=access_denied&state=\(state)&iss=https%3A%2F%2Fevil.example",
                withIssuer)
                == .issuerMismatch(expected: "https://as.example", received: "https://evil.example"))
        // Absent iss: fine unless the provider always sends it.
        #expect(try parse("http://127.0.0.1:4321/callback?code=a&state=\(state)", withIssuer) == "a")
        let required = pending(issuer: "https://as.example", required: true)
        #expect(
            redirectError("http://127.0.0.1:4321/callback?code=a&state=\(state)", required)
                == .missingIssuer(expected: "https://as.example"))
    }

    /// RFC 9207 §2.4: "identical" means the same bytes; `e` + U+0301 is not
    /// `é`, and U+037E is not `;`, though Swift's `==` says they are.
    @Test func issuerIsComparedByteForByte() {
        for (expected, received) in [
            ("https://as.example/caf\u{E9}", "https://as.example/cafe\u{301}"),
            ("https://as.example/a;b", "https://as.example/a\u{37E}b"),
            ("https://as.example/K", "https://as.example/\u{212A}"),
        ] {
            let encoded = received.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            #expect(
                redirectError(
                    "http://127.0.0.1:4321/callback?code=a&state=\(state)&iss=\(encoded)", pending(issuer: expected))
                    == .issuerMismatch(expected: expected, received: received))
        }
    }

    @Test func instagramFragmentIsStripped() throws {
        let p = pending(redirect: "https://localhost/callback")
        #expect(try parse("https://localhost/callback?code=AQBx-y_z&state=\(state)#_", p, fragment: "_") == "AQBx-y_z")
        // Pasted with surrounding whitespace, as from a terminal.
        #expect(try parse("  https://localhost/callback?code=AQB&state=\(state)#_\n", p, fragment: "_") == "AQB")
    }

    @Test func malformedInputIsReported() {
        guard case .malformed? = redirectError("not a url") else {
            Issue.record("accepted garbage")
            return
        }
        guard case .malformed? = redirectError("http://127.0.0.1:4321/callback?code=%ZZ&state=\(state)") else {
            Issue.record("accepted a bad escape")
            return
        }
    }

    /// Found by the redirect fuzz harness: the query was taken from after the first
    /// `?` anywhere, so one inside the fragment was read as the answer.
    @Test func parametersInTheFragmentAreNotTheAnswer() throws {
        #expect(redirectError("http://127.0.0.1:4321/callback#?code=abc&state=\(state)") == .missingState)
        #expect(redirectError("http://127.0.0.1:4321/callback#x?code=abc&state=\(state)") == .missingState)
        #expect(redirectError("http://127.0.0.1:4321/callback?state=\(state)#?code=abc") == .missingCode)
        #expect(try parse("http://127.0.0.1:4321/callback?code=abc&state=\(state)#?code=evil") == "abc")
    }

    /// Found by the redirect fuzz harness in CI: raw control characters, tabs and
    /// invalid UTF-8 inside a "URL" made the query read here differ from
    /// URLComponents' reading of it. Such text is not a URL and is refused.
    @Test func charactersAURLCannotHoldAreRefused() {
        for text in [
            "http://127.0.0.1:4321/callback?code=a\u{01}b&state=\(state)",
            "http://127.0.0.1:4321/callback?code=a\tb&state=\(state)",
            "http://127.0.0.1:4321/callback?code=a b&state=\(state)",
            "http://127.0.0.1:4321/callback?code=\u{FFFD}&state=\(state)",
            "http://127.0.0.1:4321/callback?code=é&state=\(state)",
            // Found next: `]` made Foundation re-read `%01` as a literal `%01`.
            "http://127.0.0.1:4321/callback?code=a%01b]&state=\(state)",
            "http://127.0.0.1:4321/callback?code=a|b&state=\(state)",
            "http://127.0.0.1:4321/callback?code=a{b}&state=\(state)",
        ] {
            guard case .malformed? = redirectError(text) else {
                Issue.record("accepted \(text.debugDescription)")
                continue
            }
        }
    }

    @Test func escapedControlCharactersAreDecodedNotRefused() throws {
        // %01 is a valid escape; the code is passed on as decoded (the token
        // endpoint decides), only raw characters a URL cannot hold are refused.
        #expect(try parse("http://127.0.0.1:4321/callback?code=a%01b%5D&state=\(state)") == "a\u{01}b]")
    }

    @Test func messagesDoNotContainTheCode() {
        let error = AuthKitError.redirect(
            .unexpectedTarget(
                expected: "http://127.0.0.1:1/cb",
                received: RedirectParser.target(of: URLComponents(string: "http://127.0.0.1:2/cb?code=SECRETCODE")!)))
        #expect(!error.description.contains("SECRETCODE"))
    }
}
