#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Merges concurrent refreshes of one credential into one request.
///
/// Many providers rotate refresh tokens (RFC 9700 §4.14.2): the first refresh
/// invalidates the old refresh token, so a second concurrent refresh with the
/// same token would fail, or worse, be taken as token theft and revoke the whole
/// grant. Callers that ask while a refresh is in flight get its result.
///
/// The refresh runs in a task of its own (a flight), which every caller
/// waits for; a cancelled caller stops waiting, and the flight goes on, even
/// when every caller has gone: its request may already have been answered,
/// the old refresh token spent, and only this flight holds the new one. Run
/// in the first caller's task, or cancelled once nobody waited, it was
/// stopped there, and the next caller sent the spent token again. A flight
/// is forgotten once it has ended; a caller that comes meanwhile waits for
/// it, and if it ended cancelled (its request's deadline), refreshes anew.
///
/// An answer nobody took (every caller had gone) that rotated the refresh
/// token is remembered for two minutes: the next caller with the spent
/// token (the one cancelled, trying again) gets it instead of sending that
/// token a second time (RFC 9700 §4.14.2). Not an answer a caller took (it
/// is that caller's to save; handed to another, it skipped the checks a
/// refresh of that caller's credential makes), nor one that kept the
/// refresh token (sending it again is harmless), nor a failure. A
/// revocation of the credential forgets it (``forgetAnswers(holding:)``).
///
/// One coordinator serves the whole process (``shared``, which
/// ``OAuth2Client`` uses), keyed by what identifies the grant: the token
/// endpoint and client it was issued to, the account, and the refresh
/// token. One per client merged only that client's refreshes: two clients
/// built from the same descriptor and settings (a web backend's handlers,
/// an app's two views) refreshing one credential at once sent its rotating
/// refresh token twice, and the provider's reuse detection then revoked the
/// grant (RFC 9700 §4.14.2).
final class RefreshCoordinator: @unchecked Sendable {
    /// The process's coordinator.
    static let shared = RefreshCoordinator()

    init(remembering remembered: Duration = .seconds(120)) {
        self.remembered = remembered
    }

    /// Guards `inFlight` and `lately` (each flight's outcome guards its own callers).
    private let lock = ThreadLock()
    private var inFlight: [Key: Flight] = [:]
    /// Rotated answers of flights that ended with nobody to take them, by
    /// the key of the refresh token they spent, each until its instant.
    private var lately: [Key: (credential: Credential, until: ContinuousClock.Instant)] = [:]

    /// How long an abandoned rotated answer is handed to a caller with the
    /// spent token: long enough for the cancelled caller to try again;
    /// shorter than any access token's life.
    private let remembered: Duration
    /// At most this many remembered answers (a backend refreshing many
    /// accounts): the oldest go first.
    static let rememberedAtMost = 1024

    /// What a refresh is merged by: the token endpoint (as the client
    /// resolved it) and the client id it was issued for, the account, and
    /// the refresh token (or, with none, the access token a client
    /// credentials grant renews). A refresh of an already-rotated token is
    /// a different request and is not merged with a stale one; nor is one
    /// of another client's grant, or another server's, that happens to hold
    /// the same account name and token. The fields themselves, not a string
    /// joined from them (joining allocated at every refresh), hashed once:
    /// a refresh looks its key up, stores and removes it, and each hashed
    /// the endpoint and the token again.
    struct Key: Hashable, Sendable {
        let tokenEndpoint: String
        let clientID: String
        let providerID: String
        let label: String?
        let token: String
        private let hash: Int

        init(tokenEndpoint: String, clientID: String, providerID: String, label: String?, token: String) {
            (self.tokenEndpoint, self.clientID, self.providerID) = (tokenEndpoint, clientID, providerID)
            (self.label, self.token) = (label, token)
            var hasher = Hasher()
            hasher.combine(tokenEndpoint)
            hasher.combine(clientID)
            hasher.combine(providerID)
            hasher.combine(label)
            hasher.combine(token)
            hash = hasher.finalize()
        }

        func hash(into hasher: inout Hasher) { hasher.combine(hash) }

