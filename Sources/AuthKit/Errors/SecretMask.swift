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
                text = text.replacing(form, with: "••••")
                text = Self.maskingCutPrefix(of: form, in: text)
            }
        }
        return text
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
            if texts.contains(where: { $0.contains(secret) }) { return true }
            let encoded = PercentEncoding.encode(secret)
            if encoded != secret, texts.contains(where: { $0.utf8.count >= encoded.utf8.count && $0.contains(encoded) })
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

    /// `error` with every provider text it quotes masked.
    package func apply(_ error: AuthKitError) -> AuthKitError {
        guard !secrets.isEmpty else { return error }
        switch error {
        case .providerError(let step, let response): return .providerError(step: step, apply(response))
        case .authorizationFailed(let response): return .authorizationFailed(apply(response))
        case .invalidResponse(let step, let reason):
            return .invalidResponse(step: step, reason: .init(reason.kind, apply(reason.detail)))
        default: return error
        }
    }
}
