import AuthKit
import AuthKitLoopback

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What the command line says about a library error: the library's message in
/// the library's terms, plus what to type here (the flags and commands the
/// library cannot know about).
enum ErrorReport {
    /// What `main` prints for `error`, whatever its type, for a path that
    /// ends the process itself (a signal held back until a sign-in failed).
    static func message(forAny error: any Error) -> String {
        switch error {
        case let error as AuthKitError: return message(for: error)
        case let error as CLIError: return error.message
        default: return DisplayText.sanitized("\(error)", limit: 2000)
        }
    }

    /// ` --sandbox URL` when the command was given one (as `--sandbox URL`
    /// or `--sandbox=URL`), for a command it suggests; empty otherwise
    /// (`$AUTHKIT_SANDBOX` applies to the suggested command as it did here).
    static func sandboxFlag(in arguments: [String]) -> String {
        for (index, argument) in arguments.enumerated() {
            if argument == "--sandbox", index + 1 < arguments.count {
                return " --sandbox " + ShellWord.quoted(arguments[index + 1])
            }
            if argument.hasPrefix("--sandbox=") {
                return " --sandbox " + ShellWord.quoted(String(argument.dropFirst("--sandbox=".count)))
            }
        }
        return ""
    }

    /// - Parameter flags: whether the command takes `--client-id` and the
    ///   like: `token refresh --due` does not (they are one provider's).
    static func message(
        for error: AuthKitError, environment: [String: String] = ProcessInfo.processInfo.environment, flags: Bool = true
    ) -> String {
        switch error.reason {
        case .missingSetting(let providerID, let setting):
            return
                "\(providerID): no \(setting.name) is configured. \(hint(for: setting, providerID: providerID, environment: environment, flags: flags))"
        case .unknownProvider:
            return error.description + " 'authkit providers list' shows the known ones."
        case .signInRequired(let key, let reason):
            // Under --sandbox, the sign-in to suggest is the sandbox's: without
            // the flag, the command as written signed in to the real provider.
            let flag = sandboxFlag(in: Array(CommandLine.arguments.dropFirst()))
            let signIn =
                error.summary + (reason == .noCredential ? " Sign in first" : " Sign in again")
                + ": authkit authorize \(ShellWord.account(key))\(flag)"
            // Issued by a sandbox that is gone (`sandbox try`'s, another
            // provider's sandbox running now): a sign-in there may not be
            // possible, and the credential is of no use; it can go.
            if case .endpointChanged = reason, !flag.isEmpty || !(environment["AUTHKIT_SANDBOX"] ?? "").isEmpty {
                return signIn
                    + ", or, if its sandbox is gone, remove it: authkit token delete \(ShellWord.account(key))\(flag)"
            }
            return signIn
        case .providerError(_, let response)
        where response.code == "invalid_client" && response.description?.contains("this client is public") == true:
            // `sandbox serve --public-client`: its client has no secret, and
            // --sandbox sends the standard one unless told to send none.
            return error.description
                + " The sandbox serves a public client: pass --client-secret '' (as 'sandbox serve' prints) to send none."
        case .notSupported(_, .deviceGrant):
            return error.summary + " Sign in through a browser, or paste the redirect (--manual)."
        case .notSupported(let providerID, .authorizationCodeGrant):
            return error.summary
                + " Sign in with the device grant: authkit authorize --provider \(ShellWord.quoted(providerID)) --device"
        case .misuse(.credentialOfAnotherProtocol(let credential, let kind)):
            // Here the authenticator is the provider file's: the file now says
            // another protocol than the stored credential (an override that
            // changed it, or a store edited by hand).
            let other = kind == .oauth2 ? "oauth1" : "oauth2"
            return
                "The stored credential \(credential) is an \(other) one, but its provider file now says \(kind.rawValue) "
                + "(a changed or replaced provider file, or an edited store), so it was not used. Sign in again: authkit authorize \(ShellWord.account(credential))"
        default:
            return error.description
        }
    }

