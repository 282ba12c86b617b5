#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Everything AuthKit knows about one provider, loaded from `providers/<id>.json`.
///
/// Provider differences live here as named options, never as code that tests a
/// provider's name: a new provider, or a correction to a bundled one, is a JSON
/// file in the user's providers directory, with no rebuild. The format is
/// documented field by field in docs/providers.md and as JSON Schema in
/// `providers/schema.json`. Client ids and secrets are not part of it; see
/// ``ClientSettings``.
///
/// This is the *resolved* descriptor: every value the file left out has its
/// default (applied in one place, `DescriptorFile.resolved(source:)`), so the
/// engines never repeat a fallback. Get one from a ``ProviderCatalog``, or
/// from JSON with ``init(json:source:)``. Only what an app needs to show is
/// public; the endpoints and options are for the flow engines.
public struct ProviderDescriptor: Sendable, Hashable {
    /// Lowercase identifier, the file's base name: `qiita`.
    public package(set) var id: String
    /// Human-readable name for messages: `Qiita` (the id when the file has none).
    public package(set) var name: String
    /// The protocol, which chooses the flow engine (``OAuth2Client`` or
    /// AuthKitOAuth1's `OAuth1Client`); a caller asks ``isOAuth1``.
    package var `protocol`: ProtocolKind
    /// Whether the provider speaks OAuth 1.0a (RFC 5849, as X/Twitter does):
    /// sign in with AuthKitOAuth1's `OAuth1Client`, else with ``OAuth2Client``.
    public var isOAuth1: Bool { `protocol` == .oauth1 }
    /// Where the provider documents its OAuth API.
    public package(set) var documentation: String?

    /// The file this descriptor was read from, for error messages.
    package var source: String
    /// Host placeholders used as `{name}` in URLs.
    package var placeholders: [String: PlaceholderSpec]
    package var redirect: RedirectSettings
    package var scopes: ScopeSettings

    // OAuth 2.0: `token` is present for every OAuth 2.0 descriptor, and
    // `authorization` for every one that is not device-only (`device` alone).
    package var authorization: AuthorizationEndpoint?
    package var token: TokenEndpoint?
    package var pkce: PKCEMode
    package var issuer: IssuerSettings?
    /// OpenID Connect: where the provider's signing keys are, and which
    /// algorithms it signs ID tokens with. With it, a sign-in that asks for
    /// `openid` verifies the ID token and keeps the identity it names.
    package var openID: OpenIDSettings?
    /// The provider's "who am I" call, for a provider without OpenID Connect.
    package var whoAmI: WhoAmISettings?
    /// A second call that turns the first token into the one to keep
    /// (Instagram's short-lived → long-lived exchange); fields its answer
    /// lacks (refresh token, scopes) are carried over.
    package var followUp: RequestTemplate?
    /// A provider's own refresh call. `nil`: RFC 6749 §6 at the token endpoint.
    package var refresh: RequestTemplate?
    /// How to revoke; RFC 7009 §2.1 when the file gives only a URL. `nil`: revocation is not possible.
    package var revocation: RequestTemplate?
    /// The token introspection endpoint (RFC 7662 §2), when the provider has one.
    package var introspectionURL: String?
    /// Whether tokens are DPoP-bound (RFC 9449).
    package var dpop: DPoPMode

    // OAuth 1.0a
    package var oauth1: OAuth1Endpoints?

    /// The device authorization grant (RFC 8628), when the provider offers it.
    package var device: DeviceEndpoint?
    /// When a credential of this provider is refreshed.
    public package(set) var refreshPolicy: RefreshPolicy
    /// Where its API lives: the only origins a stored credential is sent to
    /// (``CredentialSource``, `authkit request`; none listed: any).
    package var apiOrigins: APIOrigins
    /// Git over HTTPS with this provider's tokens (`authkit token git-credential`).
    package var git: GitAccess?

    /// The provider offers the device authorization grant (RFC 8628): a
    /// sign-in for machines where no browser can reach a redirect.
    public var supportsDeviceGrant: Bool { device != nil }

