import Foundation
import Testing

@testable import AuthKit

/// Every descriptor default lives in one place, `DescriptorFile.resolved(source:)`.
/// `providers/schema.json` states them with `default` keywords and
/// docs/providers.md in its field tables; these tests hold the three together, so a default changed
/// in one place and not the others fails here.
@Suite struct DescriptorDefaultsTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The smallest files that reach every default: each optional section
    /// present but empty, so resolution fills in all of its members.
    static let minimalOAuth2 = #"""
        {"id": "d", "protocol": "oauth2",
         "authorization": {"url": "https://as.example/authorize"}, "token": {"url": "https://as.example/token"},
         "redirect": {}, "scopes": {}, "issuer": {"identifier": "https://as.example"},
         "followUp": {"url": "https://as.example/follow"}, "refresh": {"url": "https://as.example/refresh"},
         "revocation": {"url": "https://as.example/revoke"}, "device": {"url": "https://as.example/device"},
         "openid": {"keys": "https://as.example/jwks"}}
        """#
    static let minimalOAuth1 = #"""
        {"id": "d1", "protocol": "oauth1", "oauth1": {"requestTokenURL": "https://as.example/rt",
         "authorizeURL": "https://as.example/authorize", "accessTokenURL": "https://as.example/at"}}
        """#

    /// Defaults that depend on another value, stated in the schema's
    /// descriptions rather than as a `default` keyword.
    static let contextual: Set<String> = [
        "name", // the id
        "revocation.parameters", // RFC 7009: token and token_type_hint, when neither these…
        "revocation.clientAuthentication", // …nor this is given: then the token endpoint's
        "token.refreshRequiresClientSecret", // token.requiresClientSecret
        "token.sendRedirectURI", // authorization.sendRedirectURI
        "device.encoding", // the token endpoint's
        "device.clientAuthentication",
        "device.requiresClientSecret",
    ]

    /// `(path, default)` for every `default` keyword in the schema, with a
    /// `$ref`'d definition's members under each place it is used.
    static func schemaDefaults() throws -> [(path: String, value: JSONValue)] {
        let schema = try JSONDecoder().decode(
            JSONValue.self, from: Data(contentsOf: root.appendingPathComponent("providers/schema.json")))
        guard case .object(let top) = schema, case .object(let definitions)? = top["$defs"] else { return [] }
        var found = [(String, JSONValue)]()
        func walk(_ node: JSONValue, path: String) {
            guard case .object(let members) = node else { return }
            if !path.isEmpty, let value = members["default"] { found.append((path, value)) }
            if case .string(let ref)? = members["$ref"], ref.hasPrefix("#/$defs/"),
                let definition = definitions[String(ref.dropFirst(8))]
            {
                walkProperties(of: definition, path: path)
            }
            walkProperties(of: node, path: path)
        }
        func walkProperties(of node: JSONValue, path: String) {
            guard case .object(let members) = node, case .object(let properties)? = members["properties"] else {
                return
            }
            for (name, child) in properties { walk(child, path: path.isEmpty ? name : "\(path).\(name)") }
        }
        walk(schema, path: "")
        return found.sorted { $0.0 < $1.0 }
    }

    /// The resolved descriptor written back out with every value explicit, as JSON.
    static func resolvedFile(_ json: String) throws -> [String: JSONValue] {
        let descriptor = try ProviderDescriptor(json: Data(json.utf8))
        guard case .object(let object) = try JSONDecoder().decode(JSONValue.self, from: descriptor.encodedAsFile())
        else { return [:] }
        return object
    }

    static func value(at path: String, in object: [String: JSONValue]) -> JSONValue? {
        var current = JSONValue.object(object)
        for part in path.split(separator: ".") {
            guard case .object(let members) = current, let next = members[String(part)] else { return nil }
            current = next
        }
        return current
    }

    @Test func theSchemaStatesTheDefaultsResolutionApplies() throws {
        let oauth2 = try Self.resolvedFile(Self.minimalOAuth2)
        let oauth1 = try Self.resolvedFile(Self.minimalOAuth1)
        let defaults = try Self.schemaDefaults()
        #expect(defaults.count >= 40, "the schema should state every default; found \(defaults.count)")
        for (path, expected) in defaults {
            if path == "redirect.scheme" {
                // Written out only when it restricts the scheme; its default is the URI's scheme.
                #expect(
                    try ProviderDescriptor(json: Data(Self.minimalOAuth2.utf8)).redirect.scheme == expected.scalarText)
                continue
            }
            if path.hasPrefix("revocation.") && Self.contextual.contains(path) { continue }
            let object = path.hasPrefix("oauth1.") ? oauth1 : oauth2
            let actual = Self.value(at: path, in: object) ?? .null
            #expect(actual == expected, "schema default of \(path) is \(expected), resolution gives \(actual)")
        }
    }

    @Test func everyDefaultResolutionAddsIsInTheSchema() throws {
        let documented = Set(try Self.schemaDefaults().map(\.path))
        for json in [Self.minimalOAuth2, Self.minimalOAuth1] {
            let given = try JSONDecoder().decode([String: JSONValue].self, from: Data(json.utf8))
            for path in Self.leaves(of: .object(try Self.resolvedFile(json)))
            where Self.value(at: path, in: given) == nil && !Self.contextual.contains(path) {
                #expect(
                    documented.contains(path),
                    "resolution fills in \(path), but providers/schema.json states no default for it")
            }
        }
    }

    /// Members whose value is a map of the user's own names, compared whole.
    static let maps: Set<String> = ["parameters", "headers", "requestTokenParameters", "placeholders"]

    static func leaves(of node: JSONValue, path: String = "") -> [String] {
        let last = path.split(separator: ".").last.map(String.init) ?? ""
        guard case .object(let members) = node, !maps.contains(last) else { return [path] }
        return members.flatMap { leaves(of: $1, path: path.isEmpty ? $0 : "\(path).\($0)") }
    }

    /// docs/providers.md's field tables: each defaulted field has a row whose last cell
    /// shows the schema's default. Members of a request template are listed as
    /// `template.X`, of a response mapping as `response.X`.
    @Test func theFieldReferenceStatesTheSameDefaults() throws {
        let readme = try String(contentsOf: Self.root.appendingPathComponent("docs/providers.md"), encoding: .utf8)
        var rows = [String: String]()
        for line in readme.split(separator: "\n") where line.hasPrefix("| `") {
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map {
                $0.trimmingCharacters(in: .whitespaces)
            }
            guard cells.count >= 4 else { continue }
            for name in cells[1].components(separatedBy: "` / `") {
                rows[name.trimmingCharacters(in: CharacterSet(charactersIn: "`"))] = cells[cells.count - 2]
            }
        }
        var checked = Set<String>()
        for (path, value) in try Self.schemaDefaults() {
            var name = path
            for template in ["followUp.", "refresh.", "revocation."] where name.hasPrefix(template) {
                name = "template." + name.dropFirst(template.count)
            }
            if let range = name.range(of: "response.") { name = String(name[range.lowerBound...]) }
            guard checked.insert(name).inserted else { continue }
            let shown: String
            switch value {
            case .string(let text): shown = text == " " ? "`\" \"`" : "`\(text)`"
            case .null: shown = "any"
            case .array(let items) where items.isEmpty: shown = "`[]`"
            case .object(let members) where members.isEmpty: shown = "none"
            case .array(let items): shown = "`[\(items.compactMap(\.scalarText).joined(separator: ", "))]`"
            default: shown = "`\(value.scalarText ?? "")`"
            }
            let row = try #require(rows[name], "docs/providers.md has no field-table row for `\(name)`")
            #expect(
                row.contains(shown), "docs/providers.md's default for `\(name)` is '\(row)'; the schema says \(shown)")
        }
    }
}

/// Validation lists every problem of a file, each with its field and what to
/// write, instead of stopping at the first or quoting the decoder.
@Suite struct DescriptorProblemListTests {
    @Test func everyProblemIsListedInWords() throws {
        let json = #"""
            {"id": "acme", "protocol": "oauth2", "pkce": "plain", "tokenn": {},
             "authorization": {"url": "https://{tenant}.acme.example/authorize"},
             "token": {"url": "http://acme.example/token"}, "scopes": {"separator": ""}}
            """#
        let error = try #require(throws: AuthKitError.self) {
            _ = try ProviderDescriptor(json: Data(json.utf8), source: "acme.json")
        }
        guard case .invalidFile(let issues) = error.reason else {
            Issue.record("\(error)")
            return
        }
        let byField = Dictionary(grouping: issues, by: \.field).mapValues { $0.map(\.problem).joined(separator: " | ") }
        #expect(
            byField["pkce"]?.contains("'plain' is not allowed; use one of: none, S256, required.") == true, "\(byField)"
        )
        #expect(byField["tokenn"]?.contains("unknown field. Did you mean 'token'?") == true, "\(byField)")
        #expect(byField["authorization.url"]?.contains("'{tenant}' is an unresolved placeholder") == true, "\(byField)")
        #expect(byField["token.url"]?.contains("must use https") == true, "\(byField)")
        #expect(byField["scopes.separator"]?.contains("must not be empty") == true, "\(byField)")
        #expect(!"\(error)".contains("Cannot initialize"), "the decoder's own words: \(error)")
    }

    @Test func aMissingRequiredFieldHidesNothingElse() throws {
        let json =
            #"{"protocol": "oauth2", "pkce": "plain", "authorization": {"url": "https://as.example/a"}, "token": {"url": "https://as.example/t"}}"#
        let error = try #require(throws: AuthKitError.self) {
            _ = try ProviderDescriptor(json: Data(json.utf8), source: "x.json")
        }
        guard case .invalidFile(let issues) = error.reason else {
            Issue.record("not a file's problems: \(error)")
            return
        }
        #expect(Set(issues.map(\.field)) == ["id", "pkce"], "\(issues)")
    }
}
