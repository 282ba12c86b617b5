import Logging

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A descriptor made from what an authorization server says about itself:
/// RFC 8414 metadata, or OpenID Connect discovery.
///
/// Everything a standards-following provider needs is there: the
/// authorization, token, revocation and device endpoints; PKCE support
/// (`code_challenge_methods_supported`, RFC 8414 §2: absent means none);
/// client authentication (`token_endpoint_auth_methods_supported`, default
/// `client_secret_basic`); RFC 9207 `iss` (`authorization_response_iss_parameter_supported`);
/// the scopes it knows. The answer must name the issuer asked for, exactly
/// (RFC 8414 §3.3): metadata that names another is an impersonation attempt
/// or a misconfiguration, and is refused.
extension ProviderDescriptor {
    /// Reads `issuer`'s metadata and returns a descriptor with id `id`.
    ///
    /// Tries RFC 8414's location (`/.well-known/oauth-authorization-server`
    /// inserted between the host and the issuer's path, §3.1), then OpenID
    /// Connect's (`/.well-known/openid-configuration` appended to the issuer).
    /// The requests follow AuthKit's token-endpoint policy: no redirects, a
    /// size cap; plain http only to loopback. `timeout` bounds the whole
    /// discovery, both locations together: a server that drips its answer
    /// at the first would otherwise hold the caller for a deadline at each.
    /// - Throws: ``AuthKitError/Code/misuse`` (`.invalidIssuer`) for an
    ///   `issuer` that is no issuer identifier, before anything is sent;
    ///   ``AuthKitError/Code/invalidFile`` when the metadata names
    ///   another issuer, lacks an endpoint, or makes an invalid descriptor;
    ///   ``AuthKitError`` when neither location answers,
    ///   or no answer is complete within `timeout`.
    public static func discover(
        issuer: URL, id: String, httpClient: (any HTTPClient)? = nil, timeout: Duration = .seconds(30)
    ) async throws -> ProviderDescriptor {
        if let problem = issuerProblem(issuer) { throw AuthKitError.misuse(.invalidIssuer(problem)) }
        let http = httpClient ?? defaultHTTPClient()
        return try await withDeadline(timeout, display: issuer.redactedForLogs) {
            try await discover(issuer: issuer, id: id, http: http, timeout: timeout)
        }
    }