    /// An OAuth 2.0 provider that signs in only with the device grant: its
    /// descriptor has a `device` section and no `authorization` endpoint, as
    /// RFC 8414 §2 lets a server without the authorization code grant omit
    /// `authorization_endpoint` from its metadata. An app shows its device-code screen instead of a browser button for it.
    public var isDeviceOnly: Bool { `protocol` == .oauth2 && authorization == nil && device != nil }

    /// A client without a secret can sign in by the code grant: the provider
    /// has one, and public clients for it (no `token.requiresClientSecret`).
    package var codeGrantTakesPublicClients: Bool { authorization != nil && token?.requiresClientSecret != true }

    /// A client without a secret can sign in by the device grant (GitHub's,
    /// Twitch's: `device.requiresClientSecret` false).
    package var deviceGrantTakesPublicClients: Bool { device?.requiresClientSecret == false }

    /// A loopback listener may choose the port of the default redirect URI
    /// (RFC 8252 §7.3): it names no port, and the authorization request
    /// names the redirect URI. One that does not (Qiita's shape) is
    /// redirected to the registered URI, on whatever port that has.
    package var redirectPortIsFlexible: Bool {
        redirect.portIsFlexible && authorization?.sendRedirectURI != false
    }

    package init(
        id: String, name: String, protocol: ProtocolKind, documentation: String?, source: String,
        placeholders: [String: PlaceholderSpec], redirect: RedirectSettings, scopes: ScopeSettings,
        authorization: AuthorizationEndpoint?, token: TokenEndpoint?, pkce: PKCEMode, issuer: IssuerSettings?,
        followUp: RequestTemplate?, refresh: RequestTemplate?, revocation: RequestTemplate?,
        device: DeviceEndpoint? = nil,
        refreshPolicy: RefreshPolicy, oauth1: OAuth1Endpoints?, apiOrigins: APIOrigins = APIOrigins([]),
        git: GitAccess? = nil, whoAmI: WhoAmISettings? = nil, openID: OpenIDSettings? = nil,
        introspectionURL: String? = nil,
        dpop: DPoPMode = .off
    ) {
        self.introspectionURL = introspectionURL
        self.dpop = dpop
        self.whoAmI = whoAmI
        self.openID = openID
        self.id = id
        self.name = name
        self.protocol = `protocol`
        self.documentation = documentation
        self.source = source
        self.placeholders = placeholders
        self.redirect = redirect
        self.scopes = scopes
        self.authorization = authorization
        self.token = token
        self.pkce = pkce
        self.issuer = issuer
        self.followUp = followUp
        self.refresh = refresh
        self.revocation = revocation
        self.device = device
        self.refreshPolicy = refreshPolicy
        self.oauth1 = oauth1
        self.apiOrigins = apiOrigins
        self.git = git
    }

    /// The value of each placeholder: `settings`' where it gives one, else
    /// the descriptor's default.
    package func placeholderValues(settings: ClientSettings) -> [String: String] {
        var values = placeholders.compactMapValues(\.default)
        for (name, value) in settings.placeholders ?? [:] where placeholders[name] != nil { values[name] = value }
        return values
    }

    /// Reads and validates descriptor JSON, as if it were a file named `source`.
    /// - Throws: ``AuthKitError/Code/invalidFile`` listing every problem, each
    ///   with the field and what to do.
    public init(json: Data, source: String = "<memory>") throws {
        self = try DescriptorLoader().decode(json, file: source)
    }

    /// Reads and validates a descriptor file: a regular file (a named pipe
    /// is refused, not waited on for a writer), at most 1 MiB.
    /// - Throws: ``AuthKitError/Code/invalidFile`` naming the file and every problem.
    public init(contentsOf url: URL) throws {
        self = try DescriptorLoader().load(contentsOf: url)
    }

    /// The first of `names` this descriptor declares no placeholder for, and
    /// what to say about it: a misspelt name given in settings would be
    /// ignored, and the real placeholder reported missing or its default used.
    package func undeclaredPlaceholder(in names: some Collection<String>) -> (name: String, problem: String)? {
        guard let name = names.sorted().first(where: { placeholders[$0] == nil }) else { return nil }
        let known = placeholders.keys.sorted()
        return (
            name,
            "\(self.name) has no placeholder '\(DisplayText.sanitized(name, limit: 40))'; \(known.isEmpty ? "it takes none" : "it takes: " + known.joined(separator: ", "))."
        )
    }

