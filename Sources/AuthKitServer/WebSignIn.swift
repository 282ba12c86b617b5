import AuthKit
import Crypto
import HTTPTypes

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// "Sign in with …" for a web backend, on as many instances as it runs:
/// the two requests of the authorization code flow, the session after it,
/// and sign-out, independent of any web framework (``AuthKitHummingbird``
/// adapts it to Hummingbird's routes; a Vapor app calls it from its own).
///
/// Between the two requests the attempt (PKCE verifier, nonce, `state`) is
/// kept server-side in a ``WebSignInStore``, under the hash of its
/// `state`; the browser holds only a binding cookie, whose hash the attempt
/// records, so a callback in another browser (login CSRF) is refused. The
/// callback is checked by ``OAuth2Client`` (state, `iss`, PKCE, and the ID
/// token as OpenID Connect Core §3.1.3.7 asks), and the session is new at
/// every sign-in (a session id planted before it is worth nothing).
///
/// With the stores in a database shared by every instance (AuthKitPostgres),
/// a sign-in started on one instance finishes on another, a session cookie
/// is valid on all, and a credential's refresh runs once across all of them.
public final class WebSignIn: Sendable {
    public struct Configuration: Sendable {
        /// The address users reach the app at (`https://app.example`): the
        /// redirect URIs are made from it, so every instance behind it uses
        /// the same ones.
        public var publicURL: URL
        /// Where the routes are: `/auth/{provider}`, `/auth/{provider}/callback`, `/auth/logout`.
        public var pathPrefix: String
        /// How long a started sign-in waits for its callback.
        public var attemptLifetime: Duration
        /// How long a session lasts.
        public var sessionLifetime: Duration
        /// The session cookie's name. Where cookies are `Secure` (every site
        /// but plain-http loopback), ``WebSignIn`` puts `__Host-` before a
        /// name that lacks it (in place of `__Secure-`); see ``WebSignIn/configuration``.
        public var sessionCookie: String
        /// The cookie that binds a started sign-in to its browser; named as ``sessionCookie`` is.
        public var bindingCookie: String
        /// Sign-out signs the user out everywhere in this app: every session
        /// of theirs ends (other browsers included), and their credential is
        /// revoked at the provider where the descriptor names a revocation
        /// (RFC 7009) and removed from the store, even when the provider
        /// could not be reached. With `false`, sign-out ends this browser's
        /// session only, and the credential stays for the user's other sessions.
        public var revokeOnSignOut: Bool
        /// Whether a provider may be offered whose sign-in binds its
        /// authorization code to nothing: a descriptor with `"pkce": "none"`
        /// and no OpenID Connect nonce. `false` (the default) refuses such a
        /// sign-in at its start. RFC 9700 §2.1.1 and §4.5: without PKCE (or
        /// a nonce in the ID token), a code stolen from the victim (a proxy's
        /// log, a callback this app refused before taking its attempt) and
        /// sent to the callback with the thief's own `state` and binding
        /// cookie is exchanged with the client secret, and signs the thief in
        /// as the victim. Set `true` only for a provider that supports
        /// neither (check first whether it accepts PKCE: then say `S256` in
        /// its descriptor).
        public var allowsProvidersWithoutCodeBinding: Bool

        public init(
            publicURL: URL, pathPrefix: String = "/auth", attemptLifetime: Duration = .seconds(600),
            sessionLifetime: Duration = .seconds(7 * 86_400), sessionCookie: String = "authkit_session",
            bindingCookie: String = "authkit_signin", revokeOnSignOut: Bool = true,
            allowsProvidersWithoutCodeBinding: Bool = false
        ) {
            self.publicURL = publicURL
            self.pathPrefix = pathPrefix
            self.attemptLifetime = attemptLifetime
            self.sessionLifetime = sessionLifetime
            self.sessionCookie = sessionCookie
            self.bindingCookie = bindingCookie
            self.revokeOnSignOut = revokeOnSignOut
            self.allowsProvidersWithoutCodeBinding = allowsProvidersWithoutCodeBinding
        }
    }

