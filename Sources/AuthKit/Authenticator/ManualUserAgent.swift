#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A ``UserAgent`` for terminals without a browser on the same machine (SSH),
/// and for providers whose redirect cannot reach a loopback listener
/// (Instagram requires `https`): it shows the URL, and the user pastes back the
/// URL the browser ended on — or, for an out-of-band OAuth 1.0a flow, the PIN.
///
/// By default it prompts on standard error and reads standard input, so
/// standard output stays clean for `--json` and pipes; `write` and
/// `readLine` stand in for them (tests, a GUI's text field). Its API is the
/// protocol's, so it is reached through this function, as the in-memory
/// store is through ``inMemoryCredentialStore(_:)``.
public func manualUserAgent(
    write: (@Sendable (String) -> Void)? = nil, readLine: (@Sendable () -> String?)? = nil
) -> some UserAgent {
    ManualUserAgent(
        write: write ?? ManualUserAgent.standardErrorWrite, readLine: readLine ?? ManualUserAgent.standardInputLine)
}

/// ``manualUserAgent(write:readLine:)``'s agent; package, as the command
/// line reads its bounds and unwrapping.
package struct ManualUserAgent: UserAgent, AnsweringUserAgent {
    package var write: @Sendable (String) -> Void
    package var readLine: @Sendable () -> String?

    package init(
        write: @escaping @Sendable (String) -> Void = ManualUserAgent.standardErrorWrite,
        readLine: @escaping @Sendable () -> String? = ManualUserAgent.standardInputLine
    ) {
        self.write = write
        self.readLine = readLine
    }

    /// Writes to standard error, all of it (a prompt is never cut short).
    package static func standardErrorWrite(_ text: String) {
        var text = text
        _ = text.withUTF8 { FileSystem.writeAll(STDERR_FILENO, UnsafeRawBufferPointer($0)) }
    }

    /// The longest answer read: a redirect URL is a few KiB, and an endless
    /// line (a pipe from the wrong program) must not grow without end.
    package static let longestAnswer = 64 << 10

    /// A line of standard input, at most ``longestAnswer`` bytes: a longer
    /// one, like the input's end, is taken as no answer. Read with `read(2)`,
    /// not `Swift.readLine` (see ``FileSystem/readLine(_:limit:)``).
    package static func standardInputLine() -> String? {
        guard case .line(let line) = FileSystem.readLine(STDIN_FILENO, limit: longestAnswer) else { return nil }
        return line
    }

    /// The pasted redirect. (An OAuth 1.0a client asks for the typed PIN
    /// of the out-of-band flow through the package's `answer(_:)`.)
    package func run(_ session: AuthorizationSession) async throws -> URL {
        try await redirect(of: session)
    }

    package func answer(_ session: AuthorizationSession) async throws -> UserAgentResult {
        let redirect = Self.redirectToPaste(for: session)
        let url = try await session.makeAuthorizationURL(redirect)
        write(
            "Open this URL in a browser and approve access to \(session.providerName):\n\n  \(url.absoluteString)\n\n")
        guard let redirectURI = redirect else {
            write("Then type the code \(session.providerName) shows:\n")
            guard let code = readLine().map(Self.unwrapped), !code.isEmpty else { throw AuthKitError.cancelled }
            return .verificationCode(code)
        }
        var prompt = "Then paste the full URL the browser was sent to (it starts with \(redirectURI.absoluteString))"
        if redirectURI.scheme?.lowercased() == "http", redirectURI.isLoopback {
            // Nothing of this sign-in listens there: the browser's error page
            // is expected. "Nothing listens" is not said: another program
            // could (it would see the code, which PKCE keeps useless to it).
            prompt +=
                ". This sign-in does not listen at that address, so the browser will most likely show a connection error; the URL in its address bar is what to paste"
        }
        write(prompt + ":\n")
        guard let line = readLine().map(Self.unwrapped), !line.isEmpty else { throw AuthKitError.cancelled }
        // The text as pasted goes to the parser (a URL made from it first would
        // re-encode what the parser must refuse). A wrong paste is an error
        // here: there is no browser to wait for.
        try session.validateRedirect(line)
        guard let pasted = URL(string: line) else {
            throw AuthKitError.redirect(.malformed("the pasted text is not a URL"))
        }
        return .redirect(pasted)
    }

    /// The redirect URI the browser is sent to. A provider that takes any
    /// loopback port (RFC 8252 §7.3) is given one that nothing listens on
    /// now: the port-less `http://127.0.0.1/callback` sent the browser, with
    /// the authorization code in its address, to port 80, where a local web
    /// server may be listening and keep it in its log. On a free port the
    /// browser fails to connect, and its address bar holds the URL to paste.
    static func redirectToPaste(for session: AuthorizationSession) -> URL? {
        guard let uri = session.redirectURI, session.redirectPortIsFlexible, uri.scheme?.lowercased() == "http",
            uri.isLoopback, uri.port == nil, let port = UnusedLoopbackPort.find(host: uri.host ?? "127.0.0.1"),
            var components = URLComponents(url: uri, resolvingAgainstBaseURL: false)
        else { return session.redirectURI }
        components.port = port
        return components.url ?? uri
    }

    /// The pasted text without spaces around it and without one pair of
    /// quotes or angle brackets around that: a URL copied from a shell
    /// command, a log or a message often comes with them (RFC 3986
    /// Appendix C delimits URIs in text with `<…>`). Nothing inside is
    /// changed, and the answer's `state` is checked as before.
    package static func unwrapped(_ text: String) -> String {
        let trimmed = text.trimmingSpaces()
        for (open, close) in [("'", "'"), ("\"", "\""), ("<", ">")]
        where trimmed.count >= 2 && trimmed.hasPrefix(open) && trimmed.hasSuffix(close) {
            return String(trimmed.dropFirst().dropLast()).trimmingSpaces()
        }
        return trimmed
    }
}
