import ArgumentParser
import AuthKit
import AuthKitLoopback
import AuthKitOAuth1
import AuthKitSandbox

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

struct Authorize: WorkspaceCommand {
    static let sendsRequests = true
    static let configuration = CommandConfiguration(
        commandName: "authorize",
        abstract: "Sign in to a provider and store the credential.",
        discussion: """
            Examples:
              authkit authorize --provider qiita
              authkit authorize --provider github --device
              authkit authorize --provider instagram --manual
              authkit authorize --provider github --scope repo --json | jq -r .accessToken

            The way in: a browser on this machine and a loopback listener; or, with
            --device, a code you enter on any other device (RFC 8628, for SSH
            sessions and containers); or, with --manual, a URL you open anywhere and
            paste back. When no browser can be opened here (no display, an SSH
            session without one), a provider with the device grant is signed in
            with --device, and one without it as with --manual (at a terminal;
            a script must pass it). So is a provider whose redirect no listener
            receives (Instagram's https://localhost). The flags choose.
            A provider whose descriptor has a device section and no authorization
            endpoint signs in with a device code, with or without --device.

            With --sandbox (or $AUTHKIT_SANDBOX) the sign-in goes to a running
            'authkit sandbox' instead; where no browser can be opened, the
            sandbox's scripted browser answers its consent page.
            """)

    @OptionGroup var global: GlobalOptions
    @OptionGroup var account: AccountOptions
    @OptionGroup var client: ClientOptions

    @Option(
        name: .long,
        help: ArgumentHelp(
            "A scope to request (repeatable, or several joined by commas: repo,user). Default: the provider's default scopes.",
            valueName: "scope"))
    var scope: [String] = []

    /// The scopes asked for: each `--scope`, split at commas as `gh auth login -s repo,user`
    /// takes them (a comma in one scope token, legal in RFC 6749 §3.3, no provider uses).
    var scopes: [String] { Self.scopes(scope) }

