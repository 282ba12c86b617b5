/// A descriptor file as written: `providers/<id>.json`, every member but the
/// required ones optional.
///
/// This is the *file model*. It exists to read and write JSON exactly (unknown
/// members are found by re-encoding it, see ``DescriptorLoader``) and to report
/// problems by the field a person wrote. The flow engines never read it: they
/// read the resolved ``ProviderDescriptor``, made by ``resolved(source:)``, the
/// one place where every default is applied. `providers/schema.json` states the
/// same defaults with `default` keywords, and a test (`DescriptorDefaultsTests`)
/// checks the two against each other and against docs/providers.md's field tables.
package struct DescriptorFile: Codable, Sendable, Hashable {
    package var id: String
    package var name: String?
    package var `protocol`: ProtocolKind
    package var documentation: String?
    package var placeholders: [String: PlaceholderSpec]?
    package var redirect: Redirect?
    package var scopes: Scopes?
    package var authorization: Authorization?
    package var token: Token?
    package var pkce: PKCEMode?
    package var issuer: Issuer?
    package var openid: OpenID?
    package var followUp: Template?
    package var refresh: Template?
    package var revocation: Template?
    package var oauth1: OAuth1?
    package var refreshPolicy: RefreshPolicyFile?
    package var device: Device?
    package var api: API?
    package var git: Git?
    package var whoAmI: WhoAmI?
    /// RFC 7662 §2: the token introspection endpoint.
    package var introspection: String?
    /// RFC 9449: `on` binds tokens to a key the client holds.
    package var dpop: DPoPMode?

    /// The provider's "who am I" call (see ``WhoAmISettings``).
    package struct WhoAmI: Codable, Sendable, Hashable {
        package var url: String
        package var subject: String
        package var name: String?
        package var headers: [String: String]?
    }

    /// Where the provider's API lives (see ``APIOrigins``).
    package struct API: Codable, Sendable, Hashable {
        package var origins: [String]
    }

    /// Git over HTTPS with the provider's tokens (see ``GitAccess``).
    package struct Git: Codable, Sendable, Hashable {
        package var origins: [String]
        package var username: String
        package var scopes: [String]?
    }

    /// The device authorization grant (RFC 8628).
    package struct Device: Codable, Sendable, Hashable {
        package var url: String
        package var encoding: BodyEncoding?
        package var clientAuthentication: ClientAuthentication?
        package var requiresClientSecret: Bool?
        package var scopeParameter: String?
        package var sendScopesWhenPolling: Bool?
    }

    /// When a credential is refreshed (see ``RefreshPolicy``).
    package struct RefreshPolicyFile: Codable, Sendable, Hashable {
        package var marginSeconds: Double?
        package var aheadSeconds: Double?
        package var minimumAgeSeconds: Double?
        package var assumedLifetimeSeconds: Double?
    }

    package struct Redirect: Codable, Sendable, Hashable {
        package var scheme: String?
        package var host: String?
        package var port: Int?
        package var path: String?
        package var appendedFragment: String?
    }

    package struct Scopes: Codable, Sendable, Hashable {
        package var separator: String?
        package var `default`: [String]?
        package var known: [String]?
    }

    package struct Authorization: Codable, Sendable, Hashable {
        package var url: String
        package var sendRedirectURI: Bool?
        package var sendResponseType: Bool?
        package var scopeParameter: String?
        package var grantedScopesParameter: String?
        package var parameters: [String: String]?
        /// RFC 9126 §5 `pushed_authorization_request_endpoint`.
        package var par: String?
    }

    package struct Token: Codable, Sendable, Hashable {
        package var url: String
        package var encoding: BodyEncoding?
        package var clientAuthentication: ClientAuthentication?
        package var assertionAudience: AssertionAudience?
        package var publicClientAuthentication: ClientAuthentication?
        package var requiresClientSecret: Bool?
        package var refreshRequiresClientSecret: Bool?
        package var refreshRefusedErrors: [String]?
        package var sendGrantType: Bool?
        package var sendRedirectURI: Bool?
        package var headers: [String: String]?
        package var successStatus: [Int]?
        package var response: ResponseMapping?
    }

    package struct ResponseMapping: Codable, Sendable, Hashable {
        package var accessToken: FieldPaths?
        package var tokenType: FieldPaths?
        package var expiresIn: FieldPaths?
        package var refreshToken: FieldPaths?
        package var refreshTokenExpiresIn: FieldPaths?
        package var scope: FieldPaths?
        package var requireTokenType: Bool?
        package var assumeBearer: Bool?
        package var errorCode: FieldPaths?
        package var errorDescription: FieldPaths?
        package var errorURI: FieldPaths?
        package var errorStatus: Int?
    }

    package struct Template: Codable, Sendable, Hashable {
        package var url: String
        package var method: String?
        package var encoding: BodyEncoding?
        package var parameters: [String: String]?
        package var headers: [String: String]?
        package var clientAuthentication: ClientAuthentication?
        package var successStatus: [Int]?
        package var response: ResponseMapping?
        /// With `encoding` `query`, the template's secrets go in the URL:
        /// refused unless the file says the provider takes them only there.
        package var secretsInURL: Bool?
    }

    package struct Issuer: Codable, Sendable, Hashable {
        package var identifier: String
        package var includedInResponse: Bool?
    }

    /// OpenID Connect (the issuer is `issuer.identifier`).
    package struct OpenID: Codable, Sendable, Hashable {
        /// `jwks_uri`.
        package var keys: String
        /// `id_token_signing_alg_values_supported`; RS256 when absent.
        package var signingAlgorithms: [String]?
        /// `userinfo_endpoint` (Core §5.3).
        package var userInfo: String?
        /// `end_session_endpoint` (RP-Initiated Logout 1.0 §2).
        package var endSession: String?
        /// Microsoft's "any tenant" issuers.
        package var multiTenantIssuer: MultiTenantIssuer?

        package init(
            keys: String, signingAlgorithms: [String]? = nil, userInfo: String? = nil, endSession: String? = nil,
            multiTenantIssuer: MultiTenantIssuer? = nil
        ) {
            self.keys = keys
            self.signingAlgorithms = signingAlgorithms
            self.userInfo = userInfo
            self.endSession = endSession
            self.multiTenantIssuer = multiTenantIssuer
        }
    }

    /// See ``MultiTenantIssuer``: the same in the file and resolved.
    package typealias MultiTenantIssuer = AuthKit.MultiTenantIssuer

    package struct OAuth1: Codable, Sendable, Hashable {
        package var requestTokenURL: String
        package var authorizeURL: String
        package var authenticateURL: String?
        package var accessTokenURL: String
        package var requestTokenMethod: String?
        package var accessTokenMethod: String?
        package var signatureMethod: String?
        package var requestTokenParameters: [String: String]?
        package var requireCallbackConfirmed: Bool?
        package var invalidateTokenURL: String?
    }
}

