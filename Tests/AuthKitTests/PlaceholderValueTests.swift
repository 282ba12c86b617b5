import Foundation
import Testing

@testable import AuthKit

/// ``PlaceholderValue``: a value must make a host where its placeholder
/// stands in one, and hold no control character anywhere.
@Suite struct PlaceholderValueTests {
    static let wholeHost = ["https://{host}/oauth/authorize", "https://{host}/oauth/token"]
    static let label = ["https://{team}.qiita.com/api/v2/oauth/team_authorize"]
    static let path = ["https://login.microsoftonline.com/{tenant}/oauth2/v2.0/token"]

    @Test(arguments: [
        "gitlab.example.com", "gitlab.example.com:8443", "gitlab.example.com/gitlab", "GitLab.Example.COM.",
        "10.0.0.7:8080", "[2001:db8::1]", "[::1]:8443", "internal_host", "xn--bcher-kva.example",
    ])
    func hostsThatWorkPass(_ value: String) {
        #expect(PlaceholderValue.problem(name: "host", value: value, urls: Self.wholeHost) == nil)
    }

    @Test(arguments: [
        ("me@gitlab.example.com", "holds '@'"), ("gitlab.example.com#x", "holds '#'"), ("a b", "holds ' '"),
        ("gitlab.example.com:99999", "port 99999"), ("gitlab.example.com:0", "port 0"),
        ("gitlab.example.com:x", "port x"), ("gitlab.example.com:+443", "port +443"), ("[:]", "not an IPv6 address"),
        ("bücher.example", "is not ASCII"), ("gitlab.example.com/x?y", "'?' or '#' after its path"),
        ("", "does not make a host name"),
        (".example.com", "does not make a host name"), ("a..b", "does not make a host name"),
        ("[zz]", "not an IPv6 address"),
        ("[::1]x", "text after the IPv6 address"), ("gitlab.example.com%2eevil", "holds '%'"),
        (" gitlab.example.com", "begins or ends with a space"),
        ("gitlab.example.com\r\nX: y", "control character"),
        // A natural paste: made https://gitlab.example.com//oauth/authorize, a 404 on many servers.
        ("gitlab.example.com/", "ends with '/', which would make '//'"),
        ("gitlab.example.com/gitlab/", "ends with '/'"),
        ("https://gitlab.example.com", "holds a scheme; give the host alone"),
    ])
    func hostsThatDoNotAreRefused(_ value: String, _ problem: String) {
        let found = PlaceholderValue.problem(name: "host", value: value, urls: Self.wholeHost)
        #expect(found?.contains(problem) == true, "\(value): \(found ?? "nil")")
    }

    /// Part of a name: a label only, since a `/` or `:` would end the name
    /// early and send to another host (`evil.example/.qiita.com`).
    @Test func aLabelIsALabel() {
        #expect(PlaceholderValue.problem(name: "team", value: "acme-2", urls: Self.label) == nil)
        for (value, problem) in [
            ("evil.example/", "holds '/', which would end the name early"), ("a:1", "holds ':'"),
            ("a@b", "holds '@'"), ("ü", "is not ASCII"),
        ] {
            let found = PlaceholderValue.problem(name: "team", value: value, urls: Self.label)
            #expect(found?.contains(problem) == true, "\(value): \(found ?? "nil")")
        }
    }

