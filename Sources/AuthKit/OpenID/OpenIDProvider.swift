#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A descriptor's `openid` part as one client uses it: placeholders filled
/// in, URLs parsed once (as ``ResolvedClient`` does for the other endpoints).
struct OpenIDProvider: Sendable {
    /// What an ID token's `iss` must be.
    let issuer: IDTokenVerifier.ExpectedIssuer
    /// `jwks_uri`.
    let keySet: URL
    let algorithms: Set<IDTokenAlgorithm>
    /// `userinfo_endpoint` (Core §5.3).
    let userInfo: URL?
    /// `end_session_endpoint` (RP-Initiated Logout 1.0 §2).
    let endSession: URL?

    /// - Parameter placeholders: the descriptor's placeholders and their values.
    init(
        _ settings: OpenIDSettings, issuer identifier: String, descriptor: ProviderDescriptor,
        placeholders: TemplateVariables
    ) throws {
        func url(_ template: String?, _ field: String) throws -> URL? {
            guard let template else { return nil }
            guard let url = URL(string: try placeholders.render(template, inURL: true, field: field)), url.host != nil
            else {
                throw AuthKitError.invalidFile([
                    FileIssue(file: descriptor.source, field: field, problem: "is not an absolute URL.")
                ])
            }
            return url
        }
        keySet = try url(settings.keySetURL, "openid.keys")!
        userInfo = try url(settings.userInfoURL, "openid.userInfo")
        endSession = try url(settings.endSessionURL, "openid.endSession")
        algorithms = settings.algorithms
        if let tenants = settings.multiTenantIssuer, let value = placeholders.values[tenants.placeholder],
            tenants.meansAnyTenant(value) || tenants.alias(of: value) != nil
        {
            // The token's tenant between what surrounds it.
            let (prefix, suffix) = try Self.tenantIssuer(
                identifier, placeholders: placeholders, tenantPlaceholder: tenants.placeholder,
                source: descriptor.source)
            // An alias names one tenant: still checked as the others are,
            // so that its keys' own issuers are held to it too.
            issuer = .perTenant(
                claim: tenants.claim, excluding: tenants.exclusions(for: value), only: tenants.alias(of: value)
            ) { tenant in
                prefix + tenant + suffix
            }
        } else {
            issuer = .exact(try placeholders.render(identifier, inURL: true, field: "issuer.identifier"))
        }
    }

    /// What an "any tenant" issuer has around its tenant
    /// (`https://login.microsoftonline.com/` and `/v2.0`): `identifier`
    /// rendered with a marker of letters in the tenant's place (encoding
    /// keeps it as it is), split around it. One rendering for both checks:
    /// an ID token's `iss` (its tenant between them) and a redirect's `iss`
    /// (RFC 9207 §2.4: one tenant between them).
    static func tenantIssuer(
        _ identifier: String, placeholders: TemplateVariables, tenantPlaceholder: String, source: String
    ) throws -> (prefix: String, suffix: String) {
        let marker = "authkittenant" + String(SecureRandom.token().filter(\.isLetter).prefix(12))
        var marked = placeholders
        marked.values[tenantPlaceholder] = marker
        let template = try marked.render(identifier, inURL: true, field: "issuer.identifier")
        guard let range = template.firstRange(of: marker) else {
            // The validator refuses such a file; said again rather than guessed.
            throw AuthKitError.invalidFile([
                FileIssue(
                    file: source, field: "openid.multiTenantIssuer.placeholder",
                    problem: "'{\(tenantPlaceholder)}' does not appear in issuer.identifier.")
            ])
        }
        return (String(template[..<range.lowerBound]), String(template[range.upperBound...]))
    }
}
