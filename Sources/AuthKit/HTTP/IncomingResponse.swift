import HTTPTypes

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A response as the engines read it.
package struct IncomingResponse: Sendable {
    package var status: Int
    package var headers: HTTPFields
    package var body: Data

    /// The secrets the request carried, masked in any provider text an error quotes.
    package var secrets: [String] = []

    package init(status: Int, headers: HTTPFields, body: Data, secrets: [String]) {
        self.status = status
        self.headers = headers
        self.body = body
        self.secrets = secrets
    }

    /// For tests and fuzzers: a response from plain values.
    package init(status: Int, headers: [(String, String)] = [], body: Data = Data()) {
        self.status = status
        var fields = HTTPFields()
        for (name, value) in headers {
            if let name = HTTPField.Name(name) { fields.append(HTTPField(name: name, value: value)) }
        }
        self.headers = fields
        self.body = body
    }

    package func header(_ name: String) -> String? {
        HTTPField.Name(name).flatMap { headers[$0] }
    }

    /// The media type without parameters, lowercased: `application/json`.
    package var mediaType: String? {
        // A linear look: HTTPFields' subscript builds a name index first,
        // which costs more than reading the few fields an answer has.
        headers.first(where: { $0.name == .contentType }).map { AuthKit.mediaType(ofContentType: $0.value) }
    }
}
