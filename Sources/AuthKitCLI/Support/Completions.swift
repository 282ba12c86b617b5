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
enum Completions {
    static func providerIDs(_ words: [String], _ index: Int, _ prefix: String) -> [String] {
        let catalog = ProviderCatalog.standard(additional: providerDirectories(in: words))
        return catalog.ids.filter { $0.hasPrefix(prefix) }
    }

    /// The bundled ids only, for `providers override`.
    static func bundledIDs(_ words: [String], _ index: Int, _ prefix: String) -> [String] {
        ProviderCatalog(includeBundled: true, directories: []).ids.filter { $0.hasPrefix(prefix) }
    }

    /// The values of `--providers-dir DIR` and `--providers-dir=DIR` among `words`.
    static func providerDirectories(in words: [String]) -> [URL] {
        var directories = [URL]()
        for (position, word) in words.enumerated() {
            if word == "--providers-dir", position + 1 < words.count {
                directories.append(URL(fileURLWithPath: words[position + 1], isDirectory: true))
            } else if word.hasPrefix("--providers-dir=") {
                directories.append(URL(fileURLWithPath: String(word.dropFirst("--providers-dir=".count)), isDirectory: true))
            }
        }
        return directories
    }
}
