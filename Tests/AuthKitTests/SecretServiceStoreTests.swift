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
                guard case .store(_, let reason)? = error as? AuthKitError else { return false }
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
#endif
