/// One or more ``FieldPath``s tried in order; the first present value wins.
///
/// In JSON either a string (`"token"`) or an array
/// (`["access_token", "data[0].access_token"]`: Instagram documents one shape
/// and sends the other).
public struct FieldPaths: Codable, Sendable, Hashable, ExpressibleByStringLiteral, ExpressibleByArrayLiteral {
    public var paths: [FieldPath]

    public init(_ paths: [FieldPath]) { self.paths = paths }

    public init(stringLiteral value: String) {
        self.paths = FieldPath(value).map { [$0] } ?? []
    }

    public init(arrayLiteral elements: String...) {
        self.paths = elements.compactMap(FieldPath.init)
    }

    public init(from decoder: Decoder) throws {
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
                    debugDescription: "'\(text)' is not a field path; write names separated by dots, with [n] for array elements, e.g. data[0].access_token")
            }
            return path
        }
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        if paths.count == 1 { try container.encode(paths[0].description) } else { try container.encode(paths.map(\.description)) }
    }

    /// The text of the first path holding a string or number: Instagram's Graph
    /// errors have an object at `error` and the code at `error.type`.
    public func firstScalar(in object: [String: JSONValue]) -> String? {
        for path in paths {
            if let text = path.value(in: object)?.scalarText, !text.isEmpty { return text }
        }
        return nil
    }

    /// The first value found, with the path that found it.
    public func firstValue(in object: [String: JSONValue]) -> (path: FieldPath, value: JSONValue)? {
        for path in paths {
            if let value = path.value(in: object), value != .null { return (path, value) }
        }
        return nil
    }
}