    /// Every endpoint URL, with `{placeholders}` as written: those that
    /// receive codes, secrets or tokens (the who-am-I and UserInfo calls
    /// get the access token, the end-session page the ID token) and the
    /// key set that vouches for ID tokens, so that an override moving any
    /// of them is told (``ProviderCatalog/Entry/newHosts``).
    package var endpointURLs: [String] {
        [
            authorization?.url, authorization?.pushedRequestURL, token?.url, device?.url, followUp?.url, refresh?.url,
            revocation?.url, introspectionURL, whoAmI?.url, openID?.userInfoURL, openID?.endSessionURL,
            openID?.keySetURL, oauth1?.requestTokenURL,
            oauth1?.authorizeURL, oauth1?.authenticateURL, oauth1?.accessTokenURL, oauth1?.invalidateTokenURL,
        ].compactMap { $0 }
    }

    /// The origins of the endpoints a credential goes to (token, follow-up,
    /// refresh, revocation, userinfo, end-session, who-am-I, introspection),
    /// placeholders filled in with `values`: what a credential records as
    /// ``Credential/endpointOrigins`` where it is issued (a sign-in, an
    /// imported token). One whose placeholder has no value is left out.
    package func endpointOrigins(placeholderValues values: [String: String]) -> [String] {
        endpointOrigins(placeholders: TemplateVariables(values: values, providerID: id, settings: Set(values.keys)))
    }

    func endpointOrigins(placeholders: TemplateVariables) -> [String] {
        let urls: [String?] =
            [token?.url, followUp?.url, refresh?.url, revocation?.url]
            + [openID?.userInfoURL, openID?.endSessionURL, whoAmI?.url, introspectionURL]
        return Array(
            Set(
                urls.compactMap { $0 }.compactMap { template in
                    // Only the authority matters; run-time variables sit in paths and queries.
                    (try? placeholders.render(DescriptorValidator.authority(of: template), inURL: true, field: "url"))
                        .flatMap { URL(string: $0)?.origin }
                })
        ).sorted()
    }

    /// The hosts of every endpoint, lowercased, with `{placeholders}` as written.
    package var endpointHosts: Set<String> {
        Set(endpointURLs.compactMap { PlaceholderValue.hostTemplate(in: $0).map { $0.lowercased() } })
    }

    /// ``endpointHosts`` with each placeholder's default filled in (one
    /// without a default stays `{name}`): where a sign-in goes when nothing
    /// is configured, so a file that changes only a default still moves it.
    package var defaultedEndpointHosts: Set<String> {
        Set(endpointHosts.map(withDefaults))
    }

    /// `text` with each `{name}` that has a default replaced by it, lowercased
    /// (for hosts, which are compared without case).
    func withDefaults(_ text: String) -> String {
        filledWithDefaults(text).lowercased()
    }

    /// `text` with each `{name}` that has a default replaced by it, as
    /// written: for what is compared byte for byte (an issuer).
    func filledWithDefaults(_ text: String) -> String {
        var filled = text
        for (name, spec) in placeholders {
            if let value = spec.default { filled = filled.replacing("{\(name)}", with: value) }
        }
        return filled
    }

    /// Why `value` cannot fill placeholder `name`, or `nil` (``PlaceholderValue``).
    package func problem(placeholder name: String, value: String) -> String? {
        PlaceholderValue.problem(name: name, value: value, urls: endpointURLs)
    }

    /// The descriptor as a file with every default written out: loading it
    /// again gives an equal descriptor.
    package func encodedAsFile() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        // A text file ends with a line break (POSIX: a line is terminated).
        return try encoder.encode(DescriptorFile(self)) + Data("\n".utf8)
    }
}

/// The protocol a provider speaks; chooses the flow engine that runs it.
/// Two protocols, so the public API says it with a Bool
/// (``ProviderDescriptor/isOAuth1``, ``Credential/isOAuth1``): a caller had
/// nothing to switch on but this one distinction.
package enum ProtocolKind: String, Codable, Sendable, Hashable, CaseIterable {
    /// OAuth 2.0 authorization code grant (RFC 6749 §4.1), with PKCE (RFC 7636) where supported.
    case oauth2
    /// OAuth 1.0a three-legged flow (RFC 5849), as Twitter/X uses it.
    case oauth1
}

