#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// One OAuth 2.0 client as every request sees it: the descriptor, the
/// settings in effect, and all that follows from the two, worked out once
/// when an ``OAuth2Client`` is made and passed down as it is (the shape of
/// golang.org/x/oauth2's `Config`). Nothing downstream derives any of it
/// again: the client id and secret, the rendered token URL and its parsed
/// target, the redirect URI, the placeholders' values and the template
/// variables they make, the endpoints' origins.
final class ResolvedClient: Sendable {
    let descriptor: ProviderDescriptor
    let settings: ClientSettings
    let token: TokenEndpoint
    let clientID: String
    /// `nil` for a public client: an empty secret is none.
    let clientSecret: String?
    /// The client can authenticate: it has a secret or a private key. Without
    /// either it is a public client (RFC 6749 §2.1).
    var isConfidential: Bool { clientSecret != nil || privateKeyFile != nil }
    /// The authorization endpoint, and its URL with the placeholders filled
    /// in as the ``Foundation/URL/queryPrefix`` its parameters are appended to
    /// (a query the endpoint already has is kept, RFC 6749 §3.1). `nil` for a
    /// device-only provider.
    let authorization: (endpoint: AuthorizationEndpoint, prefix: String)?
    /// The redirect URI when the caller names none.
    let standardRedirect: URL
    /// What fills `{redirect_uri}` in templates: the configured redirect URI, else the descriptor's.
    let redirectURI: String
    /// `token.url` with the placeholders filled in, and parsed once: every
    /// exchange and refresh posts to it.
    let tokenURL: String
    /// A client assertion's `aud` (``TokenEndpoint/assertionAudience``):
    /// the token endpoint's URL, or the issuer, placeholders filled in.
    let assertionAudience: String
    let tokenTarget: RequestTarget?
    /// `token.url` as messages and logs show it (``TemplateVariables/display(_:)``),
    /// made once: every exchange and refresh carries it.
    let tokenDisplay: String
    /// The origins of the token, follow-up, refresh, revocation and UserInfo endpoints
    /// (placeholders filled in): recorded on every credential issued, checked
    /// before any of its tokens is sent for refresh or revocation.
    let endpointOrigins: [String]
    /// OpenID Connect, with placeholders filled in: the issuer an ID token's
    /// `iss` must be, the key set, the algorithms, UserInfo and logout.
    let openID: OpenIDProvider?
    /// The issuer a redirect's `iss` must name (RFC 9207 §2.4), placeholders
    /// filled in; `nil` with none, or for an "any tenant" endpoint, which
    /// answers for many issuers (``MultiTenantIssuer``).
    let redirectIssuer: String?
    /// For an "any tenant" endpoint, what its issuers have around the
    /// tenant (`https://login.microsoftonline.com/` and `/v2.0`): a
    /// redirect's `iss` that is present must be one of them (RFC 9207 §2.4
    /// compares a present `iss` whatever the provider advertises).
    let redirectIssuerPattern: (prefix: String, suffix: String)?
    /// The descriptor's "who am I" endpoint, placeholders filled in.
    let whoAmIURL: URL?
    /// The who-am-I call's own headers (``WhoAmISettings/headers``), placeholders filled in.
    let whoAmIHeaders: [(name: String, value: String)]
    /// The client's private key file, for `private_key_jwt` (RFC 7523 §2.2):
    /// read at each request that authenticates, so that a rotated key is used
    /// without a restart.
    let privateKeyFile: String?
    /// The pushed authorization request endpoint (RFC 9126), placeholders filled in.
    let pushedRequestURL: String?
    /// The token introspection endpoint (RFC 7662), placeholders filled in.
    let introspectionURL: String?
    /// Where the descriptor reads what describes a token outside RFC 6749's
    /// top-level names (Qiita's `token`, Slack's `authed_user.access_token`):
    /// members a later answer does not inherit from an earlier one, as the
    /// standard names are not (``TokenEndpointCalls/describeTheToken``).
    /// Worked out once: empty for most providers, and every refresh asks.
    let tokenPathsNotInherited: [FieldPath]
    /// The variables every request shares: the placeholders' values, the
    /// client id and secret, the redirect URI. A credential's tokens are
    /// added per request (``variables(for:)``).
    private let shared: TemplateVariables

