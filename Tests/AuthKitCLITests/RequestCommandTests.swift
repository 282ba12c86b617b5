import AuthKit
import AuthKitTestSupport
import Foundation
import Testing

@testable import authkit

/// `authkit request` as curl users expect it: headers, form bodies, files, output on a terminal and in a pipe.
@Suite(.serialized) struct RequestCommandTests: CLIFixture {
    /// A URL whose host is not ASCII, or whose port is not a TCP port, is a
    /// usage error naming what to change, in every command that takes one:
    /// libcurl refused both as a "bad/illegal format" network error (exit 4),
    /// and `sign` signed a host other than the one curl would send. So is a
    /// URL that is not http or https.
    @Test func aURLWithAHostOrPortThatCannotBeSentIsRefused() async throws {
        let home = try home()
        try Data(CLIBoundaryTests.storedQiita.utf8).write(to: home.appendingPathComponent("credentials.json"))
        let environment = ["AUTHKIT_HOME": home.path, "AUTHKIT_QIITA_CLIENT_ID": "c", "AUTHKIT_CONSUMER_SECRET": "s"]
        for (url, message) in [
            ("https://bücher.example/api", "The host 'bücher.example' is not ASCII; give its ASCII (IDNA) form"),
            ("https://qiita.com:99999/api", "The URL's port 99999 is not a TCP port (1–65535)."),
            ("http://127.0.0.1:0/api", "The URL's port 0 is not a TCP port"),
            // Only an HTTP request is signed or sent (RFC 5849 §3.4.1.2): `token header` signed ftp://.
            (
                "ftp://qiita.com/api",
                "'ftp://qiita.com/api' is not an http:// or https:// URL; give the request's whole URL, https:// included."
            ),
            ("qiita.com/api/v2/items", "is not an http:// or https:// URL"),
            // It was sent (and signed) re-encoded as %25zz: another URL than the one typed.
            (
                "https://qiita.com/api?q=%zz",
                "has '%zz', which is not a percent escape (RFC 3986 §2.1); write %25 for a literal %."
            ),
            ("https://qiita.com/a%2", "has '%2', which is not a percent escape"),
            // The query is not repeated: it may hold an API key.
            ("https://qiita.com/api?api_key=SECRET-VALUE&q=%zz", "'https://qiita.com/api?…' has '%zz'"),
            // Not repeated at all: its first ten characters were.
            ("ghp_SECRET-VALUE", "The URL given is not an http:// or https:// URL (not repeated: it may be a token"),
        ] {
            for command in [
                ["request", "--provider", "qiita", url], ["token", "header", "--provider", "qiita", url],
                ["sign", url, "--consumer-key", "k"],
            ] {
                let result = try await CLIProcess.run(command, environment: environment)
                #expect(
                    result.status == 64 && result.stderr.contains(message) && !result.stderr.contains("SECRET-VALUE")
                        && !result.stderr.contains("SECRETSECRET"),
                    "\(command): exit \(result.status): \(result.stderr)")
            }
        }
        // A header for plain http to another machine: curl would send the
        // credential in the clear, which `request` refuses to do.
        let plain = try await CLIProcess.run(
            ["token", "header", "--provider", "qiita", "http://qiita.com/api/v2/items"], environment: environment)
        #expect(
            plain.status == 64
                && plain.stderr.contains(
                    "http://qiita.com/api/v2/items is plain http on a host that is not this machine")
                && !plain.stdout.contains("Bearer"), "\(plain.stderr)")
        // An IPv6 literal's colons are not a port; an empty port is the default one.
        #expect(
            TypedURL.authority(of: "http://[::1]:8080/x").port == "8080"
                && TypedURL.authority(of: "http://[::1]/x").port == nil)
        #expect(
            TypedURL.problem("http://127.0.0.1:/x") == nil
                && TypedURL.problem("https://u@qiita.com:8443/x")?.contains("user name") == true)
        #expect(
            TypedURL.badEscape(in: "https://x.example/%E3%81%82?q=%2Fa%2f") == nil
                && TypedURL.badEscape(in: "https://x.example/?q=%G1") == "%G1")
        // What Foundation would re-encode (`%` included: a%20b went as
        // a%2520b), and dot segments libcurl would remove, are refused: the
        // URL sent, and signed, is the one typed.
        for typed in [
            "https://x.example/x?q=a%20b&f=[1]", "https://x.example/caf\u{E9}", "https://x.example/a|b",
            "https://api.x.com/1.1/./account/verify_credentials.json", "https://x.example/a/../b",
            "https://x.example/a/.",
        ] {
            #expect(TypedURL.problem(typed) != nil, "\(typed)")
        }
        for typed in [
            "https://x.example", "https://x.example/", "https://[::1]:8080/x?y=%5B1%5D#f", "https://X.Example/A.b/..c",
            "https://api.x.com/1.1/statuses/update.json?status=Hello%20world&a=",
        ] {
            #expect(TypedURL.problem(typed) == nil, "\(typed): \(TypedURL.problem(typed) ?? "")")
        }
    }

    /// RFC 5849 §3.5: an OAuth 1.0a request carries its protocol parameters
    /// in the header alone; one in the URL or the form body too was signed
    /// there as well and sent twice. Refused before anything is read or sent.
    @Test func anOAuth1ProtocolParameterOutsideTheHeaderIsRefused() async throws {
        let home = try home()
        defer { try? FileManager.default.removeItem(at: home) }
        for arguments in [
            ["request", "-p", "twitter", "https://api.x.com/1.1/account/verify_credentials.json?oauth_token=t"],
            ["request", "-p", "twitter", "https://api.x.com/1.1/statuses/update.json", "-d", "status=a&oauth_nonce=n"],
            ["token", "header", "-p", "twitter", "https://api.x.com/1.1/x.json?oauth_consumer_key=k"],
            // A form body however its type is written: the signer reads it so.
            [
                "request", "-p", "twitter", "https://api.x.com/1.1/statuses/update.json", "-d", "oauth_token=t",
                "-H", "Content-Type: Application/X-WWW-Form-Urlencoded; charset=utf-8",
            ],
        ] {
            let result = try await CLIProcess.run(arguments, environment: ["AUTHKIT_HOME": home.path])
            #expect(
                result.status == 64 && result.stderr.contains("RFC 5849 §3.5"), "\(arguments): \(result.stderr)")
        }
    }

    /// curl's header forms: 'Name;' sends an empty value, 'Name:' sends none
    /// of that name, not even one authkit would add. 'X:' was refused as
    /// having no ':', and an empty value never left the default transport
    /// (libcurl reads "Name:" as its off switch).
    @Test func requestTakesCurlsEmptyAndRemovedHeaders() async throws {
        try await withServer { server in
            let (_, environment, url) = try qiitaItems(at: server)
            let result = try await CLIProcess.run(
                [
                    "request", "--provider", "qiita", url, "-d", "a=b", "-H", "X-Empty;", "-H", "X-Gone: 1",
                    "-H", "X-Gone:", "-H", "Content-Type:",
                ], environment: environment)
            #expect(result.status == 0, "\(result.stderr)")
            let sent = try #require(server.requests(to: "/api/v2/items").last)
            #expect(
                sent.header("X-Empty") == "" && sent.header("X-Gone") == nil && sent.header("Content-Type") == nil,
                "\(sent.headers)")
            #expect(sent.bodyText == "a=b" && sent.header("Authorization") != nil)
            #expect(
                sent.header("User-Agent")?.hasPrefix("AuthKit/") == true, "GitHub's API refuses a request without one")
            let named = try await CLIProcess.run(
                ["request", "--provider", "qiita", url, "-d", "a=b", "-H", "User-Agent: mine/1"],
                environment: environment)
            #expect(
                named.status == 0 && server.requests(to: "/api/v2/items").last?.header("User-Agent") == "mine/1",
                "\(named.stderr)")
            let none = try await CLIProcess.run(
                ["request", "--provider", "qiita", url, "-H", "X-Empty"], environment: environment)
            #expect(
                none.status == 64
                    && none.stderr.contains("('Name;' for an empty value); one -H has no ':' after its name"),
                "\(none.stderr)")
            let credential = try await CLIProcess.run(
                ["request", "--provider", "qiita", url, "-H", "Authorization:"], environment: environment)
            #expect(
                credential.status == 64
                    && credential.stderr.contains("the stored credential's Authorization header is sent"),
                "\(credential.stderr)")
        }
    }

    /// `-s` keeps warnings and notes off standard error, but not the log
    /// `--verbose` asks for by name (it dropped every line of it), as curl's
    /// `-sv` shows its verbose output.
    @Test func silentKeepsTheVerboseLogAskedFor() async throws {
        try await withServer { server in
            server.route("GET", "/api/v2/authenticated_user") { _ in .json(#"{"id":"me"}"#) }
            let home = try signedInToQiita(at: server)
            let environment = [
                "AUTHKIT_HOME": home.path, "AUTHKIT_QIITA_CLIENT_ID": "c", "AUTHKIT_QIITA_CLIENT_SECRET": "s",
            ]
            let url = "\(server.baseURL)/api/v2/authenticated_user"
            let silent = try await CLIProcess.run(
                ["request", "-s", "--provider", "qiita", url], environment: environment)
            #expect(silent.status == 0 && silent.stderr.isEmpty, "\(silent.stderr)")
            let verbose = try await CLIProcess.run(
                ["request", "-s", "-v", "--provider", "qiita", url], environment: environment)
            #expect(verbose.status == 0 && verbose.stderr.contains("authkit ["), "\(verbose.stderr)")
            #expect(!verbose.stderr.contains("authkit: note") && !verbose.stderr.contains("authkit: warning"))
        }
    }

    /// With `http_proxy` set (and no `no_proxy` for 127.0.0.1), libcurl sent
    /// a plain-http loopback request through the proxy: a credential that
    /// AuthKit sends over http only because it stays on this machine left it
    /// in the clear (and reached the proxy's 127.0.0.1, not this one).
    @Test func aLoopbackRequestNeverGoesThroughAProxy() async throws {
        try await withServer { proxy in
            try await withServer { server in
                server.route("GET", "/api/v2/authenticated_user") { _ in .json(#"{"id":"me"}"#) }
                let home = try signedInToQiita(at: server)
                let environment = [
                    "AUTHKIT_HOME": home.path, "AUTHKIT_QIITA_CLIENT_ID": "c", "AUTHKIT_QIITA_CLIENT_SECRET": "s",
                    "http_proxy": proxy.baseURL, "HTTPS_PROXY": proxy.baseURL, "ALL_PROXY": proxy.baseURL,
                ]
                let result = try await CLIProcess.run(
                    ["request", "--provider", "qiita", "\(server.baseURL)/api/v2/authenticated_user"],
                    environment: environment)
                #expect(result.status == 0 && result.stdout.contains(#""id":"me""#), "\(result.stderr)")
                #expect(proxy.requests.isEmpty, "the proxy received \(proxy.requests.map(\.uri))")
                #expect(server.requests(to: "/api/v2/authenticated_user").first?.header("Authorization") != nil)
            }
        }
    }

    @Test func requestChecksFormBodiesAndEncodesOnRequest() async throws {
        try await withServer { server in
            server.route("POST", "/api/v2/items") { request in .json(#"{"body":"\#(request.bodyText)"}"#) }
            let home = try signedInToQiita(at: server)
            let environment = [
                "AUTHKIT_HOME": home.path, "AUTHKIT_QIITA_CLIENT_ID": "c", "AUTHKIT_QIITA_CLIENT_SECRET": "s",
            ]
            let url = "\(server.baseURL)/api/v2/items"
            let refused = try await CLIProcess.run(
                ["request", "--provider", "qiita", "-X", "POST", url, "-d", "status=hello world"],
                environment: environment)
            #expect(refused.status == 64 && refused.stderr.contains("--data-urlencode"), "\(refused.stderr)")
            // The Content-Type sent is the last -H naming it: that is the one checked (the first was).
            let last = try await CLIProcess.run(
                [
                    "request", "--provider", "qiita", "-X", "POST", url, "-H", "Content-Type: text/plain",
                    "-H", "Content-Type: application/x-www-form-urlencoded", "-d", "status=hello world",
                ], environment: environment)
            #expect(last.status == 64 && last.stderr.contains("--data-urlencode"), "\(last.stderr)")
            #expect(server.requests(to: "/api/v2/items").isEmpty)
            // A '+' is the form's own space: sent as given, with a note.
            let plus = try await CLIProcess.run(
                ["request", "--provider", "qiita", "-X", "POST", url, "-d", "status=1+1"], environment: environment)
            #expect(plus.status == 0 && plus.stderr.contains("write %2B for a plus sign"), "\(plus.stderr)")
            #expect(server.requests(to: "/api/v2/items").map(\.bodyText) == ["status=1+1"])
            let encoded = try await CLIProcess.run(
                ["request", "--provider", "qiita", "-X", "POST", url, "--data-urlencode", "status=1+1 is 2!"],
                environment: environment)
            #expect(encoded.status == 0, "\(encoded.stderr)")
            #expect(try #require(server.requests(to: "/api/v2/items").last).bodyText == "status=1%2B1%20is%202%21")
            // The name is sent as it is, as curl sends it (it is "expected to be
            // URL-encoded already"); only the value is encoded. It was encoded
            // too: a%5Bb%5D went out as a%255Bb%255D.
            let bracketed = try await CLIProcess.run(
                ["request", "--provider", "qiita", url, "--data-urlencode", "a%5Bb%5D=x y"], environment: environment)
            #expect(bracketed.status == 0, "\(bracketed.stderr)")
            #expect(try #require(server.requests(to: "/api/v2/items").last).bodyText == "a%5Bb%5D=x%20y")
            let fieldFile = home.appendingPathComponent("field.txt")
            try Data("1 2".utf8).write(to: fieldFile)
            let fromFile = try await CLIProcess.run(
                ["request", "--provider", "qiita", url, "--data-urlencode", "a%5B0%5D@\(fieldFile.path)"],
                environment: environment)
            #expect(fromFile.status == 0, "\(fromFile.stderr)")
            #expect(try #require(server.requests(to: "/api/v2/items").last).bodyText == "a%5B0%5D=1%202")
            // A space or a byte past ASCII in the name cannot stand in a form: encoded (refusing it broke `café`).
            for (field, sent) in [("café=x y", "caf%C3%A9=x%20y"), ("my key=v", "my%20key=v")] {
                let encoded = try await CLIProcess.run(
                    ["request", "--provider", "qiita", url, "--data-urlencode", field], environment: environment)
                #expect(encoded.status == 0, "\(field): \(encoded.stderr)")
                #expect(try #require(server.requests(to: "/api/v2/items").last).bodyText == sent)
            }
            // A name that is not form-encoded is refused as -d is, without repeating the field.
            let before = server.requests(to: "/api/v2/items").count
            for field in ["a%zz=v", "a&b=v", "my%zz@\(fieldFile.path)"] {
                let refused = try await CLIProcess.run(
                    ["request", "--provider", "qiita", url, "--data-urlencode", field], environment: environment)
                #expect(
                    refused.status == 64 && refused.stderr.contains("Encode the name")
                        && !refused.stderr.contains("my%zz") && !refused.stderr.contains("a&b"),
                    "\(field): \(refused.stderr)")
            }
            #expect(server.requests(to: "/api/v2/items").count == before)
            let empty = try await CLIProcess.run(
                ["request", "--provider", "qiita", "-X", "POST", url, "--data-urlencode", "status="],
                environment: environment)
            #expect(
                empty.status == 0 && server.requests(to: "/api/v2/items").last?.bodyText == "status=",
                "an empty value is a value, as in curl: \(empty.stderr)")
            // A body without -X is POSTed, as curl does; it was sent with GET,
            // whose body servers ignore.
            for body in [
                ["-d", "status=implied"], ["--data-urlencode", "status=implied"], ["--data-binary", "status=implied"],
            ] {
                let implied = try await CLIProcess.run(
                    ["request", "--provider", "qiita", url] + body, environment: environment)
                let sent = server.requests(to: "/api/v2/items").last
                #expect(
                    implied.status == 0 && sent?.method == "POST" && sent?.bodyText == "status=implied",
                    "\(body[0]): \(implied.stderr)")
            }
            let spaced = try await CLIProcess.run(
                ["request", "--provider", "qiita", "\(url)/a b"], environment: environment)
            #expect(
                spaced.status == 64 && spaced.stderr.contains("contains a space or control character"),
                "\(spaced.stderr)")
            let header = try await CLIProcess.run(
                ["token", "header", "--provider", "qiita", "\(url)/a\tb"], environment: environment)
            #expect(
                header.status == 64
                    && header.stderr.contains("'\(url)/a\\u{9}b' contains a space or control character"),
                "\(header.stderr)")
            // A user name and password in the URL would go out as Basic
            // credentials beside the token: refused, and not repeated.
            let withUser = url.replacingOccurrences(of: "http://", with: "http://me:hunter2@")
            for command in [
                ["request", "--provider", "qiita", withUser], ["token", "header", "--provider", "qiita", withUser],
            ] {
                let refused = try await CLIProcess.run(command, environment: environment)
                #expect(
                    refused.status == 64 && refused.stderr.contains("carries a user name or password")
                        && !refused.stderr.contains("hunter2"),
                    "\(command[0]): \(refused.stderr)")
            }
            // Headers that were dropped (the credential's Authorization
            // replaced the one given) or obeyed to the request's harm (a
            // Content-Length that left the server waiting) are refused.
            for header in [
                "Authorization: Bearer mine", "content-length: 5", "Transfer-Encoding: chunked",
                "Host: elsewhere.example",
            ] {
                let refused = try await CLIProcess.run(
                    ["request", "--provider", "qiita", url, "-H", header], environment: environment)
                let name = header.prefix { $0 != ":" }
                #expect(
                    refused.status == 64 && refused.stderr.contains("-H '\(name)': ")
                        && refused.stderr.contains("Remove it."), "\(header): \(refused.stderr)")
            }
            #expect(server.requests.count == 10) // two more: the encoded names
        }
    }

    /// `-d @FILE`, `-d @-`, `--data-binary @FILE` and `--data-urlencode
    /// name@FILE`, as curl reads them: a
    /// curl user's `-d @body.json` was sent as the text "@body.json".
    @Test func requestReadsBodiesFromFilesAsCurlDoes() async throws {
        try await withServer { server in
            let (home, environment, url) = try qiitaItems(at: server)
            let form = home.appendingPathComponent("form.txt")
            let json = home.appendingPathComponent("item.json")
            let png = home.appendingPathComponent("a.png")
            try Data("title=a%20b&\r\nbody=c\n".utf8).write(to: form)
            try Data("{\n  \"title\": \"x\"\n}\n".utf8).write(to: json)
            let binary = Data([0x89, 0x50, 0x4E, 0x47, 0x00, 0x0A, 0xFF])
            try binary.write(to: png)
            func post(_ arguments: [String], launcher: [String] = []) async throws -> (CLIResult, RecordedRequest?) {
                let before = server.requests(to: "/api/v2/items").count
                let result = try await CLIProcess.run(
                    ["request", "--provider", "qiita", "-X", "POST", url] + arguments, environment: environment,
                    launcher: launcher)
                let requests = server.requests(to: "/api/v2/items")
                return (result, requests.count > before ? requests.last : nil)
            }
            // -d @FILE: line breaks removed, as curl does; checked as a form.
            let (fromFile, formRequest) = try await post(["-d", "@\(form.path)"])
            #expect(fromFile.status == 0 && formRequest?.bodyText == "title=a%20b&body=c", "\(fromFile.stderr)")
            #expect(formRequest?.header("Content-Type") == "application/x-www-form-urlencoded")
            let (jsonFile, jsonRequest) = try await post([
                "-d", "@\(json.path)", "-H", "Content-Type: application/json",
            ])
            #expect(jsonFile.status == 0 && jsonRequest?.bodyText == #"{  "title": "x"}"#, "\(jsonFile.stderr)")
            // --data-binary @FILE: every byte, with the type given.
            let (raw, rawRequest) = try await post(["--data-binary", "@\(png.path)", "-H", "Content-Type: image/png"])
            #expect(raw.status == 0 && rawRequest?.body == binary, "\(raw.stderr)")
            // -d @-: standard input, beside --data-urlencode.
            let (piped, pipedRequest) = try await post(
                ["-d", "@-", "--data-urlencode", "n=a b"], launcher: ["/bin/sh", "-c", #"printf 'c=3\n' | "$0" "$@""#])
            #expect(piped.status == 0 && pipedRequest?.bodyText == "c=3&n=a%20b", "\(piped.stderr)")
            // -d @<(…): a pipe from the shell (Foundation's read called it "Permission denied").
            let (substituted, substitutedRequest) = try await post(
                [], launcher: ["/bin/bash", "-c", #""$0" "$@" -d @<(printf 'p=1\n')"#])
            #expect(substituted.status == 0 && substitutedRequest?.bodyText == "p=1", "\(substituted.stderr)")
            // Refused before anything is sent: a missing file, bytes sent as a form.
            let (missing, sent1) = try await post(["-d", "@\(home.path)/nope.json"])
            #expect(
                missing.status == 64
                    && missing.stderr.contains(
                        "-d @\(home.path)/nope.json: the file cannot be read (No such file or directory).")
                    && sent1 == nil,
                "\(missing.stderr)")
            let (directory, sent3) = try await post(["-d", "@\(home.path)"])
            #expect(
                directory.status == 64 && directory.stderr.contains("-d @\(home.path): the file is a directory.")
                    && sent3 == nil, "\(directory.stderr)")
            let (binaryForm, sent2) = try await post(["--data-binary", "@\(png.path)"])
            #expect(
                binaryForm.status == 64 && binaryForm.stderr.contains("it is not text. Give its type with -H")
                    && sent2 == nil, "\(binaryForm.stderr)")
            // JSON without its type: the type is the fix named, not encoding it as a form.
            let payload = home.appendingPathComponent("payload.json")
            try Data(#"{"name": "a b", "tags": ["x"]}"#.utf8).write(to: payload)
            let (jsonBody, sentJSON) = try await post(["--data-binary", "@\(payload.path)"])
            #expect(
                jsonBody.status == 64
                    && jsonBody.stderr.contains(
                        "It looks like JSON: give its type, -H 'Content-Type: application/json'.")
                    && !jsonBody.stderr.contains("--data-urlencode") && sentJSON == nil, "\(jsonBody.stderr)")
            // --data-urlencode name@FILE, as curl: the file's text, line breaks kept, encoded; @- standard input.
            let message = home.appendingPathComponent("message.txt")
            try Data("Hello + world!\nsecond line é".utf8).write(to: message)
            let (fieldFromFile, fieldRequest) = try await post([
                "--data-urlencode", "status@\(message.path)", "--data-urlencode", "email=me@example.com",
            ])
            #expect(
                fieldFromFile.status == 0
                    && fieldRequest?.bodyText
                        == "status=Hello%20%2B%20world%21%0Asecond%20line%20%C3%A9&email=me%40example.com",
                "\(fieldFromFile.stderr)")
            let (fieldPiped, fieldPipedRequest) = try await post(
                ["--data-urlencode", "q@-"], launcher: ["/bin/sh", "-c", #"printf 'a&b' | "$0" "$@""#])
            #expect(fieldPiped.status == 0 && fieldPipedRequest?.bodyText == "q=a%26b", "\(fieldPiped.stderr)")
            // Standard input is read once; bytes are no form field's text; a field needs a name.
            let (twice, sent4) = try await post(
                ["-d", "@-", "--data-urlencode", "q@-"], launcher: ["/bin/sh", "-c", #"printf 'c=3' | "$0" "$@""#])
            #expect(
                twice.status == 64 && twice.stderr.contains("Standard input can be read once") && sent4 == nil,
                "\(twice.stderr)")
            let (twiceD, sent7) = try await post(
                ["-d", "@-", "-d", "@-"], launcher: ["/bin/sh", "-c", #"printf 'c=3' | "$0" "$@""#])
            #expect(
                twiceD.status == 64 && twiceD.stderr.contains("Standard input can be read once") && sent7 == nil,
                "\(twiceD.stderr)")
            // -d repeated, as in curl: every part, joined with & (the last alone was sent).
            let (repeated, repeatedRequest) = try await post([
                "-d", "a=1", "-d", "b=2", "--data-binary", "c=3", "--data-urlencode", "d=4 5",
            ])
            #expect(repeated.status == 0 && repeatedRequest?.bodyText == "a=1&b=2&c=3&d=4%205", "\(repeated.stderr)")
            let (binaryField, sent5) = try await post(["--data-urlencode", "img@\(png.path)"])
            #expect(
                binaryField.status == 64
                    && binaryField.stderr.contains("--data-urlencode img@\(png.path): the file is not UTF-8 text")
                    && sent5 == nil,
                "\(binaryField.stderr)")
            let (nameless, sent6) = try await post(["--data-urlencode", "@\(message.path)"])
            #expect(
                nameless.status == 64 && nameless.stderr.contains("no name before its '@'") && sent6 == nil,
                "\(nameless.stderr)")
        }
    }

    /// Binary bytes are not written to a terminal (curl's rule): in a real
    /// terminal (`script` gives one) the command stops with a hint; through a
    /// pipe every byte arrives.
    @Test(.scriptGivesATerminal)
    func binaryIsNotWrittenToATerminal() async throws {
        try await withServer { server in
            let binary = Data([0x50, 0x4E, 0x47, 0x00, 0x1B, 0x5D, 0x30, 0x3B, 0x70, 0x77, 0x6E, 0x07, 0x00])
            server.route("GET", "/api/v2/image") { _ in
                StubResponse(status: 200, headers: [("Content-Type", "image/png")], body: binary)
            }
            let (piped, terminal) = try await requestPipedAndOnATerminal("/api/v2/image", at: server)
            #expect(piped.status == 0, "\(piped.stderr)")
            #expect(Data(piped.stdout.utf8) == binary, "a pipe gets every byte")
            #expect(terminal.status == 1, "\(terminal.stdout)")
            #expect(terminal.stdout.contains("The response is binary"), "\(terminal.stdout)")
            #expect(!terminal.stdout.contains("\u{1B}]0;pwn"), "the body reached the terminal")
            // A binary refusal: its status is said (exit 3), not "binary" (exit 1).
            server.route("GET", "/api/v2/missing") { _ in
                StubResponse(status: 404, headers: [("Content-Type", "image/png")], body: binary)
            }
            for options in [[], ["-o", "/dev/stdout"]] {
                let (_, refused) = try await requestPipedAndOnATerminal("/api/v2/missing", at: server, options: options)
                #expect(
                    refused.status == 3 && refused.stdout.contains("404") && !refused.stdout.contains("\u{1B}]0;pwn"),
                    "\(options): \(refused.status): \(refused.stdout)")
            }
            // Named as the file, a success's binary body is refused as on standard output.
            let (_, named) = try await requestPipedAndOnATerminal(
                "/api/v2/image", at: server, options: ["-o", "/dev/stdout"])
            #expect(named.status == 1 && named.stdout.contains("The response is binary"), "\(named.stdout)")
        }
    }

    /// Text is shown on a terminal with its escape sequences written out,
    /// colours aside: an OSC 52 in a response would otherwise have put a
    /// command in the user's clipboard. A pipe still gets every byte.
    @Test(.scriptGivesATerminal)
    func escapeSequencesAreShownNotObeyedOnATerminal() async throws {
        try await withServer { server in
            let text = "\u{1B}[32mok\u{1B}[0m \u{1B}]52;c;cm0gLXJmIH4K\u{07} done\n"
            server.route("GET", "/api/v2/text") { _ in
                StubResponse(status: 200, headers: [("Content-Type", "text/plain")], body: Data(text.utf8))
            }
            let (piped, terminal) = try await requestPipedAndOnATerminal("/api/v2/text", at: server)
            #expect(piped.status == 0 && piped.stdout == text, "a pipe gets every byte: \(piped.stderr)")
            #expect(terminal.status == 0, "\(terminal.stdout)")
            #expect(
                terminal.stdout.contains("\u{1B}[32mok\u{1B}[0m")
                    && terminal.stdout.contains(#"\u{1B}]52;c;cm0gLXJmIH4K\u{7} done"#),
                "\(terminal.stdout.debugDescription)")
            #expect(!terminal.stdout.contains("\u{1B}]52"), "the OSC 52 reached the terminal")
            // The terminal named as the file (-o /dev/stdout): the same.
            let (_, named) = try await requestPipedAndOnATerminal(
                "/api/v2/text", at: server, options: ["-o", "/dev/stdout"])
            #expect(
                named.status == 0 && named.stdout.contains(#"\u{1B}]52;c;cm0gLXJmIH4K\u{7} done"#)
                    && !named.stdout.contains("\u{1B}]52"), "\(named.stdout.debugDescription)")
        }
    }

    /// `-o` replaces a file only once the whole body has arrived: a transfer
    /// that fails part-way (here at `--timeout`) left it truncated before;
    /// now it stays as it was, with nothing left beside it. A whole body
    /// replaces it, its mode kept.
    @Test func outputReplacesAFileOnlyWithAWholeBody() async throws {
        try await withServer { server in
            server.route("GET", "/api/v2/slow") { _ in .streaming(.drip(every: .milliseconds(200))) }
            server.route("GET", "/api/v2/whole") { _ in .json(#"{"whole":true}"#) }
            let home = try signedInToQiita(at: server)
            defer { try? FileManager.default.removeItem(at: home) }
            let directory = home.appendingPathComponent("out")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let file = directory.appendingPathComponent("data.json")
            try Data("precious".utf8).write(to: file)
            #expect(chmod(file.path, 0o600) == 0)
            let environment = ["AUTHKIT_HOME": home.path, "AUTHKIT_QIITA_CLIENT_ID": "c"]
            // Only the cut transfer's timeout is short: a loaded CI run (24 tests on 2 cores)
            // can take the whole body past 2 s, and that fetch must succeed.
            func fetch(_ path: String, timeout: Int = 30) async throws -> CLIResult {
                try await CLIProcess.run(
                    [
                        "request", "--provider", "qiita", "--timeout", "\(timeout)", "-o", file.path,
                        "\(server.baseURL)\(path)",
                    ],
                    environment: environment)
            }
            let cut = try await fetch("/api/v2/slow", timeout: 2)
            #expect(cut.status != 0 && cut.stderr.contains("within 2 s"), "\(cut.stderr)")
            #expect(try String(contentsOf: file, encoding: .utf8) == "precious")
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["data.json"])
            let whole = try await fetch("/api/v2/whole")
            #expect(whole.status == 0, "\(whole.stderr)")
            #expect(try String(contentsOf: file, encoding: .utf8) == #"{"whole":true}"#)
            let mode = try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? Int
            #expect(mode == 0o600)
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["data.json"])
            // Without its set-user-ID bit: a download kept a program's, where
            // curl's write clears it.
            #expect(chmod(file.path, 0o4755) == 0)
            #expect(try await fetch("/api/v2/whole").status == 0)
            var info = stat()
            #expect(
                stat(file.path, &info) == 0 && info.st_mode & 0o7777 == 0o755, "mode \(String(info.st_mode, radix: 8))")
            // `-o -` is standard output, as in curl (a file named `-` was written).
            let dash = try await CLIProcess.run(
                ["request", "--provider", "qiita", "-o", "-", "\(server.baseURL)/api/v2/whole"],
                environment: environment)
            #expect(dash.status == 0 && dash.stdout == #"{"whole":true}"#, "\(dash.stderr)")
            #expect(!FileManager.default.fileExists(atPath: FileManager.default.currentDirectoryPath + "/-"))
            // Another user's file is not replaced through the directory (it
            // became this user's, where curl -o is refused): written to as
            // it is, the system deciding, its owner kept. (Root may write
            // it, as curl running as root would.)
            if geteuid() == 0 {
                let theirs = directory.appendingPathComponent("theirs.json")
                try Data("theirs".utf8).write(to: theirs)
                #expect(chown(theirs.path, 1001, 1001) == 0)
                let written = try await CLIProcess.run(
                    ["request", "--provider", "qiita", "-o", theirs.path, "\(server.baseURL)/api/v2/whole"],
                    environment: environment)
                #expect(written.status == 0, "\(written.stderr)")
                let owner = try FileManager.default.attributesOfItem(atPath: theirs.path)[.ownerAccountID] as? Int
                #expect(owner == 1001, "the file changed hands: now \(owner ?? -1)")
                try FileManager.default.removeItem(at: theirs)
            }
            // A device is written to as it is: /dev/null takes the body.
            let null = try await CLIProcess.run(
                ["request", "--provider", "qiita", "-o", "/dev/null", "\(server.baseURL)/api/v2/whole"],
                environment: environment)
            #expect(null.status == 0, "\(null.stderr)")
            // Ctrl-C or SIGTERM mid-transfer: the partial copy goes too (it
            // was left behind, up to --max-size, as the `defer` that removes
            // it does not run when a signal ends the process).
            for signal in [SIGINT, SIGTERM] {
                let partialSeen = LockedFlag()
                let stopped = try await CLIProcess.run(
                    [
                        "request", "--provider", "qiita", "--timeout", "30", "-o", file.path,
                        "\(server.baseURL)/api/v2/slow",
                    ],
                    environment: environment,
                    signalWhen: {
                        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
                        if names.contains(where: { $0.hasPrefix(".data.json.authkit-") }) { partialSeen.set() }
                        return partialSeen.value
                    }, signals: [signal])
                #expect(partialSeen.value && stopped.status != 0, "\(stopped.stderr)")
                #expect(try String(contentsOf: file, encoding: .utf8) == #"{"whole":true}"#)
                let left = try FileManager.default.contentsOfDirectory(atPath: directory.path)
                #expect(left == ["data.json"], "\(signal): \(left); \(stopped.status) \(stopped.stderr)")
            }
        }
    }

    final class LockedFlag: @unchecked Sendable {
        private let lock = NSLock()
        private var flag = false
        var value: Bool { lock.withLock { flag } }
        func set() { lock.withLock { flag = true } }
    }

    /// `-i` on a terminal: a header value's controls are written out as the
    /// body's are. swift-http-types turns C0 controls into spaces but keeps
    /// C1 ones, and a terminal obeys U+009B (CSI) and U+009D (OSC) as it
    /// obeys ESC [ and ESC ]. A pipe gets the header as it came.
    @Test(.scriptGivesATerminal)
    func headerControlsAreShownNotObeyedOnATerminal() async throws {
        try await withServer { server in
            let evil = "a\u{9B}2Jb\u{9D}52;c;cm0gLXJmIH4K\u{9C}"
            server.route("GET", "/api/v2/headers") { _ in
                StubResponse(
                    status: 200, headers: [("Content-Type", "text/plain"), ("X-Evil", evil)], body: Data("ok\n".utf8))
            }
            let (piped, terminal) = try await requestPipedAndOnATerminal(
                "/api/v2/headers", at: server, options: ["-i"])
            #expect(piped.status == 0 && piped.stdout.contains("X-Evil: \(evil)"), "\(piped.stdout.debugDescription)")
            #expect(terminal.status == 0, "\(terminal.stdout)")
            #expect(
                !terminal.stdout.unicodeScalars.contains { (0x80...0x9F).contains($0.value) },
                "a C1 control reached the terminal: \(terminal.stdout.debugDescription)")
            #expect(terminal.stdout.contains(#"\u{9B}2J"#), "\(terminal.stdout.debugDescription)")
        }
    }

    /// On a terminal a body without a final line break gets one, so the
    /// error that follows a non-2xx answer (and the shell's prompt) starts
    /// its own line; a pipe gets the server's bytes unchanged.
    @Test(.scriptGivesATerminal)
    func aBodyEndsItsLineOnATerminal() async throws {
        try await withServer { server in
            let json = #"{"error":"nope"}"#
            server.route("GET", "/api/v2/denied") { _ in
                StubResponse(status: 403, headers: [("Content-Type", "application/json")], body: Data(json.utf8))
            }
            let (piped, terminal) = try await requestPipedAndOnATerminal("/api/v2/denied", at: server)
            #expect(
                piped.status == 3 && piped.stdout == json,
                "a pipe gets the bytes unchanged: \(piped.stdout.debugDescription)")
            let lines = terminal.stdout.split(whereSeparator: \.isNewline).map(String.init)
            #expect(
                lines.contains(json) && lines.contains { $0.hasPrefix("authkit: error: GET ") },
                "\(terminal.stdout.debugDescription)")
        }
    }
}