/// Whether the provider supports Proof Key for Code Exchange (RFC 7636).
/// `S256` unless the descriptor says `none`; a client without a secret uses it
/// whatever the descriptor says.
///
/// AuthKit only ever sends `S256`: RFC 9700 §2.1.1 says clients SHOULD NOT use
/// `plain` when S256 is possible, and every PKCE server supports S256.
package enum PKCEMode: String, Codable, Sendable, Hashable, CaseIterable {
    /// The provider does not support PKCE; no challenge is sent.
    case none
    /// S256 is supported and used.
    case s256 = "S256"
    /// S256 is required by the provider; used as with `S256`.
    case required

    package var isEnabled: Bool { self != .none }
}

/// The authorization server's issuer identifier, for mix-up protection (RFC 9207).
package struct IssuerSettings: Sendable, Hashable {
    /// The issuer identifier (RFC 8414 §2 `issuer`), compared by simple string comparison.
    package var identifier: String
    /// The server sends `iss` in every authorization response
    /// (`authorization_response_iss_parameter_supported`); a response without one is rejected.
    package var includedInResponse: Bool
}

/// An OpenID provider's signing keys (OpenID Connect Discovery §3
/// `jwks_uri`, `id_token_signing_alg_values_supported`). The issuer is the
/// descriptor's ``IssuerSettings/identifier``.
package struct OpenIDSettings: Sendable, Hashable {
    /// The JWK Set the provider signs ID tokens with (may hold `{placeholders}`).
    package var keySetURL: String
    /// The algorithms AuthKit accepts from it: those the descriptor lists
    /// (RS256 when it lists none, Core §15.1) that AuthKit verifies.
    package var algorithms: Set<IDTokenAlgorithm>
    /// The UserInfo endpoint (Core §5.3), when the provider has one.
    package var userInfoURL: String?
    /// Where the provider's own session ends (RP-Initiated Logout 1.0 §2).
    package var endSessionURL: String?
    /// Issuers that vary with the tenant that signed the token.
    package var multiTenantIssuer: MultiTenantIssuer?

    package init(
        keySetURL: String, algorithms: Set<IDTokenAlgorithm>, userInfoURL: String? = nil, endSessionURL: String? = nil,
        multiTenantIssuer: MultiTenantIssuer? = nil
    ) {
        self.keySetURL = keySetURL
        self.algorithms = algorithms
        self.userInfoURL = userInfoURL
        self.endSessionURL = endSessionURL
        self.multiTenantIssuer = multiTenantIssuer
    }
}

/// Who signed in, by the provider's own API (GitHub's `GET /user`): what a
/// web sign-in (AuthKitServer) keys a session on when the provider has no
/// OpenID Connect. Its answer is the provider's word over TLS for the
/// access token it just issued; it is not a signed statement.
package struct WhoAmISettings: Sendable, Hashable {
    /// A GET with the access token as a Bearer token (may hold `{placeholders}`).
    package var url: String
    /// Where the user's stable id is in the answer; a number is taken as its text.
    package var subject: FieldPath
    /// Where a name a person recognises is (display only).
    package var name: FieldPath?
    /// Headers the call needs besides the token (Reddit's descriptive
    /// `User-Agent`, which its API rules ask of every client); may hold
    /// `{placeholders}`.
    package var headers: [String: String] = [:]
}

