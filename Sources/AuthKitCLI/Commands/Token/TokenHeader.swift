import ArgumentParser
import AuthKit
import HTTPTypes

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

struct TokenHeader: WorkspaceCommand {
    static let configuration = CommandConfiguration(
        commandName: "header",
        abstract: "Print the Authorization header for a request, refreshing an expired token first.",
        usage: "authkit token header [<options>] --provider <id> [<url>]",
        discussion: """
            OAuth 2.0 gives a Bearer header; OAuth 1.0a signs the given method, URL
            and form body (-d, as you will send it with curl -d). A DPoP-bound token
            (RFC 9449) gives two lines, Authorization and DPoP, the proof made for
            the given method and URL: pass each with its own -H. A server that
            asks for a nonce (401 with use_dpop_nonce and a DPoP-Nonce header)
            gets it in the proof with --dpop-nonce.

            Examples:
              curl -H "$(authkit token header --provider qiita)" \\
                https://qiita.com/api/v2/authenticated_user
              u=https://api.x.com/1.1/statuses/update.json d='status=Hello%20world'
              curl -d "$d" -H "$(authkit token header -p twitter -d "$d" "$u")" "$u"
            """)

    @OptionGroup var global: GlobalOptions
    @OptionGroup var account: AccountOptions
    @OptionGroup var client: ClientOptions
    /// Signed by OAuth 1.0a (RFC 5849 §3.4.1.1): it must be what curl sends,
    /// and `curl -d` POSTs.
    @Option(
        name: [.customShort("X"), .long],
        help: ArgumentHelp(
            "The request method (OAuth 1.0a signs it). Default: GET, or POST with -d, as curl sends it.",
            valueName: "method"))
    var method: String?
    /// RFC 5849 §3.4.1.3.1: a form body's parameters are part of the signature.
    @Option(
        name: [.customShort("d"), .long],
        help: ArgumentHelp(
            "The form body the request will carry, already encoded (a=1&b=x%20y); OAuth 1.0a signs its parameters. @FILE reads it from a file (@- from standard input) without its line breaks, as curl -d does. Repeatable: the parts are joined with &, as in curl.",
            valueName: "data"))
    var data: [String] = []
    /// RFC 9449 §9: a resource server's nonce, which this process cannot
    /// have seen (`request` answers `use_dpop_nonce` by itself; a header
    /// printed for curl cannot).
    @Option(
        help: ArgumentHelp(
            "The nonce a server's DPoP-Nonce header gave, put in the DPoP proof (RFC 9449 §9).", valueName: "nonce"))
    var dpopNonce: String?
    @Argument(help: "The request URL (required for OAuth 1.0a, which signs it).") var url: String?

    func validate() throws {
        if let method, let problem = TypedMethod.problem(method) { throw ValidationError(problem) }
        // §8.1: nonce = 1*NQCHAR, printable ASCII but '"' and '\'.
        if let dpopNonce, !DPoPNonces.isNonce(dpopNonce) {
            throw ValidationError(
                "--dpop-nonce takes the DPoP-Nonce header's value as the server sent it: printable ASCII without spaces, quotes or backslashes (RFC 9449 §8.1)."
            )
        }
    }

    static func oauth1NeedsARequest(_ key: CredentialKey) -> String {
        "An OAuth 1.0a header signs one request: give its method and URL, e.g. authkit token header \(ShellWord.account(key)) -X GET 'https://api.x.com/1.1/account/verify_credentials.json'."
    }

