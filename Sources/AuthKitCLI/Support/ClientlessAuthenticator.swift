import AuthKit
import HTTPTypes

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The authenticator of a stored OAuth 2.0 credential whose client is not
/// configured here: no client id, or no value for a placeholder the
/// provider's endpoints need, in the flags, the environment or
/// `config.json` (a credential signed in with `--client-id` on the command
/// line, say).
///
/// Sending a Bearer token needs no client (RFC 6750 §2.1), so `request`,
/// `token header` and `token refresh --due` go on with a token that is not
/// due. Whatever needs the client (a refresh, a revocation, a sign-in)
/// throws what building it threw, which names the missing setting and
/// where to give it.
struct ClientlessAuthenticator: Authenticator {
    let descriptor: ProviderDescriptor
    let settings: ClientSettings
    /// What building the client threw: ``AuthKitError/Code/missingSetting``.
    let missing: AuthKitError

    func authorize(using userAgent: some UserAgent, options: AuthorizationOptions) async throws -> Credential {
        throw missing
    }

    func authorize(_ request: HTTPRequest, body: Data?, with credential: Credential) throws -> HTTPRequest {
        try OAuth2Client.bearerAuthorized(request, with: credential, descriptor: descriptor)
    }

    /// A credential that nothing could renew, client or not (no refresh
    /// token, no refresh call in the descriptor: a token imported as
    /// `gh auth login --with-token` takes one) needs a sign-in, not a client
    /// id: the missing setting is said only where it is what stands in the way.
    func refresh(_ credential: Credential) async throws -> Credential {
        if credential.kind == .oauth2, !credential.isRenewable, descriptor.refresh == nil {
            throw AuthKitError.signInRequired(credential.key, reason: .noRefreshToken)
        }
        throw missing
    }

    /// A provider with no way to revoke is said as that, whatever the
    /// client: naming a missing client id first sent the user to configure
    /// one, only to hear next that nothing could be revoked.
    func revoke(_ credential: Credential) async throws {
        if descriptor.revocation == nil { throw AuthKitError.notSupported(providerID: descriptor.id, .revocation) }
        throw missing
    }
}
