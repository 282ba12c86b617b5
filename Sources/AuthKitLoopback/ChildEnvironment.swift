import Subprocess

/// The environment of a program AuthKit starts (a browser, `git`): the
/// caller's without any `AUTHKIT_*` variable, which may hold client secrets
/// or a private key, handed over in swift-subprocess's typed form.
package enum ChildEnvironment {
    /// `environment` less every `AUTHKIT_*` variable.
    package static func filtered(_ environment: [String: String]) -> [String: String] {
        environment.filter { !$0.key.hasPrefix("AUTHKIT_") }
    }

    /// ``filtered(_:)`` in the typed form, which builds each `NAME=value` C
    /// string itself, terminated. (Its raw-bytes form `strdup`s each entry,
    /// so an array without a final NUL was read past its end, and heap
    /// bytes, which in this process may be secrets, reached the child.) What
    /// POSIX cannot pass is left out rather than failing the launch: a name
    /// that is empty, holds `=` or starts with a digit, and a NUL in a name
    /// or value.
    package static func variables(_ environment: [String: String]) -> [Environment.Key: String] {
        var variables = [Environment.Key: String]()
        for (name, value) in filtered(environment) {
            guard let first = name.utf8.first, !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first),
                !name.utf8.contains(UInt8(ascii: "=")), !name.utf8.contains(0), !value.utf8.contains(0)
            else { continue }
            variables[Environment.Key(stringLiteral: name)] = value
        }
        return variables
    }
}
