import AuthKit
import Crypto
import Foundation
import Testing

@_spi(Reproducible) @testable import AuthKitOAuth1

/// RFC 5849 §3.4.1's normalization rules, one at a time.
@Suite struct SigningBehaviourTests {
    static let signer = OAuth1Signer(
        consumerKey: "9djdj82h48djs9d2", consumerSecret: "j49sk3j29djd", includesVersion: false,
        nonceAndTimestamp: .fixed(nonce: "7d8f3e4a", timestamp: "137131201"))

    /// RFC 5849 §3.4.1.1's example: query, a form body with a name-only pair,
    /// encoded characters, duplicate names, `realm` excluded.
    @Test func rfcSection3_4_1_1Example() throws {
        let url = URL(string: "http://example.com/request?b5=%3D%253D&a3=a&c%40=&a2=r%20b")!
        let parameters = Self.signer.protocolParameters(token: "kkk9d7dh3k39sjv7") + [("realm", "Example")]
        let base = try Self.signer.signatureBaseString(
            method: "POST", url: url, contentType: "application/x-www-form-urlencoded", body: Data("c2&a3=2+q".utf8),
            protocolParameters: parameters)
        #expect(
            base
                == "POST&http%3A%2F%2Fexample.com%2Frequest&a2%3Dr%2520b%26a3%3D2%2520q%26a3%3Da%26b5%3D%253D%25253D%26c%2540%3D%26c2%3D%26oauth_consumer_key%3D9djdj82h48djs9d2%26oauth_nonce%3D7d8f3e4a%26oauth_signature_method%3DHMAC-SHA1%26oauth_timestamp%3D137131201%26oauth_token%3Dkkk9d7dh3k39sjv7"
        )
    }

    /// Duplicates are kept and sorted by encoded name, then encoded value, in byte order.
    /// PLAINTEXT's signature is the two secrets (RFC 5849 §3.4.4): it must
    /// travel over TLS. A header for plain http to another host carried them
    /// in the clear (`authkit sign --signature-method PLAINTEXT http://…`
    /// printed `oauth_signature="s3cr3t%26"`). HMAC reveals neither, so it
    /// signs any URL; PLAINTEXT signs https and this machine's own hosts.
    @Test func plaintextIsSignedOnlyForTLSOrThisMachine() throws {
        var plaintext = OAuth1Signer(consumerKey: "k", consumerSecret: "s3cr3t", signatureMethod: .plaintext)
        plaintext.nonceAndTimestamp = .fixed(nonce: "n", timestamp: "1")
        for insecure in ["http://api.example/1.1/x", "HTTP://api.example/x?q=1"] {
            let url = URL(string: insecure)!
            #expect(throws: AuthKitError.insecureTransport(url: url.redactedForLogs)) {
                try plaintext.authorizationHeader(method: "GET", url: url, token: "t", tokenSecret: "ts")
            }
            #expect(throws: AuthKitError.insecureTransport(url: url.redactedForLogs)) {
                try plaintext.signature(method: "GET", url: url, protocolParameters: [], tokenSecret: "ts")
            }
            #expect(
                try OAuth1Signer(consumerKey: "k", consumerSecret: "s3cr3t").authorizationHeader(
                    method: "GET", url: url
                ).contains("HMAC-SHA1"))
        }
        for fine in ["https://api.example/x", "http://127.0.0.1:8080/x", "http://localhost/x", "http://[::1]/x"] {
            #expect(
                try plaintext.authorizationHeader(method: "GET", url: URL(string: fine)!).contains(
                    #"oauth_signature="s3cr3t%26""#), "\(fine)")
        }
    }

    @Test func duplicatesAndSorting() throws {
        let url = URL(string: "https://example.com/r?b=2&a=3&a=1&a=1&c=&A=upper&a%20b=x&a_=y")!
        let base = try Self.signer.signatureBaseString(
            method: "get", url: url, contentType: "application/x-www-form-urlencoded", body: Data("a=2&z=&a=10".utf8),
            protocolParameters: [("oauth_consumer_key", "k")])
        let normalized = try #require(PercentEncoding.decode(String(base.split(separator: "&")[2])))
        // "A" < "a" < "a%20b" < "a_" (0x41 < 0x61; "%" 0x25 < "_" 0x5F); "1" < "10" < "2" < "3".
        #expect(normalized == "A=upper&a=1&a=1&a=10&a=2&a=3&a%20b=x&a_=y&b=2&c=&oauth_consumer_key=k&z=")
        #expect(base.hasPrefix("GET&"))
    }

    /// RFC 5849 §3.4.1.2's examples of base string URIs.
    @Test(arguments: [
        ("http://EXAMPLE.COM:80/r%20v/X?id=123", "http://example.com/r%20v/X"),
        ("https://www.example.net:8080/?q=1", "https://www.example.net:8080/"),
        ("HTTPS://Example.com:443", "https://example.com/"),
        ("http://example.com:8080#frag", "http://example.com:8080/"),
        ("https://user:pass@example.com/p?x#y", "https://example.com/p"),
        ("http://[::1]:8080/p", "http://[::1]:8080/p"),
        ("http://127.0.0.1:80/callback", "http://127.0.0.1/callback"),
    ])
    func baseStringURI(url: String, expected: String) throws {
        let base = try Self.signer.signatureBaseString(method: "GET", url: URL(string: url)!, protocolParameters: [])
        let uri = try #require(PercentEncoding.decode(String(base.split(separator: "&")[1])))
        #expect(uri == expected)
    }

    /// The body is a parameter source only when it is form-encoded (§3.4.1.3.1).
    @Test func bodyIsSignedOnlyWhenFormEncoded() throws {
        let url = URL(string: "https://example.com/r")!
        let body = Data("a=1".utf8)
        func base(_ contentType: String?) throws -> String {
            try Self.signer.signatureBaseString(
                method: "POST", url: url, contentType: contentType, body: body, protocolParameters: [])
        }
        #expect(try base("application/x-www-form-urlencoded").hasSuffix("&a%3D1"))
        #expect(try base(" application/x-www-form-urlencoded ; charset=UTF-8").hasSuffix("&a%3D1"))
        #expect(try base("application/json").hasSuffix("%2Fr&"))
        #expect(try base(nil).hasSuffix("%2Fr&"))
        #expect(try base("multipart/form-data; boundary=x").hasSuffix("%2Fr&"))
    }

    /// `oauth_signature` is never signed, from any source; `realm` only in the header is excluded.
    @Test func excludedParameters() throws {
        let url = URL(string: "https://example.com/r?oauth_signature=zzz&realm=q")!
        let base = try Self.signer.signatureBaseString(
            method: "GET", url: url,
            protocolParameters: [("oauth_signature", "x"), ("realm", "r"), ("oauth_token", "t")])
        #expect(base == "GET&https%3A%2F%2Fexample.com%2Fr&oauth_token%3Dt%26realm%3Dq")
    }

    /// A malformed escape in a query is signed as literal text, as Python's
    /// unquote reads it. (Foundation's `URL` re-escapes such a query, so the
    /// byte-level builder is called directly.)
    @Test func malformedEscapesAreKeptLiterally() throws {
        var url = "https://example.com/r?a=%zz&b=%E2%98%83&c=%4"
        let base = try #require(
            url.withUTF8 { bytes in
                SignatureBaseString.withBaseString(method: "GET", url: bytes, formBody: nil, protocolParameters: []) {
                    base, _ in
                    String(decoding: base, as: UTF8.self)
                }
            })
        #expect(
            base
                == "GET&https%3A%2F%2Fexample.com%2Fr&a%3D%2525zz%26b%3D%25E2%2598%2583%26c%3D%25254")
    }

    /// An escape whose bytes are not UTF-8 is signed as those bytes (the
    /// documented behaviour of ``OAuth1Signer``; Go's `url.ParseQuery` keeps
    /// them too, oauthlib reads U+FFFD, so `authkit` and the sandbox refuse
    /// such a query): `%FF` stays `%FF`, not `%EF%BF%BD`.
    @Test func anEscapeThatIsNotUTF8IsSignedAsItsByte() throws {
        let signer = OAuth1Signer(consumerKey: "k", consumerSecret: "c")
        let base = try signer.signatureBaseString(
            method: "GET", url: try #require(URL(string: "https://example.com/r?a=%FF&b=%C3")), protocolParameters: [])
        #expect(base == "GET&https%3A%2F%2Fexample.com%2Fr&a%3D%25FF%26b%3D%25C3")
    }

    @Test func plaintextAndHMACSHA256() throws {
        let url = URL(string: "https://example.com/r?x=1")!
        let plain = OAuth1Signer(consumerKey: "k", consumerSecret: "c s&", signatureMethod: .plaintext)
        #expect(
            try plain.signature(method: "GET", url: url, protocolParameters: [], tokenSecret: "t+")
                == "c%20s%26&t%2B")
        let header = try plain.authorizationHeader(method: "GET", url: url, token: "tok", tokenSecret: "t+")
        #expect(header.contains(#"oauth_signature="c%2520s%2526%26t%252B""#))
        #expect(header.contains(#"oauth_signature_method="PLAINTEXT""#))

        let sha256 = OAuth1Signer(
            consumerKey: "k", consumerSecret: "cs", signatureMethod: .hmacSHA256,
            nonceAndTimestamp: .fixed(nonce: "n", timestamp: "1"))
        let parameters = sha256.protocolParameters(token: "tok")
        let base = try sha256.signatureBaseString(method: "GET", url: url, protocolParameters: parameters)
        let mac = HMAC<SHA256>.authenticationCode(for: Data(base.utf8), using: SymmetricKey(data: Data("cs&ts".utf8)))
        #expect(
            try sha256.signature(method: "GET", url: url, protocolParameters: parameters, tokenSecret: "ts")
                == Data(mac).base64EncodedString())
        #expect(base.contains("oauth_signature_method%3DHMAC-SHA256"))
    }

    @Test func liveNonceAndTimestamp() throws {
        let live = NonceAndTimestamp.live
        let first = live.nonce()
        let second = live.nonce()
        #expect(first != second)
        #expect(first.count == 32)
        #expect(first.allSatisfy { $0.isHexDigit })
        let timestamp = try #require(Int(live.timestamp()))
        #expect(abs(timestamp - Int(Date().timeIntervalSince1970)) < 5)
        // Two headers from the default signer differ in nonce.
        let signer = OAuth1Signer(consumerKey: "k", consumerSecret: "s")
        let url = URL(string: "https://example.com/")!
        #expect(
            try signer.authorizationHeader(method: "GET", url: url)
                != signer.authorizationHeader(method: "GET", url: url))
    }

    @Test func relativeURLsAreRefused() {
        #expect(throws: AuthKitError.self) {
            _ = try Self.signer.authorizationHeader(method: "GET", url: URL(string: "/relative/path")!)
        }
    }

    @Test func signerDescriptionHidesTheSecret() throws {
        #expect(!String(describing: Self.signer).contains("j49sk3j29djd"))
        // Dumped too, and the client holding it: the stored secret showed.
        let client = try OAuth1Client(
            descriptor: ProviderCatalog(includeBundled: true, directories: []).descriptor(id: "twitter"),
            settings: ClientSettings(clientID: "visible-key", clientSecret: "CONSUMER-secret-0123"))
        for value in [Self.signer, client.signer, client] as [Any] {
            var dumped = ""
            dump(value, to: &dumped)
            for shown in ["\(value)", String(reflecting: value), dumped] {
                #expect(!shown.contains("j49sk3j29djd") && !shown.contains("CONSUMER-secret"), "\(shown)")
            }
        }
    }

    /// §3.4.1.1: "If the request uses a custom HTTP method, it MUST be
    /// encoded" (§3.6). `M+X` and `M&X` were written raw: the server's base
    /// string (`M%2BX&…`) differed, and `&` split the method from the URI.
    @Test func aCustomMethodIsEncodedInTheBaseString() throws {
        let url = URL(string: "https://api.example/x")!
        for (method, written) in [("m+x", "M%2BX"), ("M&X", "M%26X"), ("report", "REPORT"), ("a!b*c", "A%21B%2AC")] {
            let base = try Self.signer.signatureBaseString(
                method: method, url: url, protocolParameters: Self.signer.protocolParameters(token: nil))
            #expect(base.hasPrefix(written + "&https%3A%2F%2Fapi.example%2Fx&"), "\(method): \(base)")
        }
    }

    /// §3.5: each protocol parameter in one place. One the header carries
    /// given in the query or form body too was signed twice and sent twice
    /// (oauthlib: "Duplicate OAuth1 entries"); other `oauth_` names, which
    /// the header does not carry, are the request's own.
    @Test func aProtocolParameterInTheRequestIsRefused() throws {
        let form = "application/x-www-form-urlencoded"
        for (url, body, token) in [
            ("https://h/x?oauth_nonce=evil", nil, nil), ("https://h/x?a=1&oauth_consumer_key=k", nil, nil),
            ("https://h/x", "oauth_token=t2", "t"), ("https://h/x?oauth%5Fnonce=1", nil, nil),
            // Never signed (§3.4.1.3.1), but a second signature all the same.
            ("https://h/x?oauth_signature=zzz", nil, nil), ("https://h/x", "a=1&oauth_signature=zzz", nil),
        ] as [(String, String?, String?)] {
            #expect(throws: AuthKitError.self, "\(url) \(body ?? "")") {
                try Self.signer.authorizationHeader(
                    method: "POST", url: URL(string: url)!, contentType: form, body: body.map { Data($0.utf8) },
                    token: token, tokenSecret: token == nil ? nil : "ts")
            }
        }
        let error = #expect(throws: AuthKitError.self) {
            try Self.signer.authorizationHeader(method: "GET", url: URL(string: "https://h/x?oauth_nonce=evil")!)
        }
        #expect(String(describing: error).contains("oauth_nonce") && String(describing: error).contains("§3.5"))
        // Not carried by the header: signed as the request's own.
        for url in [
            "https://h/x?oauth_token=t", "https://h/x?oauth_callback=x&oauth_=1", "https://h/x?oauth=1",
            "https://h/x?oauth_version=1.0",
        ] {
            _ = try Self.signer.authorizationHeader(method: "GET", url: URL(string: url)!)
        }
    }
}