        /// Byte for byte, as the project compares identifiers (a client id,
        /// an endpoint): Swift's `==` took `é` and `e` + U+0301 for one, and
        /// would have merged the refreshes of two tokens so written.
        /// (`hash` is String's, which such pairs share: a coarser hash is
        /// still a hash for this equality.)
        static func == (a: Key, b: Key) -> Bool {
            a.hash == b.hash && ExactText.same(a.token, b.token) && ExactText.same(a.tokenEndpoint, b.tokenEndpoint)
                && ExactText.same(a.clientID, b.clientID) && ExactText.same(a.providerID, b.providerID)
                && ExactText.same(a.label ?? "", b.label ?? "") && (a.label == nil) == (b.label == nil)
        }
    }

    static func key(for credential: Credential, tokenEndpoint: String, clientID: String) -> Key {
        Key(
            tokenEndpoint: tokenEndpoint, clientID: clientID, providerID: credential.providerID,
            label: credential.label, token: credential.refreshToken ?? credential.accessToken)
    }

    /// Refreshes `credential` with `operation`, or joins the refresh of it
    /// under way.
    ///
    /// This, the flight and the token call under it are
    /// `nonisolated(nonsending)` (SE-0461): each runs where its caller runs,
    /// which is Swift's pool, as every public AuthKit call is nonisolated
    /// and concurrent. A nonisolated async function of the old kind hopped
    /// to the pool at its start and after each call it awaited, even from
    /// the pool: thirty hops a refresh, each taking the task's status lock
    /// (``joinOrStart``'s immediate task), now eleven; the library's
    /// refreshes 8% faster (docs/performance.md). Only internal and package
    /// functions are so marked: public ones, and the types of the closures
    /// a caller passes, are unchanged.
    nonisolated(nonsending) func refresh(
        _ credential: Credential, tokenEndpoint: String = "", clientID: String = "",
        using operation: nonisolated(nonsending) @escaping @Sendable () async throws -> Credential
    ) async throws -> Credential {
        // A caller cancelled already starts nothing: it would send the
        // refresh token for an answer nobody waits for.
        if Task.isCancelled { throw AuthKitError.cancelled }
        let key = Self.key(for: credential, tokenEndpoint: tokenEndpoint, clientID: clientID)
        while true {
            let (result, led) = await joinOrStart(
                key: key, spendsRefreshToken: credential.refreshToken != nil, operation: operation)
            // A flight this caller joined ended cancelled: this caller, not
            // cancelled itself, refreshes anew. Not a flight it started: that
            // one's cancellation is its own refresh's (a deadline that had
            // passed), and starting again would spin.
            if !led, case .failure(let error) = result, AuthKitError.isCancellation(error), !Task.isCancelled {
                continue
            }
            return try result.get()
        }
    }