// MARK: - Defaults: the one place they are applied

extension DescriptorFile {
    /// The resolved descriptor: every absent value replaced by its default.
    ///
    /// Call only on a file ``DescriptorValidator`` accepted: an OAuth 2.0 file
    /// has `authorization` and `token`, an OAuth 1.0a file has `oauth1`.
    package func resolved(source: String) -> ProviderDescriptor {
        let sendRedirectURI = authorization?.sendRedirectURI ?? true
        let tokenEndpoint = token.map { token in
            TokenEndpoint(
                url: token.url,
                encoding: token.encoding ?? .form,
                // RFC 6749 §2.3.1: servers MUST support HTTP Basic. (A client
                // without a secret sends only client_id; see OAuth2Client.)
                clientAuthentication: token.clientAuthentication ?? .basic,
                // RFC 7523 §3: "The token endpoint URL … MAY be used", and every server took it.
                assertionAudience: token.assertionAudience ?? .tokenEndpoint,
                // RFC 6749 §3.2.1: a public client sends its id in the body.
                publicClientAuthentication: token.publicClientAuthentication ?? .none,
                // Unknown unless the file says so: many providers have public clients.
                requiresClientSecret: token.requiresClientSecret ?? false,
                refreshRequiresClientSecret: token.refreshRequiresClientSecret ?? token.requiresClientSecret ?? false,
                // RFC 6749 §5.2: `invalid_grant` says the refresh token is no good.
                refreshRefusedErrors: ["invalid_grant"] + (token.refreshRefusedErrors ?? []),
                sendGrantType: token.sendGrantType ?? true,
                // RFC 6749 §4.1.3: required when it was in the authorization request.
                sendRedirectURI: token.sendRedirectURI ?? sendRedirectURI,
                headers: token.headers ?? [:],
                successStatus: token.successStatus ?? [200],
                response: Self.resolve(token.response, over: nil))
        }
        return ProviderDescriptor(
            id: id,
            name: name ?? id,
            protocol: `protocol`,
            documentation: documentation,
            source: source,
            placeholders: placeholders ?? [:],
            redirect: RedirectSettings(
                scheme: redirect?.scheme?.lowercased() ?? "http",
                schemeIsRequired: redirect?.scheme != nil,
                // RFC 8252 §8.3: the loopback IP literal, not `localhost`.
                host: redirect?.host ?? "127.0.0.1",
                port: redirect?.port,
                path: redirect?.path ?? "/callback",
                appendedFragment: redirect?.appendedFragment),
            scopes: ScopeSettings(
                separator: scopes?.separator ?? " ", // RFC 6749 §3.3
                default: scopes?.default ?? [],
                known: scopes?.known ?? []),
            authorization: authorization.map {
                AuthorizationEndpoint(
                    url: $0.url, sendRedirectURI: sendRedirectURI, sendResponseType: $0.sendResponseType ?? true,
                    scopeParameter: $0.scopeParameter ?? "scope", grantedScopesParameter: $0.grantedScopesParameter,
                    parameters: $0.parameters ?? [:], pushedRequestURL: $0.par)
            },
            token: tokenEndpoint,
            // RFC 9700 §2.1.1: clients MUST use PKCE unless they know the server
            // does not support it; a descriptor says "none" for such a server.
            pkce: pkce ?? .s256,
            issuer: issuer.map {
                IssuerSettings(identifier: $0.identifier, includedInResponse: $0.includedInResponse ?? false)
            },
            followUp: followUp.map { Self.resolve($0, responseFallback: nil) },
            refresh: refresh.map { Self.resolve($0, responseFallback: nil) },
            revocation: revocation.map { template in
                var resolved = Self.resolve(template, responseFallback: token?.response)
                if template.parameters == nil && template.clientAuthentication == nil {
                    // RFC 7009 §2.1: the token and a hint, authenticated as at the token endpoint.
                    resolved.parameters = RequestTemplate.revokingAccessToken
                    resolved.isRFC7009Revocation = true
                    resolved.clientAuthentication = tokenEndpoint?.clientAuthentication ?? .basic
                }
                return resolved
            },
            device: device.map {
                DeviceEndpoint(
                    url: $0.url, encoding: $0.encoding ?? tokenEndpoint?.encoding ?? .form,
                    clientAuthentication: $0.clientAuthentication ?? tokenEndpoint?.clientAuthentication ?? .basic,
                    requiresClientSecret: $0.requiresClientSecret ?? tokenEndpoint?.requiresClientSecret ?? false,
                    scopeParameter: $0.scopeParameter ?? "scope",
                    sendScopesWhenPolling: $0.sendScopesWhenPolling ?? false)
            },
            refreshPolicy: RefreshPolicy(
                margin: refreshPolicy?.marginSeconds ?? 60,
                ahead: refreshPolicy?.aheadSeconds ?? 0,
                minimumAge: refreshPolicy?.minimumAgeSeconds ?? 0,
                assumedLifetime: refreshPolicy?.assumedLifetimeSeconds ?? 0),
            oauth1: oauth1.map {
                OAuth1Endpoints(
                    requestTokenURL: $0.requestTokenURL, authorizeURL: $0.authorizeURL,
                    authenticateURL: $0.authenticateURL,
                    accessTokenURL: $0.accessTokenURL,
                    requestTokenMethod: $0.requestTokenMethod ?? "POST",
                    accessTokenMethod: $0.accessTokenMethod ?? "POST",
                    signatureMethod: $0.signatureMethod ?? "HMAC-SHA1",
                    requestTokenParameters: $0.requestTokenParameters ?? [:],
                    // RFC 5849 §2.1: oauth_callback_confirmed "MUST be present and set to true".
                    requireCallbackConfirmed: $0.requireCallbackConfirmed ?? true,
                    invalidateTokenURL: $0.invalidateTokenURL)
            },
            // None: any origin, as before the field existed.
            apiOrigins: APIOrigins(api?.origins ?? []),
            git: git.map { GitAccess(origins: APIOrigins($0.origins), username: $0.username, scopes: $0.scopes ?? []) },
            whoAmI: whoAmI.flatMap { call in
                FieldPath(call.subject).map {
                    WhoAmISettings(
                        url: call.url, subject: $0, name: call.name.flatMap(FieldPath.init),
                        headers: call.headers ?? [:])
                }
            },
            openID: openid.map {
                // OpenID Connect Core §15.1: RS256 is the one every provider supports.
                OpenIDSettings(
                    keySetURL: $0.keys,
                    algorithms: Set(($0.signingAlgorithms ?? ["RS256"]).compactMap(IDTokenAlgorithm.init(rawValue:))),
                    userInfoURL: $0.userInfo, endSessionURL: $0.endSession, multiTenantIssuer: $0.multiTenantIssuer)
            },
            introspectionURL: introspection,
            // RFC 9449 is opt-in: a server that does not know DPoP answers Bearer tokens.
            dpop: dpop ?? .off)
    }

