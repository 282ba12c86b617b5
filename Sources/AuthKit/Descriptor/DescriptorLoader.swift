#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Reads descriptor files and turns every kind of failure into a
/// `FileIssue` that names the file and the field.
package struct DescriptorLoader: Sendable {
    package init() {}

    /// The most a provider file or `config.json` may hold. The largest
    /// bundled descriptor is under 5 KB; a file past this is not one, and
    /// is not read into memory to find that out.
    package static let maximumFileSize = 1 << 20

    /// Loads, decodes and validates one file.
    /// - Throws: ``AuthKitError/Code/invalidFile`` listing every problem found.
    /// `displayPath` names the file in messages (the path as the user typed it); default the full path.
    /// `accepting`: a regular file only, unless a command line names a
    /// file that may be a shell's `<(…)` (a named pipe whose writer never
    /// comes held a library's caller for ever).
    package func load(
        contentsOf url: URL, displayPath: String? = nil, accepting: FileSystem.Readable = .regularFile
    ) throws -> ProviderDescriptor {
        let path = displayPath ?? url.path
        if FileSystem.isDirectory(url.path) {
            throw AuthKitError.invalidFile([
                FileIssue(
                    file: path, field: "",
                    problem: "is a directory; name the descriptor files in it (for example \(path)/*.json).")
            ])
        }
        let data: Data
        do {
            data = try FileSystem.contents(of: url.path, accepting: accepting, limit: Self.maximumFileSize)
        } catch {
            throw AuthKitError.invalidFile([FileIssue(file: path, field: "", problem: error.description)])
        }
        let descriptor = try decode(data, file: path)
        let stem = url.deletingPathExtension().lastPathComponent
        // A pipe (`providers validate <(curl …)`) has no name of its own to match.
        guard descriptor.id == stem || !FileSystem.isRegularFile(url.path) else {
            throw AuthKitError.invalidFile([ProviderCatalog.nameMismatch(file: path, id: descriptor.id)])
        }
        return descriptor
    }

    /// Decodes and validates descriptor JSON; `file` names it in errors.
    ///
    /// Every problem is listed, not the first: the JSON's shape is checked
    /// against `providers/schema.json` (``SchemaCheck``: types, allowed
    /// values, required and unknown fields), and whatever can be decoded is
    /// then checked for meaning (`DescriptorValidator`: URLs, placeholders,
    /// template variables). Where both find a problem in one field, the more
    /// specific message stays.
    /// The most problems said of one file.
    static let problemsSaid = 50

    package func decode(_ data: Data, file: String) throws -> ProviderDescriptor {
        let raw = try Self.parseRefusingRepeatedNames(data, file: file)
        guard case .object = raw else {
            throw AuthKitError.invalidFile([
                FileIssue(file: file, field: "", problem: "must be a JSON object, not \(raw.typeName).")
            ])
        }
        var issues =
            SchemaCheck.descriptor.problems(in: raw, file: file) + Self.controlCharacterIssues(in: raw, file: file)
        // A file with this many problems is no descriptor to check further:
        // the first are said, and the rest counted. (Taking each refused field
        // out below copies the document once per problem: 60,000 unknown
        // keys in a 769 KB file took 86 s.)
        if issues.count > Self.problemsSaid {
            throw AuthKitError.invalidFile(
                Array(issues.prefix(Self.problemsSaid)) + [
                    FileIssue(
                        file: file, field: "",
                        problem: "has \(issues.count - Self.problemsSaid) more problems; fix the ones above first.")
                ])
        }
        // The meaning checks run on what is left once the fields the schema
        // refused are taken out, so a bad `pkce` does not hide a bad URL.
        let pruned = issues.reduce(raw) { $0.removing(path: $1.field) }
        let descriptor =
            (try? JSONDecoder().decode(DescriptorFile.self, from: data))
            ?? (try? JSONEncoder().encode(pruned)).flatMap { try? JSONDecoder().decode(DescriptorFile.self, from: $0) }
        if let descriptor {
            let semantic = DescriptorValidator().validate(descriptor, file: file)
            let fields = semantic.map(\.field)
            issues =
                issues.filter { shape in
                    !fields.contains {
                        $0 == shape.field || shape.field.hasPrefix($0 + ".") || shape.field.hasPrefix($0 + "[")
                    }
                } + semantic
        } else if issues.isEmpty {
            // The schema let through what the types refuse: report the decoder's view.
            do {
                _ = try JSONDecoder().decode(DescriptorFile.self, from: data)
            } catch let error as DecodingError {
                issues.append(Self.issue(for: error, file: file))
            }
        }
        guard issues.isEmpty, let descriptor else {
            throw AuthKitError.invalidFile(issues.sorted { $0.field < $1.field })
        }
        return descriptor.resolved(source: file)
    }

    static func issue(for error: DecodingError, file: String) -> FileIssue {
        func path(_ codingPath: [CodingKey]) -> String {
            var text = ""
            for key in codingPath {
                if let index = key.intValue {
                    text += "[\(index)]"
                } else {
                    text += text.isEmpty ? key.stringValue : ".\(key.stringValue)"
                }
            }
            return text
        }
        switch error {
        case .keyNotFound(let key, let context):
            let field = path(context.codingPath + [key])
            return FileIssue(file: file, field: field, problem: "required field is missing.")
        case .typeMismatch(let type, let context):
            return FileIssue(
                file: file, field: path(context.codingPath),
                problem: "has the wrong type; expected \(describe(type)).")
        case .valueNotFound(let type, let context):
            return FileIssue(
                file: file, field: path(context.codingPath),
                problem: "is null; expected \(describe(type)).")
        case .dataCorrupted(let context):
            if context.codingPath.isEmpty {
                // Malformed JSON: the underlying error says where ("around line 3, column 7").
                let detail = context.underlyingError.map(reason) ?? context.debugDescription
                return FileIssue(file: file, field: "", problem: "is not valid JSON: \(detail)")
            }
            let field = path(context.codingPath)
            // (`kind` in a credentials file.) Not the decoder's "Cannot
            // initialize ProtocolKind from invalid String value", which names a Swift type.
            if field.hasSuffix("protocol") || field.hasSuffix("kind") {
                return FileIssue(file: file, field: field, problem: "unknown protocol; use \"oauth2\" or \"oauth1\".")
            }
            return FileIssue(file: file, field: field, problem: context.debugDescription)
        @unknown default:
            return FileIssue(file: file, field: "", problem: String(describing: error))
        }
    }

    private static func describe(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: return "a string"
        case is Bool.Type: return "true or false"
        case is Int.Type, is Double.Type: return "a number"
        case is [Int].Type: return "an array of numbers"
        case is [String].Type: return "an array of strings"
        default:
            let name = String(describing: type)
            return name.hasPrefix("Dictionary")
                ? "an object" : (name.hasPrefix("Array") ? "an array" : "an object (\(name))")
        }
    }

    /// Parses a file a person writes and reviews (a provider file,
    /// `config.json`), refusing a member name given twice in one object.
    ///
    /// Readers disagree on which of the two counts (RFC 8259 §4): Foundation's
    /// `JSONDecoder` keeps the first, `jq`, Python and the schema check here
    /// the last. A provider file with two `token` sections could show a
    /// reviewer the provider's token endpoint while AuthKit sent the code and
    /// the client secret to the other one.
    /// - Throws: ``AuthKitError/Code/invalidFile`` naming the field and the
    ///   lines of both, or the line and column where the JSON is malformed.
    static func parseRefusingRepeatedNames(_ data: Data, file: String) throws -> JSONValue {
        do {
            return try JSONValue(parsing: data, repeatedNames: .refused)
        } catch let failure as JSONParser.Failure {
            throw AuthKitError.invalidFile([issue(failure, in: data, file: file)])
        }
    }

    /// Why `data` failed strict parsing, for a person: a member given twice
    /// with the lines (or columns) of both, or where the JSON is malformed.
    /// Provider files, `config.json` and the credential store say it alike.
    static func issue(_ failure: JSONParser.Failure, in data: Data, file: String) -> FileIssue {
        if let field = failure.repeatedField, let first = failure.firstOffset {
            return FileIssue(
                file: file, field: field,
                problem:
                    "is given twice (\(places(first, failure.offset, in: data))). JSON readers disagree on which one counts (RFC 8259 §4), so a person or a tool reading this file could see the other one; keep one."
            )
        }
        return FileIssue(file: file, field: "", problem: "is not valid JSON: \(describe(failure, in: data))")
    }

    /// A field for each string in the file that holds a control character
    /// (C0, DEL, C1) or a hidden formatting character (a text-direction
    /// override, a line separator: ``Unicode/Scalar/isHiddenFormatting``),
    /// comments (`_…`, `$…`) aside.
    ///
    /// A provider file has no use for one, and its name, scopes, URLs and
    /// placeholder descriptions are printed on terminals ("approve access to
    /// NAME"), where an ESC sequence from a file someone else wrote would be
    /// obeyed, and a right-to-left override would make the name read as
    /// another provider's. Refused once here rather than escaped at every
    /// place a value is shown.
    static func controlCharacterIssues(in value: JSONValue, path: String = "", file: String) -> [FileIssue] {
        switch value {
        case .object(let members):
            // Comments are top-level members (the schema's `_comment`, `$schema`);
            // deeper, `_p` is a placeholder's, a parameter's or a header's name.
            // A member's name too: a parameter's or a header's is sent and shown as a value is.
            return members.keys.sorted().filter { !path.isEmpty || (!$0.hasPrefix("_") && !$0.hasPrefix("$")) }.flatMap
            { key in
                let field = path.isEmpty ? key : "\(path).\(key)"
                if key.unicodeScalars.contains(where: { $0.isTerminalControl || $0.isHiddenFormatting }) {
                    return [
                        FileIssue(
                            file: file, field: field,
                            problem:
                                "has a name holding a control or invisible formatting character; a provider file has no use for one, and it would reach the terminals its names are shown on. Remove it."
                        )
                    ]
                }
                return controlCharacterIssues(in: members[key]!, path: field, file: file)
            }
        case .array(let elements):
            return elements.enumerated().flatMap {
                controlCharacterIssues(in: $0.element, path: "\(path)[\($0.offset)]", file: file)
            }
        case .string(let text):
            if let control = text.unicodeScalars.first(where: \.isTerminalControl) {
                return [
                    FileIssue(
                        file: file, field: path,
                        problem:
                            "holds a control character (\(control.codePoint)); a provider file has no use for one, and it would reach the terminals its values are shown on. Remove it."
                    )
                ]
            }
            if let hidden = text.unicodeScalars.first(where: \.isHiddenFormatting) {
                return [
                    FileIssue(
                        file: file, field: path,
                        problem:
                            "holds an invisible formatting character (\(hidden.codePoint)), which would make the value read differently on a terminal than it is (a text-direction override can make one name show as another). Remove it."
                    )
                ]
            }
            return []
        case .null, .bool, .integer, .number:
            return []
        }
    }

    /// Where JSON text is malformed, as "line L, column C: detail": AuthKit's
    /// own parser (``JSONParser``) stops at a byte offset, which is turned
    /// into a line and column a person can find in an editor.
    static func syntaxError(in data: Data) -> String {
        do {
            _ = try JSONParser.parse(data)
            return "the document is not a JSON object"
        } catch let failure as JSONParser.Failure {
            return describe(failure, in: data)
        } catch {
            return reason(error)
        }
    }

    private static func describe(_ failure: JSONParser.Failure, in data: Data) -> String {
        let (line, column) = position(of: failure.offset, in: data)
        return "line \(line), column \(column): \(failure.reason)"
    }

    /// Where two byte offsets are, for a person: "lines 3 and 9", or
    /// "line 1, columns 14 and 31" in a file of one line (where "lines 1
    /// and 1" said nothing).
    private static func places(_ first: Int, _ second: Int, in data: Data) -> String {
        let (one, two) = (position(of: first, in: data), position(of: second, in: data))
        return one.line == two.line
            ? "line \(one.line), columns \(one.column) and \(two.column)" : "lines \(one.line) and \(two.line)"
    }

    /// The line and column (in characters, from 1) of a byte offset.
    private static func position(of offset: Int, in data: Data) -> (line: Int, column: Int) {
        let prefix = data.prefix(max(0, min(offset, data.count)))
        let line = prefix.filter { $0 == UInt8(ascii: "\n") }.count + 1
        let lineStart = prefix.lastIndex(of: UInt8(ascii: "\n")).map { $0 + 1 } ?? prefix.startIndex
        let column = String(decoding: prefix[lineStart...], as: UTF8.self).count + 1
        return (line, column)
    }

    /// A file error Foundation reports without the system's error under it,
    /// in words (its description would be "CocoaError.Code(rawValue: 260)").
    static func words(for code: CocoaError.Code) -> String {
        switch code {
        case .fileNoSuchFile, .fileReadNoSuchFile: return "No such file or directory"
        case .fileReadNoPermission, .fileWriteNoPermission: return "Permission denied"
        case .fileReadTooLarge: return "the file is too large to read"
        case .fileReadInapplicableStringEncoding, .fileReadUnknownStringEncoding: return "the file is not UTF-8 text"
        case .fileReadCorruptFile: return "the file is corrupt or not in the expected format"
        case .fileWriteOutOfSpace: return "No space left on device"
        case .fileWriteVolumeReadOnly: return "Read-only file system"
        case .fileWriteFileExists: return "File exists"
        default: return "file error \(code.rawValue) (CocoaError)"
        }
    }

    /// What went wrong, in words: a file-system error's POSIX reason
    /// ("No such file or directory"), a decoding error's field and problem,
    /// rather than a type name and code.
    package static func reason(_ error: Error) -> String {
        switch error {
        case let posix as POSIXError:
            return String(cString: strerror(posix.code.rawValue))
        case let cocoa as CocoaError:
            if let underlying = cocoa.underlying as? POSIXError {
                return String(cString: strerror(underlying.code.rawValue))
            }
            return words(for: cocoa.code)
        case let decoding as DecodingError:
            // Where in the document, and what: "credentials[0].providerID: required field is missing."
            let issue = issue(for: decoding, file: "")
            return issue.field.isEmpty ? issue.problem : "\(issue.field): \(issue.problem)"
        default:
            return "\(error)"
        }
    }
}

extension JSONValue {
    /// This value without the member at `path` (`token.url`, `a.b[2]`); a path
    /// into an array removes the whole array, whose other elements may need it.
    func removing(path: String) -> JSONValue {
        guard !path.isEmpty else { return self }
        let arrayStart = path.firstIndex(of: "[")
        let objectPath = arrayStart.map { String(path[..<$0]) } ?? path
        var parts = objectPath.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard !parts.isEmpty else { return self }
        let last = parts.removeLast()
        func remove(_ value: JSONValue, _ rest: ArraySlice<String>) -> JSONValue {
            guard case .object(var members) = value else { return value }
            if let first = rest.first {
                if let child = members[first] { members[first] = remove(child, rest.dropFirst()) }
            } else {
                members.removeValue(forKey: last)
            }
            return .object(members)
        }
        return remove(self, parts[...])
    }
}
