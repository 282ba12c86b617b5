#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What a successful authorization yields, for OAuth 2.0 and OAuth 1.0a alike.
///
/// One type for both protocols is what lets a caller store, list and use a Qiita
/// token and a Twitter token the same way. It is `Codable` (the credential
/// stores persist it as JSON) and `Sendable` (it crosses actors freely).
///
/// `description` masks every secret, so printing or logging a credential by
/// accident never leaks it; read ``accessToken`` explicitly when you mean to.
public struct Credential: Codable, Sendable, Hashable, CustomStringConvertible, CustomReflectable {
    /// The members, in one box that copies share until one of them changes
    /// (copy on write). A credential is copied often on its way through a
    /// sign-in or a refresh (into the refresh's own task, to each caller
    /// waiting on it, into the answers kept for a moment after), and with
    /// its eighteen members side by side each copy moved 336 bytes and
    /// retained every string, array and dictionary in it: thirty times a
    /// refresh (docs/performance.md).
    private var members: Members

    /// The descriptor id this credential belongs to (`qiita`, `twitter`).
    public var providerID: String {
        get { members.providerID }
        set { ownMembers().providerID = newValue }
    }
    /// A label distinguishing several accounts of one provider; `nil` is the
    /// default account, and so is an empty label (see ``CredentialKey/label``).
    public var label: String? {
        get { members.label }
        set { ownMembers().label = CredentialKey.normalized(newValue) }
    }
    /// Which protocol issued it, and so how requests are authorized with it.
    package var kind: ProtocolKind {
        get { members.kind }
        set { ownMembers().kind = newValue }
    }
    /// Whether OAuth 1.0a issued it: requests with it are signed with
    /// ``tokenSecret`` (RFC 5849 §3), not sent with a bearer token.
    public var isOAuth1: Bool {
        get { kind == .oauth1 }
        set { kind = newValue ? .oauth1 : .oauth2 }
    }
    /// The OAuth 2.0 access token, or the OAuth 1.0a `oauth_token`.
    public var accessToken: String {
        get { members.accessToken }
        set { ownMembers().accessToken = newValue }
    }
    /// RFC 6749 §7.1 token type, e.g. `Bearer`. `OAuth` for OAuth 1.0a.
    public var tokenType: String {
        get { members.tokenType }
        set { ownMembers().tokenType = newValue }
    }
    /// RFC 6749 §6 refresh token, when the provider issued one.
    public var refreshToken: String? {
        get { members.refreshToken }
        set { ownMembers().refreshToken = newValue }
    }
    /// The OAuth 1.0a `oauth_token_secret` (RFC 5849 §2.3).
    public var tokenSecret: String? {
        get { members.tokenSecret }
        set { ownMembers().tokenSecret = newValue }
    }
    /// When the access token stops working, computed from `expires_in` and the
    /// time the response arrived (RFC 6749 §5.1); `nil` when unknown.
    public var expiresAt: Date? {
        get { members.expiresAt }
        set { ownMembers().expiresAt = newValue }
    }
    /// The scopes actually granted (RFC 6749 §5.1 `scope`), or those requested
    /// when the provider does not say.
    public var scopes: [String] {
        get { members.scopes }
        _modify { yield &ownMembers().scopes }
    }
    /// When AuthKit received it.
    public var obtainedAt: Date {
        get { members.obtainedAt }
        set { ownMembers().obtainedAt = newValue }
    }
    /// The members of the last token answer, including ones AuthKit does not
    /// interpret (RFC 6749 §5.1), within bounds: a member nested more than 8
    /// levels deep or larger than 64 KiB (but an `id_token`, kept whole) is
    /// left out, and so are members past 256 KiB in all, each named in a
    /// warning (a provider could otherwise make the credentials file
    /// unreadable, for every account in it). A refresh's answer replaces
    /// those it repeats; of the others, all but what described the earlier
    /// token (`expires_in`, `scope`…) are kept, within the same bounds (who
    /// signed in does not change); a sign-in's follow-up exchange keeps
    /// every member of the first answer.
    public var rawFields: [String: JSONValue] {
        get { members.rawFields }
        _modify { yield &ownMembers().rawFields }
    }
    /// The origins (`https://host[:port]`) of the provider's token, refresh
    /// and revocation endpoints when this credential was issued. Refresh and
    /// revocation send it to no other origin: a descriptor edited (or replaced
    /// by a file someone else placed) to point elsewhere gets no token.
    /// `nil` for a credential stored before AuthKit recorded them.
    public var endpointOrigins: [String]? {
        get { members.endpointOrigins }
        _modify { yield &ownMembers().endpointOrigins }
    }
    /// When the refresh token stops working (from `refresh_token_expires_in`;
    /// GitHub's live six months): after it, the user must sign in again.
    public var refreshTokenExpiresAt: Date? {
        get { members.refreshTokenExpiresAt }
        set { ownMembers().refreshTokenExpiresAt = newValue }
    }
    /// Who signed in, from the ID token AuthKit verified (OpenID Connect);
    /// `nil` when the sign-in asked for no identity or the provider offers none.
    public var identity: Identity? {
        get { members.identity }
        set { ownMembers().identity = newValue }
    }
    /// The key the tokens are bound to (DPoP, RFC 9449), when they are:
    /// every request with them carries a proof signed with it. Kept with
    /// the credential, so that any process that refreshes or uses it proves
    /// the same key; never printed.
    package var proofKey: ProofKey? {
        get { members.proofKey }
        set { ownMembers().proofKey = newValue }
    }
    /// The grant that issued the credential, recorded for one renewed by
    /// asking again rather than with a refresh token: `client_credentials`
    /// (RFC 6749 §4.4.3 issues no refresh token). `nil` for a sign-in.
    package var grantType: String? {
        get { members.grantType }
        set { ownMembers().grantType = newValue }
    }
    /// The parameters a `client_credentials` request added beside its
    /// scope (an `audience`, a `resource` (RFC 8707)), sent again at each
    /// renewal: without them the server would issue a token for another
    /// audience, or none. Name and value pairs.
    package var grantParameters: [[String]]? {
        get { members.grantParameters }
        _modify { yield &ownMembers().grantParameters }
    }
    /// The account the provider's "who am I" endpoint named when the
    /// credential was obtained (GitHub's `login`), for `authkit token list`
    /// and `token show` to say whose it is where no ID token names a user.
    /// What a provider answered, not verified as an ID token is; kept across
    /// refreshes (a refresh does not change whose the grant is).
    package var account: String? {
        get { members.account }
        set { ownMembers().account = newValue }
    }

