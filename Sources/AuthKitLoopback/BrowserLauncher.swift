#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Opens the authorization URL in the user's browser.
///
/// A struct holding a closure, so a test (or a GUI) can stand in for the
/// browser: the end-to-end tests use one that follows the provider's redirect
/// itself. ``system`` is the default. RFC 8252 §8.12: the agent must be the
/// user's own, external browser, never an embedded web view.
public struct BrowserLauncher: Sendable {
    /// Asks the browser to open the URL and returns once the request is handed
    /// over, without waiting for the user. Throws when it could not be handed
    /// over, so the caller can show the URL instead.
    public var open: @Sendable (URL) async throws -> Void

    public init(_ open: @escaping @Sendable (URL) async throws -> Void) {
        self.open = open
    }

    /// The system browser, the way other command-line tools launch it.
    ///
    /// `$BROWSER`, when set, wins: the convention `xdg-open` and Python's
    /// `webbrowser` follow. It is a list of commands separated by `:`, each
    /// tried in turn; a command may carry arguments separated by spaces
    /// (`firefox --new-window`) and may say where the URL goes with `%s`,
    /// otherwise the URL is appended as the last argument. Without
    /// `$BROWSER`, `xdg-open` on Linux and `open` on macOS. A command still
    /// running after two seconds is taken as a browser that opened; one that
    /// fails sooner is reported, and the next is tried.
    ///
    /// The URL is passed as one argument, never through a shell; only http
    /// and https URLs are opened. The child starts with default signal
    /// handling and the caller's environment less every `AUTHKIT_*`
    /// variable, which may hold client secrets; its output goes to standard
    /// error, so standard output stays clean for `--json` and pipes.
    public static var system: BrowserLauncher {
        BrowserLauncher { try await SystemBrowser().open($0) }
    }

    /// Opens nothing: for callers that only print the URL (an SSH session).
    public static var none: BrowserLauncher {
        BrowserLauncher { _ in
            throw SystemBrowser.LaunchError(command: "(none)", reason: "no browser launcher is configured")
        }
    }
}
