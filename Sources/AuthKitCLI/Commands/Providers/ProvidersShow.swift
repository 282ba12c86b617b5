import ArgumentParser
import AuthKit

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

struct ProvidersShow: WorkspaceCommand {
    static let usesCredentials = false
    static let configuration = CommandConfiguration(
        commandName: "show",
        abstract: "Show a provider's descriptor: a summary, the JSON as loaded, or the bundled file.",
        usage: "authkit providers show [<options>] <id>",
        discussion: """
            --json prints the descriptor as AuthKit loaded it, every default written
            out; --bundled prints the file that ships with AuthKit, even when a file
            of yours replaces it.

            Examples:
              authkit providers show instagram
              authkit providers show github --json
              authkit providers show qiita --bundled
            """)

    @OptionGroup var global: GlobalOptions
    @Argument(help: "The provider id.", completion: .custom(Completions.providerIDs)) var id: String
    @Flag(help: "Print the descriptor as loaded, as JSON with every default written out.") var json = false
    @Flag(help: "Print the bundled descriptor file, even when overridden.") var bundled = false

    func validate() throws {
        try AccountOptions.checkProviderID(id, given: "'providers show'")
        if json && bundled { throw ValidationError("Use --json or --bundled, not both.") }
    }

    func run(in workspace: Workspace) async throws {
        if bundled {
            guard let file = ProviderCatalog.bundledFile(id: id) else {
                throw CLIError(
                    "No bundled descriptor is named '\(id)'. Bundled: \(ProviderCatalog.bundledFiles.map { URL(fileURLWithPath: $0.path).deletingPathExtension().lastPathComponent }.joined(separator: ", "))."
                )
            }
            Console.write(file.data, to: STDOUT_FILENO)
            return
        }
        let descriptor = try workspace.descriptor(id)
        if json {
            Console.write(try descriptor.encodedAsFile(), to: STDOUT_FILENO)
            return
        }
        let entry = workspace.catalog.entry(id: id) // this one only: `entries` decodes every descriptor
        var lines = [
            "\(descriptor.name) (\(descriptor.id)), \(descriptor.protocol == .oauth2 ? "OAuth 2.0" : "OAuth 1.0a")"
        ]
        lines.append(
            "file:          \(descriptor.source)" + (entry?.replaced.map { "  (replaces \($0.source))" } ?? ""))
        if let documentation = descriptor.documentation { lines.append("documentation: \(documentation)") }
        lines += Self.endpoints(of: descriptor)
        // Where `request` and `token header` will send its credentials.
        lines.append(
            "api:           "
                + (descriptor.apiOrigins.isRestricted
                    ? descriptor.apiOrigins.patterns.joined(separator: ", ")
                    : "any origin (the file lists no api.origins)"))
        // Where `token git-credential` gives git the token (`token setup-git`).
        if let git = descriptor.git {
            lines.append("git:           \(git.origins.patterns.joined(separator: ", ")) (user \(git.username))")
            if !git.scopes.isEmpty { lines.append("git scope:     \(git.scopes.joined(separator: " or "))") }
        }
        // The `{name}`s the endpoints above show: what each is, and where its
        // value comes from. A value the environment or config.json sets is
        // shown with its source (placeholders name a team or tenant, not a
        // secret); a config.json that cannot be read is reported by the
        // command that uses it, not here.
        let configured =
            descriptor.placeholders.isEmpty
            ? nil
            : try? ClientSettings.standard(for: descriptor, environment: workspace.environment)
        for (name, placeholder) in descriptor.placeholders.sorted(by: { $0.key < $1.key }) {
            let variable = ClientSettings.placeholderVariable(providerID: descriptor.id, name: name)
            let defaultOrRequired = placeholder.default.map { "default: \($0)" } ?? "required, no default"
            let value =
                configured?.placeholders?[name].map { set in
                    "set to \(set) by \(workspace.environment[variable]?.isEmpty == false ? variable : "config.json"); \(defaultOrRequired)"
                } ?? defaultOrRequired
            lines.append("placeholder:   {\(name)} (\(value))" + (placeholder.description.map { ": \($0)" } ?? ""))
            lines.append("               set with --placeholder \(name)=…, \(variable), or config.json")
        }
        // Prose after a value (a placeholder's description, a note after an
        // endpoint) is broken at spaces on a terminal, continuations under
        // the values' column; the label and the value's first word (a URL)
        // stay on their line. It made lines of up to 224 columns, which the
        // terminal cut mid-word.
        for line in lines.map({ DisplayText.sanitized($0, limit: 500) }) {
            Console.say(line, hanging: line.hasPrefix(" ") ? 0 : Self.valueColumn, keeping: Self.valueColumn)
        }
    }

