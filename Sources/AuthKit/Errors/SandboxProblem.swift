extension AuthKitError {
    /// Why a `Sandbox` (AuthKitSandbox) could not start.
    ///
    /// Only the socket can stop it: everything else a sandbox needs is in
    /// memory. (Errors of the sign-ins run against it are the flow's own,
    /// ``AuthKit/AuthKitError``.)
    package enum SandboxProblem: Sendable, Hashable, CustomStringConvertible {
        /// `SandboxOptions.port` is taken by another program (often a sandbox
        /// still serving).
        case portInUse(port: Int)
        /// Listening failed for another reason (a port below 1024 without
        /// privileges); `reason` is the system's message.
        case cannotListen(port: Int, reason: String)

        package var description: String {
            summary + " Choose another port (SandboxOptions.port), or 0 for any free one."
        }

        /// What went wrong, without what to do: a front end names its own way
        /// of choosing a port (the command line's `--port`).
        package var summary: String {
            switch self {
            case .portInUse(let port):
                "Port \(port) on 127.0.0.1 is already in use, so the sandbox cannot listen there "
                    + "(`lsof -i :\(port)` shows which program holds it)."
            case .cannotListen(let port, let reason):
                "The sandbox cannot listen on 127.0.0.1:\(port): \(reason)."
            }
        }
    }
}
