import AuthKitTestSupport
import Foundation
import Testing

@testable import AuthKit

/// One provider never speaks for another: not through an environment variable
/// two providers would read, not through a file named after someone else, not
/// by receiving a credential another endpoint issued.
@Suite struct ProviderBoundaryTests {
    func directory(_ files: [String: String]) throws -> URL {
        let dir = TemporaryDirectory.url("authkit-boundary")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        for (name, json) in files { try Data(json.utf8).write(to: dir.appendingPathComponent(name)) }
        return dir
    }

    static func oauth2(_ id: String, host: String = "as.example", placeholders: String = "", url: String? = nil)
        -> String
    {
        #"{"id": "\#(id)", "protocol": "oauth2", \#(placeholders) "authorization": {"url": "https://\#(host)/authorize"}, "token": {"url": "\#(url ?? "https://\(host)/token")"}}"#
    }

    /// The reported case: placeholder `secret` of `github-client` would be read
    /// from AUTHKIT_GITHUB_CLIENT_SECRET, GitHub's client secret, into a URL.
    @Test func aPlaceholderCannotBeReadFromAnotherProvidersSecret() throws {
        let json = Self.oauth2(
            "github-client", placeholders: #""placeholders": {"secret": {}},"#, url: "https://{secret}.example/token")
        #expect {
            _ = try ProviderDescriptor(json: Data(json.utf8), source: "github-client.json")
        } throws: { error in
            guard case .invalidFile(let issues)? = error.authKitReason else { return false }
            return issues.contains {
                $0.field == "placeholders.secret" && $0.problem.contains("AUTHKIT_GITHUB_CLIENT_SECRET")
            }
        }
    }

    /// Nor from one of AuthKit's own variables: provider `consumer` with
    /// placeholder `secret` read AUTHKIT_CONSUMER_SECRET (the OAuth 1.0a
    /// secret `authkit sign` takes) into the URL the browser opened.
    @Test(arguments: [("consumer", "secret"), ("token", "secret"), ("web", "keys"), ("keyring", "timeout")])
    func aPlaceholderCannotBeReadFromAuthKitsOwnVariables(id: String, name: String) throws {
        let json = Self.oauth2(
            id, placeholders: #""placeholders": {"\#(name)": {}},"#, url: "https://as.example/{\(name)}/t")
        let variable = "AUTHKIT_\(id.uppercased())_\(name.uppercased())"
        #expect {
            _ = try ProviderDescriptor(json: Data(json.utf8), source: "\(id).json")
        } throws: { error in
            guard case .invalidFile(let issues)? = error.authKitReason else { return false }
            return issues.contains { $0.field == "placeholders.\(name)" && $0.problem.contains(variable) }
        }
    }

    /// The list those are refused from holds every `"AUTHKIT_…"` name the
    /// sources read (a new variable added without it would be readable).
    @Test func everyVariableAuthKitReadsIsReserved() throws {
        let pattern = try NSRegularExpression(pattern: #""(AUTHKIT_[A-Z0-9_]+)""#)
        let found = Set(
            try SourceFiles.swift(under: ["Sources", "Examples"]).flatMap {
                SourceFiles.captures(of: pattern, in: $0.text)
            })
        #expect(found.count >= 6, "the sources' variables were not found: \(found.sorted())")
        #expect(
            found.subtracting(ClientSettings.authKitVariables).isEmpty,
            "\(found.subtracting(ClientSettings.authKitVariables).sorted())")
    }

