import ArgumentParser
import AuthKit

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

struct TokenExchange: WorkspaceCommand {
    static let sendsRequests = true
    static let configuration = CommandConfiguration(
        commandName: "exchange",
        abstract: "Trade a stored access token for another (RFC 8693), and store it under a new label.",
        usage: "authkit token exchange [<options>] --provider <id> --as <label>",
        discussion: """
            The stored credential's access token (refreshed first when it is due)
            is sent to the provider's token endpoint as the subject token, the
            client authenticating as usual; the token it answers, for the
            --audience or --resource asked, or with fewer scopes, is stored under
            --as and used like any other (authkit request --label LABEL).

            Examples:
              authkit token exchange --provider corp \\
                --audience https://orders.internal --as orders
              authkit request --provider corp --label orders \\
                https://orders.internal/v1/list
            """)

    @OptionGroup var global: GlobalOptions
    @OptionGroup var account: AccountOptions
    @OptionGroup var client: ClientOptions
    @Option(name: .customLong("as"), help: ArgumentHelp("The label to store the new token under.", valueName: "label"))
    var newLabel: String
    @Option(help: ArgumentHelp("A service the new token is for (repeatable).", valueName: "uri")) var audience:
        [String] = []
    @Option(help: ArgumentHelp("A resource the new token is for (repeatable).", valueName: "uri")) var resource:
        [String] = []
    @Option(help: ArgumentHelp("A scope of the new token (repeatable).", valueName: "scope")) var scope: [String] = []
    @Flag(help: "Print the new credential as JSON on standard output (secrets included).") var json = false
    @Flag(help: "Replace a credential stored under --as that renews itself (a sign-in's refresh token).")
    var force = false

    func validate() throws {
        try Authorize.checkScopes(Authorize.scopes(scope))
        if newLabel.allSatisfy(\.isWhitespace) {
            throw ValidationError("--as takes a label such as orders; got an empty one.")
        }
        // As a sign-in's or an import's --label: shown, typed and completed again later.
        try AccountOptions.checkNewLabel(newLabel, flag: "--as")
        if let label = account.label, ExactText.same(newLabel, label) {
            throw ValidationError("--as names the credential being traded; give the new token a label of its own.")
        }
    }

    func run(in workspace: Workspace) async throws {
        let key = try workspace.key(account)
        if let label = key.label, ExactText.same(newLabel, label) {
            // The account `token switch` chose, named by --as: trading it would replace it.
            throw CLIError(
                "--as \(newLabel) names the credential being traded (the account chosen with token switch); give the new token a label of its own.",
                status: .usage)
        }
        let source = try await workspace.source(key, explicit: client.settings())
        // The client authenticates the exchange (RFC 8693 §2.1): without one, what is missing.
        if let clientless = source.authenticator as? ClientlessAuthenticator { throw clientless.missing }
        guard let oauth2 = source.authenticator as? OAuth2Client else {
            throw CLIError(
                "\(account.provider) speaks OAuth 1.0a, which has no token exchange (RFC 8693).", status: .usage)
        }
        // As `token import` refuses it: a sign-in's credential under --as
        // (its refresh token) would be replaced for good by a token that
        // lives an hour. Asked before the exchange is sent, and again under
        // the lock before the save.
        let target = CredentialKey(providerID: key.providerID, label: newLabel)
        let refusal = CLIError(
            "\(target) holds a credential that renews itself (a sign-in's refresh token, or a client credentials grant), which the exchanged token would replace for good; nothing was stored. Choose another --as, or pass --force to replace it.",
            status: .badInput)
        let force = self.force
        if !force, let stored = try await workspace.store.credential(for: target), TokenImport.renewsItself(stored) {
            throw refusal
        }
        let subject = try await source.current()
        let exchanged = try await oauth2.exchangeToken(
            subject, audience: audience, resources: resource, scopes: Authorize.scopes(scope), label: newLabel)
        // Under the account's lock, as a sign-in or an import is saved; a
        // credential already stored under --as is replaced, and said so
        // (read under the lock: read before it, the note could name another).
        let previous = try await workspace.store.withRefreshLock(for: exchanged.key, timeout: .seconds(30)) {
            let previous = try await workspace.store.credential(for: exchanged.key)
            if !force, let previous, TokenImport.renewsItself(previous) { throw refusal }
            try await workspace.store.save(exchanged)
            return previous
        }
        if let previous {
            Console.err(Authorize.replacementNote(previous, key: exchanged.key, sandbox: workspace.sandbox != nil))
        }
        if json {
            try Console.json(CredentialSummary.printable(exchanged))
        } else {
            Console.out("Stored the exchanged token as \(exchanged.key).")
            CredentialSummary.lines(exchanged).forEach(Console.out)
        }
    }
}