    private static func resolve(_ template: Template, responseFallback: ResponseMapping?) -> RequestTemplate {
        let encoding = template.encoding ?? .form
        return RequestTemplate(
            url: template.url,
            method: (template.method ?? (encoding == .query ? "GET" : "POST")).uppercased(),
            encoding: encoding,
            parameters: template.parameters ?? [:],
            headers: template.headers ?? [:],
            clientAuthentication: template.clientAuthentication,
            successStatus: template.successStatus ?? [200],
            response: resolve(template.response, over: responseFallback),
            secretsInURL: template.secretsInURL ?? false)
    }

    /// RFC 6749 §5.1 and §5.2 member names, unless the file (or, for a
    /// revocation's errors, the token endpoint's mapping) names others.
    package static func resolve(_ mapping: ResponseMapping?, over fallback: ResponseMapping?) -> TokenResponseMapping {
        let mapping = mapping ?? fallback
        return TokenResponseMapping(
            accessToken: mapping?.accessToken ?? "access_token",
            tokenType: mapping?.tokenType ?? "token_type",
            expiresIn: mapping?.expiresIn ?? "expires_in",
            refreshToken: mapping?.refreshToken ?? "refresh_token",
            refreshTokenExpiresIn: mapping?.refreshTokenExpiresIn ?? "refresh_token_expires_in",
            scope: mapping?.scope ?? "scope",
            requireTokenType: mapping?.requireTokenType ?? true,
            assumeBearer: mapping?.assumeBearer ?? false,
            errorCode: mapping?.errorCode ?? "error",
            errorDescription: mapping?.errorDescription ?? "error_description",
            errorURI: mapping?.errorURI ?? "error_uri",
            errorStatus: mapping?.errorStatus)
    }
}

