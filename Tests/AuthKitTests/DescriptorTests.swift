import AuthKitTestSupport
import Foundation
import Testing

@testable import AuthKit

@Suite struct DescriptorTests {
    /// A minimal valid OAuth 2.0 descriptor, as JSON text, for mutation.
    static let minimal = """
        {
          "id": "example",
          "name": "Example",
          "protocol": "oauth2",
          "authorization": {"url": "https://example.com/authorize"},
          "token": {"url": "https://example.com/token"}
        }
        """

    func issues(_ json: String, file: String = "/tmp/example.json") -> [FileIssue] {
        do {
            _ = try DescriptorLoader().decode(Data(json.utf8), file: file)
            return []
        } catch let error as AuthKitError {
            guard case .invalidFile(let issues) = error.reason else {
                Issue.record("unexpected error \(error)")
                return []
            }
            return issues
        } catch {
            Issue.record("unexpected error \(error)")
            return []
        }
    }

    @Test func bundledDescriptorsAllLoad() throws {
        let catalog = ProviderCatalog(includeBundled: true, directories: [])
        #expect(catalog.problems.isEmpty, "\(catalog.problems)")
        #expect(Set(catalog.ids).isSuperset(of: ["qiita", "instagram", "github", "qiita-team"]))
    }

    @Test func bundledDescriptorsMatchTheProvidersFolder() throws {
        // BundledDescriptors.swift is generated from providers/*.json; it must not drift.
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../providers").standardized
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path)
            .filter { $0.hasSuffix(".json") && $0 != "schema.json" }.sorted()
        #expect(BundledDescriptors.files.map(\.name) == files)
        for (name, json) in BundledDescriptors.files {
            let onDisk = try String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8)
            #expect(onDisk.trimmingCharacters(in: .newlines) == json, "run scripts/embed-providers: \(name) changed")
        }
        // The schema the loader checks files against is embedded too (a
        // schema edit without the script was found only by CI's --check).
        let schema = try String(contentsOf: folder.appendingPathComponent("schema.json"), encoding: .utf8)
        #expect(
            schema.trimmingCharacters(in: .newlines) == BundledDescriptors.schema,
            "run scripts/embed-providers: schema.json changed")
    }

    @Test func bundledOutlinesMatchTheirFiles() throws {
        // The clash check trusts these instead of parsing each bundled file.
        #expect(Set(BundledDescriptors.outlines.keys) == Set(BundledDescriptors.files.map(\.name)))
        for (name, json) in BundledDescriptors.files {
            let descriptor = try DescriptorLoader().decode(Data(json.utf8), file: name)
            let outline = try #require(BundledDescriptors.outlines[name])
            #expect(outline.id == descriptor.id, "run scripts/embed-providers: \(name)")
            #expect(
                outline.placeholders == descriptor.placeholders.keys.sorted(), "run scripts/embed-providers: \(name)")
        }
    }

    /// `patternProperties` keys: the schema's leading character class is
    /// matched without the regex engine, and every pattern means what the
    /// regex engine says it means.
    @Test func schemaNamePatternsMatchAsTheRegexEngineDoes() throws {
        let names = ["$schema", "_comment", "schema", "", "x_y", "abc", "1bc", "a9", "é", "$", "_"]
        for pattern in ["^[$_]", "^[a-z]", "^x_", "[0-9]$", "^[^a]", "^[_]"] {
            let own = try #require(SchemaCheck.NamePattern(pattern))
            let regex = try Regex(pattern)
            for name in names {
                #expect(own.matches(name) == name.contains(regex), "\(pattern) on '\(name)'")
            }
        }
        guard case .firstCharacter? = SchemaCheck.NamePattern("^[$_]") else {
            Issue.record("the schema's own pattern should not need the regex engine")
            return
        }
        #expect(SchemaCheck.NamePattern("^[") == nil) // not a pattern: ignored, as before
    }

    @Test func qiitaIsDescribedAccurately() throws {
        let qiita = try bundledDescriptor("qiita")
        #expect(qiita.authorization?.url == "https://qiita.com/api/v2/oauth/authorize")
        #expect(qiita.authorization?.sendRedirectURI == false)
        #expect(qiita.authorization?.sendResponseType == false)
        #expect(qiita.token?.url == "https://qiita.com/api/v2/access_tokens")
        #expect(qiita.token?.encoding == .json)
        #expect(qiita.token?.successStatus == [201])
        #expect(qiita.token?.response.accessToken == "token")
        #expect(qiita.revocation?.method == "DELETE")
        #expect(qiita.pkce == .none)
    }

    @Test func instagramIsDescribedAccurately() throws {
        let instagram = try bundledDescriptor("instagram")
        #expect(instagram.authorization?.url == "https://www.instagram.com/oauth/authorize")
        #expect(instagram.token?.url == "https://api.instagram.com/oauth/access_token")
        #expect(instagram.scopes.separator == ",")
        #expect(instagram.redirect.scheme == "https" && instagram.redirect.schemeIsRequired)
        #expect(instagram.redirect.appendedFragment == "_")
        #expect(instagram.followUp?.url == "https://graph.instagram.com/access_token")
        #expect(instagram.followUp?.parameters["grant_type"] == "ig_exchange_token")
        #expect(instagram.refresh?.parameters["grant_type"] == "ig_refresh_token")
    }

    @Test func missingEndpointIsNamed() {
        let json = Self.minimal.replacingOccurrences(
            of: #""token": {"url": "https://example.com/token"}"#, with: #""pkce": "S256""#)
        let found = issues(json)
        #expect(found.contains { $0.field == "token" && $0.problem.contains("missing") })
        #expect(found.allSatisfy { $0.file == "/tmp/example.json" })
    }

    /// RFC 8414 §2 lets a server without the authorization code grant omit
    /// its authorization endpoint: with a `device` section that is a
    /// device-only provider; with neither, there is no way in, and the
    /// message names both ways to fix it.
    @Test func authorizationMayBeLeftOutOnlyForADeviceOnlyProvider() throws {
        let withoutAuthorization = Self.minimal.replacingOccurrences(
            of: #""authorization": {"url": "https://example.com/authorize"},"#, with: "")
        let neither = issues(withoutAuthorization)
        #expect(neither.contains { $0.field == "authorization" && $0.problem.contains("missing") }, "\(neither)")
        let validatorSays = DescriptorValidator().validate(
            try JSONDecoder().decode(DescriptorFile.self, from: Data(withoutAuthorization.utf8)), file: "x.json")
        #expect(
            validatorSays.contains { $0.field == "authorization" && $0.problem.contains("\"device\" section") },
            "\(validatorSays)")

        let deviceOnly = withoutAuthorization.replacingOccurrences(
            of: #""protocol": "oauth2","#,
            with: #""protocol": "oauth2", "device": {"url": "https://example.com/device"},"#)
        #expect(issues(deviceOnly).isEmpty, "\(issues(deviceOnly))")
        let descriptor = try DescriptorLoader().decode(Data(deviceOnly.utf8), file: "/tmp/example.json")
        #expect(descriptor.isDeviceOnly && descriptor.authorization == nil && descriptor.supportsDeviceGrant)
        #expect(try DescriptorLoader().decode(Data(Self.minimal.utf8), file: "/tmp/example.json").isDeviceOnly == false)
        // A device-only descriptor written out loads again unchanged.
        #expect(try DescriptorLoader().decode(try descriptor.encodedAsFile(), file: "/tmp/example.json") == descriptor)
    }

    @Test func emptyEndpointURLIsNamed() {
        let json = Self.minimal.replacingOccurrences(of: "https://example.com/token", with: "")
        #expect(issues(json).contains { $0.field == "token.url" })
    }

    @Test func plainHTTPIsRejectedUnlessLoopback() {
        let insecure = Self.minimal.replacingOccurrences(
            of: "https://example.com/token", with: "http://example.com/token")
        let found = issues(insecure)
        #expect(found.count == 1)
        #expect(found.first?.field == "token.url")
        #expect(found.first?.problem.contains("https") == true)

        for loopback in ["http://127.0.0.1:8080/token", "http://[::1]:9/token", "http://localhost/token"] {
            let ok = Self.minimal.replacingOccurrences(of: "https://example.com/token", with: loopback)
            #expect(issues(ok).isEmpty, "\(loopback)")
        }
    }

    /// User info in an endpoint would be sent as Basic credentials by the
    /// transport, beside AuthKit's; the error does not repeat the password.
    /// Discovered metadata goes through the same check.
    @Test func userInfoInAnEndpointIsRejected() {
        for url in [
            "https://me:hunter2@example.com/token", "https://me@example.com/token",
            "https://:hunter2@example.com/token",
        ] {
            let found = issues(Self.minimal.replacingOccurrences(of: "https://example.com/token", with: url))
            #expect(found.count == 1 && found.first?.field == "token.url", "\(url): \(found)")
            #expect(found.first?.problem.contains("user name or password") == true)
            #expect(found.allSatisfy { !$0.description.contains("hunter2") })
        }
        // With no host after it, the URL failed an earlier check, whose
        // error quoted it, password and all.
        for url in ["https://client:hunter2@/token", "client:hunter2@example.com/token"] {
            let found = issues(Self.minimal.replacingOccurrences(of: "https://example.com/token", with: url))
            #expect(found.first?.field == "token.url", "\(url): \(found)")
            #expect(found.allSatisfy { !$0.description.contains("hunter2") }, "\(found)")
        }
        #expect(
            issues(
                Self.minimal.replacingOccurrences(
                    of: "https://example.com/token", with: "https://example.com/token?user=@x")
            ).isEmpty,
            "an @ in the query is not user info")
    }

    /// The host in the file is the one requests go to: not a look-alike
    /// letter (the transports would send `xn--gthub-n2e.com` for `gіthub.com`)
    /// nor percent-encoding (libcurl and browsers send `github.com%2eevil.example` to
    /// `github.com.evil.example`). The schema agrees
    /// (`Tests/Schema/validate_providers.py`).
    @Test func aHostIsWrittenAsTheNameRequestsGoTo() {
        let refused = [
            ("https://g\u{0456}thub.com/login/oauth/access_token", "is not ASCII"),
            ("https://bücher.de:8443/token", "is not ASCII"),
            ("https://github.com%2eevil.example/token", "is percent-encoded"),
            ("https://a!b.example/token", "holds '!'"),
        ]
        for (url, problem) in refused {
            let found = issues(Self.minimal.replacingOccurrences(of: "https://example.com/token", with: url))
            #expect(
                found.count == 1 && found.first?.field == "token.url" && found.first?.problem.contains(problem) == true,
                "\(url): \(found)")
        }
        for url in [
            "https://xn--bcher-kva.de:8443/token", "https://login_eu.example.com/token",
            "https://[2001:db8::1]:8443/token",
            "https://EXAMPLE.com/token", "https://example.com?x=%C3%BC",
        ] {
            #expect(
                issues(Self.minimal.replacingOccurrences(of: "https://example.com/token", with: url)).isEmpty, "\(url)")
        }
    }

    /// A provider file's strings are shown on terminals ("approve access to
    /// NAME"): one holding a control character is refused where it is,
    /// comments aside, rather than escaped at every place it is shown.
    @Test func controlCharactersAreRefusedWhereTheyAre() {
        let json = Self.minimal
            .replacingOccurrences(
                of: #""name": "Example","#,
                with: #""name": "Example\u001b]0;pwned\u0007", "_comment": "line\nbreaks are fine here","#
            )
            .replacingOccurrences(
                of: #""protocol": "oauth2","#,
                with: #""protocol": "oauth2", "scopes": {"default": ["read", "write\u009b"]},"#)
        let found = issues(json)
        #expect(found.map(\.field) == ["name", "scopes.default[1]"], "\(found)")
        #expect(found.first?.problem.hasPrefix("holds a control character (U+001B)") == true)
        #expect(found.last?.problem.hasPrefix("holds a control character (U+009B)") == true)
        // A right-to-left override would make the name show as another
        // provider's ("Go\u{202E}elgoo" reads "Google"-like); a name in a
        // right-to-left script needs none and is kept.
        let spoofed = issues(
            Self.minimal.replacingOccurrences(of: #""name": "Example","#, with: #""name": "Go\u202eelgoo\u202c","#))
        #expect(
            spoofed.map(\.field) == ["name"]
                && spoofed.first?.problem.hasPrefix("holds an invisible formatting character (U+202E)") == true,
            "\(spoofed)")
        #expect(
            issues(Self.minimal.replacingOccurrences(of: #""name": "Example","#, with: #""name": "مثال","#)).isEmpty)
        // A member's name too (a parameter's is sent and shown as a value is).
        let named = issues(
            Self.minimal.replacingOccurrences(
                of: #""authorization": {"url": "https://example.com/authorize"}"#,
                with: #""authorization": {"url": "https://example.com/authorize", "parameters": {"a\u001b[2Jb": "x"}}"#)
        )
        #expect(
            named.contains {
                $0.field.hasPrefix("authorization.parameters.a") && $0.problem.contains("name holding a control")
            }, "\(named)")
    }

    @Test func unknownProtocolIsNamed() {
        let found = issues(Self.minimal.replacingOccurrences(of: "\"oauth2\"", with: "\"oauth3\""))
        #expect(found.count == 1)
        #expect(found.first?.field == "protocol")
        #expect(found.first?.problem.contains("oauth2") == true)
    }

    @Test func unresolvedPlaceholderIsNamed() {
        let json = Self.minimal.replacingOccurrences(
            of: "https://example.com/authorize", with: "https://{tenant}.example.com/authorize")
        let found = issues(json)
        #expect(found.count == 1)
        #expect(found.first?.field == "authorization.url")
        #expect(found.first?.problem.contains("{tenant}") == true)

        let declared = json.replacingOccurrences(
            of: "\"protocol\": \"oauth2\",", with: "\"protocol\": \"oauth2\", \"placeholders\": {\"tenant\": {}},")
        #expect(issues(declared).isEmpty)
    }

    /// A multi-tenant issuer's aliases name one tenant each, and only an
    /// "any tenant" value can exclude tenants.
    @Test func multiTenantAliasesAndExclusionsAreChecked() {
        func descriptor(_ tenants: String) -> String {
            """
            {
              "id": "example", "name": "Example", "protocol": "oauth2",
              "placeholders": {"tenant": {"default": "common"}},
              "authorization": {"url": "https://example.com/{tenant}/authorize"},
              "token": {"url": "https://example.com/{tenant}/token"},
              "issuer": {"identifier": "https://example.com/{tenant}/v2.0"},
              "openid": {"keys": "https://example.com/{tenant}/keys", "multiTenantIssuer": {
                "placeholder": "tenant", "claim": "tid", "values": ["common", "organizations"], \(tenants)}}
            }
            """
        }
        #expect(
            issues(descriptor(#""aliases": {"consumers": "9188-ab"}, "excluding": {"organizations": ["9188-ab"]}"#))
                .isEmpty)
        let found = issues(
            descriptor(#""aliases": {"common": "x", "mine": "a/b"}, "excluding": {"consumers": ["9188-ab"]}"#))
        #expect(
            found.map(\.field)
                == [
                    "openid.multiTenantIssuer.aliases", "openid.multiTenantIssuer.aliases.mine",
                    "openid.multiTenantIssuer.excluding",
                ], "\(found)")
        #expect(found.last?.problem.contains("'consumers' is not one of values") == true, "\(found)")
    }

    /// A placeholder value is "any tenant", an alias or excluded by its
    /// bytes, as `iss` is compared: `contains` and a dictionary's lookup
    /// took a spelling with the Kelvin sign (U+212A) for one with a K.
    @Test func multiTenantValuesAreComparedByteForByte() throws {
        let tenants = try JSONDecoder().decode(
            MultiTenantIssuer.self,
            from: Data(
                #"{"placeholder":"tenant","claim":"tid","values":["Kommon"],"aliases":{"Konsumer":"9188"},"excluding":{"Kommon":["x"]}}"#
                    .utf8))
        let kelvin = "\u{212A}"
        #expect("\(kelvin)ommon" == "Kommon", "Swift's == is canonical equivalence")
        #expect(tenants.meansAnyTenant("Kommon") && !tenants.meansAnyTenant("\(kelvin)ommon"))
        #expect(tenants.alias(of: "Konsumer") == "9188" && tenants.alias(of: "\(kelvin)onsumer") == nil)
        #expect(tenants.exclusions(for: "Kommon") == ["x"] && tenants.exclusions(for: "\(kelvin)ommon").isEmpty)
        #expect(tenants.issuerValue(for: "\(kelvin)onsumer") == "\(kelvin)onsumer")
    }

    /// A placeholder's default is checked as a user's value would be: where
    /// it stands in a host, it must make one.
    @Test func aPlaceholderDefaultThatMakesNoHostIsNamed() {
        let json = Self.minimal.replacingOccurrences(
            of: "https://example.com/authorize", with: "https://{host}/authorize"
        )
        .replacingOccurrences(
            of: "\"protocol\": \"oauth2\",",
            with: "\"protocol\": \"oauth2\", \"placeholders\": {\"host\": {\"default\": \"me@example.com\"}},")
        let found = issues(json)
        #expect(found.map(\.field) == ["placeholders.host.default"])
        #expect(found.first?.problem.contains("'me@example.com' holds '@', which no host name has") == true, "\(found)")
        #expect(issues(json.replacingOccurrences(of: "me@example.com", with: "example.com:8443")).isEmpty)
    }

    /// A descriptor's scopes are RFC 6749 §3.3 tokens too.
    @Test func scopesThatAreNotScopeTokensAreNamed() {
        let json = Self.minimal.replacingOccurrences(
            of: "\"protocol\": \"oauth2\",",
            with:
                "\"protocol\": \"oauth2\", \"scopes\": {\"default\": [\"openid profile\"], \"known\": [\"ok\", \"caf\u{E9}\"]},"
        )
        let found = issues(json)
        #expect(found.map(\.field) == ["scopes.default[0]", "scopes.known[1]"], "\(found)")
        #expect(
            found.first?.problem.contains("is several scopes; list each on its own: \"openid\", \"profile\"") == true,
            "\(found)")
        #expect(found.last?.problem.contains("a non-ASCII one") == true, "\(found)")
    }

    @Test func malformedJSONReportsWhere() {
        let found = issues("{\n  \"id\": \"x\",\n  \"name\": oops\n}")
        #expect(found.count == 1)
        #expect(found.first?.field == "")
        #expect(found.first?.problem.contains("not valid JSON") == true)
        #expect(found.first?.problem.contains("line 3") == true, "\(found.first?.problem ?? "")")
    }

    @Test func wrongTypeAndMissingFieldAreNamed() {
        let wrongType = issues(
            Self.minimal.replacingOccurrences(
                of: #""token": {"url": "https://example.com/token"}"#,
                with: #""token": {"url": "https://example.com/token", "successStatus": "201"}"#))
        #expect(wrongType.first?.field == "token.successStatus")
        let missingID = issues(Self.minimal.replacingOccurrences(of: #""id": "example","#, with: ""))
        #expect(missingID.first?.field == "id")
        #expect(missingID.first?.problem.contains("missing") == true)
    }

    @Test func misspelledFieldIsReported() {
        let json = Self.minimal.replacingOccurrences(
            of: #""authorization": {"url": "https://example.com/authorize"}"#,
            with: #""authorization": {"url": "https://example.com/authorize", "sendRedirectUri": false}"#)
        let found = issues(json)
        #expect(found.map(\.field) == ["authorization.sendRedirectUri"])
    }

    @Test func badRedirectAndStatusesAreNamed() {
        let json = Self.minimal.replacingOccurrences(
            of: "\"protocol\": \"oauth2\",",
            with: """
                "protocol": "oauth2", "redirect": {"host": "example.com", "port": 70000, "path": "cb"},
                """
        ).replacingOccurrences(
            of: #""token": {"url": "https://example.com/token"}"#,
            with: #""token": {"url": "https://example.com/token", "successStatus": [400]}"#)
        let fields = Set(issues(json).map(\.field))
        #expect(fields == ["redirect.port", "redirect.path", "redirect.host", "token.successStatus"])
    }

    /// A scheme Foundation cannot hold stopped the process at the first
    /// client built from the file (the file had passed `providers validate`):
    /// refused by name, as every other field.
    @Test func aRedirectSchemeThatIsNoSchemeIsRefused() throws {
        for scheme in ["my_app", "", "1app", "app://", "ap p"] {
            let json = Self.minimal.replacingOccurrences(
                of: "\"protocol\": \"oauth2\",", with: #""protocol": "oauth2", "redirect": {"scheme": "\#(scheme)"},"#)
            #expect(issues(json).map(\.field) == ["redirect.scheme"], "\(scheme)")
        }
        let custom = Self.minimal.replacingOccurrences(
            of: "\"protocol\": \"oauth2\",",
            with: #""protocol": "oauth2", "redirect": {"scheme": "com.example.app+x-1"},"#)
        #expect(issues(custom).isEmpty)
        #expect(
            RedirectSettings(scheme: "my_app", schemeIsRequired: true, host: "h", port: nil, path: "/cb").uri.scheme
                == "http")
    }

    /// The issuer is filled in like an endpoint: a variable it names must be
    /// a declared placeholder (no run-time value, such as `{client_id}`).
    @Test func anIssuerNamingAnUndeclaredPlaceholderIsRefused() {
        for identifier in ["https://idp.example/{realm}", "https://idp.example/{client_id}"] {
            let json = Self.minimal.replacingOccurrences(
                of: "\"protocol\": \"oauth2\",",
                with: #""protocol": "oauth2", "issuer": {"identifier": "\#(identifier)"},"#)
            #expect(issues(json).map(\.field) == ["issuer.identifier"], "\(identifier)")
        }
        let declared = Self.minimal.replacingOccurrences(
            of: "\"protocol\": \"oauth2\",",
            with:
                #""protocol": "oauth2", "placeholders": {"realm": {"description": "the realm", "default": "main"}}, "issuer": {"identifier": "https://idp.example/{realm}"},"#
        )
        #expect(issues(declared).isEmpty)
    }

    @Test func clientSecretInAuthorizationParametersIsRejected() {
        let json = Self.minimal.replacingOccurrences(
            of: #""authorization": {"url": "https://example.com/authorize"}"#,
            with: #""authorization": {"url": "https://example.com/authorize", "parameters": {"client_secret": "x"}}"#)
        #expect(issues(json).map(\.field) == ["authorization.parameters.client_secret"])
    }

    /// Foundation's decoder would take the first of two `token` sections,
    /// a reviewer, `jq` and the schema check the last (RFC 8259 §4 leaves it
    /// open): the file is refused, naming the field and both lines.
    @Test func aFieldGivenTwiceIsRefused() {
        let json = Self.minimal.replacingOccurrences(
            of: #""token": {"url": "https://example.com/token"}"#,
            with:
                "\"token\": {\"url\": \"https://attacker.example/token\"},\n\"token\": {\"url\": \"https://example.com/token\"}"
        )
        let found = issues(json)
        #expect(found.map(\.field) == ["token"])
        let lines = json.split(separator: "\n", omittingEmptySubsequences: false).enumerated().filter {
            $0.element.contains("\"token\": {")
        }.map { $0.offset + 1 }
        #expect(
            lines.count == 2
                && found.first?.problem.hasPrefix("is given twice (lines \(lines[0]) and \(lines[1])).") == true,
            "\(found)")
        // On one line (discovery metadata often is), "lines 1 and 1" said nothing: the columns are given.
        #expect(
            issues(#"{"id": "x", "id": "x"}"#).first?.problem.hasPrefix("is given twice (line 1, columns 2 and 13).")
                == true)
    }

    @Test func errorDescriptionNamesFileAndField() {
        let issue = FileIssue(
            file: "/home/u/.config/authkit/providers/x.json", field: "token.url", problem: "must use https.")
        #expect(issue.description == "/home/u/.config/authkit/providers/x.json: field 'token.url': must use https.")
    }

    /// What a later answer must not inherit is taken out where a path
    /// points (TokenEndpointCalls): nested in a member or an array's
    /// element, the rest left as it was; an array is never renumbered.
    @Test func aFieldPathIsRemovedWhereItPoints() throws {
        let object: [String: JSONValue] = [
            "data": .array([.object(["access_token": .string("inner"), "user_id": .integer(7)]), .string("second")]),
            "authed_user": .object(["access_token": .string("user"), "id": .string("U1")]),
            "token": .string("top"),
        ]
        let nested = try #require(FieldPath("authed_user.access_token")).removed(from: object)
        #expect(nested["authed_user"] == .object(["id": .string("U1")]) && nested["data"] == object["data"])
        let inArray = try #require(FieldPath("data[0].access_token")).removed(from: object)
        #expect(inArray["data"] == .array([.object(["user_id": .integer(7)]), .string("second")]))
        #expect(try #require(FieldPath("token")).removed(from: object)["token"] == nil)
        // Absent, or ending at an index: unchanged.
        #expect(try #require(FieldPath("data[5].access_token")).removed(from: object) == object)
        #expect(try #require(FieldPath("authed_user.scope.x")).removed(from: object) == object)
        #expect(try #require(FieldPath("data[1]")).removed(from: object) == object)
    }

    @Test func fieldPaths() throws {
        let object: [String: JSONValue] = [
            "data": .array([.object(["access_token": .string("inner")])]),
            "authed_user": .object(["access_token": .string("user")]),
        ]
        #expect(FieldPath("data[0].access_token")?.value(in: object) == .string("inner"))
        #expect(FieldPath("authed_user.access_token")?.value(in: object) == .string("user"))
        #expect(FieldPath("data[1].access_token")?.value(in: object) == nil)
        #expect(FieldPath("") == nil)
        #expect(FieldPath("a..b") == nil)
        #expect(FieldPath("a[x]") == nil)
        let paths: FieldPaths = ["access_token", "data[0].access_token"]
        #expect(paths.firstValue(in: object)?.value == .string("inner"))
    }
}

@Suite struct ProviderCatalogTests {
    func temporaryDirectory() throws -> URL {
        let url = TemporaryDirectory.url("authkit-tests")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    @Test func userFileOverridesBundledOne() throws {
        let home = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: home) }
        let providers = home.appendingPathComponent("providers")
        try FileManager.default.createDirectory(at: providers, withIntermediateDirectories: true)
        let override = DescriptorTests.minimal
            .replacingOccurrences(of: "\"example\"", with: "\"qiita\"")
            .replacingOccurrences(of: "https://example.com", with: "http://127.0.0.1:9999")
        try override.write(to: providers.appendingPathComponent("qiita.json"), atomically: true, encoding: .utf8)

        let catalog = ProviderCatalog.standard(environment: ["AUTHKIT_HOME": home.path])
        let qiita = try catalog.descriptor(id: "qiita")
        #expect(qiita.token?.url == "http://127.0.0.1:9999/token")
        #expect(catalog.entries["qiita"]?.file == providers.appendingPathComponent("qiita.json").path)
        // Other bundled providers are still there.
        #expect(try catalog.descriptor(id: "instagram").name == "Instagram")
    }

    @Test func brokenUserFileIsReportedNotSilentlyReplaced() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        try "{ \"id\": \"qiita\", ".write(
            to: dir.appendingPathComponent("qiita.json"), atomically: true, encoding: .utf8)
        let catalog = ProviderCatalog(includeBundled: true, directories: [dir])
        #expect {
            try catalog.descriptor(id: "qiita")
        } throws: { error in
            guard case .invalidFile(let issues)? = error.authKitReason else { return false }
            return issues.first?.file.hasSuffix("qiita.json") == true
                && issues.first?.problem.contains("not valid JSON") == true
        }
    }

    @Test func unknownProviderSuggestsNearestNames() throws {
        let catalog = ProviderCatalog(includeBundled: true, directories: [])
        #expect {
            try catalog.descriptor(id: "quiita")
        } throws: { error in
            guard case .unknownProvider(let id, let suggestions)? = error.authKitReason else { return false }
            return id == "quiita" && suggestions.first == "qiita"
        }
        #expect(catalog.suggestions(for: "instagam") == ["instagram"])
    }

    @Test func additionalDirectoriesComeLast() throws {
        let first = try temporaryDirectory()
        let second = try temporaryDirectory()
        defer {
            try? FileManager.default.removeItem(at: first)
            try? FileManager.default.removeItem(at: second)
        }
        try DescriptorTests.minimal.replacingOccurrences(of: "\"Example\"", with: "\"First\"")
            .write(to: first.appendingPathComponent("example.json"), atomically: true, encoding: .utf8)
        try DescriptorTests.minimal.replacingOccurrences(of: "\"Example\"", with: "\"Second\"")
            .write(to: second.appendingPathComponent("example.json"), atomically: true, encoding: .utf8)
        let catalog = ProviderCatalog(directories: [first, second])
        #expect(try catalog.descriptor(id: "example").name == "Second")
    }
}
