import AuthKit

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Token answers and errors written where the descriptor says the client
/// reads them: Qiita's token at `token` with status 201, Instagram's error
/// code at `error_type`… The first path of each field is the one written (a
/// descriptor lists the provider's documented shape first).
struct ProviderShape: Sendable {
    let mapping: TokenResponseMapping

    struct TokenFields: Sendable {
        var accessToken: String
        var expiresIn: Int?
        var refreshToken: String?
        var scope: String?
    }

    func token(_ fields: TokenFields) -> JSONValue {
        var root = JSONValue.object([:])
        write(.string(fields.accessToken), at: mapping.accessToken, in: &root)
        // RFC 6749 §5.1 requires token_type; a descriptor that does not
        // (Qiita, Instagram) describes a provider that does not send one.
        if mapping.requireTokenType { write(.string("Bearer"), at: mapping.tokenType, in: &root) }
        if let expiresIn = fields.expiresIn { write(.integer(Int64(expiresIn)), at: mapping.expiresIn, in: &root) }
        if let refresh = fields.refreshToken { write(.string(refresh), at: mapping.refreshToken, in: &root) }
        if let scope = fields.scope { write(.string(scope), at: mapping.scope, in: &root) }
        return root
    }

    func error(_ refusal: Refusal) -> JSONValue {
        var root = JSONValue.object([:])
        write(.string(refusal.code), at: mapping.errorCode, in: &root)
        write(.string(refusal.description), at: mapping.errorDescription, in: &root)
        return root
    }

    private func write(_ value: JSONValue, at paths: FieldPaths, in root: inout JSONValue) {
        guard let path = paths.paths.first else { return }
        root = Self.setting(value, at: path.components[...], in: root)
    }

    /// `node` with `value` at `components`, creating objects and arrays on the way.
    static func setting(_ value: JSONValue, at components: ArraySlice<FieldPath.Component>, in node: JSONValue?)
        -> JSONValue
    {
        guard let first = components.first else { return value }
        let rest = components.dropFirst()
        switch first {
        case .member(let name):
            var members: [String: JSONValue] = [:]
            if case .object(let existing)? = node { members = existing }
            members[name] = setting(value, at: rest, in: members[name])
            return .object(members)
        case .index(let index):
            // A descriptor is the user's own file, but `data[99999999]` must not allocate the machine away.
            guard index < 64 else { return node ?? .null }
            var elements: [JSONValue] = []
            if case .array(let existing)? = node { elements = existing }
            while elements.count <= index { elements.append(.object([:])) }
            elements[index] = setting(value, at: rest, in: elements[index])
            return .array(elements)
        }
    }
}
