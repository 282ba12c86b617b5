#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Checks a descriptor's JSON against `providers/schema.json` and reports
/// **every** problem, each by its field and in words: a wrong type, a value
/// outside an enum (with the allowed ones listed), a missing required field,
/// an unknown field (with the nearest known name), a number out of range.
///
/// `JSONDecoder` stops at the first problem and speaks Swift ("Cannot
/// initialize PKCEMode from invalid String value plain"); the schema already
/// states the shape, so it is read once and used here, and typed decoding
/// only runs on what passed. What the schema cannot say (URLs, placeholders,
/// template variables) is `DescriptorValidator`'s job; its `pattern` keywords
/// are left to it, as its messages say more.
///
/// The keywords supported are the ones the schema uses: `type`, `enum`,
/// `const`, `required`, `properties`, `additionalProperties`,
/// `patternProperties` (the top level's `^[$_]`), `items`, `minItems`,
/// `minLength`, `minimum`, `maximum`, `oneOf`, `allOf` with `if`/`then`, `$ref`.
struct SchemaCheck {
    private let root: [String: JSONValue]
    /// Where the fields are documented, named when one is unknown.
    private let reference: String

    /// The bundled `providers/schema.json`.
    static let descriptor = SchemaCheck(
        json: BundledDescriptors.schema, reference: "docs/providers.md or providers/schema.json")

    init(json: String, reference: String) {
        self.reference = reference
        if case .object(let object)? = try? JSONValue(parsing: Data(json.utf8)) {
            root = object
        } else {
            root = [:]
        }
    }

    func problems(in value: JSONValue, file: String) -> [FileIssue] {
        var issues = [FileIssue]()
        check(value, against: .object(root), path: "", file: file, into: &issues)
        return issues
    }

    // MARK: - Keywords

    private func resolve(_ schema: JSONValue) -> [String: JSONValue] {
        guard case .object(var members) = schema else { return [:] }
        if case .string(let ref)? = members["$ref"], ref.hasPrefix("#/$defs/"),
            case .object(let definitions)? = root["$defs"],
            case .object(let target)? = definitions[String(ref.dropFirst(8))]
        {
            members.removeValue(forKey: "$ref")
            members.merge(target) { own, _ in own } // the referring schema's own keywords (description, default) win
            // what the definition itself is
            if let shape = target["description"] { members["$shapeDescription"] = shape }
        }
        return members
    }

    /// True when `value` satisfies `schema` (no problems).
    private func matches(_ value: JSONValue, _ schema: JSONValue) -> Bool {
        var scratch = [FileIssue]()
        check(value, against: schema, path: "", file: "", into: &scratch)
        return scratch.isEmpty
    }

    private func check(
        _ value: JSONValue, against schema: JSONValue, path: String, file: String, into issues: inout [FileIssue]
    ) {
        let schema = resolve(schema)
        func issue(_ problem: String) { issues.append(FileIssue(file: file, field: path, problem: problem)) }

        if case .array(let alternatives)? = schema["oneOf"] {
            if alternatives.filter({ matches(value, $0) }).count != 1 {
                issue(Self.describeOneOf(schema, value: value))
            }
            return
        }
        if let expected = Self.types(schema["type"]), !expected.contains(where: { Self.value(value, is: $0) }) {
            issue("expected \(expected.map(Self.noun).joined(separator: " or ")), got \(value.typeName).")
            return
        }
        if case .array(let allowed)? = schema["enum"], !allowed.contains(value) {
            let list = allowed.map { $0.scalarText ?? "null" }.joined(separator: ", ")
            issue(
                "'\(DisplayText.sanitized(value.scalarText ?? value.typeName, limit: 60))' is not allowed; use one of: \(list)."
            )
            return
        }
        if let const = schema["const"], const != value {
            issue("must be \(const.scalarText ?? "\(const)").")
        }
        switch value {
        case .string(let text):
            if let minimum = schema["minLength"].flatMap(Self.number), Double(text.count) < minimum {
                issue(minimum == 1 ? "must not be empty." : "must be at least \(Int(minimum)) characters.")
            }
        case .integer, .number:
            let number = Self.number(value) ?? 0
            if let minimum = schema["minimum"].flatMap(Self.number), number < minimum {
                issue("must be \(Self.text(minimum)) or more.")
            }
            if let maximum = schema["maximum"].flatMap(Self.number), number > maximum {
                issue("must be \(Self.text(maximum)) or less.")
            }
        case .array(let elements):
            if let minimum = schema["minItems"].flatMap(Self.number), Double(elements.count) < minimum {
                issue("must list at least \(Int(minimum)) item\(minimum == 1 ? "" : "s").")
            }
            if let items = schema["items"] {
                for (index, element) in elements.enumerated() {
                    check(element, against: items, path: "\(path)[\(index)]", file: file, into: &issues)
                }
            }
        case .object(let members):
            checkObject(members, schema: schema, path: path, file: file, into: &issues)
        case .null, .bool:
            break
        }
    }

