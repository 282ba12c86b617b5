import AuthKit
import AuthKitSandbox
import Foundation
import HTTPTypes

#if canImport(FoundationNetworking)
    import AuthKitFoundationNetworking // URLSessionHTTPClient on Linux
#endif

/// The bundled descriptor `id`.
func bundled(_ id: String) throws -> ProviderDescriptor {
    try ProviderCatalog(includeBundled: true, directories: []).descriptor(id: id)
}

/// `options` for a public client: no client secret.
func publicClient(_ options: SandboxOptions = SandboxOptions()) -> SandboxOptions {
    var options = options
    options.clientSecret = nil
    return options
}

/// A plain HTTP exchange with the sandbox (no AuthKit policy in the way), for
/// what a hostile or careless client would send.
func raw(_ method: String, _ url: URL, headers: [String: String] = [:], body: String? = nil) async throws -> (
    status: Int, headers: HTTPFields, body: String
) {
    let client = URLSessionHTTPClient()
    var head = HTTPRequest(method: HTTPRequest.Method(method)!, url: url)
    for (name, value) in headers { head.headerFields[HTTPField.Name(name)!] = value }
    let (response, stream) = try await client.send(head, body: body.map { Data($0.utf8) })
    var data = Data()
    for try await chunk in stream { data.append(chunk) }
    return (response.status.code, response.headerFields, String(decoding: data, as: UTF8.self))
}

/// The value of the hidden form field `name` in a sandbox page.
func hiddenValue(_ name: String, in page: String) -> String? {
    guard let range = page.firstRange(of: "name=\"\(name)\" value=\"") else { return nil }
    return String(page[range.upperBound...].prefix { $0 != "\"" })
}

/// The JSON object at `url` read with `credential` through a ``CredentialSource``.
func getJSON(_ url: URL, with client: any Authenticator, credential: Credential) async throws -> (Int, [String: Any]) {
    let store = InMemoryCredentialStore([credential])
    let source = CredentialSource(authenticator: client, store: store, key: credential.key)
    let (response, body) = try await source.send(HTTPRequest(method: .get, url: url))
    var data = Data()
    for try await chunk in body { data.append(chunk) }
    return (response.status.code, (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:])
}
