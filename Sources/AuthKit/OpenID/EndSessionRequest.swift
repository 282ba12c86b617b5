#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Ending the user's session at the provider (OpenID Connect RP-Initiated
/// Logout 1.0 §2): the browser goes to the provider's `end_session_endpoint`,
/// which signs the user out and, when asked, sends them back to
/// `post_logout_redirect_uri` with `state`.
///
/// Revoking a credential ends the app's grant; this ends the browser's
/// session at the provider, so that the next "Sign in with …" asks who the
/// user is again. An app usually does both.
///
/// Two forms, because the `id_token_hint` is the ID token itself (a
/// credential, which AuthKit never puts in a URL, where browser histories
/// and server logs keep it):
/// - ``url``: a GET with `client_id` (which §2 allows in its place); the
///   provider may then ask the user to confirm.
/// - ``formHTML()``: a page that POSTs every parameter, the hint included,
///   from the user's browser (§2: "The OP MUST support the use of the HTTP
///   GET and POST methods"); the provider knows whom to sign out at once.
public struct EndSessionRequest: Sendable, Hashable {
    /// The provider's `end_session_endpoint`.
    public var endpoint: URL
    /// Every parameter, `id_token_hint` included when the credential has an ID token.
    public var parameters: [String: String]

    public init(endpoint: URL, parameters: [String: String]) {
        self.endpoint = endpoint
        self.parameters = parameters
    }

    /// The endpoint with every parameter but `id_token_hint` in its query:
    /// for a link, a redirect or a terminal.
    public var url: URL {
        let pairs = parameters.filter { $0.key != "id_token_hint" }.sorted { $0.key < $1.key }.map {
            ($0.key, $0.value)
        }
        return endpoint.appendingQuery(pairs) ?? endpoint
    }

    /// A page that posts every parameter to the endpoint as soon as it
    /// loads (a form with a submit button for browsers without scripts),
    /// values HTML-escaped: an app answers its logout route with it.
    public func formHTML() -> String {
        let fields = parameters.sorted { $0.key < $1.key }.map {
            "<input type=\"hidden\" name=\"\(HTMLEscaping.escape($0.key))\" value=\"\(HTMLEscaping.escape($0.value))\">"
        }
        return """
            <!doctype html>
            <html><head><meta charset="utf-8"><title>Signing out</title></head>
            <body onload="document.forms[0].submit()">
            <form method="post" action="\(HTMLEscaping.escape(endpoint.absoluteString))">\(fields.joined())
            <noscript><button type="submit">Continue signing out</button></noscript>
            </form></body></html>
            """
    }
}

extension OAuth2Client {
    /// The request that ends `credential`'s user's session at the provider
    /// (RP-Initiated Logout 1.0 §2): `client_id`, the credential's ID token
    /// as `id_token_hint` (posted only, see ``EndSessionRequest``), and the
    /// return address and `state` when given (the return address must be
    /// one the client registered with the provider as a post-logout
    /// redirect URI; `state` comes back with the user, for the app to check
    /// byte for byte).
    /// - Throws: ``AuthKitError/Code/notSupported`` (`.endSession`)
    ///   when the descriptor names no end-session endpoint.
    public func endSession(
        _ credential: Credential, postLogoutRedirectURI: String? = nil, state: String? = nil
    ) throws -> EndSessionRequest {
        try checkCredential(credential)
        guard let endpoint = client.openID?.endSession else {
            throw AuthKitError.notSupported(providerID: descriptor.id, .endSession)
        }
        var parameters = ["client_id": client.clientID]
        // The ID token goes only where the credential was issued for, as
        // UserInfo's and revocation's requests do: an end-session URL whose
        // placeholder now names another host (or one not recorded at
        // sign-in, for a descriptor with placeholder hosts) gets no hint;
        // the provider then asks which account to sign out.
        let hintAllowed =
            credential.endpointOrigins.map { $0.contains(endpoint.origin) }
            ?? !descriptor.endpointHosts.contains { $0.contains("{") }
        // Only a verified one: a token kept from before AuthKit verified
        // them, or from an answer it could not check, proves nothing and
        // names no one the provider should sign out.
        if hintAllowed, credential.identity != nil, case .string(let idToken)? = credential.rawFields["id_token"] {
            parameters["id_token_hint"] = idToken
        }
        if let postLogoutRedirectURI { parameters["post_logout_redirect_uri"] = postLogoutRedirectURI }
        if let state { parameters["state"] = state }
        return EndSessionRequest(endpoint: endpoint, parameters: parameters)
    }
}

/// Printed, logged or dumped, the request shows its endpoint and parameters
/// but not `id_token_hint`, which is the ID token itself.
extension EndSessionRequest: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var description: String {
        let shown = parameters.sorted { $0.key < $1.key }.map {
            "\($0.key): \($0.key == "id_token_hint" ? "••••" : $0.value)"
        }
        return "EndSessionRequest(\(endpoint.absoluteString), " + shown.joined(separator: ", ") + ")"
    }

    public var debugDescription: String { description }

    public var customMirror: Mirror { Mirror(self, children: ["description": description]) }
}
