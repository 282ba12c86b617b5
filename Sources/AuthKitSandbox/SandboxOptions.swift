import AuthKit

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// How a ``Sandbox`` behaves: its one registered client, what the consent
/// page decides, token lifetimes, and whether tokens and time are fixed.
///
/// The defaults are what `authkit sandbox` serves and what `authkit --sandbox`
/// expects: the client `sandbox-client` with the secret `sandbox-secret`
/// (published here, so they are not secrets), the descriptor's default
/// redirect URI, one-hour access tokens with rotating refresh tokens.
public struct SandboxOptions: Sendable {
    /// What the authorization endpoint does with a request it accepts;
    /// public as ``approves`` (three choices: a Bool or none).
    package enum Consent: String, Sendable, CaseIterable {
        /// Shows a consent page; the user (or ``SandboxUserAgent``) approves or denies.
        case ask
        /// Approves at once, as `alice`, without a page (headless use).
        case approve
        /// Denies at once: the redirect carries `error=access_denied`.
        case deny
    }

    /// A way the sandbox's ID tokens can be wrong, so that an app can check
    /// it refuses them (OpenID Connect Core §3.1.3.7). The token answer is
    /// otherwise correct: only the ID token is at fault. Given by name
    /// (``idTokenFault``), as `authkit sandbox --id-token-fault` takes it.
    package enum IDTokenFault: String, Sendable, CaseIterable {
        /// `alg: none` and no signature (RFC 7518 §3.6).
        case unsigned
        /// Signed with a key the key set does not publish.
        case unknownKey = "unknown-key"
        /// Addressed to another client (`aud`).
        case wrongAudience = "wrong-audience"
        /// Issued by another issuer (`iss`).
        case wrongIssuer = "wrong-issuer"
        /// Expired an hour ago (`exp`).
        case expired
        /// Carrying another sign-in's `nonce`.
        case wrongNonce = "wrong-nonce"
    }

    /// The names ``idTokenFault`` takes: `unsigned` (`alg: none`, RFC 7518
    /// §3.6), `unknown-key` (signed with a key the key set does not
    /// publish), `wrong-audience` (`aud`), `wrong-issuer` (`iss`), `expired`
    /// (an hour ago), `wrong-nonce` (another sign-in's).
    public static let idTokenFaults: [String] = IDTokenFault.allCases.map(\.rawValue)

    /// The client id the sandbox knows (`sandbox-client`).
    public static let standardClientID = "sandbox-client"
    /// The client secret the sandbox expects (`sandbox-secret`). Published:
    /// the sandbox holds nothing worth protecting. A descriptor that has the
    /// client sign `client_secret_jwt` assertions gets a longer one
    /// (``standardClientSecret(for:)``).
    public static let standardClientSecret = "sandbox-secret"

    /// The standard secret of a descriptor whose client signs
    /// `client_secret_jwt` assertions with it: `sandbox-secret` is 14 bytes,
    /// and an HS256 key must be at least 32 (RFC 7518 §3.2), so neither
    /// AuthKit nor the sandbox signs or checks one with it.
    package static let standardJWTClientSecret = "sandbox-secret-for-client-secret-jwt-hs256"

    /// The secret the sandbox expects by default of `descriptor`'s client,
    /// and what `authkit --sandbox` sends: ``standardJWTClientSecret`` where
    /// the descriptor authenticates the client with `client_secret_jwt`,
    /// else ``standardClientSecret``.
    package static func standardClientSecret(for descriptor: ProviderDescriptor) -> String {
        ClientAssertion.isUsed(by: descriptor) ? standardJWTClientSecret : standardClientSecret
    }
    /// The port `authkit sandbox` listens on unless told otherwise.
    public static let standardPort = 8790