    /// Each request may take the whole `timeout`; the caller's deadline ends them all.
    private static func discover(issuer: URL, id: String, http: any HTTPClient, timeout: Duration) async throws
        -> ProviderDescriptor
    {
        let transport = FlowTransport(http: http, logger: Logger(label: "authkit.discovery"))
        var policy = RequestPolicy.tokenEndpoint
        policy.deadline = timeout
        let display = issuer.redactedForLogs
        var reasons = [(location: String, reason: String)]()
        var answered = false // a server answered (with a status), as opposed to none being reachable
        var refused: AuthKitError? // the first document refused, said if no location gives one
        let started = ContinuousClock.now
        let locations = Self.metadataLocations(for: issuer)
        for location in locations {
            let response: IncomingResponse
            do {
                response = try await transport.send(
                    OutgoingRequest(method: .get, url: location), step: .discovery, policy: policy)
            } catch let error as AuthKitError {
                switch error.reason {
                case .network(_, let reason):
                    reasons.append((location.redactedForLogs, reason.detail)) // the location is said once
                case .cancelled:
                    // the caller's cancellation, or the deadline: not a reason to try the next location
                    throw error
                case .responseTooLarge(_, let limit):
                    answered = true
                    reasons.append((location.redactedForLogs, "larger than the \(limit) bytes allowed"))
                default:
                    // A server that answered with a redirect was reached: not "could not be reached".
                    if case .redirectNotFollowed = error.reason { answered = true }
                    // Each reason is one clause of a list: no full stop inside it.
                    let description = "\(error)"
                    reasons.append(
                        (
                            location.redactedForLogs,
                            "\(description.hasSuffix(".") ? String(description.dropLast()) : description)"
                        ))
                }
                continue
            }
            guard response.status == 200 else {
                answered = true
                reasons.append((location.redactedForLogs, "HTTP \(response.status)"))
                continue
            }
            // A web app that answers every path with its page (HTTP 200, HTML)
            // has no metadata here; its identity server may still have it at
            // the next location. Only a JSON object is read as metadata.
            guard response.body.first(where: { !JSONParser.isWhitespace($0) }) == UInt8(ascii: "{") else {
                answered = true
                let type = response.mediaType.map { "'\(DisplayText.sanitized($0, limit: 60))'" } ?? "no Content-Type"
                reasons.append(
                    (
                        location.redactedForLogs,
                        "HTTP 200 with \(response.body.isEmpty ? "no body" : "a body that is no JSON object (\(type))")"
                    ))
                continue
            }
            do {
                return try await described(
                    response, from: location, locations: locations, issuer: issuer, id: id, transport: transport,
                    timeLeft: timeout - (ContinuousClock.now - started))
            } catch let error as AuthKitError where location != locations.last {
                // RFC 8414 §3.3: a document naming another issuer "MUST NOT
                // be used", nothing more: the next location is tried. A
                // server whose well-known route matches by prefix answers
                // its root's document for `…/tenant`, whose OpenID Connect
                // document, at the next location, is right. Only that: a
                // document of this issuer that fails a check is refused as
                // before (passed over, a discovery could end without the
                // endpoints it named).
                guard case .invalidFile(let issues) = error.reason, issues.contains(where: { $0.field == "issuer" })
                else {
                    throw error
                }
                refused = refused ?? error
                answered = true
                reasons.append((location.redactedForLogs, "a document of another issuer"))
                continue
            }
        }
        if let refused { throw refused }
        // The same reason at both locations (a redirect, a timeout) is said once, of both.
        let tried =
            reasons.count > 1 && Set(reasons.map(\.reason)).count == 1
            ? "\(reasons.map(\.location).joined(separator: " and ")): \(reasons[0].reason)"
            : reasons.map { "\($0.location): \($0.reason)" }.joined(separator: "; ")
        if answered {
            throw AuthKitError.invalidResponse(
                step: .discovery, reason: .init(.noMetadata, "no server metadata at \(display) (\(tried))"))
        }
        throw AuthKitError.network(
            url: display, reason: .init(.connectionFailed, "neither metadata location answered (\(tried))"))
    }

    /// The descriptor made of one location's answer (a JSON object):
    /// RFC 8414's supplemented by OpenID Connect's where it lacks what only
    /// OpenID Connect defines.
    /// - Throws: ``AuthKitError/Code/invalidFile`` for a document that names
    ///   another issuer, names a field twice, or fails the descriptor's checks.
    private static func described(
        _ response: IncomingResponse, from location: URL, locations: [URL], issuer: URL, id: String,
        transport: FlowTransport, timeLeft: Duration
    ) async throws -> ProviderDescriptor {
        // Refusing a field named twice, as in a provider file: the metadata
        // becomes one, and the reviewer of `providers add` would see one
        // token_endpoint (or issuer) while another one counted.
        guard
            case .object(let metadata) = try DescriptorLoader.parseRefusingRepeatedNames(
                response.body, file: location.redactedForLogs)
        else {
            throw AuthKitError.invalidFile([
                FileIssue(
                    file: location.redactedForLogs, field: "", problem: "is not a JSON object of server metadata.")
            ])
        }
        let source = location.redactedForLogs
        let described = try descriptor(from: metadata, issuer: issuer, id: id, source: source)
        // RFC 8414's document often leaves out what only OpenID Connect
        // defines (Spring Authorization Server's has `jwks_uri` but no
        // `id_token_signing_alg_values_supported`): taken alone, an OpenID
        // provider got a descriptor without its `openid` part, so no
        // nonce was sent and its ID tokens were kept unverified.
        if described.openID == nil, let openID = locations.last, openID != location,
            let supplemented = try await supplemented(
                metadata, source: source, from: openID, issuer: issuer, id: id, transport: transport,
                timeLeft: timeLeft)
        {
            return supplemented
        }
        return described
    }

