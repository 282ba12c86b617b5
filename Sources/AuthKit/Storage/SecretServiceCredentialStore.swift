#if canImport(CAuthKitLinux)
    import CAuthKitLinux
    import Dispatch
    #if canImport(Glibc)
        import Glibc
    #elseif canImport(Musl)
        import Musl
    #endif

    #if canImport(FoundationEssentials)
        import FoundationEssentials
    #else
        import Foundation
    #endif

    /// Credentials in the desktop's keyring, through the freedesktop.org
    /// Secret Service API (GNOME Keyring, KeePassXC, KWallet): Linux's
    /// counterpart of the Keychain store on Apple platforms.
    ///
    /// One item per credential in the default collection ("login" on GNOME),
    /// found by the attributes `provider` and `label` (empty for the default
    /// account) under the schema ``schema`` (``defaultSchema`` unless an app
    /// keeps its credentials apart from the command line's); its secret is the
    /// credential's JSON. The keyring encrypts it at rest and unlocks it with
    /// the user's session; `secret-tool search provider qiita` or Seahorse
    /// show the items as "AuthKit: qiita (work)".
    ///
    /// libsecret is loaded (dlopen) when the store is first used, not linked:
    /// it brings GLib and libgcrypt, which no other command needs. Each call
    /// is a D-Bus round trip, made on a dispatch thread, not on Swift's
    /// cooperative pool: a locked keyring may show the desktop's unlock prompt
    /// and wait for the user. For at most ``callTimeout``: a prompt shown
    /// where nobody sees it (an SSH session into a desktop) is otherwise
    /// waited for without end; past it, the prompt is dismissed and the call
    /// fails with a store error that says so.
    ///
    /// **Refresh locking** works as with ``FileCredentialStore``: the keyring
    /// has no locks of its own, so a refresh takes the same `flock` on
    /// `.refresh-<key>.lock` in `lockDirectory`, and processes sharing the
    /// keyring send a rotating refresh token once (RFC 9700 §4.14.2). By
    /// default that is the user's runtime directory (``defaultLockDirectory(environment:)``),
    /// the keyring's own scope, not AuthKit's directory: two processes of
    /// one user that see different `$AUTHKIT_HOME`s or `$XDG_CONFIG_HOME`s
    /// (a shell and a timer) share one keyring item, and must share its lock.
    ///
    /// `package` for now: the command line's keyring (`AUTHKIT_STORE=keyring`).
    /// Making it public for Linux desktop apps waits for issue 45's restated
    /// bound on AuthKit's public types (41, all taken).
    package struct SecretServiceCredentialStore: CredentialStore {
        /// The schema the `authkit` command line's items are stored under.
        package static let defaultSchema = "dev.authkit.Credential"
        /// The schema name every item is stored and found under (its `xdg:schema` attribute).
        package let schema: String
        /// Where refresh and sign-in locks are taken.
        package let lockDirectory: URL
        /// How long one call may take, an unlock prompt's wait for the user
        /// included: a minute, time to type a password, by default.
        package let callTimeout: Duration
        package static let defaultCallTimeout = Duration.seconds(60)

        /// - Parameters:
        ///   - schema: the items' schema name; another one keeps an app's
        ///     credentials apart from the command line's (as the Keychain's service does).
        ///   - lockDirectory: a directory every process sharing the items can
        ///     reach; ``defaultLockDirectory(environment:)`` by default.
        ///   - callTimeout: how long one call may take (``callTimeout``).
        package init(
            schema: String = defaultSchema, lockDirectory: URL? = nil, callTimeout: Duration = defaultCallTimeout,
            environment: [String: String] = ProcessInfo.processInfo.environment
        ) {
            self.schema = schema
            self.lockDirectory = lockDirectory ?? Self.defaultLockDirectory(environment: environment)
            self.callTimeout = callTimeout
        }

        /// `authkit/` in the user's runtime directory, where the session bus
        /// that reaches the keyring lives: `$XDG_RUNTIME_DIR` (an absolute
        /// path), else `/run/user/<uid>` when it is there and the user's (a
        /// process started without the variable: a cron job given
        /// `DBUS_SESSION_BUS_ADDRESS`). Both are per user, as the keyring is,
        /// and systemd-logind's, so the same directory for every process of
        /// the user. Where there is none (no logind: a container), AuthKit's
        /// directory (``AuthKitHome``), as before.
        package static func defaultLockDirectory(
            environment: [String: String], userRuntimeDirectory: String = "/run/user/\(geteuid())"
        ) -> URL {
            // The user's own directory, as the XDG Base Directory
            // specification has it: one left named after logout (a tmux
            // session outliving it), or another user's (`su` without `-`),
            // is passed over, not written in.
            func isOwn(_ path: String) -> Bool {
                var status = stat()
                return path.hasPrefix("/") && lstat(path, &status) == 0 && status.st_mode & S_IFMT == S_IFDIR
                    && status.st_uid == geteuid()
            }
            for candidate in [environment["XDG_RUNTIME_DIR"], userRuntimeDirectory].compactMap({ $0 })
            where isOwn(candidate) {
                return URL(fileURLWithPath: candidate, isDirectory: true).appendingPathComponent(
                    "authkit", isDirectory: true)
            }
            return AuthKitHome.directory(environment: environment)
        }

        /// How errors name this store: a keyring has no path.
        package static let keyringName = "the Secret Service keyring"

        /// `nil` when a Secret Service answers on the session bus; otherwise
        /// why not (no D-Bus session, no keyring daemon, libsecret missing),
        /// as the service said it. Asks the service, so it can take as long as
        /// a D-Bus call (a missing bus fails at once).
        package static func unavailableReason(timeout: Duration = defaultCallTimeout) async -> String? {
            let milliseconds = Self.milliseconds(timeout)
            return await Self.blocking(
                giveUpAfter: timeout + abandonGrace,
                givingUp: "the Secret Service did not answer, even once the call was cancelled"
            ) { error in
                authkit_secret_probe(milliseconds, error, Self.errorSize) == 0 ? nil : String(cString: error)
            }
        }

        /// A limit as the C calls take it: whole milliseconds, at least one.
        static func milliseconds(_ duration: Duration) -> Int {
            let (seconds, attoseconds) = duration.components
            return max(1, Int(min(max(seconds, 0), 1 << 40)) * 1000 + Int(attoseconds / 1_000_000_000_000_000))
        }

        package func credential(for key: CredentialKey) async throws -> Credential? {
            guard let text = try await itemText(for: key) else { return nil }
            return try Self.decode(text, key: key, schema: schema)
        }

        /// Members of `key`'s item this AuthKit does not know (a later
        /// version's), which a move to another store would drop, as
        /// ``FileCredentialStore/unknownMembers(of:)`` says of the file's.
        package func unknownMembers(of key: CredentialKey) async throws -> [String] {
            guard let text = try await itemText(for: key),
                let entry = try? JSONDecoder.credentials.decode(CredentialFile.Entry.self, from: Data(text.utf8))
            else { return [] }
            return entry.unknownMemberPaths
        }

        /// The JSON text of `key`'s item, or `nil` when there is none.
        private func itemText(for key: CredentialKey) async throws -> String? {
            let attributes = try Self.attributes(for: key)
            let schema = self.schema
            let milliseconds = Self.milliseconds(callTimeout)
            let text: String? = try await Self.call("read \(key) from", within: callTimeout) { error in
                Self.withCStrings(attributes) { names, values in
                    var secret: UnsafeMutablePointer<CChar>?
                    let found = authkit_secret_lookup(
                        schema, names, values, attributes.count, &secret, milliseconds, error, Self.errorSize)
                    defer { authkit_secret_free(secret) }
                    return found == -2
                        ? .locked
                        : found < 0 ? .failure : .success(found == 1 ? secret.map { String(cString: $0) } : nil)
                }
            }
            return text
        }

        /// Every credential of the schema, sorted by provider then label.
        package func allCredentials() async throws -> [Credential] {
            var credentials = [Credential]()
            for key in try await keys() {
                if let credential = try await credential(for: key) { credentials.append(credential) }
            }
            return credentials.sorted { ($0.providerID, $0.label ?? "") < ($1.providerID, $1.label ?? "") }
        }

        /// The accounts stored, read from the items' attributes only: a locked
        /// keyring is not unlocked (no prompt).
        package func keys() async throws -> [CredentialKey] {
            Array(Set(try await itemKeys()))
        }

        /// One key per item, in any collection: an account saved while
        /// another keyring was the default has an item in each, and is
        /// here twice. A reader gets one of them, and ``remove(_:)`` takes
        /// every unlocked one: `token move` counts them before it moves one.
        package func itemKeys() async throws -> [CredentialKey] {
            let schema = self.schema
            let milliseconds = Self.milliseconds(callTimeout)
            return try await Self.call("list the credentials in", within: callTimeout) { error in
                Self.searchKeys(schema, milliseconds: milliseconds, error)
            }
        }

        /// ``keys()`` on the calling thread, for shell completion, which is
        /// synchronous and a process of its own.
        package func keysNow() throws -> [CredentialKey] {
            let error = UnsafeMutablePointer<CChar>.allocate(capacity: Self.errorSize)
            error.initialize(repeating: 0, count: Self.errorSize)
            defer { error.deallocate() }
            guard case .success(let keys) = Self.searchKeys(schema, milliseconds: Self.milliseconds(callTimeout), error)
            else {
                throw AuthKitError.store(path: Self.keyringName, reason: .init(.inaccessible, String(cString: error)))
            }
            return Array(Set(keys))
        }

        static func searchKeys(_ schema: String, milliseconds: Int, _ error: UnsafeMutablePointer<CChar>) -> Outcome<
            [CredentialKey]
        > {
            let collected = KeyList()
            let count = withExtendedLifetime(collected) {
                authkit_secret_search(
                    schema, "provider", "label",
                    { context, provider, label in
                        guard let context, let provider else { return }
                        let list = Unmanaged<KeyList>.fromOpaque(context).takeUnretainedValue()
                        let label = label.map { String(cString: $0) } ?? ""
                        list.keys.append(
                            CredentialKey(providerID: String(cString: provider), label: label.isEmpty ? nil : label))
                    }, Unmanaged.passUnretained(collected).toOpaque(), milliseconds, error, Self.errorSize)
            }
            return count == -2 ? .locked : count < 0 ? .failure : .success(collected.keys)
        }

        package func save(_ credential: Credential) async throws {
            let data: Data
            do {
                data = try JSONEncoder.credentials.encode(credential)
            } catch {
                throw AuthKitError.store(
                    path: Self.keyringName, reason: .init(.notSaved, "\(credential.key) could not be encoded: \(error)")
                )
            }
            try await store(String(decoding: data, as: UTF8.self), for: credential.key)
        }

        /// `secret` as the item of `key`, whatever it holds: ``save(_:)``'s
        /// write, and a test's item that is not a credential.
        /// `collection`: a D-Bus path to store in, other copies left (tests); `nil`: the default.
        package func store(_ secret: String, for key: CredentialKey, in collection: String? = nil) async throws {
            let attributes = try Self.attributes(for: key)
            let label = "AuthKit: \(key)"
            let schema = self.schema
            let milliseconds = Self.milliseconds(callTimeout)
            try await Self.call("save \(key) to", failure: .notSaved, within: callTimeout) { error in
                Self.withCStrings(attributes) { names, values in
                    authkit_secret_store(
                        schema, names, values, attributes.count, collection, label, secret, milliseconds, error,
                        Self.errorSize) == 0
                        ? .success(()) : .failure
                }
            }
        }

        @discardableResult
        package func remove(_ key: CredentialKey) async throws -> Credential? {
            // Unreadable (not AuthKit's, or damaged): deleted all the same.
            // Anything else (a locked keyring, no answer) stops the delete.
            let existing: Credential?
            do {
                existing = try await credential(for: key)
            } catch let error as AuthKitError {
                guard case .store(let path, let reason) = error.reason else { throw error }
                guard reason.kind == .invalidContents else {
                    // A delete that did not happen, as the clear's own failure is.
                    throw AuthKitError.store(path: path, reason: .init(.notSaved, reason.detail))
                }
                existing = nil
            }
            let attributes = try Self.attributes(for: key)
            let schema = self.schema
            let milliseconds = Self.milliseconds(callTimeout)
            let removed: Bool = try await Self.call("delete \(key) from", failure: .notSaved, within: callTimeout) {
                error in
                Self.withCStrings(attributes) { names, values in
                    let cleared = authkit_secret_clear(
                        schema, names, values, attributes.count, milliseconds, error, Self.errorSize)
                    return cleared < 0 ? .failure : .success(cleared == 1)
                }
            }
            guard removed else { return nil }
            // An item whose secret could not be read was still deleted: say which account.
            return existing ?? Credential(providerID: key.providerID, label: key.label, accessToken: "")
        }

        /// The same lock file as ``FileCredentialStore``'s, in ``lockDirectory``.
        ///
        /// Inside it, before `body`, the keyring is checked to take a save
        /// (``checkWritable()``), as the file store checks its directory:
        /// an item readable in an unlocked collection while the default
        /// one is locked was refreshed, its refresh token spent, and the
        /// renewal then could not be stored.
        package func withRefreshLock<Result: Sendable>(
            for key: CredentialKey, timeout: Duration, _ body: @Sendable () async throws -> Result
        ) async throws -> Result {
            let directory = lockDirectory
            let prepare: @Sendable () throws -> Void = { try Self.makeDirectory(directory) }
            return try await RefreshLockFile(directory: directory, key: key).withLock(
                timeout: timeout, prepare: prepare
            ) {
                // A removal (`token delete`, `revoke`) saves nothing: its own
                // call says what stops it.
                if !FileCredentialStore.removing {
                    do {
                        try await checkWritable()
                    } catch let error as AuthKitError where error.code != .storeLocked {
                        guard case .store(let path, let reason) = error.reason else { throw error }
                        // Said as the save would have failed (exit 74 in the
                        // CLI); a locked keyring stays `locked` (75: unlock it
                        // and try again).
                        throw AuthKitError.store(path: path, reason: .init(.notSaved, reason.detail))
                    }
                }
                return try await body()
            }
        }

        /// Holds the sign-in of `key` against a second one at once, as
        /// ``FileCredentialStore`` does, with its lock in ``lockDirectory``.
        package func beginSignIn(for key: CredentialKey) throws -> FileCredentialStore.SignInLock {
            try Self.makeDirectory(lockDirectory)
            return try FileCredentialStore.beginSignIn(for: key, in: lockDirectory)
        }

        /// The lock directory, made private (0700) when missing, and refused
        /// when someone else can write in it (or owns it): they could remove
        /// a lock file while a refresh holds it, and a second process would
        /// lock a new file and refresh at once, spending a rotating refresh
        /// token twice (the provider then revokes the grant). The file
        /// store's locks sit in its own checked directory; these did not.
        static func makeDirectory(_ directory: URL) throws {
            try FileCredentialStore.ensurePrivateDirectory(directory)
            if let problem = FileSystem.foreignWriteProblem(
                inDirectory: directory.path,
                harm: "let a second refresh run beside one that holds it (a refresh token spent twice, and revoked)",
                refusal: "no lock is taken there", allowingSticky: false)
            {
                throw AuthKitError.store(path: directory.path, reason: .init(.writableByOthers, problem))
            }
        }

        /// Before a sign-in asks anything of the user: the keyring answers,
        /// has a default collection to store in, and it is unlocked (its
        /// prompt shown now, not at the save after the provider's consent,
        /// when a first sign-in's grant was lost if nobody answered it).
        package func checkWritable() async throws {
            let milliseconds = Self.milliseconds(callTimeout)
            let (status, reason) = await Self.blocking(
                giveUpAfter: callTimeout + Self.abandonGrace,
                givingUp: (
                    Int32(-1),
                    "the Secret Service did not answer, even once the call was cancelled (a keyring daemon or its unlock prompt that hangs)"
                )
            ) { error in
                let status = authkit_secret_check_writable(milliseconds, error, Self.errorSize)
                return (status, status == 0 ? "" : String(cString: error))
            }
            if status != 0 {
                throw AuthKitError.store(
                    path: Self.keyringName,
                    reason: .init(status == -2 ? .locked : .inaccessible, "cannot take the credential: \(reason)"))
            }
        }

        // MARK: - The C calls

        /// `provider` and `label`: the names and values an item is found by.
        /// C strings: a NUL would end one early, and `work\u{0}x` would be
        /// stored as, and replace, the account `work`.
        static func attributes(for key: CredentialKey) throws -> [(String, String)] {
            guard !key.providerID.utf8.contains(0), !(key.label ?? "").utf8.contains(0) else {
                throw AuthKitError.store(
                    path: keyringName,
                    reason: .init(
                        .invalidContents,
                        "\(key) has a NUL character in its provider id or label, which the keyring cannot store; rename the account"
                    ))
            }
            return [("provider", key.providerID), ("label", key.label ?? "")]
        }

        static func decode(_ text: String, key: CredentialKey, schema: String = defaultSchema) throws -> Credential {
            let credential: Credential
            do {
                credential = try JSONDecoder.credentials.decode(Credential.self, from: Data(text.utf8))
            } catch {
                // The schema named too: without it, secret-tool clears every
                // item with those attributes, another app's (another schema) too.
                func quoted(_ text: String) -> String {
                    "'" + DisplayText.sanitized(text, limit: 200).replacing("'", with: #"'\''"#) + "'"
                }
                throw AuthKitError.store(
                    path: Self.keyringName,
                    reason: .init(
                        .invalidContents,
                        "holds an item for \(key) that is not an AuthKit credential; delete it (secret-tool clear xdg:schema \(quoted(schema)) provider \(quoted(key.providerID)) label \(quoted(key.label ?? ""))) and sign in again."
                    ))
            }
            // An item is found by its attributes; one whose JSON names another
            // account was edited or copied by hand, and is not used for this one.
            guard credential.key == key else {
                throw AuthKitError.store(
                    path: Self.keyringName,
                    reason: .init(
                        .invalidContents,
                        "holds an item for \(key) whose credential is for \(credential.key); delete it and sign in again."
                    ))
            }
            return credential
        }

        static let errorSize = 512

        enum Outcome<Value> {
            case success(Value)
            case failure
            /// The keyring is locked and was not unlocked (the C call's -2).
            case locked

            var isLocked: Bool {
                if case .locked = self { return true }
                return false
            }
        }

        /// Runs `body` on a dispatch thread with an error buffer; a failure
        /// becomes a store error that says what was being done. `limit` is
        /// the C call's own (``callTimeout``); past it and ``abandonGrace``,
        /// the call is given up (``blocking(giveUpAfter:givingUp:_:)``).
        static func call<Value: Sendable>(
            _ doing: String, failure kind: AuthKitError.StoreProblem.Kind = .inaccessible, within limit: Duration,
            _ body: @escaping @Sendable (UnsafeMutablePointer<CChar>) -> Outcome<Value>
        ) async throws -> Value {
            let gaveUp = AuthKitError.store(
                path: keyringName,
                reason: .init(
                    kind,
                    "gave up waiting to \(doing) it: the Secret Service did not answer within \((limit + abandonGrace).components.seconds) s, even once the call was cancelled (a keyring daemon or its unlock prompt that hangs), and whether it was done is not known. Restart the keyring daemon, or set AUTHKIT_STORE=file."
                ))
            let result: Result<Value, AuthKitError> = await blocking(
                giveUpAfter: limit + abandonGrace, givingUp: .failure(gaveUp)
            ) { error in
                let outcome = body(error)
                if case .success(let value) = outcome { return .success(value) }
                let reason = String(cString: error)
                return .failure(
                    AuthKitError.store(
                        path: keyringName,
                        reason: .init(
                            // Locked: "unlock and try again", whatever was being done.
                            outcome.isLocked ? .locked : kind,
                            "could not \(doing) it: \(reason.isEmpty ? "the Secret Service gave no reason" : reason)."
                        ))
                )
            }
            return try result.get()
        }

        /// How long past its own limit a call is waited for before it is
        /// given up: the C side's cancellation answers well within it.
        package static let abandonGrace = Duration.seconds(10)

        /// Runs `body` on a dispatch thread with an error buffer of its own.
        ///
        /// Once `giveUpAfter` has passed, the caller goes on with
        /// `givingUp`, and the thread is left to its call. The C side's
        /// limit cancels the call, but libsecret does not check that
        /// cancellation while it waits for an unlock prompt: it dismisses
        /// the prompt and waits for the daemon to say the prompt ended, and a
        /// daemon (or prompter) that hangs then held the command without
        /// end. A call left so still holds the C side's one-at-a-time lock;
        /// later calls time out waiting for it, each at its own limit.
        package static func blocking<Value: Sendable>(
            giveUpAfter limit: Duration, givingUp: Value,
            _ body: @escaping @Sendable (UnsafeMutablePointer<CChar>) -> Value
        ) async -> Value {
            let outcome = SharedOutcome<Value>()
            let caller = outcome.join() // before the thread or the deadline could end or leave
            DispatchQueue.global().async {
                let error = UnsafeMutablePointer<CChar>.allocate(capacity: errorSize)
                error.initialize(repeating: 0, count: errorSize)
                defer { error.deallocate() }
                outcome.end(with: .success(body(error)))
            }
            let (seconds, attoseconds) = limit.components
            let nanoseconds = Int(min(max(seconds, 0), 1 << 30)) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
            DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(nanoseconds)) {
                outcome.leave(caller)
            }
            // Not left at the caller's cancellation: the call may still store.
            if case .success(let value)? = await outcome.waitWithoutCancellation(caller) { return value }
            return givingUp
        }

        static func withCStrings<Value>(
            _ pairs: [(String, String)],
            _ body: (UnsafePointer<UnsafePointer<CChar>?>, UnsafePointer<UnsafePointer<CChar>?>) -> Value
        ) -> Value {
            let names = pairs.map { strdup($0.0) }
            let values = pairs.map { strdup($0.1) }
            defer { for copy in names + values { free(copy) } }
            let namePointers = names.map { UnsafePointer($0) }
            let valuePointers = values.map { UnsafePointer($0) }
            return namePointers.withUnsafeBufferPointer { n in
                valuePointers.withUnsafeBufferPointer { v in body(n.baseAddress!, v.baseAddress!) }
            }
        }

        /// The keys a search collects, reached from C through an opaque pointer.
        final class KeyList {
            var keys = [CredentialKey]()
        }
    }
#endif
