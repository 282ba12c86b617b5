import Testing

@testable import AuthKit

@Suite struct PKCETests {
    @Test func rfc7636AppendixBVector() {
        let pkce = PKCE(verifier: "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")
        #expect(pkce.challenge == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")
        #expect(pkce.method == "S256")
    }

    @Test func generatedVerifierHas43UnreservedCharacters() {
        let allowed = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
        for _ in 0..<50 {
            let pkce = PKCE()
            #expect(pkce.verifier.count == 43)
            #expect(pkce.verifier.allSatisfy(allowed.contains))
            #expect(pkce.challenge == PKCE.challenge(for: pkce.verifier))
            #expect(pkce.challenge.count == 43)
        }
    }

    @Test func verifiersAreDistinct() {
        let verifiers = Set((0..<200).map { _ in PKCE().verifier })
        #expect(verifiers.count == 200)
    }

    @Test func constantTimeComparison() {
        #expect(ConstantTime.equals("abc", "abc"))
        #expect(!ConstantTime.equals("abc", "abd"))
        #expect(!ConstantTime.equals("abc", "abcd"))
        #expect(!ConstantTime.equals("", "a"))
        // Byte for byte, not by Swift's `==` (canonical equivalence): a
        // Kelvin sign (U+212A) is not a K, nor a decomposed é a precomposed one.
        #expect("K" == "\u{212A}" && !ConstantTime.equals("K", "\u{212A}"))
        #expect("\u{E9}" == "e\u{301}" && !ConstantTime.equals("\u{E9}", "e\u{301}"))
    }
}
