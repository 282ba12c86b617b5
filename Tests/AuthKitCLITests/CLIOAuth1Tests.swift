import AuthKit
import AuthKitTestSupport
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `authkit` with an OAuth 1.0a provider, against oauthlib's independent
/// server: PIN sign-in through `--manual`, then signed requests whose
/// signatures oauthlib verifies.
@Suite(
    .serialized,
    .enabled("needs Python with oauthlib: set AUTHKIT_PYTHON (bash .ci/run does)") { await InteropPeer.isEnabled })
struct CLIOAuth1Tests {
    let consumerKey = "cli-consumer-key-0001"
    let consumerSecret = "cli-consumer-secret-0001"

    /// A user override of twitter.json whose endpoints are the oauthlib server's.
    func home(for server: InteropPeer) throws -> URL {
        let home = try CLIProcess.home("authkit-cli1")
        let descriptor = """
            {"id": "twitter", "name": "X (local oauthlib)", "protocol": "oauth1",
             "redirect": {"host": "127.0.0.1", "port": 8765, "path": "/callback"},
             "oauth1": {"requestTokenURL": "\(server.baseURL)/request_token", "authorizeURL": "\(server.baseURL)/authorize",
                        "accessTokenURL": "\(server.baseURL)/access_token"}}
            """
        try descriptor.write(
            to: home.appendingPathComponent("providers/twitter.json"), atomically: true, encoding: .utf8)
        return home
    }

    /// Plays the user of the PIN flow: opens the printed authorize URL (the
    /// provider approves at once and shows a PIN) and types the PIN.
    static func typePIN(_ stderr: String) -> String? {
        guard stderr.contains("type the code"),
            let line = stderr.split(separator: "\n").first(where: { $0.contains("/authorize?") }),
            let url = URL(string: line.trimmingCharacters(in: .whitespaces))
        else { return nil }
        let page = Fetch.text(url) ?? ""
        guard let start = page.range(of: "<code id=\"pin\">"),
            let end = page.range(of: "</code>", range: start.upperBound..<page.endIndex)
        else { return nil }
        return String(page[start.upperBound..<end.lowerBound])
    }

    @Test func pinSignInThenSignedRequests() async throws {
        let server = InteropPeer()
        try await server.start(consumerKey: consumerKey, consumerSecret: consumerSecret)
        defer { server.stop() }
        let home = try home(for: server)
        let env = [
            "AUTHKIT_HOME": home.path, "AUTHKIT_TWITTER_CLIENT_ID": consumerKey,
            "AUTHKIT_TWITTER_CLIENT_SECRET": consumerSecret,
        ]

        let signIn = try await CLIProcess.run(
            ["authorize", "--provider", "twitter", "--manual"], environment: env, respond: Self.typePIN)
        #expect(signIn.status == 0, "\(signIn.stderr)")
        #expect(signIn.stdout.contains("\naccount:   authkit-tester"), "\(signIn.stdout)")
        #expect(!signIn.stdout.contains(consumerSecret) && !signIn.stderr.contains(consumerSecret))

        let stored = try await FileCredentialStore(file: home.appendingPathComponent("credentials.json"))
            .allCredentials()
        #expect(stored.count == 1)
        #expect(stored.first?.kind == .oauth1)
        #expect(stored.first?.tokenSecret?.isEmpty == false)

        let get = try await CLIProcess.run(
            ["request", "--provider", "twitter", "\(server.baseURL)/resource?count=2&q=a%20b"], environment: env)
        #expect(get.status == 0, "\(get.stdout) \(get.stderr)")
        #expect(get.stdout.contains(#""ok": true"#))

        let post = try await CLIProcess.run(
            [
                "request", "--provider", "twitter", "-X", "POST", "\(server.baseURL)/resource",
                "-d", "status=Hello%20Ladies%20%2B%20Gentlemen",
            ], environment: env)
        #expect(post.status == 0, "\(post.stdout) \(post.stderr)")
        #expect(post.stdout.contains("Hello Ladies + Gentlemen"))

        // The header `token header` prints is verified by oauthlib for the
        // request it describes: a GET, and a POST whose form body is signed
        // (RFC 5849 §3.4.1.3.1), the method implied by -d as in curl; -d @FILE
        // signs the file's form (its line break removed, as curl -d sends it),
        // not the text '@FILE'.
        let resource = try #require(URL(string: "\(server.baseURL)/resource"))
        let form = "status=Hello%20again"
        let formFile = home.appendingPathComponent("form.txt")
        try Data((form + "\n").utf8).write(to: formFile)
        // A body as form encoders write it, spaces as '+' (issue 44, item 8):
        // oauthlib decodes it so before checking the signature.
        let plusForm = "status=caf%C3%A9+%26+cr%C3%A8me&x=0"
        for (arguments, method, body) in [
            (["-X", "GET"], "GET", nil), (["-d", form], "POST", form), (["-d", "@" + formFile.path], "POST", form),
            (["-X", "POST", "-d", plusForm], "POST", plusForm),
        ] {
            let header = try await CLIProcess.run(
                ["token", "header", "--provider", "twitter", resource.absoluteString] + arguments, environment: env)
            #expect(header.stdout.hasPrefix("Authorization: OAuth "), "\(header.stderr)")
            var request = URLRequest(url: resource)
            request.httpMethod = method
            request.setValue(
                String(header.stdout.dropFirst("Authorization: ".count).trimmingCharacters(in: .newlines)),
                forHTTPHeaderField: "Authorization")
            if let body {
                request.httpBody = Data(body.utf8)
                request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
            }
            let (data, response) = try await URLSession.shared.data(for: request)
            #expect(
                (response as? HTTPURLResponse)?.statusCode == 200, "\(method): \(String(decoding: data, as: UTF8.self))"
            )
        }
        let unsigned = try await CLIProcess.run(["token", "header", "--provider", "twitter"], environment: env)
        #expect(unsigned.status == 64)
        #expect(unsigned.stderr.contains("give its method and URL"))
    }
}

