#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Masks the secrets a request carried in text its answer brought back.
///
/// A server may echo what it was sent (a PLAINTEXT signature, the request in a
/// debug page, the code in an error description); an error that quotes the
/// provider must not put the client secret, its Basic form, the code, the PKCE
/// verifier or a token on a terminal or in a log. Each secret is masked raw,
/// percent-encoded (once and twice) and form-encoded. Both protocols' parsers
/// use this one mask.
package struct SecretMask: Sendable {
    package var secrets: [String]

    package init(_ secrets: [String]) {
        // Long first, so a secret containing another is masked whole.
        self.secrets = Array(Set(secrets.filter { $0.count >= 4 })).sorted { $0.count > $1.count }
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
            for length in stride(from: min(secret.count - 1, head.count), through: 4, by: -1) where head.hasSuffix(secret.prefix(length)) {
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
        case .invalidResponse(let step, let reason): return .invalidResponse(step: step, reason: apply(reason))
        default: return error
        }
    }
}
