/// One problem with a file AuthKit reads (a provider descriptor, `config.json`):
/// which file, which field, what is wrong and how to fix it.
public struct FileIssue: Sendable, Hashable, CustomStringConvertible {
    /// The file's path, or `<memory>` for one built in code.
    public var file: String
    /// A JSON path to the field, e.g. `token.url`; empty for the whole document.
    public var field: String
    public var problem: String

    public init(file: String, field: String, problem: String) {
        self.file = file
        self.field = field
        self.problem = problem
    }

    public var description: String {
        field.isEmpty ? "\(file): \(problem)" : "\(file): field '\(field)': \(problem)"
    }
}
