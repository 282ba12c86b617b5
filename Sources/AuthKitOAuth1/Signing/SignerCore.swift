import AuthKit
import Crypto
import Foundation

/// The immutable state of an ``OAuth1Signer`` and the signing itself: the
/// consumer key, the encoded consumer secret, and the prepared HMAC keys.
///
/// A class so that copying a signer, or capturing it in the closures the
/// signing path runs through, costs one retain.
final class SignerCore: Sendable {
    let consumerKey: String
    let signatureMethod: OAuth1SignatureMethod
    let key: SigningKey
    private let sha1Keys = HMACKeyCache<HMAC<Insecure.SHA1>>()
    private let sha256Keys = HMACKeyCache<HMAC<SHA256>>()

    init(consumerKey: String, consumerSecret: String, signatureMethod: OAuth1SignatureMethod) {
        self.consumerKey = consumerKey
        self.signatureMethod = signatureMethod
        self.key = SigningKey(consumerSecret: consumerSecret)
    }

    func withBaseString<Result>(
        method: String, url: URL, contentType: String?, body: Data?, protocolParameters: [(String, String)],
        _ use: (UnsafeBufferPointer<UInt8>, EncodedParameters) throws -> Result
    ) throws -> Result {
        var text = url.absoluteString
        let formBody = SignatureBaseString.isFormEncoded(contentType) ? body : nil
        let result: Result? = try text.withUTF8 { urlBytes in
            guard let formBody else {
                return try SignatureBaseString.withBaseString(
                    method: method, url: urlBytes, formBody: nil, protocolParameters: protocolParameters, use)
            }
            return try formBody.withUnsafeBytes { raw in
                try SignatureBaseString.withBaseString(
                    method: method, url: urlBytes, formBody: raw.bindMemory(to: UInt8.self),
                    protocolParameters: protocolParameters, use)
            }
        }
        guard let result else {
            throw AuthKitError.unsupported("Cannot sign a request to \(url.redactedForLogs): OAuth 1.0a signs absolute http(s) URLs only.")
        }
        return result
    }

    /// Computes the signature of `base` (unencoded text: base64, or the key for
    /// PLAINTEXT) and passes it to `use`.
    func withSignature<Result>(
        of base: UnsafeBufferPointer<UInt8>, tokenSecret: String?, _ use: (UnsafeBufferPointer<UInt8>) -> Result
    ) -> Result {
        let secret = tokenSecret ?? ""
        switch signatureMethod {
        case .plaintext:
            // §3.4.4: the signature is the key; it is encoded like any value in the header.
            return key.bytes(tokenSecret: secret).withUnsafeBufferPointer(use)
        case .hmacSHA1:
            var mac = sha1Keys.state(for: secret) { HMAC(key: SymmetricKey(data: key.bytes(tokenSecret: secret))) }
            mac.update(data: UnsafeRawBufferPointer(base))
            return Self.withBase64(mac.finalize(), use)
        case .hmacSHA256:
            var mac = sha256Keys.state(for: secret) { HMAC(key: SymmetricKey(data: key.bytes(tokenSecret: secret))) }
            mac.update(data: UnsafeRawBufferPointer(base))
            return Self.withBase64(mac.finalize(), use)
        }
    }

    private static func withBase64<Result>(_ mac: some MessageAuthenticationCode, _ use: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
        mac.withUnsafeBytes { raw in
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: Base64.encodedCount(raw.count)) { text in
                let count = Base64.encode(raw, into: text.baseAddress!)
                return use(UnsafeBufferPointer(rebasing: text[..<count]))
            }
        }
    }
}
