import ArgumentParser
import AuthKit
import Foundation

struct TokenList: WorkspaceCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List stored credentials (tokens masked).",
        discussion: "Example:\n  authkit token list --json | jq '.[].provider'")

    @OptionGroup var global: GlobalOptions
    @Flag(help: "Print JSON (without tokens).") var json = false

    struct Row: Encodable {
        var provider: String
        var label: String?
        var `protocol`: String
        var scopes: [String]
        var expiresAt: Date?
        /// When the refresh token expires: the user must sign in again by then.
        var refreshTokenExpiresAt: Date?
    }

    func run(in workspace: Workspace) async throws {
        let credentials = try await workspace.store.allCredentials()
        if json {
            try Console.json(credentials.map {
                Row(provider: $0.providerID, label: $0.label, protocol: $0.kind.rawValue, scopes: $0.scopes, expiresAt: $0.expiresAt,
                    refreshTokenExpiresAt: $0.refreshTokenExpiresAt)
            })
            return
        }
        if credentials.isEmpty {
            Console.err("No stored credentials. Sign in with: authkit authorize --provider NAME")
            return
        }
        for credential in credentials {
            if let warning = CredentialSummary.signInWarning(credential) { Console.err(warning) }
            let name = credential.label.map { " (\(CredentialSummary.safe($0)))" } ?? ""
            Console.out("\(CredentialSummary.safe(credential.providerID))\(name)  \(Credential.mask(credential.accessToken))  expires: \(CredentialSummary.expiry(credential))  scopes: \(CredentialSummary.safe(credential.scopes.joined(separator: " ")))")
        }
    }
}
