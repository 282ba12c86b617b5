#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What a ``LoopbackUserAgent`` tells its caller while it waits, so a command
/// line can print status ("Waiting for you to approve in the browser…") or
/// the URL to open by hand.
public enum LoopbackEvent: Sendable, Hashable {
    /// The listener is bound on `redirectURI` and the browser is being asked
    /// to open `authorizationURL`: the moment to show "waiting for you…".
    case listening(authorizationURL: URL, redirectURI: URL)
    /// Launching the browser failed (`reason` says how): show the URL so the
    /// user can open it by hand; the listener keeps waiting.
    case browserFailed(authorizationURL: URL, reason: String)
    /// A request reached the listener but is not this attempt's answer (a
    /// favicon, another path); it got an error page and the listener keeps
    /// waiting. `reason` never contains the request's query.
    case ignoredRequest(reason: String)
    /// A request came to the redirect path and was refused: it failed the
    /// `state` or issuer check (OAuth 1.0a: the request token), as a stale
    /// tab, another attempt's answer or a forged request does, or it was
    /// malformed (a parameter given twice, no code or verifier), or it was
    /// too large to read (431: the redirect, most likely, carrying the
    /// browser's many cookies for the loopback host). The listener
    /// keeps waiting for the genuine answer; a caller should say so, and
    /// `reason` (which never repeats a code or `state`; it may name a
    /// parameter or the issuer the request gave), since the user
    /// may otherwise wait for an answer that already came and was refused.
    case rejectedAnswer(reason: String)
}
