/// The version `authkit --version` prints, and the one every request names
/// in its `User-Agent` (``FlowTransport``).
package enum AuthKitVersion {
    package static let current = "0.3.0"

    /// `AuthKit/0.3.0`. GitHub's API refuses a request without a
    /// `User-Agent` ("Requests with no User-Agent header will be rejected",
    /// docs.github.com, getting started with the REST API); libcurl sends
    /// none of its own. RFC 9110 §10.1.5: a product token and its version.
    package static let userAgent = "AuthKit/\(current)"
}
