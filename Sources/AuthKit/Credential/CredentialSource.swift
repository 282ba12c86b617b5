import HTTPTypes
import Logging

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A valid credential on demand: an authenticator, a store and the key of one
/// stored credential.
///
/// ``current(at:)`` returns the stored credential, refreshed first when its
/// ``RefreshPolicy`` says so. The refresh happens once, however many tasks
/// and processes ask at the same time: under the store's refresh lock
/// (``CredentialStore/withRefreshLock(for:timeout:_:)``) it re-reads the
/// stored credential, adopts it without a request when another process has
/// refreshed it meanwhile, else refreshes and **saves before returning**. A
/// credential it failed to save is never handed out: with rotating refresh
/// tokens (RFC 9700 §4.14.2) an unsaved refresh loses the grant.
///
///     let source = CredentialSource(authenticator: client, store: FileCredentialStore(), key: credential.key)
///     let (response, body) = try await source.send(HTTPRequest(method: .get, url: apiURL))
///
/// ``send(_:body:followRedirects:maximumBodySize:deadline:)`` attaches the
/// credential (Bearer, or an OAuth 1.0a signature) under AuthKit's redirect
/// policy: the credential goes only to the request's own origin.
public struct CredentialSource: Sendable {
    public let authenticator: any Authenticator
    public let store: any CredentialStore
    public let key: CredentialKey
    /// When to refresh: the descriptor's policy, with the caller's margin if given.
    public var policy: RefreshPolicy
    /// The longest wait for another task's or process's refresh of the same credential.
    public var lockTimeout: Duration = .seconds(30)
    /// How long ``current(at:)`` waits for an optional refresh
    /// (``optionalRefreshWait``; shorter in tests).
    package var optionalRefreshLimit: Duration = Self.optionalRefreshWait
    private let transport: FlowTransport
    /// Origins ``checkAPIOrigin(of:)`` found allowed whatever the credential
    /// (`api.origins` without a placeholder): a source sends most requests to
    /// one API, and the descriptor does not change under it. At most a few
    /// dozen are kept.
    private let allowedOutright = LockedValue(Set<String>())
    /// Whether the descriptor lists its API's origins at all: read once, as
    /// reading the descriptor through `any Authenticator` copies it whole
    /// (its every reference retained and released: 3% of an authorized
    /// request's library work, `perf`).
    private let apiOriginsRestricted: Bool

    /// - Parameters:
    ///   - refreshMargin: seconds before expiry to refresh; `nil` uses the
    ///     descriptor's (default 60). A token issued for no longer than this is
    ///     refreshed at half its lifetime (``RefreshPolicy/margin``).
    ///   - httpClient: sends ``send(_:body:followRedirects:maximumBodySize:deadline:)``'s requests; `nil` is the platform default.
    public init(
        authenticator: any Authenticator, store: any CredentialStore, key: CredentialKey,
        refreshMargin: TimeInterval? = nil, httpClient: (any HTTPClient)? = nil,
        logger: Logger = Logger(label: "authkit.credentials")
    ) {
        self.authenticator = authenticator
        self.store = store
        self.key = key
        let descriptor = authenticator.descriptor
        var policy = descriptor.refreshPolicy
        if let refreshMargin { policy.margin = refreshMargin }
        self.policy = policy
        apiOriginsRestricted = descriptor.apiOrigins.isRestricted
        self.transport = FlowTransport(http: httpClient ?? defaultHTTPClient(), logger: logger)
    }

    /// The stored credential, refreshed (once, and saved) when it is due.
    ///
    /// A refresh that is due but need not happen yet (refreshed ahead of
    /// time, ``RefreshPolicy/ahead``, or at an assumed lifetime) is an
    /// optional one: when it fails, the stored token is used. Where the
    /// token has a known expiry, so still works, the caller waits for it at
    /// most ``optionalRefreshWait``, then uses the stored token while the
    /// refresh goes on, and is saved, in a task of its own: cut short
    /// instead, a provider that answered later had already rotated the
    /// refresh token (RFC 9700 §4.14.2), and the stored one was spent. A
    /// call meanwhile starts no second one. A failure is remembered by the
    /// process, which tries no optional refresh of the same grant again for
    /// ``optionalRefreshPause`` seconds (from `now`): with a token endpoint
    /// that hangs, every call waited, then used the old token. A token with
    /// no known expiry (due at an assumed lifetime, as Salesforce's) may
    /// already be dead: its refresh is tried at every call and waited for,
    /// as one the token must have.
    ///
    /// Not to be called inside ``CredentialStore/withRefreshLock(for:timeout:_:)``
    /// of the same store: the refresh takes that lock itself, and one going
    /// on after the call would run as if it held the caller's.
    /// - Throws: ``AuthKitError/Code/signInRequired`` when nothing is
    ///   stored or the credential cannot be renewed; the refresh's own errors.
    public func current(at now: Date = Date()) async throws -> Credential {
        try await current(at: now, within: nil)
    }

