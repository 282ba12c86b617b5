#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Providers' key sets, fetched once per process and kept: every ID token
/// verified against one `jwks_uri` uses the same copy, until a token names a
/// key it lacks (the provider rotated its keys, OpenID Connect Core §10.1.1).
///
/// A fresh copy is fetched at most once per ``minimumRefetchInterval`` per
/// set, so that tokens naming made-up key ids cannot make AuthKit fetch the
/// set over and over. Fetches follow the token endpoint's policy (no
/// redirects, a deadline) with a smaller size cap.
package actor KeySetCache {
    package static let shared = KeySetCache()

    /// How soon a set may be fetched again on a token's request.
    package var minimumRefetchInterval: TimeInterval = 30

    private struct Entry {
        var keys: JSONWebKeySet
        var fetchedAt: Date
    }

    private var entries: [String: Entry] = [:]

    package init(minimumRefetchInterval: TimeInterval = 30) {
        self.minimumRefetchInterval = minimumRefetchInterval
    }

    /// The key set at `url`: the kept copy, or a fetched one when there is
    /// none or `refetch` asks (and the kept copy is old enough).
    package func keys(at url: URL, refetch: Bool, transport: FlowTransport, now: Date = Date()) async throws
        -> JSONWebKeySet
    {
        let key = url.absoluteString
        if let entry = entries[key], !refetch || now.timeIntervalSince(entry.fetchedAt) < minimumRefetchInterval {
            return entry.keys
        }
        let keys = try await Self.fetch(url, transport: transport)
        entries[key] = Entry(keys: keys, fetchedAt: now)
        return keys
    }

    /// Sets ``minimumRefetchInterval`` (tests that rotate keys at once).
    package func setMinimumRefetchInterval(_ interval: TimeInterval) {
        minimumRefetchInterval = interval
    }

    /// Forgets every kept set (tests; a process that knows keys changed).
    package func removeAll() {
        entries = [:]
    }

    static func fetch(_ url: URL, transport: FlowTransport) async throws -> JSONWebKeySet {
        var policy = RequestPolicy.tokenEndpoint
        policy.maximumBodySize = JSONWebKeySet.maximumSize
        var request = OutgoingRequest(method: .get, url: url)
        request.head.headerFields[.accept] = "application/json, application/jwk-set+json"
        let response: IncomingResponse
        do {
            response = try await transport.send(request, step: .keySet, policy: policy)
        } catch AuthKitError.redirectNotFollowed(_, let status, let location) {
            throw AuthKitError.IDTokenProblem.keySetUnusable(
                "\(url.redactedForLogs) answered \(status), a redirect to \(location), which is not followed")
        } catch AuthKitError.responseTooLarge(_, let limit) {
            throw AuthKitError.IDTokenProblem.keySetUnusable(
                "\(url.redactedForLogs) sent more than \(limit / 1024) KiB, more than any key set")
        }
        guard response.status == 200 else {
            throw AuthKitError.IDTokenProblem.keySetUnusable("\(url.redactedForLogs) answered \(response.status)")
        }
        return try JSONWebKeySet.parse(response.body)
    }
}
