#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Where a provider's API lives: the descriptor's `api.origins`. A stored
/// credential is sent nowhere else (``CredentialSource``, and `authkit
/// request` and `token header` before they read the store), so a mistyped
/// or planted URL (`https://qitta.com/…`, a link an API answer gave) gets an
/// error instead of the user's token.
///
/// Each entry is an origin (RFC 6454 §4: scheme, host and port; no path),
/// optionally with `*.` before the host for any subdomain of it
/// (`https://*.googleapis.com` matches `https://people.googleapis.com`, not
/// `https://googleapis.com`), and with the descriptor's `{placeholders}` in
/// the host (`https://{host}` for a self-hosted GitLab).
///
/// An origin with a placeholder depends on settings, which a command line or
/// an environment can name anything in (`--placeholder host=evil.example`).
/// So it lets a credential through only where that credential was issued:
/// its ``Credential/endpointOrigins``, recorded at the sign-in from the same
/// values. A credential stored before those were recorded goes only to the
/// origins without a placeholder; signing in again records them.
///
/// A descriptor without the field (one `providers add` wrote) restricts
/// nothing. One with it allows a loopback address only where it lists one
/// (a sandbox's pointed descriptor lists the sandbox): any local process
/// may listen on `127.0.0.2`, and a `next` link in an API answer, or a typo,
/// would have handed it the token. A host with an empty label
/// (`a..googleapis.com`) is no host name, and matches nothing.
package struct APIOrigins: Sendable, Hashable {
    /// As written in the file.
    package let patterns: [String]
    /// Each pattern read once (lowercased, default port dropped), for the
    /// check every API request makes; nil for one that is no origin.
    private let templates: [(scheme: String, authority: String)?]

    package init(_ patterns: [String]) {
        self.patterns = patterns
        self.templates = patterns.map(Self.template)
    }

    package static func == (lhs: APIOrigins, rhs: APIOrigins) -> Bool { lhs.patterns == rhs.patterns }
    package func hash(into hasher: inout Hasher) { hasher.combine(patterns) }

    /// The descriptor names its API's origins, so others are refused.
    package var isRestricted: Bool { !patterns.isEmpty }

    /// How a URL stands to the listed origins.
    package struct Match: Sendable, Equatable {
        /// Allowed whatever the credential: no list, or a listed origin
        /// without a placeholder (loopback only where it is listed).
        package var outright: Bool
        /// An origin with a placeholder has this URL's shape: allowed for a
        /// credential issued there.
        package var withPlaceholder: Bool
        /// An origin with a placeholder, filled with the values in effect, is
        /// this URL's (what the command line shows; never enough on its own).
        package var byValuesInEffect: Bool

        /// Allowed for `credential` (`nil`: not read yet, so only what no
        /// credential could allow is refused).
        package func allows(_ origin: String, for credential: Credential?) -> Bool {
            if outright { return true }
            guard withPlaceholder else { return false }
            guard let credential else { return true }
            // Nothing recorded (a store from before AuthKit recorded it): the
            // values in effect could name any host, so no such origin is allowed.
            guard let issued = credential.endpointOrigins, let wanted = APIOrigins.normalizedOrigin(origin) else {
                return false
            }
            return issued.contains { APIOrigins.normalizedOrigin($0) == wanted }
        }
    }

    /// How `url` stands to the origins, with `{name}`s filled from `placeholders`.
    package func match(_ url: URL, placeholders: [String: String]) -> Match {
        guard isRestricted else { return Match(outright: true, withPlaceholder: false, byValuesInEffect: false) }
        guard let target = Self.authority(of: url), Self.hasNoEmptyLabel(Self.hostPart(of: target.authority[...]))
        else {
            return Match(outright: false, withPlaceholder: false, byValuesInEffect: false)
        }
        var match = Match(outright: false, withPlaceholder: false, byValuesInEffect: false)
        for (pattern, template) in zip(patterns, templates) {
            guard let template, template.scheme == target.scheme else { continue }
            if !pattern.contains("{") {
                match.outright = match.outright || Self.glob(template.authority[...], target.authority[...])
                continue
            }
            match.withPlaceholder = match.withPlaceholder || Self.glob(template.authority[...], target.authority[...])
            if let filled = Self.filled(pattern, placeholders: placeholders), let made = Self.template(filled) {
                match.byValuesInEffect = match.byValuesInEffect || Self.glob(made.authority[...], target.authority[...])
            }
        }
        return match
    }

    /// The origins as a user reads them, placeholders filled where known.
    package func shown(placeholders: [String: String]) -> [String] {
        var seen = Set<String>()
        return patterns.map { Self.filled($0, placeholders: placeholders) ?? $0 }.filter {
            seen.insert($0.lowercased()).inserted
        }
    }

    /// The origins `credential` may go to, for an error: those without a
    /// placeholder, and where it was issued that one with a placeholder has
    /// the shape of.
    package func shown(for credential: Credential, placeholders: [String: String]) -> [String] {
        let fixed = patterns.filter { !$0.contains("{") }
        guard let issued = credential.endpointOrigins else { return fixed }
        let signedIn = issued.filter { origin in
            URL(string: origin).map { match($0, placeholders: [:]).withPlaceholder } ?? false
        }
        return fixed + signedIn
    }

    /// `pattern` with each `{name}` filled in, or nil when one has no value or
    /// a value that is not what it stands for. A value stands for host
    /// labels (letters, digits, `-`, `_` and `.`): `evil.example/` in
    /// `https://{region}.api.example` would otherwise end the host early and
    /// drop the provider's domain. Only a placeholder that ends the pattern
    /// (`https://{host}`) may be an IPv6 literal, add a port, and a path,
    /// which the origin leaves out (a GitLab under a relative URL root:
    /// `git.example.com/gitlab`).
    static func filled(_ pattern: String, placeholders: [String: String]) -> String? {
        var result = ""
        var rest = Substring(pattern)
        while let open = rest.firstIndex(of: "{"), let close = rest[open...].firstIndex(of: "}") {
            result += rest[..<open]
            guard let value = placeholders[String(rest[rest.index(after: open)..<close])] else { return nil }
            rest = rest[rest.index(after: close)...]
            let authority = rest.isEmpty ? Substring(value).prefix { $0 != "/" } : Substring(value)
            guard !authority.isEmpty, rest.isEmpty ? isHostValue(authority) : authority.allSatisfy(isLabelCharacter)
            else { return nil }
            result += authority
        }
        return result + rest
    }

    /// Why `pattern` is not an origin pattern, or nil. Placeholders are
    /// checked by the caller; here each stands for a host.
    static func problem(_ pattern: String) -> String? {
        var sample = pattern
        for name in Set(DescriptorValidator.variables(in: pattern)) {
            sample = sample.replacing("{\(name)}", with: "p.example")
        }
        let shown = DisplayText.sanitized(pattern, limit: 80)
        let example = "e.g. https://api.example.com or https://*.example.com"
        let wildcard = template(sample)?.authority.hasPrefix("*.") ?? false
        guard let template = template(sample), isHostValue(template.authority.dropFirst(wildcard ? 2 : 0)) else {
            return "'\(shown)' is not an origin (scheme, ASCII host and optional port, with no path); \(example)."
        }
        let host = hostPart(of: template.authority.dropFirst(wildcard ? 2 : 0))
        guard template.scheme == "https" || DescriptorValidator.isLoopback(host: String(host)) else {
            return "'\(shown)' is not https: a credential goes over plain http only to this machine; \(example)."
        }
        if wildcard, !host.contains(".") {
            return
                "'\(shown)' would match every host under a top-level domain; name the provider's own domain after '*.'."
        }
        let lowered = host.lowercased()
        if wildcard,
            sharedSuffixes.contains(lowered)
                || sharedAtAnyDepth.contains(where: { lowered == $0 || lowered.hasSuffix("." + $0) })
        {
            return
                "'\(shown)' would match every site under \(host), whose names anyone can register or get (a public suffix); name the provider's own domain after '*.'."
        }
        return nil
    }

    /// Public suffixes a wildcard must not stand before: second-level
    /// domains of country registries, and hosting platforms that give
    /// every customer a name under theirs (`*.github.io` is every GitHub
    /// Pages site, customers' code). A short list of those an API origin
    /// would plausibly name, not the Public Suffix List (thousands of
    /// entries, updated weekly): a single label (`*.com`) is refused above.
    static let sharedSuffixes: Set<String> = [
        // Country registries' second levels.
        "co.uk", "org.uk", "ac.uk", "gov.uk", "me.uk", "com.au", "net.au", "org.au", "co.jp", "ne.jp", "or.jp",
        "ac.jp", "go.jp", "co.nz", "com.br", "com.cn", "com.tw", "co.kr", "co.in", "co.za", "com.mx", "com.sg",
        "com.hk", "com.tr", "co.il", "com.ar",
        // Platforms naming their customers' sites and apps.
        // (Those whose every level is customers' are in `sharedAtAnyDepth`.)
        "github.io", "gitlab.io", "herokuapp.com", "vercel.app", "netlify.app", "pages.dev", "workers.dev",
        "azurewebsites.net", "cloudapp.net", "azurestaticapps.net", "blogspot.com", "firebaseapp.com", "web.app",
        "glitch.me", "onrender.com", "fly.dev", "ngrok.io", "ngrok-free.app", "ngrok.app", "repl.co", "replit.app",
        "deno.dev", "railway.app", "readthedocs.io", "pythonanywhere.com", "trycloudflare.com", "azure-api.net",
        "azureedge.net", "azurefd.net", "ondigitalocean.app", "digitaloceanspaces.com", "supabase.co",
    ]

    /// Platforms whose every level names customers' hosts: AWS's
    /// `*.execute-api.us-east-1.amazonaws.com`, `*.s3.eu-west-1.amazonaws.com`
    /// (a region's API Gateway or buckets, anyone's) passed the list above,
    /// which held `amazonaws.com` itself only.
    static let sharedAtAnyDepth: [String] = [
        "amazonaws.com", "cloudfront.net", "elasticbeanstalk.com", "run.app", "cloudfunctions.net", "appspot.com",
    ]

    // MARK: - Matching

    /// `scheme` and `host[:port]` of a pattern, lowercased, without a final
    /// dot on the host (it names the same host) or the scheme's default
    /// port; nil for anything with a path, query, fragment or user name.
    private static func template(_ text: String) -> (scheme: String, authority: String)? {
        let lowered = text.lowercased()
        let scheme: String
        if lowered.hasPrefix("https://") {
            scheme = "https"
        } else if lowered.hasPrefix("http://") {
            scheme = "http"
        } else {
            return nil
        }
        var authority = String(lowered.dropFirst(scheme.count + 3))
        guard !authority.isEmpty, !authority.contains(where: { "/?#@\\ ".contains($0) }) else { return nil }
        authority = normalized(authority, scheme: scheme)
        return (scheme, authority)
    }

    /// `scheme://host[:port]` as ``template(_:)`` reads it, for comparing origins.
    package static func normalizedOrigin(_ origin: String) -> String? {
        template(origin).map { "\($0.scheme)://\($0.authority)" }
    }

    /// `authority` without its port.
    private static func hostPart(of authority: Substring) -> Substring {
        guard let colon = authority.lastIndex(of: ":"), !authority[colon...].contains("]") else { return authority }
        return authority[..<colon]
    }

    /// `url`'s origin as ``template(_:)`` writes a pattern's.
    private static func authority(of url: URL) -> (scheme: String, authority: String)? {
        template(url.origin)
    }

    private static func normalized(_ authority: String, scheme: String) -> String {
        var host = hostPart(of: authority[...])
        var port = String(authority[host.endIndex...])
        if port == (scheme == "https" ? ":443" : ":80") { port = "" }
        if host.hasSuffix(".") { host = host.dropLast() }
        return host + port
    }

    /// Whether `text` is `template`, where `*` (before the first `.`) and
    /// each `{name}` stand for one or more characters of host labels, and a
    /// `{name}` that ends the template also for an IPv6 literal or a port.
    ///
    /// Each (template position, text position) is decided once: tried
    /// afresh, a pattern of ten placeholders in a row took every split of
    /// the host again and again (28 characters: 77 s, a host from a git
    /// remote or a URL a user was handed).
    private static func glob(_ template: Substring, _ text: Substring) -> Bool {
        let pattern = Array(template)
        let host = Array(text)
        var decided = [Int: Bool]()
        func matches(_ p: Int, _ h: Int) -> Bool {
            let key = p * (host.count + 1) + h
            if let known = decided[key] { return known }
            let result: Bool
            if p == pattern.count {
                result = h == host.count
            } else if pattern[p] == "*" || pattern[p] == "{" {
                let rest =
                    pattern[p] == "*" ? p + 1 : (pattern[p...].firstIndex(of: "}").map { $0 + 1 } ?? p + 1)
                if pattern[p] == "{", rest == pattern.count {
                    // Last: the rest of the host, as a host value (labels, an IPv6 literal, a port).
                    result = h < host.count && isHostValue(Substring(String(host[h...])))
                } else {
                    var found = false
                    var taken = h
                    // Label characters only: the first other one ends every longer try too.
                    while !found, taken < host.count, isLabelCharacter(host[taken]) {
                        taken += 1
                        found = matches(rest, taken)
                    }
                    result = found
                }
            } else {
                result = h < host.count && host[h] == pattern[p] && matches(p + 1, h + 1)
            }
            decided[key] = result
            return result
        }
        return matches(0, 0)
    }

    /// A host name's labels are never empty (RFC 1034 §3.1): `a..b`, `.a` and
    /// `a.` (after the final dot ``normalized(_:scheme:)`` drops) are no host
    /// names, and `*` would have matched `a.` in `a..googleapis.com`. An
    /// IPv6 literal has no labels.
    private static func hasNoEmptyLabel(_ host: Substring) -> Bool {
        host.hasPrefix("[") || (!host.isEmpty && !host.hasPrefix(".") && !host.hasSuffix(".") && !host.contains(".."))
    }

    /// Letters, digits, `-`, `_` and `.`, ASCII: what host names are written with.
    private static func isLabelCharacter(_ character: Character) -> Bool {
        character.isASCII && DescriptorValidator.isHostNameCharacter(character)
    }

    /// A host (labels, or an IPv6 literal in brackets) with an optional port.
    private static func isHostValue(_ text: Substring) -> Bool {
        let host = hostPart(of: text)
        if host.endIndex < text.endIndex {
            guard let port = Int(text[text.index(after: host.endIndex)...]), (1...65535).contains(port) else {
                return false
            }
        }
        if host.hasPrefix("[") {
            return host.hasSuffix("]") && host.count > 2
                && host.dropFirst().dropLast().allSatisfy { $0.isHexDigit || $0 == ":" || $0 == "." }
        }
        return !host.isEmpty && host.allSatisfy(isLabelCharacter) && !host.hasPrefix(".") && !host.contains("..")
    }
}