    /// ``current(at:)``, for ``send(_:policy:)``, within its deadline
    /// (``refresh(ifStill:renewed:within:latest:)`` says how).
    nonisolated(nonsending) private func current(at now: Date, within deadline: SendDeadline?) async throws
        -> Credential
    {
        let stored = try await stored()
        guard policy.isDue(stored, at: now) else { return stored }
        let optional = !policy.mustRefresh(stored, at: now)
        // Known to work only with a known expiry: a token due at an assumed
        // lifetime (Salesforce's, which says none) may be dead already, and
        // held back by a pause it answered 401 for minutes after one blip.
        let stillWorks = optional && stored.expiresAt != nil
        let grant = pauseKey(for: stored)
        if stillWorks, Self.optionalRefreshIsPaused(grant, at: now) { return stored }
        // Not begun with less of a `send`'s time left than the caller would
        // wait for it: the token still works (a short send waited for
        // another task's refresh holding the lock, then failed as timed out).
        if stillWorks, let deadline, deadline.remaining < optionalRefreshLimit { return stored }
        let renewed = LockedValue(false)
        let latest = LockedValue<Credential?>(nil)
        let policy = self.policy
        do {
            guard stillWorks else {
                return try await refresh(
                    ifStill: { policy.isDue($0, at: now) }, renewed: renewed, within: deadline, latest: latest)
            }
            return try await optionalRefresh(of: grant, renewed: renewed, latest: latest) {
                // What was read under the lock is what the caller would use.
                (latest.current ?? stored, policy.mustRefresh(latest.current ?? stored, at: now))
            } refresh: { [self] in
                try await refresh(ifStill: { policy.isDue($0, at: now) }, renewed: renewed, latest: latest)
            } failed: { [self] error in
                // Ended after its caller went on: said, and paused, as below;
                // else said as it is, and a renewal the store could not save
                // kept for ``finishRefreshesUnderWay()`` to throw. (Nothing
                // else: the caller has its token; a credential removed
                // meanwhile, say, is the next call's to find.)
                do {
                    _ = try fallback(
                        after: error, stored: stored, latest: latest.current, renewed: renewed.current,
                        stillWorks: true, grant: grant, at: now, within: nil)
                    return nil
                } catch {
                    transport.logger.warning(
                        "Refreshing \(key) ahead of time, gone on after its caller used its token, failed: \(error)")
                    return renewed.current ? error : nil
                }
            }
        } catch {
            if optional, !AuthKitError.isCancellation(error), !renewed.current {
                return try fallback(
                    after: error, stored: stored, latest: latest.current, renewed: false, stillWorks: stillWorks,
                    grant: grant, at: now, within: deadline)
            }
            throw error
        }
    }

    /// After an optional refresh failed: the token that still works, as read
    /// under the lock (another process may have replaced it), or the error.
    /// The error, when the provider did renew it and the renewal was not
    /// saved (a rotated refresh token is then spent, and only this error
    /// says why the next refresh will ask to sign in again), or when it was
    /// removed meanwhile (a sign-out under the lock: the removed token was
    /// used, as the signed-out user).
    private func fallback(
        after error: any Error, stored: Credential, latest: Credential?, renewed: Bool, stillWorks: Bool,
        grant: String, at now: Date, within deadline: SendDeadline?
    ) throws -> Credential {
        guard !AuthKitError.isCancellation(error), !renewed else { throw error }
        // The caller's own time ran out (a `send`'s, waiting for the lock):
        // its request fails so; nothing the provider did, and no pause. Only
        // that timeout: a refusal that came after the deadline is still said
        // as what it is.
        if let deadline, deadline.isItsTimeout(error) { throw error }
        if case .signInRequired(_, .noCredential)? = error.authKitReason { throw error }
        // What was read under the lock, unless that one must be refreshed
        // (another writer stored an older credential).
        let usable = latest ?? stored
        if policy.mustRefresh(usable, at: now) { throw error }
        guard stillWorks else {
            // With no known expiry the token may be dead already: a refusal
            // that says to sign in again (the grant revoked) is thrown, or
            // every call refreshed twice (here and at the API's 401) and
            // never said so.
            if case .signInRequired? = error.authKitReason { throw error }
            transport.logger.warning("Refreshing \(key) at its assumed lifetime failed (\(error)); its token is used.")
            return usable
        }
        Self.failedOptionalRefreshes.withLock { failed in
            // Forgotten by the process's own clock, not by this caller's
            // `now`: one a second behind another's (read before the other
            // call's failure was recorded), or a test's fixed date, found
            // every other grant's failure "in the future" and dropped it,
            // and their pauses were lost while a provider was down.
            let recorded = ContinuousClock.now
            failed = failed.filter { recorded - $0.value.recorded < .seconds(Self.optionalRefreshPause) }
            failed[grant] = (now, recorded)
        }
        transport.logger.warning(
            """
            Refreshing \(key) ahead of time failed (\(error)); its token still works and is used. No new \
            attempt for \(Int(Self.optionalRefreshPause / 60)) minutes, unless it must be refreshed.
            """)
        return usable
    }