/// The signer writes into buffers sized in advance; inputs that expand the
/// most under encoding must still fit (a wrong bound would trap).
@Suite struct SigningBufferTests {
    @Test func worstCaseExpansionFits() throws {
        let nasty = String(repeating: "☃ &=+%", count: 300)
        let signer = OAuth1Signer(
            consumerKey: nasty, consumerSecret: nasty, signatureMethod: .plaintext,
            nonceAndTimestamp: .fixed(nonce: nasty, timestamp: nasty))
        let query = "?" + String(repeating: "%E2%98%83=%zz&&+=%2", count: 100) + "&x"
        let url = URL(string: "https://EXAMPLE.com:8443/p%20a%20t%20h" + query)!
        let body = Data(String(repeating: "a=%E2%98%83&=&&b+=+c%&", count: 200).utf8)
        for method in OAuth1SignatureMethod.allCases {
            let s = OAuth1Signer(
                consumerKey: nasty, consumerSecret: nasty, signatureMethod: method,
                nonceAndTimestamp: signer.nonceAndTimestamp)
            let header = try s.authorizationHeader(
                method: "post", url: url, contentType: "application/x-www-form-urlencoded", body: body,
                token: nasty, tokenSecret: nasty,
                protocolParameters: [("oauth_callback", nasty), ("oauth_verifier", nasty)],
                realm: nasty)
            #expect(header.hasPrefix("OAuth realm="))
            #expect(authorizationDictionary(header)["oauth_nonce"] == nasty)
            let base = try s.signatureBaseString(
                method: "post", url: url, contentType: "application/x-www-form-urlencoded",
                body: body, protocolParameters: s.protocolParameters(token: nasty))
            #expect(base.hasPrefix("POST&https%3A%2F%2Fexample.com%3A8443%2Fp%2520a%2520t%2520h&"))
        }
    }
}

