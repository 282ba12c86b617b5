import AuthKit
import Crypto

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The immutable state of an ``OAuth1Signer`` and the signing itself: the
/// consumer key, the encoded consumer secret, and the prepared HMAC keys.
///
/// A class so that copying a signer, or capturing it in the closures the
/// signing path runs through, costs one retain.
final class SignerCore: Sendable {
    let consumerKey: String
    let signatureMethod: OAuth1SignatureMethod
    let key: SigningKey
    /// `oauth_consumer_key`'s value, percent-encoded once.
    let encodedConsumerKey: [UInt8]
    private let sha1Keys = HMACKeyCache<HMAC<Insecure.SHA1>>()
    private let sha256Keys = HMACKeyCache<HMAC<SHA256>>()

    init(consumerKey: String, consumerSecret: String, signatureMethod: OAuth1SignatureMethod) {
        self.consumerKey = consumerKey
        self.signatureMethod = signatureMethod
        self.key = SigningKey(consumerSecret: consumerSecret)
        var encoded = [UInt8]()
        PercentEncoding.appendEncoded(consumerKey.utf8, to: &encoded)
        self.encodedConsumerKey = encoded
    }

    /// Builds the base string of a request whose protocol parameters are given in full.
    func withBaseString<Result>(
        method: String, url: URL, contentType: String?, body: Data?, protocolParameters: [(String, String)],
        _ use: (UnsafeBufferPointer<UInt8>, EncodedParameters) throws -> Result
    ) throws -> Result {
        var storageBytes = 0
        for (name, value) in protocolParameters { storageBytes += (name.utf8.count + value.utf8.count) * 3 }
        return try withBaseString(
            method: method, url: url, contentType: contentType, body: body,
            protocolBytes: storageBytes, protocolCount: protocolParameters.count,
            appendProtocol: { parameters in
                for (name, value) in protocolParameters where name != "oauth_signature" && name != "realm" {
                    parameters.appendProtocol(name: name, value: value)
                }
            }, use)
    }

    /// Builds the base string of a new request: the protocol parameters of
    /// §3.1 are added from precomputed bytes where they are constant (the
    /// consumer key, the method, the version), so only the nonce, timestamp,
    /// token and `extra` are encoded per request.
    func withBaseString<Result>(
        method: String, url: URL, contentType: String?, body: Data?, token: String?, extra: [(String, String)],
        nonce: String, timestamp: String, includesVersion: Bool,
        _ use: (UnsafeBufferPointer<UInt8>, EncodedParameters) throws -> Result
    ) throws -> Result {
        // Constant names and precomputed values are copied; the rest may triple.
        var storageBytes =
            Self.constantProtocolBytes + encodedConsumerKey.count
            + (nonce.utf8.count + timestamp.utf8.count + (token?.utf8.count ?? 0)) * 3
        for (name, value) in extra { storageBytes += (name.utf8.count + value.utf8.count) * 3 }
        let methodName = signatureMethod.staticName
        return try withBaseString(
            method: method, url: url, contentType: contentType, body: body,
            protocolBytes: storageBytes, protocolCount: extra.count + 6,
            appendProtocol: { parameters in
                for (name, value) in extra where name != "oauth_signature" && name != "realm" {
                    parameters.appendProtocol(name: name, value: value)
                }
                encodedConsumerKey.withUnsafeBufferPointer {
                    parameters.appendProtocol(name: "oauth_consumer_key", encodedValue: $0)
                }
                parameters.appendProtocol(name: "oauth_nonce", value: nonce)
                parameters.appendProtocol(name: "oauth_signature_method", encodedValue: methodName)
                parameters.appendProtocol(name: "oauth_timestamp", value: timestamp)
                if let token { parameters.appendProtocol(name: "oauth_token", value: token) }
                if includesVersion { parameters.appendProtocol(name: "oauth_version", encodedValue: "1.0") }
            }, use)
    }

    /// The names `oauth_consumer_key`, `oauth_nonce`, `oauth_signature_method`,
    /// `oauth_timestamp`, `oauth_token`, `oauth_version` (90 bytes), the
    /// longest method name (11) and `1.0` (3), rounded up.
    private static let constantProtocolBytes = 112

    private func withBaseString<Result>(
        method: String, url: URL, contentType: String?, body: Data?,
        protocolBytes: Int, protocolCount: Int, appendProtocol: (inout EncodedParameters) -> Void,
        _ use: (UnsafeBufferPointer<UInt8>, EncodedParameters) throws -> Result
    ) throws -> Result {
        var text = url.absoluteString
        let formBody = FormURLEncoding.isFormContentType(contentType) ? body : nil
        let result: Result? = try text.withUTF8 { urlBytes in
            guard let formBody else {
                return try SignatureBaseString.withBaseString(
                    method: method, url: urlBytes, formBody: nil, protocolBytes: protocolBytes,
                    protocolCount: protocolCount, appendProtocol: appendProtocol, use)
            }
            return try formBody.withUnsafeBytes { raw in
                try SignatureBaseString.withBaseString(
                    method: method, url: urlBytes, formBody: raw.bindMemory(to: UInt8.self),
                    protocolBytes: protocolBytes,
                    protocolCount: protocolCount, appendProtocol: appendProtocol, use)
            }
        }
        guard let result else {
            throw AuthKitError.misuse(
                .unsignableRequest(
                    "\(url.redactedForLogs) is not an absolute http(s) URL, which is all OAuth 1.0a signs."))
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
            mac.update(data: SignedBytes(base))
            return Self.withBase64(mac.finalize(), use)
        case .hmacSHA256:
            var mac = sha256Keys.state(for: secret) { HMAC(key: SymmetricKey(data: key.bytes(tokenSecret: secret))) }
            mac.update(data: SignedBytes(base))
            return Self.withBase64(mac.finalize(), use)
        }
    }

    private static func withBase64<Result>(
        _ mac: some MessageAuthenticationCode, _ use: (UnsafeBufferPointer<UInt8>) -> Result
    ) -> Result {
        mac.withUnsafeBytes { raw in
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: Base64.encodedCount(raw.count)) { text in
                let count = Base64.encode(raw, into: text.baseAddress!)
                return use(UnsafeBufferPointer(rebasing: text[..<count]))
            }
        }
    }
}
