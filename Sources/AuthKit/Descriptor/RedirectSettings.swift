/// Where the provider sends the browser back, and its quirks there.
///
/// The default is RFC 8252 §7.3's loopback redirect `http://127.0.0.1:{any port}/callback`.
/// A caller may always pass its own redirect URI (a web backend's `https` URL,
/// a custom scheme such as `myapp:///cb`); these settings describe the default
/// and what the provider accepts.
public struct RedirectSettings: Codable, Sendable, Hashable {
    /// Default `http`. When set, the only scheme the provider accepts: a
    /// caller's redirect URI with another scheme is refused up front
    /// (Instagram requires `https` even for `localhost`).
    public var scheme: String?
    /// Default `127.0.0.1` (RFC 8252 §8.3: not `localhost`).
    public var host: String?
    /// A fixed port the provider has registered; `null` or absent means any free port.
    public var port: Int?
    /// Default `/callback`.
    public var path: String?
    /// A fragment the provider appends to the redirect, stripped before
    /// parsing: Instagram appends `#_`, so its descriptor says `"_"`.
    public var appendedFragment: String?

    public init(scheme: String? = nil, host: String? = nil, port: Int? = nil, path: String? = nil,
                appendedFragment: String? = nil) {
        self.scheme = scheme
        self.host = host
        self.port = port
        self.path = path
        self.appendedFragment = appendedFragment
    }

    public var resolvedScheme: String { scheme?.lowercased() ?? "http" }
    public var resolvedHost: String { host ?? "127.0.0.1" }
    public var resolvedPath: String { path ?? "/callback" }
}