    /// RFC 8414's `metadata` with the OpenID Connect members it lacks, from
    /// the same issuer's (byte for byte) document at `location`; `nil` when
    /// that document gives nothing usable, for whatever reason (none there,
    /// another issuer's, members that fail the descriptor's checks, no
    /// answer within 10 s): RFC 8414's document is then used as it is, as
    /// before this second look, which must not fail a discovery that found one.
    private static func supplemented(
        _ metadata: [String: JSONValue], source: String, from location: URL, issuer: URL, id: String,
        transport: FlowTransport, timeLeft: Duration
    ) async throws -> ProviderDescriptor? {
        var policy = RequestPolicy.tokenEndpoint
        policy.deadline = min(.seconds(10), timeLeft - .seconds(1))
        guard policy.deadline > .zero else { return nil }
        let response: IncomingResponse
        do {
            response = try await transport.send(
                OutgoingRequest(method: .get, url: location), step: .discovery, policy: policy)
        } catch {
            // The caller's cancellation ends discovery; anything else ends this look.
            if Task.isCancelled { throw AuthKitError.cancelled }
            return nil
        }
        guard response.status == 200,
            case .object(let other)? = try? DescriptorLoader.parseRefusingRepeatedNames(
                response.body, file: location.redactedForLogs),
            ExactText.same(other["issuer"]?.scalarText ?? "", issuer.absoluteString)
        else { return nil }
        var merged = metadata
        for name in openIDMembers where merged[name] == nil || merged[name] == .null { merged[name] = other[name] }
        do {
            return try descriptor(
                from: merged, issuer: issuer, id: id, source: "\(source) and \(location.redactedForLogs)")
        } catch {
            transport.logger.warning(
                "\(location.redactedForLogs) names OpenID Connect members that cannot be used (\(error)); discovered without them."
            )
            return nil
        }
    }

    /// Why `issuer` is no issuer identifier (RFC 8414 §2: "a URL that uses
    /// the https scheme and has no query or fragment components"), or nil.
    /// The query was dropped from the metadata locations while the
    /// document's issuer was compared with the whole URL, and a user name or
    /// password went to both locations as Basic credentials. The URL is not
    /// repeated: a query or a password may hold a secret.
    package static func issuerProblem(_ issuer: URL) -> String? {
        if issuer.user != nil || issuer.password != nil {
            return "carries a user name or password (user:password@); an issuer identifier is the server's plain URL"
        }
        let issuer = issuer.absoluteURL
        guard let scheme = issuer.scheme?.lowercased(), scheme == "https" || scheme == "http", issuer.host != nil
        else { return "is not an absolute https URL (RFC 8414 §2)" }
        // Plain http only for a test server on this machine: to another, no
        // request would be sent (the transport refuses it), and the refusal
        // was "neither metadata location answered".
        if scheme == "http", !issuer.isLoopback {
            return "uses plain http, which is only for a server on this machine (RFC 8414 §2 asks for https)"
        }
        if issuer.query != nil || issuer.fragment != nil {
            return "has a query or fragment, which an issuer identifier has not (RFC 8414 §2)"
        }
        return nil
    }

    /// RFC 8414 §3.1 first, then OpenID Connect Discovery 1.0 §4.
    static func metadataLocations(for issuer: URL) -> [URL] {
        guard var components = URLComponents(url: issuer.absoluteURL, resolvingAgainstBaseURL: false) else { return [] }
        // §3.1: "any terminating '/' MUST be removed before inserting '/.well-known/'".
        var path = components.percentEncodedPath
        while path.hasSuffix("/") { path.removeLast() }
        components.percentEncodedQuery = nil
        components.fragment = nil
        components.percentEncodedPath = "/.well-known/oauth-authorization-server" + path
        let rfc8414 = components.url
        components.percentEncodedPath = path + "/.well-known/openid-configuration"
        return [rfc8414, components.url].compactMap { $0 }
    }

    /// The members OpenID Connect Discovery 1.0 §3 adds that discovery
    /// reads, and RFC 9207's flag, which an OpenID Connect document may
    /// carry where the RFC 8414 one lacks it (left out, the descriptor said
    /// `iss` need not come with the redirect, and its absence went unnoticed).
    static let openIDMembers = [
        "jwks_uri", "id_token_signing_alg_values_supported", "userinfo_endpoint", "end_session_endpoint",
        "authorization_response_iss_parameter_supported",
    ]

