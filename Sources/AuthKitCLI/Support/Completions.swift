import AuthKit

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What the shell offers at `--provider <TAB>` and `providers show <TAB>`:
/// the ids `authkit providers list` shows — the bundled ones, the user's
/// `$AUTHKIT_HOME/providers`, and any `--providers-dir` already typed on the
/// line. argument-parser's completion scripts run `authkit ---completion …`
/// with the words of the line; nothing is printed but the ids (a file that
/// cannot be loaded is left out, not reported: the shell would show the report
/// as candidates).
///
/// Every word offered is a ``isShellSafe(_:)`` word, whatever the store or a
/// providers directory holds: bash's script hands them to `compgen -W`,
/// which expands `$(…)` and backquotes in them, so a label such as
/// `$(touch${IFS}/tmp/x)` ran when TAB was pressed after `--label`; and a
/// word the shell inserts unquoted runs when the line is entered.
enum Completions {
    static func providerIDs(_ words: [String], _ index: Int, _ prefix: String) -> [String] {
        let catalog = ProviderCatalog.standard(additional: providerDirectories(in: words))
        return offered(catalog.ids, prefix: prefix)
    }

    /// The bundled ids only, for `providers override`.
    static func bundledIDs(_ words: [String], _ index: Int, _ prefix: String) -> [String] {
        offered(ProviderCatalog(includeBundled: true, directories: []).ids, prefix: prefix)
    }

    /// `words` that start with `prefix` and that no shell reads as more than
    /// the word itself.
    static func offered(_ words: [String], prefix: String) -> [String] {
        words.filter { $0.hasPrefix(prefix) && isShellSafe($0) }
    }

    /// Letters, digits and `. _ - @ + , /` only: nothing bash, zsh or
    /// fish expands, splits or quotes, in a completion word list or on a
    /// command line. (Provider ids are already lowercase letters, digits,
    /// `-` and `_`; new labels are held to this set by `authorize`.) Not `:`,
    /// where zsh's `_describe` cuts a candidate, nor `=` or `%`, which zsh
    /// expands at the start of a word.
    static func isShellSafe(_ word: String) -> Bool {
        !word.isEmpty && !word.hasPrefix("-")
            && word.unicodeScalars.allSatisfy {
                ($0.properties.isAlphabetic || $0.properties.numericType != nil) && !$0.properties.isWhitespace
                    || "._-@+,/".unicodeScalars.contains($0)
            }
    }

    /// What the shell offers at `--label <TAB>`: the labels stored for the
    /// `--provider` (`-p`) already on the line, in the store the command
    /// would use (the sandbox's with `--sandbox` or `$AUTHKIT_SANDBOX`).
    /// Read without the store's lock or any write; nothing on a problem.
    static func labels(_ words: [String], _ index: Int, _ prefix: String) -> [String] {
        labels(words, prefix: prefix, environment: ProcessInfo.processInfo.environment)
    }

    static func labels(_ words: [String], prefix: String, environment: [String: String]) -> [String] {
        guard let provider = value(of: ["--provider", "-p"], in: words) else { return [] }
        let sandboxed =
            value(of: ["--sandbox"], in: words) ?? environment["AUTHKIT_SANDBOX"].flatMap { $0.isEmpty ? nil : $0 }
        let store: any CommandStore
        if sandboxed != nil {
            store = FileCredentialStore(
                file: Workspace.sandboxStoreURL(environment: environment), environment: environment)
        } else if (try? StoreChoice.chosen(environment: environment).choice) == .keyring {
            #if canImport(CAuthKitLinux)
                // A completion that waits is a shell that hangs at Tab: a locked keyring offers none.
                store = SecretServiceCredentialStore(callTimeout: .seconds(2), environment: environment)
            #else
                return []
            #endif
        } else {
            store = FileCredentialStore(environment: environment)
        }
        let stored = store.keysForCompletion()
        return offered(stored.filter { $0.providerID == provider }.compactMap(\.label), prefix: prefix).sorted()
    }

    /// The value of the first of `names` among `words` (`--name value` or `--name=value`).
    static func value(of names: [String], in words: [String]) -> String? {
        for (position, word) in words.enumerated() {
            for name in names {
                if word == name, position + 1 < words.count { return words[position + 1] }
                if word.hasPrefix(name + "=") { return String(word.dropFirst(name.count + 1)) }
            }
        }
        return nil
    }

    /// The values of `--providers-dir DIR` and `--providers-dir=DIR` among `words`.
    static func providerDirectories(in words: [String]) -> [URL] {
        var directories = [URL]()
        for (position, word) in words.enumerated() {
            if word == "--providers-dir", position + 1 < words.count {
                directories.append(URL(fileURLWithPath: words[position + 1], isDirectory: true))
            } else if word.hasPrefix("--providers-dir=") {
                directories.append(
                    URL(fileURLWithPath: String(word.dropFirst("--providers-dir=".count)), isDirectory: true))
            }
        }
        return directories
    }
}