    private func checkObject(
        _ members: [String: JSONValue], schema: [String: JSONValue], path: String, file: String,
        into issues: inout [FileIssue]
    ) {
        func child(_ name: String) -> String { path.isEmpty ? name : "\(path).\(name)" }
        var required = Set<String>()
        if case .array(let names)? = schema["required"] { required.formUnion(names.compactMap(\.scalarText)) }
        if case .array(let conditions)? = schema["allOf"] {
            for condition in conditions {
                guard case .object(let parts) = condition, let condition = parts["if"], let then = parts["then"],
                    matches(.object(members), condition), case .object(let thenMembers) = then,
                    case .array(let names)? = thenMembers["required"]
                else { continue }
                required.formUnion(names.compactMap(\.scalarText))
            }
        }
        for name in required.sorted() where members[name] == nil || members[name] == .null {
            issues.append(FileIssue(file: file, field: child(name), problem: "missing; it is required here."))
        }
        let properties: [String: JSONValue]
        if case .object(let declared)? = schema["properties"] { properties = declared } else { properties = [:] }
        var patterns = [NamePattern]()
        if case .object(let patternProperties)? = schema["patternProperties"] {
            patterns = patternProperties.keys.compactMap(NamePattern.init)
        }
        for (name, value) in members.sorted(by: { $0.key < $1.key }) {
            if let property = properties[name] {
                check(value, against: property, path: child(name), file: file, into: &issues)
            } else if patterns.contains(where: { $0.matches(name) }) {
                continue
            } else if let additional = schema["additionalProperties"] {
                if additional == .bool(false) {
                    let hint = Self.nearest(name, in: Array(properties.keys)).map { " Did you mean '\($0)'?" } ?? ""
                    issues.append(
                        FileIssue(
                            file: file, field: child(name),
                            problem:
                                "unknown field.\(hint) Check its spelling against \(reference) (names are case-sensitive)."
                        ))
                } else {
                    check(value, against: additional, path: child(name), file: file, into: &issues)
                }
            }
        }
    }

    /// A `patternProperties` key (JSON Schema: a regular expression a member
    /// name is searched with). A leading character class such as the
    /// schema's own `^[$_]` (`$schema`, `_comment`) is matched here directly:
    /// Swift's regex engine costs about half a millisecond at its first use,
    /// in every command that reads a descriptor. Any other pattern goes to it.
    enum NamePattern {
        case firstCharacter(in: Set<Character>)
        case regex(Regex<AnyRegexOutput>)

        init?(_ pattern: String) {
            if pattern.hasPrefix("^["), pattern.hasSuffix("]"), pattern.count > 3 {
                let members = pattern.dropFirst(2).dropLast()
                // Only literal members: no ranges, negation, escapes or nested classes.
                if !members.contains(where: { "\\^-[]".contains($0) }) {
                    self = .firstCharacter(in: Set(members))
                    return
                }
            }
            guard let regex = try? Regex(pattern) else { return nil }
            self = .regex(regex)
        }

        func matches(_ name: String) -> Bool {
            switch self {
            case .firstCharacter(let set): return name.first.map(set.contains) ?? false
            case .regex(let regex): return name.contains(regex)
            }
        }
    }

    // MARK: - Words

    private static func types(_ type: JSONValue?) -> [String]? {
        switch type {
        case .string(let one)?: return [one]
        case .array(let many)?: return many.compactMap(\.scalarText)
        default: return nil
        }
    }

    private static func value(_ value: JSONValue, is type: String) -> Bool {
        switch (type, value) {
        case ("string", .string), ("boolean", .bool), ("object", .object), ("array", .array), ("null", .null),
            ("integer", .integer), ("number", .integer), ("number", .number):
            return true
        case ("integer", .number(let number)):
            return number.rounded() == number
        default:
            return false
        }
    }

    private static func noun(_ type: String) -> String {
        switch type {
        case "string": return "a string"
        case "boolean": return "true or false"
        case "integer": return "a whole number"
        case "number": return "a number"
        case "object": return "an object"
        case "array": return "an array"
        case "null": return "null"
        default: return type
        }
    }

    private static func describeOneOf(_ schema: [String: JSONValue], value: JSONValue) -> String {
        if case .string(let description)? = schema["$shapeDescription"] ?? schema["description"],
            let first = description.first
        {
            let text = description.hasSuffix(".") ? String(description.dropLast()) : description
            return "expected \(first.lowercased())\(text.dropFirst()); got \(value.typeName)."
        }
        return "does not match any allowed form; got \(value.typeName)."
    }

    private static func number(_ value: JSONValue) -> Double? {
        switch value {
        case .integer(let number): return Double(number)
        case .number(let number): return number
        default: return nil
        }
    }

    private static func text(_ number: Double) -> String {
        number.rounded() == number ? String(Int64(number)) : String(number)
    }

    /// The known name closest to `name`: the same one in another case, or one edit or two away.
    static func nearest(_ name: String, in known: [String]) -> String? {
        // No field's name is this long: nothing is near, and the distance
        // to each known name (a row per character) took seconds for a
        // megabyte-long one.
        guard name.utf8.count <= 64 else { return nil }
        if let sameLetters = known.first(where: { $0.lowercased() == name.lowercased() }) { return sameLetters }
        let scored = known.map { ($0, ProviderCatalog.editDistance(name.lowercased(), $0.lowercased())) }
        return scored.filter { $0.1 <= max(1, min(2, name.count / 4)) }.min { ($0.1, $0.0) < ($1.1, $1.0) }?.0
    }
}
