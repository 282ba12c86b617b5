extension AuthKitError {
    /// Why a `LoopbackUserAgent` (AuthKitLoopback) could not bring back the provider's answer.
    ///
    /// Problems with the redirect URI itself (not `http`, not a loopback host) are
    /// ``AuthKit/AuthKitError/Code/unusableRedirectURI``, like every other configuration
    /// problem; cancellation is ``AuthKit/AuthKitError/Code/cancelled``. These cases are
    /// the ones only a listener has: the socket and the clock.
    package enum LoopbackProblem: Sendable, Hashable, CustomStringConvertible {
        /// The fixed port of the redirect URI is taken by another program.
        /// RFC 8252 §8.3 forbids sharing it (no `SO_REUSEADDR`/`SO_REUSEPORT`), so
        /// the attempt cannot go on until that program stops.
        case portInUse(host: String, port: Int)
        /// Binding failed for another reason (no IPv6 on this machine, a port below
        /// 1024 without privileges); `reason` is the system's message.
        case bindFailed(host: String, port: Int, reason: String)
        /// No genuine redirect arrived within the agent's overall timeout.
        case timedOut(after: Duration)

        package var description: String {
            switch self {
            case .portInUse(let host, let port):
                return "Port \(port) on \(host) is already in use, so the sign-in redirect cannot be received there. "
                    + "The redirect URI names this port (the provider's registered one, or the one asked for), so no other is tried: stop the program listening on it "
                    + "(for example another sign-in still waiting; `lsof -i :\(port)` shows which), then try again. "
                    + "If a sign-in on this port has just ended, the system may hold the port for up to a minute; wait and retry."
            case .bindFailed(let host, let port, let reason):
                let hint =
                    port > 0 && port < 1024
                    ? " Ports below 1024 need administrator rights; register a redirect URI with a higher port." : ""
                return "Could not listen on \(host) port \(port) for the sign-in redirect: \(reason).\(hint)"
            case .timedOut(let after):
                return
                    "No sign-in answer reached the redirect listener within \(after.components.seconds) seconds; it has stopped listening. Start the sign-in again."
            }
        }
    }
}