    public init(
        providerID: String,
        label: String? = nil,
        isOAuth1: Bool = false,
        accessToken: String,
        tokenType: String = "Bearer",
        refreshToken: String? = nil,
        tokenSecret: String? = nil,
        expiresAt: Date? = nil,
        scopes: [String] = [],
        obtainedAt: Date = Date(),
        rawFields: [String: JSONValue] = [:],
        endpointOrigins: [String]? = nil,
        refreshTokenExpiresAt: Date? = nil,
        identity: Identity? = nil
    ) {
        members = Members(
            providerID: providerID, label: CredentialKey.normalized(label), kind: isOAuth1 ? .oauth1 : .oauth2,
            accessToken: accessToken, tokenType: tokenType, refreshToken: refreshToken, tokenSecret: tokenSecret,
            expiresAt: expiresAt, scopes: scopes, obtainedAt: obtainedAt, rawFields: rawFields,
            endpointOrigins: endpointOrigins, refreshTokenExpiresAt: refreshTokenExpiresAt, identity: identity)
    }

    /// The members for this credential alone, copied first if another
    /// credential shares them: what every setter changes.
    private mutating func ownMembers() -> Members {
        if !isKnownUniquelyReferenced(&members) { members = Members(copying: members) }
        return members
    }

    /// Decoded as encoded, but for an empty label (a library may have
    /// stored one before it meant the default account), read as `nil`, and
    /// a date that does not parse named by its field.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        // A date that does not parse is named by its field: the decoder's
        // own error gave only "credentials[0]". One the calendar does not
        // have (Feb 30, 25:00) is refused, not rolled over into another
        // date (``StoredDate``).
        func date(_ key: CodingKeys) throws -> Date? {
            let form = "a date and time in ISO 8601 form, such as 2026-01-01T00:00:00Z."
            let decoded: Date?
            do {
                decoded = try container.decodeIfPresent(Date.self, forKey: key)
            } catch DecodingError.dataCorrupted {
                throw DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription: "is not " + form)
            }
            // A decoder that stores dates as numbers has no text to check.
            if decoded != nil, let text = try? container.decode(String.self, forKey: key),
                let problem = StoredDate.problem(text)
            {
                throw DecodingError.dataCorruptedError(
                    forKey: key, in: container,
                    debugDescription: "\(problem), a date the calendar does not have; write " + form)
            }
            return decoded
        }
        guard let obtainedAt = try date(.obtainedAt) else {
            throw DecodingError.keyNotFound(
                CodingKeys.obtainedAt, .init(codingPath: container.codingPath, debugDescription: "required"))
        }
        self.init(
            providerID: try container.decode(String.self, forKey: .providerID),
            label: try container.decodeIfPresent(String.self, forKey: .label),
            isOAuth1: try container.decode(ProtocolKind.self, forKey: .kind) == .oauth1,
            accessToken: try container.decode(String.self, forKey: .accessToken),
            tokenType: try container.decode(String.self, forKey: .tokenType),
            refreshToken: try container.decodeIfPresent(String.self, forKey: .refreshToken),
            tokenSecret: try container.decodeIfPresent(String.self, forKey: .tokenSecret),
            expiresAt: try date(.expiresAt),
            scopes: try container.decode([String].self, forKey: .scopes),
            obtainedAt: obtainedAt,
            rawFields: try container.decode([String: JSONValue].self, forKey: .rawFields),
            endpointOrigins: try container.decodeIfPresent([String].self, forKey: .endpointOrigins),
            refreshTokenExpiresAt: try date(.refreshTokenExpiresAt),
            identity: try container.decodeIfPresent(Identity.self, forKey: .identity))
        proofKey = try container.decodeIfPresent(ProofKey.self, forKey: .proofKey)
        grantType = try container.decodeIfPresent(String.self, forKey: .grantType)
        grantParameters = try container.decodeIfPresent([[String]].self, forKey: .grantParameters)
        account = try container.decodeIfPresent(String.self, forKey: .account)
    }

    /// Spelled out (rather than synthesized) so ``memberNames`` can list them.
    enum CodingKeys: String, CodingKey, CaseIterable {
        case providerID, label, kind, accessToken, tokenType, refreshToken, tokenSecret, expiresAt, scopes
        case obtainedAt, rawFields, endpointOrigins, refreshTokenExpiresAt, identity
        case proofKey = "dpopKey"
        case grantType, grantParameters
        case account
    }

    /// Encoded as the members were declared, an optional one left out when
    /// `nil` (as Swift's synthesized conformance wrote them).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(providerID, forKey: .providerID)
        try container.encodeIfPresent(label, forKey: .label)
        try container.encode(kind, forKey: .kind)
        try container.encode(accessToken, forKey: .accessToken)
        try container.encode(tokenType, forKey: .tokenType)
        try container.encodeIfPresent(refreshToken, forKey: .refreshToken)
        try container.encodeIfPresent(tokenSecret, forKey: .tokenSecret)
        try container.encodeIfPresent(expiresAt, forKey: .expiresAt)
        try container.encode(scopes, forKey: .scopes)
        try container.encode(obtainedAt, forKey: .obtainedAt)
        try container.encode(rawFields, forKey: .rawFields)
        try container.encodeIfPresent(endpointOrigins, forKey: .endpointOrigins)
        try container.encodeIfPresent(refreshTokenExpiresAt, forKey: .refreshTokenExpiresAt)
        try container.encodeIfPresent(identity, forKey: .identity)
        try container.encodeIfPresent(proofKey, forKey: .proofKey)
        try container.encodeIfPresent(grantType, forKey: .grantType)
        try container.encodeIfPresent(grantParameters, forKey: .grantParameters)
        try container.encodeIfPresent(account, forKey: .account)
    }

    /// Every member compared, as Swift's synthesized conformance did; two
    /// copies sharing their members are equal without a look at them.
    public static func == (lhs: Credential, rhs: Credential) -> Bool {
        lhs.members === rhs.members || lhs.members.sameValues(as: rhs.members)
    }

    public func hash(into hasher: inout Hasher) {
        members.hash(into: &hasher)
    }

    /// The member names of a stored credential this version reads and
    /// writes; the store keeps any other member as it found it.
    package static let memberNames = Set(CodingKeys.allCases.map(\.stringValue))

    /// The key a ``CredentialStore`` files this credential under.
    public var key: CredentialKey { CredentialKey(providerID: providerID, label: label) }

    /// Whether the access token has expired, or will within `margin` seconds.
    ///
    /// A margin avoids sending a token that expires while the request is in flight.
    public func isExpired(at now: Date = Date(), margin: TimeInterval = 60) -> Bool {
        guard let expiresAt else { return false }
        return expiresAt.timeIntervalSince(now) <= margin
    }

    /// Secrets masked, and what a provider or a file supplied (scopes, the
    /// token type, an id or label read from the store) with its control
    /// characters written out (``DisplayText``): the docs' own
    /// `print("Signed in:", credential)` sent a granted scope's escape
    /// sequence to the terminal. RFC 6749 §3.3 allows only printable ASCII
    /// in a scope, but nothing makes a server keep to that.
    public var description: String {
        var parts = ["provider: \(DisplayText.sanitized(providerID, limit: 100))"]
        if let label { parts.append("label: \(DisplayText.sanitized(label, limit: 200))") }
        parts.append("type: \(DisplayText.sanitized(tokenType, limit: 100))")
        parts.append("access token: \(Self.mask(accessToken))")
        if refreshToken != nil { parts.append("refresh token: ••••") }
        if tokenSecret != nil { parts.append("token secret: ••••") }
        if proofKey != nil { parts.append("bound to a DPoP key") }
        if !scopes.isEmpty {
            parts.append("scopes: \(DisplayText.sanitized(scopes.joined(separator: " "), limit: 1000))")
        }
        if let expiresAt { parts.append("expires: \(expiresAt)") }
        return "Credential(" + parts.joined(separator: ", ") + ")"
    }

    /// `dump(credential)` reads a mirror, not ``description``: this one
    /// shows only what the description does.
    public var customMirror: Mirror { Mirror(self, children: ["description": description]) }

    /// Whether it can be renewed without the user: with its refresh token,
    /// or by asking again for a client credentials grant (RFC 6749 §4.4.3).
    package var isRenewable: Bool { refreshToken != nil || grantType == "client_credentials" }

    /// Whether the token is a Bearer token, the only type AuthKit sends
    /// (RFC 6750); RFC 6749 §5.1 makes `token_type` case-insensitive.
    /// Compared byte by byte, ASCII letters folded: it is asked on every
    /// request and refresh, and `lowercased()` built a new string each time.
    /// (`| 0x20` folds only `B`/`b`, `E`/`e`, … onto the letters of "bearer":
    /// no other byte maps onto a lowercase letter.)
    /// The two spellings nearly every provider uses are one comparison of
    /// small strings each, before any byte is looked at.
    package var isBearer: Bool {
        tokenType == "Bearer" || tokenType == "bearer"
            || tokenType.utf8.count == 6 && zip(tokenType.utf8, "bearer".utf8).allSatisfy { $0 | 0x20 == $1 }
    }

    /// Whether the token is DPoP-bound (RFC 9449 §5: `token_type` `DPoP`,
    /// compared case-insensitively as §7.1 has it) and the key it is bound
    /// to is at hand.
    package var isDPoP: Bool {
        proofKey != nil && tokenType.lowercased() == "dpop"
    }

    /// This sign-in's credential, with `earlier`'s refresh token when the
    /// provider's answer brought none and `earlier` is the same grant holder's.
    ///
    /// Google issues a refresh token only at the first consent (a second
    /// sign-in without `prompt=consent` gets an access token alone), while
    /// the first refresh token stays valid: saved as it came, the second
    /// sign-in dropped it, and an hour later the user had to sign in again.
    /// Kept only where nothing could differ: the same account (the same
    /// verified issuer and subject, compared byte for byte, or with no ID
    /// token the same who-am-I answer), the same endpoints (a refresh token
    /// goes only where it was issued), neither bound to a DPoP key (a
    /// refresh token bound to the earlier key is useless with the new one,
    /// RFC 9449 §5), and not known to have expired.
    package func keepingRefreshToken(of earlier: Credential?, at now: Date = Date()) -> Credential {
        guard refreshToken == nil, let earlier, let token = earlier.refreshToken, kind == .oauth2,
            earlier.kind == .oauth2, earlier.key == key, earlier.endpointOrigins == endpointOrigins,
            earlier.proofKey == nil, proofKey == nil, earlier.grantType == nil, grantType == nil,
            earlier.refreshTokenExpiresAt.map({ $0 > now }) ?? true, isSameAccount(as: earlier)
        else { return self }
        var credential = self
        credential.refreshToken = token
        credential.refreshTokenExpiresAt = earlier.refreshTokenExpiresAt
        return credential
    }

    private func isSameAccount(as other: Credential) -> Bool {
        switch (identity, other.identity) {
        case (let mine?, let theirs?):
            return ExactText.same(mine.issuer, theirs.issuer) && ExactText.same(mine.subject, theirs.subject)
        case (nil, nil):
            guard let account, let theirs = other.account else { return false }
            return ExactText.same(account, theirs)
        default:
            return false
        }
    }

    /// Shows at most the last four characters of a secret, and only when it is
    /// long enough (≥ 16) that four characters reveal next to nothing.
    package static func mask(_ secret: String) -> String {
        // Only printable ASCII is shown: a token's last characters could be
        // an escape sequence that drives the terminal it is printed to.
        let tail = secret.unicodeScalars.suffix(4)
        guard secret.unicodeScalars.count >= 16, tail.allSatisfy({ (0x21...0x7E).contains($0.value) }) else {
            return "••••"
        }
        return "••••" + String(String.UnicodeScalarView(tail))
    }
}

