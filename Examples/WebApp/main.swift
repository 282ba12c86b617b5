// "Sign in with …" in a Hummingbird 2 web app, on one instance or many.
//
// Offline, against the sandbox's emulation of Google (README, "In a web backend"):
//   authkit sandbox serve --provider google --redirect-uri http://127.0.0.1:8080/auth/google/callback &
//   swift run --package-path Examples authkit-web-example --provider google --sandbox http://127.0.0.1:8790
// Two instances behind one address, on PostgreSQL (docs/web.md):
//   export AUTHKIT_WEB_KEYS=$(swift run --package-path Examples authkit-web-example --new-key)
//   authkit-web-example --port 8081 --public-url http://127.0.0.1:8080 --database-url postgres://… --provider google
//   authkit-web-example --port 8082 --public-url http://127.0.0.1:8080 --database-url postgres://… --provider google
import ArgumentParser
import AuthKit
import AuthKitAsyncHTTPClient
import AuthKitHummingbird
import AuthKitPostgres
import AuthKitSandbox
import AuthKitServer
import Foundation
import Hummingbird
import Logging
import PostgresNIO
import ServiceLifecycle

@main
struct WebExample: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "authkit-web-example",
        abstract: "A web app with \"Sign in with …\" for AuthKit's providers (Hummingbird 2).")

    @Option(help: "The port to listen on (127.0.0.1).") var port = 8080
    @Option(
        help: "The address users reach the app at; the redirect URIs are made from it. Default: http://127.0.0.1:PORT.")
    var publicURL: String?
    @Option(
        help:
            "A provider to offer (repeatable); its client id and secret come from AUTHKIT_<ID>_CLIENT_ID and AUTHKIT_<ID>_CLIENT_SECRET."
    )
    var provider: [String] = []
    @Option(help: "Sign in to a running `authkit sandbox` at this URL instead of the real provider.") var sandbox:
        String?
    @Option(
        help:
            "PostgreSQL for every store (postgres://user@host:port/db; TLS required unless the host is 127.0.0.1 or localhost); the password from PGPASSWORD, the keys from AUTHKIT_WEB_KEYS."
    )
    var databaseURL: String?
    @Flag(help: "Print a new encryption key for AUTHKIT_WEB_KEYS and exit.") var newKey = false
    @Flag(
        help:
            "Seal every stored row under the first key of AUTHKIT_WEB_KEYS (a rotation: the new key first, the old after it), say which keys rows still need, and exit. Needs --database-url."
    )
    var reseal = false
    @Option(
        help:
            "How to reach the providers: ahc (AsyncHTTPClient, on the event loops this server already runs) or curl (AuthKit's default transport, a thread per request)."
    )
    var transport = "ahc"

    func run() async throws {
        if newKey {
            // Two keys made within a second have ids of their own: one id for two keys is refused.
            let id = "k\(Int(Date().timeIntervalSince1970))-\(String(UInt16.random(in: .min ... .max), radix: 16))"
            print(PostgresStore.newEncryptionKey(id: id))
            return
        }
        if reseal {
            guard let databaseURL else {
                throw ValidationError("--reseal seals the database's rows: give --database-url.")
            }
            try await Self.reseal(Self.postgresStore(databaseURL, logger: Logger(label: "authkit-web-example")))
            return
        }
        guard !provider.isEmpty else { throw ValidationError("Give at least one --provider.") }
        // A server on SwiftNIO sends its provider calls on its own event loops:
        // no thread handed each request and back (the web-signin benchmark row).
        let http: (any HTTPClient)?
        switch transport {
        case "ahc": http = asyncHTTPClientTransport()
        case "curl": http = nil
        default: throw ValidationError("--transport takes ahc or curl, not '\(transport)'.")
        }
        let publicURL = try Self.publicURL(self.publicURL ?? "http://127.0.0.1:\(port)")
        let logger = Logger(label: "authkit-web-example")

        // 1. A client per provider: the bundled descriptor (or your override),
        //    pointed at the sandbox when asked.
        let catalog = ProviderCatalog.standard()
        let clients = try provider.map { id in
            var descriptor = try catalog.descriptor(id: id)
            let settings: ClientSettings
            if let sandbox, let base = URL(string: sandbox) {
                descriptor = descriptor.pointed(atSandbox: base)
                settings = ClientSettings(clientID: "sandbox-client", clientSecret: "sandbox-secret")
            } else {
                // Its own error (a broken config.json, a secret given for
                // another host), not "no client id" after it was dropped.
                settings = try ClientSettings.standard(for: descriptor)
            }
            return try OAuth2Client(descriptor: descriptor, settings: settings, httpClient: http)
        }

        // 2. The stores: memory for one instance, PostgreSQL for several.
        var services: [any Service] = []
        let web: WebSignIn
        let postgres: PostgresStore?
        if let databaseURL {
            let store = try Self.postgresStore(databaseURL, logger: logger)
            services.append(store.client)
            postgres = store
            web = WebSignIn(
                configuration: .init(publicURL: publicURL), clients: clients, credentials: store, store: store)
        } else {
            postgres = nil
            web = WebSignIn(
                configuration: .init(publicURL: publicURL), clients: clients, credentials: inMemoryCredentialStore(),
                store: inMemoryWebSignInStore())
        }

        // 3. The routes: AuthKit's, a page with the sign-in links, and /me.
        let router = Router()
        web.addRoutes(to: router)
        router.get("/") { request, _ -> Response in
            let session = try? await web.session(of: request)
            return Self.html(Self.homePage(web: web, session: session))
        }
        router.get("/me") { request, _ -> Response in
            do {
                return try await Self.me(request, web: web)
            } catch let error as AuthKitError where error.code == .signInRequired {
                let providerID = error.providerID ?? ""
                // The grant is over (revoked at the provider, its refresh
                // token expired or refused): no retry brings it back, so
                // not a 502. The user signs in again, which replaces it.
                logger.info("/me: \(providerID)'s credential can no longer be refreshed; sign in again")
                return Self.json(
                    ["error": "sign in again", "signIn": web.sitePath("/auth/\(providerID)")],
                    status: .unauthorized)
            } catch {
                // Logged here, never shown: a store's error names the
                // database's address and its own messages, and /me answers
                // anyone with a cookie. The database away: 503, and the next
                // request tries again; anything else: 502.
                logger.error("/me failed: \(error)")
                let failure = error as? AuthKitError
                if let code = failure?.code, [.storeInaccessible, .storeBusy].contains(code) {
                    return Self.json(["error": "unavailable"], status: .serviceUnavailable)
                }
                if let status = failure?.responseStatus {
                    return Self.json(["error": "refused"], status: HTTPResponse.Status(code: status))
                }
                return Self.json(["error": "the provider or the sign-in could not be reached"], status: .badGateway)
            }
        }

        // Stopped in the reverse order: the server first, then the refreshes
        // still under way, then the database they save to.
        services.append(RefreshesUnderWay(logger: logger))
        var app = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: port)), services: services,
            logger: logger)
        if let postgres {
            app.beforeServerStarts { try await postgres.migrate() }
        }
        try await app.runService()
    }

    /// `/me`: who signed in, and what the provider's "who am I" says about
    /// them, asked with their credential (refreshed once across every
    /// instance when due).
    static func me(_ request: Request, web: WebSignIn) async throws -> Response {
        guard let session = try await web.session(of: request) else {
            return json(["error": "not signed in"], status: .unauthorized)
        }
        var answer: [String: Any] = [
            "provider": session.user.providerID, "subject": session.user.subject,
            "issuer": session.user.issuer as Any, "name": session.user.displayName as Any,
        ]
        // UserInfo for an OpenID provider, the descriptor's who-am-I call otherwise.
        if let said = try await web.providerAnswer(for: session.user) {
            answer["api"] = try JSONSerialization.jsonObject(with: JSONEncoder().encode(said))
        }
        return json(answer, status: .ok)
    }

    /// `--public-url`: an origin, http(s) with a host and nothing after it.
    /// The redirect URIs are made from it and the routes are served at the
    /// root (a path would name callbacks this app does not answer), and a
    /// plain-http site off loopback gets `Secure` cookies its browsers drop:
    /// every sign-in would fail at its callback, so it is refused here.
    static func publicURL(_ text: String) throws -> URL {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme),
            let host = url.host?.lowercased(), !host.isEmpty, url.user == nil, url.query == nil, url.fragment == nil,
            url.path.isEmpty || url.path == "/"
        else {
            throw ValidationError("--public-url takes an origin, as https://app.example or http://127.0.0.1:8080.")
        }
        // The app listens on 127.0.0.1 alone: callbacks to [::1] would reach nothing.
        guard !["::1", "[::1]"].contains(host) else {
            throw ValidationError(
                "--public-url \(text): this example listens on 127.0.0.1 only; use http://127.0.0.1:PORT or http://localhost:PORT."
            )
        }
        guard scheme == "https" || ["127.0.0.1", "localhost"].contains(host) else {
            throw ValidationError(
                "--public-url \(text): plain http only on this machine (127.0.0.1, localhost): browsers drop the sign-in's Secure cookies elsewhere. Serve the app over https."
            )
        }
        return url
    }

    /// The store at `--database-url`, its keys from `AUTHKIT_WEB_KEYS`.
    static func postgresStore(_ databaseURL: String, logger: Logger) throws -> PostgresStore {
        guard let keys = ProcessInfo.processInfo.environment["AUTHKIT_WEB_KEYS"] else {
            throw ValidationError("Set AUTHKIT_WEB_KEYS (make one with --new-key): tokens are stored encrypted.")
        }
        let (client, display) = try postgresClient(databaseURL, logger: logger)
        return try PostgresStore(client: client, encryptionKeys: keys, display: display)
    }

    /// `--reseal`: the last step of a key rotation (docs/web.md), then
    /// which keys the rows still need.
    static func reseal(_ store: PostgresStore) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await store.client.run() }
            defer { group.cancelAll() }
            try await store.migrate()
            let count = try await store.reseal()
            let current = store.currentKeyID
            print("Sealed \(count) row\(count == 1 ? "" : "s") again under '\(current)'.")
            let older = try await store.rowsPerKey().filter { $0.key != current }
            if older.isEmpty {
                print("No row needs another key: the keys after '\(current)' can go from AUTHKIT_WEB_KEYS.")
            } else {
                // Sessions and sign-ins under a key not given read as absent, and expire.
                let list = older.sorted { $0.key < $1.key }.map { "\($0.value) under '\($0.key)'" }
                print(
                    "Still sealed under other keys (sessions and sign-ins, which expire): \(list.joined(separator: ", "))."
                )
            }
        }
    }

    /// `--database-url`, and the password from `PGPASSWORD` (as psql reads
    /// it): one on the command line is shown to every user of the machine
    /// by `ps`, so it is refused there.
    static func postgresClient(_ text: String, logger: Logger) throws -> (PostgresClient, String) {
        guard let url = URL(string: text), ["postgres", "postgresql"].contains(url.scheme), let host = url.host else {
            throw ValidationError("--database-url takes postgres://user@host[:port]/database.")
        }
        guard url.password == nil else {
            throw ValidationError(
                "--database-url: leave the password out (every user of this machine can read a command line); set PGPASSWORD instead."
            )
        }
        let database = String(url.path.dropFirst())
        let configuration = PostgresClient.Configuration(
            host: host, port: url.port ?? 5432, username: url.user ?? "postgres",
            password: ProcessInfo.processInfo.environment["PGPASSWORD"],
            database: database.isEmpty ? nil : database,
            tls: host == "127.0.0.1" || host == "localhost" ? .disable : .require(.makeClientConfiguration()))
        return (
            PostgresClient(configuration: configuration, backgroundLogger: logger),
            "postgresql://\(host):\(url.port ?? 5432)/\(database)"
        )
    }

    static func homePage(web: WebSignIn, session: WebSession?) -> String {
        let escape = { (text: String) in
            text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
                .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
        }
        var body = ""
        if let session {
            body +=
                "<p>Signed in to \(escape(session.user.providerID)) as \(escape(session.user.displayName ?? session.user.subject)).</p>"
            body += "<p><a href=\"/me\">/me</a></p>"
            body +=
                "<form method=\"post\" action=\"/auth/logout\"><input type=\"hidden\" name=\"csrf\" value=\"\(escape(session.csrfToken))\"><button>Sign out</button></form>"
        } else {
            // On the public URL's host, not this page's: a sign-in started
            // at http://localhost:8080 sets its binding cookie there, and
            // the provider sends the browser back to 127.0.0.1, which has
            // no such cookie (the callback refuses it as another browser's).
            var origin = web.configuration.publicURL.absoluteString
            while origin.hasSuffix("/") { origin.removeLast() }
            for id in web.clients.keys.sorted() {
                let start = origin + web.sitePath("/auth/\(id)")
                let name = escape(web.clients[id]!.descriptor.name)
                body += "<p><a href=\"\(escape(start))\">Sign in with \(name)</a></p>"
            }
        }
        return
            "<!doctype html><html><head><meta charset=\"utf-8\"><title>AuthKit web example</title></head><body>\(body)</body></html>"
    }

    /// The home page holds the session's CSRF token: no cache keeps it, and
    /// no other site frames it (a framed sign-out button is a click away
    /// from being pressed unawares).
    static func html(_ text: String) -> Response {
        Response(
            status: .ok,
            headers: [
                .contentType: "text/html; charset=utf-8", .cacheControl: "no-store",
                .contentSecurityPolicy: "default-src 'none'; form-action 'self'; frame-ancestors 'none'",
            ],
            body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    static func json(_ object: [String: Any], status: HTTPResponse.Status) -> Response {
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
        return Response(
            status: status, headers: [.contentType: "application/json", .cacheControl: "no-store"],
            body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }
}

/// At a graceful shutdown, once the server has stopped and before the
/// database does: waits for the refreshes ahead of time that requests let
/// go on while they used the token that still works (docs/web.md); stopped
/// with one under way, a rotated refresh token is lost.
struct RefreshesUnderWay: Service {
    let logger: Logger

    func run() async throws {
        // Until the shutdown begins (or the task is cancelled: then at once).
        try? await gracefulShutdown()
        do {
            try await CredentialSource.finishRefreshesUnderWay()
        } catch {
            logger.error("A renewal could not be saved before the shutdown: \(error)")
        }
    }
}
