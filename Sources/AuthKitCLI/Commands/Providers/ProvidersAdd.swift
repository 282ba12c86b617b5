import ArgumentParser
import AuthKit

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

struct ProvidersAdd: WorkspaceCommand {
    static let usesCredentials = false
    static let sendsRequests = true
    static let configuration = CommandConfiguration(
        commandName: "add",
        abstract: "Add a provider from its issuer's metadata (RFC 8414, or OpenID Connect discovery).",
        usage: "authkit providers add [<options>] <id> --issuer <url>",
        discussion: """
            Reads the server's metadata, checks that it names the issuer you gave,
            and writes $AUTHKIT_HOME/providers/ID.json: endpoints (authorization,
            token, revocation, device), PKCE, client authentication, RFC 9207 iss,
            known scopes. An existing file is never replaced without --force.

            Example:
              authkit providers add acme --issuer https://auth.acme.example
              AUTHKIT_ACME_CLIENT_ID=… authkit authorize --provider acme
            """)

    @OptionGroup var global: GlobalOptions
    @Argument(help: "The id to give it (lowercase letters, digits, '-', '_').") var id: String
    @Option(help: ArgumentHelp("The issuer identifier, exactly as the server names itself.", valueName: "url"))
    var issuer: String
    @Flag(help: "Replace an existing file of that name, or a bundled provider of that id.") var force = false
    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "Seconds the whole discovery may take, both metadata locations included.", valueName: "seconds"))
    var timeout = 30

    func validate() throws {
        try TimeoutOption.check(timeout)
        guard DescriptorValidator.isValidName(id) else {
            throw ValidationError(
                "'\(DisplayText.sanitized(id, limit: 80))' is not a valid provider id; use lowercase letters, digits, '-' and '_' (e.g. acme)."
            )
        }
        // Refused before the metadata is fetched: each was only found when
        // the file could not be written (a name too long), or, written,
        // never read (schema.json is the schema, not a provider).
        if id.count > Self.longestID {
            throw ValidationError(
                "The provider id is \(id.count) characters long; use at most \(Self.longestID) (e.g. acme).")
        }
        if id == "schema" {
            throw ValidationError(
                "'schema' names the descriptors' schema (providers/schema.json), which is never read as a provider; choose another id, such as schema-idp."
            )
        }
        // RFC 8414 §2's rules (https, no query or fragment, no user name or
        // password) are the library's, which `ProviderDescriptor.discover`
        // applies too; its reason does not repeat the URL (a query or a
        // password may hold a secret). The rules below are the command's own.
        guard let url = URL(string: issuer), url.scheme != nil else {
            throw ValidationError("--issuer takes an absolute https URL such as https://auth.example.com.")
        }
        // Plain http to another machine is among its problems (only for a
        // 127.0.0.1 test server).
        if let problem = ProviderDescriptor.issuerProblem(url) {
            throw ValidationError("--issuer \(problem); give the server's plain URL, e.g. https://auth.example.com.")
        }
        // The metadata's issuer is compared byte for byte with this one (RFC
        // 8414 §3.3): it must be the URL as typed, not Foundation's rewrite of
        // it (characters a URL cannot hold, encoded), nor one whose dot
        // segments the transport would fold (the document of /b compared with
        // /a/../b), and its host one a host name can be.
        if let problem = DescriptorValidator.hostProblem(in: issuer) {
            throw ValidationError("--issuer: \(problem)")
        }
        let segments = url.path(percentEncoded: true).split(separator: "/", omittingEmptySubsequences: false)
            .dropFirst()
        guard ExactText.same(url.absoluteString, issuer), !segments.contains(where: { $0 == "." || $0 == ".." }) else {
            throw ValidationError(
                "--issuer '\(DisplayText.sanitized(issuer, limit: 200))' is not an issuer identifier as a server writes it (characters a URL does not hold, or '.' and '..' segments); give it exactly as the server names itself, e.g. https://auth.example.com/realms/main."
            )
        }
    }

    /// Ids are typed on every command line; none bundled is near this.
    static let longestID = 64

    static func checkNoClash(id: String, placeholderNames: [String], file: String, in catalog: ProviderCatalog) throws {
        if let clash = catalog.environmentClash(id: id, placeholderNames: placeholderNames, file: file) {
            throw CLIError("Provider '\(id)': \(clash.problem) Nothing was written.")
        }
    }

    func run(in workspace: Workspace) async throws {
        let directory = AuthKitHome.directory(environment: workspace.environment).appendingPathComponent(
            "providers", isDirectory: true)
        let target = directory.appendingPathComponent("\(id).json")
        // The name itself, not what it points to: a dangling link was taken
        // for no file, the metadata fetched, and the write then said the
        // file "appeared" meanwhile (or, without hard links, replaced the link).
        if !FileSystem.isAbsent(target.path), !force {
            let what =
                FileSystem.isDanglingLink(target.path) ? "is a symbolic link (to nothing) already" : "exists already"
            throw CLIError(
                "\(target.path) \(what); it was left as it is. Pass --force to replace it.", status: .badInput)
        }
        // `providers add github --issuer …` silently replaced the bundled GitHub
        // for every command; that is what `providers override` is for.
        if !force, ProviderCatalog.bundledFile(id: id) != nil {
            let name =
                (try? ProviderCatalog(includeBundled: true, directories: []).descriptor(id: id).name).map { " (\($0))" }
                ?? ""
            throw CLIError(
                "'\(id)' is a bundled provider\(name); a file of that id would replace it for every command. Choose another id, such as \(id)-2, or pass --force to replace it."
            )
        }
        // An id whose settings another provider's variables name
        // (`my-idp` beside `my_idp`, `qiita_team` beside the bundled
        // `qiita-team`): the catalogue refuses one of the two, perhaps the
        // one the user had. Not even with --force.
        try Self.checkNoClash(id: id, placeholderNames: [], file: target.path, in: workspace.catalog)
        let found = try await ProviderDescriptor.discover(
            issuer: URL(string: issuer)!, id: id, timeout: .seconds(timeout))
        var descriptor = found
        descriptor.source = target.path
        try Self.checkNoClash(
            id: id, placeholderNames: Array(found.placeholders.keys), file: target.path, in: workspace.catalog)
        let file = try descriptor.encodedAsFile()
        // Pretty-printed, a document under the fetch's 1 MiB cap (95,000
        // scopes) made a file every command then refused to read.
        guard file.count <= DescriptorLoader.maximumFileSize else {
            throw CLIError(
                """
                The descriptor made from \(found.source) would be \(file.count) bytes, more than the \(DescriptorLoader.maximumFileSize) a provider \
                file may hold, so no command could read it; nothing was written. Its metadata lists far more than any sign-in uses \
                (scopes_supported, most likely): write the descriptor by hand instead (docs/providers.md).
                """, status: .badInput)
        }
        guard try UserProviderFile.write(file, to: target, replacing: force) else {
            throw CLIError(
                "\(target.path) appeared while the metadata was read; it was left as it is. Pass --force to replace it.",
                status: .badInput)
        }
        Console.out(target.path)
        var summary = ["Added \(id) from \(found.source):"] + ProvidersShow.endpoints(of: found).map { "  " + $0 }
        // RFC 8414 metadata names no resource servers: the credential goes to
        // any origin until the file lists its API.
        summary.append(
            "  api:           any origin: server metadata names no API; add \"api\": {\"origins\": [\"https://…\"]} to \(target.path) to keep the credential to it"
        )
        summary.append(
            "Sign in with: \(ClientSettings.environmentPrefix(for: id))_CLIENT_ID=… authkit authorize --provider \(id)")
        summary.map { DisplayText.sanitized($0, limit: 400) }.forEach(Console.err)
    }
}
