import Crypto
import HTTPTypes
import JWTKit

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A DPoP proof (RFC 9449 §4): a JWT signed with the credential's
/// ``ProofKey`` that binds one request, its method and URL, to that key.
///
/// Made fresh for every request, retries included (a new `jti` each time:
/// servers refuse a proof they saw before, §11.1), signed by jwt-kit
/// (``ProofSigner``).
package enum DPoPProof {
    /// The HTTP header that carries a proof (§4.1).
    package static let headerName = HTTPField.Name("DPoP")!
    /// The header in which servers hand out nonces (§8, §9).
    package static let nonceHeaderName = HTTPField.Name("DPoP-Nonce")!

    /// A proof for `method` on `url`.
    /// - Parameters:
    ///   - nonce: the server's latest `DPoP-Nonce` for this origin (§8), if any.
    ///   - accessToken: on a request to a resource server, the token sent
    ///     with the proof: its hash goes in `ath` (§4.2), binding the proof to it.
    package static func make(
        key: ProofKey, method: HTTPRequest.Method, url: URL, nonce: String?, accessToken: String? = nil,
        now: Date = Date()
    ) async throws -> String {
        let claims = Claims(
            jti: SecureRandom.token(), htm: method.rawValue, htu: targetURI(url), iat: Int(now.timeIntervalSince1970),
            nonce: nonce,
            ath: accessToken.map { SHA256.hash(data: Array($0.utf8)).withUnsafeBytes { Base64URL.encode($0) } })
        var header = JWTHeader()
        header.typ = "dpop+jwt"
        header.jwk = key.publicJWKFields
        let signer = try key.signer ?? ProofSigner(ES256PrivateKey(backing: key.privateKey), publicJWK: key.publicJWK)
        return try await signer.sign(claims, header: header)
    }

    /// `htu` (§4.2): the request's URI without its query and fragment, in
    /// the form a server rebuilds from the request it received to compare
    /// with it (§4.3 step 9, RFC 3986 §6.2.2–6.2.3): scheme and host in
    /// lower case, no user information, the scheme's default port (or an
    /// empty one) left out, an empty path `/`.
    /// As written, `https://api.example:443/v1` (the transport leaves the
    /// port out of `Host`) or a redirect to `https://api.example` (sent as
    /// `GET /`) made a proof a server comparing strings refused.
    ///
    /// Cut at the first `?` or `#` of the URL's text: in a URL either can
    /// only begin the query or the fragment (one in a path or a host is
    /// percent-encoded). `URLComponents` re-parsed the URL for the same
    /// result, a tenth of a proof's cost beside its signature.
    package static func targetURI(_ url: URL) -> String {
        let text = url.absoluteString
        // On the text's bytes: the string operations (a substring search,
        // Unicode case mapping) were a twentieth of a DPoP request. A URL's
        // text is ASCII (its host in punycode, the rest percent-encoded);
        // only ASCII letters are lowered (RFC 3986 §6.2.2.1), any other
        // byte kept as it is.
        let bytes = Array(text.utf8)
        let end = bytes.firstIndex { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") } ?? bytes.endIndex
        guard
            let colon = bytes[..<end].indices.first(where: { i in
                i + 2 < end && bytes[i] == UInt8(ascii: ":") && bytes[i + 1] == UInt8(ascii: "/")
                    && bytes[i + 2] == UInt8(ascii: "/")
            })
        else { return String(decoding: bytes[..<end], as: UTF8.self) }
        func lowered(_ byte: UInt8) -> UInt8 {
            byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte + 32 : byte
        }
        var uri = bytes[..<colon].map(lowered)
        let scheme = String(decoding: uri, as: UTF8.self)
        uri += "://".utf8
        let restStart = colon + 3
        let pathStart = bytes[restStart..<end].firstIndex(of: UInt8(ascii: "/")) ?? end
        // No user name or password: a server cannot rebuild them from the
        // request, and a password would travel in every proof.
        let hostStart = bytes[restStart..<pathStart].lastIndex(of: UInt8(ascii: "@")).map { $0 + 1 } ?? restStart
        var host = bytes[hostStart..<pathStart].map(lowered)
        let defaultPort = scheme == "https" ? ":443" : scheme == "http" ? ":80" : nil
        if let defaultPort, host.count >= defaultPort.utf8.count,
            host[(host.count - defaultPort.utf8.count)...].elementsEqual(defaultPort.utf8)
        {
            host.removeLast(defaultPort.utf8.count)
        }
        if host.last == UInt8(ascii: ":") { host.removeLast() } // an empty port is the default one (RFC 3986 §3.2.3)
        uri += host
        if pathStart == end { uri.append(UInt8(ascii: "/")) } else { uri += bytes[pathStart..<end] }
        return String(decoding: uri, as: UTF8.self)
    }

    /// The claims of §4.2. Written by ``ProofSerializer`` through `json`;
    /// `Encodable` as jwt-kit's payload type requires.
    struct Claims: JWTPayload {
        var jti: String
        var htm: String
        var htu: String
        var iat: Int
        var nonce: String?
        var ath: String?

        func verify(using algorithm: some JWTAlgorithm) async throws {}

        var json: JSONText {
            var json = JSONText()
            json.beginObject()
            json.member("jti", jti)
            json.member("htm", htm)
            json.member("htu", htu)
            json.member("iat")
            json.integer(iat)
            json.member("nonce", nonce)
            json.member("ath", ath)
            json.endObject()
            return json
        }
    }
}

/// The latest `DPoP-Nonce` each server handed out (RFC 9449 §8, §9), by
/// origin and role, for this process: a server that asks for nonces answers
/// every request without the current one with `use_dpop_nonce`, so
/// remembering it saves that round trip on every later request.
package final class DPoPNonces: Sendable {
    package static let shared = DPoPNonces()

    /// Whose nonce it is. RFC 9449 keeps them apart: the authorization
    /// server's (§8) goes in proofs to its token endpoint (AuthKit's PAR and
    /// device requests carry none: a PAR's `dpop_jkt` binds its code, §10;
    /// a device code is bound by its first poll's proof), a
    /// resource server's (§9) in proofs to its API (UserInfo included).
    /// Kept by origin alone, where both share one (`https://api.example/oauth/token`
    /// and `/v1/…`) a refresh's nonce replaced the API's, and the next API
    /// call was refused `use_dpop_nonce` again (and the other way round).
    package enum Server: Sendable { case authorization, resource }

    /// Each origin's latest nonce, and when it was first kept (a counter),
    /// under ``key(_:_:)``.
    private let nonces = LockedValue<(byOrigin: [String: (nonce: String, since: UInt64)], next: UInt64)>(([:], 0))
    /// Origins kept at most: one entry per origin that answered a DPoP
    /// request, and an app that reaches many (a tenant per host) would
    /// otherwise grow the map without end. Past it, the origin kept longest
    /// is let go; its next request costs one `use_dpop_nonce` round trip.
    package static let keptOrigins = 256

    /// How many origins have a nonce kept (for tests).
    package var count: Int { nonces.withLock { $0.byOrigin.count } }

    /// §8.1's `nonce = 1*NQCHAR`, bounded: printable ASCII but `"` and `\`, at most 1,024 bytes.
    package static func isNonce(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.count <= 1024
            && text.unicodeScalars.allSatisfy { (0x21...0x7E).contains($0.value) && $0 != "\"" && $0 != "\\" }
    }

    private static func key(_ origin: String, _ server: Server) -> String {
        (server == .authorization ? "as " : "rs ") + origin
    }

    package subscript(origin: String, server server: Server) -> String? {
        nonces.withLock { $0.byOrigin[Self.key(origin, server)]?.nonce }
    }

    /// The nonce `headers` carry, if it is one (§8.1).
    package static func nonce(in headers: HTTPFields) -> String? {
        guard let nonce = headers[DPoPProof.nonceHeaderName], isNonce(nonce) else { return nil }
        return nonce
    }

    /// Keeps the nonce `headers` carry, if any, for `server` at `origin`.
    /// Only a value of §8's `nonce` characters (`NQCHAR`: printable ASCII
    /// but `"` and `\`) is kept, bounded: it is copied into every later proof.
    package func remember(_ headers: HTTPFields, for origin: String, from server: Server) {
        guard let nonce = Self.nonce(in: headers) else { return }
        let origin = Self.key(origin, server)
        nonces.withLock { kept in
            if let since = kept.byOrigin[origin]?.since {
                kept.byOrigin[origin] = (nonce, since)
                return
            }
            if kept.byOrigin.count >= Self.keptOrigins,
                let oldest = kept.byOrigin.min(by: { $0.value.since < $1.value.since })?.key
            {
                kept.byOrigin[oldest] = nil
            }
            kept.byOrigin[origin] = (nonce, kept.next)
            kept.next += 1
        }
    }
}

extension DPoPProof {
    /// `request` with `credential`'s DPoP-bound token and a proof for it
    /// (RFC 9449 §7.1): `Authorization: DPoP <token>` and `DPoP: <proof>`.
    /// The proof's `ath` binds it to the token, and it carries `nonce`, the
    /// one a refusal of this request named, else the latest nonce `url`'s
    /// origin handed out (§9). A retry signed with the latest instead was
    /// refused again when another request's answer, with an older nonce,
    /// came between the refusal and the retry.
    package static func authorized(
        _ request: HTTPRequest, url: URL, token credential: Credential, key: ProofKey, descriptor: ProviderDescriptor,
        nonce given: String? = nil, now: Date = Date()
    ) async throws -> HTTPRequest {
        guard credential.providerID == descriptor.id else {
            throw AuthKitError.misuse(
                .credentialOfAnotherProvider(credential: credential.key, providerID: descriptor.id))
        }
        // RFC 9449 §7.1 as RFC 6750 §5.3: over TLS, or to this machine.
        guard url.allowsCredentials else { throw AuthKitError.insecureTransport(url: url.redactedForLogs) }
        guard credential.isDPoP else {
            throw AuthKitError.misuse(
                .unsignableRequest(
                    "\(credential.key) holds a DPoP key but a token of type '\(DisplayText.sanitized(credential.tokenType, limit: 40))', not DPoP; sign in again."
                ))
        }
        guard TokenResponseParser.isSendableAsBearer(credential.accessToken) else {
            throw AuthKitError.misuse(
                .unsignableRequest(
                    "the access token of \(credential.key) is empty or holds a character an Authorization header cannot carry; sign in again to replace it."
                ))
        }
        var request = request
        request.headerFields[.authorization] = "DPoP \(credential.accessToken)"
        request.headerFields[headerName] = try await make(
            key: key, method: request.method, url: url,
            nonce: given ?? DPoPNonces.shared[url.origin, server: .resource],
            accessToken: credential.accessToken, now: now)
        return request
    }
}
