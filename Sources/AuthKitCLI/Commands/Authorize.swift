import ArgumentParser
import AuthKit
import AuthKitOAuth1
import Foundation

struct Authorize: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Sign in to a provider and store the credential.",
        discussion: """
        Examples:
          authkit authorize --provider qiita
          authkit authorize --provider instagram --manual
          authkit authorize --provider github --scope repo --scope read:user --json | jq -r .accessToken

        --manual prints the URL and reads the URL the browser ends on (or a PIN)
        from standard input: for providers that require an https redirect
        (Instagram) and for sessions over SSH.
        """)

    @OptionGroup var global: GlobalOptions
    @Option(name: .shortAndLong, help: ArgumentHelp("The provider id, as in 'authkit providers list'.", valueName: "id"))
    var provider: String
    @OptionGroup var client: ClientOptions

    @Option(name: .long, help: ArgumentHelp("A scope to request (repeatable). Default: the provider's default scopes.", valueName: "scope"))
    var scope: [String] = []

    @Option(name: .long, help: ArgumentHelp("The redirect URI registered with the provider, if not the descriptor's default.", valueName: "uri"))
    var redirectURI: String?

    @Option(name: .long, help: ArgumentHelp("The loopback port to listen on, when the provider registered a fixed one.", valueName: "port"))
    var port: Int?

    @Flag(help: "Do not open a browser; print the URL and keep waiting.") var noBrowser = false
    @Flag(help: "Print the URL and read the redirect URL (or PIN) from standard input.") var manual = false

    @Option(help: ArgumentHelp("Give up after this many seconds.", valueName: "seconds"))
    var timeout: Int = 300

    @Option(name: .long, help: ArgumentHelp("A label for this account, when one provider holds several.", valueName: "label"))
    var name: String?

    @Flag(help: "Print the credential as JSON on standard output (secrets included), and nothing else there.")
    var json = false

    func validate() throws {
        if let port, !(1...65535).contains(port) { throw ValidationError("--port takes 1–65535; got \(port).") }
        if timeout <= 0 { throw ValidationError("--timeout takes a positive number of seconds.") }
        if let redirectURI, URL(string: redirectURI)?.scheme == nil {
            throw ValidationError("--redirect-uri takes an absolute URI such as http://127.0.0.1:8765/callback; got '\(redirectURI)'.")
        }
        if redirectURI != nil, port != nil { throw ValidationError("Use --redirect-uri or --port, not both.") }
    }

    func run() async throws {
        global.bootstrapLogging()
        let workspace = Workspace(global: global)
        let descriptor = try workspace.descriptor(provider)
        var explicit = try client.settings()
        explicit.redirectURI = redirectURI
        if manual, redirectURI == nil, port == nil, descriptor.protocol == .oauth1 {
            // Typing a PIN is the natural manual flow for OAuth 1.0a (RFC 5849 §2.1 "oob").
            explicit.redirectURI = OAuth1Client.outOfBand
        }
        let authenticator = try workspace.authenticator(for: descriptor, explicit: explicit)

        var requested = AuthorizationOptions(scopes: scope.isEmpty ? nil : scope, label: name)
        if let port { requested.redirectURI = try redirect(for: authenticator, port: port) }

        Interrupt.install(message: "Cancelled; nothing was stored.")
        let agent = ManualUserAgent()
        let options = requested
        let credential = try await withTimeout(seconds: timeout) {
            try await authenticator.authorize(using: agent, options: options)
        }
        try await workspace.store.save(credential)
        if json {
            try Console.json(credential)
        } else {
            Console.out("Signed in to \(descriptor.displayName). Stored in \(workspace.store.fileURL.path).")
            CredentialSummary.lines(credential).forEach(Console.out)
        }
    }

    /// The default redirect URI with `port` in place of its port.
    private func redirect(for authenticator: any Authenticator, port: Int) throws -> URL {
        let base = (authenticator as? OAuth2Client)?.defaultRedirectURI
            ?? (authenticator as? OAuth1Client)?.defaultCallbackURI
            ?? (authenticator.descriptor.redirect ?? RedirectSettings()).uri
        var components = URLComponents(url: base, resolvingAgainstBaseURL: false)
        components?.port = port
        guard let url = components?.url else { throw CLIError("Cannot put port \(port) into \(base).") }
        return url
    }
}

/// Runs `operation`, failing with exit status 5 after `seconds`.
func withTimeout<T: Sendable>(seconds: Int, _ operation: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: T.self) { group in
        group.addTask { try await operation() }
        group.addTask {
            try await Task.sleep(for: .seconds(seconds))
            throw CLIError("Timed out after \(seconds) s waiting for the sign-in to finish; nothing was stored. Run it again, or raise --timeout.",
                           status: .timedOut)
        }
        defer { group.cancelAll() }
        return try await group.next()!
    }
}