extension CLIOAuth1Tests {
    /// OAuth 1.0a through the loopback listener: `$BROWSER` follows oauthlib's
    /// redirect to the callback, which the listener catches.
    @Test func browserSignInWithCallback() async throws {
        let server = InteropPeer()
        try await server.start(consumerKey: consumerKey, consumerSecret: consumerSecret)
        defer { server.stop() }
        let home = try home(for: server)
        // Any free port this time: drop the fixed one from the override.
        let file = home.appendingPathComponent("providers/twitter.json")
        try String(contentsOf: file, encoding: .utf8).replacingOccurrences(of: #""port": 8765, "#, with: "")
            .write(to: file, atomically: true, encoding: .utf8)
        try "#!/bin/sh\nexec curl -s -L --max-time 10 -o /dev/null \"$1\"\n".write(
            to: home.appendingPathComponent("browser.sh"), atomically: true, encoding: .utf8)
        let env = [
            "AUTHKIT_HOME": home.path, "AUTHKIT_TWITTER_CLIENT_ID": consumerKey,
            "AUTHKIT_TWITTER_CLIENT_SECRET": consumerSecret,
            "BROWSER": "/bin/sh \(home.path)/browser.sh",
        ]
        let result = try await CLIProcess.run(["authorize", "--provider", "twitter", "--json"], environment: env)
        #expect(result.status == 0, "\(result.stderr)")
        let credential = try JSONDecoder.iso.decode(Credential.self, from: Data(result.stdout.utf8))
        #expect(credential.kind == .oauth1)
        #expect(credential.rawFields["screen_name"] == .string("authkit-tester"))
    }
}

/// A blocking GET for use inside the subprocess prompt handler.
enum Fetch {
    static func text(_ url: URL) -> String? {
        let result = LockedBox<String?>(nil)
        let done = DispatchSemaphore(value: 0)
        URLSession.shared.dataTask(with: url) { data, _, _ in
            result.value = data.map { String(decoding: $0, as: UTF8.self) }
            done.signal()
        }.resume()
        _ = done.wait(timeout: .now() + 10)
        return result.value
    }
}

final class LockedBox<T>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: T
    init(_ value: T) { stored = value }
    var value: T {
        get { lock.withLock { stored } }
        set { lock.withLock { stored = newValue } }
    }
}
