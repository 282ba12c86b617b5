import AuthKitTestSupport
import Foundation
import Testing

@testable import AuthKit

/// Discovery from an issuer (RFC 8414, OpenID Connect) into a descriptor.
@Suite struct ProviderDiscoveryTests {
    func metadata(_ server: TestHTTPServer, issuer: String? = nil, extra: String = "") -> String {
        #"{"issuer":"\#(issuer ?? server.baseURL)","authorization_endpoint":"\#(server.baseURL)/authorize","token_endpoint":"\#(server.baseURL)/token","revocation_endpoint":"\#(server.baseURL)/revoke","device_authorization_endpoint":"\#(server.baseURL)/device","code_challenge_methods_supported":["plain","S256"],"token_endpoint_auth_methods_supported":["client_secret_post","client_secret_basic"],"authorization_response_iss_parameter_supported":true,"scopes_supported":["read","write"]\#(extra)}"#
    }

    @Test func rfc8414MetadataBecomesADescriptor() async throws {
        try await withServer { server in
            server.route("GET", "/.well-known/oauth-authorization-server") { _ in .json(metadata(server)) }
            let descriptor = try await ProviderDescriptor.discover(issuer: URL(string: server.baseURL)!, id: "found")
            #expect(descriptor.id == "found" && descriptor.protocol == .oauth2)
            #expect(
                descriptor.authorization?.url == "\(server.baseURL)/authorize"
                    && descriptor.token?.url == "\(server.baseURL)/token")
            #expect(
                descriptor.revocation?.url == "\(server.baseURL)/revoke"
                    && descriptor.device?.url == "\(server.baseURL)/device")
            #expect(descriptor.pkce == .s256 && descriptor.token?.clientAuthentication == .basic)
            #expect(descriptor.issuer == IssuerSettings(identifier: server.baseURL, includedInResponse: true))
            #expect(descriptor.scopes.known == ["read", "write"])
            // What `providers add` writes loads again as the same descriptor.
            let again = try DescriptorLoader().decode(try descriptor.encodedAsFile(), file: descriptor.source)
            #expect(again == descriptor)
        }
    }

    /// An OpenID provider's metadata (Discovery 1.0 §3) gives the `openid`
    /// part: its keys, the algorithms AuthKit verifies of those it lists,
    /// UserInfo and end session; a provider signing only with HMAC gets none.
    @Test func anOpenIDProvidersMetadataGivesTheOpenIDPart() async throws {
        try await withServer { server in
            let base = server.baseURL
            let openID = metadata(
                server,
                extra:
                    #","jwks_uri":"\#(base)/jwks","id_token_signing_alg_values_supported":["HS256","RS256","ES256","none"],"userinfo_endpoint":"\#(base)/userinfo","end_session_endpoint":"\#(base)/logout/{x}""#
            )
            server.route("GET", "/.well-known/oauth-authorization-server") { _ in .json(openID) }
            let descriptor = try await ProviderDescriptor.discover(issuer: URL(string: base)!, id: "found")
            #expect(
                descriptor.openID
                    == OpenIDSettings(
                        keySetURL: "\(base)/jwks", algorithms: [.rs256, .es256], userInfoURL: "\(base)/userinfo",
                        endSessionURL: "\(base)/logout/%7Bx%7D"))
            let again = try DescriptorLoader().decode(try descriptor.encodedAsFile(), file: descriptor.source)
            #expect(again == descriptor)
        }
        try await withServer { server in
            let hmacOnly = metadata(
                server,
                extra: #","jwks_uri":"\#(server.baseURL)/jwks","id_token_signing_alg_values_supported":["HS256"]"#)
            server.route("GET", "/.well-known/oauth-authorization-server") { _ in .json(hmacOnly) }
            let descriptor = try await ProviderDescriptor.discover(issuer: URL(string: server.baseURL)!, id: "found")
            #expect(descriptor.openID == nil)
        }
        try await withServer { server in
            let wrongType = metadata(server, extra: #","jwks_uri":["\#(server.baseURL)/jwks"]"#)
            server.route("GET", "/.well-known/oauth-authorization-server") { _ in .json(wrongType) }
            await #expect {
                _ = try await ProviderDescriptor.discover(issuer: URL(string: server.baseURL)!, id: "found")
            } throws: { error in
                guard case .invalidFile(let issues)? = error.authKitReason else { return false }
                return issues.first?.field == "jwks_uri"
            }
        }
    }

    /// `scopes_supported` only informs: a value that is no RFC 6749 scope
    /// token is left out rather than refusing the whole server (it was
    /// refused once descriptors' scopes were checked), while a control
    /// character still refuses it, as in any discovered text.
    @Test func scopesThatAreNotScopeTokensAreLeftOutOfDiscovery() async throws {
        try await withServer { server in
            let odd = metadata(server).replacingOccurrences(
                of: #"["read","write"]"#, with: #"["read","a b","","caf\u00e9","write"]"#)
            server.route("GET", "/.well-known/oauth-authorization-server") { _ in .json(odd) }
            let descriptor = try await ProviderDescriptor.discover(issuer: URL(string: server.baseURL)!, id: "found")
            #expect(descriptor.scopes.known == ["read", "write"])
        }
        try await withServer { server in
            let hostile = metadata(server).replacingOccurrences(
                of: #"["read","write"]"#, with: #"["read","x\u001b[2Jy"]"#)
            server.route("GET", "/.well-known/oauth-authorization-server") { _ in .json(hostile) }
            await #expect {
                _ = try await ProviderDescriptor.discover(issuer: URL(string: server.baseURL)!, id: "found")
            } throws: { error in
                guard case .invalidFile(let issues)? = error.authKitReason else { return false }
                // Said of the metadata (its member), without advice to edit a file the user does not have.
                return issues.contains {
                    $0.field == "scopes_supported" && $0.problem.contains("control character")
                        && $0.problem.hasSuffix(
                            "AuthKit does not write it into a provider file, so this metadata is refused.")
                }
            }
        }
    }

    /// A remote issuer's metadata naming plain-http loopback endpoints (a
    /// proxy's back-end hostname leaked into it) is refused: the client
    /// secret and tokens would go in cleartext to whatever listens on that
    /// port here. A loopback issuer (a test server) may name them.
    @Test func aRemoteIssuerNamingLoopbackHTTPEndpointsIsRefused() throws {
        for name in ["token_endpoint", "jwks_uri", "device_authorization_endpoint"] {
            var metadata: [String: JSONValue] = [
                "issuer": .string("https://sso.example"), "authorization_endpoint": .string("https://sso.example/a"),
                "token_endpoint": .string("https://sso.example/t"),
            ]
            metadata[name] = .string("http://localhost:8080/realms/x/\(name)")
            #expect {
                _ = try ProviderDescriptor.descriptor(
                    from: metadata, issuer: URL(string: "https://sso.example")!, id: "sso", source: "metadata")
            } throws: { error in
                guard case .invalidFile(let issues)? = error.authKitReason else { return false }
                return issues.contains { $0.field == name && $0.problem.contains("is plain http") }
            }
        }
        let local: [String: JSONValue] = [
            "issuer": .string("http://127.0.0.1:9000"), "authorization_endpoint": .string("http://127.0.0.1:9000/a"),
            "token_endpoint": .string("http://127.0.0.1:9000/t"),
        ]
        #expect(
            try ProviderDescriptor.descriptor(
                from: local, issuer: URL(string: "http://127.0.0.1:9000")!, id: "local", source: "metadata"
            ).token?.url == "http://127.0.0.1:9000/t")
        // On its own origin only: another port of this machine is another program's.
        var otherPort = local
        otherPort["token_endpoint"] = .string("http://127.0.0.1:9001/t")
        #expect {
            _ = try ProviderDescriptor.descriptor(
                from: otherPort, issuer: URL(string: "http://127.0.0.1:9000")!, id: "local", source: "metadata")
        } throws: { error in
            guard case .invalidFile(let issues)? = error.authKitReason else { return false }
            return issues.contains {
                $0.field == "token_endpoint" && $0.problem.contains("another origin than the issuer's")
            }
        }
    }

    /// The descriptor's checks name the descriptor's fields; what they find
    /// in discovered metadata is named by the metadata's members.
    @Test func problemsInMetadataAreNamedByItsMembers() {
        func said(_ field: String, _ problem: String = "must use https.") -> FileIssue {
            ProviderDescriptor.inMetadataTerms(
                FileIssue(file: "https://as.example/.well-known/x", field: field, problem: problem))
        }
        #expect(said("token.url").field == "token_endpoint")
        #expect(said("authorization.url").field == "authorization_endpoint")
        #expect(said("device.url").field == "device_authorization_endpoint")
        #expect(said("scopes.known[3]").field == "scopes_supported")
        #expect(
            said("token.clientAuthentication").field == "token.clientAuthentication", "no member to name: left as it is"
        )
        #expect(
            said(
                "documentation",
                "holds an invisible formatting character (U+202E), which would make it read otherwise. Remove it."
            ).problem
                == "holds an invisible formatting character (U+202E), which would make it read otherwise; AuthKit does not write it into a provider file, so this metadata is refused."
        )
    }

    /// A server that drips its metadata at both locations held discovery for
    /// the 30-second deadline at each, a minute in all. `timeout` bounds the
    /// whole of it, and the error names the issuer and the time allowed.
    @Test func oneDeadlineBoundsBothMetadataLocations() async throws {
        try await withServer { server in
            server.route("GET", "/.well-known/oauth-authorization-server") { _ in
                .streaming(.drip(every: .milliseconds(100)))
            }
            server.route("GET", "/.well-known/openid-configuration") { _ in .streaming(.drip(every: .milliseconds(100)))
            }
            let started = ContinuousClock.now
            await #expect {
                _ = try await ProviderDescriptor.discover(
                    issuer: URL(string: server.baseURL)!, id: "x", timeout: .seconds(2))
            } throws: { error in
                guard case .network(let url, let reason)? = error.authKitReason else { return false }
                return url == server.baseURL && reason.detail == "no complete answer within 2 s"
            }
            // The error names the issuer, not each location: one deadline
            // ended both (with one per location it would list them). No upper
            // bound on the time but a hang's: under load the machine may be slow.
            let took = ContinuousClock.now - started
            #expect(took >= .seconds(2) && took < .seconds(30), "took \(took)")
        }
    }

    /// Cancelling the caller ends discovery; it does not go on to the next location.
    @Test func cancellingEndsDiscovery() async throws {
        try await withServer { server in
            server.route("GET", "/.well-known/oauth-authorization-server") { _ in
                .streaming(.drip(every: .milliseconds(100)))
            }
            server.route("GET", "/.well-known/openid-configuration") { _ in .json(metadata(server)) }
            let task = Task {
                try await ProviderDescriptor.discover(
                    issuer: URL(string: server.baseURL)!, id: "x", timeout: .seconds(20))
            }
            try await Task.sleep(for: .milliseconds(300))
            task.cancel()
            await #expect(throws: AuthKitError.cancelled) { _ = try await task.value }
            #expect(server.requests(to: "/.well-known/openid-configuration").isEmpty)
        }
    }

    /// RFC 8414 §3.1: the well-known segment goes between the host and the issuer's path.
    @Test func anIssuerWithAPathIsLookedUpPerRFC8414ThenOIDC() {
        #expect(
            ProviderDescriptor.metadataLocations(for: URL(string: "https://as.example/tenant1/")!).map(\.absoluteString)
                .first
                == "https://as.example/.well-known/oauth-authorization-server/tenant1",
            "a terminating / is removed first")
        let locations = ProviderDescriptor.metadataLocations(for: URL(string: "https://as.example/tenant1")!).map(
            \.absoluteString)
        #expect(
            locations == [
                "https://as.example/.well-known/oauth-authorization-server/tenant1",
                "https://as.example/tenant1/.well-known/openid-configuration",
            ])
    }

    @Test func openIDConnectDiscoveryIsTheFallback() async throws {
        try await withServer { server in
            server.route("GET", "/.well-known/openid-configuration") { _ in
                .json(
                    #"{"issuer":"\#(server.baseURL)","authorization_endpoint":"\#(server.baseURL)/a","token_endpoint":"\#(server.baseURL)/t"}"#
                )
            }
            let descriptor = try await ProviderDescriptor.discover(issuer: URL(string: server.baseURL)!, id: "oidc")
            #expect(descriptor.token?.url == "\(server.baseURL)/t")
            #expect(
                descriptor.pkce == .s256,
                "no code_challenge_methods_supported: S256 anyway (RFC 9700 §2.1.1), harmless to a server without it")
            #expect(descriptor.token?.clientAuthentication == .basic, "the RFC 8414 default")
        }
    }

    /// RFC 8414's document without what only OpenID Connect defines (Spring
    /// Authorization Server's has `jwks_uri` alone) gave a descriptor with no
    /// `openid` part: no nonce, ID tokens kept unverified. The OpenID Connect
    /// document of the same issuer gives those members; another issuer's
    /// gives nothing, and RFC 8414's is used as it is. RFC 9207's
    /// `authorization_response_iss_parameter_supported` is one of the members
    /// taken (left out, `iss` was not required in the redirect).
    @Test(arguments: ["same issuer", "another issuer", "unusable members", "a name twice"])
    func openIDMembersMissingFromRFC8414sDocumentComeFromOpenIDConnects(variant: String) async throws {
        try await withServer { server in
            let base = server.baseURL
            // Without RFC 9207's flag, which the OpenID Connect document has.
            let rfc8414 = metadata(server, extra: #","jwks_uri":"\#(base)/jwks""#).replacingOccurrences(
                of: #""authorization_response_iss_parameter_supported":true,"#, with: "")
            server.route("GET", "/.well-known/oauth-authorization-server") { _ in .json(rfc8414) }
            let algorithms = variant == "unusable members" ? #""RS256""# : #"["RS256"]"#
            var openID = metadata(
                server, issuer: variant == "another issuer" ? "https://elsewhere.example" : base,
                extra:
                    #","jwks_uri":"\#(base)/other-jwks","id_token_signing_alg_values_supported":\#(algorithms),"userinfo_endpoint":"\#(base)/userinfo""#
            )
            if variant == "a name twice" { openID = openID.replacingOccurrences(of: "{", with: #"{"issuer":"x","#) }
            let document = openID
            server.route("GET", "/.well-known/openid-configuration") { _ in .json(document) }
            // Whatever the second document is, discovery does not fail for it.
            let descriptor = try await ProviderDescriptor.discover(issuer: URL(string: base)!, id: "spring")
            #expect(descriptor.token?.url == "\(base)/token")
            if variant == "same issuer" {
                #expect(
                    descriptor.openID
                        == OpenIDSettings(
                            keySetURL: "\(base)/jwks", algorithms: [.rs256], userInfoURL: "\(base)/userinfo",
                            endSessionURL: nil))
                // RFC 9207's flag, said only by the OpenID Connect document, is taken too.
                #expect(descriptor.issuer?.includedInResponse == true)
            } else {
                #expect(descriptor.openID == nil)
                #expect(descriptor.issuer?.includedInResponse != true)
            }
            #expect(server.requests(to: "/.well-known/openid-configuration").count == 1)
        }
    }

    /// A web app that answers every path with its page (HTTP 200, HTML) at
    /// RFC 8414's location stopped discovery there; OpenID Connect's is
    /// tried next, and an error names what each location gave.
    @Test func aPageWhereRFC8414sMetadataWouldBeIsPassedOver() async throws {
        try await withServer { server in
            server.route("GET", "/.well-known/oauth-authorization-server") { _ in
                .text("<!doctype html><p>app</p>", contentType: "text/html", status: 200)
            }
            server.route("GET", "/.well-known/openid-configuration") { _ in
                .json(
                    #"{"issuer":"\#(server.baseURL)","authorization_endpoint":"\#(server.baseURL)/a","token_endpoint":"\#(server.baseURL)/t"}"#
                )
            }
            let descriptor = try await ProviderDescriptor.discover(issuer: URL(string: server.baseURL)!, id: "spa")
            #expect(descriptor.token?.url == "\(server.baseURL)/t")
            server.route("GET", "/.well-known/openid-configuration") { _ in
                .text("<!doctype html>", contentType: "text/html", status: 200)
            }
            await #expect {
                _ = try await ProviderDescriptor.discover(issuer: URL(string: server.baseURL)!, id: "spa")
            } throws: { error in
                guard case .invalidResponse(.discovery, let reason)? = error.authKitReason else { return false }
                // The same at both: said once, of both.
                return reason.detail.contains(
                    "oauth-authorization-server and \(server.baseURL)/.well-known/openid-configuration: HTTP 200 with a body that is no JSON object ('text/html')"
                )
            }
        }
    }

    /// RFC 8414 §2: `authorization_endpoint` is required "unless no grant
    /// types are supported that use the authorization endpoint". A server
    /// with only the device grant becomes a device-only descriptor; one with
    /// neither endpoint is refused, naming both.
    @Test func metadataWithoutAnAuthorizationEndpointIsDeviceOnlyOrRefused() async throws {
        try await withServer { server in
            let deviceOnly =
                #"{"issuer":"\#(server.baseURL)","token_endpoint":"\#(server.baseURL)/token","device_authorization_endpoint":"\#(server.baseURL)/device","grant_types_supported":["urn:ietf:params:oauth:grant-type:device_code"]}"#
            server.route("GET", "/.well-known/oauth-authorization-server") { _ in .json(deviceOnly) }
            let descriptor = try await ProviderDescriptor.discover(issuer: URL(string: server.baseURL)!, id: "tv")
            #expect(
                descriptor.isDeviceOnly && descriptor.device?.url == "\(server.baseURL)/device"
                    && descriptor.token?.url == "\(server.baseURL)/token")
            #expect(
                try DescriptorLoader().decode(try descriptor.encodedAsFile(), file: descriptor.source) == descriptor)

            server.route("GET", "/.well-known/oauth-authorization-server") { _ in
                .json(#"{"issuer":"\#(server.baseURL)","token_endpoint":"\#(server.baseURL)/token"}"#)
            }
            await #expect {
                _ = try await ProviderDescriptor.discover(issuer: URL(string: server.baseURL)!, id: "x")
            } throws: { error in
                guard case .invalidFile(let issues)? = error.authKitReason, let issue = issues.first else {
                    return false
                }
                return issue.field == "authorization_endpoint"
                    && issue.problem.contains("device_authorization_endpoint")
            }
        }
    }

    /// A member of another type than RFC 8414 §2 gives it is refused,
    /// naming the member and both types. Before, it was read as absent: a
    /// token_endpoint given as an array was "missing", and a string of
    /// auth methods or challenge methods left the defaults in place, silently.
    @Test(arguments: [
        (
            #""token_endpoint":"http://x/token""#, #""token_endpoint":["http://x/token"]"#, "token_endpoint",
            "is an array, not a string"
        ),
        (
            #""scopes_supported":["read","write"]"#, #""scopes_supported":"read write""#, "scopes_supported",
            "is a string, not an array of strings"
        ),
        (
            #""code_challenge_methods_supported":["plain","S256"]"#, #""code_challenge_methods_supported":"plain""#,
            "code_challenge_methods_supported", "is a string, not an array of strings"
        ),
        // An element of another type: read as no methods, PKCE was turned off.
        (
            #""code_challenge_methods_supported":["plain","S256"]"#,
            #""code_challenge_methods_supported":[{"S256":1}]"#, "code_challenge_methods_supported",
            "is an array with an element that is not a string, not an array of strings"
        ),
        (
            #""authorization_response_iss_parameter_supported":true"#,
            #""authorization_response_iss_parameter_supported":"true""#,
            "authorization_response_iss_parameter_supported", "is a string, not a boolean"
        ),
    ])
    func aMemberOfAnotherTypeIsRefusedByName(original: String, replacement: String, field: String, problem: String)
        async throws
    {
        try await withServer { server in
            let given = metadata(server).replacingOccurrences(
                of: original.replacingOccurrences(of: "http://x", with: server.baseURL), with: replacement)
            #expect(given != metadata(server))
            server.route("GET", "/.well-known/oauth-authorization-server") { _ in .json(given) }
            await #expect {
                _ = try await ProviderDescriptor.discover(issuer: URL(string: server.baseURL)!, id: "x")
            } throws: { error in
                guard case .invalidFile(let issues)? = error.authKitReason, let issue = issues.first else {
                    return false
                }
                return issue.field == field && issue.problem.hasPrefix(problem) && issue.problem.contains("RFC 8414 §2")
            }
        }
    }

    /// `null` is absent, as servers write it for "none": the revocation
    /// endpoint is then none, not a wrongly typed member.
    @Test func aNullMemberIsAbsent() async throws {
        try await withServer { server in
            let nulled = metadata(server).replacingOccurrences(
                of: #""revocation_endpoint":"\#(server.baseURL)/revoke""#, with: #""revocation_endpoint":null"#)
            server.route("GET", "/.well-known/oauth-authorization-server") { _ in .json(nulled) }
            let descriptor = try await ProviderDescriptor.discover(issuer: URL(string: server.baseURL)!, id: "x")
            #expect(descriptor.revocation == nil)
        }
    }

    /// RFC 8414 §3.3: metadata that names another issuer is refused.
    @Test func metadataNamingAnotherIssuerIsRefused() async throws {
        try await withServer { server in
            server.route("GET", "/.well-known/oauth-authorization-server") { _ in
                .json(metadata(server, issuer: "https://evil.example"))
            }
            await #expect {
                _ = try await ProviderDescriptor.discover(issuer: URL(string: server.baseURL)!, id: "x")
            } throws: { error in
                guard case .invalidFile(let issues)? = error.authKitReason else { return false }
                return issues.first?.field == "issuer" && issues.first?.problem.contains("https://evil.example") == true
            }
        }
    }

    /// RFC 8414 §3.3 has a document naming another issuer not used, nothing
    /// more: a server whose well-known route matches by prefix answers its
    /// root's document for `…/tenant`, and the OpenID Connect location,
    /// tried next, has the tenant's own (it was never asked).
    @Test func aDocumentOfAnotherIssuerIsPassedOverForTheNextLocation() async throws {
        try await withServer { server in
            server.route("GET", "/.well-known/oauth-authorization-server/tenant") { _ in .json(metadata(server)) }
            server.route("GET", "/tenant/.well-known/openid-configuration") { _ in
                .json(metadata(server, issuer: server.baseURL + "/tenant"))
            }
            let descriptor = try await ProviderDescriptor.discover(
                issuer: URL(string: server.baseURL + "/tenant")!, id: "x")
            #expect(descriptor.issuer?.identifier == server.baseURL + "/tenant")
            #expect(server.requests.count == 2)
        }
    }

    /// An issuer identifier is an https URL without query, fragment or
    /// credentials (RFC 8414 §2): the library refused none (only the CLI
    /// did), dropped the query from the locations it asked, and sent a
    /// user name and password to both. Refused before anything is sent,
    /// the URL not repeated.
    @Test func anIssuerThatIsNoIssuerIdentifierIsRefusedBeforeAnyRequest() async throws {
        try await withServer { server in
            let port = URL(string: server.baseURL)!.port!
            for issuer in [
                "\(server.baseURL)/realm?client_secret=s3cret", "\(server.baseURL)/realm#s3cret",
                "http://user:s3cret@127.0.0.1:\(port)/realm", "ftp://127.0.0.1:\(port)/s3cret",
                // Plain http to another machine: no request could be sent,
                // and it was "neither metadata location answered".
                "http://as.example/s3cret",
            ] {
                let error = await #expect(throws: AuthKitError.self) {
                    _ = try await ProviderDescriptor.discover(issuer: URL(string: issuer)!, id: "x")
                }
                guard case .misuse(.invalidIssuer)? = error?.reason else {
                    Issue.record("\(issuer): \(String(describing: error))")
                    continue
                }
                #expect(!String(describing: error).contains("s3cret"), "\(String(describing: error))")
            }
            #expect(server.requests.isEmpty, "a request was sent")
        }
    }

    /// RFC 8414 §3.3 asks for identical strings: an issuer asked for as
    /// `…/K` is not the metadata's `…/K` (U+212A KELVIN SIGN), which Swift's
    /// `==` took as equal, and whose form was then stored (issue 44, item 4).
    @Test func anIssuerIsComparedByteForByte() async throws {
        try await withServer { server in
            server.route("GET", "/.well-known/oauth-authorization-server/K") { _ in
                .json(metadata(server, issuer: "\(server.baseURL)/\u{212A}"))
            }
            await #expect {
                _ = try await ProviderDescriptor.discover(issuer: URL(string: "\(server.baseURL)/K")!, id: "x")
            } throws: { error in
                guard case .invalidFile(let issues)? = error.authKitReason else { return false }
                return issues.first?.field == "issuer"
            }
        }
    }

    /// A URL from metadata is data, never a template (issue 44, item 2): a
    /// revocation endpoint naming `{refresh_token}` and `{access_token}` had
    /// `token revoke` put both tokens in the request's path.
    @Test func discoveredURLsAreNeverTemplates() async throws {
        try await withServer { server in
            let hostile = #","revocation_endpoint":"\#(server.baseURL)/r/{refresh_token}/{access_token}?c={client_id}""#
            let document = metadata(server).replacingOccurrences(
                of: #","revocation_endpoint":"\#(server.baseURL)/revoke""#, with: hostile
            )
            .replacingOccurrences(of: "\(server.baseURL)/token", with: "\(server.baseURL)/token/{client_secret}")
            server.route("GET", "/.well-known/oauth-authorization-server") { _ in .json(document) }
            let descriptor = try await ProviderDescriptor.discover(issuer: URL(string: server.baseURL)!, id: "found")
            #expect(
                descriptor.revocation?.url
                    == "\(server.baseURL)/r/%7Brefresh_token%7D/%7Baccess_token%7D?c=%7Bclient_id%7D")
            #expect(descriptor.token?.url == "\(server.baseURL)/token/%7Bclient_secret%7D")
            let written = try DescriptorLoader().decode(try descriptor.encodedAsFile(), file: descriptor.source)
            #expect(written.revocation?.url == descriptor.revocation?.url)

            server.route("POST", "/r/%7Brefresh_token%7D/%7Baccess_token%7D") { _ in StubResponse(status: 200) }
            let client = try OAuth2Client(
                descriptor: descriptor, settings: ClientSettings(clientID: "the-client", clientSecret: "s"))
            try await client.revoke(
                Credential(providerID: "found", accessToken: "AT-secret", refreshToken: "RT-secret"))
            let sent = server.requests.filter { $0.method == "POST" }
            #expect(sent.count == 2)
            #expect(
                sent.allSatisfy { !$0.uri.contains("secret") && !$0.uri.contains("the-client") }, "\(sent.map(\.uri))")
        }
    }

    /// A metadata location that redirects is not followed (a redirect could
    /// hand discovery another server's document) and is reported as such.
    @Test func aRedirectingMetadataLocationIsNotFollowed() async throws {
        try await withServer { server in
            let followed = Recorder<Int>()
            server.route("GET", "/.well-known/oauth-authorization-server") { _ in
                .redirect(302, to: "\(server.baseURL)/elsewhere")
            }
            server.route("GET", "/elsewhere") { _ in
                followed.append(1)
                return .json(metadata(server))
            }
            await #expect {
                _ = try await ProviderDescriptor.discover(issuer: URL(string: server.baseURL)!, id: "x")
            } throws: { error in
                guard case .invalidResponse(.discovery, let reason)? = error.authKitReason else { return false }
                return reason.detail.contains("HTTP 302") && reason.detail.contains("HTTP 404")
            }
            #expect(followed.all.isEmpty)
        }
    }

    /// Metadata naming a field twice is refused, as a provider file is: the
    /// last token_endpoint won, so `providers add` wrote another host than
    /// the one a reader of the document saw first.
    @Test func metadataNamingAFieldTwiceIsRefused() async throws {
        try await withServer { server in
            server.route("GET", "/.well-known/oauth-authorization-server") { _ in
                .json(metadata(server, extra: #","token_endpoint":"https://evil.example/t""#))
            }
            await #expect {
                _ = try await ProviderDescriptor.discover(issuer: URL(string: server.baseURL)!, id: "x")
            } throws: { error in
                guard case .invalidFile(let issues)? = error.authKitReason else { return false }
                return issues.first?.field == "token_endpoint"
                    && issues.first?.problem.contains("is given twice") == true
            }
        }
    }

    /// A server whose every metadata location redirects was reached: the
    /// error is not "could not be reached" (a network error, exit 4), and it
    /// says why discovery does not follow, not "client credentials".
    @Test func anIssuerThatOnlyRedirectsWasReached() async throws {
        try await withServer { server in
            for path in ["/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"] {
                server.route("GET", path) { _ in .redirect(301, to: "https://login.example\(path)") }
            }
            await #expect {
                _ = try await ProviderDescriptor.discover(issuer: URL(string: server.baseURL)!, id: "x")
            } throws: { error in
                guard case .invalidResponse(.discovery, let reason)? = error.authKitReason else { return false }
                // Said once, of both locations (it was a 900-character line, the explanation twice).
                return reason.detail.contains("issuer's own well-known URL")
                    && !reason.detail.contains("client credentials")
                    && reason.detail.components(separatedBy: "issuer's own well-known URL").count == 2
                    && reason.detail.contains(
                        "/.well-known/oauth-authorization-server and \(server.baseURL)/.well-known/openid-configuration: "
                    )
            }
        }
    }

    /// Nothing listening: one network error that names the issuer once and
    /// each location once, with why it failed (not three nested "The request
    /// to … failed").
    @Test func anUnreachableIssuerIsOneNetworkErrorNamingEachLocationOnce() async throws {
        let issuer = URL(string: "http://127.0.0.1:1/tenant")!
        await #expect {
            _ = try await ProviderDescriptor.discover(issuer: issuer, id: "x")
        } throws: { error in
            guard case .network(let url, let reason)? = error.authKitReason else { return false }
            let text = "\(error)"
            return url == issuer.absoluteString && reason.detail.hasPrefix("neither metadata location answered (")
                && text.components(separatedBy: "The request to").count == 2
                && text.components(separatedBy: "/.well-known/oauth-authorization-server/tenant").count == 2
                && text.components(separatedBy: "/tenant/.well-known/openid-configuration").count == 2
        }
    }

    /// A metadata document past the size cap is not read on, and the error
    /// names the location and the cap once, in one sentence.
    @Test func anOversizedMetadataDocumentIsNamedWithTheCap() async throws {
        try await withServer { server in
            let flood = String(repeating: " ", count: 2 << 20)
            server.route("GET", "/.well-known/oauth-authorization-server") { _ in
                .text(flood + "{}", contentType: "application/json", status: 200)
            }
            await #expect {
                _ = try await ProviderDescriptor.discover(issuer: URL(string: server.baseURL)!, id: "x")
            } throws: { error in
                guard case .invalidResponse(.discovery, let reason)? = error.authKitReason else { return false }
                return reason.detail.contains(
                    "/.well-known/oauth-authorization-server: larger than the 1048576 bytes allowed; ")
                    && reason.detail.contains("openid-configuration: HTTP 404") && !reason.detail.contains(".;")
            }
        }
    }

    @Test func nothingFoundIsANetworkErrorNamingBothPlaces() async throws {
        _ = try await withServer { server in
            await #expect {
                _ = try await ProviderDescriptor.discover(issuer: URL(string: server.baseURL)!, id: "x")
            } throws: { error in
                guard case .invalidResponse(.discovery, let reason)? = error.authKitReason else { return false }
                return reason.detail.contains("oauth-authorization-server")
                    && reason.detail.contains("openid-configuration") && reason.detail.contains("HTTP 404")
            }
        }
    }
}