    /// The configuration given, with the cookies' names as set: `__Host-`
    /// before each (RFC 6265bis §4.1.3.2) where cookies are `Secure`. A
    /// browser accepts such a cookie only from this host, over https, for
    /// `Path=/` and without `Domain`, so a sibling subdomain or a plain-http
    /// answer cannot plant one; without the prefix, a planted
    /// `authkit_signin` or `authkit_session` for a longer path is sent
    /// before the real one, and a framework that reads the first would bind
    /// the victim's callback to the attacker's sign-in.
    public let configuration: Configuration
    public let clients: [String: OAuth2Client]
    public let credentials: any CredentialStore
    /// Where sign-in attempts wait and sessions live.
    public let store: any WebSignInStore
    let now: @Sendable () -> Date

    public init(
        configuration: Configuration, clients: [OAuth2Client], credentials: any CredentialStore,
        store: any WebSignInStore, now: @escaping @Sendable () -> Date = { Date() }
    ) {
        var configuration = configuration
        if Self.cookiesAreSecure(at: configuration.publicURL) {
            configuration.sessionCookie = Self.hostPrefixed(configuration.sessionCookie)
            configuration.bindingCookie = Self.hostPrefixed(configuration.bindingCookie)
        }
        self.configuration = configuration
        self.clients = Dictionary(clients.map { ($0.descriptor.id, $0) }, uniquingKeysWith: { first, _ in first })
        self.credentials = credentials
        self.store = store
        self.now = now
    }

    /// Cookies are `Secure` except on a plain-http loopback site (a
    /// developer's machine), where a browser would drop them.
    var secureCookies: Bool { Self.cookiesAreSecure(at: configuration.publicURL) }

    static func isBase64URL(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
            || (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
            || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "-")
            || byte == UInt8(ascii: "_")
    }

    /// Scheme and host compared as browsers do, without regard to case
    /// (`HTTP://LocalHost:8080` is a loopback site; its cookies were `Secure`
    /// and dropped).
    static func cookiesAreSecure(at publicURL: URL) -> Bool {
        guard publicURL.scheme?.lowercased() == "http", let host = publicURL.host?.lowercased() else { return true }
        return !["127.0.0.1", "localhost", "::1", "[::1]"].contains(host)
    }

    /// Why no sign-in can finish at `publicURL`, if none can: it is not an
    /// http(s) URL with a host, or it is plain http on a host other than
    /// this machine, where the cookies are `Secure` and browsers drop a
    /// `Secure` cookie set over http (RFC 6265bis §5.7): every callback
    /// would be refused for want of its binding cookie. Said at the first
    /// sign-in rather than at `init` (which does not throw). A path is
    /// allowed: a proxy may serve the app under one and strip it.
    static func publicURLProblem(_ publicURL: URL) -> String? {
        guard let scheme = publicURL.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let host = publicURL.host, !host.isEmpty
        else {
            return
                "\(publicURL.absoluteString) is not an http(s) address with a host; give the address users reach the app at, as https://app.example"
        }
        guard scheme == "https" || !cookiesAreSecure(at: publicURL) else {
            return
                "\(publicURL.absoluteString) is plain http on a host other than this machine: browsers drop the sign-in's Secure cookies there, so no sign-in could finish. Serve the app over https (or use 127.0.0.1, [::1] or localhost for development)"
        }
        return nil
    }

    /// The longest a lifetime may be: a browser keeps a cookie no longer
    /// (RFC 6265bis §5.6.2 caps `Max-Age` at 400 days).
    static let longestLifetime = Duration.seconds(400 * 86_400)

