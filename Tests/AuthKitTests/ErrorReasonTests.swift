import AuthKitTestSupport
import Foundation
import Logging
import Testing

@testable import AuthKit

/// `network`, `invalidResponse` and `store` errors carry typed reasons a
/// caller switches on (issue 45), built by AuthKit's own transports and
/// parsers; docs/errors.md's example is compiled here.
@Suite struct ErrorReasonTests {
    /// Stands in for a `CredentialSource` that fails with `error`.
    struct FailingSource {
        let error: AuthKitError
        func current() async throws -> Credential { throw error }
    }

    /// docs/errors.md's example, as written there; returns what it did.
    func handle(_ error: AuthKitError) async throws -> [String] {
        var done = [String]()
        func retryLater() { done.append("retry") }
        func report(_ text: String) { done.append(text) }
        var credential: Credential?
        let source = FailingSource(error: error)
        do {
            credential = try await source.current()
        } catch AuthKitError.network(_, .timedOut), AuthKitError.network(_, .connectionFailed) {
            retryLater()
        } catch AuthKitError.network(_, .tlsFailure(let detail)) {
            report("A certificate problem, not worth a retry: \(detail)")
        } catch AuthKitError.store(_, .notSaved) {
            report("The disk is full or read-only.")
        }
        #expect(credential == nil)
        return done
    }

    @Test func aCallerSwitchesOnTheReasonNotTheWords() async throws {
        #expect(
            try await handle(.network(url: "https://as.example/token", reason: .init(.timedOut, "no answer for 30 s")))
                == ["retry"])
        #expect(
            try await handle(
                .network(url: "https://as.example/token", reason: .connectionFailed("Couldn't connect to server"))) == [
                    "retry"
                ])
        #expect(
            try await handle(.network(url: "https://as.example/token", reason: .tlsFailure("self-signed")))
                == ["A certificate problem, not worth a retry: self-signed"])
        #expect(
            try await handle(.store(path: "/x/credentials.json", reason: .notSaved("could not be saved: disk full")))
                == ["The disk is full or read-only."])
        await #expect(throws: AuthKitError.store(path: "/x", reason: .busy("held"))) {
            _ = try await handle(.store(path: "/x", reason: .busy("held")))
        }
    }

    /// The reason's words are the message's, unchanged by the typing.
    @Test func theWordsAreTheMessage() {
        let error = AuthKitError.invalidResponse(
            step: .tokenExchange, reason: .init(.missingField("access_token"), "no access token at 'access_token'"))
        #expect(
            error.description == "The token exchange returned an unusable response: no access token at 'access_token'")
        guard case .invalidResponse(_, .missingField(let name, _)) = error else {
            Issue.record("not a missing field")
            return
        }
        #expect(name == "access_token")
    }

    /// A real transport's timeout and refused connection arrive typed.
    @Test func theTransportsTypeWhatTheySee() async throws {
        let port = try RawHTTP.freePort() // nothing listens there
        let transport = FlowTransport(http: platformHTTPClient(timeout: 5), logger: Logger(label: "test"))
        await #expect {
            _ = try await transport.send(
                OutgoingRequest(method: .get, url: URL(string: "http://127.0.0.1:\(port)/")!), step: .apiRequest)
        } throws: { error in
            guard case AuthKitError.network(_, .connectionFailed) = error else { return false }
            return true
        }
    }
}