    nonisolated(nonsending) private func joinOrStart(
        key: Key, spendsRefreshToken: Bool,
        operation: nonisolated(nonsending) @escaping @Sendable () async throws -> Credential
    ) async -> (Result<Credential, any Error>, led: Bool) {
        // Joined under the coordinator's lock: a flight found here has not
        // been forgotten, so it ends after this caller has its ticket.
        var answered: Credential?
        let joined = lock.withLock { () -> (Flight, SharedOutcome<Credential>.Ticket, Bool)? in
            if let flight = inFlight[key] { return (flight, flight.outcome.join(), false) }
            if !lately.isEmpty, let answer = lately[key] {
                if answer.until > ContinuousClock.now {
                    answered = answer.credential
                    return nil
                }
                lately[key] = nil
            }
            let flight = Flight()
            inFlight[key] = flight
            return (flight, flight.outcome.join(), true)
        }
        // The token was spent by a refresh that ended lately: its answer.
        if let answered { return (.success(answered), false) }
        guard let (flight, ticket, leads) = joined else { return (.failure(AuthKitError.cancelled), false) }
        if leads {
            // Started outside the lock; task-local values (a deadline scope,
            // a store's lock) go with it, the caller's cancellation does not.
            // One closure (the task's), its work a method: a closure made
            // for the work and another for the task was one allocation more.
            // Started on this thread (SE-0472) where the runtime has it: a
            // task enqueued instead woke another thread, twice the library
            // work of a refresh (the `refresh-library` benchmark row). Swift
            // 6.3.1 gives an immediate task an executor preference record
            // even with none asked for, and each hop then takes its lock;
            // still cheaper than the wake-up (docs/performance.md).
            let task: Task<Void, Never>
            if #available(macOS 26, iOS 26, tvOS 26, watchOS 26, visionOS 26, *) {
                task = Task.immediate { [self] in
                    await fly(flight, key: key, spendsRefreshToken: spendsRefreshToken, operation: operation)
                }
            } else {
                task = Task { [self] in
                    await fly(flight, key: key, spendsRefreshToken: spendsRefreshToken, operation: operation)
                }
            }
            // Cancelled already if a request's deadline passed before the task existed.
            flight.dedicated.attach(task)
            // Ended already: the flight ran on this thread (``Task/immediate``)
            // and never waited, as with a transport that answers at once.
            if let ended = flight.outcome.ended { return (ended, leads) }
        }
        // A cancelled caller stops waiting (``AuthKitError/Code/cancelled``, as a
        // cancelled request says); the flight goes on, and is forgotten when it ends.
        let result = await flight.outcome.wait(ticket) ?? .failure(AuthKitError.cancelled)
        return (result, leads)
    }

    /// A flight's work, in its own task: `operation`, then the outcome
    /// handed to the callers and the flight forgotten.
    nonisolated(nonsending) private func fly(
        _ flight: Flight, key: Key, spendsRefreshToken: Bool,
        operation: nonisolated(nonsending) @Sendable () async throws -> Credential
    ) async {
        let result: Result<Credential, any Error>
        do {
            // Its requests' deadlines cancel this task itself (nobody awaits it but through the flight).
            result = .success(try await DedicatedTask.$current.withValue(flight.dedicated) { try await operation() })
        } catch {
            result = .failure(error)
        }
        // Ended under the coordinator's lock (its order: this lock, then the
        // outcome's, as a caller joins), so that no caller starts a refresh
        // of the spent token between the flight being forgotten and its
        // answer being remembered.
        lock.withLock {
            if let index = inFlight.index(forKey: key), inFlight.values[index].outcome === flight.outcome {
                inFlight.remove(at: index)
            }
            let taken = flight.outcome.end(with: result)
            if !taken, spendsRefreshToken, case .success(let renewed) = result,
                let new = renewed.refreshToken, !ExactText.same(new, key.token)
            {
                remember(renewed, spending: key)
            }
        }
    }

    /// Keeps `renewed` for callers with the refresh token it spent. Under `lock`.
    private func remember(_ renewed: Credential, spending key: Key) {
        let now = ContinuousClock.now
        if lately.count >= Self.rememberedAtMost {
            lately = lately.filter { $0.value.until > now }
            while lately.count >= Self.rememberedAtMost,
                let oldest = lately.min(by: { $0.value.until < $1.value.until })?.key
            {
                lately[oldest] = nil
            }
        }
        lately[key] = (renewed, now.advanced(by: remembered))
    }

    /// Forgets the remembered answers that hold `credential`'s tokens, or
    /// that answered its refresh token: it is being revoked, and a caller
    /// with a token it replaced is to hear so from the provider, not be
    /// handed a revoked credential.
    func forgetAnswers(holding credential: Credential) {
        let tokens = [credential.accessToken, credential.refreshToken].compactMap { $0 }
        func held(_ token: String?) -> Bool { token.map { t in tokens.contains { ExactText.same($0, t) } } ?? false }
        lock.withLock {
            guard !lately.isEmpty else { return }
            lately = lately.filter { key, answer in
                !held(key.token) && !held(answer.credential.accessToken) && !held(answer.credential.refreshToken)
            }
        }
    }

    /// Refreshes under way: for a test to know one has ended.
    var flightsInProgress: Int { lock.withLock { inFlight.count } }

    /// Callers waiting for a refresh under way, all accounts together: for
    /// a test to know a waiter is there before it acts.
    var waiterCount: Int {
        lock.withLock { inFlight.values.reduce(0) { $0 + $1.outcome.waiting } }
    }

    /// Callers waiting for the refresh under way for `key` (``key(for:tokenEndpoint:clientID:)``):
    /// for a test of the shared coordinator, which other tests use at once.
    func waiterCount(for key: Key) -> Int {
        lock.withLock { inFlight[key]?.outcome.waiting ?? 0 }
    }

    /// One refresh's task, and its outcome with the callers waiting for it;
    /// told apart by its outcome (a value, not an object: one allocation
    /// fewer per refresh).
    private struct Flight: Sendable {
        /// Its task, cancelled only by a request's deadline.
        let dedicated = DedicatedTask()
        let outcome = SharedOutcome<Credential>()
    }
}
