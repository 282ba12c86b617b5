import AuthKit
import AuthKitTestSupport
import Foundation
import Testing

@testable import authkit

/// `authkit sign`: it signs what will be sent, with the keys given.
@Suite(.serialized) struct SignCommandTests: CLIFixture {
    /// `sign` signs what will be sent: a body or URL that a server (or curl)
    /// would read differently from how it is signed is refused.
    @Test func signRefusesWhatWouldBeSentDifferently() async throws {
        let keys = ["--consumer-key", "k", "--consumer-secret", "s"]
        for (arguments, expected) in [
            (["https://x.example/", "-d", "a=%zz"], "'%' that is not followed by two hex digits"),
            (["https://x.example/", "-d", "a=b c"], "contains a space"),
            // JSON is not signed at all: leaving -d out is the fix, not encoding it.
            (["https://x.example/", "-d", #"{"a": 1}"#], "-d looks like JSON, and OAuth 1.0a signs only a form body"),
            (["https://x.example/a b"], "contains a space or control character"),
            (["https://me:hunter2@x.example/"], "carries a user name or password"),
            // RFC 5849 §3.3: a positive integer in digits; `+…` was signed as `%2B…`.
            (["https://x.example/", "--timestamp", "+1318622958"], "--timestamp takes whole seconds since 1970"),
            (["https://x.example/", "--timestamp", "01318622958"], "--timestamp takes whole seconds since 1970"),
            // PLAINTEXT's signature is the secrets themselves (RFC 5849 §3.4.4): TLS only.
            (
                ["http://x.example/", "--signature-method", "PLAINTEXT"],
                "http://x.example/ is plain http on a host that is not this machine"
            ),
        ] {
            let result = try await CLIProcess.run(["sign"] + arguments + keys, environment: [:])
            #expect(
                result.status == 64 && result.stderr.contains(expected) && !result.stdout.contains("oauth_signature"),
                "\(arguments): \(result.stderr)")
            #expect(!result.stderr.contains("oauth_signature"))
        }
        // An empty AUTHKIT_TOKEN_SECRET (exported unset) is refused; an empty
        // token secret given on purpose is RFC 5849's own.
        let unset = try await CLIProcess.run(
            ["sign", "https://x.example/", "--token", "t"] + keys, environment: ["AUTHKIT_TOKEN_SECRET": ""])
        #expect(
            unset.status == 64 && unset.stderr.contains("AUTHKIT_TOKEN_SECRET is empty")
                && unset.stderr.contains("--token-secret ''"), "\(unset.stderr)")
        let empty = try await CLIProcess.run(
            ["sign", "https://x.example/", "--token", "t", "--token-secret", ""] + keys, environment: [:])
        #expect(empty.status == 0 && empty.stdout.hasPrefix("Authorization: OAuth "), "\(empty.stderr)")
        let fine = try await CLIProcess.run(
            ["sign", "https://x.example/?q=a%20b", "-d", "a=1%2B1"] + keys, environment: [:])
        #expect(fine.status == 0 && fine.stdout.hasPrefix("Authorization: OAuth "), "\(fine.stderr)")
        let json = try await CLIProcess.run(["sign", "https://x.example/", "-d", #"{"a":1}"#] + keys, environment: [:])
        #expect(json.status == 64 && json.stderr.contains("leave out -d") && !json.stderr.contains("Encode it"))
        // A '+' is a form body's space (RFC 5849 §3.4.1.3.1 decodes the body
        // so before signing): signed as %20 would be, with a note for whoever
        // meant a plus (issue 44, item 8; it was refused).
        let pinned = keys + ["--nonce", "n", "--timestamp", "1318622958"]
        let plus = try await CLIProcess.run(["sign", "https://x.example/", "-d", "a=1+1"] + pinned, environment: [:])
        let space = try await CLIProcess.run(
            ["sign", "https://x.example/", "-d", "a=1%201"] + pinned, environment: [:])
        let literal = try await CLIProcess.run(
            ["sign", "https://x.example/", "-d", "a=1%2B1"] + pinned, environment: [:])
        #expect(
            plus.status == 0 && plus.stdout == space.stdout && plus.stdout != literal.stdout,
            "\(plus.stdout) \(plus.stderr)")
        #expect(plus.stderr.contains("write %2B for a plus sign") && !space.stderr.contains("%2B"), "\(plus.stderr)")

        // -d @FILE signs the file's form, as request and curl -d send it (it
        // signed the text '@FILE', silently); a file that is not there is named.
        let fixed = keys + ["--nonce", "n", "--timestamp", "1318622958"]
        let directory = TemporaryDirectory.url("authkit-sign-form")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("body.txt")
        try Data("a=1%2B1\r\n".utf8).write(to: file)
        let typed = try await CLIProcess.run(["sign", "https://x.example/", "-d", "a=1%2B1"] + fixed, environment: [:])
        let fromFile = try await CLIProcess.run(
            ["sign", "https://x.example/", "-d", "@" + file.path] + fixed, environment: [:])
        #expect(
            typed.status == 0 && fromFile.status == 0 && fromFile.stdout == typed.stdout,
            "\(fromFile.stdout) \(fromFile.stderr)")
        let missing = try await CLIProcess.run(
            ["sign", "https://x.example/", "-d", "@" + directory.appendingPathComponent("none").path] + fixed,
            environment: [:])
        #expect(missing.status == 64 && missing.stderr.contains("-d @") && missing.stdout.isEmpty, "\(missing.stderr)")
        try Data("a=b c".utf8).write(to: file)
        for key in ["", "k\u{1B}[2J"] {
            let odd = try await CLIProcess.run(
                ["sign", "https://x.example/", "--consumer-key", key, "--consumer-secret", "s"], environment: [:])
            #expect(
                odd.status == 64 && odd.stderr.contains("--consumer-key is") && !odd.stderr.contains("\u{1B}")
                    && odd.stdout.isEmpty, "\(odd.stderr)")
        }
        // An empty nonce is no nonce (RFC 5849 §3.3): it was signed into the header.
        for nonce in ["", "n\u{7}"] {
            let odd = try await CLIProcess.run(
                ["sign", "https://x.example/", "--nonce", nonce] + keys, environment: [:])
            #expect(
                odd.status == 64 && odd.stderr.contains("--nonce is") && !odd.stderr.contains("\u{7}")
                    && odd.stdout.isEmpty, "\(odd.stderr)")
        }
        let unencoded = try await CLIProcess.run(
            ["sign", "https://x.example/", "-d", "@" + file.path] + fixed, environment: [:])
        #expect(unencoded.status == 64 && unencoded.stderr.contains("contains a space"), "\(unencoded.stderr)")
    }

    /// `-d` repeated, as in curl: every part is signed, joined with `&`
    /// (the last alone was, and the header did not match the body sent).
    @Test func repeatedDataIsSignedWhole() async throws {
        let environment = ["AUTHKIT_HOME": try CLIProcess.home("authkit-sign-repeated").path]
        let common = [
            "sign", "-X", "POST", "https://api.example.com/x", "--consumer-key", "k", "--consumer-secret", "s",
            "--nonce", "n", "--timestamp", "1",
        ]
        let joined = try await CLIProcess.run(common + ["-d", "a=1&b=2"], environment: environment)
        let repeated = try await CLIProcess.run(common + ["-d", "a=1", "-d", "b=2"], environment: environment)
        let last = try await CLIProcess.run(common + ["-d", "b=2"], environment: environment)
        #expect(
            joined.status == 0 && repeated.status == 0 && repeated.stdout == joined.stdout
                && repeated.stdout != last.stdout, "\(repeated.stderr)")
        let twice = try await CLIProcess.run(common + ["-d", "@-", "-d", "@-"], environment: environment)
        #expect(twice.status == 64 && twice.stderr.contains("Standard input can be read once"), "\(twice.stderr)")
    }

    /// A client-only signature (no `--token`) is made with the consumer
    /// secret alone, whatever AUTHKIT_TOKEN_SECRET holds (exported for
    /// earlier token requests, it was used as the key's second half, and a
    /// server answered 401). The expected signature is computed outside
    /// AuthKit (Python's hmac over RFC 5849 §3.4.1's base string by hand).
    @Test func aClientOnlySignatureIgnoresAnExportedTokenSecret() async throws {
        let command = [
            "sign", "https://example.com/x?a=1", "--consumer-key", "k", "--consumer-secret", "s", "--nonce", "n",
            "--timestamp", "1",
        ]
        let expected = #"oauth_signature="BA0W29h2xnwpeOIri9rKogL%2BjbE%3D""#
        let plain = try await CLIProcess.run(command, environment: [:])
        #expect(plain.status == 0 && plain.stdout.contains(expected), "\(plain.stdout)\(plain.stderr)")
        // Whatever it holds: a value, nothing, a pasted line with a space.
        for value in ["zzz", "", " padded\n"] {
            let exported = try await CLIProcess.run(command, environment: ["AUTHKIT_TOKEN_SECRET": value])
            #expect(
                exported.status == 0 && exported.stdout == plain.stdout,
                "\(value.debugDescription): \(exported.stdout)\(exported.stderr)")
        }
    }

    /// The secrets key the signature: a consumer or token secret with a
    /// pasted line break or a space at an end, an empty consumer secret, or a
    /// token without its secret, signed with another key (exit 0), for the
    /// provider to answer 401. Each is refused naming the flag or variable,
    /// never the value. (An empty token secret is one: RFC 5849 §3.4.2.)
    @Test func signRefusesSecretsThatWouldSignWithAnotherKey() async throws {
        let url = ["https://x.example/", "--consumer-key", "k", "--nonce", "n", "--timestamp", "1"]
        let secretFile = TemporaryDirectory.url("authkit-sign-secret")
        try FileManager.default.createDirectory(at: secretFile, withIntermediateDirectories: true)
        try Data("hunter2-secret\n".utf8).write(to: secretFile.appendingPathComponent("secret"))
        defer { try? FileManager.default.removeItem(at: secretFile) }
        for (arguments, environment, expected) in [
            (
                ["--consumer-secret", "hunter2-secret\n"], [String: String](),
                "--consumer-secret: the secret holds a line break"
            ),
            (
                ["--consumer-secret", " hunter2-secret"], [:],
                "--consumer-secret: the secret begins or ends with a space"
            ),
            (["--consumer-secret", ""], [:], "--consumer-secret is empty"),
            (
                [], ["AUTHKIT_CONSUMER_SECRET": "hunter2-secret\r\n"],
                "AUTHKIT_CONSUMER_SECRET: the secret holds a line break"
            ),
            (["--consumer-secret", "s", "--token", "t"], [:], "--token needs its secret"),
            (
                ["--consumer-secret", "s", "--token", "t", "--token-secret", "hunter2-secret "], [:],
                "--token-secret: the secret begins or ends with a space"
            ),
            (["--consumer-secret", "s", "--token-secret", "ts"], [:], "--token-secret is given without --token"),
            // As -d reads them: signed with the two characters "@-" (exit 0).
            (
                ["--consumer-secret", "@-"], [:],
                "--consumer-secret takes the secret itself, not a file or standard input. To keep it off the command line, set AUTHKIT_CONSUMER_SECRET"
            ),
            (["--consumer-secret", "-"], [:], "--consumer-secret takes the secret itself"),
            (
                [
                    "--consumer-secret", "s", "--token", "t", "--token-secret",
                    "@" + secretFile.appendingPathComponent("secret").path,
                ], [:], "--token-secret takes the secret itself"
            ),
        ] {
            let result = try await CLIProcess.run(["sign"] + url + arguments, environment: environment)
            #expect(
                result.status == 64 && result.stderr.contains(expected) && result.stdout.isEmpty,
                "\(arguments) \(environment): \(result.stderr)")
            #expect(!result.stderr.contains("hunter2"))
        }
        // A protocol parameter the header carries, given in the query or the body too, was signed and sent twice (RFC 5849 §3.5).
        for (extra, place) in [
            (["-d", "oauth_nonce=evil"], "oauth_nonce is in -d"),
            (["https://x.example/?oauth%5Fconsumer%5Fkey=other"], "oauth_consumer_key is in the URL's query"),
        ] {
            let twice = try await CLIProcess.run(
                ["sign", "--consumer-key", "k", "--consumer-secret", "s"]
                    + (extra.count == 1 ? extra : ["https://x.example/"] + extra), environment: [:])
            #expect(
                twice.status == 64 && twice.stderr.contains(place) && twice.stderr.contains("RFC 5849 §3.5")
                    && twice.stdout.isEmpty, "\(twice.stderr)")
        }
        // A negative timestamp was "Missing value for '--timestamp <timestamp>'".
        let negative = try await CLIProcess.run(
            ["sign", "https://x.example/", "--consumer-key", "k", "--consumer-secret", "s", "--timestamp", "-5"],
            environment: [:])
        #expect(
            negative.status == 64 && negative.stderr.contains("--timestamp takes whole seconds since 1970"),
            "\(negative.stderr)")
        let paired = try await CLIProcess.run(
            ["sign"] + url + ["--consumer-secret", "s", "--token", "t"], environment: ["AUTHKIT_TOKEN_SECRET": "ts"])
        #expect(paired.status == 0 && paired.stdout.contains("oauth_token=\"t\""), "\(paired.stderr)")
    }
}

