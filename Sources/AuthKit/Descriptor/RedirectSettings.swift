import Foundation

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

    /// The default redirect URI these settings describe:
    /// `http://127.0.0.1/callback`, with the fixed port if there is one.
    public var uri: URL {
        var components = URLComponents()
        components.scheme = resolvedScheme
        components.host = resolvedHost
        components.port = port
        components.path = resolvedPath
        return components.url ?? URL(string: "http://127.0.0.1/callback")!
    }

    /// A loopback listener may pick the port (RFC 8252 §7.3): no fixed port, plain http.
    public var portIsFlexible: Bool { port == nil && resolvedScheme == "http" }

    public var resolvedScheme: String { scheme?.lowercased() ?? "http" }
    public var resolvedHost: String { host ?? "127.0.0.1" }
    public var resolvedPath: String { path ?? "/callback" }
}
