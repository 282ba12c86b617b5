import AuthKit
import Foundation
import Testing

@_spi(Reproducible) @testable import AuthKitOAuth1

/// Every OAuth 1.0 vector in shared/reference/security.md, byte for byte.
@Suite struct SignatureVectorTests {
    // MARK: Twitter's "Creating a signature" example

    static let twitterURL = URL(string: "https://api.twitter.com/1.1/statuses/update.json?include_entities=true")!
    static let twitterBody = Data("status=Hello%20Ladies%20%2B%20Gentlemen%2C%20a%20signed%20OAuth%20request%21".utf8)
    static let twitterSigner = OAuth1Signer(
        consumerKey: "xvz1evFS4wEEPTGEFPHBog", consumerSecret: "kAcSOqF21Fu85e7zjz7ZN2U4ZRhfV3WpwPAoE3Z7kBw",
        nonceAndTimestamp: .fixed(nonce: "kYjzVBB8Y0ZFabxSWbWovY3uYSQ2pTgmZeNu2VS4cg", timestamp: "1318622958"))
    static let twitterToken = "370773112-GmHxMAgYyLbNEtIKZeRNFsMKPR9EyMZeS9weJAEb"
    static let twitterTokenSecret = "LswwdoUaIvS8ltyTt5jkRh4J50vUPVVHtR2YPi5kE"