    /// A placeholder's default is checked in every endpoint it stands in:
    /// `evil.example/` in `https://{region}.googleapis.com/…` of the UserInfo
    /// call passed, and the access token went to evil.example.
    @Test(arguments: [
        #""whoAmI": {"url": "https://{region}.api.example/me", "subject": "id"}"#,
        #""openid": {"keys": "https://{region}.api.example/jwks"}"#,
        #""openid": {"keys": "https://as.example/jwks", "userInfo": "https://{region}.api.example/userinfo"}"#,
        #""openid": {"keys": "https://as.example/jwks", "endSession": "https://{region}.api.example/logout"}"#,
    ])
    func aPlaceholdersDefaultIsCheckedInEveryEndpoint(section: String) throws {
        let json = #"""
            {"id": "regional", "protocol": "oauth2", "placeholders": {"region": {"default": "evil.example/"}},
             "authorization": {"url": "https://as.example/a"}, "token": {"url": "https://as.example/t"}, \#(section)}
            """#
        #expect {
            _ = try ProviderDescriptor(json: Data(json.utf8), source: "regional.json")
        } throws: { error in
            guard case .invalidFile(let issues)? = error.authKitReason else { return false }
            return issues.contains {
                $0.field == "placeholders.region.default" && $0.problem.contains("end the name early")
            }
        }
    }

    /// RFC 6749 §3.1: no parameter twice. An override that keeps the bundled
    /// host could write `redirect_uri`, `client_id` or `scope` into the
    /// authorization URL's query, sent before AuthKit's own. Only what the
    /// descriptor sends is refused: with `scopeParameter` `user_scope`
    /// (Slack), `?scope=` is the provider's own parameter, kept.
    @Test(arguments: [
        ("redirect_uri", ""), ("client_id", ""), ("response_type", ""), ("scope", ""), ("state", ""),
        ("code_challenge", ""), ("user_scope", #", "scopeParameter": "user_scope""#),
        ("nonce", ""),
    ])
    func theAuthorizationURLsQuerySetsNothingAuthKitSends(name: String, extra: String) throws {
        // `nonce` is sent with OpenID Connect.
        let openID =
            name == "nonce"
            ? #", "openid": {"keys": "https://as.example/jwks"}, "issuer": {"identifier": "https://as.example"}"# : ""
        let json = #"""
            {"id": "q", "protocol": "oauth2"\#(openID),
             "authorization": {"url": "https://as.example/a?team=x&\#(name)=https%3A%2F%2Fevil.example"\#(extra)},
             "token": {"url": "https://as.example/t"}}
            """#
        #expect {
            _ = try ProviderDescriptor(json: Data(json.utf8), source: "q.json")
        } throws: { error in
            guard case .invalidFile(let issues)? = error.authKitReason else { return false }
            return issues.contains { $0.field == "authorization.url" && $0.problem.contains("'\(name)'") }
        }
    }

    /// What the descriptor does not send stays the endpoint's own: Slack's
    /// bot `scope` beside its `user_scope`, `response_type` where it is not
    /// sent, `nonce` without OpenID Connect, and any other parameter.
    @Test func theAuthorizationURLsOwnParametersAreKept() throws {
        for (query, extra) in [
            ("scope=chat:write", #", "scopeParameter": "user_scope""#),
            ("response_type=code", #", "sendResponseType": false"#), ("nonce=x&request_uri=y", ""), ("team=x", ""),
        ] {
            let json = #"""
                {"id": "q", "protocol": "oauth2", "authorization": {"url": "https://as.example/a?\#(query)"\#(extra)},
                 "token": {"url": "https://as.example/t"}}
                """#
            do {
                _ = try ProviderDescriptor(json: Data(json.utf8), source: "q.json")
            } catch {
                Issue.record("?\(query) was refused: \(error)")
            }
        }
    }

    @Test func aClientSecretNeverFillsAURL() throws {
        let json = #"""
            {"id": "leaky", "protocol": "oauth2", "authorization": {"url": "https://as.example/a"}, "token": {"url": "https://as.example/t"},
             "refresh": {"url": "https://as.example/refresh/{client_secret}"}}
            """#
        #expect {
            _ = try ProviderDescriptor(json: Data(json.utf8), source: "leaky.json")
        } throws: { error in
            guard case .invalidFile(let issues)? = error.authKitReason else { return false }
            return issues.contains { $0.field == "refresh.url" && $0.problem.contains("{client_secret}") }
        }
    }

    /// Nor a template's query: with `encoding` `query` its parameters are the
    /// URL, and a secret among them reached server and proxy logs with no
    /// word. Refused by field, unless the file says the provider takes it
    /// only there (`secretsInURL`, as Instagram's Graph API needs).
    @Test func aTemplateSendsNoSecretInItsQueryUnlessTheFileSaysSo() throws {
        func descriptor(_ optIn: String) throws -> ProviderDescriptor {
            try ProviderDescriptor(
                json: Data(
                    """
                    {"id": "leaky", "protocol": "oauth2", "authorization": {"url": "https://as.example/a"},
                     "token": {"url": "https://as.example/t"},
                     "refresh": {"url": "https://as.example/r", "encoding": "query"\(optIn),
                                 "parameters": {"grant_type": "x", "refresh_token": "{refresh_token}", "secret": "{client_secret}"}}}
                    """.utf8), source: "leaky.json")
        }
        #expect {
            _ = try descriptor("")
        } throws: { error in
            guard case .invalidFile(let issues)? = error.authKitReason else { return false }
            return issues.contains {
                $0.field == "refresh.parameters" && $0.problem.contains("{client_secret}, {refresh_token}")
                    && $0.problem.contains("secretsInURL")
            }
        }
        #expect(try descriptor(#", "secretsInURL": true"#).refresh?.secretsInURL == true)

        // The URL's own query, whatever the encoding; and a revocation with
        // 'query' and RFC 7009's implied parameters (the token itself).
        for (template, field) in [
            (
                #""refresh": {"url": "https://as.example/r?grant_type=refresh_token&refresh_token={refresh_token}"}"#,
                "refresh.url"
            ),
            (
                #""revocation": {"url": "https://as.example/revoke?t={access_token}", "encoding": "form"}"#,
                "revocation.url"
            ),
            (#""revocation": {"url": "https://as.example/revoke", "encoding": "query"}"#, "revocation.encoding"),
        ] {
            let json = """
                {"id": "leaky", "protocol": "oauth2", "authorization": {"url": "https://as.example/a"},
                 "token": {"url": "https://as.example/t"}, \(template)}
                """
            #expect("\(field)") {
                _ = try ProviderDescriptor(json: Data(json.utf8), source: "leaky.json")
            } throws: { error in
                guard case .invalidFile(let issues)? = error.authKitReason else { return false }
                return issues.contains { $0.field == field && $0.problem.contains("logs keep it") }
            }
        }
        _ = try ProviderDescriptor(
            json: Data(
                """
                {"id": "revoking", "protocol": "oauth2", "authorization": {"url": "https://as.example/a"},
                 "token": {"url": "https://as.example/t"}, "revocation": {"url": "https://as.example/revoke"}}
                """.utf8), source: "revoking.json")
    }

    /// A token, code or client id in a host would go to name servers and into
    /// the error that names a refused origin (issue 44, item 2); the user's
    /// own placeholder may stand there, as `{host}` does for GitLab.
    @Test func noRunTimeValueStandsInAHost() throws {
        let json = #"""
            {"id": "leaky", "protocol": "oauth2", "placeholders": {"host": {"default": "as.example"}},
             "authorization": {"url": "https://{host}/a"}, "token": {"url": "https://{host}/t"},
             "revocation": {"url": "https://{refresh_token}.{access_token}.evil.example/revoke"},
             "refresh": {"url": "https://{host}:443/r?client={client_id}"}}
            """#
        #expect {
            _ = try ProviderDescriptor(json: Data(json.utf8), source: "leaky.json")
        } throws: { error in
            guard case .invalidFile(let issues)? = error.authKitReason else { return false }
            return issues.filter { $0.field == "revocation.url" && $0.problem.contains("in its host") }.count == 2
                && !issues.contains {
                    $0.field == "refresh.url" || $0.field.hasPrefix("authorization") || $0.field.hasPrefix("token")
                }
        }
    }

    /// `my-gitlab` and `my_gitlab` would both read AUTHKIT_MY_GITLAB_CLIENT_ID:
    /// the second is refused, naming the variable and the other file.
    @Test func twoProvidersReadingOneVariableAreRefused() throws {
        let dir = try directory([
            "my-gitlab.json": Self.oauth2("my-gitlab"), "my_gitlab.json": Self.oauth2("my_gitlab"),
        ])
        defer { try? FileManager.default.removeItem(at: dir) }
        let catalog = ProviderCatalog(directories: [dir])
        #expect(catalog.entries["my-gitlab"] != nil)
        let issues = try #require(catalog.fileIssues["my_gitlab"])
        #expect(issues.first?.problem.contains("AUTHKIT_MY_GITLAB_CLIENT_ID") == true)
        #expect(throws: AuthKitError.self) { _ = try catalog.descriptor(id: "my_gitlab") }
    }

    /// A file that is no provider (named after no valid id, or holding
    /// another id than its name) shares nothing: a backup copy beside an
    /// override, `qiita copy.json`, itself refused for its name, made
    /// `qiita` unusable with advice to rename qiita's id. (A copy whose name
    /// differs only in case hides the provider, for another reason: the
    /// next test.)
    @Test func aCopyThatIsNoProviderDoesNotClashWithTheOneItCopies() throws {
        let qiita = Self.oauth2("qiita", host: "qiita.example")
        let dir = try directory(["qiita.json": qiita, "qiita copy.json": qiita, "old-qiita.json": qiita])
        defer { try? FileManager.default.removeItem(at: dir) }
        // An editor's hidden files are not read at all (Emacs's lock, a dangling link).
        try FileManager.default.createSymbolicLink(
            atPath: dir.appendingPathComponent(".#qiita.json").path, withDestinationPath: "me@host.1234:1700000000")
        let catalog = ProviderCatalog(includeBundled: true, directories: [dir])
        #expect(try catalog.descriptor(id: "qiita").token?.url == "https://qiita.example/token")
        // The copies are still refused, each for its name.
        for name in ["qiita copy", "old-qiita"] {
            let issues = try #require(catalog.fileIssues[name], "\(name)")
            #expect(
                issues.first?.problem.contains("the file is named") == true || issues.first?.field == "id",
                "\(name): \(issues)")
        }
        #expect(Set(catalog.fileIssues.keys) == ["qiita copy", "old-qiita"], "\(catalog.fileIssues.keys)")
    }

    /// `gitHub.json` holding `"id": "github"` replaced nothing, and GitHub
    /// went on as the bundled file without a word (only `providers list`
    /// named the refused file): a file meant to replace a provider that
    /// cannot, hides it, as a broken `github.json` does.
    @Test func aFileNamedAfterAProviderInAnotherCaseHidesIt() throws {
        let dir = try directory(["gitHub.json": Self.oauth2("github", host: "mine.example")])
        defer { try? FileManager.default.removeItem(at: dir) }
        let catalog = ProviderCatalog(includeBundled: true, directories: [dir])
        #expect {
            _ = try catalog.descriptor(id: "github")
        } throws: { error in
            guard case .invalidFile(let issues)? = error.authKitReason else { return false }
            return issues.first?.file == dir.appendingPathComponent("gitHub.json").path
                && issues.first?.problem.contains("differs from 'github.json' only in case") == true
        }
        #expect(catalog.entry(id: "gitlab") != nil, "other providers are not touched")
        // Beside a `github.json` of the user's, which of the two is being
        // edited cannot be told: GitHub is not used until one is gone.
        try Data(Self.oauth2("github", host: "theirs.example").utf8).write(
            to: dir.appendingPathComponent("github.json"))
        #expect(throws: AuthKitError.self) {
            _ = try ProviderCatalog(includeBundled: true, directories: [dir]).descriptor(id: "github")
        }
    }

    /// The same against bundled files, whose ids and placeholder names come
    /// from their outlines instead of being parsed: a user's `qiita_team`
    /// would read bundled `qiita-team`'s AUTHKIT_QIITA_TEAM_CLIENT_ID, and a
    /// user's `qiita` with placeholder `team_team` would read
    /// AUTHKIT_QIITA_TEAM_TEAM, bundled `qiita-team`'s placeholder `team`.
    @Test func aUserFileReadingABundledProvidersVariableIsRefused() throws {
        let dir = try directory([
            "qiita_team.json": Self.oauth2("qiita_team"),
            "qiita.json": Self.oauth2("qiita", placeholders: #""placeholders": {"team_team": {}},"#),
        ])
        defer { try? FileManager.default.removeItem(at: dir) }
        let catalog = ProviderCatalog(includeBundled: true, directories: [dir])
        let issues = try #require(catalog.fileIssues["qiita_team"])
        #expect(issues.first?.problem.contains("AUTHKIT_QIITA_TEAM_CLIENT_ID") == true)
        #expect(issues.first?.problem.contains("(bundled) providers/qiita-team.json") == true)
        let placeholderIssues = try #require(catalog.fileIssues["qiita"])
        #expect(placeholderIssues.first?.problem.contains("AUTHKIT_QIITA_TEAM_TEAM") == true)
    }

    /// A stray `notes.json` holding `"id": "github"` does not become GitHub.
    @Test func aFileNamedOtherThanItsIdIsRefused() throws {
        let dir = try directory(["notes.json": Self.oauth2("github", host: "evil.example")])
        defer { try? FileManager.default.removeItem(at: dir) }
        let catalog = ProviderCatalog(includeBundled: true, directories: [dir])
        #expect(catalog.entries["github"]?.descriptor.token?.url == "https://github.com/login/oauth/access_token")
        let issue = try #require(catalog.fileIssues["notes"]?.first)
        #expect(issue.field == "id" && issue.problem.contains("rename the file to github.json"))
        #expect(throws: AuthKitError.self) {
            _ = try ProviderDescriptor(contentsOf: dir.appendingPathComponent("notes.json"))
        }
    }

    /// `ProviderDescriptor(contentsOf:)` is handed a path: a named pipe
    /// there (placed by someone else, with no writer) is refused at once,
    /// naming the file. It was opened, and the call waited for a writer
    /// that never came. (`providers validate` still reads a shell's `<(…)`.)
    @Test func aNamedPipeIsNotADescriptorFile() throws {
        let dir = try directory([:])
        defer { try? FileManager.default.removeItem(at: dir) }
        let fifo = dir.appendingPathComponent("github.json")
        #expect(mkfifo(fifo.path, 0o600) == 0)
        let started = ContinuousClock.now
        #expect {
            _ = try ProviderDescriptor(contentsOf: fifo)
        } throws: { error in
            guard case .invalidFile(let issues)? = error.authKitReason else { return false }
            return issues.first?.file == fifo.path
        }
        #expect(ContinuousClock.now - started < .seconds(30), "a hang check: the old code waited for ever")
    }

    @Test func anOverrideIsRecordedWithTheHostsItAdds() throws {
        let dir = try directory(["qiita.json": Self.oauth2("qiita", host: "qiita.evil.example")])
        defer { try? FileManager.default.removeItem(at: dir) }
        let entry = try #require(ProviderCatalog(includeBundled: true, directories: [dir]).entries["qiita"])
        #expect(entry.replaced?.source == "(bundled) providers/qiita.json")
        #expect(entry.newHosts == ["qiita.evil.example"])
    }

    /// A library user learns what `authkit` says about an override (through
    /// public API alone): the hosts it moves a sign-in to and the
    /// protections it turns off, a file passed over; nothing for a provider
    /// nothing replaced. Only the command line said it: an app that loads
    /// the user's files used a weakened provider silently.
    @Test func aLibraryIsToldWhatAnOverrideChanges() throws {
        // Discord's file with PKCE off and its endpoints moved.
        let weakened = try directory([
            "discord.json": Self.oauth2("discord", host: "discord.evil.example")
                .replacingOccurrences(of: #""protocol": "oauth2","#, with: #""protocol": "oauth2", "pkce": "none","#)
        ])
        let broken = try directory(["discord.json": "{}"])
        defer { for dir in [weakened, broken] { try? FileManager.default.removeItem(at: dir) } }
        let catalog = ProviderCatalog(includeBundled: true, directories: [broken, weakened])
        let notes = catalog.overrideNotes(for: "discord")
        // The broken file's problems (one note each), then what the override changes.
        let passedOver = notes.prefix { $0.hasSuffix("(passed over: a later file of 'discord' is used)") }
        #expect(!passedOver.isEmpty && passedOver.allSatisfy { $0.hasPrefix(broken.path) }, "\(notes)")
        #expect(notes.count == passedOver.count + 3, "\(notes.joined(separator: "\n"))")
        #expect(notes.contains { $0.hasSuffix("sends to discord.evil.example instead of discord.com.") }, "\(notes)")
        #expect(notes.contains { $0.contains("(bundled) providers/discord.json and turns PKCE off") }, "\(notes)")
        // It lists no API origins: any origin.
        #expect(notes.contains { $0.contains("lets credentials go to any origin") }, "\(notes)")
        #expect(catalog.overrideNotes(for: "github").isEmpty)
        #expect(catalog.overrideNotes(for: "no-such-provider").isEmpty)
        #expect(ProviderCatalog(includeBundled: true, directories: []).overrideNotes(for: "discord").isEmpty)
    }

    /// What an override changes is told against the first file of its id
    /// (the bundled one), whatever lies between: behind a broken file (whose
    /// problem is kept, not dropped) or behind an identical override, the
    /// last one was compared with nothing, or with itself, and went unannounced.
    @Test func anOverrideIsToldAgainstTheOriginalWhateverLiesBetween() throws {
        let evil = Self.oauth2("qiita", host: "qiita.evil.example")
        let broken = try directory(["qiita.json": "{}"])
        let same = try directory(["qiita.json": evil])
        let team = try directory(["qiita.json": evil])
        defer { for dir in [broken, same, team] { try? FileManager.default.removeItem(at: dir) } }

        let behindBroken = try #require(
            ProviderCatalog(includeBundled: true, directories: [broken, team]).entries["qiita"])
        #expect(behindBroken.original?.source == "(bundled) providers/qiita.json")
        #expect(behindBroken.newHosts == ["qiita.evil.example"])
        #expect(behindBroken.passedOver.first?.file.hasPrefix(broken.path) == true, "\(behindBroken.passedOver)")

        let behindTwin = try #require(
            ProviderCatalog(includeBundled: true, directories: [same, team]).entries["qiita"])
        #expect(behindTwin.original?.source == "(bundled) providers/qiita.json")
        #expect(behindTwin.replaced?.source.hasPrefix(same.path) == true, "the file just before it is what it replaces")
        #expect(behindTwin.newHosts == ["qiita.evil.example"] && behindTwin.passedOver.isEmpty)
    }

    /// The problems a descriptor's file has, by field (several joined);
    /// empty when it loads.
    static func problems(_ json: String) -> [String: String] {
        do {
            _ = try ProviderDescriptor(json: Data(json.utf8), source: "p.json")
            return [:]
        } catch let error as AuthKitError {
            guard case .invalidFile(let issues) = error.reason else {
                return ["": "\(error)"]
            }
            return Dictionary(issues.map { ($0.field, $0.problem) }, uniquingKeysWith: { $0 + " " + $1 })
        } catch {
            return ["": "\(error)"]
        }
    }

    /// A descriptor may not set the connection's own header fields (a
    /// `Host` of its own sent a request for one host to another's front
    /// end), a name that is no field name (dropped without a word), or an
    /// `Authorization` that would replace the client's authentication;
    /// Dropbox's revocation, which authenticates with the token and no
    /// client, keeps its `Authorization: Bearer {access_token}`.
    @Test func descriptorHeadersCannotReplaceWhatTheTransportOrTheClientSets() throws {
        func problems(_ headers: String, revocation: String = "") -> [String: String] {
            Self.problems(
                #"{"id": "h", "protocol": "oauth2", "authorization": {"url": "https://as.example/a"}, "token": {"url": "https://as.example/t", "headers": \#(headers)}\#(revocation)}"#
            )
        }
        let refused = problems(#"{"Host": "evil.example", "X Bad": "1", "Authorization": "Bearer x", "Accept": "a/b"}"#)
        #expect(refused["token.headers.Host"]?.contains("the transport's to set") == true, "\(refused)")
        #expect(refused["token.headers.X Bad"]?.contains("not an HTTP field name") == true, "\(refused)")
        #expect(refused["token.headers.Authorization"]?.contains("client's authentication") == true, "\(refused)")
        #expect(refused["token.headers.Accept"] == nil)
        let bearerRevocation = problems(
            "{}",
            revocation:
                #", "revocation": {"url": "https://as.example/r", "parameters": {}, "headers": {"Authorization": "Bearer {access_token}"}}"#
        )
        #expect(bearerRevocation.isEmpty, "\(bearerRevocation)")
        let rfc7009Revocation = problems(
            "{}", revocation: #", "revocation": {"url": "https://as.example/r", "headers": {"Authorization": "x"}}"#)
        #expect(rfc7009Revocation["revocation.headers.Authorization"] != nil, "\(rfc7009Revocation)")
        // Nor may an error member be where a token is: the error would print it.
        let json =
            #"{"id": "h", "protocol": "oauth2", "authorization": {"url": "https://as.example/a"}, "token": {"url": "https://as.example/t", "response": {"errorCode": "token_type", "errorDescription": "access_token"}}}"#
        let error = try #require(throws: AuthKitError.self) {
            _ = try ProviderDescriptor(json: Data(json.utf8), source: "h.json")
        }
        #expect(
            "\(error)".contains("token.response.errorDescription") && "\(error)".contains("a token just issued"),
            "\(error)")
    }

    /// What `providers validate` passed and the runtime then refused or
    /// altered: placeholders in OAuth 1.0a endpoints, an https redirect
    /// whose host is no host, a control character under a nested `_` name.
    @Test func theValidatorRefusesWhatTheRuntimeWould() throws {
        let fields = Self.problems
        let oauth1 = fields(
            #"{"id": "o1", "protocol": "oauth1", "placeholders": {"host": {"description": "h", "default": "x.example"}}, "oauth1": {"requestTokenURL": "https://{host}/rt", "authorizeURL": "https://x.example/a", "accessTokenURL": "https://x.example/at"}}"#
        )
        #expect(oauth1["oauth1.requestTokenURL"]?.contains("takes no placeholders") == true, "\(oauth1)")
        for host in ["a b", "", "user@evil.example", "evil.example:99999"] {
            let redirect = fields(
                #"{"id": "r", "protocol": "oauth2", "redirect": {"scheme": "https", "host": "\#(host)", "path": "/cb"}, "authorization": {"url": "https://as.example/a"}, "token": {"url": "https://as.example/t"}}"#
            )
            #expect(redirect["redirect.host"]?.contains("is no host name") == true, "\(host): \(redirect)")
        }
        let nested = fields(
            #"{"id": "n", "protocol": "oauth2", "authorization": {"url": "https://as.example/a", "parameters": {"_q": "a\u001b[31mb"}}, "token": {"url": "https://as.example/t"}}"#
        )
        #expect(nested["authorization.parameters._q"] != nil, "\(nested)")
        let headerMessage = fields(
            #"{"id": "t", "protocol": "oauth2", "authorization": {"url": "https://as.example/a"}, "token": {"url": "https://as.example/t", "headers": {"X-A": "{client_secret}"}}}"#
        )
        #expect(
            headerMessage["token.headers"]?.contains("takes placeholders only") == true
                && headerMessage["token.headers"]?.contains("{client_secret}, ") == false, "\(headerMessage)")
    }

    /// A hostile file's thousands of problems are said up to a bound, not
    /// all copied out of the document one by one (60,000 took 86 s).
    @Test func aFileWithThousandsOfProblemsIsRefusedAtOnce() throws {
        let unknown = (0..<2_000).map { #""x\#($0)": 1"# }.joined(separator: ", ")
        let json =
            #"{"id": "h", "protocol": "oauth2", "authorization": {"url": "https://as.example/a"}, "token": {"url": "https://as.example/t"}, \#(unknown)}"#
        let error = try #require(throws: AuthKitError.self) {
            _ = try ProviderDescriptor(json: Data(json.utf8), source: "h.json")
        }
        guard case .invalidFile(let issues) = error.reason else {
            Issue.record("\(error)")
            return
        }
        #expect(issues.count == 51 && issues.last?.problem.contains("1950 more problems") == true, "\(issues.last!)")
    }

    /// An origin pattern of placeholders in a row is matched once per
    /// position: tried afresh, ten in a row against 28 characters took 77 s.
    @Test func originPatternsWithManyPlaceholdersMatchInTime() throws {
        let pattern = "https://" + (0..<10).map { "{p\($0)}" }.joined()
        let origins = APIOrigins([pattern])
        let started = ContinuousClock.now
        let hostile = try #require(URL(string: "https://" + String(repeating: "a", count: 60) + "~/x"))
        #expect(!origins.match(hostile, placeholders: [:]).withPlaceholder)
        let fitting = try #require(URL(string: "https://" + String(repeating: "a", count: 60) + "/x"))
        #expect(origins.match(fitting, placeholders: [:]).withPlaceholder)
        #expect(ContinuousClock.now - started < .seconds(10), "a bound on a hang, not a speed check")
    }

    /// The device endpoint receives the client id (and, with `basic` or
    /// `post`, the secret): an override that moves only it is reported too.
    @Test func anOverrideThatMovesOnlyTheDeviceEndpointIsRecorded() throws {
        let github = try ProviderCatalog(includeBundled: true, directories: []).descriptor(id: "github")
        var file = DescriptorFile(github)
        file.device?.url = "https://device.evil.example/login/device/code"
        let dir = try directory(["github.json": String(decoding: try JSONEncoder().encode(file), as: UTF8.self)])
        defer { try? FileManager.default.removeItem(at: dir) }
        let entry = try #require(ProviderCatalog(includeBundled: true, directories: [dir]).entries["github"])
        #expect(entry.newHosts == ["device.evil.example"])
    }

    /// The who-am-I call gets the access token: an override that moves only
    /// it is told as any other endpoint is (so are UserInfo, the end-session
    /// page and the key set).
    @Test func anOverrideThatMovesOnlyTheWhoAmICallIsRecorded() throws {
        let github = try ProviderCatalog(includeBundled: true, directories: []).descriptor(id: "github")
        var file = DescriptorFile(github)
        let original = try #require(file.whoAmI?.url)
        file.whoAmI?.url = "https://collector.evil.example/user"
        let dir = try directory(["github.json": String(decoding: try JSONEncoder().encode(file), as: UTF8.self)])
        defer { try? FileManager.default.removeItem(at: dir) }
        let entry = try #require(ProviderCatalog(includeBundled: true, directories: [dir]).entries["github"])
        #expect(entry.newHosts == ["collector.evil.example"], "\(original) → \(entry.newHosts)")
    }

    // MARK: - A file someone else could have written is not read

    /// The problem `ProviderCatalog.standard` reports for `id` with
    /// `$AUTHKIT_HOME` at `home` (its `providers` directory holds the file).
    func standardProblem(_ id: String, home: URL) -> String? {
        ProviderCatalog.standard(environment: ["AUTHKIT_HOME": home.path]).fileIssues[id]?.first?.problem
    }

    /// A descriptor decides where codes, tokens and the client secret go. A
    /// GitHub override that another user can rewrite (or put there, or
    /// replace through its directory) is refused, and GitHub fails closed
    /// rather than silently falling back; each refusal names the fix.
    @Test func aProviderFileAnotherUserCouldHaveWrittenIsRefused() throws {
        let home = TemporaryDirectory.url("authkit-foreign")
        defer { try? FileManager.default.removeItem(at: home) }
        let providers = home.appendingPathComponent("providers")
        try FileManager.default.createDirectory(at: providers, withIntermediateDirectories: true)
        let file = providers.appendingPathComponent("github.json")
        try Data(Self.oauth2("github", host: "github.evil.example").utf8).write(to: file)
        func chmod(_ url: URL, _ mode: Int) throws {
            try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: url.path)
        }
        try chmod(providers, 0o755)

        try chmod(file, 0o644)
        #expect(standardProblem("github", home: home) == nil, "the user's own file, written by no one else, loads")
        try chmod(file, 0o666)
        #expect(
            standardProblem("github", home: home)
                == "every user can write to it (mode 0666), and so make it send your sign-ins elsewhere; it is not read. Run: chmod go-w '\(file.path)'"
        )
        #expect(throws: AuthKitError.self, "no fallback to the bundled GitHub") {
            _ = try ProviderCatalog.standard(environment: ["AUTHKIT_HOME": home.path]).descriptor(id: "github")
        }
        #expect(
            ProviderCatalog(includeBundled: true, directories: [providers]).problems["github"] == nil,
            "the plain initialiser trusts the directories it is given (an app's bundle)")

        try chmod(file, 0o644)
        try chmod(providers, 0o777)
        #expect(
            standardProblem("github", home: home)?.hasPrefix(
                "every user can write to its directory \(providers.path) (mode 0777)") == true)
        try chmod(providers, 0o1777)
        #expect(
            standardProblem("github", home: home) == nil,
            "in a sticky directory (/tmp) others cannot replace the user's own file")
        try chmod(providers, 0o755)

        // A link is followed: the file it names may sit in a directory others can write to.
        let elsewhere = home.appendingPathComponent("elsewhere")
        try FileManager.default.createDirectory(at: elsewhere, withIntermediateDirectories: true)
        try chmod(elsewhere, 0o777)
        try FileManager.default.moveItem(at: file, to: elsewhere.appendingPathComponent("github.json"))
        try FileManager.default.createSymbolicLink(
            at: file, withDestinationURL: elsewhere.appendingPathComponent("github.json"))
        #expect(
            standardProblem("github", home: home)?.contains("its directory \(elsewhere.path) (mode 0777)") == true,
            "\(standardProblem("github", home: home) ?? "loaded")")
        try FileManager.default.removeItem(at: file)
        try FileManager.default.moveItem(at: elsewhere.appendingPathComponent("github.json"), to: file)

        // Group-writable: refused unless the group is the user's own (a user-private group).
        try chmod(file, 0o664)
        #expect(standardProblem("github", home: home) == nil)
        if geteuid() == 0 { // only root can give a file away
            #expect(chown(file.path, uid_t.max, 4343) == 0)
            #expect(
                standardProblem("github", home: home)?.hasPrefix(
                    "the members of group 4343 can write to it (mode 0664)") == true)
            #expect(chown(file.path, 4242, gid_t.max) == 0)
            try chmod(file, 0o644)
            #expect(standardProblem("github", home: home)?.hasPrefix("belongs to another user (uid 4242)") == true)
        }
    }

    /// config.json's placeholders choose hosts: the same rule holds for it.
    @Test func aConfigurationAnotherUserCanWriteIsRefused() throws {
        let home = TemporaryDirectory.url("authkit-foreign-config")
        defer { try? FileManager.default.removeItem(at: home) }
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        let config = home.appendingPathComponent("config.json")
        try Data(#"{"providers": {"github": {"clientID": "mine"}}}"#.utf8).write(to: config)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: config.path)
        #expect(try UserConfiguration.load(home: home).providers?["github"]?.clientID == "mine")
        try FileManager.default.setAttributes([.posixPermissions: 0o646], ofItemAtPath: config.path)
        #expect {
            _ = try UserConfiguration.load(home: home)
        } throws: { error in
            guard case .invalidFile(let issues)? = error.authKitReason else { return false }
            return issues.first?.file == config.path && issues.first?.problem.contains("chmod go-w") == true
        }
    }

    /// A providers directory others can write in is refused before any of
    /// its files is opened (each was opened and read only to be refused by
    /// its status: as many megabyte files as anyone put there, a link to a
    /// device), each file's provider failing with the directory's problem.
    /// Seen by a named pipe: opening it to read lets a waiting writer go.
    /// And `github.JSON` is refused by name, not skipped for the bundled file.
    @Test func aDirectoryOthersCanWriteInIsRefusedBeforeItsFilesAreOpened() throws {
        let providers = TemporaryDirectory.url("authkit-open-providers")
        defer { try? FileManager.default.removeItem(at: providers) }
        try FileManager.default.createDirectory(at: providers, withIntermediateDirectories: true)
        let pipe = providers.appendingPathComponent("github.json")
        #expect(mkfifo(pipe.path, 0o600) == 0)
        chmod(providers.path, 0o777)
        let writerGone = LockedValue(false)
        let writer = Thread {
            let fd = open(pipe.path, O_WRONLY | O_CLOEXEC)
            if fd >= 0 { close(fd) }
            writerGone.withLock { $0 = true }
        }
        writer.start()
        Thread.sleep(forTimeInterval: 0.2)
        let catalog = ProviderCatalog(includeBundled: true, directories: [providers], refusingForeignFiles: true)
        let problem = catalog.fileIssues["github"]?.first?.problem
        Thread.sleep(forTimeInterval: 0.2)
        #expect(!writerGone.withLock { $0 }, "the pipe was opened")
        #expect(
            problem?.contains("can write to its directory \(providers.path) (mode 0777)") == true
                && problem?.contains("no file in it is read") == true, "\(problem ?? "loaded")")
        // Let the writer go.
        let reader = open(pipe.path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        if reader >= 0 { close(reader) }

        chmod(providers.path, 0o700)
        try FileManager.default.removeItem(at: pipe)
        try Data(Self.oauth2("github", host: "github.example").utf8).write(
            to: providers.appendingPathComponent("github.JSON"))
        let renamed = ProviderCatalog(includeBundled: true, directories: [providers], refusingForeignFiles: true)
        #expect(
            renamed.fileIssues["github"]?.first?.problem.contains("Rename it to github.json") == true,
            "\(renamed.fileIssues)")
    }

    /// What an override loosens in ID token checks is said: the tenants a
    /// multi-tenant issuer takes (a Microsoft file without `excluding` took
    /// personal accounts' tokens where only work accounts were asked for,
    /// silently), and an issuer that differs only in case (two issuers, as
    /// `iss` is compared byte for byte; the check lowercased both).
    @Test func anOverrideLooseningIDTokenChecksIsSaid() throws {
        let directory = TemporaryDirectory.url("authkit-loosened-override")
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../providers")
        func override(_ id: String, _ change: (inout [String: Any]) throws -> Void) throws -> [String] {
            var object = try #require(
                try JSONSerialization.jsonObject(with: Data(contentsOf: root.appendingPathComponent("\(id).json")))
                    as? [String: Any])
            try change(&object)
            let file = directory.appendingPathComponent("\(id).json")
            try JSONSerialization.data(withJSONObject: object).write(to: file)
            chmod(file.path, 0o600)
            let entry = try #require(
                ProviderCatalog(includeBundled: true, directories: [directory]).entry(id: id))
            return entry.weakenedProtections
        }
        let same = try override("microsoft") { _ in }
        #expect(same.isEmpty, "\(same)")
        let noExclusion = try override("microsoft") { object in
            var openID = try #require(object["openid"] as? [String: Any])
            var tenants = try #require(openID["multiTenantIssuer"] as? [String: Any])
            tenants["excluding"] = nil
            openID["multiTenantIssuer"] = tenants
            object["openid"] = openID
        }
        #expect(noExclusion.contains { $0.contains("which tenants' ID tokens are accepted") }, "\(noExclusion)")
        let fewer = try override("microsoft") { object in
            var openID = try #require(object["openid"] as? [String: Any])
            openID["multiTenantIssuer"] = nil
            object["openid"] = openID
        }
        #expect(!fewer.contains { $0.contains("tenants") }, "\(fewer)")
        // Reordered, or narrowed (a value gone, an exclusion added): no more
        // tokens taken, nothing said.
        for change in [
            { (tenants: inout [String: Any]) in tenants["values"] = ["organizations", "common"] },
            { (tenants: inout [String: Any]) in tenants["values"] = ["organizations"] },
            { (tenants: inout [String: Any]) in
                tenants["excluding"] = ["organizations": ["9188040d-6c67-4c5b-b112-36a304b66dad"], "common": ["x"]]
            },
        ] {
            let narrowed = try override("microsoft") { object in
                var openID = try #require(object["openid"] as? [String: Any])
                var tenants = try #require(openID["multiTenantIssuer"] as? [String: Any])
                change(&tenants)
                openID["multiTenantIssuer"] = tenants
                object["openid"] = openID
            }
            #expect(narrowed.isEmpty, "\(narrowed)")
        }
        let aliased = try override("microsoft") { object in
            var openID = try #require(object["openid"] as? [String: Any])
            var tenants = try #require(openID["multiTenantIssuer"] as? [String: Any])
            tenants["aliases"] = ["consumers": "00000000-0000-0000-0000-000000000001"]
            openID["multiTenantIssuer"] = tenants
            object["openid"] = openID
        }
        #expect(aliased.contains { $0.contains("tenants") }, "\(aliased)")

        let recased = try override("microsoft") { object in
            var issuer = try #require(object["issuer"] as? [String: Any])
            issuer["identifier"] = (issuer["identifier"] as? String)?.replacingOccurrences(of: "/v2.0", with: "/V2.0")
            object["issuer"] = issuer
        }
        #expect(recased.contains { $0.contains("names another issuer") }, "\(recased)")
        // The host in another case is the same server: not another issuer.
        let host = try override("microsoft") { object in
            var issuer = try #require(object["issuer"] as? [String: Any])
            issuer["identifier"] = (issuer["identifier"] as? String)?.replacingOccurrences(
                of: "login.microsoftonline.com", with: "Login.MicrosoftOnline.com")
            object["issuer"] = issuer
        }
        #expect(!host.contains { $0.contains("names another issuer") }, "\(host)")
    }

    /// A dangling `config.json` link read as no configuration: its
    /// `"store": "keyring"` was dropped without a word and tokens went to the
    /// plaintext file. Refused, naming the file; no file at all is still none.
    @Test func aDanglingConfigurationLinkIsRefusedNotReadAsNone() throws {
        let home = TemporaryDirectory.url("authkit-dangling-config")
        defer { try? FileManager.default.removeItem(at: home) }
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        #expect(try UserConfiguration.storeSetting(home: home) == nil)
        let config = home.appendingPathComponent("config.json")
        try FileManager.default.createSymbolicLink(
            atPath: config.path, withDestinationPath: home.appendingPathComponent("dotfiles/authkit.json").path)
        for read in [
            { _ = try UserConfiguration.storeSetting(home: home) }, { _ = try UserConfiguration.load(home: home) },
        ] {
            #expect {
                try read()
            } throws: { error in
                guard case .invalidFile(let issues)? = error.authKitReason else { return false }
                return issues.first?.file == config.path && issues.first?.problem.contains("does not exist") == true
            }
        }
    }

    // MARK: - A credential stays with the endpoints that issued it

    @Test func refreshAndRevocationRefuseAnOriginTheCredentialWasNotIssuedFor() async throws {
        try await withServer { server in
            server.route("POST", "/token") { _ in
                .json(#"{"access_token":"at","token_type":"Bearer","refresh_token":"rt","expires_in":60}"#)
            }
            let original = testDescriptor(
                id: "moving", protocol: .oauth2, authorization: .init(url: "\(server.baseURL)/a"),
                token: .init(url: "\(server.baseURL)/token"), revocation: .init(url: "\(server.baseURL)/revoke"))
            let client = try OAuth2Client(
                descriptor: original, settings: ClientSettings(clientID: "c", clientSecret: "s"))
            let credential = try await client.exchange(
                code: "c",
                pending: await client.startAuthorization(redirectURI: URL(string: "http://127.0.0.1:1/cb")).pending
            )
            #expect(credential.endpointOrigins == [server.baseURL])

            // The descriptor is edited to send tokens elsewhere (here, another port).
            let elsewhere = TestHTTPServer()
            try await elsewhere.start()
            defer { Task { await elsewhere.stop() } }
            let moved = testDescriptor(
                id: "moving", protocol: .oauth2, authorization: .init(url: "\(server.baseURL)/a"),
                token: .init(url: "\(elsewhere.baseURL)/token"), revocation: .init(url: "\(elsewhere.baseURL)/revoke"))
            let movedClient = try OAuth2Client(
                descriptor: moved, settings: ClientSettings(clientID: "c", clientSecret: "s"))
            let refused = AuthKitError.signInRequired(
                credential.key, reason: .endpointChanged(origin: elsewhere.baseURL))
            await #expect(throws: refused) { _ = try await movedClient.refresh(credential) }
            await #expect(throws: refused) { try await movedClient.revoke(credential) }
            #expect(elsewhere.requests.isEmpty)
            #expect("\(refused)".contains("Sign in again"))
        }
    }

    /// A credential stored before origins were recorded (none in its file)
    /// refreshes where the descriptor says, once, and comes back with the
    /// origins: from then on it is held to them like any other.
    @Test func aCredentialWithoutOriginsIsStampedAtItsFirstRefresh() async throws {
        try await withServer { server in
            server.route("POST", "/token") { _ in
                .json(#"{"access_token":"at2","token_type":"Bearer","refresh_token":"rt2","expires_in":60}"#)
            }
            let descriptor = testDescriptor(
                id: "legacy", protocol: .oauth2, authorization: .init(url: "\(server.baseURL)/a"),
                token: .init(url: "\(server.baseURL)/token"))
            let client = try OAuth2Client(
                descriptor: descriptor, settings: ClientSettings(clientID: "c", clientSecret: "s"))
            let legacy = Credential(
                providerID: "legacy", isOAuth1: false, accessToken: "at1", tokenType: "Bearer", refreshToken: "rt1",
                obtainedAt: fixedNow)
            #expect(legacy.endpointOrigins == nil)
            let refreshed = try await client.refresh(legacy)
            #expect(refreshed.accessToken == "at2" && refreshed.endpointOrigins == [server.baseURL])

            let moved = testDescriptor(
                id: "legacy", protocol: .oauth2, authorization: .init(url: "\(server.baseURL)/a"),
                token: .init(url: "https://elsewhere.example/token"))
            let movedClient = try OAuth2Client(
                descriptor: moved, settings: ClientSettings(clientID: "c", clientSecret: "s"))
            await #expect(
                throws: AuthKitError.signInRequired(
                    refreshed.key, reason: .endpointChanged(origin: "https://elsewhere.example"))
            ) {
                _ = try await movedClient.refresh(refreshed)
            }
        }
    }

    /// Token exchange (RFC 8693) and introspection (RFC 7662) of a stored
    /// credential send its access token: held to the origins that issued it,
    /// as a refresh is, so an edited descriptor cannot collect it with
    /// `authkit token exchange` or `token status`.
    @Test func exchangeAndIntrospectionOfAStoredTokenRefuseAnotherOrigin() async throws {
        try await withServer { server in
            server.route("POST", "/token") { _ in
                .json(#"{"access_token":"at","token_type":"Bearer","refresh_token":"rt","expires_in":3600}"#)
            }
            let original = testDescriptor(
                id: "moving", protocol: .oauth2, authorization: .init(url: "\(server.baseURL)/a"),
                token: .init(url: "\(server.baseURL)/token"))
            let client = try OAuth2Client(
                descriptor: original, settings: ClientSettings(clientID: "c", clientSecret: "s"))
            let credential = try await client.exchange(
                code: "c",
                pending: await client.startAuthorization(redirectURI: URL(string: "http://127.0.0.1:1/cb")).pending
            )
            let elsewhere = TestHTTPServer()
            try await elsewhere.start()
            defer { Task { await elsewhere.stop() } }
            elsewhere.route("POST", "/token") { _ in .json(#"{"access_token":"x","token_type":"Bearer"}"#) }
            elsewhere.route("POST", "/introspect") { _ in .json(#"{"active":true}"#) }
            var moved = testDescriptor(
                id: "moving", protocol: .oauth2, authorization: .init(url: "\(server.baseURL)/a"),
                token: .init(url: "\(elsewhere.baseURL)/token"))
            moved.introspectionURL = "\(elsewhere.baseURL)/introspect"
            let movedClient = try OAuth2Client(
                descriptor: moved, settings: ClientSettings(clientID: "c", clientSecret: "s"))
            let refused = AuthKitError.signInRequired(
                credential.key, reason: .endpointChanged(origin: elsewhere.baseURL))
            await #expect(throws: refused) { _ = try await movedClient.exchangeToken(credential, audience: ["x"]) }
            await #expect(throws: refused) { _ = try await movedClient.introspect(credential) }
            #expect(elsewhere.requests.isEmpty)
            // Where it was issued, both go.
            server.route("POST", "/introspect") { _ in .json(#"{"active":true,"sub":"u1"}"#) }
            var same = original
            same.introspectionURL = "\(server.baseURL)/introspect"
            let sameClient = try OAuth2Client(
                descriptor: same, settings: ClientSettings(clientID: "c", clientSecret: "s"))
            #expect(try await sameClient.introspect(credential).subject == "u1")
            let exchanged = try await sameClient.exchangeToken(credential, audience: ["x"])
            #expect(exchanged.accessToken == "at")
            #expect(server.requests.last?.bodyText.contains("subject_token=at") == true)
        }
    }
}

/// PKCE S256 is on unless a descriptor says "none", and a client without a
/// secret uses it whatever the descriptor says (RFC 8252 §8.1, RFC 9700 §2.1.1).
@Suite struct PKCEDefaultTests {
    func challenge(pkce: PKCEMode?, secret: String?) async throws -> String? {
        let descriptor = testDescriptor(
            id: "p", protocol: .oauth2, authorization: .init(url: "https://as.example/authorize"),
            token: .init(url: "https://as.example/token"), pkce: pkce)
        let client = try OAuth2Client(
            descriptor: descriptor, settings: ClientSettings(clientID: "c", clientSecret: secret))
        let url = try await client.startAuthorization(redirectURI: URL(string: "http://127.0.0.1:1/cb")).url
        return URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems?.first {
            $0.name == "code_challenge"
        }?.value
    }

    @Test func onUnlessTheDescriptorSaysNone() async throws {
        #expect(try await challenge(pkce: nil, secret: "s") != nil)
        #expect(try await challenge(pkce: .s256, secret: "s") != nil)
        #expect(try await challenge(pkce: PKCEMode.none, secret: "s") == nil)
    }

    @Test func aPublicClientAlwaysUsesIt() async throws {
        #expect(try await challenge(pkce: PKCEMode.none, secret: nil) != nil)
    }

    @Test func bundledDescriptorsStateTheirChoice() throws {
        for (name, json) in BundledDescriptors.files where !json.contains(#""protocol": "oauth1""#) {
            #expect(json.contains(#""pkce":"#), "\(name) does not say whether its provider supports PKCE")
        }
    }
}
