import AuthKit
import Crypto

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Everything the sandbox has issued, in memory: authorization requests
/// waiting for consent, codes, grants and their tokens, device codes, and
/// OAuth 1.0a credentials. Only ``Emulator`` touches it, under its lock.
struct GrantLedger: Sendable {
    /// One user's approval of one client for some scopes: the family every
    /// code, access token and refresh token descends from. Revoking it
    /// (a replayed code, a reused refresh token, RFC 7009) kills them all.
    struct Grant: Sendable {
        var account: String
        var scopes: [String]
        /// When the user approved: every ID token of the grant gives it as
        /// `auth_time`, refreshed ones too (OpenID Connect Core §12.2).
        var authenticatedAt: Date
        var revoked = false
        /// The client's own (client credentials, RFC 6749 §4.4): no user
        /// signed in, so no ID token, and the subject is the client.
        var ofClient = false
    }

    /// An authorization request the consent page has not decided yet.
    struct PendingConsent: Sendable {
        var redirectURI: String
        var sentRedirectURI: Bool
        var scopes: [String]
        var state: String?
        var challenge: String?
        var challengeMethod: String?
        var expiresAt: Date
        /// OpenID Connect's `nonce`, for the ID token.
        var nonce: String?
        /// The `iss` the response names (RFC 9207), when it names one.
        var issuer: String?
        /// `dpop_jkt` (RFC 9449 §10): the key the code is bound to.
        var dpopJKT: String? = nil
        /// OAuth 1.0a: the request token being authorized.
        var requestToken: String?
        /// The value the consent page carries and its answer must send back:
        /// random even in deterministic mode, where the request id is a
        /// counter, so that only the page that showed this request can
        /// approve it (a form on another site could post the id).
        var approval: String = SecureRandom.token()
    }

    struct Code: Sendable {
        var grant: Int
        var redirectURI: String
        var sentRedirectURI: Bool
        var challenge: String?
        var challengeMethod: String?
        var expiresAt: Date
        var nonce: String?
        var used = false
        /// The key the code is bound to (`dpop_jkt`, RFC 9449 §10).
        var dpopJKT: String? = nil
    }

    struct AccessToken: Sendable {
        var grant: Int
        var expiresAt: Date?
        /// The thumbprint of the DPoP key it is bound to (RFC 9449 §6), if any.
        var jkt: String? = nil
        /// The scopes it was issued for: a refresh may narrow them (RFC 6749
        /// §6), and the token then carries no more, whatever the grant holds.
        var scopes: [String]
    }

    struct RefreshToken: Sendable {
        var grant: Int
        /// Replaced by a newer one (rotation); using it again is reuse.
        var rotated = false
        /// The DPoP key it is bound to (RFC 9449 §5): a refresh proves the same key.
        var jkt: String? = nil
    }

    /// A pushed authorization request (RFC 9126 §2), by its `request_uri`.
    struct PushedRequest: Sendable {
        var parameters: [(String, String)]
        var expiresAt: Date
    }

    struct DeviceCode: Sendable {
        enum Status: Sendable {
            case pending
            case approved(account: String)
            case denied, used
        }
        var userCode: String
        var scopes: [String]
        var status: Status
        var expiresAt: Date
        var lastPoll: Date?
        var interval: TimeInterval
        var polls = 0
    }

    /// OAuth 1.0a temporary credentials (RFC 5849 §2.1) and token credentials (§2.3).
    struct OAuth1Token: Sendable {
        var secret: String
        var callback: String
        var verifier: String?
        var account: String?
        var isAccessToken: Bool
        var used = false
    }

    var grants: [Int: Grant] = [:]
    var consents: [String: PendingConsent] = [:]
    /// The device page's form values (random, like ``PendingConsent/approval``)
    /// and when each stops being accepted: the code form is answered only
    /// from a page the sandbox showed.
    var deviceForms: [String: Date] = [:]
    var codes: [String: Code] = [:]
    var accessTokens: [String: AccessToken] = [:]
    var refreshTokens: [String: RefreshToken] = [:]
    var deviceCodes: [String: DeviceCode] = [:]
    var oauth1Tokens: [String: OAuth1Token] = [:]

