/// A path to a value inside a JSON response: `token`, `data[0].access_token`,
/// `authed_user.access_token`.
///
/// Dots separate object members and `[n]` indexes arrays. Providers put the
/// token in different places; the descriptor names the place instead of code
/// naming the provider.
public struct FieldPath: Sendable, Hashable, CustomStringConvertible {
    enum Component: Hashable, Sendable {
        case member(String)
        case index(Int)
    }

    public let description: String
    let components: [Component]

    /// Parses `text`; returns `nil` for an empty path, an empty member or a bad index.
    public init?(_ text: String) {
        var components = [Component]()
        for segment in text.split(separator: ".", omittingEmptySubsequences: false) {
            var rest = Substring(segment)
            let nameEnd = rest.firstIndex(of: "[") ?? rest.endIndex
            let name = rest[..<nameEnd]
            guard !name.isEmpty else { return nil }
            components.append(.member(String(name)))
            rest = rest[nameEnd...]
            while !rest.isEmpty {
                guard rest.first == "[", let close = rest.firstIndex(of: "]"),
                      let index = Int(rest[rest.index(after: rest.startIndex)..<close]), index >= 0
                else { return nil }
                components.append(.index(index))
                rest = rest[rest.index(after: close)...]
            }
        }
        guard !components.isEmpty else { return nil }
        self.description = text
        self.components = components
    }

    /// The value at this path in `object`, or `nil` when any step is missing.
    public func value(in object: [String: JSONValue]) -> JSONValue? {
        var current = JSONValue.object(object)
        for component in components {
            switch (component, current) {
            case (.member(let name), .object(let members)):
                guard let next = members[name] else { return nil }
                current = next
            case (.index(let index), .array(let elements)):
                guard elements.indices.contains(index) else { return nil }
                current = elements[index]
            default:
                return nil
            }
        }
        return current
    }
}
