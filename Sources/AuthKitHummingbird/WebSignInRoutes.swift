import AuthKit
import AuthKitServer
import Foundation
import HTTPTypes
import Hummingbird
import Logging

/// ``WebSignIn``'s routes on a Hummingbird 2 router:
///
/// - `GET /auth/{provider}?return_to=/path`: starts a sign-in (302 to the provider);
/// - `GET /auth/{provider}/callback`: finishes it (302 to the return path,
///   with a new session cookie);
/// - `POST /auth/logout` (form field `csrf`, or header `X-CSRF-Token`): ends
///   the session, and posts the browser to the provider's end-session
///   endpoint when it has one.
///
/// Refusals are pages with the status of their case (``AuthKit/AuthKitError/responseStatus``):
/// 400 for a replayed, forged or foreign callback, 403 for a missing CSRF
/// token or a user who declined, 502 for a provider answer AuthKit refused
/// (an ID token that failed a check), 503 while the database is away.
extension WebSignIn {
    public func addRoutes<Context: RequestContext>(to router: Router<Context>) {
        let prefix = configuration.pathPrefix
        router.get("\(prefix)/:provider") { request, context -> Response in
            let provider = try context.parameters.require("provider")
            return try await self.respond(logger: context.logger) {
                let returnTo = request.uri.queryParameters["return_to"].map(String.init)
                let started = try await self.start(
                    providerID: provider, returnTo: returnTo,
                    bindingCookie: Self.cookie(self.configuration.bindingCookie, of: request))
                return Self.redirect(to: started.location, cookies: started.cookies)
            }
        }
        router.get("\(prefix)/:provider/callback") { request, context -> Response in
            let provider = try context.parameters.require("provider")
            return try await self.respond(logger: context.logger) {
                let finished = try await self.finish(
                    providerID: provider, query: request.uri.query ?? "",
                    bindingCookie: Self.cookie(self.configuration.bindingCookie, of: request),
                    sessionCookie: Self.cookie(self.configuration.sessionCookie, of: request))
                return Self.redirect(to: finished.redirect.location, cookies: finished.redirect.cookies)
            }
        }
        router.post("\(prefix)/logout") { request, context -> Response in
            var request = request
            return try await self.respond(logger: context.logger) {
                // An empty header is none: it hid the form's field.
                var token = request.headers[HTTPField.Name("X-CSRF-Token")!].flatMap { $0.isEmpty ? nil : $0 }
                // A body too large for a form holding one token (or one that
                // could not be read) carries no token: the sign-out is then
                // refused as any without one (401 without a session cookie,
                // 403 with a session; a cookie whose session ended is
                // cleared), not passed to the catch-all as the read's error
                // (a 503 logged as if the database were away).
                if token == nil, let body = try? await request.collectBody(upTo: 16 * 1024) {
                    let form = FormURLEncoding.decode(String(decoding: body.readableBytesView, as: UTF8.self)) ?? []
                    token = form.first { $0.0 == "csrf" }?.1
                }
                let signedOut = try await self.signOut(
                    cookie: Self.cookie(self.configuration.sessionCookie, of: request), csrfToken: token,
                    origin: request.headers[.origin])
                if let failure = signedOut.revocationFailure {
                    context.logger.warning(
                        "sign-out: the credential was removed here, but the grant was not revoked at the provider (\(failure)); it may stay valid there until it expires."
                    )
                }
                if let endSession = signedOut.endSession {
                    return Self.page(endSession.formHTML(), status: .ok, cookies: signedOut.redirect.cookies)
                }
                return Self.redirect(to: signedOut.redirect.location, cookies: signedOut.redirect.cookies)
            }
        }
    }

    /// The cookie `name` of `request`, read strictly
    /// (``AuthKitServer/WebSignIn/cookie(named:inCookieFields:)``): Hummingbird's own
    /// parser trims Unicode spaces from names, and took a planted
    /// `\u{2000}__Host-…` cookie for the prefixed one.
    static func cookie(_ name: String, of request: Request) -> String? {
        WebSignIn.cookie(named: name, inCookieFields: request.headers[values: .cookie])
    }

    /// The session of `request`, or `nil`: for an app's own routes
    /// (`/me`), with ``credentialSource(for:)`` for the user's credential.
    public func session(of request: Request) async throws -> WebSession? {
        try await session(cookie: Self.cookie(configuration.sessionCookie, of: request))
    }