    /// `--scope` values split at commas, for every command that takes them.
    static func scopes(_ values: [String]) -> [String] {
        values.flatMap { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) }
    }

    @Option(
        name: .long,
        help: ArgumentHelp(
            "The redirect URI registered with the provider, if not the descriptor's default.", valueName: "uri"))
    var redirectURI: String?

    @Option(
        name: .long, parsing: .unconditional,
        help: ArgumentHelp(
            "The loopback port to listen on, when the provider registered a fixed one.", valueName: "port"))
    var port: Int?

    @Flag(help: "Do not open a browser; print the URL and keep waiting.") var noBrowser = false
    @Flag(help: "Sign in with a code entered on another device (the device grant).") var device = false
    @Flag(help: "Print the URL and read the redirect URL (or PIN) from standard input.") var manual = false
    @Flag(
        help:
            "Get a token for the client itself (RFC 6749 §4.4): no user, no browser; needs the client secret or --private-key."
    )
    var clientCredentials = false
    @Flag(help: "With --sandbox: let the sandbox's scripted browser answer its consent page.") var scriptedBrowser =
        false

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "Give up after this many seconds (default: 300; with the device grant, when its code expires).",
            valueName: "seconds"))
    var timeout: Int?

    /// `--timeout`, else 300 s; for the device grant, whose code says how
    /// long it lives (GitHub's 900 s, Google's 1,800), until it expires:
    /// the polling ends then with `expired_token`, and this is the longest
    /// wait it may have (RFC 8628 §3.2, §3.5), not a limit before it.
    func seconds(for way: WayIn) -> Int {
        timeout ?? (way == .device ? Self.longestDeviceWait : 300)
    }

    /// The device grant's wait without `--timeout`: past any code's life a
    /// provider documents (Google's 30 minutes).
    static let longestDeviceWait = 3600

    @Flag(help: "Print the credential as JSON on standard output (secrets included), and nothing else there.")
    var json = false

    /// Each scope is one scope token (RFC 6749 §3.3).
    static func checkScopes(_ scopes: [String]) throws {
        // An empty scope (`--scope ''`, an unset shell variable) would be sent
        // as a scope named ""; see ScopeToken for the rest.
        for value in scopes {
            switch ScopeToken.problem(value) {
            case nil:
                continue
            case .empty:
                throw ValidationError("--scope takes a scope name, such as read_qiita; got an empty one.")
            case .several(let names):
                throw ValidationError(
                    "--scope takes one scope; give each with its own --scope (\(names.map { "--scope " + ShellWord.quoted($0) }.joined(separator: " "))). Got '\(value)'."
                )
            case .spacesAround(let name):
                throw ValidationError(
                    "--scope '\(value)' begins or ends with a space; give --scope \(ShellWord.quoted(name)).")
            case .character:
                throw ValidationError(
                    "--scope '\(DisplayText.sanitized(value, limit: 80))' holds a control character, a non-ASCII one, '\"' or '\\', which no scope has (RFC 6749 §3.3)."
                )
            }
        }
    }

    func validate() throws {
        if let port, !(1...65535).contains(port) { throw ValidationError("--port takes 1–65535; got \(port).") }
        if let timeout { try TimeoutOption.check(timeout) }
        try account.checkNewLabel()
        try Self.checkScopes(scopes)
        if let redirectURI, PastedClientValue.problem(redirectURI) == nil,
            let problem = RedirectURIRules.problem(redirectURI)
        {
            throw ValidationError("--redirect-uri: the redirect URI \(problem).")
        }
        if redirectURI != nil, port != nil { throw ValidationError("Use --redirect-uri or --port, not both.") }
        if scriptedBrowser, device || manual || noBrowser {
            throw ValidationError(
                "--scripted-browser plays the browser of a loopback sign-in: drop --device, --manual and --no-browser.")
        }
        if clientCredentials, device || manual || noBrowser || scriptedBrowser || redirectURI != nil || port != nil {
            throw ValidationError(
                "--client-credentials signs the client itself in, with no user and no redirect: drop --device, --manual, --no-browser, --scripted-browser, --redirect-uri and --port."
            )
        }
        if device, manual || redirectURI != nil || port != nil {
            throw ValidationError(
                "--device signs in with a code, without a redirect: drop --manual, --redirect-uri and --port.")
        }
    }

    /// How this sign-in reaches the user.
    enum WayIn: Equatable { case loopback, manual, device, scriptedBrowser }

    /// The way the flags choose, or `nil` when they leave it to this machine
    /// (``wayOffered(for:environment:sandbox:)``). Flags that cannot work
    /// with this provider are refused here, before anything else is checked.
    /// A device-only provider (no authorization endpoint) has one way in,
    /// taken without --device; a flag for a redirect is refused.
    func wayChosenByFlags(for descriptor: ProviderDescriptor, sandbox: Bool) throws -> WayIn? {
        if descriptor.isDeviceOnly {
            // (--no-browser stays: with a device code it means "do not open the verification page".)
            let redirectFlags = [
                ("--manual", manual), ("--scripted-browser", scriptedBrowser),
                ("--redirect-uri", redirectURI != nil), ("--port", port != nil),
            ].filter(\.1).map(\.0)
            guard redirectFlags.isEmpty else {
                throw CLIError(
                    "\(descriptor.name) signs in only with a device code: its descriptor (\(descriptor.source)) names no authorization endpoint to redirect from. Drop \(redirectFlags.joined(separator: ", ")).",
                    status: .usage)
            }
            return .device
        }
        if device {
            guard descriptor.supportsDeviceGrant else {
                throw AuthKitError.notSupported(providerID: descriptor.id, .deviceGrant)
            }
            return .device
        }
        if manual { return .manual }
        if scriptedBrowser {
            guard sandbox else {
                throw CLIError(
                    "--scripted-browser only answers the sandbox's consent page: add --sandbox URL (see 'authkit sandbox').",
                    status: .usage)
            }
            return .scriptedBrowser
        }
        if noBrowser || redirectURI != nil || port != nil { return .loopback }
        return nil
    }

    /// Without a flag: the loopback listener where a browser can open; else
    /// the sandbox's scripted browser, or the device grant when the provider
    /// has it, else --manual at a terminal, and otherwise (a script) the user
    /// is told about --manual (a loopback listener would wait for a browser
    /// that cannot come).
    func wayOffered(for descriptor: ProviderDescriptor, environment: [String: String], sandbox: Bool) throws -> WayIn {
        guard let missing = BrowserAvailability.missing(environment) else { return .loopback }
        if sandbox {
            Console.err(
                "No browser can be opened here (\(missing)); the sandbox's scripted browser answers its consent page as \(SandboxOptions().defaultAccount). Pass --no-browser to open the URL yourself."
            )
            return .scriptedBrowser
        }
        if descriptor.supportsDeviceGrant {
            Console.err(
                "No browser can be opened here (\(missing)); signing in to \(descriptor.name) with a device code instead (--device). Pass --no-browser to use the loopback listener anyway."
            )
            return .device
        }
        // A person at the terminal can open the URL elsewhere and paste back
        // where that browser ends: what the error below tells a script to ask for.
        if Console.inputIsTerminal {
            Console.err(
                "No browser can be opened here (\(missing)), and \(descriptor.name) offers no device grant: open the URL below in a browser on any machine, then paste the address it ends on (--manual)."
            )
            return .manual
        }
        throw CLIError(
            "No browser can be opened here (\(missing)), and \(descriptor.name) offers no device grant. Use --manual: it prints a URL to open in a browser on any machine, and reads back the URL that browser ends on. (Pass --no-browser to wait on the loopback listener anyway.)"
        )
    }

    /// How this sign-in goes, decided before anyone is asked anything: the
    /// provider, its authenticator with the settings in effect, the way in,
    /// and where the redirect is received. Every refusal that needs no
    /// network (a missing secret, a redirect no listener can receive) comes
    /// from working this out.
    struct Plan {
        let descriptor: ProviderDescriptor
        let authenticator: any Authenticator
        let way: WayIn
        let requested: AuthorizationOptions
        /// Where the provider redirects, for every way but the device grant.
        let redirectTarget: URL?
        /// Whether a loopback listener receives the redirect.
        let listens: Bool
        /// Qiita's shape: the provider redirects to the URI registered for
        /// the client, whatever this sign-in asked for.
        let redirectsToRegistered: Bool
    }

    func run(in workspace: Workspace) async throws {
        let key = try workspace.key(account)
        // What this sign-in will replace, to say so once it has (gh does).
        let previous = try? await workspace.store.credential(for: key)
        if clientCredentials {
            try await signInAsClient(in: workspace)
            if let previous {
                Console.err(
                    Self.replacementNote(previous, key: key, sandbox: workspace.sandbox != nil))
            }
            return
        }
        let plan = try plan(in: workspace)
        let (descriptor, way) = (plan.descriptor, plan.way)
        // Before the user is asked to consent: the result must be storable, and
        // no other sign-in for this account may be under way.
        try await workspace.store.checkWritable()
        // A refresh of this account's credential under way in another
        // process is waited for now, as saving the sign-in would wait for
        // it: one stopped while holding its lock was found only after the
        // user had consented and the code was exchanged, and the new grant
        // was thrown away.
        // (30 s: a refresh's own wait, CredentialSource.lockTimeout.)
        try await workspace.store.withRefreshLock(for: key, timeout: .seconds(30)) {}
        let signIn = try workspace.store.beginSignIn(for: key)
        defer { withExtendedLifetime(signIn) {} }

        Interrupt.install(message: "Cancelled; nothing was stored.")
        // Nor may the token request be unsendable (Linux without libcurl).
        // This waits for the load begun at start-up, as the listener's thread
        // would (glibc's loader lock), so Ctrl-C is handled from here on.
        try requireDefaultHTTPClient(display: "the token endpoint of \(descriptor.name)")
        let status = StatusLine()
        let waiting = WaitState(
            waitingFor: way == .scriptedBrowser ? "the sandbox's scripted browser" : "you to approve in the browser")
        let limit = seconds(for: way)
        let timedOutMessage = { @Sendable [limit] in
            let refused =
                waiting.lastRefusal.map { count, reason in
                    " \(count == 1 ? "A request" : "\(count) requests") to the redirect address \(count == 1 ? "was" : "were") refused, the last because: \(reason)"
                } ?? ""
            return
                "Timed out after \(limit) s waiting for the sign-in to finish; nothing was stored.\(refused) Run it again, or raise --timeout."
        }
        // The device grant ends at --timeout by cancelling its polling (below),
        // which sees a poll under way through; the process deadline is then
        // only a backstop, past the longest such poll.
        let pollDeadline = Int(RequestPolicy.tokenEndpoint.deadline.components.seconds)
        Watchdog.start(seconds: way == .device ? limit + pollDeadline + 5 : limit, message: timedOutMessage)
        let credential: Credential
        switch way {
        case .device:
            credential = try await signInWithDeviceCode(
                plan, in: workspace, status: status, timedOutMessage: timedOutMessage)
        case .manual:
            credential = try await signInByPasting(plan, in: workspace)
        case .scriptedBrowser where !plan.listens:
            let agent = ShieldedUserAgent(SandboxUserAgent(onStep: { step in status.note("Sandbox browser: \(step)") }))
            defer { status.stop() }
            credential = try await Self.signIn(plan.authenticator, agent, plan.requested, store: workspace.store)
        case .loopback, .scriptedBrowser:
            credential = try await signInThroughBrowser(plan, in: workspace, status: status, waiting: waiting)
        }
        try report(credential, of: descriptor, in: workspace)
        if let previous {
            Console.err(
                Self.replacementNote(previous, key: key, sandbox: workspace.sandbox != nil))
        }
    }

    /// Said when a sign-in (or an import) replaced a stored credential. The
    /// replaced grant is not revoked for the user: at Google and others,
    /// revoking a token ends the app's whole grant, the new sign-in's tokens
    /// with it; `authkit token revoke` before signing in again does it.
    ///
    /// In the sandbox's store, the replaced credential may be what a
    /// terminal pointed at a running `authkit sandbox serve` was using
    /// (`sandbox try` shares the store): that is said, with the `--label`
    /// that keeps the two apart.
    static func replacementNote(_ previous: Credential, key: CredentialKey, sandbox: Bool = false) -> String {
        let obtained = previous.obtainedAt.formatted(.iso8601)
        guard !sandbox else {
            return
                "Note: this replaced the sandbox credential stored for \(key), obtained \(obtained); a terminal using it "
                + "with a running 'authkit sandbox serve' now gets this one, which that emulation did not issue. "
                + "Give --label to keep them apart."
        }
        return
            "Note: this replaced the credential stored for \(key), obtained \(obtained); its grant was not revoked at the provider (revoking it can end the new one too). To end it, revoke it in the provider's settings."
    }

    /// What a sign-in prints: the credential as JSON with --json, else a summary.
    func report(_ credential: Credential, of descriptor: ProviderDescriptor, in workspace: Workspace) throws {
        if json {
            try Console.json(CredentialSummary.printable(credential))
        } else {
            let who =
                (credential.identity?.displayName ?? credential.account).map { " as \(CredentialSummary.safe($0))" }
                ?? ""
            Console.say(
                "Signed in to \(CredentialSummary.safe(descriptor.name))\(who). Stored in \(workspace.store.location)."
            )
            CredentialSummary.lines(credential).forEach(Console.out)
        }
    }

    /// `--client-credentials`: one request to the token endpoint, the client
    /// authenticating with its secret or key; the token is stored like a
    /// sign-in's (under the refresh lock), and renewed by asking again.
    func signInAsClient(in workspace: Workspace) async throws {
        let key = try workspace.key(account)
        let descriptor = try workspace.descriptor(account.provider)
        // --timeout bounds this sign-in too (exit 5): it was ignored, and a
        // token endpoint slow to answer was waited for past it. Nothing is
        // spent by ending it (no code, no user): it can be asked again.
        let limit = seconds(for: .loopback)
        Watchdog.start(seconds: limit) {
            "Timed out after \(limit) s waiting for the token endpoint of \(descriptor.name); nothing was stored. "
                + "Run it again, or raise --timeout."
        }
        let authenticator = try workspace.authenticator(for: descriptor, explicit: try client.settings())
        try await workspace.store.checkWritable()
        try requireDefaultHTTPClient(display: "the token endpoint of \(descriptor.name)")
        let scopes = self.scopes.isEmpty ? nil : self.scopes
        // The chosen account (`token switch`) when no --label is given.
        let label = key.label
        let store = workspace.store
        // As a sign-in: a refresh of this account under way elsewhere is
        // waited for, and no other sign-in may run for it meanwhile.
        try await store.withRefreshLock(for: key, timeout: .seconds(30)) {}
        let signIn = try store.beginSignIn(for: key)
        defer { withExtendedLifetime(signIn) {} }
        let credential = try await authenticator.clientCredentials(
            scopes: scopes, additionalParameters: [:], label: label)
        // The save held against the timeout and signals, as a sign-in's
        // is: past the answer, "nothing was stored" may not be said of it.
        try await Interrupt.shielding { try await Self.keep(credential, in: store) }
        try report(credential, of: descriptor, in: workspace)
    }

    /// Works out the ``Plan``, refusing what cannot work.
    func plan(in workspace: Workspace) throws -> Plan {
        let key = try workspace.key(account)
        let descriptor = try workspace.descriptor(account.provider)
        let chosen = try wayChosenByFlags(for: descriptor, sandbox: workspace.sandbox != nil)
        var explicit = try client.settings()
        explicit.redirectURI = redirectURI
        if !scopes.isEmpty, descriptor.protocol == .oauth1 {
            // RFC 5849 has no scopes: sent nowhere, --scope would have been
            // ignored, and the credential had whatever access the app has.
            // A CLIError: a ValidationError from run() was printed with the
            // top-level usage, not authorize's.
            throw CLIError(
                "--scope has no meaning for \(descriptor.id) (OAuth 1.0a has no scopes): the access is the app's permission at \(descriptor.name), or a request-token parameter in a provider override (oauth1.requestTokenParameters, such as X's x_auth_access_type=read). Leave out --scope.",
                status: .usage)
        }
        if manual, redirectURI == nil, port == nil, descriptor.protocol == .oauth1 {
            // Typing a PIN is the natural manual flow for OAuth 1.0a (RFC 5849 §2.1 "oob").
            explicit.redirectURI = OAuth1Client.outOfBand
        }
        var authenticator = try workspace.authenticator(for: descriptor, explicit: explicit)
        // After the settings: a missing client id is told before advice on
        // what this machine offers, as every way in needs one; so is a
        // missing secret every way in needs (a provider without public clients).
        try authenticator.checkSettingsForSignIn(browser: false)
        let offered =
            try chosen
            ?? wayOffered(for: descriptor, environment: workspace.environment, sandbox: workspace.sandbox != nil)
        // Pasting because no browser opens here is --manual: OAuth 1.0a's PIN
        // too. With the descriptor's callback instead, the browser went on to
        // a loopback port nothing here listens on (someone else's listener
        // there would read the verifier).
        if !manual, offered == .manual, redirectURI == nil, port == nil, authenticator.settings.redirectURI == nil,
            descriptor.protocol == .oauth1
        {
            explicit.redirectURI = OAuth1Client.outOfBand
            authenticator = try workspace.authenticator(for: descriptor, explicit: explicit)
        }
        var requested = AuthorizationOptions(scopes: scopes.isEmpty ? nil : scopes, label: key.label)
        if let port { requested.redirectURI = try redirect(for: authenticator, port: port) }
        // Refused now rather than after the user has logged in at the provider.
        let redirectTarget = offered == .device ? nil : requested.redirectURI ?? authenticator.defaultRedirectURI
        // Instagram's https://localhost: no listener here receives it. With
        // no flag to say otherwise and a person at the terminal, the sign-in
        // is the one that works, pasting the address the browser ends on
        // (--manual), not an error that says to run it again with --manual.
        let pastes =
            chosen == nil && offered == .loopback && redirectTarget.map { $0.scheme?.lowercased() != "http" } == true
            && Console.inputIsTerminal
        let way = pastes ? .manual : offered
        if pastes, let target = redirectTarget {
            Console.err(
                "\(descriptor.name) redirects to \(target.redactedForLogs), which no listener here can receive: you will paste the address your browser ends on (--manual)."
            )
        }
        // Qiita's shape: the authorization request names no redirect URI, so
        // the provider redirects to the one registered for the client,
        // whatever this sign-in listens at. A --port or --redirect-uri that
        // is not that one waited until --timeout for a redirect that went
        // elsewhere (the browser showing "cannot connect").
        let redirectsToRegistered =
            descriptor.authorization?.sendRedirectURI == false && (port != nil || redirectURI != nil)
        if redirectsToRegistered, way != .device, let target = redirectTarget,
            let registered = authenticator.defaultRedirectURI, target != registered
        {
            Console.err(
                """
                Note: \(descriptor.name) takes no redirect URI in the request: it redirects to the one registered for the client \
                (\(registered.redactedForLogs) as AuthKit is set up). This sign-in receives \(target.redactedForLogs); \
                unless that is the one registered, the redirect will not arrive.
                """)
        }
        // The sandbox's scripted browser hands back any redirect, as an app's
        // web view or ASWebAuthenticationSession does: no listener needed,
        // and none is opened for a plain-http redirect to another machine
        // (`http://app.test/cb`), which a loopback listener cannot bind.
        let listens =
            way == .loopback
            || (way == .scriptedBrowser && redirectTarget?.scheme?.lowercased() == "http"
                && redirectTarget?.isLoopback == true)
        if let target = redirectTarget {
            try authenticator.checkRedirectScheme(target)
            if way == .loopback, target.scheme?.lowercased() != "http" {
                throw CLIError(
                    "\(descriptor.name) redirects to \(target.redactedForLogs), which the loopback listener cannot receive. Use --manual and paste the URL the browser ends on."
                )
            }
            // The listener binds this machine's loopback addresses only (RFC 8252 §8.3).
            if way == .loopback, !target.isLoopback {
                throw CLIError(
                    "\(target.redactedForLogs) is not on this machine, so the loopback listener cannot receive it (it listens on 127.0.0.1 or [::1] only). "
                        + "Use a redirect URI such as http://127.0.0.1/callback, or --manual and paste the URL the browser ends on."
                )
            }
            // Pasting from a plain-http page on another machine: the browser
            // carries the code there in clear. RFC 6749 §3.1.2.1 asks for TLS
            // and, without it, a warning before the redirect; a refusal would
            // also stop a registered development host the user chose.
            if way == .manual, target.scheme?.lowercased() == "http", !target.isLoopback {
                Console.err(
                    "authkit: warning: the redirect URI \(target.redactedForLogs) is plain http to another machine: your browser will carry the authorization code there unencrypted (RFC 6749 §3.1.2.1). Register an https or loopback redirect URI where you can."
                )
            }
        }

        // GitHub's shape: the code grant needs the secret, the device grant
        // does not. Without a secret, the way that works is named with the error.
        if way != .device, descriptor.device?.requiresClientSecret == false {
            do {
                try authenticator.checkSettingsForSignIn(browser: true)
            } catch let error as AuthKitError {
                throw CLIError(
                    ErrorReport.message(for: error, environment: workspace.environment)
                        + " Or sign in by the device grant, which \(descriptor.name) allows without one: authkit authorize \(ShellWord.account(key)) --device."
                )
            }
        }
        return Plan(
            descriptor: descriptor, authenticator: authenticator, way: way, requested: requested,
            redirectTarget: redirectTarget, listens: listens, redirectsToRegistered: redirectsToRegistered)
    }

    /// The device grant (RFC 8628), ended at --timeout by cancelling its
    /// polling, which lets a poll under way finish.
    private func signInWithDeviceCode(
        _ plan: Plan, in workspace: Workspace, status: StatusLine,
        timedOutMessage: @escaping @Sendable () -> String
    ) async throws -> Credential {
        let (descriptor, authenticator, requested) = (plan.descriptor, plan.authenticator, plan.requested)
        let credential: Credential
        defer { status.stop() }
        let openBrowser = !noBrowser && BrowserAvailability.missing(workspace.environment) == nil
        let polling = Task {
            try await authenticator.authorizeWithDeviceCode(options: requested) { authorization in
                await Self.show(authorization, provider: descriptor.name, openBrowser: openBrowser, status: status)
            }
        }
        // A signal cancels the polling, but waits for a poll under way
        // and for the save of what it brings: its answer may hold the
        // tokens, and the device code is spent then.
        Interrupt.raiseShield(for: .devicePolling(cancel: { polling.cancel() }))
        // --timeout as a signal would: a poll under way may bring the
        // tokens (the user approved just in time), and the device code is
        // spent then; ending the process mid-poll lost them.
        let timedOut = LockedValue(false)
        let deadline = Task {
            guard (try? await Task.sleep(for: .seconds(seconds(for: .device)))) != nil else { return }
            timedOut.withLock { $0 = true }
            polling.cancel()
        }
        defer { deadline.cancel() }
        do {
            var signedIn = try await polling.value
            // Whose it is, as a browser sign-in asks (`token list` names it).
            signedIn.account = await Self.account(of: signedIn, with: authenticator)
            credential = signedIn
            try await Self.keep(credential, in: workspace.store)
            Interrupt.lowerShield(done: true)
        } catch AuthKitError.Code.cancelled {
            Interrupt.lowerShield(done: false)
            throw CLIError(timedOutMessage(), status: .timedOut)
        } catch let error as AuthKitError {
            guard case .providerError(_, let response) = error.reason, response.code == "expired_token" else {
                Interrupt.lowerShield(done: false, failure: error)
                throw error
            }
            // The wait ran out (RFC 8628 §3.5), by the provider's clock or
            // this one's: exit 5 as --timeout's, not 3, consent denied's, so
            // a script can tell "start again" from "refused".
            Interrupt.lowerShield(done: false)
            throw CLIError(
                "The code expired before the sign-in was approved; nothing was stored. Run it again, and enter the new code sooner.",
                status: .timedOut)
        } catch {
            // With a signal pending, the error is said before the process
            // ends by it (an access_denied, a store that could not be written).
            Interrupt.lowerShield(done: false, failure: error)
            throw error
        }
        return credential
    }

    /// The user pastes the redirect URL (or types a PIN).
    private func signInByPasting(_ plan: Plan, in workspace: Workspace) async throws -> Credential {
        let (authenticator, requested) = (plan.authenticator, plan.requested)
        let credential: Credential
        // ManualUserAgent takes no answer as "cancelled"; here it is said
        // what happened: standard input ended (a pipe with nothing in
        // it), or an empty line was entered.
        let answer = LockedValue<FileSystem.Line?>(nil)
        let agent = ShieldedUserAgent(
            ManualUserAgent(
                write: { Console.prompt($0) },
                readLine: {
                    let read = Console.readLine(limit: ManualUserAgent.longestAnswer, echo: true)
                    answer.withLock { $0 = read }
                    guard case .line(let line) = read else { return nil }
                    return line
                }))
        do {
            credential = try await Self.signIn(authenticator, agent, requested, store: workspace.store)
        } catch AuthKitError.Code.cancelled {
            // Read, and nothing in it: the agent's only way to cancel.
            switch answer.withLock({ $0 }) {
            case .tooLong(let limit)?:
                throw CLIError(
                    "The pasted line is longer than \(limit / 1024) KiB, which no redirect URL (or PIN) is; it was not read to its end, and nothing was stored. Run it again and paste only the URL the browser ends on.",
                    status: .badInput)
            case .end?:
                throw CLIError(
                    "Standard input ended before the redirect URL (or PIN) was pasted; nothing was stored. Run it again and paste the URL the browser ends on.",
                    status: .badInput)
            // What the agent reads (`""`, `<>` unwrapped): empty is "nothing pasted", not a cancellation.
            case .line(let line)? where ManualUserAgent.unwrapped(line).allSatisfy(\.isWhitespace):
                throw CLIError(
                    "An empty line was entered before the redirect URL (or PIN) was pasted; nothing was stored. Run it again and paste the URL the browser ends on.",
                    status: .badInput)
            default:
                throw AuthKitError.cancelled
            }
        }
        return credential
    }

    /// A loopback listener receives the redirect, from the system browser or
    /// the sandbox's scripted one.
    private func signInThroughBrowser(_ plan: Plan, in workspace: Workspace, status: StatusLine, waiting: WaitState)
        async throws -> Credential
    {
        let (descriptor, authenticator, requested, way) = (
            plan.descriptor, plan.authenticator, plan.requested, plan.way
        )
        let (redirectTarget, redirectsToRegistered) = (plan.redirectTarget, plan.redirectsToRegistered)
        let credential: Credential
        // Why the scripted browser failed: a sandbox that answered (a
        // refusal: exit 3, and a 404 likely means it emulates another
        // provider) is not one that could not be reached (exit 4).
        let browserError = LockedValue<(any Error)?>(nil)
        // Where the sandbox sent the browser, once it has: a failure after
        // that is the listener's address, not the sandbox, unreached.
        let redirectedTo = LockedValue<URL?>(nil)
        let scripted: @Sendable (URL) async throws -> Void = { url in
            do {
                try await SandboxUserAgent(onStep: { step in
                    if case .redirected(let target) = step { redirectedTo.withLock { $0 = target } }
                    status.note("Sandbox browser: \(step)")
                }).browse(url)
            } catch {
                browserError.withLock { $0 = error }
                throw error
            }
        }
        let agent = ShieldedUserAgent(
            LoopbackUserAgent(
                // The watchdog ends the wait at --timeout with the fuller message;
                // the listener's own deadline is only a backstop.
                timeout: .seconds(seconds(for: way) + 5),
                onEvent: { event in
                    if way == .scriptedBrowser, case .browserFailed(_, let reason) = event {
                        // No person is there to open the URL: waiting would only end at --timeout.
                        status.stop()
                        let error = browserError.current
                        if case .authorizationFailed(let response)? = error?.authKitReason {
                            let other =
                                response.status == 404
                                ? " Does the sandbox at \(workspace.sandbox?.absoluteString ?? "") emulate \(descriptor.name)? Start one that does: authkit sandbox serve --provider \(descriptor.id)."
                                : ""
                            Console.err(
                                "authkit: error: The sandbox refused the authorization request: \(response.summary).\(other) Nothing was stored."
                            )
                            ExitStatus.providerError.terminate()
                        }
                        let unreached = error.map { ExitStatus(for: $0) == .networkError } ?? true
                        var hint = unreached ? " Is the sandbox still running?" : ""
                        if unreached, redirectsToRegistered, let target = redirectedTo.current,
                            let listening = redirectTarget,
                            target.host != listening.host || target.port != listening.port
                                || target.path != listening.path
                        {
                            hint =
                                " The sandbox redirected to \(target.redactedForLogs), where this sign-in does not listen (\(listening.redactedForLogs)): "
                                + "\(descriptor.name) redirects to the URI registered for the client, which --port and --redirect-uri do not change."
                        }
                        let said = reason.last.map { ".!?".contains($0) } == true ? reason : reason + "."
                        Console.err(
                            "authkit: error: The sandbox's scripted browser failed: \(said)\(hint) Nothing was stored.")
                        ExitStatus(for: error ?? CLIError("", status: .networkError)).terminate()
                    }
                    Self.report(
                        event, provider: descriptor.name, noBrowser: noBrowser, scripted: way == .scriptedBrowser,
                        status: status, waiting: waiting)
                },
                browser: way == .scriptedBrowser ? scripted : noBrowser ? nil : LoopbackUserAgent.systemBrowser))
        defer { status.stop() }
        credential = try await Self.signIn(authenticator, agent, requested, store: workspace.store)
        return credential
    }

    /// Saves a new sign-in's credential. The store was checked before the
    /// consent, but a disk can fill meanwhile: then the error says that the
    /// sign-in itself worked and what was lost, not only that a file could
    /// not be written.
    ///
    /// Saved under the account's refresh lock (``CredentialStore/saveSignIn(_:lockTimeout:)``):
    /// a refresh of its earlier credential under way in another process
    /// (`token refresh --due` from a timer, a script's `request`) finishes
    /// first, and the newest sign-in is what stays stored.
    /// Whose the new credential is, from the descriptor's "who am I"
    /// endpoint, where no verified ID token says (``Credential/account``):
    /// `token list` and `token show` name it. Asked once, for at most 10 s;
    /// a failure leaves it unnamed and the sign-in as it was.
    static func account(of credential: Credential, with authenticator: any Authenticator) async -> String? {
        guard credential.identity == nil, let client = authenticator as? OAuth2Client, client.descriptor.whoAmI != nil
        else { return nil }
        return await withTaskGroup(of: String?.self) { group in
            group.addTask {
                guard let (subject, name, _) = try? await client.whoAmI(credential) else { return nil }
                return name.map { "\($0) (\(subject))" } ?? subject
            }
            group.addTask {
                try? await Task.sleep(for: .seconds(10))
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }

    static func keep(_ credential: Credential, in store: some CredentialStore) async throws {
        do {
            try await store.saveSignIn(credential)
        } catch let error as AuthKitError {
            guard case .store(let path, let reason) = error.reason else { throw error }
            throw AuthKitError.store(
                path: path,
                reason: .init(
                    reason.kind,
                    reason.detail
                        + " The sign-in itself succeeded, but its credential was not kept: sign in again once the store can be written."
                ))
        }
    }

    /// Signs in through `agent` and stores the result, with signals held
    /// back from the agent's answer to the save (``ShieldedUserAgent``).
    static func signIn(
        _ authenticator: any Authenticator, _ agent: ShieldedUserAgent, _ options: AuthorizationOptions,
        store: some CredentialStore
    ) async throws -> Credential {
        do {
            var credential = try await authenticator.authorize(using: agent, options: options)
            credential.account = await account(of: credential, with: authenticator)
            try await keep(credential, in: store)
            agent.lower(stored: true)
            return credential
        } catch {
            agent.lower(stored: false, failure: error)
            throw error
        }
    }

    /// The code and where to enter it, once; the browser opened on the page
    /// with the code filled in when there is one to open; then the wait.
    static func show(_ authorization: DeviceAuthorization, provider: String, openBrowser: Bool, status: StatusLine)
        async
    {
        let complete = authorization.verificationURIComplete.map { " (or open \($0.absoluteString))" } ?? ""
        status.note(
            "Open \(authorization.verificationURI.absoluteString) and enter the code \(DisplayText.sanitized(authorization.userCode, limit: DeviceAuthorization.longestUserCode)) to sign in to \(provider)\(complete).\n"
        )
        if openBrowser {
            try? await SystemBrowser().open(authorization.verificationURIComplete ?? authorization.verificationURI)
        }
        // In seconds under a minute: a code that lives 5 s is not "1 min".
        // Rounded, not cut: a 600 s code, asked for a moment ago, said "9 min".
        let seconds = max(1, Int(authorization.expiresAt.timeIntervalSinceNow.rounded()))
        let left = seconds < 60 ? "\(seconds) s" : "\((seconds + 30) / 60) min"
        status.show(deviceWaitLine(left: left))
    }

    /// The status line while a device code waits: within 80 columns with
    /// its spinner, so that "Ctrl-C cancels" is never the part cut off.
    static func deviceWaitLine(left: String) -> String {
        "Approve on the other device; the code expires in \(left)… Ctrl-C cancels"
    }

    /// Tells the user what the listener is doing, on standard error. The
    /// URL is printed once; strays only count on the status line, so nothing
    /// scrolls the URL away; a refused answer is said plainly.
    static func report(
        _ event: LoopbackEvent, provider: String, noBrowser: Bool, scripted: Bool = false, status: StatusLine,
        waiting: WaitState
    ) {
        switch event {
        case .listening(let url, _):
            // Printed also when a browser is started: one that starts and
            // shows nothing (WSL, a display elsewhere) left no URL to open.
            if noBrowser {
                status.note("Open this URL in a browser to sign in to \(provider):\n\n  \(url.absoluteString)\n")
            } else if !scripted {
                status.note(
                    "Opening a browser to sign in to \(provider); if none appears, open this URL:\n\n  \(url.absoluteString)\n"
                )
            }
            status.show(waiting.line)
        case .browserFailed(let url, let reason):
            guard !noBrowser else { return } // the URL is already on the screen
            status.note(
                scripted
                    ? "\(reason) Open this URL to sign in to \(provider), or set $BROWSER to choose a browser:\n\n  \(url.absoluteString)\n"
                    : "\(reason) Open the URL above to sign in, or set $BROWSER to choose a browser.")
        case .ignoredRequest:
            waiting.ignored()
            status.show(waiting.line)
        case .rejectedAnswer(let reason):
            // Said once per new reason (a flood of forged requests must not
            // scroll the screen), and counted on the status line.
            if waiting.rejected(reason) {
                status.note(
                    "A request to the redirect address was refused: \(reason) Still waiting for the sign-in's own answer."
                )
            }
            status.show(waiting.line)
        }
    }

    /// What the wait has seen, for the status line and the final message.
    final class WaitState: @unchecked Sendable {
        private let lock = ThreadLock()
        private var strays = 0
        private var refused = 0
        /// Who the wait is for: the user, or the sandbox's scripted browser.
        private let waitingFor: String

        init(waitingFor: String = "you to approve in the browser") { self.waitingFor = waitingFor }

        /// The reasons said so far (at most three), and the latest.
        private var reasons = [String]()
        private var latest: String?

        func ignored() { lock.withLock { strays += 1 } }
        /// Counts a refused answer; true when its reason is one not said
        /// before (at most three are said).
        func rejected(_ reason: String) -> Bool {
            lock.withLock {
                refused += 1
                latest = reason
                guard !reasons.contains(reason), reasons.count < 3 else { return false }
                reasons.append(reason)
                return true
            }
        }
        /// How many answers were refused, and the latest one's reason; nil when none was.
        var lastRefusal: (count: Int, reason: String)? {
            lock.withLock { latest.map { (refused, $0) } }
        }

        /// For standard error's terminal as wide as it is now (80 columns in a pipe).
        var line: String {
            let columns = StatusLine.width() - 3
            return lock.withLock {
                Self.line(waitingFor: waitingFor, refused: refused, strays: strays, columns: columns)
            }
        }

        /// The widest status line that fits `columns` (the terminal's width
        /// less the spinner and the last column, which some terminals wrap
        /// at: 77 of 80): the terminal cuts a longer one, and the part lost
        /// was "Ctrl-C cancels". The counts and then the lead get shorter, in
        /// that order; on a terminal narrower still, the shortest is cut.
        static func line(waitingFor: String, refused: Int, strays: Int, columns: Int = 77) -> String {
            func counts(short: Bool) -> String {
                var counts = [String]()
                if refused > 0 { counts.append(short ? "\(refused) refused" : "\(refused) refused, see above") }
                if strays > 0 {
                    counts.append(
                        short
                            ? "\(strays) stray\(strays == 1 ? "" : "s") ignored"
                            : "\(strays) stray request\(strays == 1 ? "" : "s") ignored")
                }
                return counts.isEmpty ? "" : " (\(counts.joined(separator: "; ")))"
            }
            let candidates = [
                ("Waiting for \(waitingFor)…", counts(short: false)),
                ("Waiting for \(waitingFor)…", counts(short: true)),
                ("Waiting…", counts(short: false)), ("Waiting…", counts(short: true)),
            ].map { "\($0)\($1) Ctrl-C cancels" }
            return candidates.first { $0.terminalColumns <= columns } ?? candidates[3]
        }
    }

    /// The default redirect URI with `port` in place of its port.
    private func redirect(for authenticator: any Authenticator, port: Int) throws -> URL {
        let base = authenticator.defaultRedirectURI ?? authenticator.descriptor.redirect.uri
        var components = URLComponents(url: base, resolvingAgainstBaseURL: false)
        components?.port = port
        guard let url = components?.url else { throw CLIError("Cannot put port \(port) into \(base).") }
        return url
    }
}
