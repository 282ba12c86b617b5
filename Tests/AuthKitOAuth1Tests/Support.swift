import AuthKitTestSupport
import Crypto
import Foundation
import Testing

@testable import AuthKit
@_spi(Reproducible) @testable import AuthKitOAuth1

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A ``UserAgent`` that runs a closure: the test plays the user, who may
/// type the out-of-band PIN as well as follow a redirect.
struct ScriptedAgent: AnsweringUserAgent {
    let script: @Sendable (AuthorizationSession) async throws -> UserAgentResult
    init(_ script: @escaping @Sendable (AuthorizationSession) async throws -> UserAgentResult) { self.script = script }
    func run(_ session: AuthorizationSession) async throws -> URL { try await redirect(of: session) }
    func answer(_ session: AuthorizationSession) async throws -> UserAgentResult { try await script(session) }
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

/// Recomputes a received request's HMAC-SHA1 signature independently of
/// the signer: the base string built here by RFC 5849 §3.4.1's rules with
/// Foundation alone (no AuthKit encoding or parsing), the key and the MAC
/// with swift-crypto directly. The flow and sandbox tests then prove what
/// the server received agrees with the RFC, not only with the signer.
func expectedHMACSHA1(
    method: String, url: URL, contentType: String?, body: Data?, header: String?,
    consumerSecret: String, tokenSecret: String
) throws -> String {
    let base = try independentBaseString(
        method: method, url: url, contentType: contentType, body: body,
        protocolParameters: authorizationParameters(header).filter { $0.0 != "oauth_signature" && $0.0 != "realm" })
    let key = rfc3986(consumerSecret) + "&" + rfc3986(tokenSecret)
    let mac = HMAC<Insecure.SHA1>.authenticationCode(for: Data(base.utf8), using: SymmetricKey(data: Data(key.utf8)))
    return Data(mac).base64EncodedString()
}

/// §3.6: every byte but ALPHA, DIGIT, `-`, `.`, `_`, `~` as `%XX`, upper case.
func rfc3986(_ text: String) -> String {
    var unreserved = CharacterSet(charactersIn: "-._~")
    unreserved.formUnion(CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"))
    return text.addingPercentEncoding(withAllowedCharacters: unreserved)!
}

/// §3.4.1: method, base string URI and normalized parameters, each encoded.
func independentBaseString(
    method: String, url: URL, contentType: String?, body: Data?, protocolParameters: [(String, String)]
) throws -> String {
    let components = try #require(URLComponents(url: url, resolvingAgainstBaseURL: false))
    let scheme = try #require(components.scheme).lowercased()
    let host = try #require(components.percentEncodedHost).lowercased()
    let port = components.port.flatMap { (scheme == "http" && $0 == 80) || (scheme == "https" && $0 == 443) ? nil : $0 }
    let path = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
    let uri = "\(scheme)://\(host)\(port.map { ":\($0)" } ?? "")\(path)"
    // §3.4.1.3.1: the query and a form body, decoded as forms are ('+' a space).
    func form(_ text: String) -> [(String, String)] {
        text.split(separator: "&", omittingEmptySubsequences: true).map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decoded(_ part: Substring) -> String {
                part.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String(part)
            }
            return (decoded(parts[0]), parts.count > 1 ? decoded(parts[1]) : "")
        }
    }
    var parameters = form(components.percentEncodedQuery ?? "") + protocolParameters
    if let body, contentType?.lowercased().hasPrefix("application/x-www-form-urlencoded") == true {
        parameters += form(String(decoding: body, as: UTF8.self))
    }
    // §3.4.1.3.2: encoded, sorted by name then value (byte order), joined.
    let normalized = parameters.map { (rfc3986($0.0), rfc3986($0.1)) }
        .sorted {
            ($0.0.utf8.lexicographicallyPrecedes($1.0.utf8))
                || ($0.0 == $1.0 && $0.1.utf8.lexicographicallyPrecedes($1.1.utf8))
        }
        .map { "\($0.0)=\($0.1)" }.joined(separator: "&")
    // §3.4.1.1: a custom method is encoded too.
    return [rfc3986(method.uppercased()), rfc3986(uri), rfc3986(normalized)].joined(separator: "&")
}
