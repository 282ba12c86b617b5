import AuthKit
import NIOHTTP1

/// A page the listener sends back to the browser: status, headers and a small
/// self-contained HTML body.
///
/// Every page carries the same headers, whatever it says:
/// - `Referrer-Policy: no-referrer`: the page's URL holds the authorization
///   code, which must not leak to anything the page links to (RFC 9700 §4.2,
///   "Credential Leakage via Referer Headers");
/// - a `Content-Security-Policy` that allows nothing but inline style, so the
///   page loads no third-party resource and runs no script;
/// - `Cache-Control: no-store`, so the code is not kept in the browser's cache;
/// - `Connection: close`: one request per connection, then the socket closes.
///
/// No page is ever a redirect: the listener never forwards the browser to a URL
/// taken from the request (no open redirector, RFC 9700 §4.11.1).
struct LoopbackPage: Sendable {
    var status: HTTPResponseStatus
    var title: String
    var message: String
    /// Extra headers for this page (`Allow` on a 405).
    var extraHeaders: [(String, String)] = []

    static let contentSecurityPolicy =
        "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

    /// The genuine answer with a code: the user is done with the browser.
    /// It goes before the code is exchanged, so it does not say the sign-in
    /// worked (an exchange can still fail: `invalid_grant`, the network, the
    /// ID token's checks); the application says that.
    static func signedIn(provider: String) -> LoopbackPage {
        LoopbackPage(
            status: .ok, title: "\(provider) answered",
            message:
                "\(provider) answered. You can close this tab and return to the application, which finishes signing in and says whether it worked."
        )
    }

    /// The genuine answer with `error` (RFC 6749 §4.1.2.1): shown as the
    /// provider's error, not as a success and not as "no code".
    static func providerError(provider: String, code: String, description: String?) -> LoopbackPage {
        var message = "\(provider) did not grant access: \(code)"
        if let description, !description.isEmpty { message += " — \(description)" }
        message += ". You can close this tab."
        return LoopbackPage(status: .ok, title: "Sign-in to \(provider) failed", message: message)
    }

    /// A request that is not this attempt's answer; the listener keeps waiting.
    static func notFound() -> LoopbackPage {
        LoopbackPage(
            status: .notFound, title: "Not found",
            message: "Nothing is served here. This address only receives the sign-in redirect.")
    }

    static func rejected(reason: String) -> LoopbackPage {
        LoopbackPage(
            status: .badRequest, title: "Not the expected sign-in answer",
            message: "This request does not answer the sign-in this application is waiting for: \(reason) "
                + "If you started the sign-in again, finish it in its own tab.")
    }

    static func badRequest() -> LoopbackPage {
        LoopbackPage(status: .badRequest, title: "Bad request", message: "The request could not be read.")
    }

    /// A request for another host name than this machine's (a page that
    /// reached the listener by a name resolving to 127.0.0.1: DNS rebinding).
    static func misdirected() -> LoopbackPage {
        LoopbackPage(
            status: .misdirectedRequest, title: "Misdirected request",
            message: "This address answers only requests to this machine (127.0.0.1, [::1] or localhost).")
    }

    static func methodNotAllowed() -> LoopbackPage {
        LoopbackPage(
            status: .methodNotAllowed, title: "Method not allowed",
            message: "Only GET is served here.", extraHeaders: [("Allow", "GET, HEAD")])
    }

    static func headTooLarge() -> LoopbackPage {
        LoopbackPage(
            status: .requestHeaderFieldsTooLarge, title: "Request too large",
            message: "The request's headers are larger than this listener accepts.")
    }

    var html: String {
        """
        <!DOCTYPE html>
        <html lang="en"><head><meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>\(Self.escape(title))</title>
        <style>body{font-family:system-ui,sans-serif;max-width:36em;margin:4em auto;padding:0 1em;line-height:1.5}</style>
        </head><body><h1>\(Self.escape(title))</h1><p>\(Self.escape(message))</p></body></html>

        """
    }

    /// The response head for a body of `bodyLength` bytes.
    func head(version: HTTPVersion, bodyLength: Int) -> HTTPResponseHead {
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: "text/html; charset=utf-8")
        headers.add(name: "Content-Length", value: String(bodyLength))
        headers.add(name: "Cache-Control", value: "no-store")
        headers.add(name: "Pragma", value: "no-cache")
        headers.add(name: "Referrer-Policy", value: "no-referrer")
        headers.add(name: "Content-Security-Policy", value: Self.contentSecurityPolicy)
        headers.add(name: "X-Content-Type-Options", value: "nosniff")
        headers.add(name: "X-Frame-Options", value: "DENY")
        headers.add(name: "Connection", value: "close")
        for (name, value) in extraHeaders { headers.add(name: name, value: value) }
        return HTTPResponseHead(version: version, status: status, headers: headers)
    }

    /// Escapes text for HTML element content and attribute values: everything
    /// shown on a page comes from the request or the provider.
    static func escape(_ text: String) -> String { HTMLEscaping.escape(text) }
}
