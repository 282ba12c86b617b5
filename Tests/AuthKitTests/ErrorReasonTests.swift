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
        } catch AuthKitError.Code.timedOut, AuthKitError.Code.connectionFailed {
            retryLater()
        } catch let error as AuthKitError where error.code == .tlsFailure {
            report("A certificate problem, not worth a retry: \(error)")
        } catch AuthKitError.Code.storeNotSaved {
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
                == [
                    "A certificate problem, not worth a retry: The request to https://as.example/token failed: self-signed"
                ])
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
        #expect(error.code == .missingField && error.field == "access_token")
        #expect(error.code != .invalidField && error.code.description == "missingField")
    }

    /// What a program acts on is in the error's fields, each nil where the
    /// error does not carry it.
    @Test func theFieldsCarryWhatTheCaseCarries() {
        let refused = AuthKitError.signInRequired(
            CredentialKey(providerID: "qiita", label: "work"),
            reason: .refreshRefused(
                ProviderErrorResponse(status: 400, code: "invalid_grant", description: "expired", uri: "https://e.x/e"))
        )
        #expect(refused.code == .signInRequired && refused.providerID == "qiita")
        #expect(refused.credential == CredentialKey(providerID: "qiita", label: "work"))
        #expect(refused.providerErrorCode == "invalid_grant" && refused.providerErrorDescription == "expired")
        #expect(refused.providerErrorURI == "https://e.x/e" && refused.httpStatus == 400)
        #expect(refused.url == nil && refused.file == nil && refused.field == nil && refused.responseStatus == nil)

        let denied = AuthKitError.authorizationFailed(ProviderErrorResponse(code: "access_denied"))
        #expect(denied.code == .accessDenied && denied.httpStatus == nil && denied.providerID == nil)
        #expect(
            AuthKitError.authorizationFailed(ProviderErrorResponse(code: "invalid_scope")).code == .authorizationFailed)

        let status = AuthKitError.invalidResponse(step: .refresh, reason: .init(.unexpectedStatus(502), "a page"))
        #expect(status.code == .unexpectedStatus && status.httpStatus == 502 && status.providerErrorCode == nil)

        let store = AuthKitError.store(path: "/x/credentials.json", reason: .locked("unlock it"))
        #expect(store.code == .storeLocked && store.file == "/x/credentials.json" && store.url == nil)

        let file = AuthKitError.invalidFile([
            FileIssue(file: "/p/qiita.json", field: "token.url", problem: "not a URL"),
            FileIssue(file: "/p/qiita.json", field: "name", problem: "empty"),
        ])
        #expect(file.code == .invalidFile && file.file == "/p/qiita.json" && file.field == "token.url")

        let network = AuthKitError.network(url: "https://as.example/token", reason: .timedOut("30 s"))
        #expect(network.code == .timedOut && network.url == "https://as.example/token")

        let web = AuthKitError.webSignIn(.csrfRefused)
        #expect(web.code == .csrfRefused && web.responseStatus == 403)
        #expect(AuthKitError.loopback(.portInUse(host: "127.0.0.1", port: 8765)).code == .portInUse)
        #expect(AuthKitError.sandbox(.portInUse(port: 8765)).code == .portInUse)
        #expect(AuthKitError.encryption(.cannotOpen(id: "k1")).code == .cannotOpenStoredValue)
    }

    /// Every reason has a code, and no two codes share a name.
    @Test func codesAreDistinctByName() {
        let codes: [AuthKitError.Code] = [
            .invalidFile, .unknownProvider, .missingSetting, .invalidSetting, .unusableRedirectURI, .misuse,
            .notSupported, .cancelled, .accessDenied, .authorizationFailed, .redirectRejected, .idTokenRejected,
            .signInRequired, .providerError, .unexpectedStatus, .unreadableBody, .missingField, .invalidField,
            .repeatedField, .noMetadata, .responseTooLarge, .redirectNotFollowed, .timedOut, .connectionFailed,
            .connectionClosed, .tlsFailure, .malformedAnswer, .transportUnavailable, .invalidRequest,
            .insecureTransport, .outsideProviderAPI, .storeInaccessible, .storeInvalidContents, .storeNotARegularFile,
            .storeWritableByOthers, .storeNotSaved, .storeBusy, .storeLocked, .portInUse, .cannotListen,
            .redirectTimedOut, .invalidReturnPath, .attemptNotFound, .browserMismatch, .noIdentity, .notSignedIn,
            .csrfRefused, .noEncryptionKey, .invalidEncryptionKey, .cannotOpenStoredValue,
        ]
        #expect(Set(codes).count == codes.count)
        #expect(Set(codes.map(\.description)).count == codes.count)
    }

    /// A real transport's timeout and refused connection arrive typed.
    @Test func theTransportsTypeWhatTheySee() async throws {
        let port = try RawHTTP.freePort() // nothing listens there
        let transport = FlowTransport(http: platformHTTPClient(timeout: 5), logger: Logger(label: "test"))
        await #expect {
            _ = try await transport.send(
                OutgoingRequest(method: .get, url: URL(string: "http://127.0.0.1:\(port)/")!), step: .apiRequest)
        } throws: { error in
            guard case .network(_, .connectionFailed)? = error.authKitReason else { return false }
            return true
        }
    }
}
