import AuthKit

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Which account a provider's commands use when no `--label` is given
/// (`authkit token switch`, as `gh auth switch`): `default-accounts.json`
/// beside the credentials, `{"github": "work"}`. A provider it does not name
/// uses its account without a label, as before.
///
/// A file of its own rather than a member of config.json: AuthKit writes
/// it, and config.json is the user's, holding client secrets AuthKit never
/// rewrites. It holds no secret, only labels.
struct DefaultAccounts {
    let file: URL

    /// `$AUTHKIT_HOME/default-accounts.json`, or the sandbox's own beside its store.
    init(directory: URL) {
        self.file = directory.appendingPathComponent("default-accounts.json")
    }

    /// The labels chosen, by provider id; empty when there is no file. A
    /// file that is not such an object is named, not ignored: ignoring it
    /// would send a command to another account than the one chosen.
    func labels() throws -> [String: String] {
        // A dangling link (a dotfiles checkout not made yet) is said by the
        // read below, not taken for no choice: commands then went to the
        // account without a label, silently.
        guard !FileSystem.isAbsent(file.path) else { return [:] }
        if FileSystem.isDanglingLink(file.path) {
            throw CLIError(
                "\(file.path) is a symbolic link to a file that does not exist; restore what it points to, or remove the link (each provider's commands then use its account without a label).",
                status: .badInput)
        }
        let data: Data
        do {
            let read = try FileSystem.contentsAndStatus(of: file.path, accepting: .regularFile, limit: 1 << 20)
            // It chooses which account a request's token comes from: one
            // that another user could have written (theirs, or writable by
            // others) is refused, as config.json is
            // (``FileSystem/foreignWriteProblem(at:harm:allowingSticky:opened:ancestors:)``).
            if let problem = FileSystem.foreignWriteProblem(
                at: file.path, harm: "choose which of your accounts your commands use", opened: read.info)
            {
                throw CLIError("\(file.path): \(problem)", status: .badInput)
            }
            data = read.data
        } catch let error as CLIError {
            throw error
        } catch {
            let why = "\(error)"
            throw CLIError(
                "\(file.path) cannot be read (\(why.hasSuffix(".") ? String(why.dropLast()) : why)).", status: .badInput
            )
        }
        // Read by AuthKit's own parser, a provider named twice refused:
        // Foundation's decoder kept the first, editors, jq and Python the
        // last, so commands used another account than the one the user saw
        // (config.json and the credential file refuse it too).
        let object: [String: JSONValue]
        // A byte-order mark (an editor's) is dropped, as Foundation's decoder did.
        let text = data.starts(with: [0xEF, 0xBB, 0xBF]) ? data.dropFirst(3) : data[...]
        do {
            guard case .object(let parsed) = try JSONParser.parse(Data(text), repeatedNames: .refused) else {
                throw CLIError(Self.notAnObject(file), status: .badInput)
            }
            object = parsed
        } catch let error as JSONParser.Failure where error.repeatedField != nil {
            throw CLIError(
                "\(file.path) names the provider '\(DisplayText.sanitized(error.repeatedField ?? "", limit: 60))' more than once: which account is chosen cannot be told. Keep one entry per provider.",
                status: .badInput)
        } catch let failure as JSONParser.Failure {
            throw CLIError(
                Self.notAnObject(file)
                    + " It is not read past byte \(failure.offset): \(DisplayText.sanitized(failure.reason, limit: 120)).",
                status: .badInput)
        } catch {
            throw CLIError(Self.notAnObject(file), status: .badInput)
        }
        var labels = [String: String]()
        for (provider, value) in object {
            guard case .string(let label) = value else { throw CLIError(Self.notAnObject(file), status: .badInput) }
            labels[provider] = label
        }
        return labels
    }

    static func notAnObject(_ file: URL) -> String {
        "\(file.path) is not an object of provider ids and labels, such as {\"github\": \"work\"}; fix or delete it "
            + "(each provider's commands then use its account without a label)."
    }

    /// Chooses `label` (nil: the account without one) for `provider`.
    /// Read, changed and written under the file's lock (as the credential
    /// store's file is): two `token switch` runs at once, for two providers,
    /// both land, and neither removes the other's new copy.
    /// - Parameter expected: when given, the choice changes only if it is
    ///   still this label (compared byte for byte under the file's lock):
    ///   a reset after a deletion must not undo a `token switch` that came
    ///   between its read and its write.
    /// - Returns: whether the choice was changed.
    @discardableResult
    func choose(_ label: String?, for provider: String, ifStill expected: String? = nil) throws -> Bool {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        do {
            try FileSystem.createPrivateDirectory(file.deletingLastPathComponent().path)
            return try StoreLock(path: file.path + ".lock", timeout: .seconds(10)).withLock {
                var labels = try self.labels()
                if let expected {
                    guard let current = labels[provider], ExactText.same(current, expected) else { return false }
                }
                labels[provider] = label
                // Written where a link leads (a dotfiles checkout's file,
                // which the read above followed and checked): replaced by a
                // file of its own, the link was gone, and the checkout's
                // copy went stale without a word.
                try AtomicFile(path: FileSystem.linkTarget(of: file.path) ?? file.path)
                    .replace(with: try encoder.encode(labels))
                return true
            }
        } catch let failure as AtomicFile.Failure {
            throw CLIError(
                "\(file.path): \(failure.what) (\(failure.reason)); nothing was changed. Make room, or make its directory writable.",
                status: .outputFailed)
        } catch let error as AuthKitError {
            // Another `authkit` holding the lock past the wait is neither a
            // full disk nor a file to fix: said as the credential store's is.
            if case .store(_, let reason) = error.reason, reason.kind == .busy {
                throw CLIError(
                    "\(file.path) is being changed by another authkit (its lock was held for 10 s); nothing was changed. Try again once it has finished.",
                    status: .badInput)
            }
            // Its lock or directory could not be made (a read-only or full
            // file system, a directory where the lock belongs): a failure to
            // write, as for the credential store (exit 74), not a file to
            // fix (it was 65). Named by its path, not as "Credential store":
            // the lock is this file's; the advice is the reason's own, but
            // for a file system that took nothing.
            guard case .store(let path, let reason) = error.reason else { throw error }
            let advice = reason.kind == .notSaved ? " Make room, or make its directory writable." : ""
            throw CLIError("\(path): \(reason.detail) Nothing was changed.\(advice)", status: .outputFailed)
        }
    }
}
