import Foundation

/// A token endpoint that rotates refresh tokens and revokes the whole grant
/// when an old refresh token is used again (RFC 9700 §4.14.2; GitHub, Google
/// and others do), with a protected resource that accepts only the current
/// access token. Each refresh is held for `delay` so concurrent clients overlap.
public final class RotatingGrant: @unchecked Sendable {
    private let lock = NSLock()
    private var generation = 0
    private var revoked = false
    private var refreshes = 0
    private var arrivals = 0
    private let delay: TimeInterval

    /// Installs `POST /token` and `GET /resource` on `server`.
    public init(on server: TestHTTPServer, delay: TimeInterval = 0.3) {
        self.delay = delay
        server.route("POST", "/token") { [self] request in
            let body = Dictionary((FormURLBody.decode(request.bodyText)), uniquingKeysWith: { first, _ in first })
            lock.withLock { arrivals += 1 }
            Thread.sleep(forTimeInterval: delay)
            return lock.withLock {
                refreshes += 1
                guard !revoked, body["grant_type"] == "refresh_token" else {
                    return .json(#"{"error":"invalid_grant","error_description":"the grant was revoked"}"#, status: 400)
                }
                guard body["refresh_token"] == "rt-\(generation)" else {
                    revoked = true // a refresh token used twice: treat as stolen
                    return .json(
                        #"{"error":"invalid_grant","error_description":"refresh token reused; grant revoked"}"#,
                        status: 400)
                }
                generation += 1
                return .json(
                    #"{"access_token":"at-\#(generation)","token_type":"Bearer","expires_in":3600,"refresh_token":"rt-\#(generation)"}"#
                )
            }
        }
        server.route("GET", "/resource") { [self] request in
            lock.withLock {
                !revoked && request.header("Authorization") == "Bearer at-\(generation)"
                    ? .json(#"{"ok":"at-\#(generation)"}"#) : .json(#"{"error":"invalid_token"}"#, status: 401)
            }
        }
    }

    /// Refresh requests received (each rotation, and each refused reuse).
    public var refreshCount: Int { lock.withLock { refreshes } }
    /// Refresh requests that have arrived, answered or still held for `delay`.
    public var arrivedCount: Int { lock.withLock { arrivals } }
    public var isRevoked: Bool { lock.withLock { revoked } }
    public var currentAccessToken: String { lock.withLock { "at-\(generation)" } }

    /// A provider file for it (`id` as given), and an expired stored credential holding `rt-0`.
    public static func descriptor(id: String, server: TestHTTPServer) -> String {
        #"{"id": "\#(id)", "protocol": "oauth2", "authorization": {"url": "\#(server.baseURL)/authorize"}, "token": {"url": "\#(server.baseURL)/token", "clientAuthentication": "post"}}"#
    }

    public static func expiredCredential(id: String) -> String {
        #"{"version":1,"credentials":[{"providerID":"\#(id)","kind":"oauth2","accessToken":"at-0","tokenType":"Bearer","refreshToken":"rt-0","expiresAt":"2020-01-01T00:00:00Z","scopes":[],"obtainedAt":"2019-12-31T23:00:00Z","rawFields":{}}]}"#
    }
}

/// `a=1&b=2` into pairs (the test support's own, so it needs nothing of AuthKit's internals).
enum FormURLBody {
    static func decode(_ text: String) -> [(String, String)] {
        text.split(separator: "&").map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1).map {
                String($0).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String($0)
            }
            return (parts[0], parts.count > 1 ? parts[1] : "")
        }
    }
}
