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
            // Rendered with a marker in the tenant's place (letters only, so
            // encoding keeps it as is); the token's tenant replaces it.
            let marker = "authkittenant" + String(SecureRandom.token().filter(\.isLetter).prefix(12))
            var marked = placeholders
            marked.values[tenants.placeholder] = marker
            let template = try marked.render(identifier, inURL: true, field: "issuer.identifier")
            // An alias names one tenant: still checked as the others are,
            // so that its keys' own issuers are held to it too.
            issuer = .perTenant(
                claim: tenants.claim, excluding: tenants.exclusions(for: value), only: tenants.alias(of: value)
            ) { tenant in
                template.replacing(marker, with: tenant)
            }
        } else {
            issuer = .exact(try placeholders.render(identifier, inURL: true, field: "issuer.identifier"))
        }
    }
}
