import AuthKit
import AuthKitSandbox
import AuthKitServer
import AuthKitTestSupport
import Crypto
import Foundation
import Logging
import PostgresNIO
import Subprocess
import SystemPackage
import Testing

@testable import AuthKitPostgres

/// The test database, when there is one.
enum TestDatabase {
    static let url = ProcessInfo.processInfo.environment["AUTHKIT_TEST_DATABASE_URL"].flatMap { URL(string: $0) }
    static let required = ProcessInfo.processInfo.environment["AUTHKIT_REQUIRE_POSTGRES"] == "1"
}

/// AuthKitPostgres against a real PostgreSQL: the throwaway cluster
/// `.ci/run` starts (`scripts/throwaway-postgres`), named by
/// `AUTHKIT_TEST_DATABASE_URL`. Without it these tests are skipped, unless
/// `AUTHKIT_REQUIRE_POSTGRES=1` (CI) makes its absence a failure.
@Suite(.serialized, .enabled(if: TestDatabase.url != nil || TestDatabase.required))
struct PostgresStoreTests {
    static var databaseURL: URL? { TestDatabase.url }
    static let encryption = try! TokenEncryption(keys: [("k1", SymmetricKey(size: .bits256))])

    /// A client of the test database (each its own pool, as another
    /// machine's would be), running for the duration of `body`, on a
    /// migrated schema of its own (so tests run side by side).
    static func withStore<Result: Sendable>(
        schema: String, clients count: Int = 1, encryption: TokenEncryption = encryption,
        maximumConnections: Int? = nil, lockConnections: Int = 10, pendingSignInLimit: Int = 100_000,
        sessionsPerUser: Int = 100, startup: [(String, String)] = [], operationTimeout: Duration = .seconds(10),
        _ body: ([PostgresStore]) async throws -> Result
    ) async throws -> Result {
        let url = try #require(
            databaseURL, "AUTHKIT_TEST_DATABASE_URL is not set: run scripts/throwaway-postgres start")
        var configuration = PostgresClient.Configuration(
            host: url.host ?? "127.0.0.1", port: url.port ?? 5432, username: url.user ?? "postgres",
            password: url.password, database: String(url.path.dropFirst()), tls: .disable)
        configuration.options.additionalStartupParameters = [("search_path", schema)] + startup
        configuration.options.connectTimeout = Duration.seconds(3)
        if let maximumConnections {
            configuration.options.maximumConnections = maximumConnections
            configuration.options.minimumConnections = 0
        }
        let setup = PostgresClient(
            configuration: PostgresClient.Configuration(
                host: url.host ?? "127.0.0.1", port: url.port ?? 5432, username: url.user ?? "postgres",
                password: url.password, database: String(url.path.dropFirst()), tls: .disable))
        let clients = (0..<count).map { _ in PostgresClient(configuration: configuration) }
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await setup.run() }
            for client in clients { group.addTask { await client.run() } }
            defer { group.cancelAll() }
            try await setup.run("DROP SCHEMA IF EXISTS \(unescaped: schema) CASCADE", logger: Logger(label: "setup"))
            try await setup.run("CREATE SCHEMA \(unescaped: schema)", logger: Logger(label: "setup"))
            let stores = clients.map {
                PostgresStore(
                    client: $0, encryption: encryption, display: "postgresql://test/\(schema)",
                    operationTimeout: operationTimeout, lockConnections: lockConnections,
                    pendingSignInLimit: pendingSignInLimit,
                    sessionsPerUser: sessionsPerUser)
            }
            // Each instance migrates at start; the second finds it done.
            for store in stores { try await store.migrate() }
            return try await body(stores)
        }
    }

    /// A credential of `label` saved in `store` (access token "old"), and its
    /// renewal as a refresh that rotated the refresh token would bring.
    static func storedAndRenewed(
        _ label: String, in store: PostgresStore, access: String? = nil, refresh: String = "rotated"
    ) async throws -> (stored: Credential, renewed: Credential) {
        let stored = credential(label, access: "old")
        try await store.save(stored)
        var renewed = stored
        if let access { renewed.accessToken = access }
        renewed.refreshToken = refresh
        return (stored, renewed)
    }

    static func credential(_ label: String, access: String = "secret-access-token") -> Credential {
        Credential(
            providerID: "qiita", label: label, accessToken: access, refreshToken: "secret-refresh",
            expiresAt: Date(timeIntervalSinceNow: 3600))
    }

    /// A table changed outside AuthKit (a column emptied by hand) is the
    /// data's problem, said by column: it was "the database did not
    /// answer", which a web app answers with 503 and retries for ever.
    @Test func aColumnChangedOutsideAuthKitIsInvalidContentsNotAnOutage() async throws {
        try await Self.withStore(schema: "reshaped") { stores in
            let store = stores[0]
            try await store.save(Self.credential("a"))
            try await store.client.run(
                "ALTER TABLE authkit_credentials ALTER COLUMN key_id DROP NOT NULL", logger: Logger(label: "test"))
            try await store.client.run("UPDATE authkit_credentials SET key_id = NULL", logger: Logger(label: "test"))
            await #expect {
                _ = try await store.credential(for: CredentialKey(providerID: "qiita", label: "a"))
            } throws: { error in
                guard case .store(_, let reason)? = error.authKitReason else { return false }
                return reason.kind == .invalidContents && reason.detail.contains("key_id")
            }
            // So where a sign-in without a refresh token reads the row in its
            // lock's transaction: PostgresNIO's own error reached the web app.
            var signIn = Self.credential("a")
            signIn.refreshToken = nil
            await #expect {
                try await store.saveSignIn(signIn)
            } throws: { error in
                guard case .store(_, let reason)? = error.authKitReason else { return false }
                return reason.kind == .invalidContents && reason.detail.contains("key_id")
            }
        }
    }

    @Test func theStoreKeepsCredentialsSealedAndWhole() async throws {
        try await Self.withStore(schema: "contract") { stores in
            let store = stores[0]
            #expect(try await store.credential(for: CredentialKey(providerID: "qiita", label: "a")) == nil)
            try await store.save(Self.credential("a"))
            try await store.save(Self.credential("b", access: "other-token"))
            #expect(
                try await store.credential(for: CredentialKey(providerID: "qiita", label: "a"))?.accessToken
                    == "secret-access-token")
            #expect(try await store.allCredentials().map(\.label) == ["a", "b"])
            // Replaced, not added.
            try await store.save(Self.credential("a", access: "renewed"))
            #expect(try await store.allCredentials().count == 2)
            // At rest: no secret in the clear anywhere in a row (its sealed
            // bytes as text, and every column): tokens, a sign-in's PKCE
            // verifier, a session's CSRF token.
            let pending = PendingAuthorization(
                providerID: "google", state: "state-at-rest", codeVerifier: "verifier-at-rest",
                redirectURI: "https://app.example/cb", expectedIssuer: nil, issuerRequired: false, scopes: [],
                createdAt: Date())
            try await store.insert(
                SignInAttempt(
                    providerID: "google", pending: pending, returnTo: "/", browserBinding: "binding-at-rest",
                    expiresAt: Date(timeIntervalSinceNow: 600)), id: "attempt")
            try await store.insert(
                WebSession(
                    user: SignedInUser(providerID: "google", subject: "1", issuer: nil, displayName: nil),
                    csrfToken: "csrf-at-rest", createdAt: Date(), expiresAt: Date(timeIntervalSinceNow: 600)),
                id: "session")
            let secrets = [
                "renewed", "secret-refresh", "other-token", "verifier-at-rest", "state-at-rest", "binding-at-rest",
                "csrf-at-rest",
            ]
            var rowsRead = 0
            for table in ["authkit_credentials", "authkit_sign_in_attempts", "authkit_sessions"] {
                let rows = try await store.client.query(
                    "SELECT encode(sealed, 'escape') || ' ' || t::text FROM \(unescaped: table) t",
                    logger: Logger(label: "test"))
                for try await (text) in rows.decode(String.self) {
                    rowsRead += 1
                    #expect(!secrets.contains { text.contains($0) }, "\(table) holds a secret in the clear")
                }
            }
            #expect(rowsRead == 4)
            // A sealed value moved to another row does not open there.
            try await store.client.run(
                "UPDATE authkit_credentials SET sealed = (SELECT sealed FROM authkit_credentials WHERE label = 'a') WHERE label = 'b'",
                logger: Logger(label: "test"))
            await #expect {
                _ = try await store.credential(for: CredentialKey(providerID: "qiita", label: "b"))
            } throws: { error in
                guard case .store(_, let reason)? = error.authKitReason else { return false }
                return "\(reason)".contains("altered or moved") && !"\(reason)".contains("renewed")
            }
            #expect(try await store.remove(CredentialKey(providerID: "qiita", label: "a"))?.accessToken == "renewed")
            #expect(try await store.credential(for: CredentialKey(providerID: "qiita", label: "a")) == nil)
        }
    }

    /// The contract every store meets, with two stores (two pools, as two
    /// machines) over one database.
    @Test func theStoreMeetsTheContract() async throws {
        try await Self.withStore(schema: "store_contract", clients: 2) { stores in
            try await checkCredentialStoreContract(stores[0], sameData: stores[1])
        }
    }

    /// Keys rotate: a store given a new key first still opens what the old
    /// one sealed, and seals anew with the new one on the next save.
    @Test func keysRotate() async throws {
        let old = SymmetricKey(size: .bits256)
        let new = SymmetricKey(size: .bits256)
        try await Self.withStore(schema: "rotation", encryption: try TokenEncryption(keys: [("old", old)])) { stores in
            try await stores[0].save(Self.credential("a"))
            let rotated = PostgresStore(
                client: stores[0].client, encryption: try TokenEncryption(keys: [("new", new), ("old", old)]),
                display: "test")
            let read = try #require(try await rotated.credential(for: CredentialKey(providerID: "qiita", label: "a")))
            try await rotated.save(read)
            for try await (keyID) in try await stores[0].client.query("SELECT key_id FROM authkit_credentials").decode(
                String.self)
            {
                #expect(keyID == "new")
            }
            // Without the key a row was sealed with: a clear error, no guess.
            let forgetful = PostgresStore(
                client: stores[0].client, encryption: try TokenEncryption(keys: [("old", old)]), display: "test")
            await #expect {
                _ = try await forgetful.credential(for: CredentialKey(providerID: "qiita", label: "a"))
            } throws: { error in "\(error)".contains("'new', which this process was not given") }
        }
    }

    /// A rotation ends: `reseal()` seals every credential (across more than
    /// one batch), pending sign-in and live session under the new key, so
    /// a store given the new key alone reads them all; an expired session
    /// is left to the sweeps, and a second pass finds nothing to do.
    @Test func resealingLeavesEveryRowUnderTheNewKey() async throws {
        let old = SymmetricKey(size: .bits256)
        let new = SymmetricKey(size: .bits256)
        try await Self.withStore(schema: "reseal", encryption: try TokenEncryption(keys: [("old", old)])) { stores in
            let credentials = PostgresStore.resealBatch + 20
            for index in 0..<credentials {
                try await stores[0].save(Self.credential("user-\(index)", access: "at-\(index)"))
            }
            let user = SignedInUser(providerID: "google", subject: "1", issuer: nil, displayName: nil)
            try await stores[0].insert(
                WebSession(
                    user: user, csrfToken: "csrf", createdAt: Date(), expiresAt: Date(timeIntervalSinceNow: 600)),
                id: "live")
            try await stores[0].insert(
                WebSession(
                    user: user, csrfToken: "gone", createdAt: Date(timeIntervalSinceNow: -9000),
                    expiresAt: Date(timeIntervalSinceNow: -7200)),
                id: "expired")
            let pending = PendingAuthorization(
                providerID: "google", state: "s", codeVerifier: "v", redirectURI: "https://app.example/cb",
                expectedIssuer: nil, issuerRequired: false, scopes: [], createdAt: Date())
            try await stores[0].insert(
                SignInAttempt(
                    providerID: "google", pending: pending, returnTo: "/", browserBinding: "b",
                    expiresAt: Date(timeIntervalSinceNow: 600)),
                id: "attempt")

            let rotated = PostgresStore(
                client: stores[0].client, encryption: try TokenEncryption(keys: [("new", new), ("old", old)]),
                display: "test")
            #expect(try await rotated.rowsPerKey() == ["old": credentials + 2])
            #expect(try await rotated.reseal() == credentials + 2)
            #expect(try await rotated.rowsPerKey() == ["new": credentials + 2])
            #expect(try await rotated.reseal() == 0)

            let newOnly = PostgresStore(
                client: stores[0].client, encryption: try TokenEncryption(keys: [("new", new)]), display: "test")
            let all = try await newOnly.allCredentials()
            #expect(all.count == credentials)
            #expect(
                all.allSatisfy {
                    $0.accessToken == "at-\($0.label!.dropFirst(5))" && $0.refreshToken == "secret-refresh"
                })
            #expect(try await newOnly.session(id: "live", now: Date())?.csrfToken == "csrf")
            #expect(try await newOnly.attempt(id: "attempt", now: Date())?.browserBinding == "b")
        }
    }

    /// What a rotation cannot finish, it says, after doing the rest: a
    /// credential under a key this process was not given, one that does not
    /// open with its key (moved from another row), and a row sealed under
    /// the old key while it ran (an instance not yet given the new key,
    /// played by a trigger). Nothing it could not open is changed.
    @Test func resealingSaysWhatItCouldNotFinish() async throws {
        let old = SymmetricKey(size: .bits256)
        let new = SymmetricKey(size: .bits256)
        try await Self.withStore(schema: "reseal_left", encryption: try TokenEncryption(keys: [("old", old)])) {
            stores in
            let logger = Logger(label: "test")
            for label in ["a", "b", "c"] { try await stores[0].save(Self.credential(label)) }
            let rotated = PostgresStore(
                client: stores[0].client, encryption: try TokenEncryption(keys: [("new", new), ("old", old)]),
                display: "test")
            // Not given `old`: nothing opens, nothing changes.
            let forgetful = PostgresStore(
                client: stores[0].client, encryption: try TokenEncryption(keys: [("new", new)]), display: "test")
            await #expect {
                try await forgetful.reseal()
            } throws: { error in
                guard case .store(_, let reason)? = error.authKitReason, reason.kind == .invalidContents else {
                    return false
                }
                return reason.detail.contains("3 credentials did not open")
                    && reason.detail.contains("3 under 'old', which this process was not given")
            }
            #expect(try await rotated.rowsPerKey() == ["old": 3])

            // "b" holds "a"'s sealed value: it does not open as "b".
            try await stores[0].client.run(
                "UPDATE authkit_credentials SET sealed = (SELECT sealed FROM authkit_credentials WHERE label = 'a') WHERE label = 'b'",
                logger: logger)
            await #expect {
                try await rotated.reseal()
            } throws: { error in
                guard case .store(_, let reason)? = error.authKitReason, reason.kind == .invalidContents else {
                    return false
                }
                return reason.detail.contains("2 rows sealed again")
                    && reason.detail.contains("1 under 'old' altered or moved")
            }
            #expect(try await rotated.rowsPerKey() == ["new": 2, "old": 1])
            try await stores[0].remove(CredentialKey(providerID: "qiita", label: "b"))

            // An older instance saves an account (sealed under "old") while
            // the pass runs, before its cursor: made by `stores[0]`, kept
            // aside, and put back by a trigger at the pass's first write.
            try await stores[0].save(Self.credential("aa-late", access: "late-token"))
            try await stores[0].save(Self.credential("d"))
            try await stores[0].client.run(
                "CREATE TABLE late_row AS SELECT * FROM authkit_credentials WHERE label = 'aa-late'", logger: logger)
            try await stores[0].client.run("DELETE FROM authkit_credentials WHERE label = 'aa-late'", logger: logger)
            try await stores[0].client.run(
                """
                CREATE FUNCTION put_back_late_row() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                    INSERT INTO authkit_credentials SELECT * FROM late_row ON CONFLICT DO NOTHING;
                    RETURN NULL;
                END $$
                """, logger: logger)
            try await stores[0].client.run(
                """
                CREATE TRIGGER late AFTER UPDATE ON authkit_credentials
                FOR EACH STATEMENT EXECUTE FUNCTION put_back_late_row()
                """, logger: logger)
            await #expect {
                try await rotated.reseal()
            } throws: { error in
                guard case .store(_, let reason)? = error.authKitReason, reason.kind == .busy else { return false }
                return reason.detail.contains("1 row sealed again") && reason.detail.contains("1 under 'old' still")
            }
            try await stores[0].client.run("DROP TRIGGER late ON authkit_credentials", logger: logger)
            // A credential whose refresh lock another holds is left: that
            // refresh finds the row by the bytes it read, should its
            // connection be lost, and a rotated token would be refused.
            try await stores[0].save(Self.credential("e"))
            let (release, holder) = try await Self.holdRefreshLock(of: "e", in: stores[0])
            await #expect {
                try await rotated.reseal()
            } throws: { error in
                guard case .store(_, let reason)? = error.authKitReason, reason.kind == .busy else { return false }
                return reason.detail.contains("1 row sealed again") && reason.detail.contains("1 under 'old' still")
            }
            release.finish()
            try await holder.value
            #expect(try await rotated.reseal() == 1)
            #expect(try await rotated.rowsPerKey() == ["new": 5])
            #expect(
                try await forgetful.credential(for: CredentialKey(providerID: "qiita", label: "aa-late"))?.accessToken
                    == "late-token")
        }
    }

    /// A sign-in attempt is taken once, however many callbacks race for it.
    @Test func anAttemptIsTakenOnce() async throws {
        try await Self.withStore(schema: "attempts", clients: 2) { stores in
            let pending = PendingAuthorization(
                providerID: "google", state: "s", codeVerifier: "verifier-secret",
                redirectURI: "https://app.example/cb",
                expectedIssuer: nil, issuerRequired: false, scopes: ["openid"], createdAt: Date())
            let attempt = SignInAttempt(
                providerID: "google", pending: pending, returnTo: "/", browserBinding: "b",
                expiresAt: Date(timeIntervalSinceNow: 600))
            try await stores[0].insert(attempt, id: "a1")
            // Read in place: still there to be taken.
            #expect(try await stores[1].attempt(id: "a1", now: Date())?.browserBinding == "b")
            #expect(try await stores[1].attempt(id: "a1", now: Date())?.browserBinding == "b")
            let taken = try await withThrowingTaskGroup(of: SignInAttempt?.self) { group in
                for index in 0..<12 { group.addTask { try await stores[index % 2].takeAttempt(id: "a1", now: Date()) } }
                return try await group.reduce(into: [SignInAttempt]()) { if let found = $1 { $0.append(found) } }
            }
            #expect(taken.count == 1 && taken.first?.pending.codeVerifier == "verifier-secret")
            // Expired: not given out.
            var old = attempt
            old.expiresAt = Date(timeIntervalSinceNow: -1)
            try await stores[0].insert(old, id: "a2")
            #expect(try await stores[1].takeAttempt(id: "a2", now: Date()) == nil)

            // An instance whose clock is 15 minutes behind the database's
            // writes an expiry 5 minutes in the database's past: a sweep by
            // the next insert (another instance's) leaves it, and the
            // instance, judging by its own clock, still takes it.
            let behind = Date(timeIntervalSinceNow: -900)
            var skewed = attempt
            skewed.expiresAt = behind.addingTimeInterval(600)
            try await stores[0].insert(skewed, id: "a3")
            try await stores[1].insert(attempt, id: "a4")
            #expect(
                try await stores[0].takeAttempt(id: "a3", now: behind)?.browserBinding == "b",
                "swept by the database's clock")
        }
    }

    /// Each refresh lock holds a pooled connection while the provider
    /// answers: with a slow provider and many due accounts, they took every
    /// connection and every page's session read timed out. At most
    /// A task holding `label`'s refresh lock in `store` (its connection with
    /// it) until `release` finishes; returned once it holds it.
    static func holdRefreshLock(of label: String, in store: PostgresStore) async throws -> (
        release: AsyncStream<Void>.Continuation, holder: Task<Void, any Error>
    ) {
        let release = AsyncStream<Void>.makeStream()
        let holding = LockedValue(false)
        let holder = Task {
            try await store.withRefreshLock(
                for: CredentialKey(providerID: "qiita", label: label), timeout: .seconds(30)
            ) {
                holding.withLock { $0 = true }
                for await _ in release.stream {}
            }
        }
        while !holding.current { try await Task.sleep(for: .milliseconds(5)) }
        return (release.continuation, holder)
    }

    /// `lockConnections` are lent to locks; another account's refresh waits
    /// for one within its timeout (then `busy`), and sessions are read meanwhile.
    @Test func refreshLocksLeaveConnectionsForTheRestOfTheSite() async throws {
        try await Self.withStore(schema: "lent", maximumConnections: 4, lockConnections: 1) { stores in
            let store = stores[0]
            let (release, slow) = try await Self.holdRefreshLock(of: "a", in: store)
            let started = ContinuousClock.now
            await #expect {
                try await store.withRefreshLock(
                    for: CredentialKey(providerID: "qiita", label: "b"), timeout: .seconds(1)
                ) {}
            } throws: { error in
                guard case .store(let path, .busy)? = error.authKitReason else { return false }
                return path.contains("lent to refresh locks")
            }
            #expect(ContinuousClock.now - started < .seconds(25), "the wait was not bounded by its timeout")
            #expect(try await store.session(id: "none", now: Date()) == nil)
            release.finish()
            try await slow.value
            try await store.withRefreshLock(for: CredentialKey(providerID: "qiita", label: "b"), timeout: .seconds(5)) {
            }
        }
    }

    /// A sign-in's save waits for a pooled connection no longer than its
    /// lock timeout: with every connection held (here the pool's only one,
    /// by a refresh lock), it is refused within it, naming the pool, not
    /// left queued until the holder lets go.
    @Test func aSignInsSaveWaitsForAConnectionNoLongerThanItsLockTimeout() async throws {
        try await Self.withStore(schema: "lease", maximumConnections: 1, operationTimeout: .seconds(2)) { stores in
            let store = stores[0]
            let (release, slow) = try await Self.holdRefreshLock(of: "a", in: store)
            // Let go in 60 s whatever happens: a save that waits for the
            // holder then fails the time check below rather than hanging.
            let letGo = Task {
                try? await Task.sleep(for: .seconds(60))
                release.finish()
            }
            defer { letGo.cancel() }
            let started = ContinuousClock.now
            await #expect {
                try await store.saveSignIn(Self.credential("b"), lockTimeout: .seconds(1))
            } throws: { error in
                guard case .store(_, let reason)? = error.authKitReason else { return false }
                return reason.kind == .inaccessible && reason.detail.contains("no connection to the database came")
            }
            // A hang check (the save waited for the holder, with no end), not a speed test.
            #expect(ContinuousClock.now - started < .seconds(25), "the wait was not bounded by the lock timeout")
            // With the default lock timeout (a minute, what a web sign-in
            // passes), the connection is waited for no longer than a
            // statement (operationTimeout, 2 s here): a browser waits on it.
            let defaulted = ContinuousClock.now
            await #expect {
                try await store.saveSignIn(Self.credential("b"))
            } throws: { error in
                guard case .store(_, let reason)? = error.authKitReason else { return false }
                return reason.kind == .inaccessible && reason.detail.contains("no connection to the database came")
            }
            #expect(
                ContinuousClock.now - defaulted < .seconds(25), "the wait was the lock's minute, not the statement's")
            release.finish()
            try await slow.value
            // A timeout set far off to mean none is no limit, not a trap
            // (PostgreSQL's lock_timeout is an int of milliseconds).
            try await store.saveSignIn(Self.credential("b"), lockTimeout: .seconds(1 << 60))
            #expect(try await store.credential(for: CredentialKey(providerID: "qiita", label: "b")) != nil)
        }
    }

    /// A `statement_timeout` the database's administrator set can end the
    /// wait for another instance's lock before `lock_timeout` does: that is
    /// the lock being busy too (it read as the database being unreachable).
    @Test func aStatementTimeoutWhileWaitingForTheLockIsBusy() async throws {
        try await Self.withStore(schema: "statement_timeout", clients: 2, startup: [("statement_timeout", "500")]) {
            stores in
            let key = CredentialKey(providerID: "qiita", label: "a")
            let (release, holder) = try await Self.holdRefreshLock(of: "a", in: stores[0])
            await #expect {
                try await stores[1].withRefreshLock(for: key, timeout: .seconds(10)) {}
            } throws: { error in
                guard case .store(_, .busy)? = error.authKitReason else { return false }
                return true
            }
            release.finish()
            try await holder.value
        }
    }

    /// After a flood of started, never finished sign-ins, each insert sweeps
    /// a bounded number of expired rows (one DELETE of them all ran past the
    /// operation timeout, and failed every insert meanwhile): the backlog
    /// shrinks with the inserts that follow, and live rows stay.
    @Test func expiredRowsAreSweptABatchAtATime() async throws {
        try await Self.withStore(schema: "sweep") { stores in
            let logger = Logger(label: "test")
            try await stores[0].client.run(
                """
                INSERT INTO authkit_sign_in_attempts (id, key_id, sealed, expires_at)
                SELECT 'old-' || n, 'k1', '\\x00'::bytea, now() - interval '2 hours' FROM generate_series(1, 250) AS n
                """, logger: logger)
            func expired() async throws -> Int {
                let rows = try await stores[0].client.query(
                    "SELECT count(*) FROM authkit_sign_in_attempts WHERE id LIKE 'old-%'", logger: logger)
                for try await count in rows.decode(Int.self) { return count }
                return -1
            }
            let pending = PendingAuthorization(
                providerID: "google", state: "s", codeVerifier: "v", redirectURI: "https://app.example/cb",
                expectedIssuer: nil, issuerRequired: false, scopes: [], createdAt: Date())
            let attempt = SignInAttempt(
                providerID: "google", pending: pending, returnTo: "/", browserBinding: "b",
                expiresAt: Date(timeIntervalSinceNow: 600))
            try await stores[0].insert(attempt, id: "new-1")
            #expect(try await expired() == 250 - PostgresStore.sweptPerInsert)
            for index in 2...4 { try await stores[0].insert(attempt, id: "new-\(index)") }
            #expect(try await expired() == 0)
            #expect(try await stores[0].attempt(id: "new-1", now: Date())?.browserBinding == "b")
        }
    }

    /// A flood of started, never finished sign-ins on two instances keeps
    /// at most the limit (and what one trim interval per instance adds) of
    /// live rows: those that expire last stay, the first go. Without the
    /// bound every row stayed for its lifetime and the sweeps' hour.
    @Test func pendingSignInsAreKeptToTheLimit() async throws {
        try await Self.withStore(schema: "attempt_limit", clients: 2, pendingSignInLimit: 20) { stores in
            let pending = PendingAuthorization(
                providerID: "google", state: "s", codeVerifier: "v", redirectURI: "https://app.example/cb",
                expectedIssuer: nil, issuerRequired: false, scopes: [], createdAt: Date())
            let start = Date()
            for index in 0..<60 {
                let attempt = SignInAttempt(
                    providerID: "google", pending: pending, returnTo: "/", browserBinding: "b\(index)",
                    expiresAt: start.addingTimeInterval(600 + Double(index)))
                try await stores[index % 2].insert(attempt, id: "flood-\(index)")
            }
            let rows = try await stores[0].client.query(
                "SELECT count(*) FROM authkit_sign_in_attempts", logger: Logger(label: "test"))
            var count = -1
            for try await found in rows.decode(Int.self) { count = found }
            let slack = 2 * PostgresStore.trimInterval(for: 20)
            #expect((20...20 + slack).contains(count), "\(count) pending sign-ins kept; the limit is 20")
            for index in 40..<60 {
                #expect(try await stores[1].attempt(id: "flood-\(index)", now: Date())?.browserBinding == "b\(index)")
            }
            for index in 0..<20 {
                #expect(try await stores[0].attempt(id: "flood-\(index)", now: Date()) == nil)
            }
        }
    }

    /// 24 requests on two "machines" (two pools) for one user whose token
    /// expired: every one answered, one refresh at the provider, whose
    /// rotating refresh token is therefore never reused.
    /// Under every isolation level a database (or its role) may default
    /// to: under repeatable read or serializable, the instance that waited
    /// for the lock read the credential as it was before the first one's
    /// renewal (its snapshot taken before the lock was granted), sent the
    /// spent refresh token, and its save failed.
    @Test(arguments: ["read committed", "repeatable read", "serializable"])
    func oneRefreshAcrossMachines(isolation: String) async throws {
        let qiita = try ProviderCatalog(includeBundled: true, directories: []).descriptor(id: "qiita")
        try await Sandbox.with(emulating: qiita, options: SandboxOptions(approves: true)) { sandbox in
            try await Self.withStore(
                schema: "refresh_" + isolation.replacingOccurrences(of: " ", with: "_"), clients: 2,
                startup: [("default_transaction_isolation", isolation)]
            ) { stores in
                let client = try OAuth2Client(descriptor: sandbox.descriptor, settings: sandbox.clientSettings)
                var credential = try await client.authorize(using: sandbox.userAgent())
                credential.label = "user-1"
                credential.expiresAt = Date(timeIntervalSinceNow: -60)
                try await stores[0].save(credential)
                let key = credential.key
                let before = credential.accessToken
                let tokens = try await withThrowingTaskGroup(of: String.self) { group in
                    for index in 0..<24 {
                        group.addTask {
                            let instance = try OAuth2Client(
                                descriptor: sandbox.descriptor, settings: sandbox.clientSettings)
                            let source = CredentialSource(
                                authenticator: instance, store: stores[index % 2], key: key)
                            return try await source.current().accessToken
                        }
                    }
                    return try await group.reduce(into: [String]()) { $0.append($1) }
                }
                #expect(tokens.count == 24 && Set(tokens).count == 1 && tokens[0] != before)
                let refreshes = sandbox.events.filter {
                    $0.step == "refresh" || ($0.step == "token" && $0.summary.hasPrefix("refreshed"))
                }
                #expect(refreshes.count == 1, "\(sandbox.events.map(\.summary))")
                #expect(!sandbox.events.contains { $0.summary.contains("reused") })
            }
        }
    }

    /// A provider whose token endpoint rotates refresh tokens, answering
    /// round N (`renewed-N`, `refresh-N+1`) once the test signals `answer`
    /// (what the test does meanwhile comes before the answer, however loaded
    /// the machine); and the count of requests that reached it.
    static func rotatingProvider(on server: TestHTTPServer, answer: DispatchSemaphore) throws -> (
        OAuth2Client, LockedValue<Int>
    ) {
        let arrived = LockedValue(0)
        server.route("POST", "/token") { _ in
            let round = arrived.withLock {
                $0 += 1
                return $0
            }
            _ = answer.wait(timeout: .now() + 30)
            return .json(
                #"{"access_token":"renewed-\#(round)","token_type":"Bearer","expires_in":3600,"refresh_token":"refresh-\#(round + 1)"}"#
            )
        }
        let descriptor = try ProviderDescriptor(
            json: Data(
                """
                {"id": "rotating", "name": "Rotating", "protocol": "oauth2",
                 "authorization": {"url": "\(server.baseURL)/authorize"},
                 "token": {"url": "\(server.baseURL)/token"}}
                """.utf8))
        let client = try OAuth2Client(
            descriptor: descriptor, settings: ClientSettings(clientID: "c", clientSecret: "s"))
        return (client, arrived)
    }

    /// Round `round` of a refresh through `store` of an expired credential
    /// (`refresh-N`), started and seen to reach the provider, whose answer
    /// the test holds; the caller's task and the credential.
    static func refreshReachingTheProvider(
        round: Int, client: OAuth2Client, store: PostgresStore, arrived: LockedValue<Int>
    ) async throws -> (Task<Credential, any Error>, Credential) {
        let expired = Credential(
            providerID: "rotating", label: "me", accessToken: "old", refreshToken: "refresh-\(round)",
            expiresAt: Date(timeIntervalSinceNow: -60), obtainedAt: Date(timeIntervalSinceNow: -3600))
        try await store.save(expired)
        let source = CredentialSource(authenticator: client, store: store, key: expired.key)
        let caller = Task { try await source.current() }
        let since = ContinuousClock.now
        while arrived.current < round {
            try #require(ContinuousClock.now - since < .seconds(30), "the refresh never reached the provider")
            try await Task.sleep(for: .milliseconds(5))
        }
        return (caller, expired)
    }

    /// A refresh whose caller is cancelled while the provider answers is
    /// still saved: the save is committed, not rolled back by the
    /// cancellation closing the lock's connection under the COMMIT (the
    /// rotated refresh token was then lost, the stored one spent).
    @Test func aRefreshBegunIsCommittedWhenItsCallerIsCancelled() async throws {
        try await withServer { server in
            let answer = DispatchSemaphore(value: 0)
            let (client, arrived) = try Self.rotatingProvider(on: server, answer: answer)
            try await Self.withStore(schema: "cancelled_refresh") { stores in
                // Several rounds: the cancellation and the COMMIT race.
                for round in 1...5 {
                    let (caller, expired) = try await Self.refreshReachingTheProvider(
                        round: round, client: client, store: stores[0], arrived: arrived)
                    caller.cancel()
                    answer.signal()
                    _ = await caller.result
                    let stored = try #require(try await stores[0].credential(for: expired.key))
                    #expect(stored.refreshToken == "refresh-\(round + 1)" && stored.accessToken == "renewed-\(round)")
                }
            }
        }
    }

    /// The database restarting (here: the lock's backend ended) while the
    /// provider answers a refresh takes the advisory lock with the
    /// connection. The renewal is still saved when nobody changed the row
    /// meanwhile (the rotated refresh token was lost); when somebody did,
    /// it is not written over theirs, and the error says so.
    @Test func aRenewalIsSavedAfterTheLocksConnectionIsLost() async throws {
        try await withServer { server in
            let answer = DispatchSemaphore(value: 0)
            let (client, arrived) = try Self.rotatingProvider(on: server, answer: answer)
            try await Self.withStore(schema: "lost_lock", clients: 2) { stores in
                for (round, changedMeanwhile) in [(1, false), (2, true)] {
                    let (caller, expired) = try await Self.refreshReachingTheProvider(
                        round: round, client: client, store: stores[0], arrived: arrived)
                    try await Self.endTheSessionHoldingTheLock(using: stores[1])
                    if changedMeanwhile {
                        var other = expired
                        other.accessToken = "signed-in-elsewhere"
                        try await stores[1].save(other)
                    }
                    answer.signal()
                    let result = await caller.result
                    let stored = try #require(try await stores[1].credential(for: expired.key))
                    if changedMeanwhile {
                        #expect(stored.accessToken == "signed-in-elsewhere")
                        #expect(throws: AuthKitError.self) { try result.get() }
                    } else {
                        #expect(
                            stored.refreshToken == "refresh-\(round + 1)" && stored.accessToken == "renewed-\(round)")
                        #expect(try result.get().accessToken == "renewed-\(round)")
                    }
                }
            }
        }
    }

    /// Ends, as a database restart would, the session of the one
    /// connection that holds an advisory lock (a refresh lock), using
    /// another store's connection.
    static func endTheSessionHoldingTheLock(using store: PostgresStore) async throws {
        let ended = try await store.client.query(
            """
            SELECT pg_terminate_backend(pid) FROM pg_locks
            WHERE locktype = 'advisory' AND granted AND pid <> pg_backend_pid()
            """, logger: Logger(label: "test"))
        var terminated = 0
        for try await done in ended.decode(Bool.self) where done { terminated += 1 }
        try #require(terminated == 1, "no lock held to end: the refresh was not under way")
    }

    /// A save made under the refresh lock whose transaction then never
    /// commits (the lock's session ended after the save, before its
    /// COMMIT) is made again without the lock, when the row is still what
    /// was read under it; when somebody changed it meanwhile, it is not
    /// written over theirs, and the refresh fails saying so.
    @Test func aSaveIsReplayedWhenItsTransactionDoesNotCommit() async throws {
        try await Self.withStore(schema: "lost_commit", clients: 2) { stores in
            // The session ended after the save (its COMMIT fails), or just
            // before it: the save's statement is then answered FATAL before
            // the connection is seen closed.
            for (changedMeanwhile, endedBeforeTheSave) in [(false, false), (true, false), (false, true), (true, true)] {
                let stored = Self.credential("me", access: "old")
                try await stores[0].save(stored)
                var failure: (any Error)?
                do {
                    try await stores[0].withRefreshLock(for: stored.key, timeout: .seconds(10)) {
                        _ = try await stores[0].credential(for: stored.key)
                        var renewed = stored
                        renewed.accessToken = "renewed"
                        renewed.refreshToken = "rotated"
                        var other = stored
                        other.accessToken = "signed-in-elsewhere"
                        if endedBeforeTheSave {
                            try await Self.endTheSessionHoldingTheLock(using: stores[1])
                            if changedMeanwhile { try await stores[1].save(other) }
                            try await stores[0].save(renewed)
                        } else {
                            try await stores[0].save(renewed)
                            try await Self.endTheSessionHoldingTheLock(using: stores[1])
                            if changedMeanwhile { try await stores[1].save(other) }
                        }
                    }
                } catch {
                    failure = error
                }
                let now = try #require(try await stores[1].credential(for: stored.key))
                if changedMeanwhile {
                    #expect(now.accessToken == "signed-in-elsewhere")
                    #expect(failure is AuthKitError, "\(String(describing: failure))")
                } else {
                    #expect(now.accessToken == "renewed" && now.refreshToken == "rotated")
                    #expect(failure == nil, "\(String(describing: failure))")
                }
            }
        }
    }

    /// A save made under the lock is kept when the lock's body then fails,
    /// as the other stores keep it: `CredentialSource.revoke` saves a
    /// refresh, then revokes; a revocation that failed rolled the save back,
    /// and the stored refresh token was the one the provider had rotated.
    /// A removal after the save is not undone by the save's replay when
    /// the transaction does not commit: the sign-out fails instead of the
    /// renewal coming back as if signed out.
    @Test func aSaveUnderTheLockOutlivesTheBodysFailureAndNotALaterRemoval() async throws {
        struct RevocationFailed: Error {}
        try await Self.withStore(schema: "kept_save", clients: 2) { stores in
            let (stored, renewed) = try await Self.storedAndRenewed("kept", in: stores[0], access: "renewed")
            await #expect(throws: RevocationFailed.self) {
                try await stores[0].withRefreshLock(for: stored.key, timeout: .seconds(10)) {
                    _ = try await stores[0].credential(for: stored.key)
                    try await stores[0].save(renewed)
                    throw RevocationFailed()
                }
            }
            #expect(try await stores[1].credential(for: stored.key)?.refreshToken == "rotated")

            let signedOut = Self.credential("signed-out", access: "old")
            try await stores[0].save(signedOut)
            var renewing2 = signedOut
            renewing2.accessToken = "renewed"
            let renewedThenRemoved = renewing2
            var failure: (any Error)?
            do {
                try await stores[0].withRefreshLock(for: signedOut.key, timeout: .seconds(10)) {
                    _ = try await stores[0].credential(for: signedOut.key)
                    try await stores[0].save(renewedThenRemoved)
                    try await stores[0].remove(signedOut.key)
                    try await Self.endTheSessionHoldingTheLock(using: stores[1])
                }
            } catch {
                failure = error
            }
            #expect(failure is AuthKitError, "the replay said nothing: \(String(describing: failure))")
            #expect(try await stores[1].credential(for: signedOut.key)?.accessToken != "renewed")

            // A save under the lock, the lock lost, a second save made
            // without it, then the body failing: the body's error, the
            // second save stored (the first one's replay found the row
            // changed, by the second, and threw a store error).
            let twice = Self.credential("saved-twice", access: "old")
            try await stores[0].save(twice)
            await #expect(throws: RevocationFailed.self) {
                try await stores[0].withRefreshLock(for: twice.key, timeout: .seconds(10)) {
                    _ = try await stores[0].credential(for: twice.key)
                    var first = twice
                    first.accessToken = "first"
                    try await stores[0].save(first)
                    try await Self.endTheSessionHoldingTheLock(using: stores[1])
                    var second = twice
                    second.accessToken = "second"
                    try await stores[0].save(second)
                    throw RevocationFailed()
                }
            }
            #expect(try await stores[1].credential(for: twice.key)?.accessToken == "second")
        }
    }

    /// A body that fails after its save keeps the lock until the save is
    /// stored: another instance waiting for the lock reads the renewal, not
    /// the refresh token the provider had just spent. The whole transaction
    /// was rolled back, which released the lock, and the save made again
    /// over another connection a moment later: the waiting instance read
    /// the old row first and would have sent its spent refresh token.
    @Test func aBodyFailingAfterItsSaveHoldsTheLockUntilTheSaveIsStored() async throws {
        struct RevocationFailed: Error {}
        try await Self.withStore(schema: "kept_under_lock", clients: 2) { stores in
            for round in 0..<5 {
                let (stored, renewed) = try await Self.storedAndRenewed(
                    "held-\(round)", in: stores[0], refresh: "rotated-\(round)")
                let saved = AsyncStream<Void>.makeStream()
                let waiter = Task {
                    for await _ in saved.stream { break }
                    return try await stores[1].withRefreshLock(for: stored.key, timeout: .seconds(10)) {
                        try await stores[1].credential(for: stored.key)?.refreshToken
                    }
                }
                await #expect(throws: RevocationFailed.self) {
                    try await stores[0].withRefreshLock(for: stored.key, timeout: .seconds(10)) {
                        _ = try await stores[0].credential(for: stored.key)
                        try await stores[0].save(renewed)
                        saved.continuation.yield()
                        // The other instance is waiting for the lock by now.
                        try await Task.sleep(for: .milliseconds(200))
                        throw RevocationFailed()
                    }
                }
                #expect(try await waiter.value == "rotated-\(round)", "round \(round)")
            }
        }
    }

    /// A body that removed, then saved the account before it failed keeps
    /// the save: rolled back to where the lock was taken, the row is as it
    /// was read, and the save is made again over it. Rolled back only to
    /// the first save, the removal stayed, the save's replay found no row,
    /// and the old row (its spent refresh token) came back.
    @Test func aBodyThatRemovedThenSavedBeforeFailingKeepsTheSave() async throws {
        struct Failed: Error {}
        try await Self.withStore(schema: "removed_then_saved", clients: 1) { stores in
            let (stored, renewed) = try await Self.storedAndRenewed("removed", in: stores[0])
            await #expect(throws: Failed.self) {
                try await stores[0].withRefreshLock(for: stored.key, timeout: .seconds(10)) {
                    _ = try await stores[0].credential(for: stored.key)
                    try await stores[0].remove(stored.key)
                    try await stores[0].save(renewed)
                    throw Failed()
                }
            }
            #expect(try await stores[0].credential(for: stored.key)?.refreshToken == "rotated")
        }
    }

    /// A body that caught an error of the database's after its save (here a
    /// read PostgreSQL refuses: a NUL in a text parameter) has an aborted
    /// transaction, whose COMMIT PostgreSQL answers ROLLBACK without an
    /// error: the save was lost and the refresh said it was stored.
    @Test func aSaveIsKeptWhenTheBodyCaughtAnErrorThatAbortedTheTransaction() async throws {
        try await Self.withStore(schema: "aborted_kept", clients: 1) { stores in
            let (stored, renewed) = try await Self.storedAndRenewed("aborted", in: stores[0])
            let caught = LockedValue(false)
            try await stores[0].withRefreshLock(for: stored.key, timeout: .seconds(10)) {
                _ = try await stores[0].credential(for: stored.key)
                try await stores[0].save(renewed)
                do {
                    _ = try await stores[0].credential(for: CredentialKey(providerID: "qiita", label: "a\u{0}b"))
                } catch {
                    caught.withLock { $0 = true }
                }
            }
            try #require(caught.current, "the read with a NUL did not fail: nothing aborted the transaction")
            #expect(try await stores[0].credential(for: stored.key)?.refreshToken == "rotated")
        }
    }

    /// A sign-in with no refresh token over a stored credential this
    /// instance cannot open (sealed under a key it was not given) replaces
    /// it, with a warning: refused (as a review proposed), the user could
    /// not sign in at all until an operator put the key back.
    @Test func aSignInReplacesACredentialItCannotOpen() async throws {
        try await Self.withStore(schema: "sign_in_lost_key") { stores in
            let stored = Self.credential("u")
            try await stores[0].save(stored)
            let rotated = PostgresStore(
                client: stores[0].client,
                encryption: try TokenEncryption(keys: [("k2", SymmetricKey(size: .bits256))]), display: "test")
            var again = Self.credential("u", access: "second-access")
            again.refreshToken = nil
            try await rotated.saveSignIn(again, lockTimeout: .seconds(5))
            #expect(try await rotated.credential(for: stored.key) == again)
        }
    }

    /// A key id of non-ASCII letters is refused: Swift compares two
    /// spellings of `é` as one id, the database as two.
    @Test func keyIDsAreASCII() throws {
        #expect(throws: AuthKitError.self) {
            try TokenEncryption(keys: [("cl\u{E9}", SymmetricKey(size: .bits256))])
        }
        _ = try TokenEncryption(keys: [("key-2026_12", SymmetricKey(size: .bits256))])
    }

    /// The session ended while the save is on its way: the database may
    /// answer the save's statement with the FATAL error before the
    /// connection is seen closed, and the save was then refused as if the
    /// row had changed (CI, one run in several). Raced over many rounds.
    @Test func aSaveRacingTheEndOfTheLocksSessionIsKept() async throws {
        try await Self.withStore(schema: "lost_race", clients: 2) { stores in
            for round in 1...30 {
                let stored = Self.credential("me", access: "old-\(round)")
                try await stores[0].save(stored)
                try await stores[0].withRefreshLock(for: stored.key, timeout: .seconds(10)) {
                    _ = try await stores[0].credential(for: stored.key)
                    var renewed = stored
                    renewed.accessToken = "renewed-\(round)"
                    async let ended: Void = Self.endTheSessionHoldingTheLock(using: stores[1])
                    try await stores[0].save(renewed)
                    try await ended
                }
                #expect(try await stores[1].credential(for: stored.key)?.accessToken == "renewed-\(round)")
            }
        }
    }

    /// One user holds at most `sessionsPerUser` sessions, across instances.
    @Test func aUserHoldsAtMostTheLimitOfSessions() async throws {
        try await Self.withStore(schema: "sessions_per_user", sessionsPerUser: 3) { stores in
            try await InMemoryStoreTests.checkSessionsPerUser(stores[0], limit: 3)
        }
    }

    /// An attempt and a session under the same id are two rows of two tables.
    @Test func attemptsAndSessionsAreApart() async throws {
        try await Self.withStore(schema: "apart") { stores in try await InMemoryStoreTests.checkApart(stores[0]) }
    }

    /// Sign-out everywhere on PostgreSQL: each session row records whose it
    /// is (by digest), and all of the user's go.
    @Test func signOutEverywhereEndsEverySessionOfTheUser() async throws {
        try await Self.withStore(schema: "sign_out") { stores in
            try await WebSignInTests.checkSignOut(everywhere: true, stores: (stores[0], stores[0]))
        }
    }

    /// Instances starting at once migrate one after the other, whatever the
    /// database's default isolation: under repeatable read, the second read
    /// the schema's version from a snapshot taken before the first
    /// committed, found 0, and failed creating tables that existed.
    @Test func instancesStartingAtOnceMigrateUnderRepeatableRead() async throws {
        try await Self.withStore(
            schema: "migrate_rr", clients: 4, startup: [("default_transaction_isolation", "repeatable read")]
        ) { stores in
            let logger = Logger(label: "test")
            for table in ["authkit_sessions", "authkit_sign_in_attempts", "authkit_credentials", "authkit_schema"] {
                try await stores[0].client.run("DROP TABLE \(unescaped: table)", logger: logger)
            }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for store in stores { group.addTask { try await store.migrate() } }
                try await group.waitForAll()
            }
            try await stores[1].save(Self.credential("after-migration"))
            #expect(try await stores[2].credential(for: Self.credential("after-migration").key) != nil)
        }
    }

    /// A database an earlier build made (schema version 1) is brought to
    /// version 2 at start; its sessions stay valid, and have no owner recorded.
    @Test func aVersion1SchemaIsMigrated() async throws {
        try await Self.withStore(schema: "upgrade") { stores in
            let store = stores[0]
            let logger = Logger(label: "test")
            for table in ["authkit_sessions", "authkit_sign_in_attempts", "authkit_credentials", "authkit_schema"] {
                try await store.client.run("DROP TABLE \(unescaped: table)", logger: logger)
            }
            try await store.client.run("CREATE TABLE authkit_schema (version integer NOT NULL)", logger: logger)
            for statement in PostgresStore.version1 { try await store.client.run(statement, logger: logger) }
            try await store.client.run("INSERT INTO authkit_schema (version) VALUES (1)", logger: logger)
            let user = SignedInUser(providerID: "google", subject: "alice", issuer: nil, displayName: nil)
            let session = WebSession(
                user: user, csrfToken: "t", createdAt: Date(), expiresAt: Date(timeIntervalSinceNow: 600))
            let (keyID, sealed) = try Self.encryption.seal(
                try JSONEncoder().encode(session), binding: "authkit_sessions\u{0}old")
            try await store.client.run(
                "INSERT INTO authkit_sessions (id, key_id, sealed, expires_at) VALUES ('old', \(keyID), \(sealed), now() + interval '10 minutes')",
                logger: logger)

            try await store.migrate()
            var versions = [Int]()
            for try await version in try await store.client.query("SELECT version FROM authkit_schema").decode(Int.self)
            {
                versions.append(version)
            }
            #expect(versions == [PostgresStore.schemaVersion])
            #expect(try await store.session(id: "old", now: Date())?.user == user)
            try await store.insert(session, id: "new")
            try await store.removeSessions(of: user)
            #expect(try await store.session(id: "new", now: Date()) == nil)
            #expect(try await store.session(id: "old", now: Date()) != nil) // no owner recorded: ends at its expiry
            try await store.migrate() // again: nothing to do
            // Signing out everywhere from that session ends it too (it stayed
            // valid, its cookie cleared in this browser, copies of it working).
            let web = WebSignIn(
                configuration: .init(publicURL: URL(string: "https://app.example")!), clients: [],
                credentials: store, store: store)
            // Written as a version-1 instance still running during the upgrade writes it: no owner.
            let cookie = "old-session-cookie"
            let id = WebSignIn.digest(cookie)
            let (oldKeyID, oldSealed) = try Self.encryption.seal(
                try JSONEncoder().encode(session), binding: "authkit_sessions\u{0}\(id)")
            try await store.client.run(
                "INSERT INTO authkit_sessions (id, key_id, sealed, expires_at) VALUES (\(id), \(oldKeyID), \(oldSealed), now() + interval '10 minutes')",
                logger: logger)
            #expect(try await web.session(cookie: cookie) != nil)
            _ = try await web.signOut(cookie: cookie, csrfToken: "t", origin: nil)
            #expect(try await web.session(cookie: cookie) == nil)
        }
    }

    /// A refresh reads and saves over its lock's own connection: with a pool
    /// of two connections, six accounts refreshed at once all finish. (When
    /// the read and the save took a second pooled connection, two lock
    /// holders held both and waited for a third until the operation timed
    /// out, after the provider had already rotated their refresh tokens.)
    @Test func refreshesOfManyAccountsAtOnceNeedOneConnectionEach() async throws {
        let qiita = try ProviderCatalog(includeBundled: true, directories: []).descriptor(id: "qiita")
        try await Sandbox.with(emulating: qiita, options: SandboxOptions(approves: true)) { sandbox in
            try await Self.withStore(schema: "pool", maximumConnections: 2) { stores in
                let store = stores[0]
                let client = try OAuth2Client(descriptor: sandbox.descriptor, settings: sandbox.clientSettings)
                var before = [CredentialKey: String]()
                for index in 0..<6 {
                    var credential = try await client.authorize(using: sandbox.userAgent())
                    credential.label = "user-\(index)"
                    credential.expiresAt = Date(timeIntervalSinceNow: -60)
                    try await store.save(credential)
                    before[credential.key] = credential.accessToken
                }
                let started = ContinuousClock.now
                let renewed = try await withThrowingTaskGroup(of: (CredentialKey, String).self) { group in
                    for key in before.keys {
                        group.addTask {
                            let source = CredentialSource(authenticator: client, store: store, key: key)
                            return (key, try await source.current().accessToken)
                        }
                    }
                    return try await group.reduce(into: [CredentialKey: String]()) { $0[$1.0] = $1.1 }
                }
                #expect(ContinuousClock.now - started < .seconds(8), "\(ContinuousClock.now - started)")
                for (key, token) in renewed {
                    #expect(token != before[key])
                    #expect(try await store.credential(for: key)?.accessToken == token)
                }
                #expect(renewed.count == 6)
            }
        }
    }

    /// An instance that dies holding the refresh lock (its connection gone)
    /// releases it; one that holds it too long makes the others give up
    /// with a clear error rather than hang.
    @Test func aDeadHolderReleasesTheLockAndALiveOneTimesOut() async throws {
        try await Self.withStore(schema: "lock", clients: 1) { stores in
            let store = stores[0]
            let key = CredentialKey(providerID: "qiita", label: "held")
            let url = try #require(Self.databaseURL)
            let holder = try await PostgresConnection.connect(
                configuration: .init(
                    host: url.host!, port: url.port!, username: "postgres", password: nil, database: "postgres",
                    tls: .disable),
                id: 1, logger: Logger(label: "holder"))
            try await holder.run(
                "SELECT pg_advisory_lock(\(PostgresStore.lockNumber(for: key)))", logger: Logger(label: "holder"))
            await #expect {
                try await store.withRefreshLock(for: key, timeout: .seconds(1)) { 1 }
            } throws: { error in
                guard case .store(_, let reason)? = error.authKitReason else { return false }
                return "\(reason)".contains("another instance has held it")
            }
            let started = ContinuousClock.now
            async let waited = store.withRefreshLock(for: key, timeout: .seconds(20)) { 42 }
            try await Task.sleep(for: .milliseconds(800))
            try await holder.close() // the holder's process dies: PostgreSQL ends its session and its locks
            #expect(try await waited == 42)
            #expect(ContinuousClock.now - started >= .milliseconds(700))
        }
    }

    /// A sign-in saved on one instance while another instance refreshes the
    /// account's earlier credential waits for that refresh, and is saved
    /// after it: the new sign-in is what stays stored (one transaction: the
    /// lock, then the upsert). A refresh held past the sign-in's wait is
    /// `busy`, and nothing is saved.
    @Test func aSignInSavedDuringARefreshElsewhereIsSavedAfterIt() async throws {
        try await Self.withStore(schema: "sign_in_lock", clients: 2) { stores in
            let key = CredentialKey(providerID: "qiita", label: "a")
            try await stores[0].save(Self.credential("a", access: "earlier"))
            let (release, released) = AsyncStream<Void>.makeStream()
            let (holding, held) = AsyncStream<Void>.makeStream()
            let refresh = Task {
                try await stores[0].withRefreshLock(for: key, timeout: .seconds(10)) {
                    held.yield()
                    for await _ in release { break }
                    try await stores[0].save(Self.credential("a", access: "refreshed-earlier"))
                }
            }
            for await _ in holding { break }
            await #expect {
                try await stores[1].saveSignIn(Self.credential("a", access: "too-soon"), lockTimeout: .seconds(1))
            } throws: { error in
                guard case .store(_, let reason)? = error.authKitReason else { return false }
                return "\(reason)".contains("another instance has held it")
            }
            async let signIn: Void = stores[1].saveSignIn(
                Self.credential("a", access: "new-sign-in"), lockTimeout: .seconds(20))
            try await Task.sleep(for: .milliseconds(300))
            released.yield()
            try await refresh.value
            try await signIn
            #expect(try await stores[0].credential(for: key)?.accessToken == "new-sign-in")
        }
    }

    /// A database that goes away: clear errors within the store's timeout
    /// (never a hang), and the same store works again once it is back,
    /// without a restart of the app.
    @Test(.enabled(if: ProcessInfo.processInfo.environment["AUTHKIT_TEST_PGDATA"] != nil))
    func aRestartedDatabaseIsUsedAgain() async throws {
        let data = try #require(ProcessInfo.processInfo.environment["AUTHKIT_TEST_PGDATA"])
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../scripts/throwaway-postgres").standardized.path
        func cluster(_ action: String) async throws -> Bool {
            try await Subprocess.run(
                .path(FilePath("/bin/bash")), arguments: [script, action, data], input: .none, output: .discarded,
                error: .string(limit: 1 << 16)
            ).terminationStatus.isSuccess
        }
        try await Self.withStore(schema: "restart") { stores in
            let store = PostgresStore(
                client: stores[0].client, encryption: Self.encryption, display: "postgresql://test/restart",
                operationTimeout: .seconds(2))
            try await store.save(Self.credential("r"))
            #expect(try await cluster("down"))
            let started = ContinuousClock.now
            await #expect {
                _ = try await store.credential(for: CredentialKey(providerID: "qiita", label: "r"))
            } throws: { error in
                guard case .store(let path, let reason)? = error.authKitReason else { return false }
                return path == "postgresql://test/restart" && reason.kind == .inaccessible
            }
            // Bounded by the 2 s timeout (the failure was a minute); the
            // margin is for a loaded machine, not a measure of speed.
            #expect(ContinuousClock.now - started < .seconds(15))
            // A sign-in's save (one transaction, no probe before it): the
            // store's error within its lock timeout. PostgresNIO's pool
            // queued the lease with no deadline until its circuit breaker
            // tripped, a minute, and its own error passed through.
            let signInStarted = ContinuousClock.now
            await #expect {
                try await store.saveSignIn(Self.credential("r2"), lockTimeout: .seconds(2))
            } throws: { error in
                guard case .store(let path, let reason)? = error.authKitReason else { return false }
                return path == "postgresql://test/restart" && reason.kind == .inaccessible
                    && reason.detail.contains("no connection")
            }
            #expect(ContinuousClock.now - signInStarted < .seconds(20))
            #expect(try await cluster("up"))
            var back: Credential?
            for _ in 0..<40 where back == nil {
                back = try? await store.credential(for: CredentialKey(providerID: "qiita", label: "r"))
                if back == nil { try await Task.sleep(for: .milliseconds(250)) }
            }
            #expect(back?.accessToken == "secret-access-token")
        }
    }

    /// Whether process `pid` is stopped (state `T` in /proc/PID/stat).
    static func isStopped(_ pid: Int32) throws -> Bool {
        let stat = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
        return stat.split(separator: ")").last?.split(separator: " ").first == "T"
    }

    /// Stops the backend `rows` (`SELECT pg_backend_pid()`) names, checked
    /// to be a `postgres` process of this machine first, and lets it go on
    /// in 8 s whatever the test does meanwhile (the task that will).
    static func stopBackend(of rows: PostgresRowSequence) async throws -> (Int32, Task<Void, Never>) {
        var backend: Int32?
        for try await pid in rows.decode(Int32.self) { backend = pid }
        let pid = try #require(backend)
        let name = try String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8)
        try #require(name.hasPrefix("postgres"), "pid \(pid) is '\(name)', not the cluster's backend")
        try #require(kill(pid, SIGSTOP) == 0)
        let resume = Task {
            try? await Task.sleep(for: .seconds(8))
            kill(pid, SIGCONT)
        }
        return (pid, resume)
    }

    /// A database that stops answering without closing its connections (a
    /// partition, a frozen host: here its backend is stopped with SIGSTOP)
    /// is reported within the store's operation timeout, not when TCP gives
    /// up; the store works again once it answers.
    /// Only on the throwaway cluster (`AUTHKIT_TEST_PGDATA`), whose
    /// backends are processes of this machine and user: the pid is checked
    /// to be a `postgres` process before it is stopped.
    @Test(.enabled(if: ProcessInfo.processInfo.environment["AUTHKIT_TEST_PGDATA"] != nil))
    func aSilentDatabaseIsReportedWithinTheTimeout() async throws {
        try await Self.withStore(schema: "silent", maximumConnections: 1) { stores in
            let store = PostgresStore(
                client: stores[0].client, encryption: Self.encryption, display: "postgresql://test/silent",
                operationTimeout: .seconds(1))
            try await store.save(Self.credential("s"))
            let (pid, resume) = try await Self.stopBackend(of: try await store.client.query("SELECT pg_backend_pid()"))
            let started = ContinuousClock.now
            await #expect {
                _ = try await store.credential(for: CredentialKey(providerID: "qiita", label: "s"))
            } throws: { error in
                guard case .store(let path, let reason)? = error.authKitReason else { return false }
                return path == "postgresql://test/silent" && reason.kind == .inaccessible
                    && reason.detail.contains("did not answer within")
            }
            // A hang check (the caller was held until TCP gave up, a quarter of an
            // hour), not a speed test: PostgreSQL shares the two cores.
            #expect(ContinuousClock.now - started < .seconds(20))
            // The pool's one connection was the stopped backend's: closed at
            // the timeout, the next statement gets a new one while that
            // backend is still stopped (let go, it held the pool's only
            // connection until TCP gave up, and every read timed out).
            // (Over the same pool, with time for a new connection on a loaded machine.)
            let patient = PostgresStore(
                client: stores[0].client, encryption: Self.encryption, display: "postgresql://test/silent",
                operationTimeout: .seconds(10))
            let meanwhile = try await patient.credential(for: CredentialKey(providerID: "qiita", label: "s"))
            #expect(meanwhile?.accessToken == "secret-access-token")
            // Read while that backend was still stopped (the test lets it go after 8 s whatever happens).
            #expect(try Self.isStopped(pid), "the backend was let go before the read")
            kill(pid, SIGCONT)
            resume.cancel()
            var back: Credential?
            for _ in 0..<40 where back == nil {
                back = try? await store.credential(for: CredentialKey(providerID: "qiita", label: "s"))
                if back == nil { try await Task.sleep(for: .milliseconds(250)) }
            }
            #expect(back?.accessToken == "secret-access-token")

            // A caller that goes (cancelled) while its statement waits on a
            // silent backend: the connection is still closed at the
            // operation's deadline, so the pool's one connection comes back.
            let (cancelledPid, cancelledResume) = try await Self.stopBackend(
                of: try await store.client.query("SELECT pg_backend_pid()"))
            let reading = Task { try await store.credential(for: CredentialKey(providerID: "qiita", label: "s")) }
            try await Task.sleep(for: .milliseconds(200))
            reading.cancel()
            _ = try? await reading.value
            try await Task.sleep(for: .milliseconds(1500)) // past the 1 s operation timeout
            let afterCancel = try await patient.credential(for: CredentialKey(providerID: "qiita", label: "s"))
            #expect(afterCancel?.accessToken == "secret-access-token")
            #expect(try Self.isStopped(cancelledPid), "the backend was let go before the read")
            kill(cancelledPid, SIGCONT)
            cancelledResume.cancel()

            // Inside a refresh lock, on the lock's own connection: the
            // statement times out, the connection is closed (ending the
            // transaction and the lock), and the caller has its error
            // within the timeout, not after a rollback queued behind it.
            let key = CredentialKey(providerID: "qiita", label: "s")
            let lockedStarted = ContinuousClock.now
            let lockedBackend = Recorder<Int32>()
            let afterTimeout = Recorder<String>()
            await #expect {
                try await store.withRefreshLock(for: key, timeout: .seconds(5)) {
                    let (pid, _) = try await Self.stopBackend(
                        of: try await PostgresStore.heldLock!.connection.query(
                            "SELECT pg_backend_pid()", logger: Logger(label: "test")))
                    lockedBackend.append(pid)
                    // A body that goes on after the timeout: its next
                    // statement is refused at once, and nothing is committed
                    // (written to the closed connection, PostgresNIO never
                    // answered them: the run waited for ever).
                    for _ in 0..<2 {
                        do {
                            _ = try await store.credential(for: key)
                        } catch {
                            guard case .store(let path, _)? = error.authKitReason else { throw error }
                            afterTimeout.append(path)
                        }
                    }
                }
            } throws: { error in
                guard case .store(let path, let reason)? = error.authKitReason else { return false }
                return path == "the refresh lock" && reason.kind == .inaccessible
            }
            for pid in lockedBackend.all { kill(pid, SIGCONT) }
            #expect(afterTimeout.all == ["postgresql://test/silent", "the refresh lock"], "\(afterTimeout.all)")
            #expect(ContinuousClock.now - lockedStarted < .seconds(20))
            back = nil
            for _ in 0..<40 where back == nil {
                back = try? await store.credential(for: key)
                if back == nil { try await Task.sleep(for: .milliseconds(250)) }
            }
            #expect(back?.accessToken == "secret-access-token")

            // A sign-in saved while the database is silent: refused within
            // the timeout, and not committed once the backend wakes (its
            // connection was closed; left open, the transaction went on to
            // commit after the caller heard that it failed).
            let (signInPid, wake) = try await Self.stopBackend(
                of: try await store.client.query("SELECT pg_backend_pid()"))
            let signInStarted = ContinuousClock.now
            await #expect(throws: AuthKitError.self) {
                try await store.saveSignIn(Self.credential("late", access: "late-token"), lockTimeout: .seconds(2))
            }
            #expect(ContinuousClock.now - signInStarted < .seconds(15), "not bounded by its 2 s lock timeout")
            kill(signInPid, SIGCONT)
            wake.cancel()
            var answered = false
            var late: Credential?
            for _ in 0..<40 where !answered {
                do {
                    late = try await store.credential(for: CredentialKey(providerID: "qiita", label: "late"))
                    answered = true
                } catch {
                    try await Task.sleep(for: .milliseconds(250))
                }
            }
            #expect(answered && late == nil, "\(String(describing: late))")
        }
    }

    /// A sign-in whose answer brought no refresh token (Google's second
    /// consent) keeps the stored one of the same account, in the sign-in's
    /// own transaction; another account's is never taken.
    @Test func aSignInWithoutARefreshTokenKeepsTheAccountsOne() async throws {
        try await Self.withStore(schema: "keep_refresh") { stores in
            let store = stores[0]
            var first = Self.credential("u")
            first.identity = Identity(issuer: "https://accounts.google.com", subject: "1001")
            try await store.saveSignIn(first, lockTimeout: .seconds(5))
            var again = Self.credential("u", access: "second-access")
            again.refreshToken = nil
            again.identity = first.identity
            try await store.saveSignIn(again, lockTimeout: .seconds(5))
            let kept = try #require(try await store.credential(for: first.key))
            #expect(kept.accessToken == "second-access" && kept.refreshToken == "secret-refresh")
            // Another subject under the same key: nothing of the earlier one's.
            var other = Self.credential("u", access: "third-access")
            other.refreshToken = nil
            other.identity = Identity(issuer: "https://accounts.google.com", subject: "2002")
            try await store.saveSignIn(other, lockTimeout: .seconds(5))
            let replaced = try #require(try await store.credential(for: first.key))
            #expect(replaced.accessToken == "third-access" && replaced.refreshToken == nil)
        }
    }

    /// A session or sign-in attempt sealed with a key this instance was not
    /// given (the keys rotated sooner than sessions last) signs nobody in:
    /// it reads as absent, not as an error at every request of that browser.
    /// A credential that does not open is still an error.
    @Test func aSessionSealedWithAnUnknownKeyIsAbsent() async throws {
        try await Self.withStore(schema: "lost_key") { stores in
            let user = SignedInUser(providerID: "google", subject: "1", issuer: nil, displayName: nil)
            try await stores[0].insert(
                WebSession(
                    user: user, csrfToken: "csrf", createdAt: Date(), expiresAt: Date(timeIntervalSinceNow: 600)),
                id: "s1")
            try await stores[0].save(Self.credential("c"))
            let rotated = PostgresStore(
                client: stores[0].client,
                encryption: try TokenEncryption(keys: [("k2", SymmetricKey(size: .bits256))]), display: "test")
            #expect(try await rotated.session(id: "s1", now: Date()) == nil)
            #expect(try await stores[0].session(id: "s1", now: Date())?.csrfToken == "csrf")
            await #expect(throws: AuthKitError.self) {
                _ = try await rotated.credential(for: CredentialKey(providerID: "qiita", label: "c"))
            }
        }
    }
}
