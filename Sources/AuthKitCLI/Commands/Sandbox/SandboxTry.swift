import ArgumentParser
import AuthKit
import AuthKitLoopback
import AuthKitSandbox
import HTTPTypes

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `authkit sandbox try`: the whole sign-in against an emulation, every step shown.
struct SandboxTry: WorkspaceCommand {
    static let sendsRequests = true
    static let followsSandbox = false
    /// Its own workspace reads the catalogue only; the credential goes to the sandbox's own store.
    static let usesCredentials = false
    static let configuration = CommandConfiguration(
        commandName: "try",
        abstract:
            "Sign in to a provider's emulation and call its API, showing every step. Needs no network and no app registration.",
        usage: "authkit sandbox try [<options>] --provider <id>",
        discussion: """
            Examples:
              authkit sandbox try --provider qiita
              authkit sandbox try --provider github --browser   # you click Approve

            It starts the emulation on a free port, runs the same sign-in as
            'authkit authorize' (the real loopback listener), stores the credential
            in $AUTHKIT_HOME/sandbox/credentials.json, and sends one authorized
            request. Without --browser a scripted browser approves as 'alice'.
            A provider whose redirect no listener can receive (Instagram's
            https://localhost) is signed in as its app would: the scripted
            browser hands back the redirect, or, with --browser, you paste the
            URL your browser ends on (--manual).
            """)

    @OptionGroup var common: CommonOptions
    @OptionGroup var emulation: SandboxProviderOptions
    /// No `--sandbox`: this is the sandbox (its help listed the flag it refused).
    var global: GlobalOptions { GlobalOptions.withoutSandbox(common) }

    /// `--no-browser` is the default, taken as well: `authorize`'s advice
    /// where no browser opens is to pass it, and it was refused here.
    @Flag(
        inversion: .prefixedNo,
        help: "Open the consent page in your browser, or not (the default: a scripted browser approves as alice).")
    var browser = false

    @Option(
        help: ArgumentHelp(
            "Store the sandbox's credential under this account label (its store is apart from your real one).",
            valueName: "label"))
    var label: String?

