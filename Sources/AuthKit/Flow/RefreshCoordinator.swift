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
final class RefreshCoordinator: Sendable {
    private let inFlight = LockedValue([String: Flight]())

    func refresh(_ credential: Credential, using operation: @escaping @Sendable () async throws -> Credential) async throws -> Credential {
        // Keyed by account and refresh token: a refresh of an already-rotated
        // token is a different request and is not merged with a stale one.
        let key = [credential.providerID, credential.label ?? "", credential.refreshToken ?? credential.accessToken]
            .joined(separator: "\u{0}")
        while true {
            let (flight, leads) = inFlight.withLock { flights -> (Flight, Bool) in
                if let flight = flights[key] { return (flight, false) }
                let flight = Flight()
                flights[key] = flight
                return (flight, true)
            }
            guard leads else {
                let result = await flight.result()
                if case .failure(let error) = result, Self.isCancellation(error), !Task.isCancelled { continue }
                return try result.get()
            }
            let result: Result<Credential, any Error>
            do { result = .success(try await operation()) } catch { result = .failure(error) }
            inFlight.withLock { $0[key] = nil }
            flight.finish(result)
            return try result.get()
        }
    }

    private static func isCancellation(_ error: any Error) -> Bool {
        if error is CancellationError { return true }
        if case AuthKitError.cancelled = error { return true }
        return false
    }

    /// One refresh's outcome, for the callers waiting on it.
    private final class Flight: @unchecked Sendable {
        private let state = LockedValue<(result: Result<Credential, any Error>?, waiters: [CheckedContinuation<Result<Credential, any Error>, Never>])>((nil, []))

        func result() async -> Result<Credential, any Error> {
            await withCheckedContinuation { continuation in
                let ready = state.withLock { state -> Result<Credential, any Error>? in
                    if let result = state.result { return result }
                    state.waiters.append(continuation)
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        }

        func finish(_ result: Result<Credential, any Error>) {
            let waiters = state.withLock { state in
                state.result = result
                defer { state.waiters = [] }
                return state.waiters
            }
            for waiter in waiters { waiter.resume(returning: result) }
        }
    }
}
