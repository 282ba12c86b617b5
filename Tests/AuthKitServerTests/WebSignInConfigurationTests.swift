import AuthKit
import AuthKitHummingbird
import AuthKitSandbox
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import Synchronization
import Testing

@testable import AuthKitServer

/// What a web app's configuration can get wrong, and what its routes say
/// to whom: settings refused before any sign-in (with the setting named),
/// a provider whose code nothing binds, an app served under a path, and
/// the operator's log.
@Suite struct WebSignInConfigurationTests {
    /// A provider whose descriptor sends no PKCE and which has no OpenID
    /// Connect (Qiita's shape): its sign-in is refused at the start unless
    /// the app allows it, as a stolen code would sign its thief in (RFC
    /// 9700 §4.5). The page names nothing; the log says what to do.
    /// A who-am-I subject is a number on its own server: user 42 of two
    /// GitHub Enterprise Servers are two users, with two stored
    /// credentials; a provider on one host keeps the key it always had
    /// (the provider id and the subject), so nobody signed in before loses
    /// their credential.
    @Test func whoAmISubjectsOfTwoServersAreTwoUsers() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        func client(_ id: String, host: String? = nil) throws -> OAuth2Client {
            let file = root.appendingPathComponent("providers/\(id).json")
            var settings = ClientSettings(clientID: "id", clientSecret: "secret")
            settings.placeholders = host.map { ["host": $0] }
            return try OAuth2Client(
                descriptor: try ProviderDescriptor(json: try Data(contentsOf: file), source: id), settings: settings)
        }
        func key(_ client: OAuth2Client) -> CredentialKey {
            SignedInUser(
                providerID: client.descriptor.id, subject: "42", issuer: nil, displayName: nil,
                realm: client.whoAmIRealm
            ).credentialKey
        }
        let one = try client("github-enterprise", host: "ghe.one.example")
        let two = try client("github-enterprise", host: "ghe.two.example")
        #expect(one.whoAmIRealm == "github-enterprise https://ghe.one.example/api/v3/user")
        #expect(key(one) != key(two))
        #expect(key(one) == key(try client("github-enterprise", host: "ghe.one.example")))
        // A placeholder at its default keeps the provider's key (Salesforce's
        // login.salesforce.com); a My Domain is a server of its own.
        #expect(try client("salesforce").whoAmIRealm == "salesforce")
        #expect(try client("salesforce", host: "login.salesforce.com").whoAmIRealm == "salesforce")
        #expect(
            try client("salesforce", host: "acme.my.salesforce.com").whoAmIRealm
                == "salesforce https://acme.my.salesforce.com/services/oauth2/userinfo")
        let github = try client("github")
        #expect(github.whoAmIRealm == "github")
        #expect(
            key(github)
                == SignedInUser(providerID: "github", subject: "42", issuer: nil, displayName: nil).credentialKey)
    }

    /// What the sign-in hands an app (its redirects, the signed-in user, the
    /// sign-out's end-session request), printed or dumped into a log, shows
    /// no cookie value (a session cookie's value is the session), no ID
    /// token (the end-session hint) and no `state` (with which a forged
    /// error callback ends the sign-in).
    @Test func whatASignInReturnsPrintsNoSecret() {
        let cookie = WebCookie(name: "__Host-authkit_session", value: "SESSION-secret-0123", maxAge: 60, secure: true)
        let finished = (
            user: SignedInUser(providerID: "google", subject: "1", issuer: nil, displayName: nil),
            redirect: WebSignIn.Redirect(location: "/", cookies: [cookie.field])
        )
        let signedOut = (
            redirect: WebSignIn.Redirect(location: "/", cookies: [cookie.field]),
            endSession: Optional(
                EndSessionRequest(
                    endpoint: URL(string: "https://op.example/logout")!,
                    parameters: ["id_token_hint": "eyJ-secret-0123"])),
            revocationFailure: (any Error)?.none
        )
        let started = WebSignIn.Redirect(
            location: "https://op.example/authorize?client_id=app&state=STATE-secret-0123#x", cookies: [cookie.field])
        let values: [any Sendable] = [cookie, finished, signedOut, started]
        for value in values {
            var dumped = ""
            dump(value, to: &dumped)
            for shown in ["\(value)", String(reflecting: value), dumped] {
                #expect(!shown.contains("secret") && shown.contains("__Host-authkit_session"), "\(shown)")
            }
        }
        #expect("\(started)".contains("https://op.example/authorize?…"), "\(started)")
        // The header the browser gets still carries it; a cleared one shows as cleared.
        #expect(cookie.headerValue.hasPrefix("__Host-authkit_session=SESSION-secret-0123;"))
        #expect(cookie.field.value == cookie.headerValue && cookie.field.name == .setCookie)
        let cleared = WebCookie(name: "__Host-authkit_session", value: "", maxAge: 0, secure: true).field
        #expect(WebCookie.shown([cleared]).hasPrefix("[__Host-authkit_session=; Path=/; Max-Age=0"))
    }

    @Test(arguments: [false, true]) func aProviderWhoseCodeNothingBindsIsRefusedUnlessAllowed(allowed: Bool)
        async throws
    {
        let qiita = try ProviderCatalog(includeBundled: true, directories: []).descriptor(id: "qiita")
        let sandbox = try await Sandbox.start(
            emulating: qiita,
            options: SandboxOptions(
                redirectURIs: [WebSignInTests.publicURL.absoluteString + "/auth/qiita/callback"]))
        defer { Task { await sandbox.stop() } }
        let client = try OAuth2Client(descriptor: sandbox.descriptor, settings: sandbox.clientSettings)
        let web = WebSignIn(
            configuration: .init(publicURL: WebSignInTests.publicURL, allowsProvidersWithoutCodeBinding: allowed),
            clients: [client], credentials: InMemoryCredentialStore(), store: InMemoryWebSignInStore())
        var refusal: String?
        do {
            _ = try await web.start(providerID: "qiita", returnTo: "/")
        } catch let error as AuthKitError {
            guard
                case .misuse(.invalidParameter(name: "configuration.allowsProvidersWithoutCodeBinding", let why)) =
                    error.reason
            else { throw error }
            refusal = why
        }
        #expect((refusal != nil) == !allowed)
        if let refusal { #expect(refusal.contains("\"pkce\"") && refusal.contains("RFC 9700")) }

        let log = CapturedLog()
        let (app, _) = try WebSignInTests.app(sandbox, web: web, logger: log.logger)
        try await app.test(.router) { client in
            let started = try await client.execute(uri: "/auth/qiita", method: .get)
            if allowed {
                #expect(started.status == .found)
            } else {
                #expect(started.status == .internalServerError && started.headers[.setCookie] == nil)
                #expect(!String(buffer: started.body).contains("pkce"))
                #expect(
                    log.lines.contains {
                        $0.level == .error && $0.message.contains("allowsProvidersWithoutCodeBinding")
                    })
            }
        }
    }

    /// A provider with OpenID Connect but no PKCE, configured without the
    /// `openid` scope, sends no nonce: refused before anything is sent,
    /// saying to add the scope.
    @Test func withoutTheOpenIDScopeTheRefusalSaysToAddIt() async throws {
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("providers/google.json")
        var json = try #require(try JSONSerialization.jsonObject(with: try Data(contentsOf: file)) as? [String: Any])
        json["pkce"] = "none"
        let noPKCE = try ProviderDescriptor(json: try JSONSerialization.data(withJSONObject: json), source: "google")
        var settings = ClientSettings(clientID: "id", clientSecret: "secret")
        settings.scopes = ["email"]
        let client = try OAuth2Client(descriptor: noPKCE, settings: settings)
        #expect(!client.bindsCode() && client.bindsCode(scopes: ["openid", "email"]))
        let web = WebSignIn(
            configuration: .init(publicURL: WebSignInTests.publicURL), clients: [client],
            credentials: InMemoryCredentialStore(), store: InMemoryWebSignInStore())
        var refusal: String?
        do {
            _ = try await web.start(providerID: "google", returnTo: "/")
        } catch let error as AuthKitError {
            guard
                case .misuse(.invalidParameter(name: "configuration.allowsProvidersWithoutCodeBinding", let why)) =
                    error.reason
            else { throw error }
            refusal = why
        }
        #expect(refusal?.contains("Add the openid scope") == true, "\(refusal ?? "not refused")")
    }

    /// Each setting that would stop every sign-in is refused at the start,
    /// named, and no process stops (a lifetime set far off to mean "for
    /// ever" did, making the cookie's `Max-Age`).
    @Test func aSettingNoSignInCanWorkWithIsNamedAtTheStart() async throws {
        let sandbox = try await WebSignInTests.google()
        defer { Task { await sandbox.stop() } }
        let client = try OAuth2Client(descriptor: sandbox.descriptor, settings: sandbox.clientSettings)
        let base = WebSignIn.Configuration(publicURL: WebSignInTests.publicURL)
        var cases: [(String, WebSignIn.Configuration)] = []
        func refused(_ name: String, _ change: (inout WebSignIn.Configuration) -> Void) {
            var configuration = base
            change(&configuration)
            cases.append((name, configuration))
        }
        refused("configuration.pathPrefix") { $0.pathPrefix = "auth" } // https://app.exampleauth/…
        refused("configuration.pathPrefix") { $0.pathPrefix = "/auth/" }
        refused("configuration.pathPrefix") { $0.pathPrefix = "/a b" }
        refused("configuration.pathPrefix") { $0.pathPrefix = "/auth/../x" }
        refused("configuration.pathPrefix") { $0.pathPrefix = "" }
        refused("configuration.sessionLifetime") { $0.sessionLifetime = .seconds(Int64.max) }
        refused("configuration.sessionLifetime") { $0.sessionLifetime = .zero }
        refused("configuration.attemptLifetime") { $0.attemptLifetime = .seconds(1 << 60) }
        refused("configuration.bindingCookie") { $0.bindingCookie = $0.sessionCookie }
        refused("configuration.sessionCookie") { $0.sessionCookie = "a;b" }
        // Over plain http on this machine a prefixed cookie is never kept (it is not Secure there).
        refused("configuration.bindingCookie") { $0.bindingCookie = "__Host-bind" }
        refused("configuration.sessionCookie") { $0.sessionCookie = "__secure-sid" }
        refused("configuration.publicURL") { $0.publicURL = URL(string: "https://app.example/?x=1")! }
        refused("configuration.publicURL") { $0.publicURL = URL(string: "https://user@app.example")! }
        for (name, configuration) in cases {
            let web = WebSignIn(
                configuration: configuration, clients: [client], credentials: InMemoryCredentialStore(),
                store: InMemoryWebSignInStore())
            var named: String?
            do {
                _ = try await web.start(providerID: "google", returnTo: "/")
            } catch let error as AuthKitError {
                guard case .misuse(.invalidParameter(let refused, _)) = error.reason else { throw error }
                named = refused
            }
            #expect(named == name, "\(configuration)")
            // The redirect URI is an address whatever the prefix (it was force-unwrapped).
            #expect(web.redirectURI(for: "google").host == configuration.publicURL.host)
        }
        // What stands today is accepted, a dotted prefix and the longest lifetime among it.
        var fine = base
        fine.pathPrefix = "/v1.2/sign-in_~x"
        fine.sessionLifetime = .seconds(400 * 86_400)
        #expect(WebSignIn.configurationProblem(fine) == nil)
        #expect(WebSignIn.configurationProblem(base) == nil)
        // On https the prefix is AuthKit's own to add: accepted.
        var secure = base
        (secure.publicURL, secure.sessionCookie) = (URL(string: "https://app.example")!, "__Host-sid")
        #expect(WebSignIn.configurationProblem(secure) == nil)
    }

    /// An app a proxy serves under a path (`https://host/app`, stripped
    /// before the app sees it): the sign-in ends at the return path under
    /// it, the error page links back under it, and so does the sign-out.
    @Test func underAPathTheBrowserIsSentBackUnderIt() async throws {
        let publicURL = URL(string: "http://127.0.0.1:8080/app")!
        let sandbox = try await WebSignInTests.google(redirect: publicURL.absoluteString + "/auth/google/callback")
        defer { Task { await sandbox.stop() } }
        let (app, web) = try WebSignInTests.app(sandbox, publicURL: publicURL)
        #expect(web.sitePath("/") == "/app/")
        // A path already under it (an app that passed the browser's own) is not put under it twice.
        #expect(web.sitePath("/app/settings") == "/app/settings" && web.sitePath("/apples") == "/app/apples")
        try await app.test(.router) { client in
            let started = try await client.execute(uri: "/auth/google?return_to=/settings", method: .get)
            let binding = try #require(WebSignInTests.cookies(started)["authkit_signin"])
            let callback = try await WebSignInTests.consent(
                sandbox, location: try #require(started.headers[.location]), publicURL: publicURL)
            #expect(callback.path == "/app/auth/google/callback")
            // The proxy strips /app.
            let stripped = String(WebSignInTests.pathAndQuery(callback).dropFirst("/app".count))
            let finished = try await client.execute(
                uri: stripped, method: .get, headers: [.cookie: "authkit_signin=\(binding)"])
            #expect(finished.status == .found && finished.headers[.location] == "/app/settings")
            let session = try #require(WebSignInTests.cookies(finished)["authkit_session"])

            let replay = try await client.execute(
                uri: stripped, method: .get, headers: [.cookie: "authkit_signin=\(binding)"])
            #expect(replay.status == .badRequest && String(buffer: replay.body).contains(#"href="/app/""#))
            #expect(replay.headers[.contentSecurityPolicy]?.contains("script-src") == false)

            let me = try await client.execute(
                uri: "/me", method: .get, headers: [.cookie: "authkit_session=\(session)"])
            let fields = try JSONSerialization.jsonObject(with: Data(String(buffer: me.body).utf8)) as? [String: String]
            let out = try await client.execute(
                uri: "/auth/logout", method: .post,
                headers: [
                    .cookie: "authkit_session=\(session)", HTTPField.Name("X-CSRF-Token")!: fields?["csrf"] ?? "",
                ])
            #expect(out.status == .found && out.headers[.location] == "/app/", "\(out.status)")
        }
    }

    /// What the provider answered reaches the operator's log as a warning
    /// (a sign-in failing for everyone was otherwise known only to its
    /// users); the visitor's own doing (a replayed callback) is no warning.
    @Test func aProvidersRefusalIsLoggedAndAVisitorsIsNot() async throws {
        let google = try ProviderCatalog(includeBundled: true, directories: []).descriptor(id: "google")
        let sandbox = try await Sandbox.start(
            emulating: google,
            options: SandboxOptions(
                redirectURIs: [WebSignInTests.publicURL.absoluteString + "/auth/google/callback"],
                idTokenFault: "wrong-audience"))
        defer { Task { await sandbox.stop() } }
        let log = CapturedLog()
        let (app, _) = try WebSignInTests.app(sandbox, logger: log.logger)
        try await app.test(.router) { client in
            let started = try await client.execute(uri: "/auth/google", method: .get)
            let binding = try #require(WebSignInTests.cookies(started)["authkit_signin"])
            let callback = try await WebSignInTests.consent(sandbox, location: try #require(started.headers[.location]))
            let finished = try await client.execute(
                uri: WebSignInTests.pathAndQuery(callback), method: .get,
                headers: [.cookie: "authkit_signin=\(binding)"])
            #expect(finished.status == .badGateway)
            #expect(log.lines.contains { $0.level == .warning && $0.message.contains("addressed to") })
            let before = log.lines.filter { $0.level >= .warning }.count
            let replay = try await client.execute(
                uri: WebSignInTests.pathAndQuery(callback), method: .get,
                headers: [.cookie: "authkit_signin=\(binding)"])
            #expect(replay.status == .badRequest)
            #expect(log.lines.filter { $0.level >= .warning }.count == before)
        }
    }
}

/// Every line logged through `logger`, with its level.
final class CapturedLog: Sendable {
    struct Line: Sendable {
        var level: Logger.Level
        var message: String
    }
    private let storage = Mutex<[Line]>([])
    var lines: [Line] { storage.withLock { $0 } }

    var logger: Logger {
        var logger = Logger(label: "test") { _ in Handler(log: self) }
        logger.logLevel = .debug
        return logger
    }

    struct Handler: LogHandler {
        let log: CapturedLog
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .debug
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) {
            log.storage.withLock { $0.append(Line(level: event.level, message: "\(event.message)")) }
        }
    }
}
