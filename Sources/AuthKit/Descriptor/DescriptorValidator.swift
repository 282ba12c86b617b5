import HTTPTypes

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Checks a decoded descriptor for what JSON decoding cannot: endpoint URLs
/// that parse and use `https` (RFC 6749 §3.1, §3.2: TLS is required; loopback
/// `http` is allowed for local test servers, RFC 8252 §8.3), placeholders that
/// are declared, the sections its protocol needs, and sane numbers.
///
/// Every problem is collected, not just the first, so `authkit providers
/// validate` can list them all.
package struct DescriptorValidator: Sendable {
    /// Variables the flow engine fills in at run time (see ``RequestTemplate``).
    static let runtimeVariables: Set<String> = [
        "access_token", "refresh_token", "client_id", "client_secret", "redirect_uri",
    ]

    func validate(_ descriptor: DescriptorFile, file: String) -> [FileIssue] {
        var issues = [FileIssue]()
        func issue(_ field: String, _ problem: String) {
            issues.append(FileIssue(file: file, field: field, problem: problem))
        }
        let declared = Set((descriptor.placeholders ?? [:]).keys)

        checkIdentity(descriptor, declared: declared, issue: issue)
        checkAPIOrigins(descriptor, declared: declared, issue: issue)
        checkGit(descriptor, declared: declared, issue: issue)
        switch descriptor.protocol {
        case .oauth2: checkOAuth2Endpoints(descriptor, declared: declared, issue: issue)
        case .oauth1: checkOAuth1Endpoints(descriptor, declared: declared, issue: issue)
        }
        if descriptor.protocol == .oauth1, descriptor.dpop == .on {
            issue("dpop", "is for OAuth 2.0 tokens (RFC 9449); an OAuth 1.0a provider signs its requests instead.")
        }
        // A template request carries no DPoP proof: a bound refresh token
        // sent with one would go without its proof, and a Bearer answer
        // would replace the bound credential.
        if descriptor.protocol == .oauth2, descriptor.dpop == .on {
            for (field, template) in [("refresh", descriptor.refresh), ("followUp", descriptor.followUp)]
            where template != nil {
                issue(
                    "dpop",
                    "is on, and '\(field)' is a request template, which sends no DPoP proof (RFC 9449 §5); remove '\(field)' or set dpop to off."
                )
            }
            // A revocation that authorizes with the token itself (Dropbox's,
            // Slack's `Authorization: Bearer {access_token}`) would send a
            // bound token as a Bearer one, without its proof (RFC 9449 §7.1),
            // and be refused: the token left unrevoked. RFC 7009's, which
            // carries the token as a parameter, needs none.
            if let headers = descriptor.revocation?.headers,
                headers.keys.contains(where: { $0.lowercased() == "authorization" })
            {
                issue(
                    "revocation.headers",
                    "sets Authorization, which would send the bound token without its DPoP proof (RFC 9449 §7.1) while dpop is on; revoke with RFC 7009's token parameter, or set dpop to off."
                )
            }
        }
        checkRequestTemplates(descriptor, declared: declared, issue: issue)
        checkRedirect(descriptor, declared: declared, issue: issue)
        checkRefreshPolicyAndScopes(descriptor, declared: declared, issue: issue)
        return issues
    }

    /// `id` and `placeholders`: names, the variables they are read from, their defaults.
    private func checkIdentity(_ descriptor: DescriptorFile, declared: Set<String>, issue: (String, String) -> Void) {
        if !Self.isValidName(descriptor.id) {
            issue(
                "id",
                "'\(descriptor.id)' is not a valid id; use lowercase letters, digits, '-' and '_' (e.g. \"qiita\").")
        }
        for name in declared where !Self.isValidName(name) {
            issue("placeholders.\(name)", "placeholder names use lowercase letters, digits, '-' and '_'.")
        }
        for name in declared where Self.runtimeVariables.contains(name) {
            issue(
                "placeholders.\(name)",
                "'\(name)' is filled in by AuthKit at run time and cannot be a placeholder; choose another name.")
        }
        // A placeholder is read from AUTHKIT_<ID>_<NAME>. A name that makes that
        // look like another provider's setting (placeholder 'secret' of
        // 'github-client' → AUTHKIT_GITHUB_CLIENT_SECRET, GitHub's secret)
        // would read one provider's secret as another's URL part.
        for name in declared.sorted() {
            let variable = ClientSettings.placeholderVariable(providerID: descriptor.id, name: name)
            if let setting = ClientSettings.settingSuffixes.first(where: { variable.hasSuffix("_" + $0) }) {
                issue(
                    "placeholders.\(name)",
                    "would be read from \(variable), which is also how another provider's \(setting.lowercased().replacing("_", with: " ")) is named; choose a placeholder name that does not end in \(setting.lowercased().replacing("_", with: "-"))."
                )
            } else if ClientSettings.authKitVariables.contains(variable) {
                // Provider 'consumer' with placeholder 'secret' read
                // AUTHKIT_CONSUMER_SECRET, the OAuth 1.0a secret `authkit
                // sign` takes, into a URL the browser opens.
                issue(
                    "placeholders.\(name)",
                    "would be read from \(variable), one of AuthKit's own settings; choose another placeholder name."
                )
            }
        }

        // A default is a value like any other: it must make a host where it
        // stands in one, in every endpoint (as ``ProviderDescriptor/endpointURLs``
        // lists them: the who-am-I and UserInfo calls get the access token,
        // the key set vouches for ID tokens).
        let urls = [
            descriptor.authorization?.url, descriptor.token?.url, descriptor.device?.url, descriptor.followUp?.url,
            descriptor.refresh?.url, descriptor.revocation?.url, descriptor.authorization?.par,
            descriptor.introspection, descriptor.whoAmI?.url, descriptor.openid?.keys, descriptor.openid?.userInfo,
            descriptor.openid?.endSession,
            descriptor.oauth1?.requestTokenURL, descriptor.oauth1?.authorizeURL, descriptor.oauth1?.authenticateURL,
            descriptor.oauth1?.accessTokenURL,
            descriptor.oauth1?.invalidateTokenURL,
        ].compactMap { $0 }
        for (name, placeholder) in (descriptor.placeholders ?? [:]).sorted(by: { $0.key < $1.key }) {
            if let value = placeholder.default,
                let problem = PlaceholderValue.problem(name: name, value: value, urls: urls)
            {
                issue("placeholders.\(name).default", problem)
            }
        }

    }

    /// `api.origins`: each an origin pattern, its placeholders declared.
    private func checkAPIOrigins(_ descriptor: DescriptorFile, declared: Set<String>, issue: (String, String) -> Void) {
        if let origins = descriptor.api?.origins {
            checkOrigins(
                origins, field: "api.origins", descriptor: descriptor, declared: declared, issue: issue,
                whenEmpty:
                    "lists no origin; list where the provider's API lives (e.g. [\"https://api.example.com\"]), or leave \"api\" out to allow any."
            )
        }
    }

    /// `git`: origins as `api.origins` takes them (an empty list would allow
    /// every host, so it is refused), a user name that goes on a line of
    /// git's credential protocol, and the scopes that let git in.
    private func checkGit(_ descriptor: DescriptorFile, declared: Set<String>, issue: (String, String) -> Void) {
        guard let git = descriptor.git else { return }
        if descriptor.protocol == .oauth1 {
            issue("git", "is for OAuth 2.0 tokens, which git sends as a password; an OAuth 1.0a token is not one.")
        }
        checkOrigins(
            git.origins, field: "git.origins", descriptor: descriptor, declared: declared, issue: issue,
            whenEmpty: "lists no origin; list the git host's (e.g. [\"https://github.com\"]).")
        // git-credential(1): one `key=value` a line, so no line break, and
        // nothing that is not a plain user name.
        if git.username.isEmpty || git.username.utf8.count > 64
            || !git.username.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-._".contains($0)) })
        {
            issue(
                "git.username",
                "'\(DisplayText.sanitized(git.username, limit: 40))' is not a user name; write the one the host takes with a token (ASCII letters, digits, '-', '_' and '.'; e.g. \"x-access-token\")."
            )
        }
        for (index, scope) in (git.scopes ?? []).enumerated() where scope.isEmpty || scope.contains(" ") {
            issue("git.scopes[\(index)]", "'\(DisplayText.sanitized(scope, limit: 40))' is not one scope.")
        }
    }

    /// Origin patterns (see ``APIOrigins``), each with its placeholders declared.
    private func checkOrigins(
        _ origins: [String], field: String, descriptor: DescriptorFile, declared: Set<String>,
        issue: (String, String) -> Void, whenEmpty: String
    ) {
        if origins.isEmpty { issue(field, whenEmpty) }
        // An origin with a placeholder is allowed where a credential was
        // issued (see APIOrigins): at the origin of the endpoint that
        // issues it, the token endpoint's (OAuth 1.0a: the access
        // token's). Written any other way (another host around the
        // placeholder, a revocation's host), it could never allow a URL.
        let issuing = [descriptor.token?.url, descriptor.oauth1?.accessTokenURL].compactMap { url -> String? in
            guard let url, let host = PlaceholderValue.hostTemplate(in: url),
                let scheme = url.split(separator: ":").first
            else { return nil }
            return "\(scheme)://\(host)".lowercased()
        }
        for (index, pattern) in origins.enumerated() {
            let names = Self.variables(in: pattern)
            for name in names where !declared.contains(name) {
                issue(
                    "\(field)[\(index)]",
                    "'{\(DisplayText.sanitized(name, limit: 40))}' is not a declared placeholder; declare it under \"placeholders\"."
                )
            }
            if !names.isEmpty, names.allSatisfy(declared.contains), !issuing.contains(pattern.lowercased()) {
                issue(
                    "\(field)[\(index)]",
                    "an origin with a placeholder lets a credential go only where it was issued, so it must be the token endpoint's origin as written (\(issuing.first ?? "none")); write any other origin out in full."
                )
            }
            if let problem = APIOrigins.problem(pattern) { issue("\(field)[\(index)]", problem) }
        }
    }

    /// An OAuth 2.0 descriptor's endpoints: authorization, token, device, issuer.
    private func checkOAuth2Endpoints(
        _ descriptor: DescriptorFile, declared: Set<String>, issue: (String, String) -> Void
    ) {
        if let authorization = descriptor.authorization {
            checkEndpoint(authorization.url, field: "authorization.url", allowed: declared, issue: issue)
            // RFC 6749 §3.1: the endpoint's own query is kept, and no
            // parameter is sent twice. One AuthKit sets itself, written there
            // (`?redirect_uri=…&client_id=…`), went out twice, and a server
            // that reads the first took the file's. Only what this descriptor
            // sends: Slack's `?scope=` beside its `user_scope` is its own.
            let scopeParameter = authorization.scopeParameter ?? "scope"
            var sent: Set<String> = [
                "client_id", "state", "client_secret", "code_challenge", "code_challenge_method", scopeParameter,
            ]
            if authorization.sendRedirectURI ?? true { sent.insert("redirect_uri") }
            if authorization.sendResponseType ?? true { sent.insert("response_type") }
            if descriptor.openid != nil { sent.insert("nonce") }
            if authorization.par != nil { sent.insert("request_uri") }
            if descriptor.dpop == .on { sent.insert("dpop_jkt") }
            for name in Self.queryNames(in: authorization.url) where sent.contains(name) {
                let hint = name == scopeParameter ? ": the scopes to ask for go in scopes.default" : ""
                issue(
                    "authorization.url",
                    "its query sets '\(DisplayText.sanitized(name, limit: 40))', which AuthKit sends itself (RFC 6749 §3.1: no parameter twice); remove it from the URL\(hint)."
                )
            }
            // The code is read from the redirect's query (RFC 6749 §4.1.2);
            // another response mode (OAuth 2.0 Multiple Response Types §2.1:
            // `fragment`, `form_post`) returns it where AuthKit never looks,
            // and the sign-in failed only at the redirect.
            var modes = Self.queryPairs(in: authorization.url).filter { $0.name == "response_mode" }.map {
                ("authorization.url", $0.value)
            }
            if let mode = authorization.parameters?["response_mode"] {
                modes.append(("authorization.parameters.response_mode", mode))
            }
            for (field, mode) in modes where mode != "query" {
                issue(field, OAuth2Client.responseModeProblem(mode) + "; remove it, or set it to 'query'.")
            }
            if let name = authorization.scopeParameter {
                if name.isEmpty || (OAuth2Client.reservedParameters.contains(name) && name != "scope") {
                    issue(
                        "authorization.scopeParameter",
                        "'\(DisplayText.sanitized(name, limit: 40))' cannot carry the scopes: it is empty or a parameter AuthKit sets itself; give the name the provider reads them from, e.g. 'user_scope'."
                    )
                } else if authorization.parameters?[name] != nil {
                    issue(
                        "authorization.parameters.\(name)",
                        "is where the requested scopes go (scopeParameter); list them in scopes.default instead.")
                }
            }
            if let name = authorization.grantedScopesParameter,
                name.isEmpty || ["code", "state", "iss", "error", "error_description", "error_uri"].contains(name)
            {
                issue(
                    "authorization.grantedScopesParameter",
                    "'\(DisplayText.sanitized(name, limit: 40))' is not where a redirect names the granted scopes; give the provider's parameter, e.g. 'scope', or leave it out."
                )
            }
            if authorization.parameters?["client_secret"] != nil {
                // It would end up in browser history and server logs (RFC 9700 §2.5).
                issue(
                    "authorization.parameters.client_secret",
                    "a client secret must never be sent in the authorization URL; remove it.")
            }
        } else if descriptor.device == nil {
            // Without either, there is no way to sign in. A device-only
            // provider (RFC 8414 §2 lets it omit the authorization endpoint)
            // is fine: `authkit authorize` uses the device grant for it.
            issue(
                "authorization",
                "missing; an OAuth 2.0 provider needs {\"url\": \"https://…/authorize\"} (or, if it signs in only with the device grant, a \"device\" section instead)."
            )
        }
        if let token = descriptor.token {
            checkEndpoint(token.url, field: "token.url", allowed: declared, issue: issue)
            checkStatuses(token.successStatus, field: "token.successStatus", issue: issue)
            if let response = token.response {
                // An error member that is a token's (or holds it) would print
                // a token just issued in an error message.
                let tokens = Set(
                    [response.accessToken ?? "access_token", response.refreshToken ?? "refresh_token", "id_token"]
                        .flatMap(\.paths).map(\.description))
                for (name, paths) in [
                    ("errorCode", response.errorCode), ("errorDescription", response.errorDescription),
                    ("errorURI", response.errorURI),
                ] {
                    for path in paths?.paths ?? []
                    where tokens.contains(where: {
                        $0 == path.description || $0.hasPrefix(path.description + ".")
                            || $0.hasPrefix(path.description + "[")
                    }) {
                        issue(
                            "token.response.\(name)",
                            "'\(path)' is where a token is (or holds one): an error message would show a token just issued. Point it at the error's own member."
                        )
                    }
                }
            }
            if let status = token.response?.errorStatus, !(200...599).contains(status) {
                issue(
                    "token.response.errorStatus",
                    "\(status) is not an HTTP status; give the status the provider answers errors with, e.g. 200 or 400."
                )
            }
            if token.encoding == .query {
                issue(
                    "token.encoding",
                    "'query' would put the authorization code and client secret in a URL; use 'form' or 'json'.")
            }
            if let headers = token.headers {
                checkTemplates(Array(headers.values), field: "token.headers", allowed: declared, issue: issue)
                // The token endpoint's Authorization is the client's authentication (clientAuthentication).
                checkHeaderNames(headers, field: "token.headers", authorizationAllowed: false, issue: issue)
            }
            if token.assertionAudience == .issuer, descriptor.issuer == nil {
                issue(
                    "token.assertionAudience",
                    "is 'issuer', but the descriptor names no issuer (issuer.identifier); add it, or leave assertionAudience out to name the token endpoint."
                )
            }
            switch token.publicClientAuthentication {
            case .post?:
                issue(
                    "token.publicClientAuthentication",
                    "'post' would send an empty client_secret; a public client sends 'none' (its client_id) or 'basic' (HTTP Basic with an empty password)."
                )
            case .basic? where token.requiresClientSecret == true:
                issue(
                    "token.publicClientAuthentication",
                    "says how public clients authenticate, but requiresClientSecret says the provider has none; leave one of the two out."
                )
            default:
                break
            }
            // RFC 6749 §5.2: an error code is printable ASCII but '"' and '\\'.
            for (index, code) in (token.refreshRefusedErrors ?? []).enumerated()
            where code.isEmpty || code.utf8.count > 64
                || !code.utf8.allSatisfy({ (0x20...0x7E).contains($0) && $0 != 0x22 && $0 != 0x5C })
            {
                issue(
                    "token.refreshRefusedErrors[\(index)]",
                    "is not an error code (RFC 6749 §5.2: 1–64 printable ASCII characters but '\"' and '\\'), such as bad_refresh_token."
                )
            }
            if token.refreshRequiresClientSecret == true, token.clientAuthentication == ClientAuthentication.none {
                issue(
                    "token.refreshRequiresClientSecret",
                    "is true, but clientAuthentication 'none' never sends the secret; use 'basic' or 'post', or leave refreshRequiresClientSecret out."
                )
            }
            if token.requiresClientSecret == true, token.clientAuthentication == ClientAuthentication.none {
                issue(
                    "token.requiresClientSecret",
                    "is true, but clientAuthentication 'none' never sends the secret; use 'basic' or 'post', or leave requiresClientSecret out."
                )
            }
        } else {
            issue("token", "missing; an OAuth 2.0 provider needs {\"url\": \"https://…/token\"}.")
        }
        if let device = descriptor.device {
            checkEndpoint(device.url, field: "device.url", allowed: declared, issue: issue)
            if let name = device.scopeParameter, name.isEmpty || ["client_id", "client_secret"].contains(name) {
                issue(
                    "device.scopeParameter",
                    "'\(DisplayText.sanitized(name, limit: 40))' cannot carry the scopes: it is empty or a parameter AuthKit sets itself; give the name the provider reads them from, e.g. 'scopes'."
                )
            }
            if device.encoding == .query {
                issue("device.encoding", "'query' would put the client's credentials in a URL; use 'form' or 'json'.")
            }
            // The device grant's own authentication, else the token endpoint's (as resolved).
            let sends = device.clientAuthentication ?? descriptor.token?.clientAuthentication ?? .basic
            if (device.requiresClientSecret ?? descriptor.token?.requiresClientSecret) == true,
                sends == ClientAuthentication.none
            {
                issue(
                    "device.requiresClientSecret",
                    "is true\(device.requiresClientSecret == nil ? " (from token.requiresClientSecret)" : ""), but the device grant's clientAuthentication 'none' never sends the secret; set device.requiresClientSecret to false, or use 'basic' or 'post'."
                )
            }
        }
        if let issuer = descriptor.issuer {
            if issuer.identifier.isEmpty { issue("issuer.identifier", "must not be empty.") }
            // Filled in at every client built: one not declared passed here,
            // and every command then failed asking for a value nothing could set.
            checkTemplates([issuer.identifier], field: "issuer.identifier", allowed: declared, issue: issue)
        }
        if let url = descriptor.authorization?.par {
            checkEndpoint(url, field: "authorization.par", allowed: declared, issue: issue)
        }
        if let url = descriptor.introspection {
            checkEndpoint(url, field: "introspection", allowed: declared, issue: issue)
        }
        if let whoAmI = descriptor.whoAmI {
            checkEndpoint(whoAmI.url, field: "whoAmI.url", allowed: declared, issue: issue)
            if FieldPath(whoAmI.subject) == nil {
                issue("whoAmI.subject", "is not a field path (members separated by '.', array indexes as [n]).")
            }
            if let headers = whoAmI.headers {
                checkTemplates(Array(headers.values), field: "whoAmI.headers", allowed: declared, issue: issue)
                // The call's Authorization is the access token's.
                checkHeaderNames(headers, field: "whoAmI.headers", authorizationAllowed: false, issue: issue)
            }
            if let name = whoAmI.name, FieldPath(name) == nil {
                issue("whoAmI.name", "is not a field path (members separated by '.', array indexes as [n]).")
            }
        }
        if let openid = descriptor.openid {
            checkEndpoint(openid.keys, field: "openid.keys", allowed: declared, issue: issue)
            if let url = openid.userInfo {
                checkEndpoint(url, field: "openid.userInfo", allowed: declared, issue: issue)
            }
            if let url = openid.endSession {
                checkEndpoint(url, field: "openid.endSession", allowed: declared, issue: issue)
            }
            if let tenants = openid.multiTenantIssuer {
                if !declared.contains(tenants.placeholder) {
                    issue(
                        "openid.multiTenantIssuer.placeholder",
                        "'\(DisplayText.sanitized(tenants.placeholder, limit: 40))' is not a declared placeholder; declare it under \"placeholders\"."
                    )
                } else if descriptor.issuer?.identifier.contains("{\(tenants.placeholder)}") == false {
                    issue(
                        "openid.multiTenantIssuer.placeholder",
                        "'{\(tenants.placeholder)}' does not appear in issuer.identifier, so no tenant would take its place."
                    )
                }
                if tenants.claim.isEmpty || tenants.values.isEmpty || tenants.values.contains(where: \.isEmpty) {
                    issue("openid.multiTenantIssuer", "needs a claim and at least one placeholder value, none empty.")
                }
                for (value, tenant) in (tenants.aliases ?? [:]).sorted(by: { $0.key < $1.key }) {
                    if tenants.values.contains(value) {
                        issue(
                            "openid.multiTenantIssuer.aliases",
                            "'\(DisplayText.sanitized(value, limit: 40))' is in values (any tenant) and in aliases (one tenant); keep it in one."
                        )
                    } else if tenant.isEmpty || !tenant.unicodeScalars.allSatisfy(Self.isTenantCharacter) {
                        issue(
                            "openid.multiTenantIssuer.aliases.\(DisplayText.sanitized(value, limit: 40))",
                            "must be a tenant id: letters, digits and '-' only.")
                    }
                }
                for value in (tenants.excluding ?? [:]).keys.sorted() where !tenants.values.contains(value) {
                    issue(
                        "openid.multiTenantIssuer.excluding",
                        "'\(DisplayText.sanitized(value, limit: 40))' is not one of values; only an \"any tenant\" value can exclude tenants."
                    )
                }
            }
            if descriptor.issuer == nil {
                issue(
                    "openid",
                    "needs issuer.identifier: an ID token's iss is compared with it (OpenID Connect Core §3.1.3.7); give the provider's issuer, as its discovery document names it."
                )
            }
            let accepted = Set(IDTokenAlgorithm.allCases.map(\.rawValue))
            for name in openid.signingAlgorithms ?? [] where !accepted.contains(name) {
                issue(
                    "openid.signingAlgorithms",
                    "'\(DisplayText.sanitized(name, limit: 20))' is not an algorithm AuthKit verifies ID tokens with; use \(IDTokenAlgorithm.allCases.map(\.rawValue).joined(separator: ", "))."
                )
            }
            if openid.signingAlgorithms?.isEmpty == true {
                issue(
                    "openid.signingAlgorithms", "is empty; leave it out for RS256, or list the provider's algorithms.")
            }
        }
    }

    /// An OAuth 1.0a descriptor's `oauth1` section.
    private func checkOAuth1Endpoints(
        _ descriptor: DescriptorFile, declared: Set<String>, issue: (String, String) -> Void
    ) {
        if let oauth1 = descriptor.oauth1 {
            for (field, url) in [
                ("requestTokenURL", oauth1.requestTokenURL), ("authorizeURL", oauth1.authorizeURL),
                ("accessTokenURL", oauth1.accessTokenURL), ("authenticateURL", oauth1.authenticateURL),
                ("invalidateTokenURL", oauth1.invalidateTokenURL),
            ] {
                guard let url else { continue }
                // The OAuth 1.0a client takes none (it refused them only at
                // sign-in, after `providers validate` had said ok).
                if !Self.variables(in: url).isEmpty {
                    issue(
                        "oauth1.\(field)",
                        "takes no placeholders (OAuth 1.0a endpoints are written in full); write the URL as it is.")
                } else {
                    checkEndpoint(url, field: "oauth1.\(field)", allowed: declared, issue: issue)
                }
            }
            for (field, method) in [
                ("requestTokenMethod", oauth1.requestTokenMethod), ("accessTokenMethod", oauth1.accessTokenMethod),
            ] {
                if let problem = method.flatMap(OAuth1Endpoints.tokenCallMethodProblem) {
                    issue("oauth1.\(field)", problem)
                }
            }
            // RFC 5849 §3.5: each protocol parameter goes in one place, the
            // header. One among these parameters (sent in the query) was
            // refused by the signer or by the server only at sign-in.
            for name in (oauth1.requestTokenParameters ?? [:]).keys.sorted() where name.hasPrefix("oauth_") {
                issue(
                    "oauth1.requestTokenParameters.\(name)",
                    "is a protocol parameter, which AuthKit sends in the Authorization header (RFC 5849 §3.5); "
                        + "leave it out.")
            }
            for (field, url) in [("authorizeURL", oauth1.authorizeURL), ("authenticateURL", oauth1.authenticateURL)] {
                let query = url.flatMap { URLComponents(string: $0)?.percentEncodedQuery } ?? ""
                if (FormURLEncoding.decode(query) ?? []).contains(where: { $0.0 == "oauth_token" }) {
                    issue(
                        "oauth1.\(field)",
                        "names oauth_token in its query; AuthKit adds this attempt's request token (RFC 5849 §2.2): "
                            + "leave it out.")
                }
            }
            if let method = oauth1.signatureMethod, !["HMAC-SHA1", "HMAC-SHA256", "PLAINTEXT"].contains(method) {
                issue(
                    "oauth1.signatureMethod", "'\(method)' is not supported; use HMAC-SHA1, HMAC-SHA256 or PLAINTEXT.")
            }
        } else {
            issue("oauth1", "missing; an OAuth 1.0a provider needs requestTokenURL, authorizeURL and accessTokenURL.")
        }
    }

    /// `followUp`, `refresh` and `revocation`: URLs, variables, statuses, methods.
    private func checkRequestTemplates(
        _ descriptor: DescriptorFile, declared: Set<String>, issue: (String, String) -> Void
    ) {
        let templateVariables = declared.union(Self.runtimeVariables)
        for (field, template) in [
            ("followUp", descriptor.followUp), ("refresh", descriptor.refresh), ("revocation", descriptor.revocation),
        ] {
            guard let template else { continue }
            checkEndpoint(template.url, field: "\(field).url", allowed: templateVariables, issue: issue)
            if Self.variables(in: template.url).contains("client_secret") {
                // URLs reach logs, proxies and history; a secret goes in a parameter or header.
                issue("\(field).url", "must not contain {client_secret}; send the secret as a parameter or header.")
            }
            // With `query`, the parameters are the URL: a secret among them
            // reached server and proxy logs with no word, from any file.
            let secrets: Set<String> = ["client_secret", "access_token", "refresh_token"]
            let inURL = Set((template.parameters ?? [:]).values.flatMap { Self.variables(in: $0) }).intersection(
                secrets)
            if template.encoding == .query, !inURL.isEmpty, template.secretsInURL != true {
                issue(
                    "\(field).parameters",
                    "would send \(inURL.sorted().map { "{\($0)}" }.joined(separator: ", ")) in the URL (encoding 'query'), where server and proxy logs keep it; use 'form' or 'json', or, where the provider takes it only there (Instagram's Graph API), set \(field).secretsInURL to true."
                )
            }
            // So does the URL's own query (`…/r?refresh_token={refresh_token}`),
            // whatever the encoding; and RFC 7009's own parameters (a
            // revocation naming none) are the token, in the URL with 'query'.
            // (A token as a path segment, Qiita's revocation
            // `/access_tokens/{access_token}`, is the provider's API: kept.)
            let query = template.url.firstIndex(of: "?").map { String(template.url[$0...]) } ?? ""
            let inTemplateURL = Set(Self.variables(in: query)).intersection(["access_token", "refresh_token"])
            if !inTemplateURL.isEmpty, template.secretsInURL != true {
                issue(
                    "\(field).url",
                    "has \(inTemplateURL.sorted().map { "{\($0)}" }.joined(separator: ", ")) in its query, where server and proxy logs keep it; send it as a parameter with encoding 'form' or 'json', or, where the provider takes it only there, set \(field).secretsInURL to true."
                )
            }
            if field == "revocation", template.parameters == nil, template.encoding == .query,
                template.secretsInURL != true
            {
                issue(
                    "revocation.encoding",
                    "'query' would send RFC 7009's token parameter (the access or refresh token) in the URL, where server and proxy logs keep it; use 'form' (RFC 7009 §2.1), or, where the provider takes it only there, set revocation.secretsInURL to true."
                )
            }
            // A host is looked up in the clear (DNS), named in errors (a
            // refused origin) and shown by `providers show`: only the user's
            // own settings may stand there, never a token, code or client id.
            for name in Self.variables(in: Self.authority(of: template.url)) where Self.runtimeVariables.contains(name)
            {
                issue(
                    "\(field).url",
                    "has {\(name)} in its host; what stands there is sent to name servers and shown in messages. Put it in the path or a parameter."
                )
            }
            checkStatuses(template.successStatus, field: "\(field).successStatus", issue: issue)
            checkTemplates(
                Array((template.parameters ?? [:]).values), field: "\(field).parameters", allowed: templateVariables,
                issue: issue)
            checkTemplates(
                Array((template.headers ?? [:]).values), field: "\(field).headers", allowed: templateVariables,
                issue: issue)
            // Dropbox's and Slack's revocations authenticate with the token
            // itself (`Authorization: Bearer {access_token}`, no client
            // authentication); a header must not replace a client's.
            checkHeaderNames(
                template.headers ?? [:], field: "\(field).headers",
                authorizationAllowed: !authenticatesClient(template, field: field), issue: issue)
            if let method = template.method, !["GET", "POST", "PUT", "PATCH", "DELETE"].contains(method.uppercased()) {
                issue(
                    "\(field).method",
                    "'\(method)' is not an HTTP method AuthKit sends; use GET, POST, PUT, PATCH or DELETE.")
            }
        }

    }

    /// `redirect`: a usable port and path, loopback for http.
    private func checkRedirect(_ descriptor: DescriptorFile, declared: Set<String>, issue: (String, String) -> Void) {
        if let redirect = descriptor.redirect {
            if let port = redirect.port, !(1...65535).contains(port) {
                issue("redirect.port", "\(port) is not a TCP port; use 1–65535, or leave it out for any free port.")
            }
            if let path = redirect.path, !path.hasPrefix("/") {
                issue("redirect.path", "'\(path)' must start with '/'.")
            }
            // Foundation stopped the process at the first client built with such a scheme.
            if let scheme = redirect.scheme, !RedirectSettings.isScheme(scheme) {
                issue(
                    "redirect.scheme",
                    "'\(DisplayText.sanitized(scheme, limit: 40))' is not a URI scheme (RFC 3986 §3.1: a letter, then letters, digits, '+', '-' or '.'), as 'https' or 'com.example.app'."
                )
            }
            let scheme = redirect.scheme?.lowercased() ?? "http"
            let host = redirect.host ?? "127.0.0.1"
            // Any scheme: `https` took `a b`, an empty host or `user@evil.example`
            // and sent `redirect_uri=https://a%20b/cb`. (A private-use scheme's
            // "host" is part of its name and may be anything a URL allows.)
            if scheme == "http" || scheme == "https",
                let problem = Self.isLoopback(host: host)
                    ? nil
                    : host.isEmpty
                        ? "an empty host"
                        : host.contains(":") && !host.hasPrefix("[")
                            ? "'\(DisplayText.sanitized(host, limit: 60))' holds a port, which goes in redirect.port"
                            : Self.hostProblem(in: "\(scheme)://\(host)/")
            {
                issue("redirect.host", "is no host name: \(problem)")
            }
            if scheme == "http", !Self.isLoopback(host: host) {
                issue(
                    "redirect.host",
                    "an http redirect must go to a loopback address (127.0.0.1 or [::1], RFC 8252 §7.3); '\(host)' is not one."
                )
            }
        }
    }

    /// `refreshPolicy` numbers and `scopes` lists.
    private func checkRefreshPolicyAndScopes(
        _ descriptor: DescriptorFile, declared: Set<String>, issue: (String, String) -> Void
    ) {
        for (name, value) in [
            ("marginSeconds", descriptor.refreshPolicy?.marginSeconds),
            ("aheadSeconds", descriptor.refreshPolicy?.aheadSeconds),
            ("minimumAgeSeconds", descriptor.refreshPolicy?.minimumAgeSeconds),
            ("assumedLifetimeSeconds", descriptor.refreshPolicy?.assumedLifetimeSeconds),
        ] {
            if let value, !(value.isFinite && value >= 0) {
                issue("refreshPolicy.\(name)", "must be a number of seconds, 0 or more.")
            }
        }
        for (field, scopes) in [
            ("scopes.default", descriptor.scopes?.default), ("scopes.known", descriptor.scopes?.known),
        ] {
            // A control character is the loader's own finding, reported before this.
            for (index, scope) in (scopes ?? []).enumerated()
            where !scope.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
                if let problem = ScopeToken.problem(scope) {
                    issue("\(field)[\(index)]", ScopeToken.describe(problem, scope))
                }
            }
        }
        if let separator = descriptor.scopes?.separator, separator.isEmpty {
            issue("scopes.separator", "must not be empty; most providers use \" \", some \",\".")
        }
    }

    // MARK: - Helpers

    private static let idCharacters = Set("abcdefghijklmnopqrstuvwxyz0123456789-_".unicodeScalars)

    /// A provider id or placeholder name: lowercase letters, digits, '-' and '_'
    /// (it becomes a file name and part of an environment variable's name).
    package static func isValidName(_ name: String) -> Bool {
        !name.isEmpty && !name.unicodeScalars.contains { !idCharacters.contains($0) }
    }

    /// True for `127.0.0.0/8`, `::1` (bracketed or not) and `localhost`.
    /// Read byte by byte (it runs for every request the default transport
    /// sends): an IPv4 address is four octets of one to three decimal digits,
    /// each at most 255 (no sign, as `getaddrinfo` would not read one), and
    /// no leading zero: `getaddrinfo` and libcurl read `010` as octal and do
    /// not take `08` as a number at all, so `127.0.0.08` was looked up by
    /// name, and a resolver could send the credential it carries in clear
    /// anywhere.
    package static func isLoopback(host: String) -> Bool {
        var bytes = Substring(host).utf8
        if bytes.first == UInt8(ascii: "["), bytes.last == UInt8(ascii: "]") { bytes = bytes.dropFirst().dropLast() }
        if bytes.elementsEqual("::1".utf8) { return true }
        if bytes.count == 9, String(Substring(bytes)).lowercased() == "localhost" { return true }
        guard bytes.starts(with: "127.".utf8) else { return false }
        var octets = 0
        var digits = 0
        var value = 0
        for byte in bytes {
            if byte == UInt8(ascii: ".") {
                guard digits > 0 else { return false }
                octets += 1
                digits = 0
                value = 0
            } else if byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") {
                guard digits == 0 || value > 0 else { return false } // a leading zero
                digits += 1
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
                guard digits <= 3, value <= 255 else { return false }
            } else {
                return false
            }
        }
        return octets == 3 && digits > 0
    }

    /// `{name}` occurrences in `text`.
    /// `scheme://authority` of a URL template, as written (placeholders kept).
    package static func authority(of template: String) -> String {
        guard let start = template.firstRange(of: "://")?.upperBound else { return "" }
        let end = template[start...].firstIndex { "/?#".contains($0) } ?? template.endIndex
        return String(template[..<end])
    }

    package static func variables(in text: String) -> [String] {
        var names = [String]()
        var rest = Substring(text)
        while let open = rest.firstIndex(of: "{") {
            guard let close = rest[open...].firstIndex(of: "}") else { break }
            names.append(String(rest[rest.index(after: open)..<close]))
            rest = rest[rest.index(after: close)...]
        }
        return names
    }

    /// Header fields a descriptor may not set: the connection's own (the
    /// transport frames the request and names the host: a `Host` of the
    /// file's sent a request for one host to another's front end), and a
    /// name that is no field name (it was dropped without a word).
    static let headersNotSettable: Set<String> = [
        "host", "content-length", "transfer-encoding", "connection", "upgrade", "te", "keep-alive", "trailer",
        "proxy-authorization", "proxy-connection",
    ]

    /// Whether a template's request carries the client's authentication:
    /// as it says, or, for a revocation naming no parameters and no
    /// authentication, RFC 7009's default (the token endpoint's).
    private func authenticatesClient(_ template: DescriptorFile.Template, field: String) -> Bool {
        if let authentication = template.clientAuthentication { return authentication != .none }
        return field == "revocation" && template.parameters == nil
    }

    private func checkHeaderNames(
        _ headers: [String: String], field: String, authorizationAllowed: Bool, issue: (String, String) -> Void
    ) {
        for name in headers.keys.sorted() {
            let shown = DisplayText.sanitized(name, limit: 60)
            if HTTPField.Name(name) == nil {
                issue(
                    "\(field).\(shown)",
                    "is not an HTTP field name (RFC 9110 §5.1: a token, no spaces); fix or remove it.")
            } else if Self.headersNotSettable.contains(name.lowercased()) {
                issue("\(field).\(shown)", "is the transport's to set, not a descriptor's; remove it.")
            } else if name.lowercased() == "authorization", !authorizationAllowed {
                issue(
                    "\(field).\(shown)",
                    "would replace the client's authentication (clientAuthentication) with the file's own; remove it, or set clientAuthentication to none where the provider takes the header instead."
                )
            }
        }
    }

    private func checkTemplates(
        _ values: [String], field: String, allowed: Set<String>, issue: (String, String) -> Void
    ) {
        for value in values {
            for name in Self.variables(in: value) where !allowed.contains(name) {
                issue(
                    field,
                    // Only what this field takes: token.headers takes no run-time values.
                    allowed.isDisjoint(with: Self.runtimeVariables)
                        ? "'{\(name)}' is not a declared placeholder; declare it under \"placeholders\" (this field takes placeholders only)."
                        : "'{\(name)}' is not a known variable or declared placeholder; declare it under \"placeholders\" or use one of \(allowed.intersection(Self.runtimeVariables).sorted().map { "{\($0)}" }.joined(separator: ", "))."
                )
            }
        }
    }

    /// The parameter names in `url`'s query, percent-decoded where they can be.
    static func queryNames(in url: String) -> [String] {
        queryPairs(in: url).map(\.name)
    }

    /// The names and values of `url`'s query, decoded (as written where they do not decode).
    static func queryPairs(in url: String) -> [(name: String, value: String)] {
        guard
            let query = url.split(separator: "#", maxSplits: 1).first?.split(separator: "?", maxSplits: 1).dropFirst()
                .first
        else { return [] }
        return query.split(separator: "&").map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            let value = parts.count > 1 ? parts[1] : ""
            return (
                PercentEncoding.decode(parts[0], plusAsSpace: true) ?? parts[0],
                PercentEncoding.decode(value, plusAsSpace: true) ?? value
            )
        }
    }

    private func checkEndpoint(_ text: String, field: String, allowed: Set<String>, issue: (String, String) -> Void) {
        let names = Self.variables(in: text)
        for name in names where !allowed.contains(name) {
            issue(
                field,
                "'{\(name)}' is an unresolved placeholder; declare it under \"placeholders\" (with a description and optional default)."
            )
        }
        // Substitute harmless values so the URL's shape can be checked.
        var sample = text
        for name in Set(names) { sample = sample.replacing("{\(name)}", with: "x") }
        guard !text.isEmpty else {
            issue(field, "missing endpoint URL.")
            return
        }
        guard let components = URLComponents(string: sample), let scheme = components.scheme?.lowercased(),
            let host = components.host, !host.isEmpty
        else {
            // Not quoted when it holds an `@`: `https://client:secret@/token`
            // (no host) fails here, before the user-and-password check
            // below, and quoting it printed the secret.
            let quoted =
                text.contains("@") ? "the URL (not repeated: it holds an '@', as user:password@ does)" : "'\(text)'"
            issue(field, "\(quoted) is not an absolute URL; write it in full, e.g. https://example.com/oauth/token.")
            return
        }
        // RFC 9110 §4.2.4: an http(s) URL a request targets carries no user
        // name or password. Sent, they would go to the server as HTTP Basic
        // credentials (libcurl and URLSession use them), beside AuthKit's own.
        // The URL is not repeated: its password would be.
        if components.user != nil || components.password != nil {
            issue(
                field,
                "an endpoint URL must not carry a user name or password (user:password@, RFC 9110 §4.2.4); remove them. The client's own id and secret go in config.json or $AUTHKIT_<ID>_CLIENT_ID / _CLIENT_SECRET."
            )
            return
        }
        if let problem = Self.hostProblem(in: sample) {
            issue(field, problem)
            return
        }
        switch scheme {
        case "https":
            break
        case "http" where Self.isLoopback(host: host):
            break // local test servers (RFC 8252 §8.3 allows loopback without TLS)
        default:
            issue(
                field,
                "'\(text)' must use https (RFC 6749 §3.1, §3.2); plain http is only allowed for loopback test servers.")
        }
        if components.fragment != nil {
            issue(field, "an endpoint URL must not have a fragment (RFC 6749 §3.1).")
        }
        // A port no connection can use failed only when the request was
        // sent, as a network error, though the file was called valid.
        if let port = components.port, !(1...65535).contains(port) {
            issue(field, "its port \(port) is not 1–65535; write the port the server listens on.")
        }
    }

    /// Why the host of `url` (an absolute URL whose placeholders have been
    /// filled) is not written as the name requests go to; `nil` when it is:
    /// ASCII letters, digits, `-`, `.` and `_`, or an IP literal in brackets.
    ///
    /// The file is what a person reviews and what `providers show` prints,
    /// but libcurl and browsers turn a non-ASCII host into its IDNA A-label
    /// (RFC 5890: `gіthub.com` with a Cyrillic `і` is `xn--gthub-n2e.com`)
    /// and decode a percent-encoded one (`github.com%2eevil.example` is
    /// `github.com.evil.example`, as it is to Foundation's `URL.host`).
    /// Asking for the name as requests use it keeps what is read and what is
    /// used the same, and no look-alike letter can hide in a host.
    package static func hostProblem(in url: String) -> String? {
        guard let start = url.firstRange(of: "://")?.upperBound else { return nil }
        let authority = url[start...].prefix { !"/?#".contains($0) }
        if authority.hasPrefix("[") { return nil } // an IP literal: URLComponents has checked it
        let host = authority.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).first ?? authority
        if !host.allSatisfy(\.isASCII) {
            return
                "the host '\(host)' is not ASCII; write the ASCII name requests go to, its IDNA form ('xn--…', RFC 5890), so that no look-alike letter hides in it."
        }
        if host.contains("%") {
            return
                "the host '\(host)' is percent-encoded, and requests decode it ('%2e' is '.'); write the name as requests use it: letters, digits, '-' and '.'."
        }
        if let odd = host.first(where: { !isHostNameCharacter($0) }) {
            return "the host '\(host)' holds '\(odd)', which no host name has; write the server's name or address."
        }
        return nil
    }

    /// What a host name is written with: ASCII letters and digits, `-`, `.`
    /// and `_` (which DNS names in practice hold). Checked for ASCII first.
    static func isHostNameCharacter(_ character: Character) -> Bool {
        character.isLetter || character.isNumber || "-._".contains(character)
    }

    /// What a tenant id is written with, as the verifier takes a token's
    /// tenant claim: ASCII letters, digits and `-`.
    static func isTenantCharacter(_ scalar: Unicode.Scalar) -> Bool {
        scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || scalar == "-")
    }

    private func checkStatuses(_ statuses: [Int]?, field: String, issue: (String, String) -> Void) {
        guard let statuses else { return }
        if statuses.isEmpty { issue(field, "must list at least one status, e.g. [200].") }
        for status in statuses where !(200...299).contains(status) {
            issue(field, "\(status) is not a success status; list 2xx statuses only.")
        }
    }
}