    /// Runs a route, turning every refusal into the page that says it.
    ///
    /// A store's error is logged, and the page says only that the service
    /// is unavailable: its words name the database (`postgresql://host:port/db`),
    /// its refusal and key ids, which are for the operator, not for whoever
    /// opened the page. The app's own configuration (a setting missing or
    /// wrong, a descriptor, a misuse) is logged too, and the page says only
    /// that no one can sign in: it named the environment variable to set.
    /// What the provider answered is shown and logged as a warning: a
    /// sign-in failing for everyone (a clock that makes every ID token
    /// "not yet valid", a provider away) reached the operator otherwise
    /// only through its users.
    func respond(logger: Logger, _ body: () async throws -> Response) async throws -> Response {
        do {
            return try await body()
        } catch let error as AuthKitError {
            if case .webSignIn(let refusal) = error.reason {
                // The visitor's doing (a replayed callback, another browser).
                logger.debug("Sign-in route refused: \(error)")
                return Self.errorPage(refusal.shownToVisitor, status: refusal.status, home: sitePath("/"))
            }
            switch error.reason {
            case .store:
                logger.error("Sign-in route: \(error)")
                return Self.errorPage(
                    "This service is unavailable for a moment; try again shortly.", status: Self.status(of: error),
                    home: sitePath("/"))
            case .misuse, .missingSetting, .invalidSetting, .invalidFile, .unusableRedirectURI, .unknownProvider,
                .notSupported, .insecureTransport, .network(_, .transportUnavailable):
                logger.error("Sign-in route: \(error)")
                return Self.errorPage(
                    "This service cannot sign anyone in: see its log.", status: 500, home: sitePath("/"))
            case .redirect, .cancelled:
                logger.info("Sign-in route: \(error)")
            case .authorizationFailed(let response) where Self.isTheUsersChoice(response.code):
                logger.info("Sign-in route: \(error)")
            default:
                logger.warning("Sign-in route: \(error)")
            }
            if case .authorizationFailed(let response) = error.reason {
                return Self.errorPage(
                    Self.refusalText(code: response.code), status: Self.status(of: error), home: sitePath("/"))
            }
            // The callback's own parameters refused (an `iss` of another
            // issuer, one given twice): its words quote what the request
            // carried, which whoever sent the browser there chose.
            if case .redirect = error.reason {
                return Self.errorPage(
                    "The sign-in's answer could not be used; start the sign-in again. (This service's log says why.)",
                    status: Self.status(of: error), home: sitePath("/"))
            }
            // The rest (the provider unreachable, its answer refused) in
            // fixed words: the error's own name the token endpoint's URL (an
            // internal host), and quote what the provider answered.
            return Self.errorPage(Self.failureText(error), status: Self.status(of: error), home: sitePath("/"))
        } catch {
            // A store of the app's own throwing its own errors (the store
            // protocols are public), or a cancellation: logged, and the page
            // says only that the service is unavailable (it was Hummingbird's
            // bare 500, and the route's log said nothing).
            logger.error("Sign-in route: \(error)")
            return Self.errorPage(
                "This service is unavailable for a moment; try again shortly.", status: 503, home: sitePath("/"))
        }
    }

    /// What the page says of a provider's `error` on the callback: its
    /// code when it is a registered one, never its `error_description` or
    /// `error_uri` (those go to the log). Whoever learned a sign-in's
    /// `state` could send its browser to the callback with an error of
    /// their own, and the app's page showed their text (RFC 9700 §4.2
    /// names how a `state` leaks).
    static func refusalText(code: String) -> String {
        let said = registeredErrors.contains(code) ? "the provider answered \(code)" : "the provider refused it"
        return isTheUsersChoice(code)
            ? "The sign-in did not finish: \(said). Sign in again when you want to."
            : "The sign-in did not finish: \(said). Try again; if it goes on, this service's log says more."
    }

