/// How the provider spells scopes.
public struct ScopeSettings: Codable, Sendable, Hashable {
    /// Joins scopes in the authorize URL. Default a space (RFC 6749 §3.3); Instagram uses `,`.
    public var separator: String?
    /// Requested when the caller asks for none.
    public var `default`: [String]?
    /// Scopes the provider documents, for `--help` and validation hints.
    public var known: [String]?

    public init(separator: String? = nil, default: [String]? = nil, known: [String]? = nil) {
        self.separator = separator
        self.default = `default`
        self.known = known
    }

    public var resolvedSeparator: String { separator ?? " " }
}
