#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Where a provider's API lives: the descriptor's `api.origins`, so that
/// `authkit request` and `authkit token header` send a stored credential only
/// there, and a mistyped or planted URL (`https://qitta.com/…`, a link pasted
/// from somewhere) gets an error instead of the user's token.
///
/// Each entry is an origin (RFC 6454 §4: scheme, host and port; no path),
/// optionally with `*.` before the host for any subdomain of it
/// (`https://*.googleapis.com` matches `https://people.googleapis.com`, not
/// `https://googleapis.com`), and with the descriptor's `{placeholders}` in
/// the host (`https://{host}` for a self-hosted GitLab). A descriptor without
/// the field (one `providers add` wrote) restricts nothing. A loopback URL is
/// always allowed: a local mock of the API is the common test, and a
/// process that listens there is already on the user's machine.
package struct APIOrigins: Sendable, Hashable {
    /// As written in the file.
    package var patterns: [String]

    package init(_ patterns: [String]) {
        self.patterns = patterns
    }

    /// The descriptor names its API's origins, so others are refused.
    package var isRestricted: Bool { !patterns.isEmpty }

    /// Whether a credential may be sent to `url`: one of the origins, with
    /// each `{name}` filled from `placeholders` (see ``filled(_:placeholders:)``),
    /// or a loopback address.
    package func allow(_ url: URL, placeholders: [String: String]) -> Bool {
        guard isRestricted, !url.isLoopback else { return true }
        let target = url.origin
        return patterns.contains { pattern in
            Self.filled(pattern, placeholders: placeholders).map { Self.matches(target, pattern: $0) } ?? false
        }
    }

    /// Some pattern has a `{placeholder}`: its origin depends on settings.
    package var usesPlaceholders: Bool { patterns.contains { $0.contains("{") } }

    /// The origins as a user reads them, placeholders filled where known.
    package func shown(placeholders: [String: String]) -> String {
        patterns.map { Self.filled($0, placeholders: placeholders) ?? $0 }.joined(separator: ", ")
    }

    /// `pattern` with each `{name}` filled in, or nil when one has no value or
    /// a value that is not what it stands for. A value stands for host
    /// labels (letters, digits, `-` and `.`): `evil.example/` in
    /// `https://{region}.api.example` would otherwise end the host early and
    /// drop the provider's domain. Only a placeholder that ends the pattern
    /// (`https://{host}`) may add a port, and a path, which the origin leaves
    /// out (a GitLab under a relative URL root: `git.example.com/gitlab`).
    static func filled(_ pattern: String, placeholders: [String: String]) -> String? {
        var result = ""
        var rest = Substring(pattern)
        while let open = rest.firstIndex(of: "{"), let close = rest[open...].firstIndex(of: "}") {
            result += rest[..<open]
            guard let value = placeholders[String(rest[rest.index(after: open)..<close])] else { return nil }
            rest = rest[rest.index(after: close)...]
            var authority = Substring(value)
            if rest.isEmpty, let slash = value.firstIndex(of: "/") { authority = value[..<slash] }
            var host = authority
            if rest.isEmpty, let colon = authority.firstIndex(of: ":") {
                guard let port = Int(authority[authority.index(after: colon)...]), (1...65535).contains(port) else { return nil }
                host = authority[..<colon]
            }
            guard !host.isEmpty, host.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == ".") }) else { return nil }
            result += authority
        }
        return result + rest
    }

    /// Why `pattern` is not an origin pattern, or nil. Placeholders are
    /// checked by the caller; here each stands for a host.
    package static func problem(_ pattern: String) -> String? {
        var sample = pattern
        for name in Set(DescriptorValidator.variables(in: pattern)) { sample = sample.replacing("{\(name)}", with: "p.example") }
        let example = "e.g. https://api.example.com or https://*.example.com"
        guard let parsed = parse(sample) else {
            return "'\(DisplayText.sanitized(pattern, limit: 80))' is not an origin (scheme, ASCII host and optional port, with no path); \(example)."
        }
        guard parsed.scheme == "https" || DescriptorValidator.isLoopback(host: parsed.host) else {
            return "'\(DisplayText.sanitized(pattern, limit: 80))' is not https: a credential goes over plain http only to this machine; \(example)."
        }
        if parsed.wildcard, !parsed.host.contains(".") {
            return "'\(DisplayText.sanitized(pattern, limit: 80))' would match every host under a top-level domain; name the provider's own domain after '*.'."
        }
        return nil
    }

    /// Whether the origin `target` (as `URL.origin` writes it) is `pattern`'s.
    static func matches(_ target: String, pattern: String) -> Bool {
        guard let want = parse(pattern), let have = parse(target), !have.wildcard,
              have.scheme == want.scheme, have.port == want.port else { return false }
        guard want.wildcard else { return have.host == want.host }
        return have.host.hasSuffix("." + want.host)
    }

    /// `scheme://[*.]host[:port]`, lowercased, without a final dot on the
    /// host (it names the same host), the default port made explicit; nil
    /// for anything with a path, query, fragment or user name, or a host
    /// that is neither ASCII labels nor a bracketed IPv6 address (a
    /// percent-encoded one included: URLs name hosts plainly).
    private static func parse(_ text: String) -> (scheme: String, host: String, port: Int, wildcard: Bool)? {
        let lowered = text.lowercased()
        let scheme: String
        if lowered.hasPrefix("https://") { scheme = "https" } else if lowered.hasPrefix("http://") { scheme = "http" } else { return nil }
        var authority = Substring(lowered.dropFirst(scheme.count + 3))
        var port = scheme == "https" ? 443 : 80
        if let colon = authority.lastIndex(of: ":"), !authority[colon...].contains("]") {
            guard let number = Int(authority[authority.index(after: colon)...]), (1...65535).contains(number) else { return nil }
            port = number
            authority = authority[..<colon]
        }
        let wildcard = authority.hasPrefix("*.")
        if wildcard { authority = authority.dropFirst(2) }
        if authority.hasSuffix(".") { authority = authority.dropLast() }
        if authority.hasPrefix("[") {
            guard !wildcard, authority.hasSuffix("]"), authority.count > 2,
                  authority.dropFirst().dropLast().allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." }) else { return nil }
        } else {
            let labels = authority.split(separator: ".", omittingEmptySubsequences: false)
            guard labels.allSatisfy({ !$0.isEmpty && $0.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") } }) else { return nil }
        }
        return (scheme, String(authority), port, wildcard)
    }
}
