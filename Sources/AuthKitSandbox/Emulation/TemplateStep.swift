import AuthKit

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A request that fits one of the descriptor's templates (follow-up exchange,
/// provider refresh, revocation): the right method, the fixed parameters, and
/// the values the client put in each `{variable}`.
struct TemplateCall: Sendable {
    let template: RequestTemplate
    let parameters: Parameters
    /// `{variable}` → what the client sent there (URL path, parameters, headers).
    var bindings: [String: String] = [:]
    /// A variable bound to two different values.
    var conflict: String?
    let request: SandboxRequest

    /// `nil` when the request is not this template's (method or fixed
    /// parameters differ); a request that is, but is malformed, is still
    /// claimed so its refusal is in the template's shape.
    init?(template: RequestTemplate, request: SandboxRequest, pathCaptures: [String: String]) {
        guard request.method == template.method.uppercased() else { return nil }
        let pairs: [(String, String)]
        switch request.bodyParameters(template.encoding) {
        case .success(let decoded): pairs = decoded
        case .failure: pairs = []
        }
        let parameters = Parameters(pairs)
        for (name, value) in template.parameters where TemplatePattern(value).variables.isEmpty {
            guard parameters.values[name] == value else { return nil }
        }
        self.template = template
        self.parameters = parameters
        self.request = request
        bind(pathCaptures)
        for (name, value) in template.parameters {
            if let sent = parameters.values[name], let captured = TemplatePattern(value).match(sent) { bind(captured) }
        }
        for (name, value) in template.headers {
            let pattern = TemplatePattern(value)
            if !pattern.variables.isEmpty, let sent = request.header(name.lowercased()),
                let captured = pattern.match(sent)
            {
                bind(captured)
            }
        }
    }

    private mutating func bind(_ captured: [String: String]) {
        for (name, value) in captured {
            if let existing = bindings[name], existing != value { conflict = name }
            bindings[name] = value
        }
    }

    /// Every variable of the template, with the place it should have come from when missing.
    var missing: String? {
        for (name, value) in template.parameters.sorted(by: { $0.key < $1.key }) {
            for variable in TemplatePattern(value).variables where bindings[variable] == nil {
                return "parameter '\(name)' ({\(variable)})"
            }
        }
        for variable in TemplatePattern(template.url).variables where bindings[variable] == nil {
            return "{\(variable)} in the URL"
        }
        return nil
    }
}

/// The descriptor's own calls, answered from what the template says they carry.
extension Emulator {
    func templateStep(_ role: Role, _ call: TemplateCall) -> SandboxResponse {
        let template = call.template
        let step: String
        switch role {
        case .followUp: step = "follow-up"
        case .refresh: step = "refresh"
        default: step = "revocation"
        }
        do {
            if case .failure(let problem) = call.request.bodyParameters(template.encoding) {
                throw Refusal.invalidRequest(problem.text)
            }
            if let repeated = call.parameters.repeated {
                throw Refusal.invalidRequest("'\(repeated)' is sent more than once")
            }
            if let conflict = call.conflict {
                throw Refusal.invalidRequest("{\(conflict)} has two different values in one request")
            }
            if let missing = call.missing { throw Refusal.invalidRequest("\(missing) is missing") }
            // A client without a secret identifies itself as the provider's public clients do (authenticateClient).
            _ = try authenticateClient(call.request, call.parameters, as: template.clientAuthentication)
            try checkClientVariables(call.bindings)
            switch role {
            case .followUp:
                let (grantID, grant) = try grantOfAccessToken(call.bindings)
                // The provider's long-lived token: 60 days, as Instagram's.
                return issue(
                    grant: grantID, scopes: grant.scopes, step: step,
                    summary: "follow-up exchange for account \(grant.account)",
                    mapping: template.response, status: template.successStatus.first, lifetime: 60 * 86_400,
                    refresh: false)
            case .refresh:
                let (grantID, grant) =
                    try call.bindings["refresh_token"].map(liveRefreshToken) ?? grantOfAccessToken(call.bindings)
                if let token = call.bindings["refresh_token"] { spendRefreshToken(token) }
                return issue(
                    grant: grantID, scopes: grant.scopes, step: step,
                    summary: "refreshed (provider's own call) for account \(grant.account)",
                    mapping: template.response, status: template.successStatus.first,
                    lifetime: call.bindings["refresh_token"] == nil ? 60 * 86_400 : nil,
                    refresh: call.bindings["refresh_token"] != nil)
            default:
                // RFC 7009 §2.2: an unknown or already invalid token is not an error.
                let token =
                    call.bindings["access_token"] ?? call.bindings["refresh_token"] ?? call.parameters["token"] ?? ""
                let grant = ledger.accessTokens[token]?.grant ?? ledger.refreshTokens[token]?.grant
                if let grant { ledger.revoke(grant: grant) }
                let status = template.successStatus.first ?? 200
                return .empty(
                    status: status, step: step,
                    summary: grant == nil ? "unknown token: nothing to revoke" : "grant revoked")
            }
        } catch let refusal as Refusal {
            return shaped(refusal, mapping: template.response, step: step)
        } catch {
            return shaped(Refusal("server_error", "\(error)", status: 500), mapping: template.response, step: step)
        }
    }

    /// `{client_id}`, `{client_secret}` and `{redirect_uri}` must be the registered client's.
    private func checkClientVariables(_ bindings: [String: String]) throws {
        if let id = bindings["client_id"], !ExactText.same(id, options.clientID) {
            throw Refusal.invalidClient("unknown client_id")
        }
        if let secret = bindings["client_secret"] {
            guard let expected = options.clientSecret, ConstantTime.equals(secret, expected) else {
                throw Refusal.invalidClient("wrong client secret")
            }
        }
        if let redirect = bindings["redirect_uri"], !isRegistered(redirect) {
            throw Refusal.invalidRequest("redirect_uri is not registered")
        }
    }

    private func grantOfAccessToken(_ bindings: [String: String]) throws -> (Int, GrantLedger.Grant) {
        guard let token = bindings["access_token"] else {
            throw Refusal.invalidRequest("no access token in the request")
        }
        guard let (id, grant) = ledger.liveGrant(ofAccessToken: token, at: now) else {
            throw Refusal("invalid_token", "the access token is unknown, expired or revoked", status: 400)
        }
        return (id, grant)
    }
}

extension RequestTemplate {
    /// RFC 7009 §2.1's revocation as a client that sends no `token_type_hint`
    /// (or one the server does not know) makes it: the token alone. The
    /// revocation step looks it up among access and refresh tokens alike.
    var revokingUnhintedToken: RequestTemplate {
        var template = self
        template.parameters = ["token": "{token}"]
        return template
    }
}