    /// Outside the host, the value is percent-encoded (it cannot change the
    /// URL's shape), so only control characters and edge spaces are refused.
    @Test func aPathValueIsOnlyCheckedForStrayCharacters() {
        #expect(PlaceholderValue.problem(name: "tenant", value: "contoso.onmicrosoft.com", urls: Self.path) == nil)
        #expect(PlaceholderValue.problem(name: "tenant", value: "a b?c", urls: Self.path) == nil)
        #expect(
            PlaceholderValue.problem(name: "tenant", value: "a\tb", urls: Self.path)?.contains("control character")
                == true)
        #expect(PlaceholderValue.problem(name: "user_agent", value: "cli:authkit:1.0 (by /u/me)", urls: []) == nil)
    }

    /// `/` and `.` are kept in a URL, and the transports resolve dot
    /// segments: `x/../../other` sent the code and the client secret to
    /// another path of the provider's origin. Refused wherever the value
    /// stands in a URL; a dot inside a segment is a name's.
    @Test func aDotSegmentIsRefusedInAnyURL() {
        for (name, value, urls) in [
            ("tenant", "x/../../evil-path", Self.path), ("tenant", "..", Self.path), ("tenant", "./x", Self.path),
            ("host", "apps.example.com/gitlab/../wiki", Self.wholeHost),
        ] {
            let found = PlaceholderValue.problem(name: name, value: value, urls: urls)
            #expect(found?.contains("'.' or '..' segment") == true, "\(value): \(found ?? "nil")")
        }
        #expect(PlaceholderValue.problem(name: "tenant", value: "a..b", urls: Self.path) == nil)
        #expect(
            PlaceholderValue.problem(name: "host", value: "gitlab.example.com/.well-known-app", urls: Self.wholeHost)
                == nil)
        #expect(PlaceholderValue.problem(name: "agent", value: "../x", urls: []) == nil, "not in a URL")
    }

    /// Every bundled default passes, and an IPv6 address reaches the URL in
    /// brackets (they used to be percent-encoded, and the URL refused).
    @Test func bundledDefaultsPassAndIPv6Renders() throws {
        let catalog = ProviderCatalog(includeBundled: true, directories: [])
        for descriptor in catalog.entries.values.map(\.descriptor) {
            for (name, placeholder) in descriptor.placeholders {
                guard let value = placeholder.default else { continue }
                #expect(descriptor.problem(placeholder: name, value: value) == nil, "\(descriptor.id).\(name)")
            }
        }
        let variables = TemplateVariables(values: ["host": "[2001:db8::1]:8443"], providerID: "x", settings: ["host"])
        let url = try variables.render("https://{host}/oauth/token", inURL: true, field: "token.url")
        #expect(url == "https://[2001:db8::1]:8443/oauth/token" && URL(string: url)?.host == "2001:db8::1")
    }

    /// A run-time value of exactly `.` or `..` in a path segment is escaped:
    /// left as it was (unreserved), it was a dot-segment, and the server
    /// resolved `/access_tokens/..` to another resource. Dots within a
    /// value are left as they are.
    @Test func aTokenOfDotsIsNoPathStep() throws {
        for (token, segment) in [("..", "%2E%2E"), (".", "%2E"), ("a.b", "a.b"), ("...", "...")] {
            let variables = TemplateVariables(values: ["access_token": token], providerID: "x", settings: [])
            let url = try variables.render(
                "https://qiita.example/api/v2/access_tokens/{access_token}", inURL: true, field: "revocation.url")
            #expect(url == "https://qiita.example/api/v2/access_tokens/\(segment)", "\(token)")
        }
    }
}

/// ``ScopeToken``: RFC 6749 §3.3 scope tokens, and the schema's pattern for
/// a descriptor's scopes says the same (editors and the Python check use it).
@Suite struct ScopeTokenTests {
    @Test func classifiesAsTheRFCDoes() throws {
        let cases: [(String, ScopeToken.Problem?)] = [
            ("read:user", nil), ("https://www.googleapis.com/auth/drive.readonly", nil),
            ("a!#$%&'()*+,-./[]^_`{|}~", nil),
            ("", .empty), ("  ", .empty), ("repo user", .several(["repo", "user"])), (" repo", .spacesAround("repo")),
            ("a\nb", .character), ("a\"b", .character), ("a\\b", .character), ("café", .character),
            ("a\u{7F}", .character),
        ]
        let schema = try JSONSerialization.jsonObject(with: Data(BundledDescriptors.schema.utf8)) as? [String: Any]
        let scopes = (schema?["properties"] as? [String: Any])?["scopes"] as? [String: Any]
        let items =
            ((scopes?["properties"] as? [String: Any])?["default"] as? [String: Any])?["items"] as? [String: Any]
        let pattern = try Regex(try #require(items?["pattern"] as? String))
        for (text, expected) in cases {
            #expect(ScopeToken.problem(text) == expected, "\(text)")
            #expect((text.wholeMatch(of: pattern) != nil) == (expected == nil), "schema pattern on '\(text)'")
        }
    }
}
