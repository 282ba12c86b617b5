import AuthKit

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A local authorization server that behaves like one provider, built from
/// that provider's descriptor: its encodings, client authentication, success
/// statuses, field paths, follow-up and revocation calls, PKCE and `iss`
/// rules, and OAuth 1.0a signatures.
///
/// Start one in a test, sign in with the descriptor it hands back, and run
/// your own code against it — no network, no registered app:
///
///     let sandbox = try await Sandbox.start(emulating: try ProviderCatalog.standard().descriptor(id: "qiita"))
///     defer { Task { await sandbox.stop() } }
///     let client = try OAuth2Client(descriptor: sandbox.descriptor, settings: sandbox.clientSettings)
///     let credential = try await client.authorize(using: sandbox.userAgent())
///
/// It listens on 127.0.0.1 only and keeps everything in memory. It accepts
/// one client (``SandboxOptions/clientID``) and rejects what the real server
/// rejects: a reused code, a wrong verifier, an unregistered redirect URI, a
/// refresh token used twice (which also revokes the grant).
public final class Sandbox: Sendable {
    /// The emulated provider as clients must see it: every endpoint at this sandbox.
    public let descriptor: ProviderDescriptor
    /// `http://127.0.0.1:PORT`
    public let baseURL: URL
    public let options: SandboxOptions
    let server: SandboxHTTPServer
    let emulator: Emulator

    /// Starts an emulation of `descriptor` on 127.0.0.1 (``SandboxOptions/port``; 0 picks a free port).
    ///
    /// The standard client secret stands for the descriptor's
    /// (``SandboxOptions/standardClientSecret(for:)``): a descriptor that has
    /// the client sign `client_secret_jwt` assertions gets one long enough
    /// for HS256, in ``options`` and ``clientSettings`` too.
    /// - Throws: ``AuthKit/AuthKitError/Code/portInUse`` (or ``AuthKit/AuthKitError/Code/cannotListen``) when it cannot listen on that port;
    ///   ``AuthKit/AuthKitError/Code/misuse`` for an ``SandboxOptions/idTokenFault`` it does not know.
    /// - Parameter onEvent: called once per request, after it is answered,
    ///   with a line that holds no secret.
    public static func start(
        emulating descriptor: ProviderDescriptor, options: SandboxOptions = SandboxOptions(),
        onEvent: (@Sendable (SandboxEvent) -> Void)? = nil
    ) async throws -> Sandbox {
        var options = options
        if let name = options.idTokenFault, options.fault == nil {
            throw AuthKitError.misuse(
                .invalidOption(
                    name: "SandboxOptions.idTokenFault",
                    "is not a fault the sandbox knows; give one of "
                        + SandboxOptions.idTokenFaults.joined(separator: ", ") + " (got '\(name.prefix(40))')"))
        }
        if options.clientSecret == SandboxOptions.standardClientSecret {
            options.clientSecret = SandboxOptions.standardClientSecret(for: descriptor)
        }
        let box = EmulatorBox()
        let server = SandboxHTTPServer(
            refused: { line, status, reason in
                box.emulator?.record(
                    step: "unknown", request: line ?? "(unreadable request)", status: status,
                    summary: "refused before routing: \(reason)")
            },
            respond: { request in
                guard let emulator = box.emulator else {
                    return .empty(status: 503, step: "unknown", summary: "the sandbox is still starting")
                }
                return await emulator.respond(request)
            },
            respondNow: { request in
                guard let emulator = box.emulator else {
                    return .empty(status: 503, step: "unknown", summary: "the sandbox is still starting")
                }
                return emulator.respondWithoutSignatures(request)
            })
        server.refreshDelay = .seconds(options.refreshDelay)
        let port: Int
        do {
            port = try await server.start(port: options.port)
        } catch {
            await server.stop()
            throw error
        }
        let base = URL(string: "http://127.0.0.1:\(port)")!
        let address = SandboxAddress(base: base)
        box.emulator = Emulator(descriptor: descriptor, address: address, options: options, onEvent: onEvent)
        return Sandbox(
            descriptor: address.point(descriptor), baseURL: base, options: options, server: server,
            emulator: box.emulator!)
    }

    private init(
        descriptor: ProviderDescriptor, baseURL: URL, options: SandboxOptions, server: SandboxHTTPServer,
        emulator: Emulator
    ) {
        self.descriptor = descriptor
        self.baseURL = baseURL
        self.options = options
        self.server = server
        self.emulator = emulator
    }

    /// Runs `body` with a started sandbox and stops it afterwards, also when `body` throws.
    public static func with<Result: Sendable>(
        emulating descriptor: ProviderDescriptor, options: SandboxOptions = SandboxOptions(),
        _ body: (Sandbox) async throws -> Result
    ) async throws -> Result {
        let sandbox = try await start(emulating: descriptor, options: options)
        do {
            let result = try await body(sandbox)
            await sandbox.stop()
            return result
        } catch {
            await sandbox.stop()
            throw error
        }
    }

    /// Stops listening. Safe to call more than once.
    public func stop() async { await server.stop() }

    /// The settings of the sandbox's registered client, for ``OAuth2Client`` or
    /// `OAuth1Client`, with a stand-in for each placeholder the descriptor
    /// has no default for (``standInPlaceholders(for:)``).
    public var clientSettings: ClientSettings {
        let standIns = Self.standInPlaceholders(for: descriptor)
        return ClientSettings(
            clientID: options.clientID, clientSecret: options.clientSecret,
            placeholders: standIns.isEmpty ? nil : standIns)
    }

    /// `sandbox-NAME` for each placeholder of `descriptor` without a default
    /// (`{host}` of a self-hosted server, `{team}` of Qiita Team). A sandbox
    /// answers at its own address whatever the value, so such a provider can
    /// be tried with no settings; a value the caller gives still wins.
    package static func standInPlaceholders(for descriptor: ProviderDescriptor) -> [String: String] {
        var standIns = [String: String]()
        for (name, placeholder) in descriptor.placeholders where placeholder.default == nil {
            standIns[name] = "sandbox-\(name)"
        }
        return standIns
    }

    /// A user agent that plays the user: opens the authorization URL, answers
    /// the consent page (approving it unless `approving` is false) as `account`,
    /// and brings back the redirect.
    public func userAgent(approving approves: Bool = true, account: String? = nil) -> SandboxUserAgent {
        SandboxUserAgent(approves: approves, account: account ?? options.defaultAccount)
    }

    /// `/whoami` on this sandbox: the account and scopes of the token presented.
    public var whoamiURL: URL { baseURL.appendingPathComponent("whoami") }

    /// The requests answered so far, in order, without secrets: the latest
    /// 10,000, so that a long-running sandbox does not keep every one.
    public var events: [SandboxEvent] { emulator.events }
}

/// Lets the server's closure reach the emulator, which needs the bound port.
private final class EmulatorBox: @unchecked Sendable {
    private let lock = ThreadLock()
    private var value: Emulator?
    var emulator: Emulator? {
        get { lock.withLock { value } }
        set { lock.withLock { value = newValue } }
    }
}
