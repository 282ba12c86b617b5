import AuthKit
import AuthKitTestSupport
import Foundation
import Testing

/// Every command, in success and failure paths, with `--verbose`: no client
/// secret, access token, refresh token or PKCE verifier appears on standard
/// output or standard error, except where the user asked for one
/// (`--json`, `token show --field`, `token header`).
@Suite(.serialized) struct CLISecretLeakTests {
    static let clientSecret = "CLIENT-SECRET-must-not-leak-0001"
    static let accessToken = "ACCESS-TOKEN-must-not-leak-00002"
    static let refreshToken = "REFRESH-TOKEN-must-not-leak-0003"
    static let newAccessToken = "NEW-ACCESS-TOKEN-must-not-leak-4"

    let verifiers = Recorder<String>()

    func server(_ server: TestHTTPServer) {
        let verifiers = self.verifiers
        server.route("POST", "/token") { request in
            let body = Dictionary((FormURLEncoding.decode(request.bodyText) ?? []), uniquingKeysWith: { a, _ in a })
            if let verifier = body["code_verifier"] { verifiers.append(verifier) }
            switch (body["grant_type"], body["code"]) {
            case ("authorization_code", "good"):
                return .json(
                    #"{"access_token":"\#(Self.accessToken)","token_type":"Bearer","expires_in":3600,"refresh_token":"\#(Self.refreshToken)"}"#
                )
            case ("refresh_token", _):
                return .json(#"{"access_token":"\#(Self.newAccessToken)","token_type":"Bearer","expires_in":3600}"#)
            default:
                // A hostile server echoing what it got (the verifier, the
                // client secret, in the body or in Basic) must not make
                // AuthKit print it either.
                let echo =
                    "bad code; you sent \(request.bodyText) with \(request.header("Authorization") ?? "no header")"
                let answer = try? JSONSerialization.data(
                    withJSONObject: ["error": "invalid_grant", "error_description": echo])
                return .json(String(decoding: answer ?? Data(), as: UTF8.self), status: 400)
            }
        }
        server.route("GET", "/api") { _ in .json(#"{"ok":true}"#) }
        server.route("GET", "/api-fail") { _ in .json(#"{"error":"nope"}"#, status: 500) }
        server.route("POST", "/revoke") { _ in StubResponse(status: 200) }
    }

    func home(_ server: TestHTTPServer) throws -> URL {
        try home(baseURL: server.baseURL)
    }

    func home(baseURL: String) throws -> URL {
        let home = try CLIProcess.home("authkit-leak")
        try """
        {"id": "local", "protocol": "oauth2", "pkce": "S256",
         "authorization": {"url": "\(baseURL)/authorize"},
         "token": {"url": "\(baseURL)/token"},
         "revocation": {"url": "\(baseURL)/revoke"}}
        """.write(to: home.appendingPathComponent("providers/local.json"), atomically: true, encoding: .utf8)
        return home
    }

    /// The redirect the browser would end on: the printed authorization
    /// URL's `redirect_uri` (a port nothing listens on: the provider takes
    /// any), with `code` and its `state`, or `state` when given.
    static func paste(code: String, state forced: String? = nil) -> @Sendable (String) -> String? {
        { stderr in
            guard stderr.contains("paste"),
                let line = stderr.split(separator: "\n").first(where: { $0.contains("/authorize?") }),
                let items = URLComponents(string: line.trimmingCharacters(in: .whitespaces))?.queryItems,
                let state = items.first(where: { $0.name == "state" })?.value,
                let redirect = items.first(where: { $0.name == "redirect_uri" })?.value
            else { return nil }
            return "\(redirect)?code=\(code)&state=\(forced ?? state)"
        }
    }

    func assertClean(
        _ result: CLIResult, _ label: String, allowOnStdout: [String] = [],
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        // The client secret as Basic carries it too (RFC 6749 §2.3.1).
        let basic = Data("leak-client:\(Self.clientSecret)".utf8).base64EncodedString()
        let secrets =
            [Self.clientSecret, basic, Self.accessToken, Self.refreshToken, Self.newAccessToken] + verifiers.all
        // A verifier the server never received (a forged state, the network
        // down): found by the challenge the printed URL carries, as any
        // word on either stream whose S256 challenge it is.
        #expect(
            !Self.showsVerifier(result.stderr + result.stdout), "\(label): a PKCE verifier is shown",
            sourceLocation: sourceLocation)
        for secret in secrets {
            #expect(!result.stderr.contains(secret), "\(label): stderr shows a secret", sourceLocation: sourceLocation)
            if !allowOnStdout.contains(secret) {
                #expect(
                    !result.stdout.contains(secret), "\(label): stdout shows a secret", sourceLocation: sourceLocation)
            }
        }
    }

    /// Whether `text` holds a word whose S256 challenge (RFC 7636 §4.2) is
    /// one of the `code_challenge` values it shows.
    static func showsVerifier(_ text: String) -> Bool {
        let challenges = Set(
            text.split(whereSeparator: { " \n?&\"'<>".contains($0) }).compactMap {
                $0.hasPrefix("code_challenge=") ? String($0.dropFirst("code_challenge=".count)) : nil
            })
        // A sentence's full stop is a verifier character too: each word is
        // tried with and without the dots it ends with.
        return text.split(whereSeparator: { !isVerifierCharacter($0) }).contains { word in
            let bare = word.reversed().drop { $0 == "." }.reversed()
            return [String(word), String(bare)].contains {
                $0.count >= 43 && challenges.contains(PKCE.challenge(for: $0))
            }
        }
    }

    /// RFC 7636 §4.1's unreserved characters, of which a verifier is made.
    static func isVerifierCharacter(_ character: Character) -> Bool {
        character.isASCII && (character.isLetter || character.isNumber || "-._~".contains(character))
    }

    /// A mistyped -H or --data-urlencode often holds a secret (an API key, a
    /// password); the error that rejects it does not repeat it, since errors
    /// end up in CI logs.
    @Test func aMistypedHeaderOrFieldIsNotRepeated() async throws {
        let home = try CLIProcess.home("authkit-leak-typo")
        defer { try? FileManager.default.removeItem(at: home) }
        let secret = "API-KEY-must-not-leak-0005"
        for (arguments, expected) in [
            (["-H", "X-Api-Key \(secret)"], "one -H has no ':'"),
            (["-H", "X Api Key: \(secret)"], "'X Api Key' is not a header name"),
            (["-H", "X-Api-Key: \(secret)\r\nX-Evil: 1"], "-H 'X-Api-Key': the value holds a line break"),
            (["--data-urlencode", secret], "one has no '='"),
            (["--data-urlencode", "=\(secret)"], "no name before its '='"),
        ] {
            let result = try await CLIProcess.run(
                ["request", "--provider", "qiita", "https://qiita.com/api/v2/items"] + arguments,
                environment: ["AUTHKIT_HOME": home.path, "AUTHKIT_QIITA_CLIENT_ID": "c"])
            #expect(result.status == 64 && result.stderr.contains(expected), "\(arguments): \(result.stderr)")
            #expect(
                !result.stderr.contains(secret) && !result.stdout.contains(secret),
                "\(arguments): the secret was repeated")
        }
    }

    /// A token pasted as a word where no command takes one (`token import`
    /// reads it on standard input) is refused as an unexpected argument
    /// without being repeated: argument-parser's message quoted it whole.
    @Test func anUnexpectedArgumentIsNotRepeated() async throws {
        let home = try CLIProcess.home("authkit-leak-argument")
        defer { try? FileManager.default.removeItem(at: home) }
        let secret = "gho_must_not_leak_0006"
        for arguments in [
            ["token", "import", "--provider", "github", secret],
            ["token", "list", "x", "\(secret)\nsecond line"],
        ] {
            let result = try await CLIProcess.run(arguments, environment: ["AUTHKIT_HOME": home.path])
            #expect(
                result.status == 64 && result.stderr.contains("nexpected argument")
                    && result.stderr.contains("Usage: authkit token"),
                "\(result.stderr)")
            #expect(!result.stderr.contains("must_not_leak") && !result.stdout.contains("must_not_leak"))
            #expect(!result.stderr.contains("second line"))
        }
    }

    @Test func noSecretInAnyCommandsOutput() async throws {
        try await withServer { server in
            self.server(server)
            let home = try home(server)
            let env = [
                "AUTHKIT_HOME": home.path, "AUTHKIT_LOCAL_CLIENT_ID": "leak-client",
                "AUTHKIT_LOCAL_CLIENT_SECRET": Self.clientSecret,
            ]
            func run(_ args: [String], respond: (@Sendable (String) -> String?)? = nil) async throws -> CLIResult {
                return try await CLIProcess.run(args + ["--verbose"], environment: env, respond: respond)
            }

            // Failure first: a rejected code, with the secret-bearing request logged at debug level.
            let failed = try await run(
                ["authorize", "--provider", "local", "--manual"], respond: Self.paste(code: "bad"))
            #expect(failed.status == 3 && failed.stderr.contains("bad code; you sent"), "\(failed.stderr)")
            assertClean(failed, "authorize (provider error)")
            let forged = try await CLIProcess.run(
                ["authorize", "--provider", "local", "--manual", "--verbose"], environment: env,
                respond: Self.paste(code: "good", state: "forged"))
            #expect(forged.status == 65 && forged.stderr.contains("'state'"), "\(forged.stderr)")
            #expect(forged.stderr.contains("code_challenge="), "no challenge to look for a verifier by")
            // The search finds one that is there.
            let verifier = String(repeating: "v", count: 43)
            #expect(Self.showsVerifier("x?code_challenge=\(PKCE.challenge(for: verifier))&y\nsent \(verifier)."))
            assertClean(forged, "authorize (forged state)")

            let ok = try await run(["authorize", "--provider", "local", "--manual"], respond: Self.paste(code: "good"))
            #expect(ok.status == 0, "\(ok.stderr)")
            #expect(!verifiers.all.isEmpty)
            assertClean(ok, "authorize")

            let json = try await run(
                ["authorize", "--provider", "local", "--manual", "--label", "second", "--json"],
                respond: Self.paste(code: "good"))
            #expect(json.status == 0)
            assertClean(json, "authorize --json", allowOnStdout: [Self.accessToken, Self.refreshToken])

            for args in [
                ["token", "list"], ["token", "list", "--json"], ["token", "show", "--provider", "local"],
                ["providers", "list"], ["providers", "show", "local"],
                ["request", "--provider", "local", "\(server.baseURL)/api"],
            ] {
                let result = try await run(args)
                #expect(result.status == 0, "\(args): \(result.stderr)")
                assertClean(result, args.joined(separator: " "))
            }
            let apiFailure = try await run(["request", "--provider", "local", "\(server.baseURL)/api-fail"])
            #expect(apiFailure.status == 3)
            assertClean(apiFailure, "request (HTTP 500)")

            let field = try await run(["token", "show", "--provider", "local", "--field", "access_token"])
            #expect(field.status == 0 && field.stdout == Self.accessToken + "\n", "\(field.stderr)")
            assertClean(field, "token show --field", allowOnStdout: [Self.accessToken])
            let header = try await run(["token", "header", "--provider", "local"])
            #expect(header.status == 0 && header.stdout.contains(Self.accessToken), "\(header.stderr)")
            assertClean(header, "token header", allowOnStdout: [Self.accessToken])

            let refreshed = try await run(["token", "refresh", "--provider", "local"])
            #expect(refreshed.status == 0, "\(refreshed.stderr)")
            assertClean(refreshed, "token refresh")
            let revoked = try await run(["token", "revoke", "--provider", "local"])
            #expect(revoked.status == 0)
            assertClean(revoked, "token revoke")
            let deleted = try await run(["token", "delete", "--provider", "local", "--label", "second"])
            #expect(deleted.status == 0, "\(deleted.stderr)")
            assertClean(deleted, "token delete")
            let missing = try await run(["token", "show", "--provider", "local"])
            #expect(missing.status != 0)
            assertClean(missing, "token show (missing)")

            // Network failure: nothing listens at the endpoint. (Not the
            // stopped server's port: another test's server may take it.)
            let downHome = try self.home(baseURL: "http://127.0.0.1:\(try UnusedPort.next())")
            let down = try await CLIProcess.run(
                ["authorize", "--provider", "local", "--manual", "--verbose"],
                environment: env.merging(["AUTHKIT_HOME": downHome.path]) { _, new in new },
                respond: Self.paste(code: "good"))
            #expect(down.status == 4 && down.stderr.contains("code_challenge="), "\(down.stderr)")
            assertClean(down, "authorize (network error)")
        }
    }
}