    /// The setting that stops every sign-in, named with its problem, if
    /// one does: the public URL (``publicURLProblem(_:)``), and what the
    /// routes, cookies and stores are made from. Each was taken as given:
    /// `pathPrefix: "auth"` put the redirect URI on another host
    /// (`https://app.exampleauth/…`), a lifetime set far off to mean
    /// "for ever" stopped the process at every sign-in (its seconds did not
    /// fit the cookie's `Max-Age`), and one name for both cookies made each
    /// overwrite the other.
    static func configurationProblem(_ configuration: Configuration) -> (name: String, problem: String)? {
        if let problem = publicURLProblem(configuration.publicURL) { return ("configuration.publicURL", problem) }
        let url = configuration.publicURL
        if url.query != nil || url.fragment != nil || url.user != nil || url.password != nil {
            return (
                "configuration.publicURL",
                "\(url.absoluteString) has a query, fragment or user: give the address alone, as https://app.example"
            )
        }
        // Its path (a proxy's `/app`) begins every path the browser is
        // sent to: `%2Fevil.example` decoded to `//evil.example`, a
        // redirect to another host after every sign-in; a space or a
        // character outside ASCII made every `Location` invalid.
        var path = URLComponents(url: url, resolvingAgainstBaseURL: false)?.percentEncodedPath ?? url.path
        while path.hasSuffix("/") { path.removeLast() }
        if !path.isEmpty, !isPath(path) {
            return (
                "configuration.publicURL",
                "\(url.absoluteString) has a path that is not letters, digits and - . _ ~ between single slashes: give the path the app is served under as it is, as https://app.example/app"
            )
        }
        let prefix = configuration.pathPrefix
        if !isPath(prefix) {
            return (
                "configuration.pathPrefix",
                "\"\(prefix)\" is not a path of letters, digits and - . _ ~ starting with / (without one at the end), as /auth"
            )
        }
        for (name, lifetime) in [
            ("configuration.attemptLifetime", configuration.attemptLifetime),
            ("configuration.sessionLifetime", configuration.sessionLifetime),
        ] where lifetime < .seconds(1) || lifetime > longestLifetime {
            return (name, "give between 1 second and 400 days (a browser keeps a cookie no longer)")
        }
        for (name, value) in [
            ("configuration.sessionCookie", configuration.sessionCookie),
            ("configuration.bindingCookie", configuration.bindingCookie),
        ] where value.isEmpty || !value.allUTF8({ isBase64URL($0) || $0 == UInt8(ascii: ".") }) {
            return (name, "\"\(value)\" is not a cookie name: give letters, digits and - _ .")
        }
        if configuration.sessionCookie == configuration.bindingCookie {
            return ("configuration.bindingCookie", "it is the session cookie's name too: give each its own")
        }
        // A browser keeps a `__Host-` or `__Secure-` cookie only when it is
        // `Secure` (RFC 6265bis §4.1.3, the prefix matched in any case),
        // which a plain-http loopback site's are not: the binding cookie was
        // dropped and every callback failed as another browser's.
        if !Self.cookiesAreSecure(at: configuration.publicURL) {
            for (name, value) in [
                ("configuration.sessionCookie", configuration.sessionCookie),
                ("configuration.bindingCookie", configuration.bindingCookie),
            ] where ["__host-", "__secure-"].contains(where: { value.lowercased().hasPrefix($0) }) {
                return (
                    name,
                    "\"\(value)\" has a prefix a browser keeps only on a Secure cookie, and cookies of an http site are not: give the name without it (AuthKit adds __Host- on https)"
                )
            }
        }
        return nil
    }

    /// Why `client`'s sign-in is refused when nothing binds its code, and
    /// what to do, by case.
    static func unboundCodeRefusal(_ client: OAuth2Client) -> AuthKitError {
        let id = client.descriptor.id
        let remedy =
            client.descriptor.openID != nil
            ? "Add the openid scope to its scopes (its descriptor has OpenID Connect, whose nonce binds the code), or set \"pkce\": \"S256\" in the descriptor if the provider accepts PKCE"
            : "Set \"pkce\": \"S256\" in the descriptor if the provider accepts PKCE"
        return AuthKitError.misuse(
            .invalidParameter(
                name: "configuration.allowsProvidersWithoutCodeBinding",
                "provider \(id)'s sign-in binds its code to nothing (no PKCE: its descriptor says \"pkce\": \"none\"; no OpenID Connect nonce), so a stolen authorization code would sign its thief in as the victim (RFC 9700 §4.5). \(remedy); otherwise allow it knowingly with allowsProvidersWithoutCodeBinding"
            ))
    }

