import AuthKitTestSupport
import Foundation
import Logging
import Testing

@testable import AuthKit

/// The bundled descriptor `id`, with every endpoint host replaced by the test
/// server's, so the real descriptor (not a test copy) is exercised.
func bundledDescriptor(_ id: String, pointingTo server: TestHTTPServer? = nil) throws -> ProviderDescriptor {
    let catalog = ProviderCatalog(includeBundled: true, directories: [])
    guard let entry = catalog.entries[id] else { throw AuthKitError.unknownProvider(id: id, suggestions: []) }
    guard let server else { return entry.descriptor }
    let json = try #require(BundledDescriptors.files.first { $0.name == "\(id).json" }).json
    // Its API's origins name the real hosts (and placeholders the endpoints
    // no longer hold); the test server is loopback, which they allow anyway.
    var object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
    object["api"] = nil
    let withoutAPI = String(
        decoding: try JSONSerialization.data(withJSONObject: object, options: .withoutEscapingSlashes), as: UTF8.self)
    let rewritten = rewriteHosts(withoutAPI, to: server.baseURL)
    return try DescriptorLoader().decode(Data(rewritten.utf8), file: "\(id).json (test)")
}

/// Replaces `https://host` in every URL of a descriptor with `base` (`http://127.0.0.1:PORT`).
func rewriteHosts(_ json: String, to base: String) -> String {
    var output = json
    let pattern = try! NSRegularExpression(pattern: #"https://[A-Za-z0-9.{}-]+(?=/)"#)
    let range = NSRange(output.startIndex..., in: output)
    output = pattern.stringByReplacingMatches(
        in: output, range: range, withTemplate: NSRegularExpression.escapedTemplate(for: base))
    return output
}

/// A stored bearer token (`at-api`) for a provider whose endpoints and API
/// are at `base`, sent through `transport`.
func apiSource(at base: String, through transport: some HTTPClient) throws -> CredentialSource {
    let descriptor = testDescriptor(
        id: "api", protocol: .oauth2, authorization: .init(url: "\(base)/authorize"),
        token: .init(url: "\(base)/token"))
    let client = try OAuth2Client(
        descriptor: descriptor, settings: ClientSettings(clientID: "app"), httpClient: transport)
    let credential = Credential(providerID: "api", accessToken: "at-api")
    return CredentialSource(
        authenticator: client, store: InMemoryCredentialStore([credential]), key: credential.key, httpClient: transport)
}

/// A fixed clock for deterministic expiry assertions.
let fixedNow = Date(timeIntervalSince1970: 1_700_000_000)

/// A user agent that plays the user: it asks for the authorization URL, reads
/// the `state` the client put there, and answers as the provider would.
struct ScriptedUserAgent: UserAgent {
    var redirectPort: Int? = nil
    /// Builds the provider's redirect from the authorization URL's parameters and the redirect URI.
    var answer: @Sendable (_ parameters: [String: String], _ redirectURI: URL) -> String
    let seenURLs = Recorder<URL>()

    func run(_ session: AuthorizationSession) async throws -> URL {
        var redirect = try #require(session.redirectURI)
        if let redirectPort, session.redirectPortIsFlexible {
            var components = try #require(URLComponents(url: redirect, resolvingAgainstBaseURL: false))
            components.port = redirectPort
            redirect = try #require(components.url)
        }
        let url = try await session.makeAuthorizationURL(redirect)
        seenURLs.append(url)
        let query = try #require(URLComponents(url: url, resolvingAgainstBaseURL: false)?.percentEncodedQuery)
        let parameters = Dictionary(
            try #require(FormURLEncoding.decode(query)), uniquingKeysWith: { first, _ in first })
        let answered = try #require(URL(string: answer(parameters, redirect)))
        try session.validateRedirect(answered)
        return answered
    }
}

/// Parses a JSON body into a dictionary for assertions.
func jsonObject(_ data: Data) throws -> [String: String] {
    try JSONDecoder().decode([String: String].self, from: data)
}

func formObject(_ text: String) throws -> [String: String] {
    Dictionary(try #require(FormURLEncoding.decode(text)), uniquingKeysWith: { first, _ in first })
}

/// A logger that keeps what it is told, for a test to read what AuthKit
/// warned about (and that no secret or value was in it).
final class RecordedLog: @unchecked Sendable {
    private let lock = NSLock()
    private var messages: [String] = []

    /// Every message at warning level or above, in order.
    var warnings: [String] { lock.withLock { messages } }

    var logger: Logger { Logger(label: "recorded") { _ in Handler(log: self) } }

    private struct Handler: LogHandler {
        let log: RecordedLog
        var logLevel: Logger.Level = .trace
        var metadata: Logger.Metadata = [:]

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            guard event.level >= .warning else { return }
            log.lock.withLock { log.messages.append("\(event.message)") }
        }
    }
}