    @Test func twitterBaseString() throws {
        let signer = Self.twitterSigner
        let base = try signer.signatureBaseString(
            method: "post", url: Self.twitterURL, contentType: "application/x-www-form-urlencoded",
            body: Self.twitterBody,
            protocolParameters: signer.protocolParameters(token: Self.twitterToken))
        #expect(
            base
                == "POST&https%3A%2F%2Fapi.twitter.com%2F1.1%2Fstatuses%2Fupdate.json&include_entities%3Dtrue%26oauth_consumer_key%3Dxvz1evFS4wEEPTGEFPHBog%26oauth_nonce%3DkYjzVBB8Y0ZFabxSWbWovY3uYSQ2pTgmZeNu2VS4cg%26oauth_signature_method%3DHMAC-SHA1%26oauth_timestamp%3D1318622958%26oauth_token%3D370773112-GmHxMAgYyLbNEtIKZeRNFsMKPR9EyMZeS9weJAEb%26oauth_version%3D1.0%26status%3DHello%2520Ladies%2520%252B%2520Gentlemen%252C%2520a%2520signed%2520OAuth%2520request%2521"
        )
    }

    @Test func twitterSigningKey() {
        #expect(
            Self.twitterSigner.signingKey(tokenSecret: Self.twitterTokenSecret)
                == "kAcSOqF21Fu85e7zjz7ZN2U4ZRhfV3WpwPAoE3Z7kBw&LswwdoUaIvS8ltyTt5jkRh4J50vUPVVHtR2YPi5kE")
    }

    @Test func twitterSignature() throws {
        let signer = Self.twitterSigner
        let signature = try signer.signature(
            method: "POST", url: Self.twitterURL, contentType: "application/x-www-form-urlencoded",
            body: Self.twitterBody,
            protocolParameters: signer.protocolParameters(token: Self.twitterToken),
            tokenSecret: Self.twitterTokenSecret)
        #expect(signature == "hCtSmYh+iHYCEqBWrE7C7hYmtUk=")
    }

    /// The whole header, as Twitter's page shows it (parameters in name order).
    @Test func twitterHeader() throws {
        let header = try Self.twitterSigner.authorizationHeader(
            method: "POST", url: Self.twitterURL, contentType: "application/x-www-form-urlencoded",
            body: Self.twitterBody,
            token: Self.twitterToken, tokenSecret: Self.twitterTokenSecret)
        #expect(
            header
                == #"OAuth oauth_consumer_key="xvz1evFS4wEEPTGEFPHBog", oauth_nonce="kYjzVBB8Y0ZFabxSWbWovY3uYSQ2pTgmZeNu2VS4cg", oauth_signature="hCtSmYh%2BiHYCEqBWrE7C7hYmtUk%3D", oauth_signature_method="HMAC-SHA1", oauth_timestamp="1318622958", oauth_token="370773112-GmHxMAgYyLbNEtIKZeRNFsMKPR9EyMZeS9weJAEb", oauth_version="1.0""#
        )
    }

    /// A body written with `+` for spaces, or with a charset parameter, signs the same.
    @Test func twitterSignatureWithPlusEncodedBodyAndCharset() throws {
        let signer = Self.twitterSigner
        let body = Data("status=Hello+Ladies+%2b+Gentlemen%2c+a+signed+OAuth+request%21".utf8)
        let signature = try signer.signature(
            method: "POST", url: Self.twitterURL, contentType: "Application/X-WWW-Form-URLEncoded; charset=utf-8",
            body: body,
            protocolParameters: signer.protocolParameters(token: Self.twitterToken),
            tokenSecret: Self.twitterTokenSecret)
        #expect(signature == "hCtSmYh+iHYCEqBWrE7C7hYmtUk=")
    }

    // MARK: RFC 5849 §1.2

    static let rfcSigner = OAuth1Signer(
        consumerKey: "dpf43f3p2l4k3l03", consumerSecret: "kd94hf93k423kf44", includesVersion: false)

    static func rfcSigner(nonce: String, timestamp: String) -> OAuth1Signer {
        var signer = rfcSigner
        signer.nonceAndTimestamp = .fixed(nonce: nonce, timestamp: timestamp)
        return signer
    }

    @Test func rfcTemporaryCredentials() throws {
        let signer = Self.rfcSigner(nonce: "wIjqoS", timestamp: "137131200")
        let parameters = signer.protocolParameters(
            token: nil, extra: [("oauth_callback", "http://printer.example.com/ready")])
        let url = URL(string: "https://photos.example.net/initiate")!
        #expect(
            try signer.signatureBaseString(method: "POST", url: url, protocolParameters: parameters)
                == "POST&https%3A%2F%2Fphotos.example.net%2Finitiate&oauth_callback%3Dhttp%253A%252F%252Fprinter.example.com%252Fready%26oauth_consumer_key%3Ddpf43f3p2l4k3l03%26oauth_nonce%3DwIjqoS%26oauth_signature_method%3DHMAC-SHA1%26oauth_timestamp%3D137131200"
        )
        #expect(
            try signer.signature(method: "POST", url: url, protocolParameters: parameters, tokenSecret: nil)
                == "74KNZJeDHnMBp0EMJ9ZHt/XKycU=")
        #expect(signer.signingKey(tokenSecret: nil) == "kd94hf93k423kf44&")
    }

    @Test func rfcTokenCredentials() throws {
        let signer = Self.rfcSigner(nonce: "walatlh", timestamp: "137131201")
        let parameters = signer.protocolParameters(
            token: "hh5s93j4hdidpola", extra: [("oauth_verifier", "hfdp7dh39dks9884")])
        let url = URL(string: "https://photos.example.net/token")!
        #expect(
            try signer.signature(
                method: "POST", url: url, protocolParameters: parameters, tokenSecret: "hdhd0244k9j7ao03")
                == "gKgrFCywp7rO0OXSjdot/IHF7IU=")
    }

    @Test func rfcProtectedResource() throws {
        let signer = Self.rfcSigner(nonce: "chapoH", timestamp: "137131202")
        let parameters = signer.protocolParameters(token: "nnch734d00sl2jdk")
        let url = URL(string: "http://photos.example.net/photos?file=vacation.jpg&size=original")!
        #expect(
            try signer.signatureBaseString(method: "GET", url: url, protocolParameters: parameters)
                == "GET&http%3A%2F%2Fphotos.example.net%2Fphotos&file%3Dvacation.jpg%26oauth_consumer_key%3Ddpf43f3p2l4k3l03%26oauth_nonce%3DchapoH%26oauth_signature_method%3DHMAC-SHA1%26oauth_timestamp%3D137131202%26oauth_token%3Dnnch734d00sl2jdk%26size%3Doriginal"
        )
        #expect(
            try signer.signature(
                method: "GET", url: url, protocolParameters: parameters, tokenSecret: "pfkkdhi9sl3r4s00")
                == "MdpQcU8iPSUjWoN/UDMsK2sui9I=")
        let header = try signer.authorizationHeader(
            method: "GET", url: url, token: "nnch734d00sl2jdk",
            tokenSecret: "pfkkdhi9sl3r4s00", realm: "Photos")
        #expect(
            header
                == #"OAuth realm="Photos", oauth_consumer_key="dpf43f3p2l4k3l03", oauth_nonce="chapoH", oauth_signature="MdpQcU8iPSUjWoN%2FUDMsK2sui9I%3D", oauth_signature_method="HMAC-SHA1", oauth_timestamp="137131202", oauth_token="nnch734d00sl2jdk""#
        )
    }

    /// §3.5.1: `realm` is a quoted-string (RFC 2617), not §3.6-encoded: a
    /// URL goes as written, `"` and `\` escaped, a control character
    /// percent-encoded (CR LF would end the header).
    @Test func realmIsAQuotedString() throws {
        let signer = OAuth1Signer(consumerKey: "k", consumerSecret: "s")
        let header = try signer.authorizationHeader(
            method: "GET", url: URL(string: "https://sp.example.com/r")!, realm: "http://sp.example.com/\"a\\b\r\n")
        #expect(
            header.hasPrefix(#"OAuth realm="http://sp.example.com/\"a\\b%0D%0A", oauth_consumer_key="k""#), "\(header)")
    }

    /// A port's leading zeros are not signed: the request goes out with the
    /// port's number (`Host: h:8790`), and `:0443` is https's default port.
    @Test func aPortIsSignedAsItsNumber() throws {
        let signer = OAuth1Signer(consumerKey: "k", consumerSecret: "s")
        let parameters = signer.protocolParameters(token: nil)
        func base(_ url: String) throws -> String {
            try signer.signatureBaseString(method: "GET", url: URL(string: url)!, protocolParameters: parameters)
        }
        #expect(try base("http://127.0.0.1:08790/res?a=1") == base("http://127.0.0.1:8790/res?a=1"))
        #expect(try base("http://127.0.0.1:08790/res?a=1").hasPrefix("GET&http%3A%2F%2F127.0.0.1%3A8790%2Fres&"))
        #expect(try base("https://x.example:0443/r") == base("https://x.example/r"))
        #expect(try base("http://x.example:00/r").hasPrefix("GET&http%3A%2F%2Fx.example%3A0%2Fr&"))
    }

    // MARK: Percent-encoding table (security.md), through the signer's byte path

    @Test(arguments: [
        ("Ladies + Gentlemen", "Ladies%20%2B%20Gentlemen"),
        ("An encoded string!", "An%20encoded%20string%21"),
        ("Dogs, Cats & Mice", "Dogs%2C%20Cats%20%26%20Mice"),
        ("☃", "%E2%98%83"),
    ])
    func percentEncodingTable(input: String, expected: String) throws {
        #expect(PercentEncoding.encode(input) == expected)
        var bytes = [UInt8]()
        PercentEncoding.appendEncoded(input.utf8, to: &bytes)
        #expect(String(decoding: bytes, as: UTF8.self) == expected)
        // As a header value.
        let header = try Self.rfcSigner.authorizationHeader(
            method: "GET", url: URL(string: "https://h.example/")!, protocolParameters: [("oauth_x", input)])
        #expect(header.hasSuffix(", oauth_x=\"\(expected)\""))
        // As a signed parameter: encoded once in the normalized string, twice in the base string.
        let signer = Self.rfcSigner(nonce: "n", timestamp: "1")
        let base = try signer.signatureBaseString(
            method: "GET", url: URL(string: "https://h.example/")!,
            protocolParameters: [("oauth_x", input)])
        #expect(base == "GET&https%3A%2F%2Fh.example%2F&oauth_x%3D" + PercentEncoding.encode(expected))
    }
}
