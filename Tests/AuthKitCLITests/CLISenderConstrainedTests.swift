import AuthKit
import AuthKitSandbox
import AuthKitTestSupport
import Crypto
import Foundation
import Testing

/// The command line against a sandbox of a provider that takes pushed
/// requests only and binds tokens with DPoP, as docs/sender-constrained.md
/// shows it: sign in, request, token header, refresh, client credentials
/// with a key, token exchange.
@Suite struct CLISenderConstrainedTests {
    @Test func aBoundProviderWorksFromTheCommandLine() async throws {
        let home = try CLIProcess.home("authkit-cli-dpop")
        try FileManager.default.createDirectory(
            at: home.appendingPathComponent("providers"), withIntermediateDirectories: true)
        let file = """
            {"id": "fapi", "name": "FAPI bank", "protocol": "oauth2", "dpop": "on",
             "authorization": {"url": "https://as.bank.example/authorize", "par": "https://as.bank.example/par"},
             "token": {"url": "https://as.bank.example/token"}, "scopes": {"default": ["accounts"]},
             "whoAmI": {"url": "https://api.bank.example/me", "subject": "id", "name": "login"}}
            """
        try Data(file.utf8).write(to: home.appendingPathComponent("providers/fapi.json"))
        let key = P256.Signing.PrivateKey()
        let keyFile = home.appendingPathComponent("client.pem").path
        _ = FileManager.default.createFile(
            atPath: keyFile, contents: Data(key.pemRepresentation.utf8), attributes: [.posixPermissions: 0o600])
        var options = SandboxOptions(approves: true)
        options.clientKey = key.publicKey.pemRepresentation
        let sandbox = try await Sandbox.start(
            emulating: try ProviderDescriptor(json: Data(file.utf8)), options: options)
        defer { Task { await sandbox.stop() } }
        let environment = ["AUTHKIT_HOME": home.path, "AUTHKIT_SANDBOX": sandbox.baseURL.absoluteString]
        func run(_ arguments: [String]) async throws -> CLIResult {
            try await CLIProcess.run(arguments, environment: environment, timeout: 60)
        }

        let signIn = try await run(["authorize", "--provider", "fapi", "--scripted-browser", "--json"])
        #expect(signIn.status == 0, "\(signIn.stderr)")
        #expect(signIn.stdout.contains(#""tokenType" : "DPoP""#) || signIn.stdout.contains(#""tokenType":"DPoP""#))
        #expect(!signIn.stdout.contains("dpopKey"), "--json printed the DPoP key")
        #expect(sandbox.events.contains { $0.step == "par" && $0.status == 201 })

        let me = try await run(["request", "--provider", "fapi", sandbox.whoamiURL.absoluteString])
        #expect(me.status == 0 && me.stdout.contains(#""account":"alice""#), "\(me.stderr)")

        let header = try await run(["token", "header", "--provider", "fapi", sandbox.whoamiURL.absoluteString])
        let lines = header.stdout.split(separator: "\n")
        #expect(lines.count == 2 && lines[0].hasPrefix("Authorization: DPoP ") && lines[1].hasPrefix("DPoP: ey"))
        // A resource server's nonce, given by hand (RFC 9449 §9), goes in the proof.
        let nonced = try await run([
            "token", "header", "--provider", "fapi", "--dpop-nonce", "rs-nonce.1~", sandbox.whoamiURL.absoluteString,
        ])
        let proof = try #require(
            nonced.stdout.split(separator: "\n").last?.dropFirst("DPoP: ".count), "\(nonced.stderr)")
        var claims = String(proof.split(separator: ".")[1]).replacingOccurrences(of: "-", with: "+")
            .replacingOccurrences(of: "_", with: "/")
        claims += String(repeating: "=", count: (4 - claims.count % 4) % 4)
        let decoded =
            try JSONSerialization.jsonObject(with: try #require(Data(base64Encoded: claims))) as? [String: Any]
        #expect(decoded?["nonce"] as? String == "rs-nonce.1~", "\(decoded ?? [:])")
        for bad in ["a b", "quo\"te", ""] {
            let refused = try await run([
                "token", "header", "--provider", "fapi", "--dpop-nonce", bad, sandbox.whoamiURL.absoluteString,
            ])
            #expect(refused.status == 64 && refused.stderr.contains("--dpop-nonce"), "\(refused.stderr)")
        }
        let noURL = try await run(["token", "header", "--provider", "fapi"])
        #expect(noURL.status == 64 && noURL.stderr.contains("DPoP-bound"), "\(noURL.stderr)")

        let status = try await run(["token", "status", "--provider", "fapi"])
        #expect(
            status.status == 0 && status.stdout.contains("valid, account alice"), "\(status.stdout)\(status.stderr)")

        let refreshed = try await run(["token", "refresh", "--provider", "fapi"])
        #expect(refreshed.status == 0 && refreshed.stdout.contains("bound to:  DPoP key"), "\(refreshed.stderr)")
        #expect(refreshed.stdout.hasPrefix("Refreshed fapi; it expires "), "\(refreshed.stdout)")

        let machine = try await run([
            "authorize", "--provider", "fapi", "--client-credentials", "--label", "svc", "--private-key", keyFile,
        ])
        #expect(machine.status == 0 && machine.stdout.contains("grant:     client_credentials"), "\(machine.stderr)")

        let traded = try await run([
            "token", "exchange", "--provider", "fapi", "--label", "svc", "--scope", "accounts", "--as", "narrow",
            "--private-key", keyFile,
        ])
        #expect(traded.status == 0 && traded.stdout.contains("fapi (narrow)"), "\(traded.stderr)")
        let narrow = try await run([
            "request", "--provider", "fapi", "--label", "narrow", sandbox.whoamiURL.absoluteString,
        ])
        #expect(narrow.status == 0 && narrow.stdout.contains(#""account":"client:sandbox-client""#), "\(narrow.stderr)")
        // The same --as again replaces what is stored there, and says so (it
        // was replaced without a word); a label a shell reads is refused, as
        // a sign-in's --label is.
        let again = try await run([
            "token", "exchange", "--provider", "fapi", "--label", "svc", "--scope", "accounts", "--as", "narrow",
            "--private-key", keyFile,
        ])
        #expect(
            again.status == 0 && again.stderr.contains("Note: this replaced the")
                && again.stderr.contains("stored for fapi (narrow)"),
            "\(again.stderr)")
        let odd = try await run([
            "token", "exchange", "--provider", "fapi", "--label", "svc", "--as", "a b", "--private-key", keyFile,
        ])
        #expect(odd.status == 64 && odd.stderr.contains("--as 'a b' holds"), "\(odd.stderr)")
        // A credential under --as that renews itself (svc: a client
        // credentials grant; a sign-in's refresh token alike) is not replaced
        // without --force, and nothing is sent: it was replaced for good.
        let over = try await run([
            "token", "exchange", "--provider", "fapi", "--scope", "accounts", "--as", "svc", "--private-key", keyFile,
        ])
        #expect(
            over.status == 65 && over.stderr.contains("renews itself") && over.stderr.contains("--force"),
            "\(over.status) \(over.stderr)")
        let kept = try await run(["token", "show", "--provider", "fapi", "--label", "svc"])
        #expect(kept.stdout.contains("grant:     client_credentials"), "\(kept.stdout)")
    }
}
