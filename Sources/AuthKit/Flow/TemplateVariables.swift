/// Values substituted for `{name}` in descriptor URLs, parameters and headers.
///
/// Only descriptor text is rendered, in one pass: a value put in (a token, a
/// code) is never scanned for braces again, so a token that happens to contain
/// `{client_secret}` is sent as those bytes. In a URL each value is
/// percent-encoded, so a token in a path segment (Qiita's
/// `DELETE /access_tokens/{access_token}`) cannot change the URL's shape; in
/// parameters and headers the value is inserted as is and encoded with the
/// rest of the body.
///
/// The descriptor's own placeholders (`{host}` of a self-managed GitLab) are
/// the user's settings, not values from the network, and name where a server
/// is: in a URL they keep `:`, `/`, `[` and `]`, so that
/// `gitlab.example.com:8443`, `[2001:db8::1]` or an instance under a path
/// (`gitlab.example.com/gitlab`) works. Every other delimiter (`@ ? # &` …)
/// is still encoded, so no value adds user info, a query or a fragment;
/// ``PlaceholderValue`` refuses a value that would not make a host.
struct TemplateVariables: Sendable {
    var values: [String: String]
    var providerID: String
    /// The credential the values came from, for a "sign in again" error.
    var credentialKey: CredentialKey?
    /// The names of the descriptor's declared placeholders among `values`.
    var settings: Set<String>

    init(values: [String: String], providerID: String, credentialKey: CredentialKey? = nil, settings: Set<String> = [])
    {
        self.values = values
        self.providerID = providerID
        self.credentialKey = credentialKey
        self.settings = settings
    }

    /// Replaces every `{name}`; throws for the first one with no value.
    func render(_ template: String, inURL: Bool, field: String) throws -> String {
        var output = ""
        var rest = Substring(template)
        while let open = rest.firstIndex(of: "{"), let close = rest[open...].firstIndex(of: "}") {
            output += rest[..<open]
            let name = String(rest[rest.index(after: open)..<close])
            guard let value = values[name] else { throw missing(name, field: field) }
            if !inURL {
                output += value
            } else if settings.contains(name) {
                output += PercentEncoding.encode(value).replacing("%3A", with: ":").replacing("%2F", with: "/")
                    .replacing("%5B", with: "[").replacing("%5D", with: "]")
            } else if value == "." || value == ".." {
                // Unreserved, so left as they are by the encoding, a token
                // of exactly `.` or `..` in a path segment (Qiita's
                // `/access_tokens/{access_token}`) was a dot-segment the
                // server resolves (RFC 3986 §5.2.4; libcurl sends the path
                // as written): another resource than the one named.
                output += String(repeating: "%2E", count: value.count)
            } else {
                output += PercentEncoding.encode(value)
            }
            rest = rest[rest.index(after: close)...]
        }
        output += rest
        return output
    }

    /// `template` as messages and logs show it: the descriptor's
    /// placeholders (the user's settings, which name a server) filled in,
    /// every run-time variable (a token, a code, the client's id) left as
    /// `{name}`, and no query. A rendered URL is never shown: a descriptor
    /// may put a token in a path (Qiita revokes at `/access_tokens/{access_token}`).
    func display(_ template: String) -> String {
        var output = ""
        var rest = Substring(template.prefix { $0 != "?" && $0 != "#" })
        while let open = rest.firstIndex(of: "{"), let close = rest[open...].firstIndex(of: "}") {
            output += rest[..<open]
            let name = String(rest[rest.index(after: open)..<close])
            if settings.contains(name), let shown = try? render("{\(name)}", inURL: true, field: "url") {
                output += shown
            } else {
                output += rest[open...close]
            }
            rest = rest[rest.index(after: close)...]
        }
        output += rest
        return output + (template.contains("?") ? "?…" : "")
    }

    /// `{client_id}`, `{access_token}` and `{redirect_uri}` always have values;
    /// the others name what the caller lacks.
    private func missing(_ name: String, field: String) -> AuthKitError {
        switch name {
        case "client_secret":
            return .missingSetting(providerID: providerID, .clientSecret)
        case "refresh_token":
            return .signInRequired(credentialKey ?? CredentialKey(providerID: providerID), reason: .noRefreshToken)
        default:
            return .missingSetting(providerID: providerID, .placeholder(name: name, usedIn: field))
        }
    }
}
