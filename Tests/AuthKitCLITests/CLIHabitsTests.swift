import AuthKit
import AuthKitSandbox
import AuthKitTestSupport
import Foundation
import Testing

/// What a newcomer (and a user of `gh auth`) tripped on: one error prefix,
/// the provider typed without `--provider`, `authkit sandbox` alone, and
/// scopes joined by commas.
@Suite struct CLIHabitsTests {
    @Test func everyUsageErrorHasOnePrefix() async throws {
        for arguments in [["token", "list", "--bogus"], ["authorize"], ["request", "--provider"]] {
            let result = try await CLIProcess.run(arguments, environment: [:])
            #expect(result.status == 64, "\(arguments)")
            #expect(result.stderr.hasPrefix("authkit: error: "), "\(arguments): \(result.stderr)")
            #expect(!result.stderr.contains("Error: "), "\(arguments): \(result.stderr)")
        }
    }

    @Test func aProviderTypedWithoutTheFlagIsNamed() async throws {
        let result = try await CLIProcess.run(["authorize", "github"], environment: [:])
        #expect(result.status == 64)
        #expect(result.stderr.contains("Did you mean: authkit authorize --provider github"), "\(result.stderr)")
        // A word that is no provider gets no guess.
        let other = try await CLIProcess.run(["authorize", "nosuchprovider"], environment: [:])
        #expect(other.status == 64 && !other.stderr.contains("Did you mean: authkit"), "\(other.stderr)")
        // The rest of the line is not repeated: it may hold a secret.
        let secret = try await CLIProcess.run(
            ["authorize", "github", "--client-secret", "S3CRET-VALUE-1234"], environment: [:])
        #expect(secret.status == 64)
        #expect(
            secret.stderr.contains("Did you mean: authkit authorize --provider github and your other options"),
            "\(secret.stderr)")
        #expect(!secret.stderr.contains("S3CRET-VALUE-1234"))
        let header = try await CLIProcess.run(
            ["request", "github", "-H", "X-Api-Key: KEY-123456", "https://api.github.com/user"], environment: [:])
        #expect(!header.stderr.contains("KEY-123456"), "\(header.stderr)")
    }

    /// `sandbox try` takes `--no-browser` (the advice `authorize` gives where
    /// no browser opens), `--label` and `--device`; a malformed config.json,
    /// of which it needs nothing, is a warning there, not the end of the run.
    @Test func sandboxTryTakesNoBrowserLabelAndDeviceAndNoSettings() async throws {
        let home = try CLIProcess.home("authkit-sandbox-try-habits")
        defer { try? FileManager.default.removeItem(at: home) }
        let config = home.appendingPathComponent("config.json")
        try Data("{not json".utf8).write(to: config)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: config.path)
        let environment = ["AUTHKIT_HOME": home.path]
        let tried = try await CLIProcess.run(
            ["sandbox", "try", "--provider", "github", "--no-browser", "--label", "work", "--device"],
            environment: environment)
        #expect(tried.status == 0 && tried.stdout.contains("device code (--device)"), "\(tried.stderr)")
        #expect(
            tried.stderr.contains("warning:") && tried.stderr.contains(config.path)
                && tried.stderr.contains("not used here"), "\(tried.stderr)")
        let sandboxStore = try String(
            contentsOf: home.appendingPathComponent("sandbox/credentials.json"), encoding: .utf8)
        #expect(sandboxStore.contains(#""label" : "work""#), "\(sandboxStore)")
        // A second run replaces the first's credential, and says that a
        // terminal using it with a running `sandbox serve` is affected.
        let again = try await CLIProcess.run(
            ["sandbox", "try", "--provider", "github", "--label", "work", "--device"], environment: environment)
        #expect(
            again.status == 0 && again.stderr.contains("replaced the sandbox credential stored for github (work)")
                && again.stderr.contains("sandbox serve"), "\(again.stderr)")
        // A real command still reads config.json, and names what is wrong with it.
        let real = try await CLIProcess.run(["token", "list"], environment: environment)
        #expect(real.status == 65 && real.stderr.contains(config.path), "\(real.stderr)")

        let noDevice = try await CLIProcess.run(
            ["sandbox", "try", "--provider", "qiita", "--device"], environment: environment)
        #expect(noDevice.status == 64 && noDevice.stderr.contains("no device authorization endpoint"))
        let badLabel = try await CLIProcess.run(
            ["sandbox", "try", "--provider", "qiita", "--label", "a b"], environment: environment)
        #expect(badLabel.status == 64 && badLabel.stderr.contains("which a shell reads"), "\(badLabel.stderr)")
    }

    @Test func sandboxAloneShowsItsHelp() async throws {
        let result = try await CLIProcess.run(["sandbox"], environment: [:])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(
            result.stdout.contains("SUBCOMMANDS") && result.stdout.contains("serve") && result.stdout.contains("try"))
        // Its usage names the command as typed (it said `sandbox <subcommand>`).
        #expect(
            result.stdout.contains("USAGE: authkit sandbox") && result.stdout.contains("'authkit help sandbox"),
            "\(result.stdout)")
    }

    /// `sandbox try --browser` where no browser can open: the scripted
    /// browser approves, and it is said so. The advice was `authorize`'s,
    /// "pass --no-browser to open the URL yourself", which in `sandbox try`
    /// is the default and means the scripted browser.
    @Test func sandboxTryWithABrowserNoneCanOpenSaysWhatItDoes() async throws {
        let home = try CLIProcess.home("authkit-try-browser")
        defer { try? FileManager.default.removeItem(at: home) }
        let result = try await CLIProcess.run(
            ["sandbox", "try", "--provider", "github", "--browser", "--timeout", "30"],
            environment: ["AUTHKIT_HOME": home.path, "SSH_CONNECTION": "10.0.0.1 50000 10.0.0.2 22"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(
            result.stderr.contains("the sandbox's scripted browser approves as alice instead")
                && !result.stderr.contains("--no-browser"), "\(result.stderr)")
    }

    @Test func scopesJoinedByCommasAreSplit() async throws {
        let home = try CLIProcess.home("authkit-scopes-commas")
        let sandbox = try await Sandbox.start(
            emulating: try ProviderCatalog(includeBundled: true, directories: []).descriptor(id: "github"),
            options: SandboxOptions(approves: true))
        defer { Task { await sandbox.stop() } }
        let result = try await CLIProcess.run(
            ["authorize", "--provider", "github", "--scripted-browser", "--scope", "read:user,repo", "--json"],
            environment: ["AUTHKIT_HOME": home.path, "AUTHKIT_SANDBOX": sandbox.baseURL.absoluteString], timeout: 60)
        #expect(result.status == 0, "\(result.stderr)")
        let credential = try JSONDecoder.iso.decode(Credential.self, from: Data(result.stdout.utf8))
        #expect(Set(credential.scopes) == ["read:user", "repo"], "\(credential.scopes)")
        let empty = try await CLIProcess.run(
            ["authorize", "--provider", "github", "--scope", "repo,"], environment: [:])
        #expect(empty.status == 64 && empty.stderr.contains("got an empty one"), "\(empty.stderr)")
    }

    @Test func aBrokenOverrideOfABundledProviderSaysHowToGetItBack() async throws {
        let home = try CLIProcess.home("authkit-broken-override")
        let providers = home.appendingPathComponent("providers")
        try FileManager.default.createDirectory(at: providers, withIntermediateDirectories: true)
        let file = providers.appendingPathComponent("github.json")
        _ = FileManager.default.createFile(
            atPath: file.path, contents: Data(#"{"id": "github", "protocol": "oauth2"}"#.utf8),
            attributes: [.posixPermissions: 0o600])
        let environment = ["AUTHKIT_HOME": home.path]
        let signIn = try await CLIProcess.run(["authorize", "--provider", "github"], environment: environment)
        #expect(signIn.status == 65, "\(signIn.stderr)")
        #expect(
            signIn.stderr.contains("authkit providers override github --force") && signIn.stderr.contains(file.path))
        let list = try await CLIProcess.run(["providers", "list"], environment: environment)
        #expect(list.status == 0 && list.stderr.contains("authkit providers override github --force"), "\(list.stderr)")
    }

    @Test func theSandboxIsNamedWhereItIsUsedAndAPublicClientIsExplained() async throws {
        let home = try CLIProcess.home("authkit-sandbox-habits")
        var options = SandboxOptions(approves: true)
        options.clientSecret = nil
        let sandbox = try await Sandbox.start(
            emulating: try ProviderCatalog(includeBundled: true, directories: []).descriptor(id: "google"),
            options: options)
        defer { Task { await sandbox.stop() } }
        let environment = ["AUTHKIT_HOME": home.path, "AUTHKIT_SANDBOX": sandbox.baseURL.absoluteString]
        // providers list reads no credential: no word of the sandbox.
        let list = try await CLIProcess.run(["providers", "list"], environment: environment)
        #expect(list.status == 0 && !list.stderr.contains("sandbox"), "\(list.stderr)")
        // A sign-in does, in one line.
        let signIn = try await CLIProcess.run(
            ["authorize", "--provider", "google", "--scripted-browser"], environment: environment, timeout: 60)
        #expect(signIn.stderr.contains("authkit: sandbox at \(sandbox.baseURL.absoluteString);"), "\(signIn.stderr)")
        // The sandbox's client is public, and the secret was sent: the fix is named.
        #expect(signIn.status == 3 && signIn.stderr.contains("pass --client-secret ''"), "\(signIn.stderr)")
        let fixed = try await CLIProcess.run(
            ["authorize", "--provider", "google", "--scripted-browser", "--client-secret", ""],
            environment: environment,
            timeout: 60)
        #expect(fixed.status == 0, "\(fixed.stderr)")
    }
}
