/// A value that varies per user and appears as `{name}` in endpoint URLs:
/// Qiita Team's `{team}`, Microsoft's `{tenant}`, GitLab's `{base}`.
public struct PlaceholderSpec: Codable, Sendable, Hashable {
    /// Tells the user what to supply ("your Qiita Team name").
    public var description: String?
    /// Used when the user supplies nothing; without one the value is required.
    public var `default`: String?

    public init(description: String? = nil, default: String? = nil) {
        self.description = description
        self.default = `default`
    }
}
