import AuthKit

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The requested redirect URI, checked for a loopback listener, and where to bind.
///
/// RFC 8252 §7.3: the redirect is `http://127.0.0.1:{port}/{path}` or
/// `http://[::1]:{port}/{path}`, and the client listens on the loopback
/// interface only. `localhost` is "NOT RECOMMENDED" (§8.3: it may resolve to a
/// non-loopback address, and firewalls treat it differently), but some providers
/// only accept it; it is kept in the URI exactly as given, and the listener
/// binds **both** 127.0.0.1 and ::1 on the same port: a browser may try either,
/// and a port left free on one of them could be taken by another local
/// program, which would then receive the code.
struct LoopbackRedirect: Sendable {
    /// The redirect URI as requested.
    var requested: URL
    /// The addresses to bind, all on one port: `127.0.0.1`, `::1`, or both for `localhost`.
    var bindHosts: [String]
    /// The port to bind: 0 (any free port) when the port is flexible, else the URI's.
    var bindPort: Int

    /// - Throws: ``AuthKit/AuthKitError/Code/unusableRedirectURI`` for a
    ///   redirect a loopback listener cannot receive (none, not `http`, not a loopback host).
    init(requested: URL?, portIsFlexible: Bool) throws {
        guard let requested else {
            throw AuthKitError.unusableRedirectURI(
                uri: "oob",
                reason:
                    "this sign-in has no redirect URI (an out-of-band flow), so there is nothing for a loopback listener to receive; a sign-in that pastes the redirect needs none."
            )
        }
        guard let components = URLComponents(url: requested, resolvingAgainstBaseURL: false),
            components.scheme?.lowercased() == "http"
        else {
            throw AuthKitError.unusableRedirectURI(
                uri: Self.display(requested),
                reason: "it is not an http:// URI, so a loopback listener cannot receive it (RFC 8252 §7.3). "
                    + "Register http://127.0.0.1/callback (any port) with the provider, or sign in by pasting the redirect."
            )
        }
        var host = (components.host ?? "").lowercased()
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        switch host {
        case "127.0.0.1": bindHosts = ["127.0.0.1"]
        case "localhost": bindHosts = ["127.0.0.1", "::1"]
        case "::1": bindHosts = ["::1"]
        case _ where DescriptorValidator.isLoopback(host: host):
            // 127.0.0.2 and the rest of 127.0.0.0/8: loopback, but only
            // 127.0.0.1 is configured on every system (macOS has no other).
            throw AuthKitError.unusableRedirectURI(
                uri: Self.display(requested),
                reason: "its host \(host) is a loopback address the listener does not bind: "
                    + "it listens on 127.0.0.1 and [::1] only (RFC 8252 §7.3). "
                    + "Use http://127.0.0.1 with the same port and path, and register that with the provider.")
        default:
            throw AuthKitError.unusableRedirectURI(
                uri: Self.display(requested),
                reason: "it does not point to this machine's loopback interface; "
                    + "the listener only binds 127.0.0.1 or [::1] (RFC 8252 §7.3, §8.3), never an address other machines can reach. "
                    + "Use a redirect URI such as http://127.0.0.1/callback, or sign in by pasting the redirect.")
        }
        // URLComponents reads any number as a port; a socket address takes 16 bits.
        if let port = components.port, !(0...65535).contains(port) {
            throw AuthKitError.unusableRedirectURI(
                uri: Self.display(requested),
                reason:
                    "its port \(port) is not a TCP port (1–65535). Give the port the provider has registered, or none.")
        }
        self.requested = requested
        if portIsFlexible {
            bindPort = 0
        } else {
            bindPort = components.port ?? 80
        }
    }

    /// The requested URI with the bound port: the URI sent in the authorization
    /// request and the token request (RFC 6749 §4.1.3 wants the same string).
    /// A fixed port is left as written (an absent `:80` stays absent).
    func final(boundPort: Int) -> URL {
        guard bindPort == 0, var components = URLComponents(url: requested, resolvingAgainstBaseURL: false) else {
            return requested
        }
        components.port = boundPort
        return components.url ?? requested
    }

    /// The URI without query or fragment, for messages.
    static func display(_ url: URL) -> String {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else {
            return "(unreadable URI)"
        }
        components.query = nil
        components.fragment = nil
        return components.string ?? "(unreadable URI)"
    }
}
