import AuthKitTestSupport
import Crypto
import Foundation

@testable import AuthKit
@_spi(Reproducible) @testable import AuthKitOAuth1

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A ``UserAgent`` that runs a closure: the test plays the user.
struct ScriptedAgent: UserAgent {
    let script: @Sendable (AuthorizationSession) async throws -> UserAgentResult
    init(_ script: @escaping @Sendable (AuthorizationSession) async throws -> UserAgentResult) { self.script = script }
    func run(_ session: AuthorizationSession) async throws -> UserAgentResult { try await script(session) }
}

enum Fixture {
    static let consumerKey = "authkit-test-consumer"
    /// Characters that must be encoded in the key (`+ / & = ~` and a space).
    static let consumerSecret = "s3cr3t+/&=~consumer secret"

    static func descriptor(
        baseURL: String, signatureMethod: String? = nil, requireCallbackConfirmed: Bool? = nil,
        requestTokenParameters: [String: String]? = nil, invalidate: Bool = false,
        authorizePath: String = "/authorize", requestTokenMethod: String? = nil,
        accessTokenMethod: String? = nil
    ) -> ProviderDescriptor {
        testDescriptor(
            id: "test-oauth1", name: "Test OAuth1", protocol: .oauth1,
            oauth1: DescriptorFile.OAuth1(
                requestTokenURL: baseURL + "/request_token", authorizeURL: baseURL + authorizePath,
                authenticateURL: baseURL + "/authenticate", accessTokenURL: baseURL + "/access_token",
                requestTokenMethod: requestTokenMethod, accessTokenMethod: accessTokenMethod,
                signatureMethod: signatureMethod, requestTokenParameters: requestTokenParameters,
                requireCallbackConfirmed: requireCallbackConfirmed,
                invalidateTokenURL: invalidate ? baseURL + "/invalidate_token" : nil))
    }

    static func client(
        baseURL: String, nonceAndTimestamp: NonceAndTimestamp = .live, signatureMethod: String? = nil,
        requireCallbackConfirmed: Bool? = nil, requestTokenParameters: [String: String]? = nil,
        invalidate: Bool = false, authorizePath: String = "/authorize"
    ) throws -> OAuth1Client {
        try OAuth1Client(
            descriptor: descriptor(
                baseURL: baseURL, signatureMethod: signatureMethod,
                requireCallbackConfirmed: requireCallbackConfirmed,
                requestTokenParameters: requestTokenParameters, invalidate: invalidate,
                authorizePath: authorizePath),
            settings: ClientSettings(clientID: consumerKey, clientSecret: consumerSecret),
            nonceAndTimestamp: nonceAndTimestamp)
    }
}

/// Parses `OAuth a="1", b="2"` into decoded pairs, in order.
func authorizationParameters(_ header: String?) -> [(String, String)] {
    guard let header, header.hasPrefix("OAuth ") else { return [] }
    return header.dropFirst("OAuth ".count).components(separatedBy: ", ").compactMap { part in
        let pieces = part.split(separator: "=", maxSplits: 1)
        guard pieces.count == 2, pieces[1].hasPrefix("\""), pieces[1].hasSuffix("\"") else { return nil }
        return (
            PercentEncoding.decode(String(pieces[0])) ?? "",
            PercentEncoding.decode(String(pieces[1].dropFirst().dropLast())) ?? ""
        )
    }
}

func authorizationDictionary(_ header: String?) -> [String: String] {
    Dictionary(authorizationParameters(header), uniquingKeysWith: { first, _ in first })
}

/// Recomputes a received request's HMAC-SHA1 signature independently of the
/// signer's key handling: the base string from the signer, the key and the MAC
/// here, with swift-crypto directly.
func expectedHMACSHA1(
    method: String, url: URL, contentType: String?, body: Data?, header: String?,
    consumerSecret: String, tokenSecret: String
) throws -> String {
    let parameters = authorizationParameters(header).filter { $0.0 != "oauth_signature" }
    let signer = OAuth1Signer(consumerKey: "unused", consumerSecret: "unused")
    let base = try signer.signatureBaseString(
        method: method, url: url, contentType: contentType, body: body,
        protocolParameters: parameters)
    let key = PercentEncoding.encode(consumerSecret) + "&" + PercentEncoding.encode(tokenSecret)
    let mac = HMAC<Insecure.SHA1>.authenticationCode(for: Data(base.utf8), using: SymmetricKey(data: Data(key.utf8)))
    return Data(mac).base64EncodedString()
}
