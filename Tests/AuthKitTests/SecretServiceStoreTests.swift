#if os(Linux)
    import AuthKit
    import AuthKitTestSupport
    import Foundation
    import Testing

    /// ``SecretServiceCredentialStore`` against a real Secret Service
    /// (gnome-keyring-daemon on a private D-Bus session bus, which `.ci/run`
    /// starts with scripts/throwaway-keyring).
    @Suite(.enabled("no Secret Service answers (.ci/run starts one)") { await TestKeyring.shouldRun() })
    struct SecretServiceStoreTests {
        @Test func theKeyringAnswers() async {
            let reason = await SecretServiceCredentialStore.unavailableReason()
            #expect(reason == nil, "\(reason ?? "")")
        }

        /// The contract every store meets, with a second instance as a second process would have.
        @Test func theKeyringMeetsTheContract() async throws {
            let schema = TestKeyring.freshSchema("contract")
            let locks = TemporaryDirectory.url("authkit-keyring-locks")
            defer { try? FileManager.default.removeItem(at: locks) }
            try await checkCredentialStoreContract(
                SecretServiceCredentialStore(schema: schema, lockDirectory: locks),
                sameData: SecretServiceCredentialStore(schema: schema, lockDirectory: locks))
            try await Self.empty(SecretServiceCredentialStore(schema: schema, lockDirectory: locks))
        }

        /// What is kept comes back whole: the refresh token, the expiry,
        /// members the provider sent, a DPoP key; and items of other schemas
        /// (another app's) are neither listed nor replaced.
        @Test func aCredentialComesBackWholeAndAppsAreApart() async throws {
            let locks = TemporaryDirectory.url("authkit-keyring-locks")
            defer { try? FileManager.default.removeItem(at: locks) }
            let mine = SecretServiceCredentialStore(schema: TestKeyring.freshSchema("mine"), lockDirectory: locks)
            let theirs = SecretServiceCredentialStore(schema: TestKeyring.freshSchema("theirs"), lockDirectory: locks)
            let expiry = Date(timeIntervalSince1970: 1_900_000_000)
            let credential = Credential(
                providerID: "qiita", label: "work", accessToken: "at-é-☃", refreshToken: "rt-1", expiresAt: expiry,
                scopes: ["read_qiita"], rawFields: ["id_token": .string("x.y.z")])
            try await mine.save(credential)
            try await theirs.save(Credential(providerID: "qiita", label: "work", accessToken: "other app"))
            let read = try #require(await mine.credential(for: credential.key))
            #expect(read.accessToken == "at-é-☃" && read.refreshToken == "rt-1" && read.expiresAt == expiry)
            #expect(read.scopes == ["read_qiita"] && read.rawFields["id_token"] == .string("x.y.z"))
            #expect(try await mine.allCredentials().map(\.accessToken) == ["at-é-☃"])
            #expect(try await theirs.allCredentials().map(\.accessToken) == ["other app"])
            try await Self.empty(mine)
            try await Self.empty(theirs)
        }

        /// A label with a NUL is refused: the keyring's attributes are C
        /// strings, and `work\u{0}x` was stored as, replacing, `work`.
        @Test func aLabelWithANulIsRefusedNotCutShort() async throws {
            let locks = TemporaryDirectory.url("authkit-keyring-locks")
            defer { try? FileManager.default.removeItem(at: locks) }
            let store = SecretServiceCredentialStore(schema: TestKeyring.freshSchema("nul"), lockDirectory: locks)
            try await store.save(Credential(providerID: "qiita", label: "work", accessToken: "the-real-work"))
            await #expect {
                try await store.save(Credential(providerID: "qiita", label: "work\u{0}x", accessToken: "impostor"))
            } throws: { error in
                guard case .store(_, let reason)? = error.authKitReason else { return false }
                return reason.kind == .invalidContents && reason.detail.contains("NUL")
            }
            let work = CredentialKey(providerID: "qiita", label: "work")
            #expect(try await store.credential(for: work)?.accessToken == "the-real-work")
            try await Self.empty(store)
        }

        /// A keyring daemon that stops answering once the session is open
        /// (as one waiting on an unlock prompt nobody sees): each call ends
        /// at the store's time limit, saying so (a lookup is not taken for
        /// "nothing stored"), and the store answers again when the daemon
        /// does. The run's shared daemon is stopped for about a second; the
        /// other keyring tests wait for it meanwhile.
        @Test func aCallThatIsNotAnsweredEndsAtItsTimeLimit() async throws {
            let locks = TemporaryDirectory.url("authkit-keyring-locks")
            defer { try? FileManager.default.removeItem(at: locks) }
            let store = SecretServiceCredentialStore(
                schema: TestKeyring.freshSchema("silent"), lockDirectory: locks, callTimeout: .seconds(1))
            let credential = Credential(providerID: "qiita", label: "silent", accessToken: "silent-token")
            try await store.save(credential)
            let pid = try #require(try await TestKeyring.daemonPID())
            let name = try String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8)
            try #require(name.hasPrefix("gnome-keyring"), "pid \(pid) is '\(name)'")
            try #require(kill(pid, SIGSTOP) == 0)
            defer { kill(pid, SIGCONT) }
            await #expect {
                _ = try await store.credential(for: credential.key)
            } throws: { error in
                guard case .store(_, let reason)? = error.authKitReason else { return false }
                return reason.kind == .inaccessible
                    && reason.detail.contains("the Secret Service did not answer within 1 s")
            }
            kill(pid, SIGCONT)
            #expect(try await store.credential(for: credential.key)?.accessToken == "silent-token")
            try await Self.empty(store)
        }

        static func empty(_ store: SecretServiceCredentialStore) async throws {
            for credential in try await store.allCredentials() { try await store.remove(credential.key) }
            #expect(try await store.allCredentials().isEmpty)
        }
    }
    /// A call whose C side does not return at its own limit (libsecret
    /// waits for a hung daemon to end a dismissed unlock prompt, whatever
    /// the cancellation) is given up: the caller goes on with the give-up
    /// value at the deadline, the thread left to its call. It held the
    /// command without end. No keyring needed: the body stands for the call.
    @Suite struct SecretServiceGiveUpTests {
        @Test func aCallThatNeverReturnsIsGivenUpAtTheDeadline() async {
            let started = ContinuousClock.now
            let value = await SecretServiceCredentialStore.blocking(
                giveUpAfter: .milliseconds(200), givingUp: "given up"
            ) { _ in
                sleep(30)
                return "answered"
            }
            #expect(value == "given up")
            // Far from the call's 30 s: a loaded machine's timers run late.
            #expect(ContinuousClock.now - started < .seconds(15), "waited for the call")
            let answered = await SecretServiceCredentialStore.blocking(
                giveUpAfter: .seconds(5), givingUp: "given up"
            ) { _ in "answered" }
            #expect(answered == "answered")
        }
    }

    /// Where the keyring's refresh locks are: the user's, as the keyring
    /// is, whatever AuthKit directory a process sees. No keyring needed:
    /// the locks are files.
    @Suite struct SecretServiceLockTests {
        /// Two processes of one user with other `$AUTHKIT_HOME`s (a shell, a
        /// timer) share one keyring item: one refresh at a time. With the
        /// locks in each one's AuthKit directory, both refreshed at once.
        @Test func processesWithOtherHomesShareTheItemsRefreshLock() async throws {
            let runtime = TemporaryDirectory.url("authkit-runtime")
            try FileManager.default.createDirectory(at: runtime, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: runtime) }
            let (shell, timer) = (
                SecretServiceCredentialStore(environment: [
                    "AUTHKIT_HOME": "/nonexistent/a", "XDG_RUNTIME_DIR": runtime.path,
                ]),
                SecretServiceCredentialStore(environment: [
                    "AUTHKIT_HOME": "/nonexistent/b", "XDG_RUNTIME_DIR": runtime.path,
                ])
            )
            #expect(shell.lockDirectory.path == runtime.appendingPathComponent("authkit").path)
            let key = CredentialKey(providerID: "qiita", label: "work")
            // Held as a removal holds them: a refresh's lock first asks the
            // keyring whether it could save, and this test runs without one.
            await #expect {
                try await FileCredentialStore.$removing.withValue(true) {
                    try await shell.withRefreshLock(for: key, timeout: .seconds(5)) {
                        try await timer.withRefreshLock(for: key, timeout: .milliseconds(300)) {}
                    }
                }
            } throws: { error in
                guard case .store(_, let reason)? = error.authKitReason else { return false }
                return reason.kind == .busy
            }
        }

        /// A lock directory others can write in is refused before any lock
        /// is taken, naming it and the fix: they could remove a held lock
        /// file, and two refreshes would run at once. Made private, it is used.
        @Test func aLockDirectoryOthersCanWriteInIsRefused() async throws {
            let locks = TemporaryDirectory.url("authkit-shared-locks")
            try FileManager.default.createDirectory(at: locks, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: locks) }
            chmod(locks.path, 0o777)
            let store = SecretServiceCredentialStore(schema: TestKeyring.freshSchema("shared"), lockDirectory: locks)
            let key = CredentialKey(providerID: "qiita", label: "work")
            #expect {
                _ = try store.beginSignIn(for: key)
            } throws: { error in
                guard case .store(let path, let reason)? = error.authKitReason else { return false }
                return path == locks.path && reason.kind == .writableByOthers
                    && reason.detail.contains("chmod go-w") && reason.detail.contains("no lock is taken there")
            }
            await #expect(throws: AuthKitError.self) {
                try await FileCredentialStore.$removing.withValue(true) {
                    try await store.withRefreshLock(for: key, timeout: .seconds(1)) {}
                }
            }
            #expect(try FileManager.default.contentsOfDirectory(atPath: locks.path).isEmpty, "a lock file was made")
            chmod(locks.path, 0o700)
            _ = try store.beginSignIn(for: key)
        }

        /// `$XDG_RUNTIME_DIR` when it is the user's own directory; else the
        /// user's `/run/user/<uid>` when there (a cron job has no variable,
        /// the directory is the same); else, with neither (a container), the
        /// AuthKit directory.
        @Test func theRuntimeDirectoryIsFoundWithoutItsVariable() throws {
            let runtime = TemporaryDirectory.url("authkit-run-user")
            try FileManager.default.createDirectory(at: runtime, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: runtime) }
            let home = ["AUTHKIT_HOME": "/srv/authkit"]
            func chosen(_ environment: [String: String], _ userRuntime: String) -> String {
                SecretServiceCredentialStore.defaultLockDirectory(
                    environment: environment, userRuntimeDirectory: userRuntime
                ).path
            }
            let variable = TemporaryDirectory.url("authkit-xdg-runtime")
            try FileManager.default.createDirectory(at: variable, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: variable) }
            #expect(chosen(home, runtime.path) == runtime.appendingPathComponent("authkit").path)
            #expect(
                chosen(home.merging(["XDG_RUNTIME_DIR": variable.path]) { $1 }, runtime.path)
                    == variable.appendingPathComponent("authkit").path)
            // One gone (a session outliving its logout) or not the user's is passed over.
            #expect(
                chosen(home.merging(["XDG_RUNTIME_DIR": "/run/user/4242"]) { $1 }, runtime.path)
                    == runtime.appendingPathComponent("authkit").path)
            if geteuid() == 0 {
                try FileManager.default.setAttributes([.ownerAccountID: 4242], ofItemAtPath: variable.path)
                #expect(
                    chosen(home.merging(["XDG_RUNTIME_DIR": variable.path]) { $1 }, "/nonexistent") == "/srv/authkit")
            }
            #expect(chosen(home.merging(["XDG_RUNTIME_DIR": "run"]) { $1 }, "/nonexistent") == "/srv/authkit")
            #expect(chosen(home, "/nonexistent") == "/srv/authkit")
        }
    }
#endif
