import ArgumentParser
import AuthKit
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

struct Request: WorkspaceCommand {
    static let configuration = CommandConfiguration(
        abstract: "Send an authorized request with a stored credential and print the response body.",
        discussion: """
        An expired OAuth 2.0 token is refreshed (and saved) first. A response
        that is not 2xx prints its body and exits 3.
        Examples:
          authkit request --provider qiita https://qiita.com/api/v2/authenticated_user
          authkit request --provider twitter -X POST https://api.x.com/1.1/statuses/update.json -d 'status=Hello'
        """)

    @OptionGroup var global: GlobalOptions
    @OptionGroup var account: AccountOptions
    @Option(name: [.customShort("X"), .long], help: "The request method.") var method = "GET"
    @Option(name: [.customShort("d"), .long], help: ArgumentHelp(
        "A request body; sent as application/x-www-form-urlencoded unless a Content-Type header is given.", valueName: "data"))
    var data: String?
    @Option(name: [.customShort("H"), .long], help: ArgumentHelp("A request header, 'Name: value' (repeatable).", valueName: "header"))
    var header: [String] = []
    @Option(help: ArgumentHelp("Seconds to wait for the response.", valueName: "seconds")) var timeout: Int = 30
    @Argument(help: "The URL.") var url: String

    func run(in workspace: Workspace) async throws {
        guard let target = URL(string: url), let scheme = target.scheme?.lowercased(), ["http", "https"].contains(scheme) else {
            throw CLIError("'\(url)' is not an http(s) URL.")
        }
        var request = URLRequest(url: target, timeoutInterval: TimeInterval(timeout))
        request.httpMethod = method.uppercased()
        for line in header {
            let parts = line.split(separator: ":", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard parts.count == 2, !parts[0].isEmpty else { throw CLIError("-H takes 'Name: value'; got '\(line)'.") }
            request.addValue(parts[1], forHTTPHeaderField: parts[0])
        }
        if let data {
            request.httpBody = Data(data.utf8)
            if request.value(forHTTPHeaderField: "Content-Type") == nil {
                request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
            }
        }
        let (credential, authenticator) = try await workspace.freshCredential(account.key)
        let authorized = try authenticator.authorize(request, with: credential)

        let body: Data
        let response: URLResponse
        do {
            (body, response) = try await URLSession.shared.data(for: authorized)
        } catch {
            throw AuthKitError.network(url: target.redactedForLogs, reason: error.localizedDescription)
        }
        FileHandle.standardOutput.write(body)
        if let http = response as? HTTPURLResponse, !(200...299).contains(http.statusCode) {
            throw CLIError("\(method.uppercased()) \(target.redactedForLogs) answered HTTP \(http.statusCode).", status: .providerError)
        }
    }
}