    /// - Throws: what ``OAuth2Client/init(descriptor:settings:httpClient:logger:now:)`` documents.
    init(descriptor: ProviderDescriptor, settings: ClientSettings) throws {
        guard descriptor.protocol == .oauth2, let token = descriptor.token else {
            throw AuthKitError.misuse(
                .wrongProtocol(providerID: descriptor.id, protocol: descriptor.protocol, client: .oauth2))
        }
        guard let clientID = settings.clientID, !clientID.isEmpty else {
            throw AuthKitError.missingSetting(providerID: descriptor.id, .clientID)
        }
        try OAuth2Client.checkConfiguredRedirectURI(settings, descriptor: descriptor)
        let placeholderValues = descriptor.placeholderValues(settings: settings)
        // A value from the caller (a descriptor's default was checked when
        // the file was loaded) must make a host where it stands in one: a
        // server app that takes `{team}` from a web form would otherwise send
        // its client secret to `https://evil.example/.qiita.com/…`.
        for (name, value) in (settings.placeholders ?? [:]).sorted(by: { $0.key < $1.key })
        where descriptor.placeholders[name] != nil {
            if let problem = descriptor.problem(placeholder: name, value: value) {
                let field =
                    descriptor.endpointURLs.contains { $0.contains("{\(name)}") }
                    ? "the endpoint URLs" : "the descriptor"
                throw AuthKitError.invalidSetting(
                    providerID: descriptor.id, .placeholder(name: name, usedIn: field), problem: problem)
            }
        }
        let placeholders = TemplateVariables(
            values: placeholderValues, providerID: descriptor.id, settings: Set(placeholderValues.keys))
        self.descriptor = descriptor
        self.settings = settings
        self.token = token
        self.tokenPathsNotInherited = token.response.tokenDescriptionPaths.filter { path in
            guard case .member(let top)? = path.components.first else { return false }
            return path.components.count > 1 || !TokenEndpointCalls.describeTheToken.contains(top)
        }
        self.clientID = clientID
        self.clientSecret = settings.clientSecret.flatMap { $0.isEmpty ? nil : $0 }
        if let endpoint = descriptor.authorization {
            let url = URL(string: try placeholders.render(endpoint.url, inURL: true, field: "authorization.url"))
            guard let url, url.host != nil, let prefix = url.queryPrefix else {
                throw AuthKitError.invalidFile([
                    FileIssue(
                        file: descriptor.source, field: "authorization.url",
                        problem: "is not a URL a query can be added to.")
                ])
            }
            self.authorization = (endpoint, prefix)
        } else {
            self.authorization = nil
        }
        self.standardRedirect =
            OAuth2Client.defaultRedirectURI(settings: settings, descriptor: descriptor) ?? descriptor.redirect.uri
        self.redirectURI = settings.redirectURI ?? descriptor.redirect.uri.absoluteString
        self.tokenURL = try placeholders.render(token.url, inURL: true, field: "token.url")
        self.tokenTarget = URL(string: tokenURL).map { RequestTarget($0) }
        self.privateKeyFile = settings.privateKeyFile.flatMap { $0.isEmpty ? nil : $0 }
        // A client that signs client_secret_jwt assertions with its secret
        // (no private key, which would sign instead) needs one long enough
        // for HS256 (RFC 7518 §3.2). Said here, before any request: found
        // at the code exchange, the person would have signed in for nothing.
        if settings.privateKeyFile.map(\.isEmpty) ?? true, let secret = settings.clientSecret, !secret.isEmpty,
            ClientAssertion.isUsed(by: descriptor),
            let problem = ClientAssertion.secretProblem(secret)
        {
            throw AuthKitError.invalidSetting(providerID: descriptor.id, .clientSecret, problem: problem)
        }
        self.pushedRequestURL = try descriptor.authorization?.pushedRequestURL.map {
            try placeholders.render($0, inURL: true, field: "authorization.par")
        }
        self.introspectionURL = try descriptor.introspectionURL.map {
            try placeholders.render($0, inURL: true, field: "introspection")
        }
        self.endpointOrigins = descriptor.endpointOrigins(placeholders: placeholders)
        if let whoAmI = descriptor.whoAmI {
            guard let url = URL(string: try placeholders.render(whoAmI.url, inURL: true, field: "whoAmI.url")),
                url.host != nil
            else {
                throw AuthKitError.invalidFile([
                    FileIssue(file: descriptor.source, field: "whoAmI.url", problem: "is not an absolute URL.")
                ])
            }
            self.whoAmIURL = url
            self.whoAmIHeaders = try whoAmI.headers.sorted { $0.key < $1.key }.map {
                ($0.key, try placeholders.render($0.value, inURL: false, field: "whoAmI.headers.\($0.key)"))
            }
        } else {
            self.whoAmIURL = nil
            self.whoAmIHeaders = []
        }
        if let issuer = descriptor.issuer {
            var issuerPlaceholders = placeholders
            if let tenants = descriptor.openID?.multiTenantIssuer, let value = placeholderValues[tenants.placeholder] {
                issuerPlaceholders.values[tenants.placeholder] = tenants.issuerValue(for: value)
            }
            let identifier = try issuerPlaceholders.render(
                issuer.identifier, inURL: true, field: "issuer.identifier")
            self.assertionAudience = token.assertionAudience == .issuer ? identifier : tokenURL
            if let tenants = descriptor.openID?.multiTenantIssuer,
                tenants.meansAnyTenant(placeholderValues[tenants.placeholder] ?? "")
            {
                self.redirectIssuer = nil
                self.redirectIssuerPattern = try OpenIDProvider.tenantIssuer(
                    issuer.identifier, placeholders: issuerPlaceholders, tenantPlaceholder: tenants.placeholder,
                    source: descriptor.source)
            } else {
                self.redirectIssuer = identifier
                self.redirectIssuerPattern = nil
            }
        } else {
            self.redirectIssuer = nil
            self.redirectIssuerPattern = nil
            self.assertionAudience = tokenURL // `issuer` needs one: refused when the file is read
        }
        self.openID = try descriptor.openID.flatMap { settings in
            try descriptor.issuer.map {
                try OpenIDProvider(settings, issuer: $0.identifier, descriptor: descriptor, placeholders: placeholders)
            }
        }
        var values = placeholderValues
        values["client_id"] = clientID
        values["redirect_uri"] = redirectURI
        if let clientSecret { values["client_secret"] = clientSecret }
        self.shared = TemplateVariables(
            values: values, providerID: descriptor.id, settings: Set(placeholderValues.keys))
        self.tokenDisplay = shared.display(token.url)
    }

    /// The template variables for a request made with `credential`'s tokens
    /// (or none): the shared ones, and `{access_token}` and `{refresh_token}`.
    func variables(for credential: Credential?) -> TemplateVariables {
        guard let credential else { return shared }
        var variables = shared
        variables.values["access_token"] = credential.accessToken
        if let refreshToken = credential.refreshToken { variables.values["refresh_token"] = refreshToken }
        variables.credentialKey = credential.key
        return variables
    }
}