    /// How long a caller waits for an optional refresh (``current(at:)``)
    /// before it uses the token that still works, the refresh going on.
    /// A third of a token request's 30 s: a slow or hanging token endpoint
    /// costs a call this, not 30 s.
    package static let optionalRefreshWait: Duration = .seconds(10)

    /// Runs `refresh` in a task of its own and waits for it at most
    /// ``optionalRefreshLimit`` (``optionalRefreshWait``), or until the
    /// caller is cancelled; then, unless `usable` says the credential read
    /// meanwhile must be refreshed itself, returns the credential `usable`
    /// gives while the refresh goes on: under the store's lock, to its own
    /// deadlines and its save. What it ends with after the caller went on
    /// is `failed`'s to say, which returns an error to keep for
    /// ``finishRefreshesUnderWay()``. Its grant is under way until then: a
    /// call meanwhile gets `usable`'s credential at once, and starts none.
    private func optionalRefresh(
        of grant: String, renewed: LockedValue<Bool>, latest: LockedValue<Credential?>,
        usable: @escaping @Sendable () -> (Credential, mustRefresh: Bool),
        refresh: @escaping @Sendable () async throws -> Credential,
        failed: @escaping @Sendable (any Error) -> (any Error)?
    ) async throws -> Credential {
        // A caller cancelled already starts nothing (the task would not know).
        if Task.isCancelled { throw AuthKitError.cancelled }
        // The caller's wait: taken, or left when its time is up or it is cancelled.
        let wait = SharedOutcome<Credential>()
        let caller = wait.join()
        let key = self.key
        // Looked up and registered at once: two calls could both start one.
        let started = Self.refreshesUnderWay.withLock { registry -> Task<Void, Never>? in
            guard registry.underWay[grant] == nil else { return nil }
            // Its own deadlines, not an enclosing operation's, nor a task
            // its deadline would cancel. (Its other task-local values are the
            // caller's, as for the refresh's own task under the lock:
            // `current()` is not called holding one.)
            let task = Task {
                try await DeadlineScope.$current.withValue(nil) {
                    try await DedicatedTask.$current.withValue(DedicatedTask?.none) { try await refresh() }
                }
            }
            let ended = Task {
                let result = await task.result
                // Said (and paused) before the grant is free again.
                var unsaved: (any Error)?
                if !wait.end(with: result), case .failure(let error) = result { unsaved = failed(error) }
                Self.refreshesUnderWay.withLock { registry in
                    registry.underWay[grant] = nil
                    if let unsaved { registry.keep(unsaved, of: key) }
                }
            }
            registry.underWay[grant] = UnderWay(key: key, ended: ended)
            return ended
        }
        guard let ended = started else { return usable().0 }
        let registration = DeadlineWatchdog.shared.register(ContinuousClock.now.advanced(by: optionalRefreshLimit)) {
            // Not left while what it would use must be refreshed (another writer stored an expired one).
            if !usable().mustRefresh { wait.leave(caller) }
        }
        let outcome = await wait.wait(caller)
        _ = DeadlineWatchdog.shared.finish(registration)
        if let outcome {
            // Not under way once its caller has what it ended with: a call
            // right after (a pause already over) would otherwise find the
            // grant still taken for the moment it is freed, and start none.
            await ended.value
            return try outcome.get()
        }
        if Task.isCancelled { throw AuthKitError.cancelled }
        let (credential, _) = usable()
        transport.logger.warning(
            """
            Refreshing \(key) ahead of time has taken \(optionalRefreshLimit.spoken) so far; its token still works \
            and is used. The refresh goes on, and is saved when the provider answers.
            """)
        return credential
    }

    /// An optional refresh under way, after or while its caller waits.
    private struct UnderWay: Sendable {
        let key: CredentialKey
        /// Ends once the refresh has, and what it ended with is recorded.
        let ended: Task<Void, Never>
    }

    /// Optional refreshes (``optionalRefresh(of:renewed:latest:usable:refresh:failed:)``):
    /// process memory, as the pause.
    private struct Registry: Sendable {
        /// Those under way, by grant (``pauseKey(for:)``).
        var underWay: [String: UnderWay] = [:]
        /// Renewals the store could not save after their callers went on,
        /// until ``finishRefreshesUnderWay()`` throws them: the latest 16.
        var unsaved: [(key: CredentialKey, error: any Error)] = []

        mutating func keep(_ error: any Error, of key: CredentialKey) {
            unsaved.append((key, error))
            if unsaved.count > 16 { unsaved.removeFirst() }
        }
    }

    private static let refreshesUnderWay = LockedValue(Registry())

    /// Whether an optional refresh of `key`'s credential is under way (for tests).
    package static func isUnderWay(_ key: CredentialKey) -> Bool {
        refreshesUnderWay.withLock { $0.underWay.values.contains { $0.key == key } }
    }

