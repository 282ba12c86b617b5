/// Checks a value given for one of a descriptor's placeholders (`{host}` of a
/// self-managed GitLab, `{team}` of Qiita Team, `{tenant}` of Microsoft)
/// before anything is sent: where the placeholder stands in an endpoint's
/// host, the value must make a host name that requests can go to.
///
/// Without the check, a value such as `me@gitlab.example.com` or
/// `gitlab.example.com:99999` was percent-encoded into a host nobody has
/// (`me%40gitlab.example.com`), the browser opened on it, and the sign-in
/// failed at a DNS lookup or in libcurl with no word about the setting; an
/// IPv6 address was blamed on the descriptor's URL. ``TemplateVariables``
/// keeps `:`, `/`, `[` and `]` of these values (a port, an instance under a
/// path, an IPv6 address), so a `/` in a value put in front of more host
/// text (`{team}.qiita.com`) would end the host early and send to another one.
package enum PlaceholderValue {
    /// Why `value` cannot fill `{name}` in `urls` (a descriptor's endpoint
    /// URL templates), or `nil`. Values are shown: they name servers, not
    /// secrets.
    package static func problem(name: String, value: String, urls: [String]) -> String? {
        let shown = "'\(DisplayText.sanitized(value, limit: 80))'"
        if value.unicodeScalars.contains(where: {
            $0.properties.generalCategory == .control || $0 == "\u{2028}" || $0 == "\u{2029}"
        }) {
            return "\(shown) holds a line break or another control character; give the value alone."
        }
        if let first = value.first, let last = value.last, first.isWhitespace || last.isWhitespace {
            return "\(shown) begins or ends with a space; give the value alone."
        }
        // ``TemplateVariables`` keeps `/` and `.` wherever a value stands, and
        // the transports resolve dot segments (RFC 3986 §5.2.4) before
        // sending: `tenant=x/../../other` sent the code and the client secret
        // to another path of the provider's origin, an instance under a path
        // (`host=apps.example.com/gitlab/../wiki`) to another application.
        if urls.contains(where: { $0.contains("{\(name)}") }),
            value.split(separator: "/", omittingEmptySubsequences: false).contains(where: { $0 == "." || $0 == ".." })
        {
            return "\(shown) holds a '.' or '..' segment, which would point the URL elsewhere; give the value itself."
        }
        for url in urls {
            guard let authority = hostTemplate(in: url), authority.contains("{\(name)}") else { continue }
            if let problem = hostProblem(value: value, name: name, authority: authority, url: url) {
                return "\(shown) \(problem)"
            }
        }
        return nil
    }

    /// The authority part of `url` as written (`{team}.qiita.com`), if any.
    static func hostTemplate(in url: String) -> Substring? {
        guard let start = url.firstRange(of: "://")?.upperBound else { return nil }
        return url[start...].prefix { $0 != "/" && $0 != "?" && $0 != "#" }
    }

    private static let notASCII =
        "is not ASCII; give its IDNA form ('xn--…', as `idn2` prints it), which is what requests go to."

    private static func hostProblem(value: String, name: String, authority: Substring, url: String) -> String? {
        let placeholder = "{\(name)}"
        // The whole host (`https://{host}/…`): a name or address, optionally a
        // port, and a path for an instance under one (`gitlab.example.com/gitlab`).
        guard authority.hasSuffix(placeholder) else {
            // Part of a name (`{team}.qiita.com`): a label, nothing else.
            if !value.unicodeScalars.allSatisfy(\.isASCII) { return notASCII }
            if let odd = value.first(where: { !DescriptorValidator.isHostNameCharacter($0) }) {
                return odd == "/" || odd == ":"
                    ? "holds '\(odd)', which would end the name early in \(url); give the name alone."
                    : "holds '\(DisplayText.sanitized(String(odd)))', which no host name has; it goes in \(url)."
            }
            return nil
        }
        if value.contains("://") {
            return "holds a scheme; give the host alone (without 'https://'), optionally with ':port' and a path."
        }
        if let slash = value.firstIndex(of: "/") {
            if value[slash...].contains(where: { "?#".contains($0) }) {
                return "holds '?' or '#' after its path; give a host, optionally with ':port' and a path."
            }
            // `gitlab.example.com/` made `https://gitlab.example.com//oauth/…`,
            // which many servers answer 404.
            if value.hasSuffix("/") {
                return "ends with '/', which would make '//' in \(url); give it without the trailing '/'."
            }
        }
        var host = String(authority).replacing(placeholder, with: value.prefix { $0 != "/" })
        for other in DescriptorValidator.variables(in: String(host)) { host = host.replacing("{\(other)}", with: "x") }
        var port: Substring?
        if host.hasPrefix("[") {
            // An IPv6 literal (RFC 3986 §3.2.2): its colons are not the port's.
            guard let close = host.firstIndex(of: "]"),
                host[host.index(after: host.startIndex)..<close].allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." }
                ),
                host[host.index(after: host.startIndex)..<close].contains(":"),
                // `[:]` has a colon and nothing else: no address.
                host[host.index(after: host.startIndex)..<close].contains(where: \.isHexDigit)
            else {
                return "is not an IPv6 address in brackets, such as [2001:db8::1]."
            }
            let rest = host[host.index(after: close)...]
            guard rest.isEmpty || rest.hasPrefix(":") else {
                return "has text after the IPv6 address; give ':port' there, or nothing."
            }
            port = rest.isEmpty ? nil : rest.dropFirst()
        } else {
            if let colon = host.firstIndex(of: ":") {
                port = host[host.index(after: colon)...]
                host = String(host[..<colon])
            }
            if !host.unicodeScalars.allSatisfy(\.isASCII) { return notASCII }
            if let odd = host.first(where: { !DescriptorValidator.isHostNameCharacter($0) }) {
                return
                    "holds '\(odd)', which no host name has; give the server's name or address, and ':port' if it needs one (it goes in \(url))."
            }
            if host.isEmpty || host.hasPrefix(".") || host.contains("..") {
                return "does not make a host name in \(url)."
            }
        }
        // Digits only: UInt16 reads "+443", which then went encoded into the URL.
        if let port,
            !port.allSatisfy({ $0.isASCII && $0.isNumber }) || !(UInt16(port).map { $0 > 0 } ?? false)
        {
            return "names port \(DisplayText.sanitized(String(port), limit: 20)), which is not a TCP port (1–65535)."
        }
        return nil
    }
}
