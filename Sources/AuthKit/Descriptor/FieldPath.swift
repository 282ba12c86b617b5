/// A path to a value inside a JSON response: `token`, `data[0].access_token`,
/// `authed_user.access_token`.
///
/// Dots separate object members and `[n]` indexes arrays. Providers put the
/// token in different places; the descriptor names the place instead of code
/// naming the provider.
package struct FieldPath: Sendable, Hashable, CustomStringConvertible {
    package enum Component: Hashable, Sendable {
        case member(String)
        case index(Int)
    }

    package let description: String
    package let components: [Component]

    /// Parses `text`; returns `nil` for an empty path, an empty member or a bad index.
    package init?(_ text: String) {
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
    package func value(in object: [String: JSONValue]) -> JSONValue? {
        // Most paths are one member of the answer (`access_token`): looked
        // up at once, without wrapping the answer in a value to walk.
        if components.count == 1, case .member(let name) = components[0] { return object[name] }
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

    /// `object` without the value at this path (as it was when there is
    /// none). A path that ends in an array index leaves the array whole:
    /// taking an element out would renumber the others.
    package func removed(from object: [String: JSONValue]) -> [String: JSONValue] {
        guard case .object(let members) = Self.removing(components[...], from: .object(object)) else { return object }
        return members
    }

    private static func removing(_ components: ArraySlice<Component>, from value: JSONValue) -> JSONValue {
        guard let first = components.first else { return value }
        let rest = components.dropFirst()
        switch (first, value) {
        case (.member(let name), .object(var members)):
            guard let inner = members[name] else { return value }
            members[name] = rest.isEmpty ? nil : removing(rest, from: inner)
            return .object(members)
        case (.index(let index), .array(var elements)) where !rest.isEmpty && elements.indices.contains(index):
            elements[index] = removing(rest, from: elements[index])
            return .array(elements)
        default:
            return value
        }
    }
}

/// One or more ``FieldPath``s tried in order; the first present value wins.
///
/// In JSON either a string (`"token"`) or an array
/// (`["access_token", "data[0].access_token"]`: Instagram documents one shape
/// and sends the other).
package struct FieldPaths: Codable, Sendable, Hashable, ExpressibleByStringLiteral, ExpressibleByArrayLiteral {
    package var paths: [FieldPath]

    package init(_ paths: [FieldPath]) { self.paths = paths }

    package init(stringLiteral value: String) {
        self.paths = FieldPath(value).map { [$0] } ?? []
    }

    package init(arrayLiteral elements: String...) {
        self.paths = elements.compactMap(FieldPath.init)
    }

    package init(from decoder: Decoder) throws {
        let container = try decoder.singleValueContainer()
        let texts: [String]
        if let single = try? container.decode(String.self) {
            texts = [single]
        } else {
            texts = try container.decode([String].self)
        }
        guard !texts.isEmpty else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "expected at least one field path")
        }
        self.paths = try texts.map { text in
            guard let path = FieldPath(text) else {
                throw DecodingError.dataCorruptedError(
                    in: container,
                    debugDescription:
                        "'\(text)' is not a field path; write names separated by dots, with [n] for array elements, e.g. data[0].access_token"
                )
            }
            return path
        }
    }

    package func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        if paths.count == 1 {
            try container.encode(paths[0].description)
        } else {
            try container.encode(paths.map(\.description))
        }
    }

    /// The text of the first path holding a string or number: Instagram's Graph
    /// errors have an object at `error` and the code at `error.type`.
    package func firstScalar(in object: [String: JSONValue]) -> String? {
        for path in paths {
            if let text = path.value(in: object)?.scalarText, !text.isEmpty { return text }
        }
        return nil
    }

    /// The first value found, with the path that found it.
    package func firstValue(in object: [String: JSONValue]) -> (path: FieldPath, value: JSONValue)? {
        for path in paths {
            if let value = path.value(in: object), value != .null { return (path, value) }
        }
        return nil
    }

    /// `'a' or 'b'`, for messages.
    package var alternatives: String { paths.map(\.description).joined(separator: "' or '") }
}
