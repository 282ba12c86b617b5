import Foundation

/// What a ``LoopbackUserAgent`` tells its caller while it waits, so a command
/// line can print status ("Waiting for you to approve in the browser…") or
/// the URL to open by hand.
public enum LoopbackEvent: Sendable, Hashable {
    /// The listener is bound on `redirectURI` and the browser was asked to open
    /// `authorizationURL`. `browserOpened` is false when launching failed: show
    /// the URL so the user can open it; the listener keeps waiting either way.
    case waiting(authorizationURL: URL, redirectURI: URL, browserOpened: Bool)
    /// A request reached the listener but is not this attempt's answer (a
    /// favicon, a stale tab, a forged `state`); it got an error page and the
    /// listener keeps waiting. `reason` never contains the request's query.
    case ignoredRequest(reason: String)
}