    /// An OAuth 1.0a nonce with the timestamp it came with (RFC 5849 §3.3:
    /// a nonce is unique per timestamp), the timestamp kept as a number so
    /// that forgetting lapsed ones reads no text.
    struct NonceUse: Hashable, Sendable {
        var timestamp: Int64
        var nonce: String
    }

    /// The nonces of signed requests whose signature verified, while their
    /// timestamp is within the five minutes a request is taken in.
    private(set) var nonces: Set<NonceUse> = []

    /// Whether `nonce` came before with `timestamp`.
    func hasSeen(nonce: String, timestamp: Int64) -> Bool {
        nonces.contains(NonceUse(timestamp: timestamp, nonce: nonce))
    }

    /// Records a verified request's nonce: `false` when ``limit`` nonces of
    /// the last five minutes are held already. As with jtis, a live one is
    /// never forgotten to make room (its replay would then pass): new
    /// requests are refused until old ones lapse.
    mutating func record(nonce: String, timestamp: Int64, now: Date) -> Bool {
        if nonces.count >= Self.limit {
            let current = Int64(now.timeIntervalSince1970)
            nonces = nonces.filter { abs(current - $0.timestamp) <= 300 }
            if nonces.count >= Self.limit { return false }
        }
        nonces.insert(NonceUse(timestamp: timestamp, nonce: nonce))
        return true
    }

    /// The ID tokens issued, by grant: an end-session request's
    /// `id_token_hint` must be one of them.
    var idTokens: [String: Int] = [:]
    var pushedRequests: [String: PushedRequest] = [:]
    /// `jti`s of DPoP proofs and client assertions seen (RFC 9449 §11.1, RFC
    /// 7523 §3): each is good once. Kept until its proof or assertion would be
    /// refused anyway (a proof's `iat` window, an assertion's `exp`), then
    /// forgotten: kept for ever, any local client could grow the set by one
    /// self-signed proof per request.
    private var seenJTIs: [String: Date] = [:]

    /// Records `jti`'s first use: `true` the first time, `false` when it was
    /// seen before, `nil` when ``limit`` live ones are held already. A live
    /// one is never forgotten to make room (a replay would then pass), so
    /// the sandbox refuses new ones until old ones lapse.
    ///
    /// A jti is kept by its SHA-256, so each takes the same few bytes
    /// however long the client made it (a self-signed proof's jti could
    /// fill most of an 80 KiB header, ten thousand times over).
    mutating func firstUse(ofJTI jti: String, refusedAnywayAfter until: Date, now: Date) -> Bool? {
        let jti = SHA256.hash(data: Array(jti.utf8)).withUnsafeBytes { Base64URL.encode($0) }
        guard seenJTIs[jti] == nil else { return false }
        if seenJTIs.count >= Self.limit {
            seenJTIs = seenJTIs.filter { $0.value >= now }
            if seenJTIs.count >= Self.limit { return nil }
        }
        seenJTIs[jti] = until
        return true
    }
    /// The nonces the token endpoint and the resource server ask proofs to
    /// carry (RFC 9449 §8, §9), one each for the sandbox's life.
    let tokenNonce = SecureRandom.token()
    let resourceNonce = SecureRandom.token()
    private var counter = 0
    let deterministic: Bool

    init(deterministic: Bool) { self.deterministic = deterministic }

    /// A new opaque value: `sandbox-code-3` when deterministic, else
    /// `sandbox-code-` and 256 random bits.
    mutating func mint(_ kind: String) -> String {
        counter += 1
        return deterministic ? "sandbox-\(kind)-\(counter)" : "sandbox-\(kind)-" + SecureRandom.token()
    }

