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
    /// each `{name}` filled from `placeholders` (a pattern whose placeholder
    /// has no value matches nothing), or a loopback address.
    package func allow(_ url: URL, placeholders: [String: String]) -> Bool {
        guard isRestricted, !url.isLoopback else { return true }
        let target = url.origin
        return patterns.contains { pattern in
            var filled = pattern
            for name in DescriptorValidator.variables(in: pattern) {
                guard let value = placeholders[name] else { return false }
                filled = filled.replacing("{\(name)}", with: value)
            }
            // A value may carry a path (a GitLab under a relative URL root):
            // the origin is what comes before it.
            if let path = filled.dropFirst("https://".count).firstIndex(of: "/") { filled = String(filled[..<path]) }
            return Self.matches(target, pattern: filled)
        }
    }

    /// The origins as a user reads them, placeholders filled where known.
    package func shown(placeholders: [String: String]) -> String {
        patterns.map { pattern in
            var filled = pattern
            for name in DescriptorValidator.variables(in: pattern) {
                if let value = placeholders[name] { filled = filled.replacing("{\(name)}", with: value) }
            }
            return filled
        }.joined(separator: ", ")
    }

    /// Why `pattern` is not an origin pattern, or nil. Placeholders are
    /// checked by the caller; here each stands for one host label.
    package static func problem(_ pattern: String) -> String? {
        var sample = pattern
        for name in Set(DescriptorValidator.variables(in: pattern)) { sample = sample.replacing("{\(name)}", with: "x") }
        let example = "e.g. https://api.example.com or https://*.example.com"
        guard let parsed = parse(sample) else {
            return "'\(DisplayText.sanitized(pattern, limit: 80))' is not an origin (scheme, host and optional port, with no path); \(example)."
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
        // A host written with its final dot names the same host.
        let host = have.host.hasSuffix(".") ? String(have.host.dropLast()) : have.host
        guard want.wildcard else { return host == want.host }
        return host.hasSuffix("." + want.host) && host.count > want.host.count + 1
    }

    /// `scheme://[*.]host[:port]`, lowercased, the default port made explicit;
    /// nil for anything with a path, query, fragment or user name.
    private static func parse(_ text: String) -> (scheme: String, host: String, port: Int, wildcard: Bool)? {
        let lowered = text.lowercased()
        let scheme: String
        if lowered.hasPrefix("https://") { scheme = "https" } else if lowered.hasPrefix("http://") { scheme = "http" } else { return nil }
        var authority = Substring(lowered.dropFirst(scheme.count + 3))
        guard !authority.isEmpty, !authority.contains(where: { "/?#@ \\".contains($0) }) else { return nil }
        var port = scheme == "https" ? 443 : 80
        if let colon = authority.lastIndex(of: ":"), !authority[colon...].contains("]") {
            guard let number = Int(authority[authority.index(after: colon)...]), (1...65535).contains(number) else { return nil }
            port = number
            authority = authority[..<colon]
        }
        let wildcard = authority.hasPrefix("*.")
        if wildcard { authority = authority.dropFirst(2) }
        guard !authority.isEmpty, !authority.contains("*"), !authority.hasPrefix(".") else { return nil }
        return (scheme, String(authority), port, wildcard)
    }
}
