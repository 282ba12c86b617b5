import ArgumentParser
import AuthKit

/// Which provider, and which of its accounts, a command works on.
struct AccountOptions: ParsableArguments {
    @Option(
        name: .shortAndLong, help: ArgumentHelp("The provider id, as in 'authkit providers list'.", valueName: "id"),
        completion: .custom(Completions.providerIDs))
    var provider: String

    @Option(
        name: .long,
        help: ArgumentHelp(
            "The account label, when one provider holds several accounts ('' for the one without a label).",
            valueName: "label"),
        completion: .custom(Completions.labels))
    var label: String?

    var key: CredentialKey { CredentialKey(providerID: provider, label: label) }

    /// An empty provider id (an unset shell variable, `--provider "$P"`)
    /// drew "did you mean 'x' or 'box'?", or "No stored credential for .
    /// Sign in first", neither of which says what was wrong.
    static func checkProviderID(_ id: String?, given name: String = "--provider") throws {
        guard let id, id.allSatisfy(\.isWhitespace) else { return }
        throw ValidationError(
            "\(name) takes a provider id such as github; got an empty one. 'authkit providers list' shows the known ones."
        )
    }

    func validate() throws {
        try Self.checkProviderID(provider)
        // A label of spaces (a shell variable gone wrong) would name a second
        // account that prints as "qiita ( )" and is easily mistaken for the
        // default. An empty one names the account without a label: the only
        // way to, once `token switch` chose another (``ShellWord/account(_:)``).
        if let label, !label.isEmpty, label.allSatisfy(\.isWhitespace) {
            throw ValidationError(
                "--label takes a name such as work; got only spaces. Leave --label out for the default account, or give --label '' for the one without a label."
            )
        }
    }

    /// For the command that creates an account (`authorize`): a label every
    /// later command can be given again as it is shown. One with a control
    /// character (a pasted tab or line break) was stored, listed as
    /// `x\u{9}y`, and matched by no --label typed from that; spaces around
    /// a label made a second account that looks like the first; one longer
    /// than ``ShellWord/longestShown`` is cut in the hints that name it
    /// (`Stored for github: …`), so it could not be pasted back. Other commands
    /// take any label, so such an account can still be shown and deleted.
    func checkNewLabel() throws {
        guard let label, !label.isEmpty else { return }
        try Self.checkNewLabel(label, flag: "--label")
    }

    /// ``checkNewLabel()`` for a label given by another flag (`token exchange --as`).
    static func checkNewLabel(_ label: String, flag: String) throws {
        if label.unicodeScalars.count > ShellWord.longestShown {
            throw ValidationError(
                "\(flag) is \(label.unicodeScalars.count) characters long; use a name of at most \(ShellWord.longestShown), such as work or an email address."
            )
        }
        // What DisplayText escapes, the invisible spaces a paste brings along among them.
        if label.unicodeScalars.contains(where: { $0.isTerminalControl || $0.isHiddenFormatting }) {
            let shown = DisplayText.sanitized(label, limit: 80)
            throw ValidationError(
                "\(flag) '\(shown)' holds a control or invisible character (a pasted tab or line break?), which every later command would need typed exactly; use a plain name such as work."
            )
        }
        let trimmed = label.trimmingSpaces()
        if trimmed != label {
            throw ValidationError(
                "\(flag) '\(label)' begins or ends with a space; give \(flag) \(ShellWord.quoted(String(trimmed))).")
        }
        // A label is typed again, completed by the shell, and shown in hints
        // to paste: one with `$`, quotes, spaces or other characters a shell
        // reads would need quoting everywhere, and a completion script that
        // expands its words would run it (`$(touch${IFS}/tmp/x)`).
        if !Completions.isShellSafe(label) {
            let odd = label.unicodeScalars.first { !Completions.isShellSafe(String($0)) }.map { String($0) } ?? "-"
            throw ValidationError(
                "\(flag) \(ShellWord.quoted(label)) holds \(ShellWord.quoted(odd)), which a shell reads; "
                    + "a label holds letters, digits and . _ - @ + , / (not first '-'), such as work or alice@example.com."
            )
        }
    }
}

/// `--provider` and `--label` as a filter, for a command that works on every
/// stored account unless told which (`token status`, `token move`).
struct AccountFilterOptions: ParsableArguments {
    @Option(
        name: .shortAndLong, help: ArgumentHelp("Only this provider's credentials.", valueName: "id"),
        completion: .custom(Completions.providerIDs))
    var provider: String?
    @Option(
        help: ArgumentHelp("Only the credential with this label.", valueName: "label"),
        completion: .custom(Completions.labels))
    var label: String?

    func validate() throws {
        try AccountOptions.checkProviderID(provider)
        if label != nil, provider == nil { throw ValidationError("--label picks one account of --provider ID.") }
        if let label, !label.isEmpty, label.allSatisfy(\.isWhitespace) {
            throw ValidationError(
                "--label takes a name such as work; got only spaces. Leave --label out for every account of --provider, or give --label '' for the one without a label."
            )
        }
    }

    /// Whether `key` is one of the accounts asked for: byte for byte, as
    /// stores compare keys (a composed and a decomposed `café` are two).
    func matches(_ key: CredentialKey) -> Bool {
        if let provider, !ExactText.same(key.providerID, provider) { return false }
        guard let label else { return true }
        // '': the account without a label.
        guard !label.isEmpty else { return key.label == nil }
        return key.label.map { ExactText.same($0, label) } ?? false
    }
}