    /// The JSON type RFC 8414 §2 gives a metadata member, named as an error says it.
    private enum MemberType: String {
        case string = "a string"
        case array = "an array of strings"
        case boolean = "a boolean"

        /// An array's every element is a string: `[{"S256":1}]` read as no
        /// methods turned PKCE off, `[["RS256"]]` as no algorithms left ID
        /// tokens unverified, and `[1]` became the scope "1".
        func admits(_ value: JSONValue) -> Bool {
            switch (self, value) {
            case (.string, .string), (.boolean, .bool): true
            case (.array, .array(let items)):
                items.allSatisfy {
                    if case .string = $0 { true } else { false }
                }
            default: false
            }
        }
    }

    /// The members discovery reads, each with its type.
    private static let memberTypes: [(name: String, type: MemberType)] = [
        ("issuer", .string), ("authorization_endpoint", .string), ("token_endpoint", .string),
        ("revocation_endpoint", .string), ("device_authorization_endpoint", .string),
        ("service_documentation", .string),
        ("token_endpoint_auth_methods_supported", .array), ("code_challenge_methods_supported", .array),
        ("scopes_supported", .array), ("authorization_response_iss_parameter_supported", .boolean),
        ("jwks_uri", .string), ("id_token_signing_alg_values_supported", .array), ("userinfo_endpoint", .string),
        ("end_session_endpoint", .string), ("pushed_authorization_request_endpoint", .string),
        ("require_pushed_authorization_requests", .boolean), ("dpop_signing_alg_values_supported", .array),
        ("introspection_endpoint", .string),
    ]

    /// The descriptor the metadata describes, validated like a file.
    /// The members that name where requests go.
    static let endpointMembers = [
        "authorization_endpoint", "token_endpoint", "device_authorization_endpoint",
        "pushed_authorization_request_endpoint", "introspection_endpoint", "revocation_endpoint", "jwks_uri",
        "userinfo_endpoint", "end_session_endpoint",
    ]

