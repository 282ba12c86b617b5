/// Runs `body` with a started ``TestHTTPServer`` and always stops it.
public func withServer<T>(_ body: (TestHTTPServer) async throws -> T) async throws -> T {
    let server = TestHTTPServer()
    try await server.start()
    do {
        let result = try await body(server)
        await server.stop()
        return result
    } catch {
        await server.stop()
        throw error
    }
}
