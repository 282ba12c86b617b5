import Foundation
import HTTPTypes
import Testing

@testable import AuthKit

/// What a token endpoint sends back is echoed in error messages, which reach
/// terminals and logs: control characters are escaped and long text is cut
/// (found with the token-response fuzz harness's message checks).
@Suite struct HostileErrorTextTests {
    func message(_ body: String, status: Int = 400) -> String {
        do {
            _ = try TokenResponseParser().parse(
                IncomingResponse(status: status, headers: [("Content-Type", "application/json")], body: Data(body.utf8))
            )
            return "accepted"
        } catch {
            return "\(error)"
        }
    }

    func hasControlCharacters(_ text: String) -> Bool {
        text.unicodeScalars.contains { $0.value < 0x20 || (0x7F..<0xA0).contains($0.value) }
    }

    @Test func terminalEscapesInTheProviderErrorAreEscaped() {
        let text = message(
            #"{"error":"invalid_grant\u001b[2J","error_description":"expired\u001b]0;pwned\u0007\nnext line","error_uri":"https://as.example/\u009b"}"#
        )
        #expect(!hasControlCharacters(text), "\(text.debugDescription)")
        #expect(
            text.contains(
                #"invalid_grant\u{1B}[2J: expired\u{1B}]0;pwned\u{7}\u{A}next line (see https://as.example/\u{9B})"#))
    }

    /// `error_uri` names a web page for people (RFC 6749 §5.2): one of
    /// another scheme (`javascript:`, `file:`) was shown as a link to follow.
    @Test func anErrorURIThatIsNoWebPageIsLeftOut() {
        for uri in ["javascript:alert(1)", "file:///etc/passwd", "data:text/html,x"] {
            let text = message(#"{"error":"invalid_grant","error_uri":"\#(uri)"}"#)
            #expect(text.contains("invalid_grant") && !text.contains(uri) && !text.contains("(see"), "\(text)")
        }
        #expect(
            message(#"{"error":"invalid_grant","error_uri":"HTTPS://as.example/e"}"#).contains(
                "(see HTTPS://as.example/e)"))
    }

    /// A text-direction override (U+202E) would make "...rorre" show as
    /// "error...", and a description show as something it does not say
    /// (CVE-2021-42574); it is written out, while right-to-left text itself,
    /// which needs no such character, is kept.
    @Test func textDirectionOverridesAreWrittenOut() {
        let text = message(#"{"error":"access_denied","error_description":"‮deyalpsid‬ ⁦x⁩   الرمز منتهي الصلاحية"}"#)
        #expect(!text.unicodeScalars.contains { $0.isHiddenFormatting }, "\(text.debugDescription)")
        #expect(
            text.contains(#"access_denied: \u{202E}deyalpsid\u{202C} \u{2066}x\u{2069} \u{2028} الرمز منتهي الصلاحية"#),
            "\(text)")
    }

    /// Characters that show as nothing: `work` and `work` with a zero-width
    /// space (a label an app saved, or a file edited by hand) listed as
    /// the same account, and one could be taken for the other in a prompt.
    /// The joiners that scripts and emoji need are kept.
    @Test func charactersThatShowAsNothingAreWrittenOut() {
        #expect(CredentialKey(providerID: "qiita", label: "work\u{200B}").description == #"qiita (work\u{200B})"#)
        #expect(DisplayText.sanitized("a\u{2060}b\u{FEFF}") == #"a\u{2060}b\u{FEFF}"#)
        #expect(DisplayText.sanitized("می\u{200C}خواهم 👩\u{200D}💻") == "می\u{200C}خواهم 👩\u{200D}💻")
    }

    @Test func translatedDescriptionsAreKept() {
        #expect(
            message(#"{"error":"invalid_grant","error_description":"認可コードの有効期限が切れています"}"#)
                .contains("invalid_grant: 認可コードの有効期限が切れています"))
    }

    @Test func longDescriptionsAreCut() {
        let text = message(
            #"{"error":"invalid_grant","error_description":"\#(String(repeating: "x", count: 100_000))"}"#)
        #expect(text.count < 600)
        #expect(text.contains("x…"))
    }

    @Test func aBadExpiresInIsQuotedShortAndEscaped() {
        let text = message(
            #"{"access_token":"at","token_type":"Bearer","expires_in":"soon\u001b[31m and a very long tail that goes on"}"#,
            status: 200)
        #expect(!hasControlCharacters(text))
        #expect(text.contains(#"got the string 'soon\u{1B}[31m and a very…'"#), "\(text)")
    }

    /// `1e400` is well-formed JSON (RFC 8259 §6 sets no range) that no
    /// number here can hold: said so, not "malformed or truncated".
    @Test func aNumberOutOfRangeIsNotCalledMalformed() {
        let text = message(#"{"access_token":"a","token_type":"Bearer","expires_in":1e400}"#, status: 200)
        #expect(
            text.contains("holds a number out of any range AuthKit reads, at byte 55") && !text.contains("malformed"),
            "\(text)")
        #expect(message(#"{"access_token":"a","#, status: 200).contains("malformed or truncated"))
    }

    /// A quoted value is cut before the error is masked: a secret cut there
    /// was not found whole, and its first 19 characters showed
    /// (`got the string 'xSEKRET-client-xyz-0…'`). Now the part before `…`
    /// that begins a secret is masked too.
    @Test func aSecretCutShortIsStillMasked() {
        let secret = "SEKRET-client-xyz-0123456789abcdefghij"
        for body in [
            #"{"access_token":"at","token_type":"Bearer","expires_in":"x\#(secret)"}"#,
            #"{"access_token":"at","token_type":"Bearer","expires_in":"\#(secret)"}"#,
        ] {
            let response = IncomingResponse(
                status: 200, headers: HTTPFields([HTTPField(name: .contentType, value: "application/json")]),
                body: Data(body.utf8), secrets: [secret])
            let error = #expect(throws: AuthKitError.self) { try TokenResponseParser().parse(response) }
            let text = String(describing: error)
            #expect(!text.contains("SEKR") && text.contains("••••…"), "\(text)")
        }
        #expect(
            SecretMask(["abcdefgh"]).apply("'xabc…' and 'xabcd…' and 'abcdefgh'") == "'xabc…' and 'x••••…' and '••••'")
    }

    /// A secret echoed with a combining mark after it (or before the next
    /// word) is masked: compared as characters, `…4567` + U+0301 is another
    /// last character, and the secret's bytes reached the message (found by
    /// the token-response fuzz harness's check). Found as repeated too.
    @Test func aSecretFollowedByACombiningMarkIsMasked() {
        let secret = "fuzz-code-4567"
        let masked = SecretMask([secret]).apply("code \(secret)\u{301} was refused")
        #expect(!SecretMask.holds(masked, secret), "\(masked.debugDescription)")
        #expect(masked == "code ••••\u{301} was refused", "\(masked.debugDescription)")
        #expect(SecretMask.anyRepeated([secret], in: ["scope:\(secret)\u{301}"]))
    }

    /// A field stored or shown whole (a granted scope, a device grant's
    /// user code) is refused when it holds a request's secret, raw or
    /// percent-encoded; secrets under eight characters do not count, so a
    /// test secret `test` leaves the scope `test:read` alone.
    @Test func aRepeatedSecretIsFoundRawOrEncoded() {
        let secret = "s3cr3t/with+parts"
        #expect(SecretMask.anyRepeated([secret], in: ["read", "x\(secret)y"]))
        #expect(SecretMask.anyRepeated([secret], in: ["read", "x" + PercentEncoding.encode(secret)]))
        #expect(!SecretMask.anyRepeated([secret], in: ["read", "s3cr3t/with", "write"]))
        #expect(!SecretMask.anyRepeated(["test"], in: ["test:read"]))
        #expect(!SecretMask.anyRepeated([secret], in: []))
    }

    /// A provider file comes from someone else as often as not: a key, a
    /// value it quotes or a name given twice reaches the terminal through
    /// the file's issues, escaped (`FileIssue.description`).
    @Test func aProviderFileCannotDriveTheTerminalThroughItsIssues() {
        let base =
            #""id":"t","protocol":"oauth2","authorization":{"url":"https://a.example/a"},"token":{"url":"https://a.example/t"}"#
        for file in [
            #"{\#(base),"x\u001b]0;pwned\u0007":1}"#,
            #"{\#(base),"p\u001b[2J":1,"p\u001b[2J":2}"#,
            #"{"id":"t","protocol":"oauth2","authorization":{"url":"https://a.example/a"},"token":{"url":"https://a\u001b[31m.example/t"}}"#,
        ] {
            do {
                _ = try DescriptorLoader().decode(Data(file.utf8), file: "/tmp/t\u{1B}[1m.json")
                Issue.record("accepted \(file)")
            } catch {
                // One issue a line: each line escaped.
                for line in "\(error)".split(separator: "\n") {
                    #expect(!hasControlCharacters(String(line)), "\("\(error)".debugDescription)")
                }
                #expect("\(error)".contains("\\u{1B}"), "\(error)")
            }
        }
    }

    /// Any web page can send the browser to the loopback listener, and the
    /// parameter name of a duplicate is reported before `state` is checked:
    /// the CLI prints the reason, so it must not carry terminal escapes.
    @Test func redirectErrorsEscapeWhatTheURLCarried() {
        let pending = PendingAuthorization(
            providerID: "p", state: "s", codeVerifier: nil, redirectURI: "http://127.0.0.1:4321/callback",
            expectedIssuer: "https://as.example", issuerRequired: false, scopes: [], createdAt: fixedNow)
        // `]` escaped: a raw one is refused before parameters are read.
        for url in [
            "http://127.0.0.1:4321/callback?%1B%5D0;pwned%07=1&%1B%5D0;pwned%07=2",
            "http://127.0.0.1:4321/callback?code=c&state=s&iss=https%3A%2F%2Fevil%1B%5B2J",
        ] {
            do {
                _ = try RedirectParser().code(from: url, for: pending)
                Issue.record("accepted \(url)")
            } catch {
                #expect(!hasControlCharacters("\(error)"), "\("\(error)".debugDescription)")
                // The duplicate's name is no name: not repeated at all
                // (RedirectParserTests); the issuer is, escaped.
                #expect(
                    url.contains("iss=") ? "\(error)".contains("\\u{1B}") : !"\(error)".contains("pwned"),
                    "\("\(error)".debugDescription)")
            }
        }
    }
}

/// The redirect's own error (RFC 6749 §4.1.2.1) is the provider's text too:
/// one that repeats the client secret (a debug page echoing its
/// configuration) had it printed whole, where the token endpoint's are masked.
@Suite struct RedirectErrorSecretTests {
    @Test func aRedirectErrorRepeatingTheClientSecretIsMasked() async throws {
        let secret = "SEKRET-client-777"
        let client = try OAuth2Client(
            descriptor: bundledDescriptor("github"), settings: ClientSettings(clientID: "id", clientSecret: secret))
        let (_, pending) = try await client.startAuthorization(
            redirectURI: URL(string: "http://127.0.0.1:4321/callback")!)
        for description in ["your+secret+is+\(secret)", "secret%3D\(secret)%26more"] {
            let redirect = URL(
                string:
                    "http://127.0.0.1:4321/callback?error=access_denied&error_description=\(description)&state=\(pending.state)"
            )!
            let error = #expect(throws: AuthKitError.self) {
                try client.authorizationCode(from: redirect, pending: pending)
            }
            guard case .authorizationFailed(let response)? = error?.reason else {
                Issue.record("\(String(describing: error))")
                continue
            }
            #expect(response.code == "access_denied" && response.description?.contains("••••") == true, "\(response)")
            #expect(!"\(String(describing: error))".contains(secret))
        }
    }
}
