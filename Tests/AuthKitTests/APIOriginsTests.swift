import AuthKitTestSupport
import Foundation
import HTTPTypes
import Testing

@testable import AuthKit

/// `api.origins`: where a provider's API lives, so that a stored credential
/// is sent nowhere else. The matching is the security
/// boundary, so each way a host can look like another's is tried here.
@Suite struct APIOriginsTests {
    let github = APIOrigins(["https://api.github.com", "https://uploads.github.com"])
    let google = APIOrigins(["https://*.googleapis.com"])

    /// Allowed outright, or by the placeholder values given (the rule for a
    /// credential that recorded no endpoint origins).
    func allowed(_ origins: APIOrigins, _ url: String, _ placeholders: [String: String] = [:]) -> Bool {
        let match = origins.match(URL(string: url)!, placeholders: placeholders)
        return match.outright || match.byValuesInEffect
    }

    @Test func anOriginMatchesBySchemeHostAndPort() {
        #expect(allowed(github, "https://api.github.com/user"))
        #expect(allowed(github, "https://API.GitHub.com:443/user"), "the default port, any case")
        #expect(allowed(github, "https://api.github.com./user"), "the host's final dot names the same host")
        #expect(!allowed(github, "http://api.github.com/user"), "another scheme")
        #expect(!allowed(github, "https://api.github.com:8443/user"), "another port")
        #expect(!allowed(github, "https://api.github.com.evil.example/user"))
        #expect(!allowed(github, "https://evilapi.github.com/user"))
        #expect(!allowed(github, "https://github.com/user"))
        #expect(!allowed(github, "https://api.github.com@evil.example/user"), "the host is evil.example")
    }

    @Test func aWildcardMatchesSubdomainsOnly() {
        #expect(allowed(google, "https://people.googleapis.com/v1/people/me"))
        #expect(allowed(google, "https://a.b.googleapis.com/"))
        #expect(!allowed(google, "https://googleapis.com/"), "the bare domain is not a subdomain")
        #expect(!allowed(google, "https://evilgoogleapis.com/"))
        #expect(!allowed(google, "https://people.googleapis.com.evil.example/"))
    }

    /// A list allows a loopback address only where it names one (issue 44,
    /// item 7): a GitHub credential went to `https://127.0.0.2/`, to whatever
    /// local process listened there. No list still allows any origin.
    @Test func loopbackIsAllowedOnlyWhereListedAndNoListAllowsAll() {
        for url in [
            "http://127.0.0.1:8080/user", "https://127.0.0.2/", "http://[::1]:8080/user", "http://localhost/user",
        ] {
            #expect(!allowed(github, url), "\(url)")
        }
        let withMock = APIOrigins(["https://api.github.com", "http://127.0.0.1:8080"])
        #expect(allowed(withMock, "http://127.0.0.1:8080/user"))
        #expect(!allowed(withMock, "http://127.0.0.1:8081/user"), "another port is another local process")
        #expect(allowed(APIOrigins([]), "https://anywhere.example/"))
        #expect(allowed(APIOrigins([]), "http://127.0.0.2/"))
    }

    /// An empty label makes no host name: `*` took `a.` in `a..googleapis.com`.
    @Test func aHostWithAnEmptyLabelMatchesNothing() {
        for url in ["https://a..googleapis.com/x", "https://..googleapis.com/", "https://people.googleapis.com../"] {
            #expect(!allowed(google, url), "\(url)")
        }
        #expect(!allowed(APIOrigins(["https://{region}.api.example"]), "https://..api.example/", ["region": "eu"]))
        #expect(!allowed(github, "https://api..github.com/"))
    }

    @Test func placeholdersAreFilledAndAnUnsetOneMatchesNothing() {
        let gitlab = APIOrigins(["https://{host}"])
        #expect(allowed(gitlab, "https://git.example.com/api/v4/user", ["host": "git.example.com"]))
        // A host given with GitLab's relative URL root: the origin is before the path.
        #expect(allowed(gitlab, "https://git.example.com/gitlab/api/v4/user", ["host": "git.example.com/gitlab"]))
        #expect(!allowed(gitlab, "https://evil.example/", ["host": "git.example.com"]))
        #expect(!allowed(gitlab, "https://git.example.com/"), "{host} unset")
        #expect(gitlab.shown(placeholders: ["host": "git.example.com"]) == ["https://git.example.com"])
    }

