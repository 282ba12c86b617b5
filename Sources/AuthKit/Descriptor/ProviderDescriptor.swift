/// Everything AuthKit knows about one provider, loaded from `providers/<id>.json`.
///
/// Provider differences live here as named options, never as code that tests a
/// provider's name: a new provider, or a correction to a bundled one, is a JSON
/// file in the user's providers directory, with no rebuild. The format is
/// documented field by field in README.md and as JSON Schema in
/// `providers/schema.json`. Client ids and secrets are not part of it; see
/// ``ClientSettings``.
public struct ProviderDescriptor: Codable, Sendable, Hashable {
    /// Lowercase identifier, the file's base name by convention: `qiita`.
    public var id: String
    /// Human-readable name for messages: `Qiita`. Absent: the id.
    public var name: String?
    public var `protocol`: ProtocolKind
    /// Where the provider documents its OAuth API.
    public var documentation: String?
    /// Host placeholders used as `{name}` in URLs.
    public var placeholders: [String: PlaceholderSpec]?
    public var redirect: RedirectSettings?
    public var scopes: ScopeSettings?

    // MARK: OAuth 2.0
    public var authorization: AuthorizationEndpoint?
    public var token: TokenEndpoint?
    /// PKCE support (RFC 7636). Absent means `none`, so a descriptor never
    /// claims support the provider lacks; bundled descriptors say it explicitly.
    public var pkce: PKCEMode?
    public var issuer: IssuerSettings?
    /// A second call that turns the first token into the one to keep
    /// (Instagram's short-lived → long-lived exchange). Defaults: `GET` when
    /// `encoding` is `query`, else `POST`; success `200`; the answer mapped by
    /// `response`; fields it lacks (refresh token, scopes) carried over.
    public var followUp: RequestTemplate?
    /// How to refresh. Absent: RFC 6749 §6 at the token endpoint
    /// (`grant_type=refresh_token`), used when a refresh token was issued.
    public var refresh: RequestTemplate?
    /// How to revoke. Defaults are RFC 7009 §2.1: `POST` form
    /// `token={access_token}&token_type_hint=access_token` with the token
    /// endpoint's client authentication, success `200`.
    public var revocation: RequestTemplate?

    // MARK: OAuth 1.0a
    public var oauth1: OAuth1Endpoints?

    public init(
        id: String, name: String? = nil, protocol: ProtocolKind, documentation: String? = nil,
        placeholders: [String: PlaceholderSpec]? = nil, redirect: RedirectSettings? = nil,
        scopes: ScopeSettings? = nil, authorization: AuthorizationEndpoint? = nil, token: TokenEndpoint? = nil,
        pkce: PKCEMode? = nil, issuer: IssuerSettings? = nil, followUp: RequestTemplate? = nil,
        refresh: RequestTemplate? = nil, revocation: RequestTemplate? = nil, oauth1: OAuth1Endpoints? = nil
    ) {
        self.id = id
        self.name = name
        self.protocol = `protocol`
        self.documentation = documentation
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
        self.oauth1 = oauth1
    }

    /// ``name``, or the id when the descriptor has none.
    public var displayName: String { name ?? id }

    public var pkceMode: PKCEMode { pkce ?? .none }
    public var scopeSeparator: String { scopes?.resolvedSeparator ?? " " }
}