// MARK: - Back to a file

extension DescriptorFile {
    /// The file that resolves to `descriptor`, with every value written out
    /// (but RFC 7009's default revocation parameters, which stay implied:
    /// written, they would read back as parameters of the file's own):
    /// what `authkit providers show --json` prints, and a starting point for an
    /// override. Loading it again gives an equal descriptor.
    package init(_ descriptor: ProviderDescriptor) {
        func mapping(_ m: TokenResponseMapping) -> ResponseMapping {
            ResponseMapping(
                accessToken: m.accessToken, tokenType: m.tokenType, expiresIn: m.expiresIn,
                refreshToken: m.refreshToken,
                refreshTokenExpiresIn: m.refreshTokenExpiresIn,
                scope: m.scope, requireTokenType: m.requireTokenType, assumeBearer: m.assumeBearer,
                errorCode: m.errorCode,
                errorDescription: m.errorDescription, errorURI: m.errorURI, errorStatus: m.errorStatus)
        }
        func template(_ t: RequestTemplate) -> Template {
            // RFC 7009's revocation is written as the file said it, without
            // parameters: written out, it would read back as a template of
            // the file's own, which revokes the access token only.
            Template(
                url: t.url, method: t.method, encoding: t.encoding,
                parameters: t.isRFC7009Revocation ? nil : t.parameters, headers: t.headers,
                clientAuthentication: t.isRFC7009Revocation ? nil : t.clientAuthentication,
                successStatus: t.successStatus, response: mapping(t.response),
                secretsInURL: t.secretsInURL ? true : nil)
        }
        let r = descriptor.redirect
        self.init(
            id: descriptor.id, name: descriptor.name, protocol: descriptor.protocol,
            documentation: descriptor.documentation,
            placeholders: descriptor.placeholders.isEmpty ? nil : descriptor.placeholders,
            redirect: Redirect(
                scheme: r.schemeIsRequired ? r.scheme : nil, host: r.host, port: r.port, path: r.path,
                appendedFragment: r.appendedFragment),
            scopes: Scopes(
                separator: descriptor.scopes.separator, default: descriptor.scopes.default,
                known: descriptor.scopes.known),
            authorization: descriptor.authorization.map {
                Authorization(
                    url: $0.url, sendRedirectURI: $0.sendRedirectURI, sendResponseType: $0.sendResponseType,
                    scopeParameter: $0.scopeParameter, grantedScopesParameter: $0.grantedScopesParameter,
                    parameters: $0.parameters, par: $0.pushedRequestURL)
            },
            token: descriptor.token.map {
                Token(
                    url: $0.url, encoding: $0.encoding, clientAuthentication: $0.clientAuthentication,
                    assertionAudience: $0.assertionAudience,
                    publicClientAuthentication: $0.publicClientAuthentication,
                    requiresClientSecret: $0.requiresClientSecret,
                    refreshRequiresClientSecret: $0.refreshRequiresClientSecret,
                    refreshRefusedErrors: $0.refreshRefusedErrors.count > 1
                        ? Array($0.refreshRefusedErrors.dropFirst()) : nil,
                    sendGrantType: $0.sendGrantType,
                    sendRedirectURI: $0.sendRedirectURI, headers: $0.headers,
                    successStatus: $0.successStatus, response: mapping($0.response))
            },
            pkce: descriptor.pkce,
            issuer: descriptor.issuer.map {
                Issuer(identifier: $0.identifier, includedInResponse: $0.includedInResponse)
            },
            openid: descriptor.openID.map {
                OpenID(
                    keys: $0.keySetURL, signingAlgorithms: $0.algorithms.map(\.rawValue).sorted(),
                    userInfo: $0.userInfoURL, endSession: $0.endSessionURL, multiTenantIssuer: $0.multiTenantIssuer)
            },
            followUp: descriptor.followUp.map(template),
            refresh: descriptor.refresh.map(template),
            revocation: descriptor.revocation.map(template),
            oauth1: descriptor.oauth1.map {
                OAuth1(
                    requestTokenURL: $0.requestTokenURL, authorizeURL: $0.authorizeURL,
                    authenticateURL: $0.authenticateURL,
                    accessTokenURL: $0.accessTokenURL, requestTokenMethod: $0.requestTokenMethod,
                    accessTokenMethod: $0.accessTokenMethod, signatureMethod: $0.signatureMethod,
                    requestTokenParameters: $0.requestTokenParameters,
                    requireCallbackConfirmed: $0.requireCallbackConfirmed,
                    invalidateTokenURL: $0.invalidateTokenURL)
            },
            refreshPolicy: RefreshPolicyFile(
                marginSeconds: descriptor.refreshPolicy.margin, aheadSeconds: descriptor.refreshPolicy.ahead,
                minimumAgeSeconds: descriptor.refreshPolicy.minimumAge,
                assumedLifetimeSeconds: descriptor.refreshPolicy.assumedLifetime),
            device: descriptor.device.map {
                Device(
                    url: $0.url, encoding: $0.encoding, clientAuthentication: $0.clientAuthentication,
                    requiresClientSecret: $0.requiresClientSecret, scopeParameter: $0.scopeParameter,
                    sendScopesWhenPolling: $0.sendScopesWhenPolling)
            },
            api: descriptor.apiOrigins.isRestricted ? API(origins: descriptor.apiOrigins.patterns) : nil,
            git: descriptor.git.map {
                Git(origins: $0.origins.patterns, username: $0.username, scopes: $0.scopes.isEmpty ? nil : $0.scopes)
            },
            whoAmI: descriptor.whoAmI.map {
                WhoAmI(
                    url: $0.url, subject: $0.subject.description, name: $0.name?.description,
                    headers: $0.headers.isEmpty ? nil : $0.headers)
            },
            introspection: descriptor.introspectionURL,
            dpop: descriptor.dpop)
    }
}