    static func descriptor(from metadata: [String: JSONValue], issuer: URL, id: String, source: String) throws
        -> ProviderDescriptor
    {
        func issue(_ field: String, _ problem: String) -> AuthKitError {
            .invalidFile([FileIssue(file: source, field: field, problem: problem)])
        }
        // RFC 8414 §2 gives each member a type. One of another type was
        // read as absent: a token_endpoint given as an array was reported
        // "missing", and a string of auth methods left the default in place.
        // `null` is taken as absent, as servers write it for "none".
        for (name, type) in memberTypes {
            guard let value = metadata[name], value != .null, !type.admits(value) else { continue }
            let found: String
            if type == .array, case .array = value {
                found = "an array with an element that is not a string"
            } else {
                found = value.typeName
            }
            throw issue(name, "is \(found), not \(type.rawValue) (RFC 8414 §2), so this metadata is refused.")
        }
        let named = metadata["issuer"]?.scalarText ?? ""
        guard ExactText.same(named, issuer.absoluteString) else {
            throw issue(
                "issuer",
                "is '\(DisplayText.sanitized(named, limit: 200))', not the '\(issuer.absoluteString)' asked for; RFC 8414 §3.3 requires them to be identical, so this metadata is refused."
            )
        }
        // Plain http reaches only loopback endpoints, for test servers (RFC
        // 8252 §8.3): on this machine, with the issuer. A remote issuer
        // naming http://localhost:8080/… (a proxy's back-end hostname leaked
        // into its metadata) would send the client secret, codes and tokens
        // in cleartext to whatever listens on that port here, another
        // user's program on a shared host.
        // A loopback issuer (a test server) reaches plain http on its own
        // origin alone: another port of this machine is another program's.
        let loopbackIssuer = DescriptorValidator.isLoopback(host: issuer.host(percentEncoded: true) ?? "")
        let issuerOrigin = DescriptorValidator.authority(of: issuer.absoluteString).lowercased()
        for name in Self.endpointMembers {
            guard let value = metadata[name]?.scalarText, value.lowercased().hasPrefix("http:") else { continue }
            if loopbackIssuer {
                guard DescriptorValidator.authority(of: value).lowercased() != issuerOrigin else { continue }
                throw issue(
                    name,
                    "is plain http ('\(DisplayText.sanitized(value, limit: 120))') on another origin than the issuer's \(issuerOrigin); on this machine that is another program's port, so this metadata is refused."
                )
            }
            throw issue(
                name,
                "is plain http ('\(DisplayText.sanitized(value, limit: 120))') though the issuer is not on this machine; its client secret and tokens would travel in cleartext to whatever listens there, so this metadata is refused."
            )
        }
        func text(_ name: String) -> String? { metadata[name]?.scalarText.flatMap { $0.isEmpty ? nil : $0 } }
        /// An endpoint URL, as data: see ``literalURL(_:)``.
        func endpoint(_ name: String) -> String? { text(name).map(Self.literalURL) }
        func list(_ name: String) -> [String]? {
            guard case .array(let items)? = metadata[name] else { return nil }
            return items.compactMap(\.scalarText)
        }
        // RFC 8414 §2: a server without the authorization code grant leaves the
        // authorization endpoint out; with a device endpoint it is device-only.
        let authorization = endpoint("authorization_endpoint")
        guard authorization != nil || text("device_authorization_endpoint") != nil else {
            throw issue(
                "authorization_endpoint",
                "missing, and so is device_authorization_endpoint; AuthKit signs in with the authorization code grant or the device grant (RFC 8628), and this server offers neither."
            )
        }
        guard let token = endpoint("token_endpoint") else { throw issue("token_endpoint", "missing.") }
        // RFC 8414 §2: absent means client_secret_basic. A list without
        // "none" does not make `token.requiresClientSecret`: Google's omits
        // it, and Google's iOS clients are public.
        let methods = list("token_endpoint_auth_methods_supported") ?? ["client_secret_basic"]
        // A client with a private key uses private_key_jwt whatever this
        // says (``ClientSettings/privateKeyFile``); this is for one with a secret.
        let authentication: ClientAuthentication
        if methods.contains("client_secret_basic") {
            authentication = .basic
        } else if methods.contains("client_secret_post") {
            authentication = .post
        } else if methods.contains("client_secret_jwt") {
            authentication = .clientSecretJWT
        } else if methods.contains("private_key_jwt") {
            authentication = .privateKeyJWT
        } else if methods.contains("none") {
            authentication = .none
        } else {
            throw issue(
                "token_endpoint_auth_methods_supported",
                "lists only \(methods.joined(separator: ", ")); AuthKit authenticates with client_secret_basic, client_secret_post, client_secret_jwt, private_key_jwt or none (a public client)."
            )
        }
        // PKCE unless the server lists its methods without S256 (RFC 9700 §2.1.1:
        // an absent list does not say the server lacks it; S256 is harmless then).
        let challengeMethods = list("code_challenge_methods_supported")
        var file = DescriptorFile(
            id: id, name: issuer.host ?? id, protocol: .oauth2, documentation: text("service_documentation"),
            authorization: authorization.map { .init(url: $0) },
            token: .init(url: token, clientAuthentication: authentication),
            pkce: challengeMethods.map { $0.contains("S256") ? .s256 : PKCEMode.none } ?? .s256,
            issuer: .init(
                identifier: named,
                includedInResponse: metadata["authorization_response_iss_parameter_supported"] == .bool(true)),
            revocation: endpoint("revocation_endpoint").map { .init(url: $0) })
        // `known` scopes only inform (help texts, the sandbox): one that is no
        // RFC 6749 §3.3 scope token ("a b", "") is left out rather than
        // refusing the server. A control character still refuses it, as
        // everywhere in discovered text.
        let scopes = list("scopes_supported")?.filter { scope in
            ScopeToken.problem(scope) == nil
                || scope.unicodeScalars.contains { $0.properties.generalCategory == .control }
        }
        if let scopes, !scopes.isEmpty { file.scopes = .init(known: scopes) }
        if let device = endpoint("device_authorization_endpoint") { file.device = .init(url: device) }
        // RFC 9126 §5: a server with a PAR endpoint gets the parameters
        // pushed, required or not: they then never pass through the browser.
        if let par = endpoint("pushed_authorization_request_endpoint") { file.authorization?.par = par }
        // RFC 9449 §5.1: DPoP where the server verifies ES256 proofs, the one
        // algorithm AuthKit proves with.
        if list("dpop_signing_alg_values_supported")?.contains("ES256") == true { file.dpop = .on }
        file.introspection = endpoint("introspection_endpoint")

        file.openid = openID(metadata, endpoint: endpoint, list: list)
        do {
            return try DescriptorLoader().decode(try JSONEncoder().encode(file), file: source)
        } catch let error as AuthKitError {
            guard case .invalidFile(let issues) = error.reason else { throw error }
            throw AuthKitError.invalidFile(issues.map(inMetadataTerms))
        }
    }

