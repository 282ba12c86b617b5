@testable import AuthKit

/// A descriptor written in code, as a test would write the JSON file: the
/// members of `DescriptorFile`, resolved by the same code that resolves a file
/// (so a test exercises the real defaults). Not validated, so a test can build
/// what the validator would refuse.
public func testDescriptor(
    id: String, name: String? = nil, protocol kind: ProtocolKind, authorization: DescriptorFile.Authorization? = nil,
    token: DescriptorFile.Token? = nil, pkce: PKCEMode? = nil, issuer: DescriptorFile.Issuer? = nil,
    followUp: DescriptorFile.Template? = nil, refresh: DescriptorFile.Template? = nil,
    revocation: DescriptorFile.Template? = nil, oauth1: DescriptorFile.OAuth1? = nil,
    openid: DescriptorFile.OpenID? = nil
) -> ProviderDescriptor {
    DescriptorFile(
        id: id, name: name, protocol: kind, authorization: authorization, token: token, pkce: pkce, issuer: issuer,
        openid: openid, followUp: followUp, refresh: refresh, revocation: revocation, oauth1: oauth1
    ).resolved(source: "\(id).json (test)")
}