    @Flag(help: "Sign in with a device code (RFC 8628), where the provider offers one.") var device = false

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "The loopback port to receive the redirect on, instead of the descriptor's.", valueName: "port"))
    var port: Int?

    @Option(parsing: .unconditional, help: ArgumentHelp("Give up after this many seconds.", valueName: "seconds"))
    var timeout: Int = 120

    func validate() throws {
        // The same rules as authorize's --label (it is passed on to it).
        // `--label=`: a label that begins with '-' is the option's value,
        // not another option (it stopped with the argument parser's dump, exit 1).
        if let label {
            let given = label.isEmpty ? ["--label", ""] : ["--label=" + label]
            try AccountOptions.parse(["--provider", emulation.provider] + given).checkNewLabel()
        }
        if let port, !(1...65535).contains(port) { throw ValidationError("--port takes 1–65535; got \(port).") }
        // As `authorize` refuses it: the port was dropped without a word.
        if device, port != nil {
            throw ValidationError("--device signs in with a code, without a redirect: drop --port.")
        }
        try TimeoutOption.check(timeout)
    }

    func run(in workspace: Workspace) async throws {
        let descriptor = try workspace.catalog.descriptor(id: emulation.provider)
        var redirect = descriptor.redirect.uri
        if let port, var components = URLComponents(url: redirect, resolvingAgainstBaseURL: false) {
            components.port = port
            redirect = components.url ?? redirect
        }
        // A device-only provider signs in with a code: no redirect to receive.
        let deviceOnly = descriptor.isDeviceOnly || device
        if device, descriptor.device == nil {
            throw CLIError(
                "\(descriptor.name) has no device authorization endpoint (RFC 8628); leave out --device.",
                status: .usage)
        }
        if deviceOnly, port != nil {
            throw CLIError(
                "\(descriptor.name) signs in only with a device code: its descriptor (\(descriptor.source)) names no "
                    + "authorization endpoint to redirect from. Drop --port.",
                status: .usage)
        }
        // Instagram's https://localhost, an app's custom scheme: no listener
        // receives it. The scripted browser brings the redirect back itself,
        // as a web view does; a person pastes it (--manual).
        let listened = redirect.scheme?.lowercased() == "http"
        // --browser for a loopback sign-in where none can open: the scripted
        // browser, as `authorize` chooses, said here. Left to `authorize`,
        // its advice was to pass --no-browser, which here is the default
        // and means the scripted browser. (A URL to paste, or a device
        // code, is opened by the person, wherever they can.)
        var browser = self.browser
        if browser, listened, !deviceOnly, let missing = BrowserAvailability.missing(workspace.environment) {
            Console.err(
                "No browser can be opened here (\(missing)); the sandbox's scripted browser approves as \(SandboxOptions().defaultAccount) instead."
            )
            browser = false
        }
        var step = 0
        func say(_ text: String) {
            step += 1
            Console.say("\n\(step). \(text)", hanging: 3)
        }
        // With a device code and no --browser, the sandbox approves as 'alice'
        // at the second poll, a second after the first (RFC 8628 §3.5's wait, shortened).
        var options = SandboxOptions(
            approves: deviceOnly && !browser ? true : nil, redirectURIs: [redirect.absoluteString],
            deviceInterval: deviceOnly ? 1 : 5, deterministic: emulation.deterministic)
        emulation.apply(to: &options)
        let sandbox = try await Sandbox.start(emulating: descriptor, options: options) { event in
            Console.say("   sandbox: \(event)", hanging: 9)
        }
        defer { Task { await sandbox.stop() } }
        Console.say(
            """
            Emulating \(descriptor.name) from \(DisplayText.sanitized(descriptor.source, limit: 4096)) at \(sandbox.baseURL.absoluteString): \
            nothing leaves this machine, no app registration is needed.
            The sandbox's client: id \(options.clientID), secret \(sandbox.options.clientSecret ?? "none") (your own settings are not used).
            """)

        var environment = workspace.environment
        environment["AUTHKIT_SANDBOX"] = sandbox.baseURL.absoluteString
        var global = self.global
        global.sandbox = sandbox.baseURL.absoluteString
        var pointed = try await Workspace(global: global, environment: environment)
        pointed.toleratesBrokenConfiguration = true

        // One account for both steps, passed to the sign-in by name: without
        // --label, the account `token switch` chose in the sandbox's store (as
        // `authorize` takes it), else the one without a label. The sign-in
        // replaced the chosen account and the request then used the one
        // without a label (a 401, a failed refresh).
        let key = try pointed.key(provider: descriptor.id, label: label)
        // `--label=-x` keeps a label beginning with '-' the option's value;
        // an empty one must stand apart (`--label=` is a missing value).
        let labelArguments = key.label.map { $0.isEmpty ? ["--label", ""] : ["--label=" + $0] } ?? ["--label", ""]
        var arguments = ["--provider", descriptor.id, "--timeout", String(timeout)] + labelArguments
        if deviceOnly {
            say(
                "Sign in with a device code (\(device ? "--device" : "\(descriptor.name) has no authorization endpoint")): \(browser ? "enter the code on the sandbox's page in your browser" : "the sandbox approves it as \(options.defaultAccount) at the second poll")."
            )
            arguments += ["--device"] + (browser ? [] : ["--no-browser"])
        } else if listened {
            // A descriptor that names no port lets the listener take any free
            // one (RFC 8252 §7.3), as `authorize` does: passed as
            // --redirect-uri, the URI would have fixed port 80 (which only
            // root may bind, and two runs at once would contend for).
            let anyPort = descriptor.redirectPortIsFlexible && port == nil
            say(
                "Sign in: the authorization request opens \(browser ? "in your browser" : "in a scripted browser"), the loopback listener waits at \(redirect.absoluteString)\(anyPort ? " on a free port" : "")."
            )
            arguments +=
                (anyPort ? [] : ["--redirect-uri", redirect.absoluteString]) + (browser ? [] : ["--scripted-browser"])
        } else if browser {
            say(
                "Sign in: open the authorization request in your browser and approve; it ends on \(redirect.absoluteString)…, which no listener receives: paste that URL here, as with the real \(descriptor.name) (--manual)."
            )
            arguments += ["--redirect-uri", redirect.absoluteString, "--manual"]
        } else {
            say(
                "Sign in: a scripted browser opens the authorization request and brings back the redirect to \(redirect.absoluteString), as \(descriptor.name)'s app would from its web view; no listener is needed."
            )
            arguments += ["--redirect-uri", redirect.absoluteString, "--scripted-browser"]
        }
        let authorize = try Authorize.parse(arguments)
        try await authorize.run(in: pointed)

        say("An authorized request with the stored credential:")
        let source = try await pointed.source(key)
        let url = sandbox.whoamiURL
        Console.out("   GET \(url.absoluteString)")
        let (response, body) = try await source.send(
            HTTPRequest(method: .get, url: url), maximumBodySize: 1 << 20, deadline: .seconds(30))
        var data = Data()
        for try await chunk in body { data.append(chunk) }
        Console.out(
            "   → \(response.status.code): \(DisplayText.sanitized(String(decoding: data, as: UTF8.self), limit: 400))")
        guard response.status.kind == .successful else {
            throw CLIError("The authorized request failed with HTTP \(response.status.code).", status: .providerError)
        }

        // A verified identity and a UserInfo endpoint: what it says about the user (Core §5.3).
        if let oauth2 = source.authenticator as? OAuth2Client, descriptor.openID?.userInfoURL != nil,
            let credential = try? await source.current(), credential.identity != nil
        {
            say("The provider's UserInfo endpoint (OpenID Connect Core §5.3), its sub checked against the ID token's:")
            let info = try await oauth2.userInfo(credential)
            Console.out(
                "   → \(DisplayText.sanitized(info.email ?? info.name ?? info.subject, limit: 100)) (sub \(DisplayText.sanitized(info.subject, limit: 100)))"
            )
        }

        // The credential stored here is this emulation's, gone with it: a
        // request to the next one was refused as "not issued by" it.
        say(
            "Done. To try it yourself, keep an emulation running with 'authkit sandbox serve --provider \(descriptor.id)' and run the commands it prints (sign in first: this run's credential was granted by an emulation now gone; docs/sandbox.md)."
        )
    }
}
