import AuthKit

/// A value inside a command line that a message suggests ("sign in again:
/// authkit authorize --provider github --label 'my work'"), written so that
/// it pastes: single-quoted when a shell would split or expand it, and with
/// control characters written out (`\u{1B}`) rather than sent to the
/// terminal, which would obey them.
enum ShellWord {
    /// The most characters of a word shown; a longer one (from a file
    /// placed by someone else, say) is cut with `…` rather than flood the
    /// terminal, and so can no longer be pasted back.
    static let longestShown = 80

    static func quoted(_ text: String) -> String {
        let shown = DisplayText.sanitized(text, limit: longestShown)
        guard
            shown.isEmpty
                || shown.unicodeScalars.contains(where: { special.contains($0) || $0.properties.isWhitespace })
        else { return shown }
        return "'" + escapingQuotes(shown) + "'"
    }

    /// `text` in single quotes, whole and as it is: for a command a shell
    /// will run (git's `!` helper, through `sh -c`), not for a message,
    /// where ``quoted(_:)`` shortens and makes control characters visible.
    static func literal(_ text: String) -> String {
        "'" + escapingQuotes(text) + "'"
    }

    /// Every `'` closed, escaped and reopened (`'\''`), found among the
    /// Unicode scalars: `String.replacing` matches whole characters, and a
    /// `'` with a combining mark after it (U+0301) is one character that is
    /// no `'`, so it stayed, and ended the quoting for the shell, which reads
    /// bytes: what followed ran as a command.
    private static func escapingQuotes(_ text: String) -> String {
        var escaped = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if scalar == "'" { escaped.append(contentsOf: #"'\''"#.unicodeScalars) } else { escaped.append(scalar) }
        }
        return String(escaped)
    }

    /// What a POSIX shell reads specially outside quotes.
    private static let special = Set("\\'\"`$&|;<>()*?[]#~!{}".unicodeScalars)

    /// `--provider ID`, and `--label LABEL` for a labelled account: the
    /// flags that name `key` on the command line. The account without a
    /// label is `--label ''` where `token switch` chose another for its
    /// provider: without `--label`, the advice ("sign in again", "delete
    /// it") went to the chosen account, and replaced or deleted it.
    static func account(_ key: CredentialKey) -> String {
        let label =
            key.label ?? (providersWithAChosenAccount.current.contains(key.providerID) ? "" : nil)
        return "--provider \(quoted(key.providerID))" + (label.map { " --label \(quoted($0))" } ?? "")
    }

    /// The providers whose commands use a chosen labelled account without
    /// `--label` (``DefaultAccounts``), as the workspace read them.
    static let providersWithAChosenAccount = LockedValue<Set<String>>([])
}
