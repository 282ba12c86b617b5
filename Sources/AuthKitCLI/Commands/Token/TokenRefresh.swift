import ArgumentParser
import AuthKit

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

struct TokenRefresh: WorkspaceCommand {
    static let sendsRequests = true
    static let configuration = CommandConfiguration(
        commandName: "refresh",
        abstract: "Refresh a stored credential now, or every one that is due, and save the result.",
        usage: "authkit token refresh [<options>] [--provider <id>]",
        discussion: """
            With --provider, that credential is refreshed now. With --due, every
            stored credential inside its provider's refresh window is refreshed
            (Instagram's long-lived tokens: in their last 14 days, once 24 hours
            old), each reported on its own line; the exit status is 1 when any
            failed (74 when the store could not be written). Run it daily from cron
            or a systemd timer (docs/command-line.md shows one). Another process
            refreshing the same credential at the same time is waited for, and its
            result used: a refresh token is sent once.

            Examples:
              authkit token refresh --provider instagram
              authkit token refresh --due
            """)

    @OptionGroup var global: GlobalOptions
    @Option(
        name: .shortAndLong, help: ArgumentHelp("The provider id, as in 'authkit providers list'.", valueName: "id"),
        completion: .custom(Completions.providerIDs))
    var provider: String?
    @Option(
        name: .long,
        help: ArgumentHelp(
            "The account label, when one provider holds several accounts ('' for the one without a label).",
            valueName: "label"),
        completion: .custom(Completions.labels))
    var label: String?
    @Flag(help: "Refresh every stored credential that is due, instead of one.") var due = false
    @OptionGroup var client: ClientOptions

    func validate() throws {
        try AccountOptions.checkProviderID(provider)
        if due, provider != nil {
            throw ValidationError(
                "--due refreshes every credential that is due, --provider one credential now; give one of them.")
        }
        if !due, provider == nil {
            throw ValidationError(
                "Give --provider ID to refresh one credential, or --due to refresh every one that is due.")
        }
        if due, label != nil { throw ValidationError("--label picks one credential; --due goes through all of them.") }
        // As every other command takes it (AccountOptions): '' names the
        // account without a label (the command `token show` advises once
        // `token switch` chose another); only spaces are refused.
        if let label, !label.isEmpty, label.allSatisfy(\.isWhitespace) {
            throw ValidationError(
                "--label takes a name such as work; got only spaces. Leave --label out for the default account, "
                    + "or give --label '' for the one without a label."
            )
        }
        // One provider's client: with --due it went to every provider's token
        // endpoint, one provider's secret (or key, signing their assertions)
        // to all the others.
        if due,
            client.clientID != nil || client.clientSecret != nil || client.privateKey != nil
                || !client.placeholder.isEmpty
        {
            throw ValidationError(
                "--client-id, --client-secret, --private-key and --placeholder are one provider's; --due refreshes every provider's credentials, each with its own AUTHKIT_<ID>_… variables or config.json entry. Refresh one with --provider ID to pass them."
            )
        }
    }

    func run(in workspace: Workspace) async throws {
        guard due, provider == nil else {
            // Without --label, the account `token switch` chose, as every
            // other command takes it (and as the advice to sign in again names it).
            let key = try workspace.key(provider: provider ?? "", label: label)
            let refreshed = try await workspace.source(key, explicit: client.settings()).refresh()
            Console.say("Refreshed \(refreshed.key); it expires \(CredentialSummary.expiry(refreshed)).")
            CredentialSummary.lines(refreshed).forEach(Console.out)
            return
        }
        var failures = 0
        // Once the store could not be saved to, every later refresh would
        // spend its refresh token for a renewal that cannot be kept either.
        var unsaved = false
        // Account by account, each read on its own: one item that cannot be
        // read (edited by hand, written by a later version) failed the whole
        // run, and a timer renewed nothing until someone looked.
        let accounts = try await workspace.store.accounts().sorted {
            ($0.providerID, $0.label ?? "") < ($1.providerID, $1.label ?? "")
        }
        // Once the store itself could not be read (a keyring locked, or not
        // answering), each later account would wait for it as long again,
        // or show its unlock prompt once more.
        var unreadable = false
        for key in accounts {
            let name = "\(key)"
            if unreadable {
                failures += 1
                Console.say("\(name): not tried: the store could not be read (see above)", hanging: 2)
                continue
            }
            let credential: Credential
            do {
                guard let stored = try await workspace.store.credential(for: key) else { continue }
                credential = stored
            } catch let error as AuthKitError {
                failures += 1
                Console.say("\(name): failed: \(ErrorReport.message(for: error, flags: false))", hanging: 2)
                // One item that is not a credential is that item's; anything else is the store's.
                if case .store(_, let reason) = error.reason, reason.kind != .invalidContents { unreadable = true }
                continue
            }
            if unsaved {
                failures += 1
                Console.say(
                    "\(name): not tried: the store cannot be saved to (see above), and a refresh would spend its "
                        + "refresh token for nothing",
                    hanging: 2)
                continue
            }
            // An OAuth 1.0a token neither expires nor refreshes (RFC 5849): never
            // due, whether or not its consumer key is configured here.
            if credential.kind == .oauth1 {
                Console.say("\(name): not due: OAuth 1.0a tokens do not expire", hanging: 2)
                continue
            }
            do {
                let source = try await workspace.source(credential.key, explicit: client.settings())
                guard source.policy.isDue(credential) else {
                    let when =
                        credential.expiresAt == nil
                        ? "the provider gave no lifetime" : "expires \(CredentialSummary.expiry(credential))"
                    Console.say("\(name): not due; \(when)", hanging: 2)
                    continue
                }
                let refreshed = try await source.refreshIfDue()
                Console.say("\(name): refreshed; expires \(CredentialSummary.expiry(refreshed))", hanging: 2)
            } catch let error as AuthKitError {
                failures += 1
                Console.say("\(name): failed: \(ErrorReport.message(for: error, flags: false))", hanging: 2)
                if case .store(_, let reason) = error.reason, reason.kind == .notSaved { unsaved = true }
            } catch let error as CLIError {
                failures += 1
                Console.say("\(name): failed: \(error.message)", hanging: 2)
            }
        }
        if accounts.isEmpty { Console.err("No stored credentials.") }
        if failures > 0 {
            // The store that cannot be written is the one cause a script
            // should tell apart (exit 74, as for one credential): every
            // credential waits on it, and retrying changes nothing until
            // there is room.
            throw CLIError(
                "\(failures) of \(accounts.count) credentials could not be refreshed (see above)"
                    + (unsaved ? "; the credential store could not be written." : "."),
                status: unsaved ? .outputFailed : .failure)
        }
    }
}
