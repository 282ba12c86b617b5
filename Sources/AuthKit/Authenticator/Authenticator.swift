import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One provider's sign-in, whatever its protocol.
///
/// ``OAuth2Client`` (OAuth 2.0) and the `AuthKitOAuth1` module's client
/// (OAuth 1.0a) both conform, so a caller signs in to Qiita and to Twitter with
/// the same two calls and stores both results in the same ``CredentialStore``.
public protocol Authenticator: Sendable {
    /// The provider this authenticator talks to.
    var descriptor: ProviderDescriptor { get }

    /// Runs the whole authorization: builds the request, lets `userAgent` get
    /// the user's approval, checks the answer and exchanges it for a credential.
    func authorize(using userAgent: some UserAgent, options: AuthorizationOptions) async throws -> Credential

    /// Returns `request` carrying `credential`: an `Authorization: Bearer` header
    /// for OAuth 2.0 (RFC 6750 §2.1; never a token in the query), an
    /// `Authorization: OAuth` signature for OAuth 1.0a (RFC 5849 §3.5.1).
    func authorize(_ request: URLRequest, with credential: Credential) throws -> URLRequest

    /// Returns a fresh credential for an expired one; throws
    /// ``AuthKitError/unsupported(_:)`` when the provider cannot refresh it.
    func refresh(_ credential: Credential) async throws -> Credential

    /// Invalidates `credential` at the provider; throws
    /// ``AuthKitError/unsupported(_:)`` when the descriptor names no way to.
    func revoke(_ credential: Credential) async throws
}

extension Authenticator {
    /// Authorizes with default options.
    public func authorize(using userAgent: some UserAgent) async throws -> Credential {
        try await authorize(using: userAgent, options: AuthorizationOptions())
    }

    /// `credential` if it is still valid, else a refreshed one; `refreshed` is
    /// true when the caller must persist the result.
    public func validCredential(_ credential: Credential, now: Date = Date()) async throws -> (credential: Credential, refreshed: Bool) {
        guard credential.isExpired(at: now) else { return (credential, false) }
        return (try await refresh(credential), true)
    }
}