    func run(in workspace: Workspace) async throws {
        let key = try workspace.key(account)
        // Before anything is read or refreshed: the URL the header is for.
        let given = try url.map(Self.target)
        if let given {
            try workspace.checkSandboxOrigin(given)
            try workspace.checkAPIOrigin(given, providerID: account.provider, explicit: client.settings())
        }
        let body = try Request.signedForm(data)
        // RFC 5849 §3.5: each protocol parameter in one place, the header;
        // §3.6: the query signed as UTF-8 text.
        if let url, (try? workspace.descriptor(account.provider))?.protocol == .oauth1 {
            try Sign.checkSignable(url, body: body, withToken: true)
        }
        // Said before the client is looked for (its "no client id" came
        // first, and this only once one was configured).
        if url == nil, (try? await workspace.store.credential(for: key))?.kind == .oauth1 {
            throw CLIError(Self.oauth1NeedsARequest(key))
        }
        let source = try await workspace.source(key, explicit: client.settings())
        // An origin with a placeholder: the stored credential's, before a refresh.
        if let given { try await source.checkAPIOrigin(of: given) }
        // Before a refresh too: a due token was renewed (a rotation spent)
        // for a command refused anyway. Not when the refresh would bind it:
        // at the token endpoint, a `DPoP`-typed token that lost its key, or
        // any token of a provider whose descriptor turned `dpop` on, is
        // renewed with a new key (a descriptor's own refresh call is never
        // bound, RFC 9449 §5); the check after the refresh then decides.
        if dpopNonce != nil, let stored = try await workspace.store.credential(for: key), stored.proofKey == nil {
            let descriptor = source.authenticator.descriptor
            let refreshBinds =
                descriptor.refresh == nil && (stored.tokenType.lowercased() == "dpop" || descriptor.dpop == .on)
            if !refreshBinds { throw Self.notBound(key) }
        }
        let credential = try await source.current()
        let authenticator = source.authenticator
        // As `token print --format header` says it (exit 64): a type AuthKit
        // cannot send (RFC 6750's Bearer, RFC 9449's DPoP are what it makes).
        if credential.kind == .oauth2, credential.proofKey == nil, !credential.isBearer {
            throw CLIError(
                "\(key)'s token is of type '\(DisplayText.sanitized(credential.tokenType, limit: 40))', not Bearer: an 'Authorization: Bearer' line would not be accepted, and AuthKit makes no other kind. See it with authkit token print \(ShellWord.account(key)) --format json, which gives its type.",
                status: .usage)
        }
        guard
            let url = url
                ?? (credential.kind == .oauth2 && credential.proofKey == nil ? "https://example.invalid/" : nil)
        else {
            if credential.proofKey != nil {
                throw CLIError(
                    "\(key) is DPoP-bound (RFC 9449): its proof is made for one request. Give the method and URL, e.g. authkit token header \(ShellWord.account(key)) -X GET URL, and send both lines it prints as headers.",
                    status: .usage)
            }
            throw CLIError(Self.oauth1NeedsARequest(key))
        }
        let target = try Self.target(url)
        let method = method ?? (body == nil ? "GET" : "POST")
        guard let httpMethod = HTTPRequest.Method(method.uppercased()) else {
            throw CLIError(
                "'\(DisplayText.sanitized(method, limit: 40))' is not an HTTP method (-X takes a name such as GET or POST)."
            )
        }
        var request = HTTPRequest(method: httpMethod, url: target)
        if body != nil { request.headerFields[.contentType] = "application/x-www-form-urlencoded" }
        if let dpopNonce {
            guard credential.proofKey != nil else { throw Self.notBound(key) }
            var fields = HTTPFields()
            fields[DPoPProof.nonceHeaderName] = dpopNonce
            DPoPNonces.shared.remember(fields, for: target.origin, from: .resource)
        }
        let authorized =
            credential.proofKey != nil
            ? try await authenticator.authorize(OutgoingRequest(method: httpMethod, url: target), with: credential).head
            : try authenticator.authorize(request, body: body, with: credential)
        guard let header = authorized.headerFields[.authorization] else {
            throw CLIError(
                "No Authorization header was produced for \(key).", status: .failure)
        }
        Console.out("Authorization: \(header)")
        // RFC 9449 §7.1: a DPoP-bound token goes with its proof, made for this method and URL.
        if let proof = authorized.headerFields[DPoPProof.headerName] { Console.out("DPoP: \(proof)") }
    }

    /// `--dpop-nonce` for a token that takes no proof.
    static func notBound(_ key: CredentialKey) -> CLIError {
        CLIError("--dpop-nonce is for a DPoP-bound token's proof; \(key)'s token is not DPoP-bound.", status: .usage)
    }

    /// `url`, checked as `request` checks the URL it sends to, before the
    /// store is read or a token refreshed. Plain http to another machine is
    /// refused for OAuth 1.0a HMAC too, which the library would sign (RFC
    /// 5849 allows it), as `request` refuses to send any credential there.
    static func target(_ url: String) throws -> URL {
        let target = try TypedURL.url(url)
        guard target.allowsCredentials else { throw AuthKitError.insecureTransport(url: target.redactedForLogs) }
        return target
    }
}
