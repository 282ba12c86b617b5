/// Merges concurrent refreshes of one credential into one request.
///
/// Many providers rotate refresh tokens (RFC 9700 §4.14.2): the first refresh
/// invalidates the old refresh token, so a second concurrent refresh with the
/// same token would fail, or worse, be taken as token theft and revoke the whole
/// grant. Callers that ask while a refresh is in flight get its result.
actor RefreshCoordinator {
    private var inFlight: [String: Task<Credential, Error>] = [:]

    func refresh(_ credential: Credential, using operation: @escaping @Sendable () async throws -> Credential) async throws -> Credential {
        // Keyed by account and refresh token: a refresh of an already-rotated
        // token is a different request and is not merged with a stale one.
        let key = "\(credential.key)\u{0}\(credential.refreshToken ?? credential.accessToken)"
        if let task = inFlight[key] { return try await task.value }
        let task = Task { try await operation() }
        inFlight[key] = task
        defer { inFlight[key] = nil }
        return try await task.value
    }
}
