import Foundation

/// Reads descriptor files and turns every kind of failure into a
/// ``FileIssue`` that names the file and the field.
package struct DescriptorLoader: Sendable {
    package init() {}

    /// Loads, decodes and validates one file.
    /// - Throws: ``AuthKitError/invalidFile(_:)`` listing every problem found.
    package func load(contentsOf url: URL) throws -> ProviderDescriptor {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw AuthKitError.invalidFile([
                FileIssue(file: url.path, field: "", problem: "cannot be read (\(Self.reason(error))).")
            ])
        }
        let descriptor = try decode(data, file: url.path)
        let stem = url.deletingPathExtension().lastPathComponent
        guard descriptor.id == stem else { throw AuthKitError.invalidFile([ProviderCatalog.nameMismatch(file: url.path, id: descriptor.id)]) }
        return descriptor
    }

    /// Decodes and validates descriptor JSON; `file` names it in errors.
    package func decode(_ data: Data, file: String) throws -> ProviderDescriptor {
        let descriptor: DescriptorFile
        do {
            descriptor = try JSONDecoder().decode(DescriptorFile.self, from: data)
        } catch let error as DecodingError {
            if case .dataCorrupted(let context) = error, context.codingPath.isEmpty {
                throw AuthKitError.invalidFile([FileIssue(file: file, field: "", problem: "is not valid JSON: \(Self.syntaxError(in: data))")])
            }
            throw AuthKitError.invalidFile([Self.issue(for: error, file: file)])
        } catch {
            throw AuthKitError.invalidFile([FileIssue(file: file, field: "", problem: Self.reason(error))])
        }
        var issues = unknownMembers(in: data, descriptor: descriptor, file: file)
        issues += DescriptorValidator().validate(descriptor, file: file)
        guard issues.isEmpty else { throw AuthKitError.invalidFile(issues) }
        return descriptor.resolved(source: file)
    }

    /// Members the format does not define, found by re-encoding the decoded
    /// descriptor and comparing: a typo such as `sendRedirectUri` would
    /// otherwise be ignored silently and the default used.
    private func unknownMembers(in data: Data, descriptor: DescriptorFile, file: String) -> [FileIssue] {
        guard let raw = try? JSONDecoder().decode(JSONValue.self, from: data),
              let reencoded = try? JSONDecoder().decode(JSONValue.self, from: JSONEncoder().encode(descriptor))
        else { return [] }
        var issues = [FileIssue]()
        func walk(_ raw: JSONValue, _ known: JSONValue?, path: String) {
            switch (raw, known) {
            case (.object(let members), .object(let knownMembers)):
                for (name, value) in members.sorted(by: { $0.key < $1.key }) {
                    let childPath = path.isEmpty ? name : "\(path).\(name)"
                    if let knownValue = knownMembers[name] {
                        walk(value, knownValue, path: childPath)
                    } else if value != .null, !(path.isEmpty && (name.hasPrefix("$") || name.hasPrefix("_"))) {
                        issues.append(FileIssue(
                            file: file, field: childPath,
                            problem: "unknown field; check its spelling against README.md or providers/schema.json (names are case-sensitive)."))
                    }
                }
            case (.array(let elements), .array(let knownElements)):
                for (index, element) in elements.enumerated() where index < knownElements.count {
                    walk(element, knownElements[index], path: "\(path)[\(index)]")
                }
            default:
                break
            }
        }
        walk(raw, reencoded, path: "")
        return issues
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
            return FileIssue(file: file, field: path(context.codingPath),
                                   problem: "has the wrong type; expected \(describe(type)).")
        case .valueNotFound(let type, let context):
            return FileIssue(file: file, field: path(context.codingPath),
                                   problem: "is null; expected \(describe(type)).")
        case .dataCorrupted(let context):
            if context.codingPath.isEmpty {
                // Malformed JSON: the underlying error says where ("around line 3, column 7").
                let detail = context.underlyingError.map(reason) ?? context.debugDescription
                return FileIssue(file: file, field: "", problem: "is not valid JSON: \(detail)")
            }
            let field = path(context.codingPath)
            if field.hasSuffix("protocol") {
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
            return name.hasPrefix("Dictionary") ? "an object" : (name.hasPrefix("Array") ? "an array" : "an object (\(name))")
        }
    }

    /// Where JSON text is malformed, as "line L, column C: detail".
    ///
    /// `JSONDecoder` on Linux reports no position, but `JSONSerialization`
    /// reports a byte offset ("around character 25"), which is turned into a
    /// line and column a person can find in an editor.
    static func syntaxError(in data: Data) -> String {
        do {
            _ = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
            return "the document is not a JSON object"
        } catch {
            let detail = reason(error)
            guard let range = detail.range(of: "character "),
                  let offset = Int(detail[range.upperBound...].prefix { $0.isNumber }) else { return detail }
            let prefix = data.prefix(max(0, min(offset, data.count)))
            let line = prefix.filter { $0 == UInt8(ascii: "\n") }.count + 1
            let lineStart = prefix.lastIndex(of: UInt8(ascii: "\n")).map { $0 + 1 } ?? prefix.startIndex
            let column = String(decoding: prefix[lineStart...], as: UTF8.self).count + 1
            let what = detail.replacingOccurrences(of: #" around character \d+\.?"#, with: "", options: .regularExpression)
            return "line \(line), column \(column): \(what)"
        }
    }

    static func reason(_ error: Error) -> String {
        let nsError = error as NSError
        if let detail = nsError.userInfo[NSDebugDescriptionErrorKey] as? String { return detail }
        return nsError.localizedDescription
    }
}
