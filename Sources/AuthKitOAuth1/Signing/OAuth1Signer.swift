import AuthKit
import Crypto

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Signs HTTP requests per RFC 5849 §3: builds the protocol parameters, the
/// signature base string and the `Authorization: OAuth …` header.
///
/// It runs on every API call, so it works on UTF-8 bytes end to end: the URL,
/// body and parameters are encoded once into one buffer and the base string is
/// written straight from it (measured by `Benchmarks/run-benchmarks` beside liboauth and oauthlib).
///
///     let signer = OAuth1Signer(consumerKey: "key", consumerSecret: "secret")
///     let header = try signer.authorizationHeader(
///         method: "GET", url: URL(string: "https://api.x.com/1.1/account/verify_credentials.json")!,
///         token: credential.accessToken, tokenSecret: credential.tokenSecret)
///
/// `description` never shows the consumer secret.
public struct OAuth1Signer: Sendable, CustomStringConvertible, CustomReflectable {
    /// `oauth_consumer_key` (the client id).
    public var consumerKey: String { core.consumerKey }
    public var signatureMethod: OAuth1SignatureMethod { core.signatureMethod }
    /// Whether to send `oauth_version="1.0"`. RFC 5849 §3.1 makes it optional;
    /// Twitter's documentation sends it, RFC 5849's own examples do not.
    public var includesVersion: Bool
    /// Fresh per request in use; fixed by tests and `authkit sign` to
    /// reproduce a published example.
    @_spi(Reproducible) public var nonceAndTimestamp: NonceAndTimestamp
    /// The immutable part, shared by copies: one reference to retain when the
    /// signer is passed around, not one per field.
    private let core: SignerCore

    public init(
        consumerKey: String, consumerSecret: String, signatureMethod: OAuth1SignatureMethod = .hmacSHA1,
        includesVersion: Bool = true
    ) {
        self.init(
            consumerKey: consumerKey, consumerSecret: consumerSecret, signatureMethod: signatureMethod,
            includesVersion: includesVersion, nonceAndTimestamp: .live)
    }

    @_spi(Reproducible) public init(
        consumerKey: String, consumerSecret: String, signatureMethod: OAuth1SignatureMethod = .hmacSHA1,
        includesVersion: Bool = true, nonceAndTimestamp: NonceAndTimestamp
    ) {
        self.core = SignerCore(
            consumerKey: consumerKey, consumerSecret: consumerSecret, signatureMethod: signatureMethod)
        self.includesVersion = includesVersion
        self.nonceAndTimestamp = nonceAndTimestamp
    }

    public var description: String {
        "OAuth1Signer(consumer key: \(consumerKey), method: \(signatureMethod.rawValue))"
    }

    /// `dump` shows the description: the stored secret is not reflected.
    public var customMirror: Mirror { Mirror(self, children: ["description": description]) }

    // MARK: - The header

    /// The value of the `Authorization` header for one request (RFC 5849 §3.5.1).
    ///
    /// - Parameters:
    ///   - method: the HTTP method; it is signed in uppercase.
    ///   - url: the full request URL; its query parameters are signed.
    ///     RFC 5849 §3.6 encodes UTF-8 text: an escape of other bytes (`%FF`)
    ///     is signed as that byte, as Go's `url.ParseQuery` reads it, while
    ///     oauthlib (Python's `unquote`) reads U+FFFD, so a server may refuse
    ///     the signature; `authkit` and the sandbox refuse such a query.
    ///   - contentType: the request's `Content-Type`. The body is signed only
    ///     when this is `application/x-www-form-urlencoded` (§3.4.1.3.1).
    ///   - body: the request body, exactly as it will be sent.
    ///   - token: `oauth_token` (request or access token), if there is one yet.
    ///   - tokenSecret: the token's secret; `nil` or empty before there is one.
    ///   - protocolParameters: further `oauth_*` parameters of this request
    ///     (`oauth_callback`, `oauth_verifier`).
    ///   - realm: an optional `realm`, sent but not signed (§3.5.1).
    /// - Throws: ``AuthKit/AuthKitError/Code/misuse`` when `url` is not absolute,
    ///   or its query or the form body holds a protocol parameter the header
    ///   carries (§3.5: each in one place);
    ///   ``AuthKit/AuthKitError/Code/insecureTransport`` for PLAINTEXT to a
    ///   plain-http URL that is not this machine (``checkTransport(_:)``).
    public func authorizationHeader(
        method: String, url: URL, contentType: String? = nil, body: Data? = nil,
        token: String? = nil, tokenSecret: String? = nil,
        protocolParameters: [(String, String)] = [], realm: String? = nil
    ) throws -> String {
        if signatureMethod == .plaintext { try Self.checkTransport(url) }
        let core = self.core
        return try core.withBaseString(
            method: method, url: url, contentType: contentType, body: body, token: token, extra: protocolParameters,
            nonce: nonceAndTimestamp.nonce(), timestamp: nonceAndTimestamp.timestamp(), includesVersion: includesVersion
        ) { base, encoded in
            if let name = encoded.protocolNameAlsoInRequest() {
                throw AuthKitError.misuse(
                    .unsignableRequest(
                        "its query or form body holds \(name), which the Authorization header carries; each protocol parameter goes in one place (RFC 5849 §3.5). Remove it from the request."
                    ))
            }
            return core.withSignature(of: base, tokenSecret: tokenSecret) { signature in
                AuthorizationHeader.render(encoded, signature: signature, realm: realm)
            }
        }
    }

