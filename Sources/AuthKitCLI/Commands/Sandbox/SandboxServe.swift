import ArgumentParser
import AuthKit
import AuthKitSandbox

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `authkit sandbox serve`: the emulation, until Ctrl-C.
struct SandboxServe: WorkspaceCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve a provider's emulation on 127.0.0.1 until Ctrl-C, printing each request.",
        usage: "authkit sandbox serve [<options>] --provider <id>",
        discussion: """
            Examples:
              authkit sandbox serve --provider qiita
              authkit sandbox serve --provider github --consent approve --port 0

            Then, in another terminal, with the address it prints (8790 unless
            --port says otherwise):
              export AUTHKIT_SANDBOX=http://127.0.0.1:8790
              authkit authorize --provider qiita
              authkit request --provider qiita /whoami
            """)
    static let followsSandbox = false
    /// Its own workspace reads the catalogue only; the credential goes to the sandbox's own store.
    static let usesCredentials = false

    @OptionGroup var common: CommonOptions
    @OptionGroup var emulation: SandboxProviderOptions
    /// No `--sandbox`: this is the sandbox (its help listed the flag it refused).
    var global: GlobalOptions { GlobalOptions.withoutSandbox(common) }

    @Option(
        parsing: .unconditional, help: ArgumentHelp("The port to listen on; 0 picks a free one.", valueName: "port"))
    var port: Int = SandboxOptions.standardPort

    @Option(
        help: ArgumentHelp(
            "What the consent page does: ask (show it), approve or deny at once.", valueName: "ask|approve|deny"))
    var consent: String = "ask"

    @Flag(help: "Register a public client (no secret): PKCE becomes mandatory.") var publicClient = false

    @Option(
        help: ArgumentHelp(
            "The client's key for private_key_jwt (RFC 7523): a PEM or JWK file, public or private (its public half is used). Sign in with --private-key and the private half.",
            valueName: "file"))
    var clientKey: String?

    @Option(
        name: .customLong("redirect-uri"),
        help: ArgumentHelp(
            "Register this redirect URI too (repeatable): a web app's callback, say. The descriptor's own stays registered.",
            valueName: "uri"))
    var redirectURIs: [String] = []

    func validate() throws {
        if !(0...65535).contains(port) { throw ValidationError("--port takes 0–65535; got \(port).") }
        if SandboxOptions.Consent(rawValue: consent) == nil {
            throw ValidationError(
                "--consent takes ask, approve or deny; got '\(DisplayText.sanitized(consent, limit: 40))'.")
        }
    }

    func run(in workspace: Workspace) async throws {
        let descriptor = try workspace.catalog.descriptor(id: emulation.provider)
        // A public client signs in only by a grant that needs no secret.
        let codeNeedsSecret = !descriptor.codeGrantTakesPublicClients
        let deviceNeedsSecret = !descriptor.deviceGrantTakesPublicClients
        if publicClient, descriptor.protocol == .oauth1 {
            throw CLIError(
                "\(descriptor.name) uses OAuth 1.0a, whose every request is signed with the client's secret (RFC 5849 §3.4): it has no public clients. Drop --public-client.",
                status: .usage)
        }
        if publicClient, codeNeedsSecret, deviceNeedsSecret {
            throw CLIError(
                "\(descriptor.name) has no public clients (its descriptor says requiresClientSecret), so a public client could not sign in to its emulation. Drop --public-client.",
                status: .usage)
        }
        var options = SandboxOptions(port: port, deterministic: emulation.deterministic)
        options.consent = SandboxOptions.Consent(rawValue: consent)!
        if publicClient { options.clientSecret = nil }
        if let clientKey {
            // A client with a key authenticates with it (private_key_jwt): it
            // is not public, and the commands printed for one then failed.
            if publicClient {
                throw CLIError(
                    "--public-client and --client-key: a client that registered a key authenticates with it, so it is not a public client. Drop one.",
                    status: .usage)
            }
            do {
                let data = try FileSystem.contents(of: clientKey, accepting: .fileOrPipe, limit: 64 << 10)
                options.clientKey = String(decoding: data, as: UTF8.self)
            } catch {
                throw CLIError("--client-key: \(clientKey) \(error.description)", status: .usage)
            }
            guard await Emulator.isReadableClientKey(options.clientKey ?? "") else {
                throw CLIError(
                    "--client-key: \(clientKey) is not an EC or RSA key, in PEM or as a JWK (public or private); give the client's key, as `authkit authorize --private-key` does.",
                    status: .usage)
            }
        }
        emulation.apply(to: &options)
        for uri in redirectURIs {
            // The rules `authorize --redirect-uri` applies (a port in range, no user info, …), and http(s).
            if let problem = RedirectURIRules.problem(uri) {
                throw CLIError(
                    "--redirect-uri '\(DisplayText.sanitized(uri, limit: 200))' \(problem).", status: .usage)
            }
            guard let url = URL(string: uri), ["http", "https"].contains(url.scheme), url.host != nil else {
                throw CLIError(
                    "--redirect-uri takes an absolute http(s) URI without a fragment; got '\(DisplayText.sanitized(uri, limit: 200))'.",
                    status: .usage)
            }
        }
        if !redirectURIs.isEmpty { options.redirectURIs = [descriptor.redirect.uri.absoluteString] + redirectURIs }
        let sandbox = try await Sandbox.start(emulating: descriptor, options: options) { event in
            Console.out("  \(event)")
        }
        let base = sandbox.baseURL.absoluteString
        // The secret it expects (longer than the standard one for a client_secret_jwt descriptor).
        options = sandbox.options
        // A device-only provider has no redirect: its users enter a code at the sandbox's /device page.
        let wayIn =
            descriptor.isDeviceOnly
            ? "device codes entered at \(base)/device"
            : "redirect \(descriptor.redirect.uri.absoluteString)\(descriptor.redirectPortIsFlexible ? " (any port)" : "")"
        // With --sandbox, authkit sends the sandbox's standard secret unless
        // told otherwise; a public client must send none (RFC 6749 §3.2.1).
        let noSecret = options.clientSecret == nil ? " --client-secret ''" : ""
        let grant = options.clientSecret == nil && codeNeedsSecret ? " --device" : ""
        let why = options.clientSecret == nil ? " (a public client: --client-secret '' sends no secret)" : ""
        // Broken at spaces on a terminal (the commands stay whole: LineWrapping).
        Console.say(
            """
            Emulating \(descriptor.name) (\(DisplayText.sanitized(descriptor.source, limit: 4096))) at \(base): this machine only, in memory.
            Client id \(options.clientID), \(options.clientSecret.map { "secret \($0)" } ?? "public (no secret)"); \(wayIn).
            Point authkit at it, in another terminal\(why):
              export AUTHKIT_SANDBOX=\(base)
              authkit authorize --provider \(descriptor.id)\(noSecret)\(grant)
              authkit request --provider \(descriptor.id)\(noSecret) \(base)/whoami
            Ctrl-C stops it.
            """)
        Interrupt.install(message: "Sandbox stopped; everything it issued is gone.")
        while true { try await Task.sleep(for: .seconds(3600)) }
    }
}