    /// Waits for the refreshes ahead of time still under way in this
    /// process, which ``current(at:)`` let go on after 10 s while the token
    /// that still works was used. A program about to exit calls it (a
    /// command line, a server shutting down): exiting with one under way
    /// loses the provider's answer, a rotated refresh token among it (RFC
    /// 9700 §4.14.2), and the next refresh asks the user to sign in again.
    /// Each ends by its own deadlines (its token requests' 30 s, after a
    /// wait for the account's lock).
    /// - Throws: ``AuthKitError`` when the provider
    ///   renewed a credential after its caller went on, and the store could
    ///   not save the renewal, whether that refresh ended before this call
    ///   or during it: the stored refresh token may be spent, and only this
    ///   error says so (the first such error, once every refresh has ended;
    ///   each is thrown once).
    public static func finishRefreshesUnderWay() async throws {
        try await finishRefreshesUnderWay(of: nil) { _ in }
    }

    /// ``finishRefreshesUnderWay()`` of `key`'s refreshes only, when given;
    /// `saying` is first called with the keys waited for, when there are any.
    package static func finishRefreshesUnderWay(
        of key: CredentialKey?, saying: ([CredentialKey]) -> Void
    ) async throws {
        let underWay = refreshesUnderWay.withLock { Array($0.underWay.values) }.filter { key == nil || $0.key == key }
        if !underWay.isEmpty { saying(underWay.map(\.key)) }
        for refresh in underWay { await refresh.ended.value }
        let unsaved = refreshesUnderWay.withLock { registry in
            let taken = registry.unsaved.filter { key == nil || $0.key == key }
            registry.unsaved.removeAll { key == nil || $0.key == key }
            return taken
        }
        if let first = unsaved.first { throw first.error }
    }

    /// How long, in seconds, an optional refresh that failed is not tried
    /// again (``current(at:)``).
    package static let optionalRefreshPause: TimeInterval = 300

    /// The optional refreshes that failed, by grant (``pauseKey(for:)``):
    /// when, by the failed call's `now`, and by the process's clock (which
    /// says when to forget it): process memory, as the refresh coordinator's.
    private static let failedOptionalRefreshes = LockedValue<
        [String: (failed: Date, recorded: ContinuousClock.Instant)]
    >([:])

    /// Whether an optional refresh of `grant` failed less than
    /// ``optionalRefreshPause`` before `now`.
    private static func optionalRefreshIsPaused(_ grant: String, at now: Date) -> Bool {
        guard let failed = failedOptionalRefreshes.withLock({ $0[grant]?.failed }) else { return false }
        let since = now.timeIntervalSince(failed)
        return since >= 0 && since < optionalRefreshPause
    }

    /// The grant a failed optional refresh is remembered by: the provider
    /// and its token endpoint, the account, and the token it is renewed
    /// with (a refresh that rotated it, here or in another process, ends
    /// the pause).
    private func pauseKey(for credential: Credential) -> String {
        [
            authenticator.descriptor.id, authenticator.descriptor.token?.url ?? "", key.providerID, key.label ?? "",
            credential.refreshToken ?? credential.accessToken,
        ].joined(separator: "\u{0}")
    }

    /// The stored credential, refreshed (once, and saved) when it is due, as
    /// ``current(at:)``, except that a failed refresh is thrown even while
    /// the token still works: for a caller whose job is the refresh
    /// (`authkit token refresh --due`, run by a timer), to which "used the
    /// old token" would be a silent failure.
    package func refreshIfDue(at now: Date = Date()) async throws -> Credential {
        let stored = try await stored()
        guard policy.isDue(stored, at: now) else { return stored }
        return try await refresh(ifStill: { policy.isDue($0, at: now) })
    }

    /// Refreshes now (for `authkit token refresh`), under the same lock, and saves.
    @discardableResult
    public func refresh() async throws -> Credential {
        let held = try await stored()
        // Another process may have refreshed it meanwhile: then its result is the refresh.
        return try await refresh(ifStill: { $0.accessToken == held.accessToken && $0.refreshToken == held.refreshToken }
        )
    }

