import AuthKit

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The command's user agent, raising the signal shield the moment it brings
/// back the provider's answer (``Interrupt/raiseShield(for:)``).
///
/// From then on the code is exchanged (once: RFC 6749 §4.1.2) and the tokens
/// the provider issues live only in this process until they are saved. A
/// Ctrl-C, SIGTERM or SIGHUP there would drop them, leaving a grant at the
/// provider that nothing holds; held back, it ends the process once the
/// sign-in is stored (or has failed). Waiting for the browser stays
/// interruptible. The command lowers the shield with ``lower(stored:)``.
final class ShieldedUserAgent: AnsweringUserAgent {
    private let base: any UserAgent
    private let raised = LockedValue(false)

    init(_ base: any UserAgent) {
        self.base = base
    }

    func run(_ session: AuthorizationSession) async throws -> URL {
        try await redirect(of: session)
    }

    func answer(_ session: AuthorizationSession) async throws -> UserAgentResult {
        let result = try await base.answer(to: session)
        raised.withLock { raised in
            if !raised { Interrupt.raiseShield(for: .signIn) }
            raised = true
        }
        return result
    }

    /// Ends the shield if the agent raised it; with a signal pending, says
    /// whether the sign-in was `stored` and ends the process by that signal.
    func lower(stored: Bool, failure: (any Error)? = nil) {
        let wasRaised = raised.withLock { raised in
            defer { raised = false }
            return raised
        }
        if wasRaised { Interrupt.lowerShield(done: stored, failure: failure) }
    }
}
