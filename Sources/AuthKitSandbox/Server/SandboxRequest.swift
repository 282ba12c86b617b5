import AuthKit

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A request as the emulation reads it: the raw target split once, the
/// parameters of the query and of a form or JSON body.
package struct SandboxRequest: Sendable {
    var method: String
    /// The path as sent (percent-encoded), without the query.
    var path: String
    /// The raw query, without `?`; `nil` when the target had none.
    var rawQuery: String?
    /// Header names lowercased.
    var headers: [(name: String, value: String)]
    var body: Data
    /// `http://127.0.0.1:PORT`, from the address the server is bound to.
    var origin: String
    /// The `DPoP` header's proof, its signature checked (RFC 9449 §4.3).
    var proof: SignatureCheck<VerifiedProof>?
    /// The body's `client_assertion`, its signature checked (RFC 7523 §3).
    var assertion: SignatureCheck<VerifiedAssertion>?
    /// A form body's parameters, decoded once when the request is read:
    /// routing, the signature check and the step that answers all read
    /// them, and a body may be a megabyte. `nil` for any other body.
    private let form: Result<[(String, String)], ParameterProblem>?

    package init(method: String, target: String, headers: [(name: String, value: String)], body: Data, origin: String) {
        self.method = method
        if let mark = target.firstIndex(of: "?") {
            path = String(target[..<mark])
            rawQuery = String(target[target.index(after: mark)...])
        } else {
            path = target
            rawQuery = nil
        }
        self.headers = headers.map { ($0.name.lowercased(), $0.value) }
        self.body = body
        self.origin = origin
        // As ``mediaType`` reads it: the first Content-Type.
        let contentType = self.headers.first { $0.name == "content-type" }?.value
        if !body.isEmpty, contentType.map(AuthKit.mediaType(ofContentType:)) == "application/x-www-form-urlencoded" {
            if let text = String(data: body, encoding: .utf8), let pairs = FormURLEncoding.decode(text) {
                form = .success(pairs)
            } else {
                form = .failure(.malformed("the body is not form-encoded"))
            }
        } else {
            form = nil
        }
    }

    /// The body's `client_assertion` (RFC 7523 §2.2), for a POST: in a form,
    /// or in a JSON object, where a descriptor's `json` call puts it (its
    /// signature went unchecked, and the client was told it sent none).
    var clientAssertion: String? {
        guard method == "POST" else { return nil }
        if case .success(let pairs)? = form { return pairs.first { $0.0 == "client_assertion" }?.1 }
        guard case .success(let pairs) = bodyParameters(.json), !body.isEmpty else { return nil }
        return pairs.first { $0.0 == "client_assertion" }?.1
    }

    /// For events and messages: never the query, where secrets may travel.
    var line: String { "\(method) \(path)" }

    func header(_ name: String) -> String? { headers.first { $0.name == name }?.value }

    /// The media type of the body, lowercased, without parameters.
    var mediaType: String? {
        header("content-type").map(AuthKit.mediaType(ofContentType:))
    }

    /// The query's parameters; `nil` when it is not form-encoded correctly.
    var query: [(String, String)]? { rawQuery.map { FormURLEncoding.decode($0) } ?? [] }

    /// The URL the client signed or requested, for OAuth 1.0a: origin + target.
    var url: URL? { URL(string: origin + path + (rawQuery.map { "?" + $0 } ?? "")) }

    /// The body's parameters as `encoding` says they must come, or why not.
    func bodyParameters(_ encoding: BodyEncoding) -> Result<[(String, String)], ParameterProblem> {
        switch encoding {
        case .query:
            guard let query else { return .failure(.malformed("the query is not form-encoded")) }
            return .success(query)
        case .form:
            if body.isEmpty { return .success([]) }
            guard mediaType == "application/x-www-form-urlencoded", let form else {
                return .failure(.wrongEncoding("a form body (Content-Type: application/x-www-form-urlencoded)"))
            }
            return form
        case .json:
            if body.isEmpty { return .success([]) }
            guard mediaType == "application/json" else {
                return .failure(.wrongEncoding("a JSON body (Content-Type: application/json)"))
            }
            // A name given twice is refused, as a form's parameter sent twice
            // is (RFC 6749 §3.2): kept last, `client_secret` twice passed the
            // client's authentication with whichever value was right.
            let parsed: JSONValue
            do {
                parsed = try JSONValue(parsing: body, repeatedNames: .refused)
            } catch let failure as JSONParser.Failure where failure.repeatedField != nil {
                return .failure(.malformed("'\(failure.repeatedField ?? "")' is sent more than once (RFC 6749 §3.2)"))
            } catch {
                return .failure(.malformed("the body is not a JSON object"))
            }
            guard case .object(let members) = parsed else {
                return .failure(.malformed("the body is not a JSON object"))
            }
            return .success(members.sorted { $0.key < $1.key }.map { ($0.key, $0.value.scalarText ?? "") })
        }
    }

    enum ParameterProblem: Error, Sendable {
        case wrongEncoding(String)
        case malformed(String)

        var text: String {
            switch self {
            case .wrongEncoding(let expected): "expected \(expected), as the descriptor says"
            case .malformed(let what): what
            }
        }
    }
}

/// Parameters by name, refusing repeats (RFC 6749 §3.1, §3.2: "parameters MUST
/// NOT be included more than once").
struct Parameters: Sendable {
    private(set) var values: [String: String] = [:]
    /// The first name sent more than once.
    private(set) var repeated: String?

    init(_ pairs: [(String, String)]) {
        for (name, value) in pairs {
            if values[name] != nil, repeated == nil { repeated = name }
            values[name] = value
        }
    }

    subscript(name: String) -> String? { values[name].flatMap { $0.isEmpty ? nil : $0 } }
    func has(_ name: String) -> Bool { values[name] != nil }
    mutating func merge(_ other: Parameters) {
        for (name, value) in other.values {
            if values[name] != nil, repeated == nil { repeated = name }
            values[name] = value
        }
        if repeated == nil { repeated = other.repeated }
    }
}