    /// The `openid` part, for an OpenID provider (Discovery 1.0 §3: its
    /// metadata has `jwks_uri` and the REQUIRED
    /// `id_token_signing_alg_values_supported`). The algorithms are those
    /// AuthKit verifies; a provider that lists none of them (HS256 alone)
    /// gets no `openid` part, since its ID tokens cannot be verified, and
    /// `providers show` then says ID tokens are not verified.
    private static func openID(
        _ metadata: [String: JSONValue], endpoint: (String) -> String?, list: (String) -> [String]?
    ) -> DescriptorFile.OpenID? {
        guard let keys = endpoint("jwks_uri"), let listed = list("id_token_signing_alg_values_supported") else {
            return nil
        }
        let algorithms = IDTokenAlgorithm.allCases.map(\.rawValue).filter(listed.contains)
        guard !algorithms.isEmpty else { return nil }
        return DescriptorFile.OpenID(
            keys: keys, signingAlgorithms: algorithms, userInfo: endpoint("userinfo_endpoint"),
            endSession: endpoint("end_session_endpoint"))
    }

    /// A URL from the network, made into a descriptor URL that means it
    /// literally: its braces percent-encoded (`%7B`, `%7D`, which is how a URL
    /// carries them anyway, RFC 3986 §2.1). A descriptor URL is a template, and
    /// a metadata document naming `https://as.example/r/{refresh_token}` as
    /// its revocation endpoint would otherwise have had `token revoke` fill in
    /// the user's tokens there.
    static func literalURL(_ text: String) -> String {
        text.replacing("{", with: "%7B").replacing("}", with: "%7D")
    }

    /// A problem the descriptor's checks found, said of the metadata it was
    /// made from: its member (`token_endpoint`, not `token.url`), and without
    /// advice to edit a file the user does not have.
    static func inMetadataTerms(_ issue: FileIssue) -> FileIssue {
        var issue = issue
        for (field, member) in [
            ("token.url", "token_endpoint"), ("authorization.url", "authorization_endpoint"),
            ("revocation.url", "revocation_endpoint"), ("device.url", "device_authorization_endpoint"),
            ("documentation", "service_documentation"), ("issuer.identifier", "issuer"),
            ("scopes.known", "scopes_supported"), ("openid.keys", "jwks_uri"),
            ("openid.userInfo", "userinfo_endpoint"), ("openid.endSession", "end_session_endpoint"),
            ("name", "issuer"),
        ]
        where issue.field == field || issue.field.hasPrefix(field + "[") || issue.field.hasPrefix(field + ".") {
            // `known` holds only the usable scopes: its index is not the metadata's.
            issue.field = field == "scopes.known" ? member : member + issue.field.dropFirst(field.count)
            break
        }
        for advice in [
            "; a provider file has no use for one, and it would reach the terminals its values are shown on. Remove it.",
            ". Remove it.",
        ] where issue.problem.hasSuffix(advice) {
            issue.problem =
                issue.problem.dropLast(advice.count)
                + "; AuthKit does not write it into a provider file, so this metadata is refused."
            break
        }
        return issue
    }
}