extension Credential {
    /// ``Credential``'s members, shared by copies until one changes
    /// (``Credential/ownMembers()``). Unchecked `Sendable`: a box is changed
    /// only by the one credential that holds it alone, so no two threads
    /// ever reach one that changes.
    private final class Members: @unchecked Sendable {
        var providerID: String
        var label: String?
        var kind: ProtocolKind
        var accessToken: String
        var tokenType: String
        var refreshToken: String?
        var tokenSecret: String?
        var expiresAt: Date?
        var scopes: [String]
        var obtainedAt: Date
        var rawFields: [String: JSONValue]
        var endpointOrigins: [String]?
        var refreshTokenExpiresAt: Date?
        var identity: Identity?
        var proofKey: ProofKey?
        var grantType: String?
        var grantParameters: [[String]]?
        var account: String?

        init(
            providerID: String, label: String?, kind: ProtocolKind, accessToken: String, tokenType: String,
            refreshToken: String?, tokenSecret: String?, expiresAt: Date?, scopes: [String], obtainedAt: Date,
            rawFields: [String: JSONValue], endpointOrigins: [String]?, refreshTokenExpiresAt: Date?,
            identity: Identity?
        ) {
            self.providerID = providerID
            self.label = label
            self.kind = kind
            self.accessToken = accessToken
            self.tokenType = tokenType
            self.refreshToken = refreshToken
            self.tokenSecret = tokenSecret
            self.expiresAt = expiresAt
            self.scopes = scopes
            self.obtainedAt = obtainedAt
            self.rawFields = rawFields
            self.endpointOrigins = endpointOrigins
            self.refreshTokenExpiresAt = refreshTokenExpiresAt
            self.identity = identity
        }

