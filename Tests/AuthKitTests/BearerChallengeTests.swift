import Testing

@testable import AuthKit

/// RFC 6750 §3's `WWW-Authenticate: Bearer …`, read from what servers send,
/// and from what a hostile one might.
@Suite struct BearerChallengeTests {
    @Test func theRFCExamplesAreRead() {
        #expect(BearerChallenge(fields: [#"Bearer realm="example""#]) == BearerChallenge())
        #expect(
            BearerChallenge(fields: [
                #"Bearer realm="example", error="invalid_token", error_description="The access token expired""#
            ])
                == BearerChallenge(error: "invalid_token", errorDescription: "The access token expired"))
        #expect(
            BearerChallenge(fields: [#"Bearer error="insufficient_scope", scope="repo user:email""#])
                == BearerChallenge(error: "insufficient_scope", scope: "repo user:email"))
        // Tokens as well as quoted strings; names and the scheme in any case.
        #expect(BearerChallenge(fields: ["bearer ERROR=invalid_request"]) == BearerChallenge(error: "invalid_request"))
    }

    /// Several challenges in one field or in several (RFC 9110 §11.6.1): only Bearer's parameters count.
    @Test func otherSchemesAreSkipped() {
        #expect(
            BearerChallenge(fields: [#"Basic realm="x", Bearer error="invalid_token""#])
                == BearerChallenge(error: "invalid_token"))
        #expect(
            BearerChallenge(fields: [#"Bearer error="invalid_token", Basic realm="x", error="other""#])
                == BearerChallenge(error: "invalid_token"))
        #expect(
            BearerChallenge(fields: ["Negotiate a87421000492aa874209af8bc028==, Bearer error=invalid_token"])
                == BearerChallenge(error: "invalid_token"))
        #expect(
            BearerChallenge(fields: ["Basic dXNlcjpwYXNz/+w=, Bearer scope=read"]) == BearerChallenge(scope: "read"))
        #expect(
            BearerChallenge(fields: [#"Basic realm="x""#, #"Bearer error="invalid_token""#])
                == BearerChallenge(error: "invalid_token"))
        #expect(BearerChallenge(fields: [#"Basic realm="Bearer error=x""#]) == nil)
        #expect(BearerChallenge(fields: [#"DPoP error="invalid_token""#]) == nil)
    }

    /// Escapes undone; nothing read past what cannot be read; no crash on any of it.
    @Test func hostileOrBrokenFieldsAreReadSafely() {
        #expect(
            BearerChallenge(fields: [#"Bearer error_description="say \"hi\" \\ there""#])
                == BearerChallenge(errorDescription: #"say "hi" \ there"#))
        #expect(
            BearerChallenge(fields: [#"Bearer error="invalid_token", error_description="never closed"#])
                == BearerChallenge(error: "invalid_token"))
        #expect(BearerChallenge(fields: [#"Bearer error="first", error="second""#]) == BearerChallenge(error: "first"))
        #expect(
            BearerChallenge(fields: ["Bearer error=\"a\u{1B}[2Jb\""])?.error == "a\u{1B}[2Jb",
            "kept raw: the caller shows it through DisplayText")
        for broken in [
            "", ",,,", "=", "Bearer =x", "Bearer error=", "Bearer error==", "Bearer \"", "Bearer error=\"\\",
            "@@@ Bearer error=x", "Bearer, error",
        ] {
            _ = BearerChallenge(fields: [broken]) // must return, whatever it finds
        }
        // Found by FuzzBearerChallenge: no token where a value must be was read
        // as an empty value (and `request` printed "HTTP 401: ."); it ends the reading.
        #expect(
            BearerChallenge(fields: [
                "Basic realm=\"x\", Bearer error=\"insufficient_scope\", scope=\u{1B}repo admin:org\""
            ])
                == BearerChallenge(error: "insufficient_scope"))
        #expect(BearerChallenge(fields: ["Bearer error=\u{FFFD}cient_scope\", scope=\"repo\""]) == BearerChallenge())
        #expect(
            BearerChallenge(fields: [#"Bearer error="", scope="read""#]) == BearerChallenge(error: "", scope: "read"),
            "a quoted empty value is a value")
        let flood = "Bearer " + String(repeating: "a=b, ", count: 100_000) + #"error="late""#
        #expect(BearerChallenge(fields: [flood])?.error == nil, "read up to 8 KiB only")
    }
}