    /// What the page says when the sign-in failed between this service and
    /// the provider: the provider's error code when it is a registered one
    /// (RFC 6749 §5.2), else what kind of failure, never the error's words.
    package static func failureText(_ error: AuthKitError) -> String {
        switch error.reason {
        case .providerError(_, let response):
            let said =
                registeredTokenErrors.contains(response.code)
                ? "the provider answered \(response.code)" : "the provider refused it"
            return "The sign-in did not finish: \(said). Try again; if it goes on, this service's log says more."
        case .network, .responseTooLarge:
            return
                "The sign-in did not finish: the provider could not be reached. Try again shortly; this service's log says more."
        case .idTokenRejected(_, .keySetUnusable):
            // Its words name the key set's URL (an internal host, for a
            // provider of the organisation's own) and where it redirected.
            return
                "The sign-in did not finish: the provider's signing keys could not be read. Try again shortly; this service's log says more."
        case .idTokenRejected:
            // AuthKit's own words on which check failed (an audience, an
            // issuer it expected), the provider's values sanitized: what the
            // user or operator needs to hear, nothing the request chose.
            return error.description
        default:
            return
                "The sign-in did not finish: the provider's answer could not be used. Try again; if it goes on, this service's log says more."
        }
    }

    /// The token endpoint's `error` codes (RFC 6749 §5.2).
    static let registeredTokenErrors: Set<String> = [
        "invalid_request", "invalid_client", "invalid_grant", "unauthorized_client", "unsupported_grant_type",
        "invalid_scope",
    ]

    /// The `error` codes of RFC 6749 §4.1.2.1, OpenID Connect Core
    /// §3.1.2.6 and RFC 9101 §6.3 / RFC 9126 §2.3.
    static let registeredErrors: Set<String> = [
        "invalid_request", "unauthorized_client", "access_denied", "unsupported_response_type", "invalid_scope",
        "server_error", "temporarily_unavailable", "interaction_required", "login_required",
        "account_selection_required", "consent_required", "invalid_request_uri", "invalid_request_object",
        "request_not_supported", "request_uri_not_supported", "registration_not_supported",
    ]

    /// Whether a provider's `error` on the callback (RFC 6749 §4.1.2.1,
    /// OpenID Connect Core §3.1.2.6) is the user's doing: declining, or a
    /// sign-in or consent the user did not give. The rest (`server_error`,
    /// `invalid_scope`, `unauthorized_client`, …) is the provider's trouble
    /// or the app's configuration, failing for everyone: logged as a
    /// warning, and not answered as the user's refusal.
    static func isTheUsersChoice(_ code: String) -> Bool {
        ["access_denied", "login_required", "consent_required", "interaction_required", "account_selection_required"]
            .contains(code)
    }

    /// The status an AuthKit error is answered with.
    static func status(of error: AuthKitError) -> Int {
        switch error.reason {
        case .store: 503
        case .network(_, .transportUnavailable): 500
        case .authorizationFailed(let response) where isTheUsersChoice(response.code): 403
        case .authorizationFailed(let response) where response.code == "temporarily_unavailable": 503
        case .redirect: 400
        case .cancelled: 503
        default: 502
        }
    }

    static func redirect(to location: String, cookies: [HTTPField]) -> Response {
        var headers = HTTPFields()
        headers[.location] = location
        headers[.cacheControl] = "no-store"
        headers.append(contentsOf: cookies)
        return Response(status: .found, headers: headers)
    }

    /// A page; `script-src 'unsafe-inline'` and `form-action *` only
    /// where the end-session form needs them (its script posts it to the
    /// provider): an error page shows text from the request and the
    /// provider, escaped, and runs nothing should an escape ever be missed.
    static func page(
        _ html: String, status: HTTPResponse.Status, cookies: [HTTPField] = [], runsForm: Bool = true,
        referrerPolicy: String? = nil
    ) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "text/html; charset=utf-8"
        headers[.cacheControl] = "no-store"
        headers[.contentSecurityPolicy] =
            runsForm
            ? "default-src 'none'; script-src 'unsafe-inline'; form-action *; frame-ancestors 'none'"
            : "default-src 'none'; form-action 'none'; frame-ancestors 'none'"
        if let referrerPolicy { headers[HTTPField.Name("Referrer-Policy")!] = referrerPolicy }
        headers.append(contentsOf: cookies)
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: html)))
    }

    static func errorPage(_ message: String, status: Int, home: String) -> Response {
        page(
            """
            <!doctype html><html><head><meta charset="utf-8"><title>Sign-in</title></head>
            <body><p>\(HTMLEscaping.escape(message))</p><p><a href="\(HTMLEscaping.escape(home))">Back</a></p></body></html>
            """, status: HTTPResponse.Status(code: status), runsForm: false,
            // An error page may be shown at the callback's address, code and
            // state in its query: the link back must not carry them along.
            // (Not on the end-session page, whose cross-origin post would then
            // say `Origin: null`.)
            referrerPolicy: "no-referrer")
    }
}