    /// PLAINTEXT's signature is the consumer and token secrets themselves
    /// (§3.4.4), so it "MUST be used with a transport-layer mechanism such as
    /// TLS": signed for plain http, the header would carry both secrets in
    /// the clear. Loopback hosts are this machine (tests, the sandbox).
    static func checkTransport(_ url: URL) throws {
        guard url.allowsCredentials else { throw AuthKitError.insecureTransport(url: url.redactedForLogs) }
    }

    /// The protocol parameters of §3.1 for a new request, with a fresh nonce and
    /// timestamp: what ``authorizationHeader(method:url:contentType:body:token:tokenSecret:protocolParameters:realm:)``
    /// signs (it adds them from precomputed bytes rather than calling this).
    public func protocolParameters(token: String?, extra: [(String, String)] = []) -> [(String, String)] {
        var parameters = extra
        parameters.reserveCapacity(extra.count + 6)
        parameters.append(("oauth_consumer_key", consumerKey))
        parameters.append(("oauth_nonce", nonceAndTimestamp.nonce()))
        parameters.append(("oauth_signature_method", signatureMethod.rawValue))
        parameters.append(("oauth_timestamp", nonceAndTimestamp.timestamp()))
        if let token { parameters.append(("oauth_token", token)) }
        if includesVersion { parameters.append(("oauth_version", "1.0")) }
        return parameters
    }

    // MARK: - The parts, for tests and for callers who place parameters themselves

    /// `oauth_signature` for a request whose protocol parameters (without
    /// `oauth_signature`) are `protocolParameters` (RFC 5849 §3.4).
    public func signature(
        method: String, url: URL, contentType: String? = nil, body: Data? = nil,
        protocolParameters: [(String, String)], tokenSecret: String?
    ) throws -> String {
        if signatureMethod == .plaintext { try Self.checkTransport(url) }
        let core = self.core
        return try core.withBaseString(
            method: method, url: url, contentType: contentType, body: body,
            protocolParameters: protocolParameters
        ) { base, _ in
            core.withSignature(of: base, tokenSecret: tokenSecret) { String(decoding: $0, as: UTF8.self) }
        }
    }

    /// The signature base string (RFC 5849 §3.4.1), as text.
    public func signatureBaseString(
        method: String, url: URL, contentType: String? = nil, body: Data? = nil,
        protocolParameters: [(String, String)]
    ) throws -> String {
        try core.withBaseString(
            method: method, url: url, contentType: contentType, body: body,
            protocolParameters: protocolParameters
        ) { base, _ in String(decoding: base, as: UTF8.self) }
    }

    /// The HMAC key (or PLAINTEXT signature): `enc(consumer secret)&enc(token secret)` (§3.4.2).
    public func signingKey(tokenSecret: String?) -> String {
        String(decoding: core.key.bytes(tokenSecret: tokenSecret), as: UTF8.self)
    }
}