extension SignCommandTests {
    /// Keys, tokens and secrets that start with '-' (one random base64url
    /// value in 64 does) are taken and signed with; they were "Missing
    /// value" with no hint. A flag in their place is refused, named.
    @Test func aKeyOrSecretThatStartsWithADashIsTaken() async throws {
        let signed = try await CLIProcess.run(
            [
                "sign", "https://x.example/", "--consumer-key", "-ck", "--consumer-secret", "-Xcs", "--token", "-tok",
                "--token-secret", "-ts", "--nonce", "n", "--timestamp", "1",
            ], environment: [:])
        #expect(
            signed.status == 0 && signed.stdout.contains(#"oauth_consumer_key="-ck""#)
                && signed.stdout.contains(#"oauth_token="-tok""#), "\(signed.stderr)")
        // The same header as with the secrets given through the environment.
        let viaEnvironment = try await CLIProcess.run(
            [
                "sign", "https://x.example/", "--consumer-key", "-ck", "--token", "-tok", "--nonce", "n",
                "--timestamp", "1",
            ], environment: ["AUTHKIT_CONSUMER_SECRET": "-Xcs", "AUTHKIT_TOKEN_SECRET": "-ts"])
        #expect(viaEnvironment.status == 0 && viaEnvironment.stdout == signed.stdout, "\(viaEnvironment.stderr)")
        let forgotten = try await CLIProcess.run(
            ["sign", "https://x.example/", "--consumer-key", "k", "--consumer-secret", "--token", "t"],
            environment: [:])
        #expect(
            forgotten.status == 64
                && forgotten.stderr.contains("--consumer-secret took --token as its value, which is a flag"),
            "\(forgotten.stderr)")
    }

    /// An escape that is not UTF-8 (`%FF`, a `%C3` alone) is signed as its
    /// byte by AuthKit and as U+FFFD by oauthlib (RFC 5849 §3.6 encodes
    /// UTF-8 text), so the signature holds at one server and not another:
    /// refused in the query, naming the URL and the escape (it was signed),
    /// and in `-d` said as what it is (it was "a '%' that is not followed
    /// by two hex digits", which `%FF` is not).
    @Test func anEscapeThatIsNotUTF8IsRefusedByName() async throws {
        let keys = ["--consumer-key", "k", "--consumer-secret", "s"]
        for (arguments, said) in [
            (["https://x.example/p?q=%FF"], "https://x.example/p?… has '%FF' in its query, which is not UTF-8"),
            (["https://x.example/?a=%C3&b=1"], "has '%C3' in its query"),
            (["https://x.example/", "-d", "a=%FF"], "it has '%FF', which is not UTF-8 once decoded"),
        ] {
            let result = try await CLIProcess.run(["sign"] + arguments + keys, environment: [:])
            #expect(
                result.status == 64 && result.stderr.contains(said) && !result.stderr.contains("two hex digits")
                    && result.stdout.isEmpty, "\(arguments): \(result.stderr)")
        }
        let fine = try await CLIProcess.run(
            ["sign", "https://x.example/?q=%C3%A9", "-d", "a=%C3%A9"] + keys, environment: [:])
        #expect(fine.status == 0, "\(fine.stderr)")
    }

    /// The "each protocol parameter in one place" check reads names pair by
    /// pair: it decoded the whole query at once, so one value that is not
    /// UTF-8 anywhere (`&z=%FF`) hid every name, and `oauth_nonce` was
    /// signed twice.
    @Test func aProtocolParameterIsFoundWhateverElseTheQueryHolds() throws {
        for (url, body) in [
            ("https://x.example/?oauth_nonce=evil&z=%FF", nil),
            ("https://x.example/?z=%FF&oauth%5Fnonce=evil", nil),
            ("https://x.example/?z=%ZZ&oauth_timestamp=1", nil),
            ("https://x.example/", "z=%FF&oauth_signature=x"),
        ] as [(String, String?)] {
            #expect(throws: CLIError.self, "\(url) \(body ?? "")") {
                try Sign.checkNoProtocolParameter(in: url, body: body.map { Data($0.utf8) }, withToken: false)
            }
        }
        try Sign.checkNoProtocolParameter(
            in: "https://x.example/?oauth_nonce_x=1&z=%FF&oauth_token=t", body: nil, withToken: false)
    }
}
