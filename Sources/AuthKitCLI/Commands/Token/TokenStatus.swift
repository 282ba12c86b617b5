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
            client id; 4 when the only failures were providers that could not be
            reached. One its provider gives no way to check is listed as stored.

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
        var tally = Tally()
        for (key, error) in unreadableHere {
            tally.count(.notChecked)
            Console.say("\(key): not checked: \(ErrorReport.message(for: error, flags: false))", hanging: 2)
        }
        for credential in credentials {
            let (outcome, text) = await check(credential, in: workspace)
            tally.count(outcome)
            // Prose: broken at spaces on a terminal (a refusal's reason ran far past 80 columns).
            Console.say("\(credential.key): \(text)", hanging: 2)
        }
        if let failure = tally.failure(of: credentials.count + unreadableHere.count) { throw failure }
    }

    /// What the check of one credential found.
    enum Outcome {
        /// Valid, or stored and nothing here could check it (no way to ask; OAuth 1.0a).
        case fine
        /// The provider (or its answer) says it no longer works.
        case notValid
        /// It could not be checked for a reason here (no client id, an unreadable item).
        case notChecked
        /// It could not be checked: the provider could not be reached.
        case unreached
    }

    /// The counts the run ends with: the exit status is 1 when any credential
    /// is not valid or could not be checked for a reason here; 4 (a network
    /// error) when every failure was a provider that could not be reached,
    /// which says nothing of the credentials; 0 otherwise.
    struct Tally {
        var notValid = 0
        var notChecked = 0
        var unreached = 0

        mutating func count(_ outcome: Outcome) {
            switch outcome {
            case .fine: break
            case .notValid: notValid += 1
            case .notChecked: notChecked += 1
            case .unreached: unreached += 1
            }
        }

        func failure(of total: Int) -> CLIError? {
            guard notValid + notChecked + unreached > 0 else { return nil }
            var parts = [String]()
            if notValid > 0 { parts.append("\(notValid) not valid") }
            if notChecked + unreached > 0 { parts.append("\(notChecked + unreached) not checked") }
            let noun = total == 1 ? "credential" : "credentials"
            let reachable =
                unreached > 0
                ? " (\(unreached == 1 ? "a provider" : "providers") could not be reached: try again later)" : ""
            return CLIError(
                "Of \(total) \(noun): \(parts.joined(separator: ", "))\(reachable).",
                status: notValid + notChecked == 0 ? .networkError : .failure)
        }
    }

    /// Whether `credential` works, and a line that says whose it is or why not.
    private func check(_ credential: Credential, in workspace: Workspace) async -> (Outcome, String) {
        func details(_ current: Credential) -> String {
            "scopes \(current.scopes.isEmpty ? "(none listed)" : CredentialSummary.safe(current.scopes.joined(separator: " "))), expires \(CredentialSummary.expiry(current))"
        }
        do {
            let source = try await workspace.source(credential.key)
            // An OAuth 2.0 token stored without a client (`token import`, no
            // client id set): it was reported as OAuth 1.0a and passed. The
            // setting is named as the command line gives it (the library's
            // words named ClientSettings, a Swift type). Said before any
            // refresh: one that was due failed for want of the client id,
            // and the token was said not to be valid.
            if let clientless = source.authenticator as? ClientlessAuthenticator {
                return (
                    .notChecked,
                    "stored, not checked; \(details(credential)). "
                        + ErrorReport.message(for: clientless.missing, environment: workspace.environment, flags: false)
                )
            }
            let current = try await source.current()
            let details = details(current)
            guard let oauth2 = source.authenticator as? OAuth2Client else {
                return (
                    .fine, "stored\(Self.screenName(current)) (OAuth 1.0a tokens are not checked without a request)"
                )
            }
            switch try await Self.account(of: current, with: oauth2) {
            case .account(let account)?:
                return (.fine, "valid, account \(CredentialSummary.safe(account)); \(details)")
            case .inactive?:
                return (
                    .notValid, "not valid: the provider's introspection says the token is not active. Sign in again."
                )
            case nil:
                break
            }
            return (
                .fine,
                "stored, not checked: its descriptor names no way to ask (whoAmI, openid.userInfo or introspection); \(details)"
            )
        } catch let error as AuthKitError {
            if case .missingSetting = error.reason, credential.kind == .oauth1 {
                // An OAuth 1.0a token is never checked (no request to ask with):
                // a consumer key not configured here (given on the command line
                // at the sign-in) made it "not checked", exit 1, for a client
                // that would not have been used.
                return (
                    .fine, "stored\(Self.screenName(credential)) (OAuth 1.0a tokens are not checked without a request)"
                )
            }
            // A provider that could not be reached, or that answered that it
            // cannot serve now (5xx, 429), says nothing of the credential.
            if Self.saysNothingOfTheCredential(error) {
                return (
                    .unreached,
                    "not checked: \(ErrorReport.message(for: error, environment: workspace.environment, flags: false))"
                )
            }
            // A problem here (the store could not be read or written, its
            // lock busy; a setting missing or wrong) says nothing of the
            // credential either: "not valid" told a script to sign in again.
            // Nor does an answer AuthKit cannot read (UserInfo as a signed
            // JWT, introspection's `active` as "true", a page instead of
            // JSON): the provider answered, but not whether the token works.
            // A refusal it cannot read further (a 4xx but 429: a refresh's
            // 400 without a standard error, a who-am-I's 401 or 404) still
            // refuses the token.
            let saysNothing: Bool
            switch error.reason {
            case .invalidResponse(_, let reason):
                if case .unexpectedStatus(let status) = reason.kind, (400..<500).contains(status), status != 429 {
                    saysNothing = false
                } else {
                    saysNothing = true
                }
            case .store, .missingSetting, .invalidSetting: saysNothing = true
            default: saysNothing = false
            }
            let message = ErrorReport.message(for: error, environment: workspace.environment, flags: false)
            return saysNothing ? (.notChecked, "not checked: \(message)") : (.notValid, "not valid: \(message)")
        } catch let error as CLIError {
            return (.notChecked, "not checked: \(error.message)")
        } catch {
            // Not an AuthKit error: its text may hold anything; shown escaped.
            return (.notChecked, "not checked: \(DisplayText.sanitized("\(error)", limit: 300))")
        }
    }

    /// " as NAME" for an OAuth 1.0a token whose answer named its user (Twitter's `screen_name`).
    static func screenName(_ credential: Credential) -> String {
        credential.rawFields["screen_name"]?.scalarText.map { " as \(CredentialSummary.safe($0))" } ?? ""
    }

    enum Answer {
        case account(String)
        case inactive
    }

    /// The provider away: not reached, or answering that it cannot serve
    /// now (HTTP 5xx, 429 Too Many Requests; RFC 9110 §15.6, RFC 6585 §4),
    /// at its who-am-I, UserInfo or introspection call or a refresh. Such a
    /// credential is "not checked": "not valid" told a monitoring script to
    /// sign in again during an outage.
    static func saysNothingOfTheCredential(_ error: AuthKitError) -> Bool {
        func away(_ status: Int?) -> Bool { status.map { $0 >= 500 || $0 == 429 } ?? false }
        switch error.reason {
        case .network: return true
        case .invalidResponse(_, .unexpectedStatus(let status, _)): return away(status)
        case .providerError(_, let response): return away(response.status)
        default: return false
        }
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
