import AuthKit
import HTTPTypes

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Plays the user at a ``Sandbox``: opens the authorization URL, answers the
/// consent page (approve or deny, as an account), and brings back where the
/// sandbox redirected — over real HTTP, as a browser would.
///
/// As a ``UserAgent`` it returns the redirect without following it, so any
/// redirect URI works (a custom scheme, Instagram's `https://localhost`). As
/// a browser for the loopback listener (``browse(_:)``) it also follows the
/// redirect to the listener.
public struct SandboxUserAgent: UserAgent, AnsweringUserAgent {
    /// What the agent did, for a narrated sign-in (`authkit sandbox try`).
    package enum Step: Sendable, CustomStringConvertible {
        /// The authorization URL opened.
        case opened(URL)
        /// The consent page shown, and the answer given.
        case consented(approved: Bool, account: String)
        /// The sandbox redirected to this URL (it carries the code: show ``redirectForDisplay``).
        case redirected(URL)
        /// The sandbox showed an OAuth 1.0a PIN (out-of-band callback).
        case showedPIN

        package var description: String {
            switch self {
            case .opened(let url): "opened \(url.absoluteString)"
            case .consented(let approved, let account):
                "\(approved ? "approved" : "denied") on the consent page as \(account)"
            case .redirected(let url): "redirected to \(Self.masked(url))"
            case .showedPIN: "shown a PIN to type in"
            }
        }

        /// `url` with the values of `code`, `oauth_verifier` and `oauth_token` replaced by `***`.
        static func masked(_ url: URL) -> String {
            guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return "(a URL)" }
            components.queryItems = components.queryItems?.map { item in
                ["code", "oauth_verifier", "oauth_token", "denied"].contains(item.name)
                    ? URLQueryItem(name: item.name, value: "***") : item
            }
            return components.string ?? "(a URL)"
        }
    }

    /// Whether the consent page is approved (`true`) or denied, which
    /// redirects with `error=access_denied` (RFC 6749 §4.1.2.1).
    public var approves: Bool
    /// The account the consent page is answered as.
    public var account: String
    package var onStep: (@Sendable (Step) -> Void)?
    private let http: any HTTPClient

    public init(approves: Bool = true, account: String = "alice", httpClient: (any HTTPClient)? = nil) {
        self.approves = approves
        self.account = account
        self.http = httpClient ?? defaultHTTPClient()
    }

    /// An agent that reports each step, for the command line's narrated sign-in.
    package init(onStep: @escaping @Sendable (Step) -> Void) {
        self.init()
        self.onStep = onStep
    }

    /// The redirect the sandbox answered with. (An OAuth 1.0a client asks
    /// for the PIN of the out-of-band flow through the package's `answer(_:)`.)
    public func run(_ session: AuthorizationSession) async throws -> URL {
        try await redirect(of: session)
    }

    package func answer(_ session: AuthorizationSession) async throws -> UserAgentResult {
        let url = try await session.makeAuthorizationURL(session.redirectURI)
        switch try await answer(url) {
        case .redirect(let location):
            return .redirect(location)
        case .pin(let pin):
            return .verificationCode(pin)
        }
    }

    /// The browser's part in a sign-in your own code drives, as a web backend
    /// does: ``OAuth2Client/startAuthorization(redirectURI:scopes:additionalParameters:)``
    /// in one request, ``OAuth2Client/exchange(redirect:pending:label:)`` in
    /// the next. Opens `authorizationURL`, answers the consent page and
    /// returns where the sandbox redirected, without following it: `code` and
    /// `state`, or `error=access_denied` when it does not ``approves`` (RFC 6749
    /// §4.1.2). That URL is the request your callback handler would receive.
    ///
    /// Throws ``AuthKitError/Code/misuse`` when the
    /// sandbox shows an OAuth 1.0a PIN instead (an `oob` callback): there is
    /// no redirect to hand back.
    public func redirect(for authorizationURL: URL) async throws -> URL {
        switch try await answer(authorizationURL) {
        case .redirect(let location):
            return location
        case .pin:
            throw AuthKitError.misuse(
                .userAgentBrokeProtocol(
                    "the sandbox showed a PIN (an out-of-band OAuth 1.0a sign-in), not a redirect; use the agent as a UserAgent to read the PIN"
                ))
        }
    }

    /// A browser for `LoopbackUserAgent` (`browser: agent.browse`): answers the
    /// consent page and follows the redirect to the loopback listener.
    public func browse(_ url: URL) async throws {
        // A PIN page (an out-of-band sign-in) is an error here, not a quiet
        // return: the listener would wait for a redirect that never comes.
        let location = try await redirect(for: url)
        guard location.scheme == "http", location.isLoopback else {
            throw AuthKitError.misuse(
                .userAgentBrokeProtocol(
                    "the sandbox redirected to \(location.redactedForLogs), which is not a loopback listener"))
        }
        _ = try await fetch(location)
    }

    private enum Answer {
        case redirect(URL)
        case pin(String)
    }

    private func answer(_ url: URL) async throws -> Answer {
        onStep?(.opened(url))
        var (status, location, page) = try await fetch(url)
        if status == 200, let request = Self.hiddenValue("request", in: page) {
            onStep?(.consented(approved: approves, account: account))
            // The page's approval value goes back with the answer, as a browser's form sends it.
            let form = FormURLEncoding.encode([
                ("request", request), ("approval", Self.hiddenValue("approval", in: page) ?? ""),
                ("account", account), ("decision", approves ? "approve" : "deny"),
            ])
            let consent = URL(string: "/consent", relativeTo: url)!.absoluteURL
            (status, location, page) = try await fetch(consent, form: form)
        }
        if status == 302, let location, let target = URL(string: location, relativeTo: url)?.absoluteURL {
            onStep?(.redirected(target))
            return .redirect(target)
        }
        if status == 200, let pin = Self.element(id: "pin", in: page) {
            onStep?(.showedPIN)
            return .pin(pin)
        }
        if status == 200, !approves {
            // An out-of-band sign-in the user declined: no redirect to carry access_denied.
            throw AuthKitError.authorizationFailed(
                ProviderErrorResponse(status: 200, code: "access_denied", description: "the user denied the request"))
        }
        // The page's own words, when it has them; the status alone is said
        // by the response's summary (`[HTTP 404]`), not twice.
        let message = Self.element(className: "error", in: page)
        throw AuthKitError.authorizationFailed(
            ProviderErrorResponse(status: status, code: "invalid_request", description: message))
    }

    private func fetch(_ url: URL, form: String? = nil) async throws -> (Int, String?, String) {
        var request = HTTPRequest(method: form == nil ? .get : .post, url: url)
        if form != nil { request.headerFields[.contentType] = "application/x-www-form-urlencoded" }
        let (response, body) = try await http.send(request, body: form.map { Data($0.utf8) })
        var data = Data()
        for try await chunk in body {
            data.append(chunk)
            if data.count > 1 << 20 {
                body.cancel()
                break
            }
        }
        return (response.status.code, response.headerFields[.location], String(decoding: data, as: UTF8.self))
    }

    static func hiddenValue(_ name: String, in page: String) -> String? {
        guard let range = page.firstRange(of: "name=\"\(name)\" value=\"") else { return nil }
        return unescape(String(page[range.upperBound...].prefix { $0 != "\"" }))
    }

    static func element(id: String, in page: String) -> String? { text(after: "id=\"\(id)\">", in: page) }
    static func element(className: String, in page: String) -> String? {
        text(after: "class=\"\(className)\">", in: page)
    }

    private static func text(after marker: String, in page: String) -> String? {
        guard let range = page.firstRange(of: marker) else { return nil }
        return unescape(String(page[range.upperBound...].prefix { $0 != "<" }))
    }

    private static func unescape(_ text: String) -> String {
        text.replacing("&lt;", with: "<").replacing("&gt;", with: ">")
            .replacing("&quot;", with: "\"").replacing("&#39;", with: "'")
            .replacing("&amp;", with: "&")
    }
}