    /// Every way to give `setting` to the command line, with the real path of config.json.
    static func hint(
        for setting: AuthKitError.Setting, providerID: String, environment: [String: String],
        arguments: [String] = CommandLine.arguments, flags: Bool = true
    ) -> String {
        let config = AuthKitHome.directory(environment: environment).appendingPathComponent("config.json").path
        let flag: String
        switch setting {
        case .clientID: flag = "--client-id"
        case .clientSecret: flag = "--client-secret"
        case .placeholder(let name, _): flag = "--placeholder \(name)=…"
        case .privateKey: flag = "--private-key"
        }
        let variable = setting.environmentVariable(providerID: providerID)
        if case .placeholder = setting {
        } else if givenEmpty(flag, in: arguments) {
            // `--client-secret ''` (a public client, as `sandbox serve
            // --public-client` prints) wins over the environment and
            // config.json: "set the variable" would not help where it is set.
            let overridden =
                environment[variable].map { !$0.isEmpty } == true
                ? variable
                : configuredValue(setting, providerID: providerID, environment: environment)?.isEmpty == false
                    ? config : nil
            if let overridden {
                return "\(flag) '' gives none, and it overrides the one in \(overridden): drop \(flag) ''."
            }
            return
                "\(flag) '' gives none: pass the \(setting.name) with \(flag), set \(variable), or add \(setting.configEntry(providerID: providerID)) in \(config)."
        }
        let emptyVariable = environment[variable]?.isEmpty == true ? " \(variable) is set, but empty." : ""
        return (flags ? "Pass \(flag), set \(variable)," : "Set \(variable)")
            + " or add \(setting.configEntry(providerID: providerID)) in \(config)."
            + emptyVariable + emptyEntry(setting, providerID: providerID, config: config, environment: environment)
            + misspeltEntry(providerID: providerID, environment: environment)
    }

    /// " …config.json has "clientSecret" under "providers"."qiita", but it is
    /// empty." when it does (a template filled in halfway), else "": an
    /// empty value counts as none, and "add it" alone would read as wrong.
    static func emptyEntry(
        _ setting: AuthKitError.Setting, providerID: String, config: String, environment: [String: String]
    ) -> String {
        configuredValue(setting, providerID: providerID, environment: environment)?.isEmpty == true
            ? " \(config) has \(setting.configEntry(providerID: providerID)), but it is empty." : ""
    }

    /// The value config.json holds for `setting`, if it has the entry.
    static func configuredValue(_ setting: AuthKitError.Setting, providerID: String, environment: [String: String])
        -> String?
    {
        let home = AuthKitHome.directory(environment: environment)
        guard let settings = (try? UserConfiguration.load(home: home))?.providers?[providerID] else { return nil }
        switch setting {
        case .clientID: return settings.clientID
        case .clientSecret: return settings.clientSecret
        case .placeholder(let name, _): return settings.placeholders?[name]
        case .privateKey: return settings.privateKeyFile
        }
    }

    /// Whether the command line gave `flag` an empty value (`--flag ''` or
    /// `--flag=`), before any `--`.
    static func givenEmpty(_ flag: String, in arguments: [String]) -> Bool {
        for (index, argument) in arguments.enumerated() {
            if argument == "--" { return false }
            if argument == flag + "="
                || (argument == flag && arguments.indices.contains(index + 1) && arguments[index + 1].isEmpty)
            {
                return true
            }
        }
        return false
    }

    /// " config.json has settings under 'qitta': did you mean 'qiita'?" when
    /// the user's settings sit under a near miss of the id (which nothing
    /// reads), else "".
    static func misspeltEntry(providerID: String, environment: [String: String]) -> String {
        let home = AuthKitHome.directory(environment: environment)
        guard let entries = (try? UserConfiguration.load(home: home))?.providers?.keys else { return "" }
        let catalog = ProviderCatalog.standard(environment: environment)
        // Near misses only: `box` is one edit from `x`, and is a provider of its own.
        guard
            let near = entries.filter({
                $0 != providerID && ProviderCatalog.editDistance($0, providerID) <= 2 && catalog.entry(id: $0) == nil
            })
            .sorted().first
        else { return "" }
        return
            " config.json has settings under '\(DisplayText.sanitized(near, limit: 40))', which no provider reads: did you mean '\(providerID)'?"
    }
}