    /// Under the lock: re-read, refresh when `needed` still holds for what is
    /// stored, save, return. What another process stored meanwhile is adopted.
    /// - Parameters:
    ///   - deadline: within ``send(_:policy:)``, its deadline. It bounds the
    ///     wait for the lock (a `send` given 5 s waited up to 30 s for it).
    ///     A refresh the token must have is seen through on its own deadline
    ///     whatever is left: cut short, the provider's answer (a rotated
    ///     refresh token) would be lost; the request then fails as timed
    ///     out, not sent past its deadline. (An optional refresh is not
    ///     given one: its caller stops waiting instead, ``current(at:)``.)
    ///   - latest: set to the credential read under the lock.
    private func refresh(
        ifStill needed: @escaping @Sendable (Credential) -> Bool, renewed: LockedValue<Bool> = LockedValue(false),
        within deadline: SendDeadline? = nil,
        latest seen: LockedValue<Credential?> = LockedValue(nil)
    ) async throws -> Credential {
        let authenticator = self.authenticator
        let store = self.store
        let key = self.key
        var lockTimeout = self.lockTimeout
        if let deadline { lockTimeout = min(lockTimeout, try deadline.left()) }
        let lockCutByTheDeadline = lockTimeout < self.lockTimeout
        do {
            return try await store.withRefreshLock(for: key, timeout: lockTimeout) {
                guard let latest = try await store.credential(for: key) else {
                    throw AuthKitError.signInRequired(key, reason: .noCredential)
                }
                seen.withLock { $0 = latest }
                guard needed(latest) else { return latest }
                let grant = pauseKey(for: latest)
                // Seen through once begun, even when the caller is cancelled
                // meanwhile (a view that went away, a request handler's
                // timeout): the provider may already have answered with a
                // rotated refresh token (RFC 9700 §4.14.2), which only this
                // save keeps. A task of its own does not inherit the
                // caller's cancellation; it keeps its task-local values (the
                // store's lock). Waiting for the lock stays cancellable.
                return try await Task {
                    let refreshed = try await authenticator.refresh(latest)
                    renewed.withLock { $0 = true }
                    try await store.save(refreshed)
                    // Renewed (a 401's refresh too): an earlier failure no longer holds optional ones back.
                    Self.failedOptionalRefreshes.withLock { $0[grant] = nil }
                    return refreshed
                }.value
            }
        } catch let error as AuthKitError where lockCutByTheDeadline && error.code == .storeBusy && !renewed.current {
            // Waited for the lock as long as the request's time allowed: said
            // as the request's timeout. (Not a save that found the store busy
            // after the provider renewed: that is said below.)
            throw deadline?.timedOut ?? error
        } catch let error as AuthKitError where renewed.current {
            guard case .store(let path, let reason) = error.reason else { throw error }
            // The provider has answered: a rotating refresh token (RFC 9700
            // §4.14.2) is now spent, and only the unsaved answer held the new
            // one. Say so, so the user knows why the next refresh fails;
            // whether the save failed, or the store's lock could not be let
            // go after it (a database whose commit failed: the save is undone).
            throw AuthKitError.store(
                path: path,
                reason: .init(
                    reason.kind,
                    reason.detail
                        + " The provider did renew the credential, but the renewal was not saved; if the provider rotates refresh tokens, the stored one is now spent, and the next refresh will ask you to sign in again."
                ))
        }
    }

    /// Signs out: revokes the stored credential at the provider (RFC 7009),
    /// then removes it from the store, unless `keepingLocalCopy`.
    ///
    /// Both happen under the refresh lock, so a refresh in flight in another
    /// task or process cannot undo them: it finishes and saves first, and the
    /// credential it saved (with the rotated refresh token, RFC 9700
    /// §4.14.2) is the one revoked; or it waits, and then finds nothing to
    /// refresh. Without the lock, such a refresh saved its result after the
    /// removal, and the user, told they were signed out, was signed in again.
    /// A failed revocation removes nothing.
    /// - Returns: the credential revoked.
    @discardableResult
    public func revoke(keepingLocalCopy: Bool = false) async throws -> Credential {
        let authenticator = self.authenticator
        let store = self.store
        let key = self.key
        let logger = transport.logger
        // No room on the disk is asked for first: what it writes is the
        // file less this entry (smaller than it), and on a full disk it is
        // better revoked and still listed (`token delete` then removes it)
        // than not revoked at all (a sign-out removed it without revoking).
        return try await FileCredentialStore.$removing.withValue(true) {
            try await store.withRefreshLock(for: key, timeout: lockTimeout) {
                guard var latest = try await store.credential(for: key) else {
                    throw AuthKitError.signInRequired(key, reason: .noCredential)
                }
                // A revocation of the descriptor's own that sends the access
                // token alone (Twitch's names it, Dropbox's authenticates
                // with it) refuses one that has expired, and the user could
                // not sign out without `token refresh` first: it is
                // refreshed first. (RFC 7009's default revokes the refresh
                // token first, which needs no live access token.) Refused,
                // the revocation is tried as it is: its error is the one
                // said, the refresh's is logged.
                if let template = authenticator.descriptor.revocation, !template.isRFC7009Revocation,
                    template.sendsOnlyTheAccessToken, let expiry = latest.expiresAt, expiry <= Date(),
                    latest.isRenewable || authenticator.descriptor.refresh != nil
                {
                    do {
                        latest = try await Self.renewedForRevocation(
                            latest, by: authenticator, in: store, logger: logger)
                    } catch AuthKitError.Code.cancelled {
                        throw AuthKitError.cancelled
                    } catch {
                        logger.warning(
                            "\(key)'s access token has expired, and the refresh before its revocation failed: \(error)")
                    }
                }
                try await authenticator.revoke(latest)
                if !keepingLocalCopy { try await store.remove(key) }
                return latest
            }
        }
    }

