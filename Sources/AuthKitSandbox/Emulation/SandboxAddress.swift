import AuthKit

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Where a provider's endpoints live in the sandbox: every URL
/// `https://HOST/PATH` of the descriptor becomes `BASE/HOST/PATH`, so one
/// loopback origin serves every host of the provider (Instagram's
/// `api.instagram.com` and `graph.instagram.com`) without their paths colliding.
///
/// The rule is a pure function of the descriptor and the base URL, so a
/// client in another process (`authkit --sandbox URL`) points its copy of the
/// descriptor at a running sandbox without asking it anything.
package struct SandboxAddress: Sendable {
    /// `http://127.0.0.1:PORT`, no trailing slash.
    let base: String

    package init(base: URL) {
        var text = base.absoluteString
        while text.hasSuffix("/") { text.removeLast() }
        self.base = text
    }

    /// `https://qiita.com/api/v2/oauth/authorize` → `BASE/qiita.com/api/v2/oauth/authorize`.
    /// Placeholders (`https://{team}.qiita.com/…`) stay placeholders.
    func rewrite(_ url: String) -> String {
        guard let start = url.firstRange(of: "://")?.upperBound else { return url }
        return base + "/" + url[start...]
    }

    /// The path part of a rewritten URL template (no query), as requests arrive at it.
    func pathTemplate(of url: String) -> TemplatePattern {
        let rewritten = rewrite(url)
        var path = rewritten.hasPrefix(base) ? String(rewritten.dropFirst(base.count)) : rewritten
        if let mark = path.firstIndex(of: "?") { path = String(path[..<mark]) }
        return TemplatePattern(path)
    }

    /// The issuer the sandbox presents: the descriptor's, rewritten, or
    /// `BASE/HOST` of the authorization endpoint (the token endpoint for a
    /// device-only provider) when the descriptor names none.
    func issuer(for descriptor: ProviderDescriptor) -> String {
        if let issuer = descriptor.issuer?.identifier { return rewrite(issuer) }
        let any = descriptor.authorization?.url ?? descriptor.oauth1?.authorizeURL ?? descriptor.token?.url ?? ""
        guard let start = any.firstRange(of: "://")?.upperBound else { return base }
        return base + "/" + any[start...].prefix { $0 != "/" && $0 != "?" }
    }

    /// `descriptor` with every endpoint (and the issuer) at the sandbox;
    /// redirect settings, encodings and field paths unchanged.
    func point(_ descriptor: ProviderDescriptor) -> ProviderDescriptor {
        var pointed = descriptor
        pointed.name = descriptor.name + " (sandbox)"
        pointed.source = descriptor.source + " (sandbox at \(base))"
        pointed.authorization?.url = rewrite(descriptor.authorization?.url ?? "")
        pointed.authorization?.pushedRequestURL = descriptor.authorization?.pushedRequestURL.map(rewrite)
        pointed.introspectionURL = descriptor.introspectionURL.map(rewrite)
        pointed.token?.url = rewrite(descriptor.token?.url ?? "")
        pointed.followUp?.url = rewrite(descriptor.followUp?.url ?? "")
        pointed.refresh?.url = rewrite(descriptor.refresh?.url ?? "")
        pointed.revocation?.url = rewrite(descriptor.revocation?.url ?? "")
        pointed.device?.url = rewrite(descriptor.device?.url ?? "")
        if descriptor.issuer != nil { pointed.issuer?.identifier = issuer(for: descriptor) }
        pointed.openID?.keySetURL = rewrite(descriptor.openID?.keySetURL ?? "")
        pointed.openID?.userInfoURL = descriptor.openID?.userInfoURL.map(rewrite)
        pointed.openID?.endSessionURL = descriptor.openID?.endSessionURL.map(rewrite)
        pointed.whoAmI?.url = rewrite(descriptor.whoAmI?.url ?? "")
        // The API is the sandbox's too (/whoami, /echo): a credential the
        // sandbox issued goes there and nowhere else.
        if let origin = URL(string: base)?.origin { pointed.apiOrigins = APIOrigins([origin]) }
        if let oauth1 = descriptor.oauth1 {
            pointed.oauth1?.requestTokenURL = rewrite(oauth1.requestTokenURL)
            pointed.oauth1?.authorizeURL = rewrite(oauth1.authorizeURL)
            pointed.oauth1?.authenticateURL = oauth1.authenticateURL.map(rewrite)
            pointed.oauth1?.accessTokenURL = rewrite(oauth1.accessTokenURL)
            pointed.oauth1?.invalidateTokenURL = oauth1.invalidateTokenURL.map(rewrite)
        }
        return pointed
    }
}

extension ProviderDescriptor {
    /// This descriptor with its endpoints at a sandbox listening on `base`
    /// (`http://127.0.0.1:8790`): what a client uses to talk to an emulation
    /// running in another process (`authkit sandbox`). The display name gains
    /// "(sandbox)"; every quirk (encodings, statuses, field paths) is kept.
    public func pointed(atSandbox base: URL) -> ProviderDescriptor {
        SandboxAddress(base: base).point(self)
    }
}