        convenience init(copying other: Members) {
            self.init(
                providerID: other.providerID, label: other.label, kind: other.kind, accessToken: other.accessToken,
                tokenType: other.tokenType, refreshToken: other.refreshToken, tokenSecret: other.tokenSecret,
                expiresAt: other.expiresAt, scopes: other.scopes, obtainedAt: other.obtainedAt,
                rawFields: other.rawFields, endpointOrigins: other.endpointOrigins,
                refreshTokenExpiresAt: other.refreshTokenExpiresAt, identity: other.identity)
            proofKey = other.proofKey
            grantType = other.grantType
            grantParameters = other.grantParameters
            account = other.account
        }

        func sameValues(as other: Members) -> Bool {
            providerID == other.providerID && label == other.label && kind == other.kind
                && accessToken == other.accessToken && tokenType == other.tokenType
                && refreshToken == other.refreshToken && tokenSecret == other.tokenSecret
                && expiresAt == other.expiresAt && scopes == other.scopes && obtainedAt == other.obtainedAt
                && rawFields == other.rawFields && endpointOrigins == other.endpointOrigins
                && refreshTokenExpiresAt == other.refreshTokenExpiresAt && identity == other.identity
                && proofKey == other.proofKey && grantType == other.grantType
                && grantParameters == other.grantParameters && account == other.account
        }