    /// `credential` refreshed, under a lock the caller holds, to be revoked:
    /// seen through in a task of its own once begun, as a refresh for a
    /// request is, and saved. A save that fails does not lose it: the
    /// renewed credential is what is revoked (the provider may have
    /// rotated both tokens, and the stored ones no longer work), and the
    /// failure is logged.
    private static func renewedForRevocation(
        _ credential: Credential, by authenticator: any Authenticator, in store: any CredentialStore, logger: Logger
    ) async throws -> Credential {
        try await Task {
            let refreshed = try await authenticator.refresh(credential)
            do {
                try await store.save(refreshed)
            } catch {
                logger.warning(
                    "\(credential.key) was renewed before its revocation, and the renewal could not be saved (\(error)); the renewed credential is the one revoked."
                )
            }
            return refreshed
        }.value
    }

    /// Removes the stored credential without telling the provider, under the
    /// refresh lock for the reason ``revoke(keepingLocalCopy:)`` gives.
    /// - Returns: what was removed, or `nil` if nothing was stored.
    @discardableResult
    public func remove() async throws -> Credential? {
        try await Self.remove(key, from: store, lockTimeout: lockTimeout)
    }

    /// ``remove()`` for a caller with no authenticator at hand (`authkit token
    /// delete` needs no client id).
    package static func remove(
        _ key: CredentialKey, from store: any CredentialStore, lockTimeout: Duration = .seconds(30)
    ) async throws -> Credential? {
        try await FileCredentialStore.$removing.withValue(true) {
            try await store.withRefreshLock(for: key, timeout: lockTimeout) {
                try await store.remove(key)
            }
        }
    }

    private func stored() async throws -> Credential {
        guard let credential = try await store.credential(for: key) else {
            throw AuthKitError.signInRequired(key, reason: .noCredential)
        }
        return credential
    }

    /// Sends `request` with a current credential attached and returns once the
    /// response head arrives; the body streams.
    ///
    /// The credential goes only to the provider's API, the origins its
    /// descriptor lists in `api.origins` (a loopback mock only where it is
    /// listed, as a sandbox's descriptor lists the sandbox):
    /// another URL throws ``AuthKitError/Code/outsideProviderAPI``
    /// before the credential is refreshed or sent. Within that, it goes only to the
    /// request's own origin: with
    /// `followRedirects`, a redirect there is followed with it (re-signed for
    /// OAuth 1.0a), one to another origin without it, and none from https to
    /// http (RFC 9110 §15.4). A credential travels over plain http only to
    /// loopback. The body is cut at `maximumBodySize` as it arrives and the
    /// whole request, body included, must end within `deadline` (a cap of
    /// 64 KiB or less: the default transport on Linux holds that much before
    /// it streams anyway, so it reads such a body whole before it returns,
    /// which costs a thread hand-off less; docs/http.md). A refresh
    /// it needs first counts: the wait for the refresh lock gets what is
    /// left (cut short, it is this request's timeout); an optional refresh
    /// is waited for at most 10 s, and not begun with less left than that
    /// (the token still works: it is sent, the refresh going on meanwhile,
    /// ``current(at:)``), unless what was read under the lock must itself be
    /// refreshed; one the token must have is seen through on its own deadline
    /// and saved (cut short, a rotated refresh token would be lost), and a
    /// request whose time it used up is then not sent.
    ///
    /// A `401` whose Bearer challenge says `invalid_token` (RFC 6750 §3.1:
    /// the token expired early, was revoked, or the provider gave no expiry)
    /// is answered once as the RFC allows: the credential is refreshed (under
    /// the lock, so one refresh serves every task and process that met the
    /// same 401), saved, and the request sent again with it. When it cannot
    /// be refreshed (OAuth 1.0a, no refresh token) or the refresh fails, the
    /// 401 is returned as it came (a failed refresh is logged as a warning,
    /// with its error), unless the provider renewed the credential and the
    /// store could not save it: that error is thrown, as ``current(at:)``
    /// throws it.
    public func send(
        _ request: HTTPRequest, body: Data? = nil, followRedirects: Bool = false,
        maximumBodySize: Int = 100 << 20, deadline: Duration = .seconds(60)
    ) async throws -> (HTTPResponse, HTTPResponseBody) {
        guard let url = request.url else { throw AuthKitError.misuse(.unsignableRequest("it has no absolute URL.")) }
        let (response, body, _, _) = try await send(
            OutgoingRequest(head: request, url: url, body: body),
            policy: RequestPolicy(
                redirects: followRedirects ? .follow(maximum: 10) : .deliver, maximumBodySize: maximumBodySize,
                deadline: deadline))
        return (response, body)
    }

