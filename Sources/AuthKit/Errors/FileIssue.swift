/// One problem with a file AuthKit reads (a provider descriptor, `config.json`):
/// which file, which field, what is wrong and how to fix it.
package struct FileIssue: Sendable, Hashable, CustomStringConvertible {
    /// The file's path, or `<memory>` for one built in code.
    package var file: String
    /// A JSON path to the field, e.g. `token.url`; empty for the whole document.
    package var field: String
    package var problem: String

    package init(file: String, field: String, problem: String) {
        self.file = file
        self.field = field
        self.problem = problem
    }

    /// One line, with control characters escaped (``DisplayText``): a
    /// field name, a quoted value or a file name comes from the file, which
    /// someone else may have written, and must not drive the terminal that
    /// shows it (an ESC sequence in a key of a downloaded provider file).
    package var description: String {
        let file = DisplayText.sanitized(file, limit: 1_000)
        let problem = DisplayText.sanitized(problem, limit: 2_000)
        return field.isEmpty
            ? "\(file): \(problem)" : "\(file): field '\(DisplayText.sanitized(field, limit: 200))': \(problem)"
    }
}
