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
/// The first caller runs the refresh in its own task (no task is created, no
/// actor hop: a refresh nobody shares costs nothing extra); later callers wait
/// for its result. Should the first caller be cancelled, a waiter that was not
/// cancelled itself starts the refresh again rather than report a
/// cancellation it did not ask for.
final class RefreshCoordinator: @unchecked Sendable {
    /// Guards `inFlight` and every flight's state: one lock, taken briefly.
    private let lock = ThreadLock()
    private var inFlight: [String: Flight] = [:]

    func refresh(_ credential: Credential, using operation: @escaping @Sendable () async throws -> Credential)
        async throws -> Credential
    {
        // Keyed by account and refresh token: a refresh of an already-rotated
        // token is a different request and is not merged with a stale one.
        let key =
            credential.providerID + "\u{0}" + (credential.label ?? "") + "\u{0}"
            + (credential.refreshToken ?? credential.accessToken)
        while true {
            let (flight, leads) = lock.withLock { () -> (Flight, Bool) in
                if let flight = inFlight[key] { return (flight, false) }
                let flight = Flight()
                inFlight[key] = flight
                return (flight, true)
            }
            guard leads else {
                let result = await wait(for: flight)
                if case .failure(let error) = result, AuthKitError.isCancellation(error), !Task.isCancelled { continue }
                return try result.get()
            }
            let result: Result<Credential, any Error>
            do { result = .success(try await operation()) } catch { result = .failure(error) }
            let waiters = lock.withLock { () -> [CheckedContinuation<Result<Credential, any Error>, Never>] in
                inFlight[key] = nil
                flight.result = result
                defer { flight.waiters = [] }
                return flight.waiters
            }
            for waiter in waiters { waiter.resume(returning: result) }
            return try result.get()
        }
    }

    /// Callers waiting for a refresh under way, all accounts together: for
    /// a test to know a waiter is there before it acts.
    var waiterCount: Int {
        lock.withLock { inFlight.values.reduce(0) { $0 + $1.waiters.count } }
    }

    private func wait(for flight: Flight) async -> Result<Credential, any Error> {
        await withCheckedContinuation { continuation in
            let ready = lock.withLock { () -> Result<Credential, any Error>? in
                if let result = flight.result { return result }
                flight.waiters.append(continuation)
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }

    /// One refresh's outcome and the callers waiting for it (under `lock`).
    private final class Flight {
        var result: Result<Credential, any Error>?
        var waiters: [CheckedContinuation<Result<Credential, any Error>, Never>] = []
    }
}
