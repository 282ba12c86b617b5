import ArgumentParser
import AuthKit

struct TokenRevoke: WorkspaceCommand {
    static let sendsRequests = true
    static let configuration = CommandConfiguration(
        commandName: "revoke",
        abstract: "Revoke a credential at the provider, then delete it here.",
        usage: "authkit token revoke [<options>] --provider <id>",
        discussion: "Example:\n  authkit token revoke --provider qiita --label work")

    @OptionGroup var global: GlobalOptions
    @OptionGroup var account: AccountOptions
    @OptionGroup var client: ClientOptions
    @Flag(help: "Keep the local copy after revoking.") var keep = false

    func run(in workspace: Workspace) async throws {
        let key = try workspace.key(account)
        // Under the refresh lock: a refresh running in another process saves
        // first, and its rotated token is what gets revoked (CredentialSource).
        let source: CredentialSource
        do {
            source = try await workspace.source(key, explicit: client.settings())
        } catch let error as AuthKitError {
            guard case .signInRequired(let key, .noCredential) = error.reason else { throw error }
            // "Sign in first" is no advice for a revocation. (Where the
            // provider holds other accounts, `source` has named them instead.)
            throw CLIError.nothingStored(key, so: "nothing was revoked")
        }
        let stored = try? await source.store.credential(for: source.key)
        let endSession = stored.flatMap { Self.endSessionLine(for: $0, source.authenticator) }
        do {
            try await source.revoke(keepingLocalCopy: keep)
        } catch let error as AuthKitError {
            if let endSession { Console.err(endSession) }
            throw Self.stillStored(error, key: key)
        }
        Console.err("Revoked \(key)\(keep ? "" : " and deleted it here").")
        if let endSession { Console.err(endSession) }
        if !keep { try workspace.forgetChoice(of: key) }
    }

    /// Where the user ends their session at the provider too (OpenID Connect
    /// RP-Initiated Logout 1.0), for a provider that has an end-session
    /// endpoint: revoking ends this app's grant, not the browser's session.
    /// The URL carries the client id, never the ID token (``EndSessionRequest/url``).
    static func endSessionLine(for credential: Credential, _ authenticator: any Authenticator) -> String? {
        guard let client = authenticator as? OAuth2Client, let request = try? client.endSession(credential) else {
            return nil
        }
        return "To sign out of \(client.descriptor.name) in your browser too, open:\n  \(request.url.absoluteString)"
    }

    /// A revocation that fails leaves the credential stored here (it is
    /// deleted only once the provider has confirmed, RFC 7009 §2.2): the
    /// error says so, and how to delete it without the provider, for a
    /// provider that is gone, broken or cannot revoke at all.
    static func stillStored(_ error: AuthKitError, key: CredentialKey) -> any Error {
        let delete = "'authkit token delete \(ShellWord.account(key))'"
        switch error.reason {
        case .notSupported(let providerID, .revocation):
            return CLIError(
                "The \(providerID) descriptor names no way to revoke a token. Delete it here with \(delete), and revoke the app's access in the provider's settings.",
                status: ExitStatus(for: error))
        // A client id not configured here (a token imported, or signed in
        // with --client-id): the setting is named, and so is the way out.
        case .providerError, .invalidResponse, .network, .redirectNotFollowed, .responseTooLarge, .insecureTransport,
            .store, .missingSetting:
            var message = ErrorReport.message(for: error)
            if !message.hasSuffix(".") { message += "." }
            return CLIError(
                message + " The credential is still stored here; \(delete) deletes it without telling the provider.",
                status: ExitStatus(for: error))
        case .signInRequired(_, .endpointChanged(let origin)):
            // "Sign in again" is no advice for someone getting rid of it.
            return CLIError(
                "\(key) was not issued by \(DisplayText.sanitized(origin, limit: 200)), where its provider file now sends revocations "
                    + "(a changed or replaced provider file, or another sandbox), so its tokens were not sent there. The credential is still "
                    + "stored here; \(delete) deletes it without telling the provider.", status: ExitStatus(for: error))
        default:
            return error
        }
    }
}
