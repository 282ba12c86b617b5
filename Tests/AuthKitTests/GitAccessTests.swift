import Foundation
import Testing

@testable import AuthKit

/// A descriptor's `git` section (``GitAccess``): where the helper gives git
/// a token, and under which user name.
@Suite struct GitAccessTests {
    static func descriptor(_ more: String, protocol kind: String = "oauth2") throws -> ProviderDescriptor {
        let endpoints =
            kind == "oauth2"
            ? #""authorization": {"url": "https://p.example/a"}, "token": {"url": "https://{host}/t"}"#
            : #""oauth1": {"requestTokenURL": "https://p.example/r", "authorizeURL": "https://p.example/a", "accessTokenURL": "https://p.example/t"}"#
        return try ProviderDescriptor(
            json: Data(
                """
                {"id": "p", "protocol": "\(kind)", "placeholders": {"host": {}}, \(endpoints), \(more)}
                """.utf8))
    }

    @Test func theSectionIsReadCheckedAndWrittenBack() throws {
        let read = try Self.descriptor(
            #""git": {"origins": ["https://git.p.example", "https://{host}"], "username": "oauth2", "scopes": ["repo"]}"#
        )
        let git = try #require(read.git)
        #expect(git.origins.patterns == ["https://git.p.example", "https://{host}"])
        #expect(git.username == "oauth2" && git.scopes == ["repo"])
        let written = String(decoding: try read.encodedAsFile(), as: UTF8.self)
        #expect(
            written.contains("\"username\" : \"oauth2\"") || written.contains("\"username\":\"oauth2\""), "\(written)")
        #expect(try ProviderDescriptor(json: try read.encodedAsFile()).git == git)

        for (section, field, problem, kind) in [
            (#""git": {"origins": [], "username": "u"}"#, "git.origins", "lists no origin", "oauth2"),
            (
                #""git": {"origins": ["http://git.p.example"], "username": "u"}"#, "git.origins[0]", "is not https",
                "oauth2"
            ),
            (
                #""git": {"origins": ["https://git.p.example/x"], "username": "u"}"#, "git.origins[0]",
                "is not an origin", "oauth2"
            ),
            (
                #""git": {"origins": ["https://{host}.git.example"], "username": "u"}"#, "git.origins[0]",
                "must be the token endpoint's origin", "oauth2"
            ),
            // A line break would add attributes to git's credential protocol.
            (
                #""git": {"origins": ["https://git.p.example"], "username": "u\npassword=x"}"#, "git.username",
                "is not a user name", "oauth2"
            ),
            (
                #""git": {"origins": ["https://git.p.example"], "username": "two words"}"#, "git.username",
                "is not a user name", "oauth2"
            ),
            (
                #""git": {"origins": ["https://git.p.example"], "username": "u", "scopes": ["a b"]}"#, "git.scopes[0]",
                "is not one scope", "oauth2"
            ),
            (
                #""git": {"origins": ["https://git.p.example"], "username": "u"}"#, "git", "is for OAuth 2.0 tokens",
                "oauth1"
            ),
        ] {
            #expect(throws: (any Error).self, "\(section)") { try Self.descriptor(section, protocol: kind) }
            do {
                _ = try Self.descriptor(section, protocol: kind)
            } catch let error as AuthKitError {
                guard case .invalidFile(let issues) = error.reason else { throw error }
                #expect(issues.contains { $0.field == field && $0.problem.contains(problem) }, "\(section): \(issues)")
            }
        }
    }

    /// What git names (`protocol`, `host`) is an http(s) origin or nothing.
    @Test func gitsProtocolAndHostMakeAnOriginOrNothing() {
        #expect(GitAccess.origin(protocol: "https", host: "github.com")?.origin == "https://github.com")
        #expect(GitAccess.origin(protocol: "https", host: "GitHub.com:443")?.origin == "https://github.com")
        #expect(GitAccess.origin(protocol: "http", host: "127.0.0.1:8080")?.origin == "http://127.0.0.1:8080")
        #expect(GitAccess.origin(protocol: "http", host: "[::1]:8080")?.origin == "http://[::1]:8080")
        for (scheme, host) in [
            ("ftp", "github.com"), ("https", ""), ("https", "a@github.com"), ("https", "github.com/x"),
            ("https", "github.com\nhost=evil"), ("https", "gith%75b.com"), ("https", "a b"), ("HTTPS", "github.com"),
            // Brackets around a name: Foundation read `[github.com]` as github.com.
            ("https", "[github.com]"), ("https", "[github.com]:443"), ("https", "[::1"), ("https", "[::1]x"),
        ] {
            #expect(GitAccess.origin(protocol: scheme, host: host) == nil, "\(scheme) \(host)")
        }
    }

    /// An origin with a placeholder lets a token through only where that
    /// credential was issued: a `--placeholder host=evil.example` (or an
    /// environment) cannot send a self-managed GitLab's token elsewhere.
    @Test func anOriginWithAPlaceholderAllowsOnlyWhereTheCredentialWasIssued() throws {
        let git = try #require(
            try Self.descriptor(#""git": {"origins": ["https://{host}"], "username": "oauth2"}"#).git)
        var credential = Credential(providerID: "p", accessToken: "t")
        let origin = try #require(GitAccess.origin(protocol: "https", host: "git.corp.example"))
        #expect(!git.allows(origin, for: credential, placeholders: ["host": "git.corp.example"]))
        credential.endpointOrigins = ["https://git.corp.example"]
        #expect(git.allows(origin, for: credential, placeholders: ["host": "evil.example"]))
        let elsewhere = try #require(GitAccess.origin(protocol: "https", host: "evil.example"))
        #expect(!git.allows(elsewhere, for: credential, placeholders: ["host": "evil.example"]))
        // An empty list is no list: nothing, where `api.origins` would allow any.
        #expect(!GitAccess(origins: APIOrigins([]), username: "u").allows(origin, for: credential, placeholders: [:]))
    }

    @Test func scopesGrantedAreCheckedAgainstAnyOfGits() throws {
        let git = try #require(
            try Self.descriptor(
                #""git": {"origins": ["https://g.example"], "username": "u", "scopes": ["repo", "public_repo"]}"#
            ).git)
        #expect(git.isGranted(by: ["read:user", "public_repo"]))
        #expect(!git.isGranted(by: ["read:user"]))
        #expect(git.isGranted(by: []), "a provider that said nothing of its grant is not second-guessed")
    }

    /// The bundled git hosts, with the user names their documentation gives.
    @Test func theBundledGitHostsHaveTheirUserNames() throws {
        let catalog = ProviderCatalog(includeBundled: true, directories: [])
        for (id, origin, username) in [
            ("github", "https://github.com", "x-access-token"), ("gitlab", "https://gitlab.com", "oauth2"),
            ("bitbucket", "https://bitbucket.org", "x-token-auth"),
            ("gitlab-self-managed", "https://{host}", "oauth2"),
            ("github-enterprise", "https://{host}", "x-access-token"),
        ] {
            let git = try #require(try catalog.descriptor(id: id).git, "\(id)")
            #expect(git.origins.patterns.first == origin && git.username == username, "\(id)")
            #expect(!git.scopes.isEmpty, "\(id) names the scopes git needs")
        }
        #expect(try catalog.descriptor(id: "qiita").git == nil)
    }
}
