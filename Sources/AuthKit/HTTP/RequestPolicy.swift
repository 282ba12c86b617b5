import Foundation

/// The rules a request that carries a credential is sent under: whether a
/// redirect is followed, how much of the answer is read, and for how long.
///
/// One policy applies to every transport (``HTTPClient`` implementations never
/// follow redirects and stream the body), so these rules hold whatever HTTP
/// stack an app plugs in:
/// - **Token-endpoint calls** (code exchange, follow-up, refresh, revocation,
///   OAuth 1.0a request and access token) never follow a redirect: a 3xx is
///   `AuthKitError.redirectNotFollowed`. Following would resend the client
///   secret, the code or a token to wherever the server points.
/// - **Resource requests** may follow redirects; the credential goes only to
///   the origin it was meant for (RFC 9110 §15.4: "a user agent … SHOULD NOT
///   send" credentials to another origin; curl, Go's net/http and requests
///   behave so), and never from https to http.
/// - A credential goes over plain http only to a loopback host (RFC 6749
///   §2.3.1, RFC 6750 §5.3: TLS is required).
/// - The body is refused past `maximumBodySize` bytes while it arrives, after
///   decompression, and the whole request must finish within `deadline`.
package struct RequestPolicy: Sendable, Hashable {
    package enum Redirects: Sendable, Hashable {
        /// A 3xx is an error (`AuthKitError.redirectNotFollowed`).
        case refuse
        /// A 3xx is the answer, handed back unfollowed (curl without `-L`).
        case deliver
        /// Followed up to `maximum` times, under the origin rule.
        case follow(maximum: Int)
    }

    package var redirects: Redirects
    package var maximumBodySize: Int
    package var deadline: Duration

    package init(redirects: Redirects, maximumBodySize: Int, deadline: Duration) {
        self.redirects = redirects
        self.maximumBodySize = maximumBodySize
        self.deadline = deadline
    }

    /// A token answer is a few hundred bytes; 1 MiB and 30 s are generous.
    package static let tokenEndpoint = RequestPolicy(redirects: .refuse, maximumBodySize: 1 << 20, deadline: .seconds(30))
}

/// Runs `operation`, failing with a network error naming `display` when it
/// has not finished after `duration` (a server that drips one byte a second
/// would otherwise hold the caller for ever: the transport's timeout only
/// measures silence).
package func withDeadline<Result: Sendable>(
    _ duration: Duration, display: String, _ operation: @escaping @Sendable () async throws -> Result
) async throws -> Result {
    try await withThrowingTaskGroup(of: Result.self) { group in
        group.addTask { try await operation() }
        group.addTask {
            try await Task.sleep(for: duration)
            throw AuthKitError.network(url: display, reason: "no complete answer within \(duration.seconds) s")
        }
        defer { group.cancelAll() }
        guard let first = try await group.next() else { throw CancellationError() }
        return first
    }
}

extension Duration {
    /// Whole seconds, for messages.
    var seconds: Int64 { components.seconds }
}
