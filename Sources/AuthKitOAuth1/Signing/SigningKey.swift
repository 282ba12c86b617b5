import AuthKit

/// The key of RFC 5849 §3.4.2 (and the PLAINTEXT signature, §3.4.4):
/// `enc(consumer secret) & enc(token secret)`.
///
/// "An '&' character (ASCII code 38), which MUST be included even when either
/// secret is empty": before a token exists (the request-token call) the key is
/// `enc(consumer_secret)&`.
struct SigningKey: Sendable {
    private let encodedConsumerSecret: [UInt8]

    init(consumerSecret: String) {
        var bytes = [UInt8]()
        PercentEncoding.appendEncoded(consumerSecret.utf8, to: &bytes)
        bytes.append(UInt8(ascii: "&"))
        encodedConsumerSecret = bytes
    }

    func bytes(tokenSecret: String?) -> [UInt8] {
        var key = encodedConsumerSecret
        if let tokenSecret { PercentEncoding.appendEncoded(tokenSecret.utf8, to: &key) }
        return key
    }
}
