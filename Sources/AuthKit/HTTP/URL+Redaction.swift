import Foundation

extension URL {
    /// The URL without its query, fragment and user info, for logs and error
    /// messages. Some providers put secrets in query strings (Instagram's
    /// long-lived token exchange sends `client_secret` and `access_token` in a
    /// GET), so no message prints a query.
    public var redactedForLogs: String {
        guard var components = URLComponents(url: self, resolvingAgainstBaseURL: false) else {
            return "(unprintable URL)"
        }
        let hadQuery = components.percentEncodedQuery != nil
        components.percentEncodedQuery = nil
        components.fragment = nil
        components.user = nil
        components.password = nil
        return (components.string ?? "(unprintable URL)") + (hadQuery ? "?…" : "")
    }
}
