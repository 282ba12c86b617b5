// One file, two modules: compiled into AuthKit on Apple platforms and, on
// Linux, into AuthKitFoundationNetworking (Sources/AuthKitFoundationNetworking
// links to it), because there URLRequest is in FoundationNetworking, which
// links libcurl: AuthKit itself does not import it on Linux, so a program on
// AuthKit (authkit among them) does not load libcurl before main().
#if (AUTHKIT_FOUNDATION_NETWORKING && canImport(FoundationNetworking)) || (!AUTHKIT_FOUNDATION_NETWORKING && !canImport(FoundationNetworking))
    #if AUTHKIT_FOUNDATION_NETWORKING
        import AuthKit
        import FoundationNetworking
    #endif
    import Foundation
    import HTTPTypes

    extension Authenticator {
        /// Returns `request` carrying `credential`, as
        /// ``Authenticator/authorize(_:body:with:)`` does for an `HTTPRequest`: an
        /// `Authorization: Bearer` header for OAuth 2.0 (RFC 6750 §2.1), an
        /// `Authorization: OAuth` signature for OAuth 1.0a (RFC 5849 §3.5.1).
        ///
        /// For OAuth 1.0a, set the body (`httpBody`) first and change nothing
        /// afterwards: a form-encoded body is signed (§3.4.1.3.1), so it cannot be
        /// a stream, which could be read only once. A body without a
        /// `Content-Type` is a form to URLSession, which says so when it sends
        /// it: the request returned says so too, and its body is signed.
        /// - Throws: ``AuthKitError/Code/misuse`` for a request without an absolute
        ///   URL or an OAuth 1.0a form body given as a stream, and as
        ///   `authorize(_:body:with:)` does.
        public func authorize(_ request: URLRequest, with credential: Credential) throws -> URLRequest {
            guard let url = request.url else { throw AuthKitError.misuse(.unsignableRequest("it has no URL.")) }
            // swift-http-types stops the process for a URL without a scheme
            // (`//api.example/x`, `/x`: links an API may answer with).
            guard url.absoluteURL.scheme?.isEmpty == false else {
                throw AuthKitError.misuse(.unsignableRequest("it has no absolute URL (no scheme)."))
            }
            var request = request
            // URLSession sends a body without a Content-Type as a form
            // (`application/x-www-form-urlencoded`, CFNetwork and
            // FoundationNetworking alike): said here, so that OAuth 1.0a signs
            // it as the server will read it (RFC 5849 §3.4.1.3.1).
            if descriptor.protocol == .oauth1, request.value(forHTTPHeaderField: "Content-Type") == nil,
                request.httpBody?.isEmpty == false || request.httpBodyStream != nil
            {
                request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
            }
            let contentType = request.value(forHTTPHeaderField: "Content-Type")
            if request.httpBodyStream != nil, descriptor.protocol == .oauth1,
                FormURLEncoding.isFormContentType(contentType)
            {
                throw AuthKitError.misuse(
                    .unsignableRequest(
                        "a form-encoded body must be signed, so it must be set as httpBody, not as a stream."))
            }
            let methodName = request.httpMethod ?? "GET"
            guard let method = HTTPRequest.Method(methodName) else {
                throw AuthKitError.misuse(
                    .unsignableRequest(
                        "its method '\(DisplayText.sanitized(methodName, limit: 40))' is not an HTTP method."))
            }
            var head = HTTPRequest(method: method, url: url)
            if let contentType { head.headerFields[.contentType] = contentType }
            var authorized = request
            authorized.setValue(
                try authorize(head, body: request.httpBody, with: credential).headerFields[.authorization],
                forHTTPHeaderField: "Authorization")
            return authorized
        }
    }
#endif
