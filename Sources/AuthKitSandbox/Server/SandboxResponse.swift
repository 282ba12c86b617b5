import AuthKit

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What the emulation answers, and the event it reports.
package struct SandboxResponse: Sendable {
    package var status: Int
    package var headers: [(String, String)]
    package var body: Data
    /// What happened, without secrets (``SandboxEvent/summary``).
    var summary: String
    var step: String

    static func json(
        _ value: JSONValue, status: Int = 200, step: String, summary: String, headers: [(String, String)] = []
    ) -> SandboxResponse {
        SandboxResponse(
            status: status, headers: [("Content-Type", "application/json"), ("Cache-Control", "no-store")] + headers,
            body: value.sandboxEncoded(), summary: summary, step: step)
    }

    static func form(_ pairs: [(String, String)], status: Int = 200, step: String, summary: String) -> SandboxResponse {
        SandboxResponse(
            status: status,
            headers: [("Content-Type", "application/x-www-form-urlencoded"), ("Cache-Control", "no-store")],
            body: FormURLEncoding.encodedBody(pairs), summary: summary, step: step)
    }

    /// - Parameter redirectsTo: where the page's form may end after the
    ///   sandbox's own redirect (the consent page's answer goes to the client's
    ///   redirect URI): browsers hold a redirect after a form post to
    ///   `form-action` too (CSP 3 §6.4.2), so its origin is listed.
    static func html(
        _ page: String, status: Int = 200, step: String, summary: String, redirectsTo: String? = nil
    ) -> SandboxResponse {
        let target = redirectsTo.flatMap { URL(string: $0) }.flatMap { url -> String? in
            guard let scheme = url.scheme, ["http", "https"].contains(scheme), let host = url.host else { return nil }
            let bracketed = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
            return " \(scheme)://\(bracketed)" + (url.port.map { ":\($0)" } ?? "")
        }
        return SandboxResponse(
            status: status,
            headers: [
                ("Content-Type", "text/html; charset=utf-8"), ("Cache-Control", "no-store"),
                (
                    "Content-Security-Policy",
                    "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'\(target ?? ""); frame-ancestors 'none'"
                ),
                ("X-Frame-Options", "DENY"),
            ],
            body: Data(page.utf8), summary: summary, step: step)
    }

    /// 302 to `location` (RFC 6749 §4.1.2).
    static func redirect(_ location: String, step: String, summary: String) -> SandboxResponse {
        SandboxResponse(
            status: 302, headers: [("Location", location), ("Cache-Control", "no-store")], body: Data(),
            summary: summary, step: step)
    }

    static func empty(status: Int, step: String, summary: String) -> SandboxResponse {
        SandboxResponse(status: status, headers: [], body: Data(), summary: summary, step: step)
    }
}

extension JSONValue {
    /// Compact JSON with sorted keys, so deterministic runs give identical bytes.
    func sandboxEncoded() -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(self)) ?? Data("{}".utf8)
    }
}
