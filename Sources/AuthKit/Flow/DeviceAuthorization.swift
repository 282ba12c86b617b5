#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A device authorization in progress (RFC 8628 §3.2): the code the user
/// enters at ``verificationURI`` on another device, while this one polls.
///
/// Show ``userCode`` and ``verificationURI`` (or offer
/// ``verificationURIComplete``, which carries the code, as a link or QR code);
/// keep ``deviceCode`` to yourself: it is what the token is issued against.
public struct DeviceAuthorization: Sendable, Hashable, CustomStringConvertible {
    /// The provider it was started with.
    public var providerID: String
    /// Identifies this authorization at the token endpoint; a secret of the device.
    public var deviceCode: String
    /// What the user types at ``verificationURI``.
    public var userCode: String
    /// Where the user goes to enter ``userCode``.
    public var verificationURI: URL
    /// ``verificationURI`` with the code in it, when the provider gives one.
    public var verificationURIComplete: URL?
    /// When the codes stop working.
    public var expiresAt: Date
    /// Seconds between polls (RFC 8628 §3.2: default 5).
    public var interval: TimeInterval
    /// Scopes requested, used when the token response does not list the granted ones.
    public var scopes: [String]

    public var description: String {
        "DeviceAuthorization(provider: \(providerID), user code: \(userCode), verification URI: \(verificationURI.redactedForLogs), device code: ••••)"
    }
}

/// Polling the token endpoint for a device authorization (RFC 8628 §3.4–3.5).
///
/// `sleep` and `now` are injected so tests check the rules (the interval,
/// `slow_down` adding 5 seconds, stopping at expiry) without waiting.
struct DevicePoller: Sendable {
    let calls: TokenEndpointCalls
    let device: DeviceEndpoint
    let now: @Sendable () -> Date
    let sleep: @Sendable (Duration) async throws -> Void

    /// The grant type of the device access token request (RFC 8628 §3.4).
    static let grantType = "urn:ietf:params:oauth:grant-type:device_code"

    func poll(_ authorization: DeviceAuthorization, label: String?) async throws -> Credential {
        var interval = max(1, authorization.interval)
        while true {
            let left = authorization.expiresAt.timeIntervalSince(now())
            guard left > 0 else { throw Self.expired }
            do {
                // No longer than the codes live: an interval past their expiry
                // would only make the user wait to be told they expired.
                try await sleep(.milliseconds(Int64(min(interval, left) * 1000)))
            } catch {
                throw AuthKitError.cancelled
            }
            if Task.isCancelled { throw AuthKitError.cancelled }
            guard now() < authorization.expiresAt else { throw Self.expired }
            do {
                return try await calls.pollDeviceToken(authorization, device: device, label: label)
            } catch AuthKitError.providerError(_, let response) where response.code == "authorization_pending" {
                continue // §3.5: the user has not acted yet
            } catch AuthKitError.providerError(_, let response) where response.code == "slow_down" {
                interval += 5 // §3.5: "the interval MUST be increased by 5 seconds for this and all subsequent requests"
            } catch AuthKitError.providerError(_, let response) where response.code == "access_denied" {
                throw AuthKitError.authorizationFailed(response)
            }
        }
    }

    /// The codes expired before the user approved (RFC 8628 §3.5 `expired_token`, or our own clock).
    static let expired = AuthKitError.providerError(step: .deviceAuthorization, ProviderErrorResponse(
        code: "expired_token", description: "the code expired before it was approved; start again"))
}