/// A provider whose "any tenant" endpoints sign users of many tenants in,
/// each ID token under its own tenant's issuer: Microsoft Entra ID, where
/// `https://login.microsoftonline.com/common/v2.0` is no token's `iss`, and
/// a user of tenant `T` gets `https://login.microsoftonline.com/T/v2.0`
/// with `tid: T`.
///
/// When the descriptor's tenant placeholder holds one of ``values`` (`common`,
/// `organizations`), the issuer is expected with the token's ``claim`` in the
/// placeholder's place, unless ``excluding`` lists that tenant for the value;
/// the comparison stays byte for byte. A value of ``aliases`` stands for one
/// tenant: Microsoft's `consumers` is the personal accounts' tenant
/// `9188040d-6c67-4c5b-b112-36a304b66dad`, whose issuer its tokens carry, so
/// the issuer is expected with that tenant, exactly. With any other value (one
/// tenant) nothing changes: the app asked for that tenant's users alone, and a
/// token of another tenant is refused.
package struct MultiTenantIssuer: Codable, Sendable, Hashable {
    /// The placeholder of `issuer.identifier` that names the tenant (`tenant`).
    package var placeholder: String
    /// The ID token claim naming the tenant that signed it (`tid`).
    package var claim: String
    /// Placeholder values that mean "any tenant".
    package var values: [String]
    /// Placeholder values that name one tenant by another name, with that
    /// tenant's id (`consumers`).
    package var aliases: [String: String]?
    /// For a value of ``values``, tenants whose tokens it does not accept
    /// (`organizations`: work and school accounts, not the personal accounts' tenant).
    package var excluding: [String: [String]]?

    /// The value the issuer is rendered with when the placeholder holds
    /// `value`: an alias's tenant, else `value` itself.
    package func issuerValue(for value: String) -> String {
        alias(of: value) ?? value
    }

    /// Whether `value` of the placeholder means "any tenant": one of
    /// ``values``, byte for byte (a dictionary's or `contains`'s `==` takes
    /// canonically equivalent spellings for one, a Kelvin sign for a K).
    package func meansAnyTenant(_ value: String) -> Bool {
        values.contains { ExactText.same($0, value) }
    }

    /// The tenant id `value` is an alias of (``aliases``), byte for byte.
    package func alias(of value: String) -> String? {
        aliases?.first { ExactText.same($0.key, value) }?.value
    }

    /// The tenants `value` does not accept (``excluding``), byte for byte.
    package func exclusions(for value: String) -> [String] {
        excluding?.first { ExactText.same($0.key, value) }?.value ?? []
    }

    /// Whether this takes ID tokens that `other` would refuse: an "any
    /// tenant" value or an alias it did not have (or an alias naming
    /// another tenant), an exclusion gone, another claim or placeholder.
    /// Values compared byte for byte; order does not count, and taking
    /// fewer (a value removed, an exclusion added) is not more.
    package func acceptsMore(than other: MultiTenantIssuer) -> Bool {
        func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }
        if bytes(claim) != bytes(other.claim) || bytes(placeholder) != bytes(other.placeholder) { return true }
        let before = Set(other.values.map(bytes))
        if values.contains(where: { !before.contains(bytes($0)) }) { return true }
        let aliasesBefore = Dictionary((other.aliases ?? [:]).map { (bytes($0.key), bytes($0.value)) }) { $1 }
        if (aliases ?? [:]).contains(where: { aliasesBefore[bytes($0.key)] != bytes($0.value) }) { return true }
        let excludedNow = Dictionary((excluding ?? [:]).map { (bytes($0.key), Set($0.value.map(bytes))) }) {
            $0.union($1)
        }
        for (value, tenants) in other.excluding ?? [:] where values.contains(where: { bytes($0) == bytes(value) }) {
            let now = excludedNow[bytes(value)] ?? []
            if tenants.contains(where: { !now.contains(bytes($0)) }) { return true }
        }
        return false
    }
}

/// How the provider spells scopes.
package struct ScopeSettings: Sendable, Hashable {
    /// Joins scopes in the authorize URL (RFC 6749 §3.3: a space; Instagram uses `,`).
    package var separator: String
    /// Requested when the caller asks for none.
    package var `default`: [String]
    /// Scopes the provider documents, for help texts.
    package var known: [String]
}

/// A value that varies per user and appears as `{name}` in endpoint URLs:
/// Qiita Team's `{team}`, Microsoft's `{tenant}`, GitLab's `{host}`.
/// The same in the file and resolved: both members are optional by meaning.
package struct PlaceholderSpec: Codable, Sendable, Hashable {
    /// Tells the user what to supply ("your Qiita Team name").
    package var description: String?
    /// Used when the user supplies nothing; without one the value is required.
    package var `default`: String?
}