    /// The loopback port to bind; 0 picks a free one.
    public var port: Int
    /// What the authorization endpoint does with a request it accepts:
    /// `nil` shows a consent page, which the user (or ``SandboxUserAgent``)
    /// answers; `true` approves at once, as ``defaultAccount``, without a
    /// page (headless use); `false` denies at once: the redirect carries
    /// `error=access_denied`. The device grant's polls likewise.
    public var approves: Bool?
    package var consent: Consent {
        get { approves.map { $0 ? .approve : .deny } ?? .ask }
        set { approves = newValue == .ask ? nil : newValue == .approve }
    }
    /// The account a sign-in approves when nobody chooses one.
    public var defaultAccount: String
    public var clientID: String
    /// `nil`: a public client, which must use PKCE (RFC 9700 §2.1.1) and must
    /// not send a secret. The standard one (`sandbox-secret`) stands for
    /// ``standardClientSecret(for:)`` of the descriptor emulated, so that a
    /// `client_secret_jwt` descriptor works with the defaults too.
    public var clientSecret: String?
    /// The redirect URIs registered for the client; `nil`: the descriptor's
    /// default redirect. A loopback `http` URI matches on any port (RFC 8252 §7.3).
    public var redirectURIs: [String]?
    /// Lifetime of access tokens; `nil`: they never expire (and no `expires_in` is sent).
    public var accessTokenLifetime: TimeInterval?
    /// Issue refresh tokens, rotated on every use (RFC 9700 §4.14.2).
    public var issuesRefreshTokens: Bool
    /// Lifetime of authorization codes (RFC 6749 §4.1.2 recommends at most 10 minutes).
    public var codeLifetime: TimeInterval
    /// The polling interval the device grant asks for (RFC 8628 §3.2); a poll
    /// sooner than this is answered `slow_down`.
    public var deviceInterval: TimeInterval
    /// Tokens, codes and user codes from one counter (`sandbox-code-1`, `sandbox-access-2`, …)
    /// instead of random bytes, so tests can compare them.
    public var deterministic: Bool
    /// The sandbox's clock (code and token expiry, OAuth 1.0a timestamps).
    public var now: @Sendable () -> Date
    /// Every ID token it issues is wrong this way, one of ``idTokenFaults``
    /// by name (`wrong-audience`); `nil`: none is. Another name is refused
    /// when the sandbox starts (code `misuse`, field
    /// `SandboxOptions.idTokenFault`).
    public var idTokenFault: String?
    /// ``idTokenFault`` as the emulation reads it; `nil` for a name it
    /// does not know, which ``Sandbox/start(emulating:options:onEvent:)`` refuses.
    package var fault: IDTokenFault? { idTokenFault.flatMap(IDTokenFault.init(rawValue:)) }
    /// Seconds a refresh request waits before the emulation handles it, and
    /// is dropped unhandled if its client went away meanwhile: a refresh
    /// in flight, to test what happens when the process holding a refresh
    /// lock dies mid-refresh. 0: none.
    public var refreshDelay: TimeInterval = 0
    /// The client's key for `private_key_jwt` (RFC 7523): a PEM or JWK, public
    /// or private (its public half is used), as text. `nil`: the client has none.
    public var clientKey: String?

    public init(
        port: Int = 0, approves: Bool? = nil, defaultAccount: String = "alice",
        clientID: String = SandboxOptions.standardClientID, clientSecret: String? = SandboxOptions.standardClientSecret,
        redirectURIs: [String]? = nil, accessTokenLifetime: TimeInterval? = 3600, issuesRefreshTokens: Bool = true,
        codeLifetime: TimeInterval = 600, deviceInterval: TimeInterval = 5, deterministic: Bool = false,
        now: @escaping @Sendable () -> Date = { Date() }, idTokenFault: String? = nil
    ) {
        self.port = port
        self.approves = approves
        self.defaultAccount = defaultAccount
        self.clientID = clientID
        self.clientSecret = clientSecret
        self.redirectURIs = redirectURIs
        self.accessTokenLifetime = accessTokenLifetime
        self.issuesRefreshTokens = issuesRefreshTokens
        self.codeLifetime = codeLifetime
        self.deviceInterval = deviceInterval
        self.deterministic = deterministic
        self.now = now
        self.idTokenFault = idTokenFault
    }
}

/// Printed, logged or dumped (`print(options)`, `dump`, a debugger's `po`),
/// the options mask the client secret and the client key: `sandbox serve
/// --client-key` takes a key file's text, which may be a private key (its
/// public half is used), and a secret may be a real one reused. As
/// ``AuthKit/ClientSettings`` masks its secret.
extension SandboxOptions {
    /// A client with neither a secret nor a key (RFC 6749 §2.1): PKCE is
    /// how its codes are bound. One with a key alone is confidential (RFC
    /// 7523 §2.2 authenticates it), and takes PKCE only where the provider does.
    var isPublicClient: Bool { clientSecret == nil && clientKey == nil }
}

extension SandboxOptions: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var description: String {
        var parts = ["port: \(port)", "consent: \(consent.rawValue)", "client id: \(clientID)"]
        let secret = clientSecret == nil ? "no client secret" : "client secret: ••••"
        parts.append(isPublicClient ? "public client (no secret)" : secret)
        if clientKey != nil { parts.append("client key: ••••") }
        if let redirectURIs { parts.append("redirect URIs: \(redirectURIs.joined(separator: " "))") }
        parts.append("default account: \(defaultAccount)")
        if deterministic { parts.append("deterministic") }
        if let idTokenFault { parts.append("ID token fault: \(idTokenFault)") }
        return "SandboxOptions(" + parts.joined(separator: ", ") + ")"
    }

    public var debugDescription: String { description }

    public var customMirror: Mirror { Mirror(self, children: ["description": description]) }
}