/// `SignedBytes` stands in for `UnsafeRawBufferPointer` in `HMAC.update(data:)`,
/// which reads it through `DataProtocol`'s regions: it must present the same
/// bytes, as one region, whichever way it is read.
@Suite struct SignedBytesTests {
    @Test func presentsTheBytesAsOneRegion() {
        let text = Array("GET&https%3A%2F%2Fexample.com%2F&a%3D1".utf8)
        text.withUnsafeBufferPointer { buffer in
            let bytes = SignedBytes(buffer)
            #expect(Array(bytes) == text)
            #expect(Data(bytes) == Data(text))
            #expect(bytes.regions.count == 1)
            #expect(Array(bytes.regions.reversed().flatMap { $0 }) == text)
            var iterator = bytes.regions.makeIterator()
            #expect(iterator.next().map(Array.init) == text)
            #expect(iterator.next() == nil)
            #expect(
                HMAC<Insecure.SHA1>.authenticationCode(for: bytes, using: SymmetricKey(data: Data("k".utf8)))
                    == HMAC<Insecure.SHA1>.authenticationCode(for: text, using: SymmetricKey(data: Data("k".utf8))))
        }
        [UInt8]().withUnsafeBufferPointer { empty in
            #expect(SignedBytes(empty).isEmpty)
            #expect(Data(SignedBytes(empty)).isEmpty)
        }
    }
    /// Two token secrets Swift's `==` takes as one ("é" written as one
    /// scalar and as "e" and an accent) make different keys (the key is the
    /// bytes, RFC 5849 §3.4.2, §3.6): the second signature is not made with
    /// the first one's cached key.
    @Test func lookAlikeTokenSecretsSignWithTheirOwnKeys() throws {
        let url = try #require(URL(string: "https://api.example/1/x"))
        let parameters = [("oauth_consumer_key", "k"), ("oauth_nonce", "n"), ("oauth_timestamp", "1")]
        let cached = OAuth1Signer(consumerKey: "k", consumerSecret: "s")
        _ = try cached.signature(method: "GET", url: url, protocolParameters: parameters, tokenSecret: "\u{E9}")
        let second = try cached.signature(
            method: "GET", url: url, protocolParameters: parameters, tokenSecret: "e\u{301}")
        let fresh = try OAuth1Signer(consumerKey: "k", consumerSecret: "s").signature(
            method: "GET", url: url, protocolParameters: parameters, tokenSecret: "e\u{301}")
        #expect(second == fresh)
    }

}
