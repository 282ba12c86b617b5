#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Masks the secrets a request carried in text its answer brought back.
///
/// A server may echo what it was sent (a PLAINTEXT signature, the request in a
/// debug page, the code in an error description); an error that quotes the
/// provider must not put the client secret, its Basic form (the header's
/// value, and its base64 credentials alone, which decode to `id:secret`), the
/// code, the PKCE verifier or a token on a terminal or in a log. Each secret is masked raw,
/// percent-encoded (once and twice) and form-encoded. Both protocols' parsers
/// use this one mask.
package struct SecretMask: Sendable {
    package var secrets: [String]

    package init(_ secrets: [String]) {
        // Long first, so a secret containing another is masked whole (it has
        // more UTF-8 bytes too; `count` would walk each string's characters
        // at every comparison).
        self.secrets = Array(Set(secrets.filter { $0.count >= 4 })).sorted { $0.utf8.count > $1.utf8.count }
    }

    package func apply(_ text: String) -> String {
        var text = text
        for secret in secrets {
            let encoded = PercentEncoding.encode(secret)
            for form in [secret, encoded, PercentEncoding.encode(encoded), encoded.replacing("%20", with: "+")] {
                text = Self.masking(form, in: text)
                text = Self.maskingCutPrefix(of: form, in: text)
            }
        }
        return text
    }

    /// `text` with every occurrence of `form` masked, compared scalar by
    /// scalar. Not `String.replacing`, which compares characters: a secret
    /// echoed with a combining mark after it (`…4567` + U+0301 makes `7́`
    /// one character) was not found, and its bytes reached the message.
    static func masking(_ form: String, in text: String) -> String {
        let needle = Array(form.unicodeScalars)
        let scalars = Array(text.unicodeScalars)
        guard let first = needle.first, scalars.count >= needle.count else { return text }
        var masked = String.UnicodeScalarView()
        var index = 0
        var found = false
        while index < scalars.count {
            if scalars[index] == first, index + needle.count <= scalars.count,
                scalars[index..<(index + needle.count)].elementsEqual(needle)
            {
                masked.append(contentsOf: "••••".unicodeScalars)
                index += needle.count
                found = true
            } else {
                masked.append(scalars[index])
                index += 1
            }
        }
        return found ? String(masked) : text
    }

    /// Quoted text is cut with `…` (``DisplayText/sanitized(_:limit:)``),
    /// sometimes before it is masked: a secret cut there is not found whole,
    /// and its first characters would show (`'xSEKRET-client-…'`). So the
    /// four or more characters before each `…` that begin a secret are masked too.
    private static func maskingCutPrefix(of secret: String, in text: String) -> String {
        guard text.contains("…"), secret.count > 4 else { return text }
        var result = ""
        var rest = Substring(text)
        while let cut = rest.firstIndex(of: "…") {
            var head = rest[..<cut]
            for length in stride(from: min(secret.count - 1, head.count), through: 4, by: -1)
            where head.hasSuffix(secret.prefix(length)) {
                head = head.dropLast(length)
                result += head + "••••"
                head = ""
                break
            }
            result += head + "…"
            rest = rest[rest.index(after: cut)...]
        }
        return result + rest
    }

    /// Whether one of `texts` holds one of `secrets`, as sent or
    /// percent-encoded: for a field that is stored or shown whole (granted
    /// scopes, a device grant's user code and pages), where masking part of
    /// it would leave a value that means something else, so it is refused.
    ///
    /// Only secrets of eight characters or more count (codes, verifiers and
    /// tokens are far longer): a short test secret such as `test` must not
    /// make the scope `test:read` look like an echo. A text shorter than a
    /// secret cannot hold it, which settles the usual case (short scopes,
    /// long secrets) without a search; this runs on every refresh.
    package static func anyRepeated(_ secrets: [String], in texts: [String]) -> Bool {
        let longest = texts.reduce(0) { max($0, $1.utf8.count) }
        for secret in secrets where secret.utf8.count >= 8 && secret.utf8.count <= longest {
            // Bytes, not characters: a combining mark after the secret
            // hid it from `contains` (one character with its last letter).
            if texts.contains(where: { Self.holds($0, secret) }) { return true }
            let encoded = PercentEncoding.encode(secret)
            if encoded != secret,
                texts.contains(where: { $0.utf8.count >= encoded.utf8.count && Self.holds($0, encoded) })
            {
                return true
            }
        }
        return false
    }

    package func apply(_ response: ProviderErrorResponse) -> ProviderErrorResponse {
        var masked = response
        masked.code = apply(response.code)
        masked.description = response.description.map(apply)
        masked.uri = response.uri.map(apply)
        return masked
    }

    /// `problem` with every value it quotes from the ID token masked: the
    /// header (`kid`, `alg`, `crit`) is read before the signature is
    /// checked, so whoever answered could have put a secret it was sent
    /// there, and the claims are the provider's own text. Masked before
    /// the description clips them, so a clipped secret is not half shown.
    package func apply(_ problem: AuthKitError.IDTokenProblem) -> AuthKitError.IDTokenProblem {
        switch problem {
        case .malformed(let detail): .malformed(apply(detail))
        case .algorithmNotAllowed(let algorithm): .algorithmNotAllowed(apply(algorithm))
        case .criticalHeader(let names): .criticalHeader(names.map(apply))
        case .unknownKey(let kid): .unknownKey(kid: kid.map(apply))
        case .keySetUnusable(let detail): .keySetUnusable(apply(detail))
        case .issuerMismatch(let expected, let received): .issuerMismatch(expected: expected, received: apply(received))
        case .audienceMismatch(let clientID, let received):
            .audienceMismatch(clientID: clientID, received: received.map(apply))
        case .authorizedPartyMismatch(let clientID, let received):
            .authorizedPartyMismatch(clientID: clientID, received: apply(received))
        case .missingClaim(let name): .missingClaim(apply(name))
        case .identityChanged(let claim): .identityChanged(apply(claim))
        case .missing, .signatureInvalid, .expired, .notYetValid, .nonceMismatch, .accessTokenHashMismatch,
            .codeHashMismatch, .authenticationTooOld:
            problem
        }
    }

    /// `error` with every text it quotes from an answer masked: a
    /// provider's error, an answer's fields, an ID token's header and
    /// claims, a redirect's target (a secret is a valid DNS label).
    package func apply(_ error: AuthKitError) -> AuthKitError {
        guard !secrets.isEmpty else { return error }
        switch error.reason {
        case .providerError(let step, let response): return .providerError(step: step, apply(response))
        case .authorizationFailed(let response): return .authorizationFailed(apply(response))
        case .invalidResponse(let step, let reason):
            return .invalidResponse(step: step, reason: .init(reason.kind, apply(reason.detail)))
        case .idTokenRejected(let providerID, let reason):
            return .idTokenRejected(providerID: providerID, reason: apply(reason))
        case .redirectNotFollowed(let step, let status, let location):
            return .redirectNotFollowed(step: step, status: status, location: apply(location))
        default: return error
        }
    }

    /// Whether `text`'s UTF-8 bytes hold `part`'s.
    static func holds(_ text: String, _ part: String) -> Bool {
        let bytes = Array(text.utf8)
        let wanted = Array(part.utf8)
        guard let first = wanted.first, bytes.count >= wanted.count else { return wanted.isEmpty }
        for start in 0...(bytes.count - wanted.count)
        where bytes[start] == first && bytes[start..<(start + wanted.count)].elementsEqual(wanted) {
            return true
        }
        return false
    }
}
