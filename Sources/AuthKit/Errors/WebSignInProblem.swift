extension AuthKitError {
    /// Why a web sign-in request was refused; an adapter answers each with its
    /// status (``status``) and a page that says what to do.
    package enum WebSignInProblem: Sendable, Hashable, CustomStringConvertible {
        /// No client for this provider id is configured.
        case unknownProvider(String)
        /// The return path is not a path on this site (an open redirect, RFC 9700 §4.11).
        case invalidReturnPath
        /// The callback's `state` names no waiting sign-in: it expired, was
        /// already finished (a replayed callback), or was never started here.
        case attemptNotFound
        /// The callback came to another browser than the one that started the
        /// sign-in (a login-CSRF attempt, or cookies cleared in between).
        case browserMismatch
        /// The provider's sign-in said nothing of who signed in: no verified ID
        /// token (a descriptor without an `openid` part, or scopes without
        /// `openid`), and no `whoAmI` call in its descriptor.
        case noIdentity(providerID: String)
        /// The request needs a signed-in session and has none (or an expired one).
        case notSignedIn
        /// A state-changing request without this session's CSRF token, or from another origin.
        case csrfRefused

        /// The HTTP status an adapter answers with.
        package var status: Int {
            switch self {
            case .unknownProvider: 404
            case .invalidReturnPath, .attemptNotFound, .browserMismatch: 400
            case .noIdentity: 502
            case .notSignedIn: 401
            case .csrfRefused: 403
            }
        }

        /// What the visitor's page says: the description, but for a provider id
        /// from the request's path, which whoever wrote the link chose (`/auth/
        /// Account-locked.Call-…`); the log has it, sanitized.
        package var shownToVisitor: String {
            switch self {
            case .unknownProvider: "No sign-in with this provider is configured here."
            default: description
            }
        }

        package var description: String {
            switch self {
            case .unknownProvider(let id):
                "No sign-in with '\(DisplayText.sanitized(id, limit: 40))' is configured here."
            case .invalidReturnPath:
                "The return address is not a path on this site; sign in from a link of this site."
            case .attemptNotFound:
                "This sign-in is unknown here: it expired, was already finished, or was not started on this site. Start it again."
            case .browserMismatch:
                "This sign-in was started in another browser (or its cookies were cleared). Start it again in this one."
            case .noIdentity(let providerID):
                "The sign-in with \(providerID) said nothing of who signed in: its descriptor needs an openid part (and the openid scope) or a whoAmI call."
            case .notSignedIn:
                "Not signed in."
            case .csrfRefused:
                "This request did not come from this site's own page (no valid CSRF token), so nothing was changed."
            }
        }
    }
}