        func hash(into hasher: inout Hasher) {
            hasher.combine(providerID)
            hasher.combine(label)
            hasher.combine(kind)
            hasher.combine(accessToken)
            hasher.combine(tokenType)
            hasher.combine(refreshToken)
            hasher.combine(tokenSecret)
            hasher.combine(expiresAt)
            hasher.combine(scopes)
            hasher.combine(obtainedAt)
            hasher.combine(rawFields)
            hasher.combine(endpointOrigins)
            hasher.combine(refreshTokenExpiresAt)
            hasher.combine(identity)
            hasher.combine(proofKey)
            hasher.combine(grantType)
            hasher.combine(grantParameters)
            hasher.combine(account)
        }
    }
}

/// Identifies one stored credential: a provider and an optional account label.
public struct CredentialKey: Hashable, Sendable, Codable, CustomStringConvertible {
    public var providerID: String
    /// `nil` is the provider's default account. An empty label is the default
    /// account too: a label taken from an empty text field or an unset
    /// variable would otherwise file a second account no one can tell from
    /// the first (the command line's `--label ''` names the default one).
    public var label: String? { didSet { label = Self.normalized(label) } }

    public init(providerID: String, label: String? = nil) {
        self.providerID = providerID
        self.label = Self.normalized(label)
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            providerID: try container.decode(String.self, forKey: .providerID),
            label: try container.decodeIfPresent(String.self, forKey: .label))
    }

    /// `""` as `nil`: one spelling of the default account.
    static func normalized(_ label: String?) -> String? {
        label?.isEmpty == true ? nil : label
    }

    /// `qiita (work)`, with control characters escaped (a label is typed by
    /// someone, and reaches terminals in messages).
    public var description: String {
        DisplayText.sanitized(label.map { "\(providerID) (\($0))" } ?? providerID, limit: 200)
    }

    /// Byte for byte, as the lock file's name, the keyring and the Keychain
    /// tell accounts apart: Swift's `==` on strings is canonical
    /// equivalence, so `café` typed composed and decomposed was one account
    /// to the file store and two to its refresh locks, which two processes
    /// then held at once and both refreshed.
    public static func == (a: CredentialKey, b: CredentialKey) -> Bool {
        ExactText.same(a.providerID, b.providerID)
            && (a.label == nil) == (b.label == nil) && ExactText.same(a.label ?? "", b.label ?? "")
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(providerID.utf8.count)
        for byte in providerID.utf8 { hasher.combine(byte) }
        hasher.combine(label == nil)
        for byte in (label ?? "").utf8 { hasher.combine(byte) }
    }
}
