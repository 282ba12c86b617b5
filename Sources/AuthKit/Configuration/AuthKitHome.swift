import Foundation

/// The directory AuthKit keeps its user files in: `providers/` overrides,
/// `config.json` client settings and `credentials.json`.
///
/// `$AUTHKIT_HOME` if set; else `$XDG_CONFIG_HOME/authkit`; else
/// `~/.config/authkit` (the XDG Base Directory default).
package enum AuthKitHome {
    package static func directory(environment: [String: String] = ProcessInfo.processInfo.environment) -> URL {
        if let home = environment["AUTHKIT_HOME"], !home.isEmpty {
            return URL(fileURLWithPath: home, isDirectory: true)
        }
        if let config = environment["XDG_CONFIG_HOME"], !config.isEmpty {
            return URL(fileURLWithPath: config, isDirectory: true).appendingPathComponent("authkit", isDirectory: true)
        }
        let home = environment["HOME"].map { URL(fileURLWithPath: $0, isDirectory: true) }
            ?? FileManager.default.homeDirectoryForCurrentUser
        return home.appendingPathComponent(".config/authkit", isDirectory: true)
    }
}
