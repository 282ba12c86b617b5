import Subprocess

/// The environment of a program AuthKit starts (a browser, `git`): the
/// caller's without any `AUTHKIT_*` variable, which may hold client secrets
/// or a private key, handed over in swift-subprocess's typed form.
package enum ChildEnvironment {
    /// Who the environment is for.
    package enum Child: Sendable {
        /// `git` and its credential helpers, which may need the caller's
        /// tokens (`GH_TOKEN` for gh's helper, as gh passes it): only
        /// AuthKit's own variables are held back.
        case git
        /// A browser: it needs none of the caller's credentials, and is a
        /// long-lived program of many extensions. Held back besides
        /// AuthKit's own (in any case): names that say they hold a
        /// credential (`TOKEN`, `SECRET`, `PASSWORD`, `PASSWD`, `CREDENTIAL`,
        /// `AUTH_KEY`, `APIKEY`, a final `_KEY`, `_KEYS`, `_PASS`, `_PWD` or
        /// `_PAT`), `DATABASE_URL`, and any value that is a URL with a
        /// password in it (`REDIS_URL=redis://:pw@host`). `PGPASSWORD`
        /// among them, which the web example asks for in the same shell.
        /// A name is a guess: a credential named otherwise still goes.
        case browser
    }

    /// `environment` less every `AUTHKIT_*` variable, and for a browser
    /// every credential-like one (``Child/browser``).
    package static func filtered(_ environment: [String: String], for child: Child) -> [String: String] {
        switch child {
        case .git: environment.filter { !$0.key.hasPrefix("AUTHKIT_") }
        case .browser: environment.filter { !holdsACredential($0.key) && !isURLWithPassword($0.value) }
        }
    }

    /// Whether the name `name` says its value may be a credential.
    static func holdsACredential(_ name: String) -> Bool {
        let name = name.uppercased()
        return name.hasPrefix("AUTHKIT_") || name == "DATABASE_URL"
            || ["_KEY", "_KEYS", "_PASS", "_PWD", "_PAT"].contains { name.hasSuffix($0) }
            || ["TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "AUTH_KEY", "APIKEY"].contains {
                name.contains($0)
            }
    }

    /// Whether `value` is a URL whose authority carries a password
    /// (`scheme://user:password@host`, `redis://:password@host`).
    static func isURLWithPassword(_ value: String) -> Bool {
        guard let start = value.firstRange(of: "://") else { return false }
        let authority = value[start.upperBound...].prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        guard let at = authority.lastIndex(of: "@") else { return false }
        return authority[..<at].contains(":")
    }

    /// ``filtered(_:)`` in the typed form, which builds each `NAME=value` C
    /// string itself, terminated. (Its raw-bytes form `strdup`s each entry,
    /// so an array without a final NUL was read past its end, and heap
    /// bytes, which in this process may be secrets, reached the child.) What
    /// POSIX cannot pass is left out rather than failing the launch: a name
    /// that is empty, holds `=` or starts with a digit, and a NUL in a name
    /// or value.
    package static func variables(_ environment: [String: String], for child: Child) -> [Environment.Key: String] {
        var variables = [Environment.Key: String]()
        for (name, value) in filtered(environment, for: child) {
            guard let first = name.utf8.first, !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first),
                !name.utf8.contains(UInt8(ascii: "=")), !name.utf8.contains(0), !value.utf8.contains(0)
            else { continue }
            variables[Environment.Key(stringLiteral: name)] = value
        }
        return variables
    }
}
