import ArgumentParser
import AuthKit

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

struct TokenList: WorkspaceCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List stored credentials (tokens masked).",
        usage: "authkit token list [<options>]",
        discussion: """
            Examples:
              authkit token list --provider github
              authkit token list --json | jq '.[].providerID'
            """
    )

    @OptionGroup var global: GlobalOptions
    @Option(
        name: .shortAndLong, help: ArgumentHelp("Only this provider's accounts.", valueName: "id"),
        completion: .custom(Completions.providerIDs))
    var provider: String?
    @Flag(help: "Print JSON (without tokens).") var json = false

    func validate() throws { try AccountOptions.checkProviderID(provider) }

    /// One credential, in the names `token show --json` and `authorize
    /// --json` use for the same members (`providerID`, `kind`).
    struct Row: Encodable {
        var providerID: String
        var label: String?
        var kind: String
        var scopes: [String]
        var expiresAt: Date?
        /// When the refresh token expires: the user must sign in again by then.
        var refreshTokenExpiresAt: Date?
        /// True for a labelled account `token switch` chose: its provider's
        /// commands use it without --label.
        var usedWithoutLabel: Bool?
        /// Whose it is: the verified ID token's user, else what the
        /// provider's "who am I" endpoint named at sign-in.
        var user: String?
    }

    /// One credential's row of the table, its texts already escaped.
    struct TableRow {
        /// The provider, its label and the ` *` of the chosen account.
        var account: String
        /// Whose it is (`octocat (583231)`), shown after the account in its
        /// column; the first to go where the column is too narrow.
        var user: String? = nil
        var token: String
        var expiry: String
        var scopes: String

        /// The account column's text, whole.
        var accountCell: String { user.map { "\(account)  \($0)" } ?? account }

        /// The account column's text within `width`: the user is cut at its
        /// end first, then left out; the account (whose label tells two
        /// apart, whose `*` says which is used without `--label`) is cut in
        /// its middle only when it alone is wider. Cut as one string, a long
        /// user name took the label and the `*` with it.
        func accountCell(within width: Int) -> String {
            let whole = accountCell
            guard whole.terminalColumns > width else { return whole }
            guard account.terminalColumns <= width else { return account.cutInMiddle(toColumns: width) }
            let room = width - account.terminalColumns - 2
            guard let user, room >= 6 else { return account }
            return "\(account)  \(user.cut(toColumns: room))"
        }
    }

    /// The table's lines. On a terminal (`columns`), a row is kept to one
    /// line, so it does not wrap under the next: the expiry is said short
    /// (``shortExpiry(_:)``: its 32 or 34 columns cut the labels to a few
    /// letters), a long account is cut in its
    /// middle only to leave the scopes 12 columns (it keeps at least 16),
    /// and the scopes (often long URLs) are cut to the line. A file or a
    /// pipe gets everything whole, as do `--json` and `token show`.
    /// `in 16 min`, `expired`, `unknown`, `never`: the part of
    /// ``CredentialSummary/expiry(_:now:)`` a glance needs (`token show`
    /// gives the rest).
    static func shortExpiry(_ expiry: String) -> String {
        guard let open = expiry.firstRange(of: " ("), expiry.hasSuffix(")") else { return expiry }
        let head = expiry[..<open.lowerBound]
        guard head.first?.isNumber == true else { return String(head) }
        return String(expiry[open.upperBound..<expiry.index(before: expiry.endIndex)])
    }

    static func table(_ rows: [TableRow], columns: Int?) -> [String] {
        var rows = rows
        if columns != nil {
            for index in rows.indices { rows[index].expiry = Self.shortExpiry(rows[index].expiry) }
        }
        var widths = zip(
            [rows.map(\.accountCell), rows.map(\.token), rows.map(\.expiry)], ["ACCOUNT", "TOKEN", "EXPIRES"]
        ).map { column, title in max(title.count, column.map(\.terminalColumns).max() ?? 0) }
        func pad(_ text: String, _ width: Int) -> String { text.padded(to: width) }
        if let columns { widths[0] = min(widths[0], max(16, columns - 1 - (widths[1] + widths[2] + 6) - 12)) }
        let room = columns.map { $0 - 1 - (widths.reduce(0, +) + 6) }
        func scopes(_ text: String) -> String {
            guard let room, room >= 12 else { return text }
            return text.cut(toColumns: room)
        }
        var lines = [
            pad("ACCOUNT", widths[0]) + "  " + pad("TOKEN", widths[1]) + "  " + pad("EXPIRES", widths[2]) + "  SCOPES"
        ]
        for row in rows {
            lines.append(
                pad(row.accountCell(within: widths[0]), widths[0]) + "  " + pad(row.token, widths[1])
                    + "  " + pad(row.expiry, widths[2]) + "  " + scopes(row.scopes))
        }
        return lines
    }

    func run(in workspace: Workspace) async throws {
        var (credentials, unreadable) = try await workspace.readableCredentials()
        if let provider {
            credentials = credentials.filter { $0.providerID == provider }
            unreadable = unreadable.filter { $0.0.providerID == provider }
            // An id no provider file describes and nothing is stored under: a
            // typo, told with its suggestions (a stored id whose file has gone still lists).
            if credentials.isEmpty, unreadable.isEmpty, workspace.catalog.entry(id: provider) == nil {
                _ = try workspace.descriptor(provider)
            }
        }
        let chosen = try workspace.defaultAccounts.labels()
        func isChosen(_ credential: Credential) -> Bool {
            // Byte for byte (``Workspace/forgetChoice(of:)``).
            guard let label = credential.label, let chosen = chosen[credential.providerID] else { return false }
            return ExactText.same(chosen, label)
        }
        // On standard error, after the list (or in place of one).
        defer {
            if let note = notMoved(besides: credentials.map(\.key) + unreadable.map(\.0), in: workspace) {
                Console.err(note)
            }
        }
        try list(credentials, provider: provider, in: workspace, isChosen: isChosen, nothingElse: unreadable.isEmpty)
        guard unreadable.isEmpty else {
            for (key, error) in unreadable {
                Console.err("authkit: \(key): not listed: \(ErrorReport.message(for: error, flags: false))")
            }
            throw CLIError(
                "\(unreadable.count) stored credential\(unreadable.count == 1 ? "" : "s") could not be read (see above); the others are listed.",
                status: .badInput)
        }
    }

    private func list(
        _ credentials: [Credential], provider: String?, in workspace: Workspace, isChosen: (Credential) -> Bool,
        nothingElse: Bool
    ) throws {
        if json {
            guard !credentials.isEmpty else { return Console.out("[]") }
            try Console.json(
                credentials.map {
                    Row(
                        providerID: $0.providerID, label: $0.label, kind: $0.kind.rawValue, scopes: $0.scopes,
                        expiresAt: $0.expiresAt,
                        refreshTokenExpiresAt: $0.refreshTokenExpiresAt, usedWithoutLabel: isChosen($0) ? true : nil,
                        user: Self.user(of: $0))
                })
            return
        }
        if credentials.isEmpty {
            guard nothingElse else { return }
            if let provider {
                Console.err(
                    "No stored credentials for \(ShellWord.quoted(provider)). Sign in with: authkit authorize --provider \(ShellWord.quoted(provider))"
                )
            } else {
                Console.err("No stored credentials. Sign in with: authkit authorize --provider NAME")
            }
            // After `sandbox try`, which says it stored a credential, this
            // answered "No stored credentials" and said nothing of its store.
            if let sandboxCount = workspace.sandboxCredentialCount(provider: provider), sandboxCount > 0 {
                Console.err(
                    "The sandbox's store (\(Workspace.sandboxStoreURL(environment: workspace.environment).path)) holds \(sandboxCount) "
                        + "credential\(sandboxCount == 1 ? "" : "s"): list \(sandboxCount == 1 ? "it" : "them") with --sandbox and the URL of a running 'authkit sandbox', or with AUTHKIT_SANDBOX set."
                )
            }
            return
        }
        // Columns: account (provider and label), token, expiry, scopes.
        let columns = Console.outputColumns
        // Escaped, and cut only on a terminal: a pipe gets a 300-character
        // label or a long list of scope URLs whole (they were cut at 200).
        func shown(_ text: String) -> String {
            columns == nil ? DisplayText.sanitized(text, limit: .max) : CredentialSummary.safe(text)
        }
        let accounts = credentials.map { credential in
            shown(credential.key.label.map { "\(credential.providerID) (\($0))" } ?? credential.providerID)
                + (isChosen(credential) ? " *" : "")
        }
        // Whose each is, joined to the account where any is known ("github
        // (work)  octocat (583231)"): a column of its own would squeeze the
        // scopes out of 80 columns for the many credentials that name none.
        let users = credentials.map { Self.user(of: $0).map(shown) }
        let rows = credentials.enumerated().map { index, credential in
            TableRow(
                account: accounts[index], user: users[index], token: Credential.mask(credential.accessToken),
                expiry: CredentialSummary.expiry(credential), scopes: shown(credential.scopes.joined(separator: " ")))
        }
        Self.table(rows, columns: columns).forEach(Console.out)
        // After the table: on a terminal, where both streams meet, a warning
        // printed between rows split it.
        if credentials.contains(where: isChosen) {
            Console.err("* used without --label (chosen with 'authkit token switch')")
        }
        for warning in credentials.compactMap({ CredentialSummary.signInWarning($0) }) { Console.err(warning) }
    }

    /// With the keyring in use, the accounts `credentials.json` still holds
    /// and the keyring does not (signed in before the keyring was chosen),
    /// said with the command that carries them over: the list alone showed
    /// them as gone.
    private func notMoved(besides listed: [CredentialKey], in workspace: Workspace) -> String? {
        guard workspace.sandbox == nil, !(workspace.store is FileCredentialStore) else { return nil }
        let file = FileCredentialStore(environment: workspace.environment)
        guard let inFile = try? file.unlockedSnapshot() else { return nil }
        let listed = Set(listed)
        let left = inFile.filter { (provider == nil || $0.providerID == provider) && !listed.contains($0.key) }
        guard !left.isEmpty else { return nil }
        let names = left.prefix(3).map { "\($0.key)" }.joined(separator: ", ") + (left.count > 3 ? ", …" : "")
        return "authkit: note: \(file.location) holds \(left.count) credential\(left.count == 1 ? "" : "s") "
            + "not in \(workspace.store.location) (\(names)); authkit token move --to keyring carries "
            + "\(left.count == 1 ? "it" : "them") over."
    }

    /// The verified ID token's user, else the account the provider named at sign-in.
    static func user(of credential: Credential) -> String? {
        credential.identity?.displayName ?? credential.account
    }
}
