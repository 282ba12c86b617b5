import AuthKit

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Catches a client id or secret (or a redirect URI, which must also be one:
/// ``RedirectURIRules``) that picked up a stray character on its way in: a line break pasted with it, a space at either
/// end. Such a value would be sent as it is, and the sign-in would fail only
/// at the provider, after the browser, with "invalid client" (or a redirect
/// URI that matches none registered). RFC 6749 Appendix A.1 and A.2 make both
/// printable characters (`VSCHAR`), so no real one holds a control character;
/// a space at an end is allowed there, but no provider issues one.
///
/// The value itself is never shown: a secret must not reach a terminal or a log.
enum PastedClientValue {
    /// What is wrong with `value`, or nil.
    static func problem(_ value: String) -> String? {
        if value.unicodeScalars.contains(where: { $0.isControl || $0.isSpaceOrNewline && !$0.isSpace }) {
            return "holds a line break or another control character"
        }
        if let first = value.unicodeScalars.first, let last = value.unicodeScalars.last, first.isSpace || last.isSpace {
            return "begins or ends with a space"
        }
        return nil
    }

    /// Throws for the first of `settings`' client id, secret and redirect URI with a
    /// ``problem(_:)``, naming where it came from: the flag, the environment
    /// variable, or the field of `config.json` (as a file issue, exit 65).
    static func check(
        _ settings: ClientSettings, explicit: ClientSettings, descriptor: ProviderDescriptor,
        environment: [String: String]
    ) throws {
        let prefix = ClientSettings.environmentPrefix(for: descriptor.id)
        for (what, value, flag, given, variable, field) in [
            ("client id", settings.clientID, "--client-id", explicit.clientID, prefix + "_CLIENT_ID", "clientID"),
            (
                "client secret", settings.clientSecret, "--client-secret", explicit.clientSecret,
                prefix + "_CLIENT_SECRET", "clientSecret"
            ),
            (
                "redirect URI", settings.redirectURI, "--redirect-uri", explicit.redirectURI, prefix + "_REDIRECT_URI",
                "redirectURI"
            ),
        ] {
            // A redirect URI must also be one (`oob` is OAuth 1.0a's "none", RFC 5849 §2.1):
            // the library refuses it too, but cannot say where it came from.
            guard let value else { continue }
            let pasted = problem(value)
            let outOfBand = descriptor.protocol == .oauth1 && value == "oob"
            let shape = what == "redirect URI" && !outOfBand ? RedirectURIRules.problem(value) : nil
            guard let problem = pasted ?? shape else { continue }
            let advice =
                pasted != nil
                ? "Give it as the provider shows it; it is not repeated here."
                : "Give the redirect URI registered with the provider."
            if given != nil { throw CLIError("\(flag): the \(what) \(problem). \(advice)") }
            if environment[variable]?.isEmpty == false {
                throw CLIError("\(variable): the \(what) \(problem). \(advice)")
            }
            let file = AuthKitHome.directory(environment: environment).appendingPathComponent("config.json").path
            throw AuthKitError.invalidFile([
                FileIssue(file: file, field: "providers.\(descriptor.id).\(field)", problem: "\(problem). \(advice)")
            ])
        }
    }
}