    /// Why `client`'s sign-in is refused when it cannot say who signed in
    /// (no ID token asked for, no `whoAmI` call), and what to add.
    static func noIdentityRefusal(_ client: OAuth2Client) -> AuthKitError {
        let remedy =
            client.descriptor.openID != nil
            ? "add the openid scope to its scopes (its descriptor has OpenID Connect), or a whoAmI call to its descriptor"
            : "add a whoAmI call (or an openid part) to its descriptor"
        return AuthKitError.misuse(
            .invalidParameter(
                name: "clients",
                "provider \(client.descriptor.id)'s sign-in cannot say who signed in (no ID token asked for, no whoAmI call): \(remedy)"
            ))
    }

    /// Whether `text` is a path of segments of letters, digits and
    /// `- . _ ~` (no escapes), each after one `/`, none empty, `.` or `..`,
    /// at most 200 bytes: one that the browser reaches as it is written.
    static func isPath(_ text: String) -> Bool {
        let segments = text.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        let pathCharacters = text.allUTF8 {
            isBase64URL($0) || $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "~")
        }
        return text.hasPrefix("/") && text.utf8.count <= 200 && pathCharacters
            && !segments.contains(where: { $0.isEmpty || $0 == "." || $0 == ".." })
    }

    /// Throws what ``configurationProblem(_:)`` finds, as the misuse it is.
    func checkConfiguration() throws {
        if let (name, problem) = Self.configurationProblem(configuration) {
            throw AuthKitError.misuse(.invalidParameter(name: name, problem))
        }
    }

    /// A path of this app as the browser reaches it: under the public
    /// URL's path, which a proxy serving the app under one strips before
    /// the app sees it (`/` at `https://host/app` is `/app/`).
    /// A path already under it (an app that passed the browser's own
    /// path as `return_to`, as it had to before) is kept as it is.
    public func sitePath(_ path: String) -> String {
        var base = configuration.publicURL.path
        while base.hasSuffix("/") { base.removeLast() }
        if !base.isEmpty, path == base || path.hasPrefix(base + "/") || path.hasPrefix(base + "?") { return path }
        return base + path
    }

    /// `__Host-` before the name, in place of a `__Secure-` it had:
    /// `__Secure-` still lets a sibling subdomain set the cookie (with
    /// `Domain=` the parent, and a longer `Path`, so that it is sent first).
    static func hostPrefixed(_ name: String) -> String {
        if name.hasPrefix("__Host-") { return name }
        return "__Host-" + (name.hasPrefix("__Secure-") ? String(name.dropFirst("__Secure-".count)) : name)
    }

    /// `PUBLIC_URL/auth/{provider}/callback`: what the provider's app registration lists.
    /// Each segment percent-encoded, so that no prefix or id makes an
    /// address that does not parse (``configurationProblem(_:)`` refuses
    /// such a prefix before any sign-in).
    public func redirectURI(for providerID: String) -> URL {
        var base = configuration.publicURL.absoluteString
        while base.hasSuffix("/") { base.removeLast() }
        let prefix = configuration.pathPrefix.split(separator: "/", omittingEmptySubsequences: false)
            .map { PercentEncoding.encode(String($0)) }.joined(separator: "/")
        let path = prefix + "/" + PercentEncoding.encode(providerID) + "/callback"
        return URL(string: base + (path.hasPrefix("/") ? path : "/" + path)) ?? configuration.publicURL
    }

    // MARK: - Signing in

    /// What a route answers: a redirect (302) to ``location`` with
    /// ``cookies``. `start` sends the browser to the provider with the
    /// binding cookie; `finish` to the return path with the new session;
    /// `signOut` to the site's root (unless the provider's session is ended
    /// first) with the session cleared.
    public struct Redirect: Sendable {
        /// The `Location` to answer with: the provider's authorization URL,
        /// or a path under the public URL's path (``sitePath(_:)``).
        public var location: String
        /// `Set-Cookie` fields to send with the answer (RFC 6265 §4.1).
        public var cookies: [HTTPField]
    }

    /// `GET /auth/{provider}?return_to=/path`: starts a sign-in.
    /// - Parameter bindingCookie: the binding cookie the request carried, if
    ///   any: it binds this attempt too, so two sign-ins under way in one
    ///   browser (two tabs; a page elsewhere that sends the browser to a
    ///   start) both finish. A new value for each start replaced the cookie,
    ///   and the first sign-in's callback was then refused as another browser's.
    ///   (Two starts sent at the same moment by a browser with no binding
    ///   yet each make one, and the browser keeps the last: the other
    ///   sign-in's callback is still refused so.)
    /// - Throws: ``AuthKit/AuthKitError`` (unknown provider, a return path that is
    ///   not a path on this site), the client's errors, the store's.
    public func start(providerID: String, returnTo: String?, bindingCookie: String? = nil) async throws -> Redirect {
        try checkConfiguration()
        guard let client = clients[providerID] else { throw AuthKitError.webSignIn(.unknownProvider(providerID)) }
        guard let path = ReturnPath.checked(returnTo) else { throw AuthKitError.webSignIn(.invalidReturnPath) }
        // Before anything is sent (a pushed authorization request), and
        // again on what was made.
        guard configuration.allowsProvidersWithoutCodeBinding || client.bindsCode() else {
            throw Self.unboundCodeRefusal(client)
        }
        // A provider that cannot say who signed in fails every callback,
        // after the user consented and the code was spent: said here, as the
        // configuration problem it is (logged as an error by the routes).
        guard client.saysWhoSignsIn() else { throw Self.noIdentityRefusal(client) }
        let (url, pending) = try await client.startAuthorization(redirectURI: redirectURI(for: providerID))
        guard pending.codeVerifier != nil || pending.nonce != nil || configuration.allowsProvidersWithoutCodeBinding
        else { throw Self.unboundCodeRefusal(client) }
        // The browser's binding is kept, so that sign-ins started in two tabs
        // both finish (a new one would end the other's). Any value of the
        // shape this server makes (43 base64url characters) is taken: it is
        // not checked to be one this server issued. One planted in the
        // browser by someone else (cookie injection) gives them nothing
        // more than planting it just before the callback would; what keeps
        // others from setting it is the `__Host-` prefix on https (a plain
        // http origin, loopback, has none: docs/web.md).
        let reusable = bindingCookie.flatMap { $0.utf8.count == 43 && $0.allUTF8(Self.isBase64URL) ? $0 : nil }
        let binding = reusable ?? SecureRandom.token()
        let lifetime = configuration.attemptLifetime
        let attempt = SignInAttempt(
            providerID: providerID, pending: pending, returnTo: path, browserBinding: Self.digest(binding),
            expiresAt: now().addingTimeInterval(lifetime.seconds))
        try await store.insert(attempt, id: Self.digest(pending.state))
        return Redirect(
            location: url.absoluteString,
            cookies: [
                WebCookie(
                    name: configuration.bindingCookie, value: binding, maxAge: Int(lifetime.components.seconds),
                    secure: secureCookies
                ).field
            ])
    }

    /// `GET /auth/{provider}/callback?…`: finishes a sign-in. Returns the
    /// signed-in user, and the redirect to the return path the sign-in
    /// started with (under the public URL's path) with the new session's
    /// cookie. The binding cookie stays for its own lifetime: another
    /// sign-in of this browser may still be under way.
    /// - Parameters:
    ///   - query: the callback's query, as received (percent-encoded).
    ///   - bindingCookie: the value of the binding cookie the request carried.
    ///   - sessionCookie: the session cookie the request carried, if any: that
    ///     session ends, as the new one replaces it in this browser. Left in
    ///     the store, it stayed valid (a copy of the old cookie still worked)
    ///     and no sign-out from this browser could reach it.
    /// - Throws: ``AuthKit/AuthKitError`` (no such attempt: expired, replayed or
    ///   forged; another browser; no identity); AuthKit's errors for what the
    ///   provider answered (`authorizationFailed` when the user declined,
    ///   `idTokenRejected`, …); the stores'.
    public func finish(
        providerID: String, query: String, bindingCookie: String?, sessionCookie: String? = nil
    ) async throws -> (user: SignedInUser, redirect: Redirect) {
        try checkConfiguration()
        guard let client = clients[providerID] else { throw AuthKitError.webSignIn(.unknownProvider(providerID)) }
        // A query that does not decode (a `%` without two hex digits, in an
        // `error_description` say) is said as such: read as no `state`,
        // it was "expired, already finished or not started".
        guard let parameters = FormURLEncoding.decode(query) else {
            throw AuthKitError.redirect(.malformed("the callback's query is not form-encoded"))
        }
        let states = parameters.filter { $0.0 == "state" }.map(\.1)
        guard states.count == 1, let state = states.first else { throw AuthKitError.webSignIn(.attemptNotFound) }
        let id = Self.digest(state)
        guard let callback = URL(string: redirectURI(for: providerID).absoluteString + "?" + query) else {
            throw AuthKitError.webSignIn(.attemptNotFound)
        }
        // Checked before it is taken: a callback from another browser, or at
        // another provider's path, removes nothing, so whoever learned the
        // `state` (a log, a referrer) cannot cancel the sign-in of the
        // browser that holds the binding cookie.
        guard let found = try await store.attempt(id: id, now: now()), found.providerID == providerID else {
            throw AuthKitError.webSignIn(.attemptNotFound)
        }
        guard let bindingCookie, ConstantTime.equals(Self.digest(bindingCookie), found.browserBinding) else {
            throw AuthKitError.webSignIn(.browserMismatch)
        }
        // Taken once: of two callbacks at once (a replay), one gets it.
        guard let attempt = try await store.takeAttempt(id: id, now: now()),
            ConstantTime.equals(attempt.browserBinding, found.browserBinding)
        else { throw AuthKitError.webSignIn(.attemptNotFound) }
        var credential = try await client.exchange(redirect: callback, pending: attempt.pending)
        let user: SignedInUser
        if let identity = credential.identity {
            // OpenID Connect: the verified ID token says who.
            user = SignedInUser(
                providerID: providerID, subject: identity.subject, issuer: identity.issuer,
                displayName: identity.displayName)
        } else if client.descriptor.whoAmI != nil {
            // Otherwise the provider's own "who am I", asked with the token it just issued.
            let (subject, name, _) = try await client.whoAmI(credential)
            user = SignedInUser(
                providerID: providerID, subject: subject, issuer: nil, displayName: name, realm: client.whoAmIRealm)
            // Whose it is, as an ID token would say: a later sign-in of the
            // same user that brings no refresh token keeps this one's.
            credential.account = subject
        } else {
            throw AuthKitError.webSignIn(.noIdentity(providerID: providerID))
        }
        credential.label = user.credentialKey.label
        try await credentials.saveSignIn(credential)
        // This browser's old session ends first, and its failing fails the
        // sign-in (503, to start again): kept with the new one made (a `try?`
        // here), it stayed valid for any copy of its cookie, another user's
        // perhaps, and out of reach of a sign-out from this browser.
        if let sessionCookie, !sessionCookie.isEmpty, sessionCookie.utf8.count <= 256 {
            try await store.removeSession(id: Self.digest(sessionCookie))
        }
        let sessionID = SecureRandom.token()
        let created = now()
        try await store.insert(
            WebSession(
                user: user, csrfToken: SecureRandom.token(), createdAt: created,
                expiresAt: created.addingTimeInterval(configuration.sessionLifetime.seconds)),
            id: Self.digest(sessionID))
        let redirect = Redirect(
            location: sitePath(attempt.returnTo),
            cookies: [
                WebCookie(
                    name: configuration.sessionCookie, value: sessionID,
                    maxAge: Int(configuration.sessionLifetime.components.seconds), secure: secureCookies
                ).field
            ])
        return (user, redirect)
    }

    // MARK: - The session

    /// The value of the cookie `name` in a request's `Cookie` fields, for
    /// an adapter to pass to ``session(cookie:)``, ``finish(providerID:query:bindingCookie:sessionCookie:)``
    /// and ``signOut(cookie:csrfToken:origin:)``: the exact name, byte for
    /// byte (a framework's own parser that trims Unicode spaces from names
    /// lets a look-alike cookie stand for this one), and `nil` when it is
    /// there twice (which one the browser meant cannot be told).
    public static func cookie(named name: String, inCookieFields fields: [String]) -> String? {
        WebCookie.value(named: name, inCookieFields: fields)
    }

    /// The session a request's cookie names, or `nil`.
    public func session(cookie: String?) async throws -> WebSession? {
        guard let cookie, !cookie.isEmpty, cookie.utf8.count <= 256 else { return nil }
        return try await store.session(id: Self.digest(cookie), now: now())
    }

    /// The signed-in user's credential, refreshed when due (once across
    /// every instance that shares the credential store's refresh lock).
    public func credentialSource(for user: SignedInUser) throws -> CredentialSource {
        guard let client = clients[user.providerID] else {
            throw AuthKitError.webSignIn(.unknownProvider(user.providerID))
        }
        return CredentialSource(authenticator: client, store: credentials, key: user.credentialKey)
    }

    /// What the provider says about the signed-in user now, asked with their
    /// credential (refreshed first when due): its UserInfo answer (OpenID
    /// Connect Core §5.3, its `sub` checked) where the descriptor has one,
    /// else its `whoAmI` answer, else `nil`.
    public func providerAnswer(for user: SignedInUser) async throws -> [String: JSONValue]? {
        guard let client = clients[user.providerID] else {
            throw AuthKitError.webSignIn(.unknownProvider(user.providerID))
        }
        let credential = try await credentialSource(for: user).current()
        if client.descriptor.openID?.userInfoURL != nil, credential.identity != nil {
            return try await client.userInfo(credential).claims
        }
        if client.descriptor.whoAmI != nil {
            return try await client.whoAmI(credential).answer
        }
        return nil
    }

    /// `POST /auth/logout`: ends the session. Returns the redirect to the
    /// site's root with the session cookie cleared; the provider's
    /// end-session request when it has one (post it from the browser,
    /// ``EndSessionRequest/formHTML()``, with the redirect's cookies, to end
    /// the provider's session too); and why the grant was not revoked at
    /// the provider, when `revokeOnSignOut` asked for it: the provider could
    /// not be reached or refused (its error), or no client for it is
    /// configured here any more (``AuthKit/AuthKitError/Code/unknownProvider``).
    /// The credential is removed here all the same (kept, it would be kept
    /// for nobody), so the provider may still honour its refresh token until
    /// it expires: log it (the routes do), and the user can revoke the app's
    /// access in the provider's account settings. `nil` when revoked, or
    /// when the provider offers no revocation. The request must carry the
    /// session's CSRF token, and, when it says where it comes from
    /// (`Origin`), come from this site. `Origin: null` says nothing of where
    /// (the Fetch standard sends it for a form on a page with
    /// `Referrer-Policy: no-referrer`, this site's own among them), so it is
    /// taken as no `Origin`: the token is what a forged request lacks.
    ///
    /// A cookie whose session has ended (expired, signed out in another
    /// tab, swept) is cleared and nothing else is done: there is no session
    /// to hold a CSRF token, so no authority to end anything; answered
    /// "not signed in", the browser kept sending the dead cookie.
    /// - Throws: ``AuthKit/AuthKitError/Code/notSignedIn`` (no session cookie at all),
    ///   ``AuthKit/AuthKitError/Code/csrfRefused``.
    public func signOut(cookie: String?, csrfToken: String?, origin: String?) async throws -> (
        redirect: Redirect, endSession: EndSessionRequest?, revocationFailure: (any Error)?
    ) {
        guard let cookie else { throw AuthKitError.webSignIn(.notSignedIn) }
        let cleared = WebCookie(name: configuration.sessionCookie, value: "", maxAge: 0, secure: secureCookies).field
        let home = Redirect(location: sitePath("/"), cookies: [cleared])
        guard let session = try await session(cookie: cookie) else { return (home, nil, nil) }
        guard let csrfToken, ConstantTime.equals(csrfToken, session.csrfToken) else {
            throw AuthKitError.webSignIn(.csrfRefused)
        }
        if let origin, origin != "null", !ExactText.same(origin, Self.origin(of: configuration.publicURL)) {
            throw AuthKitError.webSignIn(.csrfRefused)
        }
        // This browser's session ends last: should ending the others, or the
        // credential, fail (a database away, a refresh holding the lock),
        // the user is still signed in here and can sign out again, rather
        // than told "not signed in" with the rest still standing.
        var endSession: EndSessionRequest?
        var revocationFailure: (any Error)?
        if let client = clients[session.user.providerID],
            let credential = try? await credentials.credential(for: session.user.credentialKey)
        {
            endSession = try? client.endSession(
                credential, postLogoutRedirectURI: configuration.publicURL.absoluteString)
        }
        if configuration.revokeOnSignOut {
            // Revoked where the provider can (which removes it), else, or
            // when the provider cannot be reached, removed here under the
            // refresh lock: a signed-out user's token is not kept for nobody.
            // Before the sessions end, this one among them: a failure here
            // leaves the user signed in to try again.
            var revoked = false
            if let client = clients[session.user.providerID] {
                if client.descriptor.revocation != nil {
                    do {
                        try await credentialSource(for: session.user).revoke()
                        revoked = true
                    } catch {
                        revocationFailure = error
                    }
                }
            } else {
                revocationFailure = AuthKitError.webSignIn(.unknownProvider(session.user.providerID))
            }
            if !revoked { _ = try await CredentialSource.remove(session.user.credentialKey, from: credentials) }
            try await store.removeSessions(of: session.user)
            // And this one by its id: a session a store knows no owner of
            // (made before PostgreSQL's schema 2 recorded owners, or by an
            // older instance during an upgrade) was left valid after its
            // user's sign-out, though its cookie was cleared. A failure here
            // is said only while the session still stands (the user, still
            // signed in, can try again); one `removeAll` took is signed out.
            do {
                try await store.removeSession(id: Self.digest(cookie))
            } catch {
                if try await store.session(id: Self.digest(cookie), now: now()) != nil { throw error }
            }
        } else {
            try await store.removeSession(id: Self.digest(cookie))
        }
        return (home, endSession, revocationFailure)
    }

    // MARK: - Helpers

    /// SHA-256, hex: what stores key on instead of the values browsers hold.
    package static func digest(_ text: String) -> String {
        Hex.encode(SHA256.hash(data: Data(text.utf8)))
    }

    /// `scheme://host[:port]` serialized as browsers send `Origin` (RFC 6454
    /// §6.1): scheme and host in lower case, an IPv6 address in brackets, no
    /// default port. Compared byte for byte with the request's `Origin`, so
    /// a `publicURL` written `https://App.Example` or `http://[::1]:8080`
    /// must serialize as a browser would, or every sign-out is refused.
    static func origin(of url: URL) -> String {
        let scheme = (url.scheme ?? "https").lowercased()
        var host = (url.host ?? "").lowercased()
        if host.contains(":") && !host.hasPrefix("[") { host = "[" + host + "]" }
        var text = scheme + "://" + host
        if let port = url.port, !(scheme == "https" && port == 443) && !(scheme == "http" && port == 80) {
            text += ":\(port)"
        }
        return text
    }
}

extension Duration {
    var seconds: TimeInterval {
        TimeInterval(components.seconds) + TimeInterval(components.attoseconds) / 1e18
    }
}
