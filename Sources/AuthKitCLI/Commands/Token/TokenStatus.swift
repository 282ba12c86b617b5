import ArgumentParser
import AuthKit

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `authkit token status`: each stored credential checked with its
/// provider, as `gh auth status` does: the account it belongs to, its
/// scopes and expiry, or why it no longer works.
struct TokenStatus: WorkspaceCommand {
    static let sendsRequests = true
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Ask each provider whether its stored credential still works, and whose it is.",
        usage: "authkit token status [<options>] [--provider <id>] [--label <label>]",
        discussion: """
            A credential that is due is refreshed first. Then the provider is asked
            who the token belongs to: its descriptor's "who am I" call (whoAmI), else
            OpenID Connect's UserInfo for a verified sign-in, else token
            introspection (RFC 7662). One line per credential; the exit status is 1
            when any is no longer valid, or could not be checked for want of a
            client id. One its provider gives no way to check is listed as stored.

            Examples:
              authkit token status
              authkit token status --provider github
            """)

    @OptionGroup var global: GlobalOptions
    @OptionGroup var accounts: AccountFilterOptions

    func run(in workspace: Workspace) async throws {
        let (readable, unreadable) = try await workspace.readableCredentials()
        let credentials = readable.filter { accounts.matches($0.key) }
        let unreadableHere = unreadable.filter { accounts.matches($0.0) }
        guard !credentials.isEmpty || !unreadableHere.isEmpty else {
            guard let provider = accounts.provider else {
                throw CLIError(
                    "No stored credentials. Sign in first: authkit authorize --provider ID", status: .failure)
            }
            // A mistyped id gets its nearest names; a mistyped label, the
            // provider's accounts (exit 64, as the other token commands).
            if workspace.catalog.entry(id: provider) == nil { _ = try workspace.descriptor(provider) }
            let key = CredentialKey(providerID: provider, label: accounts.label)
            if let others = await workspace.otherAccounts(than: key) {
                throw CLIError.nothingStored(key, so: "nothing was checked", others: others)
            }
            throw CLIError(
                "No stored credential for \(key). Sign in first: authkit authorize \(ShellWord.account(key))",
                status: .failure)
        }
        var failed = unreadableHere.count
        for (key, error) in unreadableHere {
            Console.out("\(key): not checked: \(ErrorReport.message(for: error, flags: false))")
        }
        for credential in credentials {
            let (valid, text) = await check(credential, in: workspace)
            if !valid { failed += 1 }
            Console.out("\(credential.key): \(text)")
        }
        if failed > 0 {
            throw CLIError(
                "\(failed) of \(credentials.count + unreadableHere.count) credential\(credentials.count + unreadableHere.count == 1 ? "" : "s") not valid.",
                status: .failure)
        }
    }

    /// Whether `credential` works, and a line that says whose it is or why not.
    private func check(_ credential: Credential, in workspace: Workspace) async -> (Bool, String) {
        do {
            let source = try await workspace.source(credential.key)
            let current = try await source.current()
            let details =
                "scopes \(current.scopes.isEmpty ? "(none listed)" : CredentialSummary.safe(current.scopes.joined(separator: " "))), expires \(CredentialSummary.expiry(current))"
            // An OAuth 2.0 token stored without a client (`token import`, no
            // client id set): it was reported as OAuth 1.0a and passed.
            if let clientless = source.authenticator as? ClientlessAuthenticator {
                return (false, "stored, not checked: \(clientless.missing.description); \(details)")
            }
            guard let oauth2 = source.authenticator as? OAuth2Client else {
                let name =
                    current.rawFields["screen_name"]?.scalarText.map { " as \(CredentialSummary.safe($0))" } ?? ""
                return (true, "stored\(name) (OAuth 1.0a tokens are not checked without a request)")
            }
            switch try await Self.account(of: current, with: oauth2) {
            case .account(let account)?:
                return (true, "valid, account \(CredentialSummary.safe(account)); \(details)")
            case .inactive?:
                return (false, "not valid: the provider's introspection says the token is not active. Sign in again.")
            case nil:
                break
            }
            return (
                true,
                "stored, not checked: its descriptor names no way to ask (whoAmI, openid.userInfo or introspection); \(details)"
            )
        } catch let error as AuthKitError {
            return (false, "not valid: \(error.summary)")
        } catch {
            // Not an AuthKit error: its text may hold anything; shown escaped.
            return (false, "not checked: \(DisplayText.sanitized("\(error)", limit: 300))")
        }
    }

    enum Answer {
        case account(String)
        case inactive
    }

    /// What the provider says of the token: whose it is, or that it is no
    /// longer active; `nil` when the descriptor names no way to ask.
    static func account(of credential: Credential, with client: OAuth2Client) async throws -> Answer? {
        if client.descriptor.whoAmI != nil {
            let (subject, name, _) = try await client.whoAmI(credential)
            return .account(name.map { "\($0) (\(subject))" } ?? subject)
        }
        if credential.identity != nil, client.descriptor.openID?.userInfoURL != nil {
            let info = try await client.userInfo(credential)
            return .account(info.claims["email"]?.scalarText ?? info.subject)
        }
        if client.descriptor.introspectionURL != nil {
            let answer = try await client.introspect(credential)
            guard answer.isActive else { return .inactive }
            return .account(answer.username ?? answer.subject ?? answer.clientID ?? "(active)")
        }
        return nil
    }
}