    /// Where the values start: after `placeholder:   `.
    static let valueColumn = 15

    /// Where a descriptor sends the user and the client, one line each (also
    /// what `providers add` reports having found).
    /// An endpoint on another origin than the token endpoint's is marked:
    /// the client authenticates there too (its secret, with `basic` or
    /// `post`), and discovery takes what the metadata names.
    static func endpoints(of descriptor: ProviderDescriptor) -> [String] {
        var lines = [String]()
        let tokenOrigin = descriptor.token.map { DescriptorValidator.authority(of: $0.url).lowercased() }
        func elsewhere(_ url: String) -> String {
            guard let tokenOrigin, DescriptorValidator.authority(of: url).lowercased() != tokenOrigin else { return "" }
            return " (another origin than the token endpoint's: the client authenticates there too)"
        }
        if let authorization = descriptor.authorization { lines.append("authorize:     \(authorization.url)") }
        if descriptor.isDeviceOnly { lines.append("authorize:     none: signs in only with the device grant") }
        if let token = descriptor.token {
            lines.append("token:         \(token.url) (client authentication: \(token.clientAuthentication.rawValue))")
        }
        if let oauth1 = descriptor.oauth1 {
            lines.append("request token: \(oauth1.requestTokenMethod) \(oauth1.requestTokenURL)")
            lines.append("authorize:     \(oauth1.authorizeURL)")
            lines.append("access token:  \(oauth1.accessTokenMethod) \(oauth1.accessTokenURL)")
        }
        if descriptor.protocol == .oauth2 {
            lines.append("pkce:          \(descriptor.pkce.rawValue)")
            if let par = descriptor.authorization?.pushedRequestURL {
                lines.append("pushed (PAR):  \(par) (the browser gets only a request_uri)\(elsewhere(par))")
            }
            if descriptor.dpop == .on { lines.append("dpop:          on: tokens bound to a key this machine holds") }
            lines.append("revocation:    \(descriptor.revocation.map { $0.url + elsewhere($0.url) } ?? "none")")
            lines.append("introspection: \(descriptor.introspectionURL.map { $0 + elsewhere($0) } ?? "none")")
            lines.append("device grant:  \(descriptor.device.map { $0.url + elsewhere($0.url) } ?? "none")")
            // Only where the descriptor says the provider has no public clients: elsewhere it may not be known.
            let code = descriptor.authorization != nil && descriptor.token?.requiresClientSecret == true
            let device = descriptor.device?.requiresClientSecret == true
            switch (code, device, descriptor.device != nil) {
            case (true, false, true):
                // GitHub refreshes only with it, Twitch without (token.refreshRequiresClientSecret).
                lines.append(
                    descriptor.token?.refreshRequiresClientSecret == false
                        ? "client secret: required, except for the device grant and refreshing its tokens"
                        : "client secret: required, except for the device grant (a refresh needs it)")
            case (true, _, _): lines.append("client secret: required (no public clients)")
            case (false, true, _): lines.append("client secret: required for the device grant")
            default: break
            }
        }
        if let issuer = descriptor.issuer {
            lines.append(
                "issuer:        \(issuer.identifier)\(issuer.includedInResponse ? " (iss checked in every answer)" : "")"
            )
        }
        if descriptor.protocol == .oauth2 {
            if let openID = descriptor.openID {
                let algorithms = openID.algorithms.map(\.rawValue).sorted().joined(separator: ", ")
                lines.append("openid:        ID tokens verified with \(openID.keySetURL) (\(algorithms))")
                if openID.multiTenantIssuer != nil {
                    lines.append("               iss of the signing tenant on multi-tenant endpoints")
                }
                if let url = openID.userInfoURL { lines.append("userinfo:      \(url)") }
                if let url = openID.endSessionURL { lines.append("end session:   \(url)") }
            } else if descriptor.scopes.known.contains("openid") || descriptor.scopes.default.contains("openid") {
                lines.append("openid:        none: an id_token is kept as received, NOT verified")
            }
        }
        if !descriptor.isDeviceOnly {
            lines.append(
                "redirect:      \(descriptor.redirect.uri.absoluteString)\(descriptor.redirectPortIsFlexible ? " (any port)" : "")"
            )
        }
        if !descriptor.scopes.default.isEmpty {
            lines.append(
                "scopes:        \(descriptor.scopes.default.joined(separator: descriptor.scopes.separator)) (default)")
        }
        return lines
    }
}