    /// ``send(_:body:followRedirects:maximumBodySize:deadline:)`` for a request
    /// the command line builds, returning the body already bounded, and
    /// the URL that answered (after any redirects followed).
    ///
    /// A 401 `invalid_token` is about the credential only from the origin it
    /// was sent to: after a redirect to another origin, which got none, a
    /// refresh of the user's credential was made for an answer that could
    /// not concern it (and any server there could trigger one).
    package func send(_ request: OutgoingRequest, policy: RequestPolicy) async throws -> (
        HTTPResponse, HTTPResponseBody, URL, credentialed: Bool
    ) {
        // Refused before a refresh could send anything over plain http.
        guard request.target.allowsCredentials else { throw AuthKitError.insecureTransport(url: request.displayURL) }
        // And outside the provider's API (a `next` link an answer gave, a
        // mistyped host), before the credential is refreshed.
        try await checkAPIOrigin(of: request.target.url, origin: request.target.origin)
        let end = ContinuousClock.now.advanced(by: policy.deadline)
        let deadline = SendDeadline(end: end, allowed: policy.deadline, display: request.displayURL)
        let credential = try await current(at: Date(), within: deadline)
        var opened = try await openGivingNonce(request, with: credential, until: end, policy: policy)
        if opened.status == 401, opened.credentialed, Self.maySendAgain(request, after: opened),
            BearerChallenge(
                fields: opened.headers[values: .wwwAuthenticate], scheme: credential.proofKey != nil ? "dpop" : "bearer"
            )?
            .error == "invalid_token",
            credential.kind == .oauth2, credential.isRenewable || authenticator.descriptor.refresh != nil,
            !RefusedRenewals.contains(credential.accessToken, at: request.target.origin)
        {
            let renewed: Credential?
            let renewedByProvider = LockedValue(false)
            do {
                // Another task or process may have renewed it already: then that one is used.
                renewed = try await refresh(
                    ifStill: { $0.accessToken == credential.accessToken }, renewed: renewedByProvider, within: deadline)
            } catch let error where AuthKitError.isCancellation(error) || renewedByProvider.current {
                // The 401's body is let go too: a transfer whose reader is
                // neither read nor cancelled holds its worker thread. A
                // renewal the store could not save is thrown, as by
                // `current()`: a rotated refresh token is then spent, and
                // only that error says why the next refresh fails.
                opened.body.cancel()
                throw error
            } catch {
                // The 401 is the answer; why the refresh failed (it timed out,
                // the grant was refused) is said beside it, or the caller
                // could only guess. Provider text in it is already masked.
                transport.logger.warning(
                    "\(request.displayURL) answered 401 invalid_token, and the refresh that followed failed: \(error)")
                renewed = nil
            }
            if let renewed, renewed.accessToken != credential.accessToken {
                opened.body.cancel()
                // With its own nonce retry: where the token endpoint shares
                // the resource's origin, the refresh kept the token
                // endpoint's nonce (RFC 9449 §8) in place of the resource's (§9).
                opened = try await openGivingNonce(request, with: renewed, until: end, policy: policy)
                if opened.status == 401, opened.credentialed,
                    BearerChallenge(
                        fields: opened.headers[values: .wwwAuthenticate],
                        scheme: renewed.proofKey != nil ? "dpop" : "bearer")?.error == "invalid_token"
                {
                    // The renewed token refused too: the server refuses
                    // every token alike, and refreshing on each of its 401s
                    // would spend one refresh per request (``RefusedRenewals``).
                    RefusedRenewals.insert(renewed.accessToken, at: request.target.origin)
                    transport.logger.warning(
                        "\(request.displayURL) refused a token renewed for its invalid_token too; its 401s get no refresh for \(RefusedRenewals.period.components.seconds / 60) minutes."
                    )
                }
            }
        }
        return (
            HTTPResponse(status: .init(code: opened.status), headerFields: opened.headers),
            opened.bounded(until: end, allowed: policy.deadline), opened.url, opened.credentialed
        )
    }

    /// Refuses `url` outside the provider's API (``APIOrigins``), before
    /// anything is sent: an origin without a placeholder is allowed
    /// outright; one with a placeholder only where the stored credential was
    /// issued, which is read (not refreshed: a refresh would send the
    /// refresh token first) only then.
    package func checkAPIOrigin(of url: URL) async throws {
        try await checkAPIOrigin(of: url, origin: url.origin)
    }

    /// The same, with `url`'s ``Foundation/URL/origin`` already worked out
    /// (a request's ``RequestTarget`` holds it).
    nonisolated(nonsending) private func checkAPIOrigin(of url: URL, origin: String) async throws {
        guard apiOriginsRestricted, !allowedOutright.withLock({ $0.contains(origin) }) else { return }
        let descriptor = authenticator.descriptor
        let values = descriptor.placeholderValues(settings: authenticator.settings)
        let match = descriptor.apiOrigins.match(url, placeholders: values)
        if match.outright {
            allowedOutright.withLock { if $0.count < 32 { $0.insert(origin) } }
            return
        }
        guard match.withPlaceholder else {
            throw AuthKitError.outsideProviderAPI(
                url: origin, providerID: descriptor.id, origins: descriptor.apiOrigins.shown(placeholders: values))
        }
        // Nothing stored: `current()` says so.
        guard let stored = try await store.credential(for: key), !match.allows(origin, for: stored) else { return }
        throw AuthKitError.outsideProviderAPI(
            url: origin, providerID: descriptor.id,
            origins: descriptor.apiOrigins.shown(for: stored, placeholders: values))
    }

