#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Where the provider sends the browser back, and its quirks there.
///
/// The default is RFC 8252 §7.3's loopback redirect `http://127.0.0.1:{any port}/callback`.
/// A caller may always pass its own redirect URI (a web backend's `https` URL,
/// a custom scheme such as `myapp:///cb`); these settings describe the default
/// and what the provider accepts.
package struct RedirectSettings: Sendable, Hashable {
    /// The default redirect URI's scheme, lowercased.
    package var scheme: String
    /// The file named a scheme: then it is the only one the provider accepts,
    /// and a caller's redirect URI with another is refused before the browser
    /// opens (Instagram requires `https` even for `localhost`).
    package var schemeIsRequired: Bool
    /// RFC 8252 §8.3: the loopback IP literal rather than `localhost`.
    package var host: String
    /// A fixed port the provider has registered; `nil` means any free port.
    package var port: Int?
    package var path: String
    /// A fragment the provider appends to the redirect, stripped before
    /// parsing: Instagram appends `#_`, so its descriptor says `"_"`.
    package var appendedFragment: String?

    /// The default redirect URI these settings describe:
    /// `http://127.0.0.1/callback`, with the fixed port if there is one.
    package var uri: URL {
        var components = URLComponents()
        // Foundation stops the process on a scheme it cannot hold (`my_app`):
        // the file's is refused when it is read; this is for one built in code.
        guard Self.isScheme(scheme) else { return URL(string: "http://127.0.0.1/callback")! }
        components.scheme = scheme
        components.host = host
        components.port = port
        components.path = path
        return components.url ?? URL(string: "http://127.0.0.1/callback")!
    }

    /// RFC 3986 §3.1: `scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )`.
    package static func isScheme(_ text: String) -> Bool {
        guard let first = text.utf8.first, (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(first | 0x20) else {
            return false
        }
        return text.utf8.allSatisfy { byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte | 0x20)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "+")
                || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".")
        }
    }

    /// A loopback listener may pick the port (RFC 8252 §7.3): no fixed port, plain http.
    package var portIsFlexible: Bool { port == nil && scheme == "http" }
}