    /// A value stands for host labels: one that would end the host early
    /// (`evil.example/`, `evil.example:443/`, `x@evil.example`) matches
    /// nothing, so it cannot drop the provider's domain from the origin.
    @Test func aValueCannotEndTheHostEarly() {
        let regional = APIOrigins(["https://{region}.api.acme.example"])
        #expect(allowed(regional, "https://eu.api.acme.example/", ["region": "eu"]))
        for value in [
            "evil.example/", "evil.example:443/", "evil.example#", "x@evil.example", "evil.example?", "*", "", "eu api",
        ] {
            #expect(!allowed(regional, "https://evil.example/", ["region": value]), "\(value)")
            #expect(!allowed(regional, "https://eu.api.acme.example/", ["region": value]), "\(value)")
        }
        // At the end, a port and a path may follow the host; nothing else.
        let host = APIOrigins(["https://{host}"])
        #expect(allowed(host, "https://git.example.com:8443/gitlab/api", ["host": "git.example.com:8443/gitlab"]))
        #expect(!allowed(host, "https://evil.example/", ["host": "git.example.com@evil.example"]))
        #expect(!allowed(host, "https://evil.example/", ["host": "evil.example#.git.example.com"]))
    }

    /// Both sides are read the same way: a final dot names the same host, a
    /// percent-encoded or non-ASCII host is no host a pattern names.
    @Test func hostsAreComparedAsTheyAreNamed() {
        #expect(allowed(APIOrigins(["https://api.acme.example."]), "https://api.acme.example/"))
        #expect(allowed(APIOrigins(["https://{host}"]), "https://git.example.com/", ["host": "git.example.com."]))
        #expect(!allowed(APIOrigins(["https://qiita.com"]), "https://q%69ita.com/"))
        for pattern in [
            "https://ápi.acme.example", "https://api%2eacme.example", "https://[::1", "https://a..b.example",
        ] {
            #expect(APIOrigins.problem(pattern) != nil, "\(pattern)")
        }
        #expect(APIOrigins.problem("https://*.{host}") == nil)
        #expect(APIOrigins.problem("https://*.*.example.com") != nil && APIOrigins.problem("https://[::1]:8080") == nil)
        #expect(
            allowed(APIOrigins(["https://{host}"]), "https://git_lab.corp/", ["host": "git_lab.corp"]),
            "an underscore, as the sign-in accepts")
        #expect(allowed(APIOrigins(["https://{host}"]), "https://[2001:db8::1]:8443/", ["host": "[2001:db8::1]:8443"]))
    }

    /// An origin with a placeholder lets a credential through where it was
    /// issued (its recorded endpoint origins), whatever values are in effect
    /// now; one without a placeholder, outright. A credential from before
    /// endpoint origins were recorded goes to none with a placeholder.
    @Test func anOriginWithAPlaceholderFollowsWhereTheCredentialWasIssued() {
        let salesforce = APIOrigins(["https://{host}", "https://*.my.salesforce.com"])
        let issued = Credential(
            providerID: "salesforce", accessToken: "t",
            endpointOrigins: ["https://acme.my.salesforce.com", "https://test.salesforce.com"])
        let legacy = Credential(providerID: "salesforce", accessToken: "t")
        func allows(
            _ url: String, _ credential: Credential?, _ values: [String: String] = ["host": "login.salesforce.com"]
        ) -> Bool {
            salesforce.match(URL(string: url)!, placeholders: values).allows(URL(string: url)!.origin, for: credential)
        }
        #expect(
            allows("https://other.my.salesforce.com/services/data", issued), "the fixed pattern, whatever the values")
        #expect(
            allows("https://test.salesforce.com/services/data", issued),
            "where it was issued, though {host} is login.salesforce.com now")
        #expect(allows("https://TEST.salesforce.com./x", issued), "compared as origins")
        #expect(!allows("https://evil.example/", issued, ["host": "evil.example"]), "a value given now moves nothing")
        #expect(allows("https://evil.example/", nil), "not refused before the credential is read…")
        #expect(
            !salesforce.match(URL(string: "https://evil.example/")!, placeholders: [:]).outright,
            "…nor allowed outright")
        #expect(
            !allows("https://login.salesforce.com/x", legacy),
            "nothing recorded: no origin with a placeholder, whatever the values")
        #expect(allows("https://acme.my.salesforce.com/x", legacy), "one without a placeholder still")
        #expect(
            salesforce.shown(for: issued, placeholders: [:]) == [
                "https://*.my.salesforce.com", "https://acme.my.salesforce.com", "https://test.salesforce.com",
            ])
        #expect(salesforce.shown(for: legacy, placeholders: [:]) == ["https://*.my.salesforce.com"])
    }

    @Test(arguments: [
        ("https://api.example.com/v1", "is not an origin"),
        ("https://api.example.com?x=1", "is not an origin"),
        ("https://user@api.example.com", "is not an origin"),
        ("api.example.com", "is not an origin"),
        ("https://api.example.com:0", "is not an origin"),
        ("https://*.*.example.com", "is not an origin"),
        ("http://api.example.com", "is not https"),
        ("https://*.com", "every host under a top-level domain"),
        ("https://*.co.uk", "a public suffix"),
        ("https://*.GitHub.io", "a public suffix"),
        ("https://*.herokuapp.com.", "a public suffix"),
        // Every level of some platforms is customers': a region's API Gateway, buckets, Cloud Run services.
        ("https://*.execute-api.us-east-1.amazonaws.com", "a public suffix"),
        ("https://*.S3.eu-west-1.amazonaws.com", "a public suffix"),
        ("https://*.run.app", "a public suffix"),
        ("https://*.a.run.app", "a public suffix"),
        ("https://*.cloudfunctions.net", "a public suffix"),
    ])
    func aPatternThatIsNoOriginIsRefused(pattern: String, problem: String) {
        #expect(
            APIOrigins.problem(pattern)?.contains(problem) == true,
            "\(pattern): \(APIOrigins.problem(pattern) ?? "accepted")")
    }

    @Test func goodPatternsPass() {
        for pattern in [
            "https://api.example.com", "https://*.example.com", "https://api.example.com:8443", "http://127.0.0.1:8080",
            "https://{host}", "https://*.hatena.ne.jp", "https://*.example.co.uk", "https://*.googleapis.com",
        ] {
            #expect(APIOrigins.problem(pattern) == nil, "\(pattern): \(APIOrigins.problem(pattern) ?? "")")
        }
    }

    /// A descriptor file's list is checked by field, and kept when the
    /// descriptor is written back out (`providers show --json`).
    @Test func theFieldIsValidatedAndWrittenBack() throws {
        func descriptor(_ api: String) throws -> ProviderDescriptor {
            try ProviderDescriptor(
                json: Data(
                    """
                    {"id": "p", "protocol": "oauth2", "authorization": {"url": "https://p.example/a"}, "token": {"url": "https://p.example/t"}, \(api)}
                    """.utf8))
        }
        let written = try descriptor(#""api": {"origins": ["https://api.p.example"]}"#)
        #expect(written.apiOrigins.patterns == ["https://api.p.example"])
        #expect(String(decoding: try written.encodedAsFile(), as: UTF8.self).contains("https://api.p.example"))
        for (api, field, problem) in [
            (#""api": {"origins": ["https://api.p.example/v1"]}"#, "api.origins[0]", "is not an origin"),
            (
                #""api": {"origins": ["https://a.p.example", "https://{tenant}.p.example"]}"#, "api.origins[1]",
                "'{tenant}' is not a declared placeholder"
            ),
            (#""api": {"origins": []}"#, "api.origins", "lists no origin"),
            (
                #""placeholders": {"region": {}}, "api": {"origins": ["https://{region}.api.p.example"]}"#,
                "api.origins[0]",
                "must be the token endpoint's origin as written (https://p.example)"
            ),
        ] {
            #expect {
                try descriptor(api)
            } throws: { error in
                guard case .invalidFile(let issues)? = error.authKitReason else { return false }
                return issues.contains { $0.field == field && $0.problem.contains(problem) }
            }
        }
        #expect(try descriptor(#""name": "P""#).apiOrigins.isRestricted == false)
    }

    /// Every bundled provider says where its API lives, so the command line's
    /// check covers each of them.
    @Test func everyBundledProviderListsItsAPI() throws {
        #expect(ProviderCatalog.bundledFiles.count >= 33)
        for file in ProviderCatalog.bundledFiles {
            let descriptor = try ProviderDescriptor(json: file.data, source: file.path)
            #expect(descriptor.apiOrigins.isRestricted, "\(file.path) has no api.origins")
        }
    }
}

/// The library keeps to the same origins: `CredentialSource.send` refuses a
/// URL outside the provider's API (an app following a link an answer gave)
/// before the credential is read, and the transport is never called.
@Suite struct CredentialSourceAPIOriginTests {
    @Test func aRequestOutsideTheAPIIsRefusedBeforeAnythingIsSent() async throws {
        let transport = ScriptedTransport { _ in .json(#"{"ok":true}"#) }
        let qiita = try ProviderCatalog(includeBundled: true, directories: []).descriptor(id: "qiita")
        let client = try OAuth2Client(
            descriptor: qiita, settings: ClientSettings(clientID: "app", clientSecret: "s"), httpClient: transport)
        let store = InMemoryCredentialStore()
        let credential = Credential(providerID: "qiita", accessToken: "api-secret")
        await store.save(credential)
        let source = CredentialSource(authenticator: client, store: store, key: credential.key, httpClient: transport)
        await #expect(
            throws: AuthKitError.outsideProviderAPI(
                url: "https://qiita.com.evil.example", providerID: "qiita", origins: ["https://qiita.com"])
        ) {
            _ = try await source.send(
                HTTPRequest(method: .get, url: URL(string: "https://qiita.com.evil.example/api/v2/items?page=2")!))
        }
        #expect(transport.count == 0)
        do {
            _ = try await source.send(HTTPRequest(method: .get, url: URL(string: "https://qiita.com.evil.example/x")!))
        } catch {
            #expect(
                "\(error)".contains(
                    "https://qiita.com.evil.example is not where qiita's API lives for this credential (https://qiita.com)"
                )
                    && !"\(error)".contains("api-secret"), "\(error)")
        }
        // Its own API gets the request, with the credential.
        let (response, _) = try await source.send(
            HTTPRequest(method: .get, url: URL(string: "https://qiita.com/api/v2/items")!))
        #expect(response.status == .ok && transport.count == 1)
    }

    /// An origin made of a placeholder follows the sign-in's value: settings
    /// that name another host now (`--placeholder host=evil.example`) do
    /// not carry the credential there, though the pattern would match.
    @Test func aPlaceholderOriginMustBeTheSignInsOne() async throws {
        let transport = ScriptedTransport { _ in .json(#"{"ok":true}"#) }
        let gitlab = try ProviderCatalog(includeBundled: true, directories: []).descriptor(id: "gitlab-self-managed")
        let store = InMemoryCredentialStore()
        let credential = Credential(
            providerID: "gitlab-self-managed", accessToken: "gitlab-secret",
            endpointOrigins: ["https://git.example.com"])
        await store.save(credential)
        func source(host: String) throws -> CredentialSource {
            let client = try OAuth2Client(
                descriptor: gitlab, settings: ClientSettings(clientID: "app", placeholders: ["host": host]),
                httpClient: transport)
            return CredentialSource(authenticator: client, store: store, key: credential.key, httpClient: transport)
        }
        await #expect {
            _ = try await source(host: "evil.example").send(
                HTTPRequest(method: .get, url: URL(string: "https://evil.example/api/v4/user")!))
        } throws: { error in
            guard case .outsideProviderAPI(_, _, let origins)? = error.authKitReason else { return false }
            return origins == ["https://git.example.com"]
        }
        #expect(transport.count == 0)
        let (response, _) = try await source(host: "git.example.com").send(
            HTTPRequest(method: .get, url: URL(string: "https://git.example.com/api/v4/user")!))
        #expect(response.status == .ok && transport.count == 1)
    }

    /// A credential stored before endpoint origins were recorded goes to no
    /// origin made of a placeholder, nor is it refreshed where one points:
    /// the value in effect could name any host, and the refresh would carry
    /// the refresh token and client secret there.
    @Test func aCredentialWithoutRecordedOriginsGoesNowhereAPlaceholderPoints() async throws {
        let transport = ScriptedTransport { _ in .json(#"{"access_token":"new","token_type":"Bearer"}"#) }
        let gitlab = try ProviderCatalog(includeBundled: true, directories: []).descriptor(id: "gitlab-self-managed")
        let store = InMemoryCredentialStore()
        let legacy = Credential(providerID: "gitlab-self-managed", accessToken: "gitlab-secret", refreshToken: "r")
        await store.save(legacy)
        let client = try OAuth2Client(
            descriptor: gitlab,
            settings: ClientSettings(clientID: "app", clientSecret: "s", placeholders: ["host": "evil.example"]),
            httpClient: transport)
        let source = CredentialSource(authenticator: client, store: store, key: legacy.key, httpClient: transport)
        do {
            _ = try await source.send(HTTPRequest(method: .get, url: URL(string: "https://evil.example/api/v4/user")!))
            Issue.record("sent")
        } catch {
            #expect(
                "\(error)".contains("this one records no such origin") && "\(error)".contains("Sign in again"),
                "\(error)")
        }
        await #expect(
            throws: AuthKitError.signInRequired(legacy.key, reason: .endpointChanged(origin: "https://evil.example"))
        ) {
            _ = try await client.refresh(legacy)
        }
        #expect(transport.count == 0)
    }

    /// Where a credential was issued is recorded at the sign-in and kept: a
    /// refresh made with other placeholder values (here one in the
    /// revocation's host) does not add the host they name, which its API
    /// calls and its revocation could then reach.
    @Test func aRefreshKeepsTheOriginsTheSignInRecorded() async throws {
        let transport = ScriptedTransport { _ in
            .json(#"{"access_token":"new","token_type":"Bearer","expires_in":3600}"#)
        }
        let acme = try ProviderDescriptor(
            json: Data(
                """
                {"id": "acme", "protocol": "oauth2", "placeholders": {"tenant": {}},
                 "authorization": {"url": "https://auth.acme.example/a"}, "token": {"url": "https://auth.acme.example/token"},
                 "revocation": {"url": "https://{tenant}/revoke"}}
                """.utf8))
        let client = try OAuth2Client(
            descriptor: acme,
            settings: ClientSettings(clientID: "app", clientSecret: "s", placeholders: ["tenant": "evil.example"]),
            httpClient: transport)
        let issued = Credential(
            providerID: "acme", accessToken: "old", refreshToken: "r",
            endpointOrigins: ["https://auth.acme.example", "https://good.example"])
        let refreshed = try await client.refresh(issued)
        #expect(
            refreshed.accessToken == "new"
                && refreshed.endpointOrigins == ["https://auth.acme.example", "https://good.example"])
        // And such a placeholder cannot be an API origin's: no credential is issued at the revocation's host.
        #expect(throws: AuthKitError.self) {
            try ProviderDescriptor(
                json: Data(
                    """
                    {"id": "acme", "protocol": "oauth2", "placeholders": {"tenant": {}},
                     "authorization": {"url": "https://auth.acme.example/a"}, "token": {"url": "https://auth.acme.example/token"},
                     "revocation": {"url": "https://{tenant}/revoke"}, "api": {"origins": ["https://{tenant}"]}}
                    """.utf8))
        }
    }
}