    /// Whether `request` may be sent again from the start after `opened`
    /// answered it: always when no redirect was followed; after one, only a
    /// GET or HEAD without a body. A POST answered 303 has been carried
    /// out, and the 401 of the page it led to sent the POST again (two
    /// items created for one request).
    static func maySendAgain(_ request: OutgoingRequest, after opened: OpenedResponse) -> Bool {
        opened.redirectsFollowed == 0
            || (request.body == nil && (request.head.method == .get || request.head.method == .head))
    }

    /// ``open(_:with:until:policy:nonce:)``, and once more when a resource
    /// server asks for a nonce. RFC 9449 §9: one that wants a nonce in the
    /// proof answers 401 `use_dpop_nonce` with one; the request is sent once
    /// more with that nonce (not the origin's latest, which another
    /// request's answer may have replaced meanwhile), and only once (a
    /// server that names a fresh nonce at every answer gets its 401
    /// returned, not a loop).
    nonisolated(nonsending) private func openGivingNonce(
        _ request: OutgoingRequest, with credential: Credential, until end: ContinuousClock.Instant,
        policy: RequestPolicy
    ) async throws -> OpenedResponse {
        let opened = try await open(request, with: credential, until: end, policy: policy)
        guard credential.proofKey != nil, opened.status == 401, opened.credentialed,
            Self.maySendAgain(request, after: opened),
            BearerChallenge(fields: opened.headers[values: .wwwAuthenticate], scheme: "dpop")?.error
                == "use_dpop_nonce",
            let given = DPoPNonces.nonce(in: opened.headers)
        else { return opened }
        opened.body.cancel()
        // For the origin that refused (the request's own, or a redirect's).
        return try await open(
            request, with: credential, until: end, policy: policy, nonce: (opened.url.origin, given))
    }

    nonisolated(nonsending) private func open(
        _ request: OutgoingRequest, with credential: Credential, until end: ContinuousClock.Instant,
        policy: RequestPolicy, nonce given: (origin: String, nonce: String)? = nil
    ) async throws -> OpenedResponse {
        let nonce: @Sendable (OutgoingRequest) -> String? = { hop in
            given.flatMap { $0.origin == hop.url.origin ? $0.nonce : nil }
        }
        let authenticator = self.authenticator
        let transport = self.transport
        // The first hop is authorized here, before the deadline's task: a
        // DPoP proof is signed by jwt-kit on an actor, and a hop to it from
        // inside that task (which runs at once, on no executor, with every
        // transport but libcurl) was queued and woke another thread, three
        // thread switches per request, a quarter of its time (`dpop-request`
        // row, perf). From this task the hop runs on this thread. The
        // signing waits on nothing, so it needs no deadline; the hops of
        // redirects followed are authorized inside.
        let first = LockedValue<OutgoingRequest?>(
            try await authenticator.authorize(request, with: credential, nonce: nonce(request)))
        let opened = try await withDeadline(
            end - ContinuousClock.now, allowed: policy.deadline, display: request.displayURL,
            stoppedBy: transport.deadlineStop
        ) {
            try await transport.open(request, step: .apiRequest, policy: policy) { hop in
                let prepared = first.withLock { value in
                    defer { value = nil }
                    return value
                }
                if let prepared { return prepared }
                return try await authenticator.authorize(hop, with: credential, nonce: nonce(hop))
            }
        }
        // A resource server may hand out the next nonce with any answer (§9).
        if credential.proofKey != nil {
            DPoPNonces.shared.remember(opened.headers, for: opened.url.origin, from: .resource)
        }
        return opened

    }
}

/// What is left of a ``CredentialSource/send(_:policy:)``'s time, for a
/// refresh it makes first: when it has passed, the request fails as timed
/// out, naming the request and the time it was given.
private struct SendDeadline: Sendable {
    let end: ContinuousClock.Instant
    let allowed: Duration
    let display: String

    var remaining: Duration { end - ContinuousClock.now }
    var hasPassed: Bool { remaining <= .zero }

    /// The request's timeout, as ``withDeadline(_:allowed:display:stoppedBy:_:)`` says it.
    var timedOut: AuthKitError { AuthKit.timedOut(display, within: allowed) }

    /// Whether `error` is this request's own timeout (``timedOut``), not a
    /// token request's or another failure that came after the deadline.
    func isItsTimeout(_ error: any Error) -> Bool {
        guard hasPassed, case .network(let url, let reason)? = error.authKitReason else { return false }
        return url == display && reason.kind == .timedOut
    }

    /// The time left, or the request's timeout when there is none.
    func left() throws -> Duration {
        let left = remaining
        guard left > .zero else { throw timedOut }
        return left
    }
}
