#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Reads the provider's answer out of a redirect URL: OAuth 2.0's (RFC 6749
/// §4.1.2) and OAuth 1.0a's callback (RFC 5849 §2.2) alike.
///
/// ``parameters(of:expectedTarget:)`` is the part both protocols share:
/// 1. the text must be a URL as a browser sends it (printable ASCII, and only
///    what RFC 3986 allows in a query);
/// 2. it must be this attempt's redirect URI (scheme, host, port, path);
/// 3. no parameter may appear twice (RFC 6749 §3.1), and every %-escape must decode.
///
/// ``code(from:for:)`` then applies OAuth 2.0's rules, in an order that is the point:
/// 4. `state` must be present and equal, compared in constant time, **before**
///    `code` or `error` is looked at — a forged error redirect is as much an
///    attack as a forged code (RFC 9700 §4.7);
/// 5. `iss`, when expected or present, must name the attempt's issuer (RFC 9207 §2.4);
/// 6. only then is `error` reported or `code` returned.
package struct RedirectParser: Sendable {
    /// A fragment the provider appends (Instagram's `_`), removed before parsing.
    package var appendedFragment: String?

    package init(appendedFragment: String? = nil) {
        self.appendedFragment = appendedFragment
    }

    /// Returns the authorization code.
    /// - Throws: ``AuthKitError/Code/redirectRejected`` when the URL is not a valid answer
    ///   to `pending`; ``AuthKitError/Code/authorizationFailed`` when it is, and carries `error`.
    package func code(from url: URL, for pending: PendingAuthorization) throws -> String {
        try code(from: url.absoluteString, for: pending)
    }

    package func code(from text: String, for pending: PendingAuthorization) throws -> String {
        try answer(from: text, for: pending).code
    }

    /// The authorization code, and every parameter of the redirect (Strava
    /// names the scopes the user granted there), after the checks above.
    package func answer(from text: String, for pending: PendingAuthorization) throws -> (
        code: String, parameters: [String: String]
    ) {
        let values = try parameters(of: text, expectedTarget: pending.redirectURI)
        guard let state = values["state"] else { throw AuthKitError.redirect(.missingState) }
        guard ConstantTime.equals(state, pending.state) else { throw AuthKitError.redirect(.stateMismatch) }

        if let expectedIssuer = pending.expectedIssuer {
            if let issuer = values["iss"] {
                guard ExactText.same(issuer, expectedIssuer) else {
                    throw AuthKitError.redirect(.issuerMismatch(expected: expectedIssuer, received: issuer))
                }
            } else if pending.issuerRequired {
                throw AuthKitError.redirect(.missingIssuer(expected: expectedIssuer))
            }
        } else if let prefix = pending.issuerPrefix, let suffix = pending.issuerSuffix {
            // An "any tenant" endpoint answers for many issuers: its `iss` is
            // still compared (§2.4), as one of them, byte for byte, with one
            // path segment as the tenant; and required where the descriptor
            // says the provider sends it.
            guard let issuer = values["iss"] else {
                if pending.issuerRequired {
                    throw AuthKitError.redirect(.missingIssuer(expected: prefix + "{tenant}" + suffix))
                }
                return try code(in: values)
            }
            let bytes = Array(issuer.utf8)
            let (head, tail) = (Array(prefix.utf8), Array(suffix.utf8))
            let fits =
                bytes.count > head.count + tail.count && bytes.starts(with: head)
                && bytes.suffix(tail.count).elementsEqual(tail)
                && !bytes[head.count..<(bytes.count - tail.count)].contains(UInt8(ascii: "/"))
            guard fits else {
                throw AuthKitError.redirect(.issuerMismatch(expected: prefix + "{tenant}" + suffix, received: issuer))
            }
        }

        return try code(in: values)
    }

    /// The code of a redirect whose `state` and `iss` passed, or the error it reports.
    private func code(in values: [String: String]) throws -> (code: String, parameters: [String: String]) {
        if let error = values["error"] {
            throw AuthKitError.authorizationFailed(
                ProviderErrorResponse(
                    code: error, description: values["error_description"], uri: values["error_uri"]))
        }
        guard let code = values["code"], !code.isEmpty else { throw AuthKitError.redirect(.missingCode) }
        return (code, values)
    }

    /// The decoded query parameters of `text`, once it has passed checks 1–3.
    /// - Throws: ``AuthKitError/Code/redirectRejected`` naming the first check it fails.
    package func parameters(of text: String, expectedTarget: String) throws -> [String: String] {
        var text = text.trimmingSpacesAndNewlines()
        if let appendedFragment, text.hasSuffix("#" + appendedFragment) {
            text.removeLast(appendedFragment.count + 1)
        }
        // RFC 3986 §2: a URL holds printable ASCII only. Spaces, control
        // characters and raw non-ASCII bytes mean the text is not a URL as a
        // browser sends it; parsers disagree on such text (URLComponents
        // re-encodes it), so it is refused rather than guessed at (found by
        // the redirect fuzz harness).
        guard text.unicodeScalars.allSatisfy({ (0x21...0x7E).contains($0.value) }) else {
            throw AuthKitError.redirect(
                .malformed(
                    "it contains spaces, control characters or non-ASCII characters, which a URL cannot hold; paste it exactly as the browser's address bar gives it"
                ))
        }
        // RFC 3986 §3.4–3.5: after `?`, only unreserved characters, %-escapes,
        // sub-delimiters, `:`, `@`, `/`, `?` (and `#` starting the fragment).
        // Foundation quietly re-encodes a whole query holding anything else
        // (`]`, `|`, `{`), turning `%01` into a literal `%01`, so such a URL
        // could be read two ways; it is refused instead (found by the redirect fuzz harness).
        if let questionMark = text.firstIndex(of: "?"),
            let bad = text[questionMark...].unicodeScalars.first(where: { !Self.queryCharacters.contains($0) })
        {
            throw AuthKitError.redirect(
                .malformed(
                    "its query holds '\(bad)', which RFC 3986 does not allow there unescaped; paste it exactly as the browser's address bar gives it"
                ))
        }
        guard let received = URLComponents(string: text), received.scheme != nil else {
            throw AuthKitError.redirect(.malformed("it is not an absolute URL"))
        }
        guard let expected = URLComponents(string: expectedTarget) else {
            throw AuthKitError.redirect(.malformed("the attempt's redirect URI \(expectedTarget) is not a URL"))
        }
        guard Self.sameTarget(received, expected) else {
            throw AuthKitError.redirect(
                .unexpectedTarget(expected: Self.target(of: expected), received: Self.target(of: received)))
        }

        // The query is read from the text itself: URLComponents silently
        // re-encodes a malformed escape such as `%ZZ` instead of reporting it.
        // It is what lies between the first `?` and the first `#`: a `?` inside
        // the fragment (`/callback#?code=…`) starts no query (RFC 3986 §3.5).
        let scalars = text.unicodeScalars
        let fragmentStart = scalars.firstIndex(of: "#") ?? scalars.endIndex
        let rawQuery =
            scalars[..<fragmentStart].firstIndex(of: "?")
            .map { Substring(scalars[scalars.index(after: $0)..<fragmentStart]) } ?? ""
        guard let parameters = FormURLEncoding.decode(rawQuery) else {
            throw AuthKitError.redirect(.malformed("a query parameter has an invalid %-escape"))
        }
        var values = [String: String]()
        for (name, value) in parameters {
            guard values[name] == nil else { throw AuthKitError.redirect(.duplicateParameter(name)) }
            values[name] = value
        }

        return values
    }

    /// Characters RFC 3986 allows in a query or fragment, plus `#` between them.
    static let queryCharacters: Set<Unicode.Scalar> = Set(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~%!$&'()*+,;=:@/?#".unicodeScalars)

    /// Scheme and host compare case-insensitively (RFC 3986 §6.2.2.1); an absent
    /// port equals the scheme's default; the path compares exactly, with an empty
    /// path equal to `/`. Custom schemes (`myapp:///cb`) have an empty host.
    package static func sameTarget(_ a: URLComponents, _ b: URLComponents) -> Bool {
        func port(_ c: URLComponents) -> Int? {
            if let port = c.port { return port }
            switch c.scheme?.lowercased() {
            case "http": return 80
            case "https": return 443
            default: return nil
            }
        }
        func path(_ c: URLComponents) -> String { c.percentEncodedPath.isEmpty ? "/" : c.percentEncodedPath }
        return ExactText.sameIgnoringASCIICase(a.scheme ?? "", b.scheme ?? "")
            && ExactText.sameIgnoringASCIICase(a.percentEncodedHost ?? "", b.percentEncodedHost ?? "")
            && port(a) == port(b)
            && ExactText.same(path(a), path(b))
    }

    /// The URL without query or fragment, for messages (the query may hold a code).
    static func target(of c: URLComponents) -> String {
        var copy = c
        copy.percentEncodedQuery = nil
        copy.fragment = nil
        return copy.string ?? "(unprintable URL)"
    }
}
