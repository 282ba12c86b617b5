#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Providers' key sets, fetched once per process and kept: every ID token
/// verified against one `jwks_uri` uses the same copy, until a token names a
/// key it lacks (the provider rotated its keys, OpenID Connect Core §10.1.1)
/// or the copy is older than ``maximumAge``.
///
/// - **One fetch at a time per set.** Callers that find a fetch under way
///   await it rather than start their own: twenty sign-ins at once on an
///   empty cache, or twenty tokens naming an unknown key, make one request.
/// - **At most one fetch per ``minimumRefetchInterval`` a token can cause**,
///   counted from the last attempt, failed ones included, so that tokens
///   naming made-up key ids cannot make AuthKit fetch the set over and over,
///   nor a set that answers 500 be asked once per token. A first fetch that
///   failed is not retried for ``failureHold``; its error is given again.
/// - **A kept copy ages out** after ``maximumAge`` (10 minutes, as jose's
///   remote key sets): a key the provider withdrew (a compromise, RFC 7517
///   §5) stops verifying within that time in a long-running server (and
///   the one fetch it takes), not at its restart. `Cache-Control` is not
///   read: a provider's long `max-age` would keep a withdrawn key longer.
///   A copy aged only just, or whose last fetch failed, serves while it
///   is fetched again (``servableWhileFetched(_:now:)``): callers waited
///   for that fetch, up to its 30 s deadline when the endpoint hung, every
///   sign-in and refresh of every user, each time the copy aged. When the
///   fetch fails, the aged copy serves until the next attempt may be made:
///   a key set endpoint that is briefly down does not stop every sign-in.
///   A token naming a key the copy lacks still waits for the fetch. But not
///   beyond ``staleLimit`` (an hour) from its fetch: a set that cannot be
///   fetched for longer (the endpoint down, or kept from AuthKit by someone
///   who holds a withdrawn key) fails the verification, as a first fetch
///   that failed does, rather than trust that key for ever.
/// - **Kept per transport type and URL**: a client given a transport of
///   another type (a test double, a proxy with its own trust) neither
///   fills nor reads the copy a client of the platform's transport uses;
///   two instances of one type share it.
/// - **At most ``maximumSets`` sets**, the least recently used let go
///   first (never one being fetched): the URL may hold a placeholder
///   (Microsoft's tenant) or come from discovery, and a server building
///   clients for issuers or tenants its users name kept every set for ever.
///
/// Fetches follow the token endpoint's policy (no redirects, a deadline)
/// with a smaller size cap.
package actor KeySetCache {
    package static let shared = KeySetCache()

    /// The cache ID tokens are verified with: ``shared``, unless a task puts
    /// another in place (`$inUse.withValue`), as a test that changes the
    /// limits does, so that no other test runs under them.
    @TaskLocal package static var inUse = shared

    /// How soon a set may be fetched again on a token's request, counted
    /// from the last attempt.
    package var minimumRefetchInterval: TimeInterval = 30
    /// How long a kept copy is used without being fetched again.
    package var maximumAge: TimeInterval = 600
    /// The oldest a kept copy may be and still serve while fetches fail.
    package var staleLimit: TimeInterval = 3600

    /// How many sets are kept (each at most ``JSONWebKeySet/maximumSize``).
    package let maximumSets: Int

    /// How long a failed first fetch is answered with its error.
    var failureHold: TimeInterval { min(5, minimumRefetchInterval) }

    private struct Entry {
        var keys: JSONWebKeySet?
        var fetchedAt: Date?
        var attemptedAt: Date
        var failure: (any Error)?
        var inFlight: Fetch?
        /// When it was last asked for, in ``KeySetCache/uses``.
        var lastUse: UInt64 = 0
    }

    private var entries: [String: Entry] = [:]
    /// Counts the calls, for the order in which sets were last used (not a
    /// clock, which may step).
    private var uses: UInt64 = 0

    package init(
        minimumRefetchInterval: TimeInterval = 30, maximumAge: TimeInterval = 600, staleLimit: TimeInterval = 3600,
        maximumSets: Int = 256
    ) {
        self.minimumRefetchInterval = minimumRefetchInterval
        self.maximumAge = maximumAge
        self.staleLimit = staleLimit
        self.maximumSets = max(1, maximumSets)
    }

    /// The key set at `url`: the kept copy, or a fetched one when there is
    /// none, when it has aged out, or when `refetch` asks (and the last
    /// attempt is old enough).
    package func keys(at url: URL, refetch: Bool, transport: FlowTransport, now: Date = Date()) async throws
        -> JSONWebKeySet
    {
        let key = Self.entryKey(url, transport)
        uses += 1
        entries[key]?.lastUse = uses
        if let fetch = entries[key]?.inFlight {
            if !refetch, let kept = servableWhileFetched(entries[key], now: now) { return kept }
            return try await outcome(of: fetch, key: key, refetch: refetch, now: now)
        }
        if let entry = entries[key] {
            let sinceAttempt = Self.elapsed(since: entry.attemptedAt, now: now)
            if let keys = entry.keys, let fetchedAt = entry.fetchedAt {
                let age = Self.elapsed(since: fetchedAt, now: now)
                let wanted = (refetch || age >= maximumAge) && sinceAttempt >= minimumRefetchInterval
                if !wanted {
                    // Aged past the limit with the last attempt failed: not trusted.
                    if age >= staleLimit, let failure = entry.failure { throw failure }
                    return keys
                }
            } else if let failure = entry.failure, sinceAttempt < failureHold {
                throw failure
            }
        }
        // Shared by every caller that comes meanwhile: it runs on the fetch's
        // own deadline, not on the first caller's (a scope it was in, a
        // `send`'s), which a plain task would have inherited, failing the
        // fetch for all;
        // nor in a refresh's task (``DedicatedTask``): its deadline would
        // cancel the refresh, not stop the fetch.
        let fetch = Fetch()
        Task {
            let keys: Result<JSONWebKeySet, any Error>
            do {
                keys = .success(
                    try await DeadlineScope.$current.withValue(nil) {
                        try await DedicatedTask.$current.withValue(DedicatedTask?.none) {
                            try await Self.fetch(url, transport: transport)
                        }
                    })
            } catch {
                keys = .failure(error)
            }
            self.record(keys, of: fetch, for: key, at: now)
        }
        if entries[key] == nil { letGoOfTheLeastRecentlyUsed() }
        var entry = entries[key] ?? Entry(attemptedAt: now, lastUse: uses)
        entry.attemptedAt = now
        entry.inFlight = fetch
        entries[key] = entry
        // An aged copy serves while it is fetched again.
        if !refetch, let kept = servableWhileFetched(entry, now: now) { return kept }
        return try await outcome(of: fetch, key: key, refetch: refetch, now: now)
    }

    /// The kept copy, for a caller that need not wait for its refetch: one
    /// aged only just (by less than ``minimumRefetchInterval`` past
    /// ``maximumAge``: a busy server's verifications, which waited for every
    /// refetch, each time the copy aged), or one whose last fetch failed
    /// (younger than ``staleLimit``: it serves until the next attempt
    /// anyway). A copy an idle server kept for most of an hour is not taken
    /// on trust: the caller waits for the fresh set, so a withdrawn key
    /// stops verifying within ``maximumAge`` and one fetch.
    private func servableWhileFetched(_ entry: Entry?, now: Date) -> JSONWebKeySet? {
        guard let entry, let keys = entry.keys, let fetchedAt = entry.fetchedAt else { return nil }
        let age = Self.elapsed(since: fetchedAt, now: now)
        guard age < staleLimit, age < maximumAge + minimumRefetchInterval || entry.failure != nil else { return nil }
        return keys
    }

    /// Keeps what a fetch brought (or its failure, beside any aged copy),
    /// then hands it to the callers waiting: the cache learns it whether or
    /// not the caller that started the fetch is still there.
    private func record(_ keys: Result<JSONWebKeySet, any Error>, of fetch: Fetch, for key: String, at now: Date) {
        switch keys {
        case .success(let keys):
            entries[key] = Entry(keys: keys, fetchedAt: now, attemptedAt: now, lastUse: entries[key]?.lastUse ?? uses)
        case .failure(let error) where entries[key]?.inFlight === fetch:
            entries[key]?.inFlight = nil
            entries[key]?.failure = error
        case .failure:
            break // forgotten meanwhile (``removeAll()``)
        }
        fetch.end(with: keys)
    }

    /// Makes room for one more set: the one used least recently goes, unless
    /// every set is being fetched (then the cache holds one more for a while).
    private func letGoOfTheLeastRecentlyUsed() {
        guard entries.count >= maximumSets else { return }
        let idle = entries.filter { $0.value.inFlight == nil }
        if let oldest = idle.min(by: { $0.value.lastUse < $1.value.lastUse })?.key { entries[oldest] = nil }
    }

    /// One set per URL and per kind of transport.
    private static func entryKey(_ url: URL, _ transport: FlowTransport) -> String {
        String(reflecting: type(of: transport.http)) + "\u{0}" + url.absoluteString
    }

    /// Callers waiting for the fetch of `url` under way: for a test to know
    /// they are all there before it lets the fetch end.
    package func waitingCallers(at url: URL, transport: FlowTransport) -> Int {
        entries[Self.entryKey(url, transport)]?.inFlight?.waiting ?? 0
    }

    /// What a caller gets of a fetch under way: its keys, or, when it
    /// failed, the aged copy for a caller that only needs a copy (a refetch
    /// for an unknown key fails as the fetch did). A cancelled caller stops
    /// waiting (``AuthKitError/Code/cancelled``); the fetch goes on.
    private func outcome(of fetch: Fetch, key: String, refetch: Bool, now: Date) async throws -> JSONWebKeySet {
        do {
            return try await fetch.value()
        } catch {
            if !refetch, !Task.isCancelled, let kept = entries[key]?.keys, let fetchedAt = entries[key]?.fetchedAt,
                Self.elapsed(since: fetchedAt, now: now) < staleLimit
            {
                return kept
            }
            throw error
        }
    }

    /// A fetch under way, shared by the callers that find it. Each waits
    /// until it ends or the caller is cancelled (a sign-in the user gave
    /// up, a request handler that went away), which ends only that
    /// caller's wait: the fetch goes on for the others and for the cache.
    /// Awaiting the fetch's task held a cancelled caller for as long as the
    /// set took to come (up to the request's 30 s).
    private typealias Fetch = SharedOutcome<JSONWebKeySet>

    /// The time since `since`; a clock stepped back past it (an NTP
    /// correction of a clock that ran fast) makes it unknown, taken as long:
    /// negative, no refetch was ever due, and for as long as the step a
    /// rotated key failed every sign-in while a withdrawn one still verified.
    /// A few seconds back is no step: callers' `now` is taken before they
    /// reach this actor, and one that waited may see a fetch newer than it.
    static func elapsed(since: Date, now: Date) -> TimeInterval {
        let interval = now.timeIntervalSince(since)
        if interval >= 0 { return interval }
        return interval > -60 ? 0 : .infinity
    }

    /// Forgets the kept sets whose URL begins with `prefix`: a test's
    /// server's, whose port an earlier test's server may have had (the
    /// process shares one cache; emptying it all changed other tests' counts).
    package func removeAll(under prefix: String) {
        entries = entries.filter { key, _ in
            !(key.split(separator: "\u{0}", maxSplits: 1).last ?? "").hasPrefix(prefix)
        }
    }

    static func fetch(_ url: URL, transport: FlowTransport) async throws -> JSONWebKeySet {
        var policy = RequestPolicy.tokenEndpoint
        policy.maximumBodySize = JSONWebKeySet.maximumSize
        var request = OutgoingRequest(method: .get, url: url)
        request.head.headerFields[.accept] = "application/json, application/jwk-set+json"
        let response: IncomingResponse
        do {
            response = try await transport.send(request, step: .keySet, policy: policy)
        } catch let error as AuthKitError {
            switch error.reason {
            case .redirectNotFollowed(_, let status, let location):
                throw AuthKitError.IDTokenProblem.keySetUnusable(
                    "\(url.redactedForLogs) answered \(status), a redirect to \(location), which is not followed")
            case .responseTooLarge(_, let limit):
                throw AuthKitError.IDTokenProblem.keySetUnusable(
                    "\(url.redactedForLogs) sent more than \(limit / 1024) KiB, more than any key set")
            default:
                throw error
            }
        }
        guard response.status == 200 else {
            throw AuthKitError.IDTokenProblem.keySetUnusable("\(url.redactedForLogs) answered \(response.status)")
        }
        return try JSONWebKeySet.parse(response.body)
    }
}
