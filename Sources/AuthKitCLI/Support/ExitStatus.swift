import AuthKit
import AuthKitLoopback
import AuthKitSandbox

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

/// The exit codes of `authkit`, one per kind of failure, so scripts can react
/// (documented in docs/command-line.md, "Exit codes").
enum ExitStatus: Int32, CaseIterable {
    case success = 0
    /// Anything not covered below (an operation the provider does not offer, say).
    case failure = 1
    /// The provider refused: the user denied consent, or an endpoint answered
    /// with an error or an unusable response, or an API request was not 2xx.
    case providerError = 3
    /// The provider could not be reached.
    case networkError = 4
    /// Waiting for the browser took longer than `--timeout`.
    case timedOut = 5
    /// Bad usage: unknown flags or provider, a missing client id (sysexits EX_USAGE).
    case usage = 64
    /// Bad input data: an invalid descriptor, config or credential file, a
    /// pasted URL that is not this sign-in's redirect (sysexits EX_DATAERR).
    case badInput = 65
    /// Something could not be written (a full disk, a closed descriptor):
    /// standard output, so what the command printed is incomplete; the
    /// credential store or a provider file, left as it was (sysexits EX_IOERR).
    case outputFailed = 74
    /// The credential store is locked (a keychain to unlock first): try again
    /// once it is (sysexits EX_TEMPFAIL).
    case storeLocked = 75
    /// Cancelled with Ctrl-C (128 + SIGINT, the shell convention).
    case cancelled = 130

    init(for error: Error) {
        switch error {
        case let error as AuthKitError:
            switch error.reason {
            case .authorizationFailed, .providerError, .invalidResponse, .idTokenRejected: self = .providerError
            case .signInRequired(_, .refreshRefused): self = .providerError
            case .signInRequired(_, .noCredential): self = .usage
            case .notSupported(_, .deviceGrant): self = .usage // --device for a provider without it
            // a browser sign-in for a device-only provider
            case .notSupported(_, .authorizationCodeGrant): self = .usage
            case .signInRequired, .notSupported, .misuse: self = .failure
            case .network: self = .networkError
            case .redirectNotFollowed, .responseTooLarge: self = .providerError
            case .insecureTransport, .outsideProviderAPI: self = .usage
            case .unknownProvider, .missingSetting, .invalidSetting, .unusableRedirectURI: self = .usage
            case .store(_, let reason) where reason.kind == .notSaved: self = .outputFailed
            case .store(_, let reason) where reason.kind == .locked: self = .storeLocked
            case .invalidFile, .redirect, .store: self = .badInput
            case .cancelled: self = .cancelled
            case .loopback(.portInUse), .loopback(.bindFailed): self = .usage
            case .loopback(.timedOut): self = .timedOut
            case .sandbox: self = .usage // like a redirect port in use: choose another --port
            // Thrown by the web and PostgreSQL products, which no command runs.
            case .webSignIn, .encryption: self = .failure
            }
        case is CLIError:
            self = (error as! CLIError).status
        default:
            self = .failure
        }
    }
}

/// An error of the command line itself, with its exit status.
struct CLIError: Error, CustomStringConvertible {
    var message: String
    var status: ExitStatus

    init(_ message: String, status: ExitStatus = .usage) {
        self.message = message
        self.status = status
    }

    var description: String { message }

    /// `token delete` or `token revoke` for an account with nothing stored;
    /// `others`: ``Workspace/otherAccounts(than:)``, when the provider holds some.
    static func nothingStored(_ key: CredentialKey, so outcome: String, others: String? = nil) -> CLIError {
        CLIError(
            "No stored credential for \(key); \(outcome). " + (others ?? "'authkit token list' shows what is stored."))
    }
}

extension ExitStatus {
    /// Ends the process now with this status, from a callback that cannot
    /// throw (a command's own `exit` is argument-parser's, for errors): a
    /// Ctrl-C, a timeout, an error already reported.
    ///
    /// Other threads may still be working (loading libcurl, in a transfer),
    /// so it first waits for a libcurl load to finish (see
    /// `settleDefaultHTTPClient`), then ends with `_exit` after flushing
    /// standard I/O: `exit`'s handlers (OpenSSL's cleanup among them) would
    /// run while those threads still use what they tear down. Nothing is
    /// lost: output is written unbuffered or flushed here, and a credential is
    /// stored by an atomic rename or not at all.
    func terminate() -> Never {
        settleDefaultHTTPClient()
        Console.flushStandardStreams()
        _exit(rawValue)
    }
}