    /// RFC 8628 §6.1: eight characters from an alphabet without vowels or
    /// look-alikes, shown as XXXX-XXXX.
    mutating func mintUserCode() -> String {
        counter += 1
        if deterministic {
            let digits = String(counter % 10000)
            return "SAND-" + String(repeating: "0", count: 4 - digits.count) + digits
        }
        let alphabet = Array("BCDFGHJKLMNPQRSTVWXZ")
        let picked = SecureRandom.bytes(8).map { alphabet[Int($0) % alphabet.count] }
        return String(picked[0..<4]) + "-" + String(picked[4...])
    }

    mutating func newGrant(account: String, scopes: [String], at now: Date, ofClient: Bool = false) -> Int {
        counter += 1
        grants[counter] = Grant(account: account, scopes: scopes, authenticatedAt: now, ofClient: ofClient)
        return counter
    }

    /// The grant of a live (issued, unexpired, unrevoked) access token.
    /// The grant of a live access token, with the scopes of that token (a
    /// narrowed refresh's token carries only those it was issued for).
    func liveGrant(ofAccessToken token: String, at now: Date) -> (id: Int, grant: Grant)? {
        guard let record = accessTokens[token], var grant = grants[record.grant], !grant.revoked else { return nil }
        if let expiry = record.expiresAt, expiry <= now { return nil }
        grant.scopes = record.scopes
        return (record.grant, grant)
    }

    mutating func revoke(grant id: Int) { grants[id]?.revoked = true }

    /// The most records of one kind kept: a client (or a page reloaded in a
    /// loop) cannot make a long-running `authkit sandbox` grow without bound.
    /// Each record is small as well: the values a client chooses and the
    /// sandbox keeps are bounded where they come in (``Emulator/maxValueBytes``,
    /// ``Emulator/maxPushedBytes``, ``Emulator/maxNonceBytes``).
    static let limit = 10_000

    /// Drops what has expired or been used up; if a kind is still past
    /// ``limit``, some of its records at random (a sandbox may forget).
    mutating func prune(now: Date) {
        func trim<Value>(_ records: inout [String: Value], expired: (Value) -> Bool) {
            guard records.count > Self.limit else { return }
            records = records.filter { !expired($0.value) }
            while records.count > Self.limit, let victim = records.keys.first { records[victim] = nil }
        }
        trim(&consents) { $0.expiresAt <= now }
        trim(&deviceForms) { $0 <= now }
        trim(&codes) { $0.expiresAt <= now || $0.used }
        trim(&deviceCodes) { $0.expiresAt <= now }
        trim(&accessTokens) { ($0.expiresAt ?? .distantFuture) <= now || grants[$0.grant]?.revoked != false }
        trim(&refreshTokens) { $0.rotated || grants[$0.grant]?.revoked != false }
        trim(&oauth1Tokens) { $0.used }
        trim(&idTokens) { grants[$0]?.revoked != false }
        trim(&pushedRequests) { $0.expiresAt <= now }
        if grants.count > Self.limit {
            // A grant lives on in what was issued from it: one that nothing
            // refers to any more, or that was revoked (its tokens are
            // refused either way), goes first.
            var referred = Set<Int>()
            for code in codes.values { referred.insert(code.grant) }
            for token in accessTokens.values { referred.insert(token.grant) }
            for token in refreshTokens.values { referred.insert(token.grant) }
            referred.formUnion(idTokens.values)
            grants = grants.filter { referred.contains($0.key) && !$0.value.revoked }
            while grants.count > Self.limit, let victim = grants.keys.first { grants[victim] = nil }
        }
        // Only lapsed ones: a live jti forgotten could be replayed (firstUse).
        // (Nonces are bounded as they are recorded: record(nonce:timestamp:now:).)
        if seenJTIs.count > Self.limit { seenJTIs = seenJTIs.filter { $0.value >= now } }
    }
}
