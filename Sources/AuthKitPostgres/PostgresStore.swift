import AuthKit
import AuthKitServer
import Crypto
import Foundation
import Logging
import PostgresNIO

/// AuthKit's state in PostgreSQL, shared by every instance of an app: the
/// users' credentials (a ``CredentialStore``), sign-ins waiting for their
/// callback and sessions (a ``WebSignInStore``).
///
/// - **One refresh across machines.** ``withRefreshLock(for:timeout:_:)``
///   holds a transaction-scoped advisory lock (`pg_advisory_xact_lock`) on a
///   number made from the credential's key, so a rotating refresh token is
///   sent once however many instances need a fresh token at the same
///   moment. An instance that dies holding it loses its connection, and
///   PostgreSQL releases the lock with it; the next waiter re-reads the
///   credential and finds it refreshed, or refreshes it.
/// - **Encrypted at rest** (``TokenEncryption``): tokens, PKCE verifiers and
///   sessions are sealed with AES-256-GCM; keys are named, so they rotate.
/// - **Its own schema**, created and migrated by ``migrate()`` (versioned in
///   `authkit_schema`, under an advisory lock so instances starting together
///   do not race).
/// - **A database that goes away** gives ``AuthKitError``
///   errors (an app answers 503), and the pool reconnects by itself when it
///   returns: no restart.
///
/// Run the client (`await client.run()` in a task, or in a service group)
/// before using the store, as PostgresNIO asks.
public final class PostgresStore: CredentialStore, WebSignInStore {
    public let client: PostgresClient
    /// Pooled connections refresh locks may hold at once (see `init`).
    let lockConnections: Int
    package let encryption: TokenEncryption
    let logger: Logger
    /// How errors name the database: `postgresql://host:port/database`, never a password.
    let display: String
    /// The longest a statement may wait for the database (a connection
    /// from the pool included): PostgresNIO's pool waits for a connection
    /// while the database is away, and a request should get an error (a
    /// 503) instead of hanging.
    public let operationTimeout: Duration
    /// Sign-ins waiting for their callback kept at most, across instances
    /// (see `init`).
    public let pendingSignInLimit: Int
    /// Sessions one user may hold at once (see `init`).
    public let sessionsPerUser: Int
    /// This instance's attempt inserts since its last trim to the limit.
    private let insertsSinceTrim = LockedValue(0)

    /// The schema version this build writes.
    static let schemaVersion = 2

    /// - Parameter lockConnections: how many pooled connections refresh
    ///   locks may hold at once (each holds one for as long as the provider
    ///   takes to answer); more wait, within their timeout. Keep it at most
    ///   half the pool's `maximumConnections`, so that a slow provider and
    ///   many due accounts cannot take every connection from the site's
    ///   session reads (they did: every page then timed out).
    /// - Parameter pendingSignInLimit: how many sign-ins waiting for their
    ///   callback the table keeps; past it the ones that expire first go
    ///   (their browsers start again), as the in-memory store (``AuthKitServer/inMemoryWebSignInStore(attemptLimit:sessionsPerUser:)``)
    ///   does. Each `/login` writes a row before anyone has signed in, so
    ///   without a bound a flood of requests filled the database for the
    ///   attempt's lifetime and the hour the sweeps leave. Trimmed every
    ///   ``trimInterval(for:)`` inserts of an instance, so the table may
    ///   pass it by that many rows per instance.
    /// - Parameter sessionsPerUser: how many sessions one user may hold at
    ///   once (browsers, devices); a sign-in past it ends those that expire
    ///   first, as the in-memory store (``AuthKitServer/inMemoryWebSignInStore(attemptLimit:sessionsPerUser:)``) does. Each sign-in makes a row
    ///   that lives for days, so one account signing in again and again (a
    ///   script that drops its cookies) grew the table without end.
    /// - Parameter encryptionKeys: the keys that seal tokens at rest, written
    ///   `id:BASE64[,id:BASE64…]` (32 bytes each; the first seals new
    ///   values, the others only open rows sealed before a rotation: keep
    ///   a retired key until every row sealed with it has been saved
    ///   again). ``newEncryptionKey(id:)`` makes one.
    /// - Throws: ``AuthKit/AuthKitError`` with code
    ///   ``AuthKit/AuthKitError/Code/noEncryptionKey`` or
    ///   ``AuthKit/AuthKitError/Code/invalidEncryptionKey``, naming what to fix
    ///   (never the key).
    public convenience init(
        client: PostgresClient, encryptionKeys: String, display: String, operationTimeout: Duration = .seconds(10),
        lockConnections: Int = 10, pendingSignInLimit: Int = 100_000, sessionsPerUser: Int = 100,
        logger: Logger? = nil
    ) throws {
        self.init(
            client: client, encryption: try TokenEncryption(text: encryptionKeys), display: display,
            operationTimeout: operationTimeout, lockConnections: lockConnections,
            pendingSignInLimit: pendingSignInLimit, sessionsPerUser: sessionsPerUser, logger: logger)
    }

    /// The id of the key new values are sealed under: the first of
    /// `encryptionKeys`. After ``reseal()``, rows under any other id
    /// (``rowsPerKey()``) are what a retired key still opens.
    public var currentKeyID: String { encryption.currentKeyID }

    /// A new random 256-bit key, as `id:BASE64`, for `encryptionKeys`.
    public static func newEncryptionKey(id: String) -> String { TokenEncryption.newKeyText(id: id) }

    package init(
        client: PostgresClient, encryption: TokenEncryption, display: String, operationTimeout: Duration = .seconds(10),
        lockConnections: Int = 10, pendingSignInLimit: Int = 100_000, sessionsPerUser: Int = 100,
        logger: Logger? = nil
    ) {
        self.lockConnections = max(1, lockConnections)
        self.pendingSignInLimit = max(1, pendingSignInLimit)
        self.sessionsPerUser = max(1, sessionsPerUser)
        self.operationTimeout = operationTimeout
        self.client = client
        self.encryption = encryption
        self.display = display
        self.logger = logger ?? Logger(label: "authkit.postgres")
    }

    // MARK: - Schema

    /// What a migration may take beyond the operation timeout.
    static let migrationTimeout = Duration.seconds(300)

    /// Creates AuthKit's tables, or brings them to this build's version.
    /// - Throws: ``AuthKitError`` when the database is
    ///   unreachable, or holds a newer schema than this build knows.
    public func migrate() async throws {
        // Minutes, not the operation timeout: the wait for another
        // instance's migration and the index builds of a large table took
        // longer, and an instance that gave up at 10 s (and exited) rolled
        // its own upgrade back, so it never completed.
        // The database is there (the operation timeout, not the minutes:
        // one that is down at start is said in seconds).
        try await mapped { [client, logger] in try await client.run("SELECT 1", logger: logger) }
        try await mapped(extra: Self.migrationTimeout) { [self] in
            try await client.withTransaction(logger: logger) { connection in
                // The version is read after the lock is granted: under a
                // database's default of repeatable read, the snapshot came
                // from before it, and a second instance found version 0.
                try await connection.run("SET TRANSACTION ISOLATION LEVEL READ COMMITTED", logger: logger)
                // Nor is the migration cut by an administrator's statement_timeout,
                // or lock_timeout: with a role's `lock_timeout = '2s'`, a second
                // instance started during the first's index builds failed (55P03).
                try await connection.run("SET LOCAL statement_timeout = 0", logger: logger)
                try await connection.run("SET LOCAL lock_timeout = 0", logger: logger)
                // One migration at a time across instances.
                try await connection.run("SELECT pg_advisory_xact_lock(\(Self.migrationLock))", logger: logger)
                try await connection.run(
                    "CREATE TABLE IF NOT EXISTS authkit_schema (version integer NOT NULL)", logger: logger)
                var version = 0
                for try await (found) in try await connection.query(
                    "SELECT version FROM authkit_schema", logger: logger
                ).decode(Int.self) {
                    version = max(version, found)
                }
                guard version <= Self.schemaVersion else {
                    throw AuthKitError.store(
                        path: display,
                        reason: .init(
                            .invalidContents,
                            "its AuthKit schema is version \(version), newer than this build's \(Self.schemaVersion); upgrade this instance"
                        ))
                }
                if version < Self.schemaVersion {
                    for (number, statements) in [(1, Self.version1), (2, Self.version2)] where version < number {
                        for statement in statements { try await connection.run(statement, logger: logger) }
                    }
                    try await connection.run("DELETE FROM authkit_schema", logger: logger)
                    try await connection.run(
                        "INSERT INTO authkit_schema (version) VALUES (\(Self.schemaVersion))", logger: logger)
                }
            }
        }
    }

    static let migrationLock: Int64 = 0x4155_5448_4b49_5401 // "AUTHKIT", 1

    static let version1: [PostgresQuery] = [
        """
        CREATE TABLE authkit_credentials (
            provider_id text NOT NULL, label text NOT NULL,
            key_id text NOT NULL, sealed bytea NOT NULL, updated_at timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (provider_id, label))
        """,
        """
        CREATE TABLE authkit_sign_in_attempts (
            id text PRIMARY KEY, key_id text NOT NULL, sealed bytea NOT NULL, expires_at timestamptz NOT NULL)
        """,
        """
        CREATE TABLE authkit_sessions (
            id text PRIMARY KEY, key_id text NOT NULL, sealed bytea NOT NULL, expires_at timestamptz NOT NULL)
        """,
    ]

    /// Version 2: whose each session is (sign-out everywhere), and the
    /// expiry sweeps by index, not a pass over every row. Sessions made by
    /// version 1 have no owner recorded: a sign-out everywhere does not end
    /// them, and they end at their expiry.
    static let version2: [PostgresQuery] = [
        "ALTER TABLE authkit_sessions ADD COLUMN user_digest text",
        "CREATE INDEX authkit_sessions_user ON authkit_sessions (user_digest)",
        "CREATE INDEX authkit_sessions_expiry ON authkit_sessions (expires_at)",
        "CREATE INDEX authkit_sign_in_attempts_expiry ON authkit_sign_in_attempts (expires_at)",
    ]

    // MARK: - CredentialStore

    public func credential(for key: CredentialKey) async throws -> Credential? {
        try await mapped { [self] in
            let rows = try await query(
                """
                SELECT key_id, sealed FROM authkit_credentials
                WHERE provider_id = \(key.providerID) AND label = \(key.label ?? "")
                """)
            for (keyID, sealed) in try rows.decode((String, Data).self) {
                if let held = Self.heldLock, held.store == ObjectIdentifier(self) {
                    held.readings.withLock { $0[key] = sealed }
                }
                return try open(Credential.self, sealed, keyID: keyID, binding: Self.binding(key))
            }
            return nil
        }
    }

    public func allCredentials() async throws -> [Credential] {
        try await mapped { [self] in
            let rows = try await query(
                "SELECT provider_id, label, key_id, sealed FROM authkit_credentials ORDER BY provider_id, label")
            var credentials = [Credential]()
            for (provider, label, keyID, sealed) in try rows.decode((String, String, String, Data).self) {
                let key = CredentialKey(providerID: provider, label: label)
                credentials.append(try open(Credential.self, sealed, keyID: keyID, binding: Self.binding(key)))
            }
            // The order every store lists in (provider, then label, the default
            // account first), not the database's collation.
            return credentials.sorted { ($0.providerID, $0.label ?? "") < ($1.providerID, $1.label ?? "") }
        }
    }

    public func save(_ credential: Credential) async throws {
        let key = credential.key
        let (keyID, sealed) = try seal(credential, binding: Self.binding(key))
        if let held = Self.heldLock, held.store == ObjectIdentifier(self),
            let read = held.readings.withLock({ $0[key] })
        {
            let save = HeldLock.Save(key: key, keyID: keyID, sealed: sealed, read: read)
            if held.isLost {
                try await saveAfterLosingTheLock(save, held: held)
                return
            }
            do {
                try await mapped { [self] in try await run(try Self.upsert(key, keyID: keyID, sealed: sealed)) }
                // Committed with the lock's release; replayed should that fail (lockedTransaction).
                held.lastSave.withLock { $0 = save }
            } catch  where held.isLost {
                // The connection went under the save: the database ended the
                // session (a restart: FATAL 57P01), or a failover that sent no
                // FIN was found by the statement's timeout, which closed it.
                try await saveAfterLosingTheLock(save, held: held)
            }
            return
        }
        try await mapped { [self] in
            try await run(try Self.upsert(key, keyID: keyID, sealed: sealed))
        }
    }

    /// The refresh lock's connection is gone (the database restarted or
    /// failed over, and the advisory lock went with the connection) while
    /// the provider was being asked: the provider has renewed the credential,
    /// and a rotated refresh token (RFC 9700 §4.14.2) is kept only by
    /// saving its answer. Saved over a pooled connection, only if the row is
    /// still what was read under the lock: nobody has changed it since, so
    /// nobody else's renewal is overwritten. Otherwise refused, as before.
    private func saveAfterLosingTheLock(_ save: HeldLock.Save, held: HeldLock) async throws {
        let (key, sealed) = (save.key, save.sealed)
        // Over a pooled connection: no longer under the lost lock, whose
        // connection the operation timeout would otherwise watch and close.
        let saved = try await Self.$heldLock.withValue(nil) {
            try await mapped { [self] in !(try await query(try Self.replay(save)).rows.isEmpty) }
        }
        guard saved else { throw Self.changedMeanwhile }
        held.readings.withLock { $0[key] = sealed }
        held.savedWithoutTheLock.withLock { $0 = true }
        // Stored for good: nothing of this account is left for the
        // transaction to commit. An earlier save under the lock, still
        // held, was replayed after a later one (the body failing next)
        // and found the row changed, by this save, and threw.
        held.lastSave.withLock { if $0?.key == key { $0 = nil } }
    }

    /// `save` made again, only where the row is still what was read under
    /// the lock, or already this save (a COMMIT that went through, its
    /// answer lost with the connection: then a no-op). A row returned when made.
    private static func replay(_ save: HeldLock.Save) throws -> PostgresQuery {
        let (key, keyID, sealed, read) = (save.key, save.keyID, save.sealed, save.read)
        return try """
        UPDATE authkit_credentials SET key_id = \(keyID), sealed = \(sealed), updated_at = now()
        WHERE provider_id = \(key.providerID) AND label = \(key.label ?? "")
            AND (sealed = \(read) OR sealed = \(sealed))
        RETURNING 1
        """
    }

    /// A save made again found the stored credential changed by someone else.
    static let changedMeanwhile = AuthKitError.store(
        path: "the refresh lock",
        reason: .init(
            .inaccessible,
            "its connection was lost during the refresh (the database restarted?), and the stored credential changed meanwhile, so the renewal was not written over it"
        ))

    /// ``keep(_:held:)`` found the row changed, not by this lock's body:
    /// a save made without the lock (``CredentialStore/save(_:)`` from code
    /// that does not take it) came first.
    static let changedOutsideTheLock = AuthKitError.store(
        path: "the refresh lock",
        reason: .init(
            .inaccessible,
            "the stored credential was changed without the lock while the refresh held it, so the renewal was not written over that change"
        ))

    /// Made on the lock's connection once the lock is held, before the body
    /// runs: rolled back to, all the body did is undone (as a rollback of
    /// the whole transaction undid it), the advisory lock (taken before it)
    /// kept, and the transaction usable again even if aborted.
    static let savepoint = "authkit_before_save"

    /// The row of a sealed credential, written or replaced.
    private static func upsert(_ key: CredentialKey, keyID: String, sealed: Data) throws -> PostgresQuery {
        try """
        INSERT INTO authkit_credentials (provider_id, label, key_id, sealed, updated_at)
        VALUES (\(key.providerID), \(key.label ?? ""), \(keyID), \(sealed), now())
        ON CONFLICT (provider_id, label)
        DO UPDATE SET key_id = EXCLUDED.key_id, sealed = EXCLUDED.sealed, updated_at = now()
        """
    }

    @discardableResult
    public func remove(_ key: CredentialKey) async throws -> Credential? {
        // Under the lock, an earlier save of the account is not made again
        // should the transaction not commit (``endKeepingTheSave(_:)``): the
        // replay brought back a credential a sign-out had removed, and said
        // nothing. The transaction's end then fails, as the removal did.
        if let held = Self.heldLock, held.store == ObjectIdentifier(self) {
            held.lastSave.withLock { if $0?.key == key { $0 = nil } }
        }
        return try await mapped { [self] in
            let rows = try await query(
                """
                DELETE FROM authkit_credentials WHERE provider_id = \(key.providerID) AND label = \(key.label ?? "")
                RETURNING key_id, sealed
                """)
            for (keyID, sealed) in try rows.decode((String, Data).self) {
                return try? open(Credential.self, sealed, keyID: keyID, binding: Self.binding(key))
            }
            return nil
        }
    }

    /// Excludes every other refresh of `key`, in this store (a keyed lock,
    /// so that waiters here do not each hold a pooled connection; two stores
    /// in one process exclude each other as two machines do) and
    /// in every process on the database (an advisory lock held by a
    /// transaction while `body` runs). Waiting longer than `timeout` throws
    /// ``AuthKitError`` with a `busy` reason.
    ///
    /// What `body` reads and saves through this store goes over the lock's
    /// own connection (``heldLock``), not a second one from the pool: with
    /// a second, as many refreshes of different accounts as the pool has
    /// connections would each hold one and wait for another until the
    /// operation timeout, and a refresh that had already spent a rotating
    /// refresh token could then not save its successor.
    public func withRefreshLock<Result: Sendable>(
        for key: CredentialKey, timeout: Duration, _ body: @Sendable () async throws -> Result
    ) async throws -> Result {
        try await withLocalLock(of: key, timeout: timeout) { [self] left in
            let started = ContinuousClock.now
            // Fails fast while the database is away (the transaction below
            // would wait for a pooled connection with no deadline). On a
            // pooled connection, not a lock this task already holds (a
            // nested refresh of another account): that one is not watched.
            // Leased as every other statement, so a timeout closes it.
            try await Self.$heldLock.withValue(nil) {
                try await mapped { [self] in try await run("SELECT 1") }
            }
            // Its time counts against the wait, as the local lock's did.
            let waiting = max(left - (ContinuousClock.now - started), .milliseconds(100))
            return try await mapped(lockOf: key, timeout: timeout) {
                try await lockedTransactionOnALentConnection(of: key, waiting: waiting) { _ in try await body() }
            }
        }
    }

    /// The refresh lock this task holds, and the connection its transaction
    /// is on. Task-local, so only `body` of ``withRefreshLock(for:timeout:_:)``
    /// and the tasks it starts and awaits see it; a task that `body` leaves
    /// running past its end must not use the store (its statements would go
    /// to a connection back in the pool).
    @TaskLocal static var heldLock: HeldLock?

    struct HeldLock: Sendable {
        let store: ObjectIdentifier
        let connection: PostgresConnection
        /// The sealed rows read under the lock, by account: what a save
        /// after the connection is lost may replace (``save(_:)``).
        let readings = LockedValue<[CredentialKey: Data]>([:])
        /// Whether such a save has been made: the transaction's end is then
        /// no failure, though its connection is gone.
        let savedWithoutTheLock = LockedValue(false)
        /// Whether a statement on the connection failed in a way that ends
        /// the session (``PostgresStore/endsTheSession(_:)``). The database
        /// says so (FATAL) before the connection is seen closed: in that
        /// moment `isClosed` is still false (CI, one run in several).
        let sessionEnded = LockedValue(false)

        /// Whether a statement on the connection failed with an error of
        /// the database's (an ERROR: `lock_timeout`, a role's
        /// `statement_timeout`): PostgreSQL has aborted the transaction,
        /// and its COMMIT would be answered ROLLBACK, with no error.
        let aborted = LockedValue(false)
        /// Whether the savepoint after the lock has been made
        /// (``PostgresStore/savepoint``).
        let savepointed = LockedValue(false)

        /// The transaction, and the advisory lock with it, is gone.
        var isLost: Bool { connection.isClosed || sessionEnded.current }
        /// The last save made over the lock's connection, to make again
        /// without it should the transaction not commit (its connection
        /// lost before or during the COMMIT).
        let lastSave = LockedValue<Save?>(nil)

        struct Save: Sendable {
            let key: CredentialKey
            let keyID: String
            let sealed: Data
            /// The row as read under the lock, which it may replace.
            let read: Data
        }
    }

    /// A statement's rows, read to the end: over the held lock's connection
    /// when this task holds one in this store, else over a connection
    /// leased for the statement alone, which the operation timeout closes
    /// (``withOperationTimeout(extra:_:)``, through ``statementLease``).
    /// Let go at the timeout, a statement the database never answered (a
    /// frozen backend, a failover to another address) kept its pooled
    /// connection until TCP gave up, a quarter of an hour: the pool filled
    /// with them, and every request answered 503 long after the database
    /// was back.
    private func query(_ statement: PostgresQuery) async throws -> ReadRows {
        if let held = Self.heldLock, held.store == ObjectIdentifier(self) {
            // Closed by a timeout: a statement written to it would never be answered.
            guard !held.isLost else { throw Self.closedLock }
            return try await noting(held) {
                ReadRows(rows: try await held.connection.query(statement, logger: logger).collect())
            }
        }
        let lease = Self.statementLease
        return try await client.withConnection { [logger] connection in
            // A timeout that came first closed nothing: the statement is not sent.
            guard lease?.lend(connection) ?? true else { throw Self.statementTimedOut }
            let read: Result<ReadRows, any Error>
            do {
                read = .success(ReadRows(rows: try await connection.query(statement, logger: logger).collect()))
            } catch {
                read = .failure(error)
            }
            // Timed out while it ran (whatever the statement did since): the
            // connection is closed before the pool has it back, so the
            // timeout's own close never meets another operation's statement.
            // So is one whose caller went: the rows stop being read, but the
            // statement may still be unanswered on it, and the next
            // operation given it waited behind that.
            if lease?.takeBack() == true || Task.isCancelled { try? await connection.close() }
            return try read.get()
        }
    }

    /// A statement run to its end (see `PostgresClient.run`), where ``query(_:)`` sends it.
    private func run(_ statement: PostgresQuery) async throws {
        _ = try await query(statement)
    }

    /// A statement's rows, all read.
    struct ReadRows: Sendable {
        let rows: [PostgresRow]

        func decode<Column: PostgresDecodable>(_ type: Column.Type) throws -> [Column] {
            try rows.map { try $0.decode(type) }
        }

        func decode<each Column: PostgresDecodable>(_ type: (repeat each Column).Type) throws -> [(repeat each Column)]
        {
            try rows.map { try $0.decode(type, context: .default) }
        }
    }

    /// The connection the statement under way in an operation is on, for
    /// its timeout to close (see ``query(_:)``). One per operation, set in
    /// its task by ``withOperationTimeout(extra:_:)``.
    @TaskLocal static var statementLease: StatementLease?

    final class StatementLease: Sendable {
        private let state = LockedValue<(connection: PostgresConnection?, timedOut: Bool)>((nil, false))

        /// Records `connection` as the statement's; false once the operation timed out.
        func lend(_ connection: PostgresConnection) -> Bool {
            state.withLock { state in
                guard !state.timedOut else { return false }
                state.connection = connection
                return true
            }
        }

        /// The statement ended; true when the operation timed out while it
        /// ran: then its connection is closed, not given back open.
        func takeBack() -> Bool {
            state.withLock { state in
                state.connection = nil
                return state.timedOut
            }
        }

        /// The operation timed out (or its caller went): the connection a
        /// statement is on, if any, to close (and no statement starts after).
        func timeOut() -> PostgresConnection? {
            state.withLock { state in
                state.timedOut = true
                return state.connection
            }
        }
    }

    /// What a statement started after its operation's timeout meets.
    static let statementTimedOut = AuthKitError.store(
        path: "the database", reason: .init(.inaccessible, "the operation timed out before this statement was sent"))

    /// `body`, a statement on `held`'s connection, noting in `held` an error
    /// that ended the session.
    private func noting<Result>(_ held: HeldLock, _ body: () async throws -> Result) async throws -> Result {
        do {
            return try await body()
        } catch let error as PSQLError where Self.endsTheSession(error) {
            held.sessionEnded.withLock { $0 = true }
            throw error
        } catch let error as PSQLError where error.code == .server {
            held.aborted.withLock { $0 = true }
            throw error
        }
    }

    /// Whether `error` ends the connection's session, and with it any
    /// transaction and advisory lock it held: the connection was closed or
    /// broken, or the server sent an error of severity FATAL or PANIC (a
    /// restart or `pg_terminate_backend`: SQLSTATE 57P01; PostgreSQL's
    /// protocol, "ErrorResponse": the backend then closes the connection).
    static func endsTheSession(_ error: PSQLError) -> Bool {
        switch error.code {
        case .serverClosedConnection, .clientClosedConnection, .uncleanShutdown, .connectionError: return true
        case .server:
            let severity = error.serverInfo?[.severity] ?? error.serverInfo?[.localizedSeverity]
            return severity == "FATAL" || severity == "PANIC"
        default: return false
        }
    }

    /// A new sign-in's credential saved under the account's lock, in one
    /// transaction on one connection: the advisory lock (waiting for a
    /// refresh under way at most `lockTimeout`), then the upsert, both
    /// released by the commit. The generic way (``withRefreshLock(for:timeout:_:)``
    /// around ``save(_:)``) checked the database with a `SELECT 1`, held the
    /// lock's transaction on one pooled connection and saved on a second:
    /// three round trips and two connections for each web sign-in.
    ///
    /// A credential that came without a refresh token keeps the stored one's
    /// where it is the same account's (Google issues one only at the first
    /// consent), read in the same transaction: one more statement, only then.
    /// A stored row sealed under a key this instance was not given is
    /// replaced, with a warning; one whose columns do not read as AuthKit
    /// writes them (the table changed by hand) fails the save with
    /// `invalidContents`: the schema is the operator's to put back.
    public func saveSignIn(_ credential: Credential, lockTimeout: Duration) async throws {
        let key = credential.key
        let binding = Self.binding(key)
        let (keyID, sealed) = try seal(credential, binding: binding)
        try await withLocalLock(of: key, timeout: lockTimeout) { [self, logger] left in
            try await mapped(lockOf: key, timeout: lockTimeout) {
                // Each statement has its deadline, and one that passes closes
                // the connection (lockedTransaction): the sign-in is then not
                // committed after its caller heard that it failed, unless
                // the COMMIT itself timed out on a backend that holds it.
                // No lent connection: a sign-in's save asks no provider, and
                // queued behind slow refreshes it failed after its code was spent.
                // A pooled connection is waited for no longer than a
                // statement would be: none coming is the database away or
                // the pool full, and a browser waits on this save (with the
                // lock's 60 s, its callback outlived a load balancer's
                // timeout). The advisory lock is still waited for `left`.
                try await lockedTransaction(of: key, waiting: left, leaseWaiting: min(left, operationTimeout)) {
                    connection in
                    var (keyID, sealed) = (keyID, sealed)
                    if credential.refreshToken == nil {
                        let earlier = try await withOperationTimeout { () -> Credential? in
                            let rows = try await connection.query(
                                """
                                SELECT key_id, sealed FROM authkit_credentials
                                WHERE provider_id = \(key.providerID) AND label = \(key.label ?? "")
                                """, logger: logger)
                            var earlier: Credential?
                            // One that does not open (sealed under a key this
                            // instance was not given) is replaced, and said:
                            // refused, the user could not sign in at all until
                            // an operator put the key back. Its refresh token
                            // is lost with it; the warning says whose.
                            for try await (storedKeyID, stored) in rows.decode((String, Data).self) {
                                do {
                                    earlier = try self.open(
                                        Credential.self, stored, keyID: storedKeyID, binding: binding)
                                } catch {
                                    logger.warning(
                                        "[AuthKitPostgres] A sign-in of \(key) replaces the stored credential, which does not open (\(error)); the refresh token it held is lost. Give every instance the key it was sealed under."
                                    )
                                }
                            }
                            return earlier
                        }
                        let kept = credential.keepingRefreshToken(of: earlier)
                        if kept.refreshToken != nil { (keyID, sealed) = try self.seal(kept, binding: binding) }
                    }
                    let upsert = try Self.upsert(key, keyID: keyID, sealed: sealed)
                    try await withOperationTimeout { try await connection.run(upsert, logger: logger) }
                }
            }
        }
    }

    /// `body` once no other task of this process holds `key`'s lock in this
    /// store (a keyed lock, so that waiters here do not each hold a pooled
    /// connection; two stores in one process exclude each other as two
    /// machines do), given what is left of `timeout` (at least 100 ms).
    private func withLocalLock<Result: Sendable>(
        of key: CredentialKey, timeout: Duration, _ body: @Sendable (Duration) async throws -> Result
    ) async throws -> Result {
        let started = ContinuousClock.now
        return try await KeyedAsyncLock.shared.withLock(
            "postgres\u{0}\(ObjectIdentifier(self))\u{0}\(key.providerID)\u{0}\(key.label ?? "")", timeout: timeout,
            what: "the refresh of \(key)"
        ) {
            try await body(max(timeout - (ContinuousClock.now - started), .milliseconds(100)))
        }
    }

    /// `body` in ``lockedTransaction(of:waiting:_:)``, once one of the
    /// ``lockConnections`` is free: the wait for it counts against `waiting`.
    private func lockedTransactionOnALentConnection<Result: Sendable>(
        of key: CredentialKey, waiting: Duration, _ body: @Sendable (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        let started = ContinuousClock.now
        return try await KeyedAsyncLock.shared.withLock(
            "postgres-lock-connections\u{0}\(ObjectIdentifier(self))", holders: lockConnections, timeout: waiting,
            what: "a connection for the refresh of \(key) (\(lockConnections) are lent to refresh locks, all in use)"
        ) {
            try await lockedTransaction(
                of: key, waiting: max(waiting - (ContinuousClock.now - started), .milliseconds(100)),
                savepoint: true, body)
        }
    }

    /// `body` in a transaction holding `key`'s advisory lock, waited for at
    /// most `waiting` (`lock_timeout`: SQLSTATE 55P03 past it); the commit
    /// or rollback releases it. The connection is ``heldLock`` throughout,
    /// and each of the transaction's own statements has the operation
    /// timeout (the lock's, `waiting` more): one that passes closes the
    /// connection, which ends the transaction and the lock.
    /// - Parameter savepoint: make ``savepoint`` once the lock is held, for
    ///   a body that saves through the store (``keep(_:held:)``); a
    ///   sign-in's save, which writes its row itself, needs none.
    /// - Parameter leaseWaiting: how long a pooled connection is waited
    ///   for (`waiting` when not given).
    private func lockedTransaction<Result: Sendable>(
        of key: CredentialKey, waiting: Duration, leaseWaiting: Duration? = nil, savepoint: Bool = false,
        _ body: @Sendable (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        let logger = self.logger
        let started = ContinuousClock.now
        // BEGIN, COMMIT and ROLLBACK written out rather than PostgresNIO's
        // withTransaction: a statement that timed out inside the lock closes
        // this connection (``withOperationTimeout(extra:_:)``), which ends the
        // transaction and the lock, and nothing may then be sent on it:
        // PostgresNIO 1.x writes a statement to a closed connection without
        // ever answering it, so the ROLLBACK withTransaction sends waited for
        // ever (PostgresStoreTests.aSilentDatabaseIsReportedWithinTheTimeout,
        // one run in four).
        let lock = Self.lockNumber(for: key)
        return try await withLeasedConnection(waiting: leaseWaiting ?? waiting) { [self] connection in
            let held = HeldLock(store: ObjectIdentifier(self), connection: connection)
            return try await Self.$heldLock.withValue(held) {
                // Read committed whatever the database's or role's default
                // (a Vapor app's client may set repeatable read): each
                // statement sees what committed before it, so the holder
                // that waited reads the renewal the one before it saved,
                // where a snapshot taken before the lock was granted gave it
                // the spent refresh token, and its save then failed (40001).
                try await withOperationTimeout {
                    try await connection.run("BEGIN ISOLATION LEVEL READ COMMITTED", logger: logger)
                }
                // The lease's wait and the BEGIN count against the lock's:
                // `waiting` bounds the whole wait, as its caller was told.
                let left = max(waiting - (ContinuousClock.now - started), .milliseconds(100))
                // PostgreSQL's lock_timeout is an int of milliseconds: a wait set
                // far off to mean none (`.seconds(1 << 60)`) overflowed Int here.
                let milliseconds = "\(left.int32Milliseconds ?? Int(Int32.max))ms"
                let result: Result
                do {
                    // A holder that vanished without closing its connection (power
                    // lost, a partition) would otherwise keep the lock until TCP
                    // keepalive gives up, two hours by default: the server ends a
                    // transaction left idle longer than any refresh takes (a token
                    // endpoint call is cut at 30 s, with one DPoP nonce retry at most).
                    try await withOperationTimeout {
                        try await connection.run(
                            """
                            SELECT set_config('lock_timeout', \(milliseconds), true),
                                set_config('idle_in_transaction_session_timeout', '120s', true)
                            """, logger: logger)
                    }
                    try await withOperationTimeout(extra: left) {
                        try await connection.run("SELECT pg_advisory_xact_lock(\(lock))", logger: logger)
                    }
                    if savepoint {
                        try await withOperationTimeout {
                            try await connection.run("SAVEPOINT \(unescaped: Self.savepoint)", logger: logger)
                        }
                        held.savepointed.withLock { $0 = true }
                    }
                    result = try await body(connection)
                } catch {
                    // A save `body` made before it failed is kept, as the
                    // other stores keep it (their saves are written at once):
                    // a refresh saved before a revocation failed
                    // (CredentialSource.revoke) was rolled back, and the
                    // stored refresh token was the one the provider had
                    // rotated away (RFC 9700 §4.14.2). The body's error is
                    // thrown, unless keeping the save failed. Rolled back and
                    // made again where the row is still what was read, not
                    // committed: an error of the database's own (a role's
                    // statement_timeout) aborts the transaction, whose COMMIT
                    // is then answered ROLLBACK, with no error.
                    if let save = held.lastSave.current {
                        try await Task { try await keep(save, held: held) }.value
                    } else if held.isLost {
                        try? await connection.close()
                    } else {
                        try? await withOperationTimeout { try await connection.run("ROLLBACK", logger: logger) }
                    }
                    throw error
                }
                // The body caught an error of the database's after a save:
                // the transaction is aborted, and its COMMIT would undo the
                // save with no error.
                if held.aborted.current, let save = held.lastSave.current {
                    try await Task { try await keep(save, held: held) }.value
                } else {
                    try await endKeepingTheSave(held)
                }
                return result
            }
        }
    }

    /// Ends a locked transaction that cannot be committed as it is (its
    /// body failed, or the database aborted it) keeping `save`: rolled back
    /// to the savepoint made once the lock was held, the save made again on the
    /// lock's connection and committed, so the lock is held until the save
    /// is stored. The whole transaction rolled back released the lock
    /// first, and another instance waiting for it read the spent refresh
    /// token before the save was made again elsewhere, and sent it (RFC
    /// 9700 §4.14.2). Where that cannot be done (the connection lost, a
    /// statement failing), the save is made again without the lock
    /// (``saveAfterLosingTheLock(_:held:)``).
    private func keep(_ save: HeldLock.Save, held: HeldLock) async throws {
        let (connection, logger) = (held.connection, logger)
        if held.savepointed.current, !held.isLost {
            do {
                try await withOperationTimeout {
                    try await connection.run("ROLLBACK TO SAVEPOINT \(unescaped: Self.savepoint)", logger: logger)
                }
                let made = try await withOperationTimeout {
                    try await connection.query(try Self.replay(save), logger: logger).collect()
                }
                guard !made.isEmpty else {
                    try? await withOperationTimeout { try await connection.run("ROLLBACK", logger: logger) }
                    throw Self.changedOutsideTheLock
                }
                try await withOperationTimeout { try await connection.run("COMMIT", logger: logger) }
                held.lastSave.withLock { $0 = nil }
                return
            } catch let error as AuthKitError where error == Self.changedOutsideTheLock {
                throw error
            } catch {
                try? await connection.close()
            }
        } else if held.isLost {
            try? await connection.close()
        } else {
            try? await withOperationTimeout { try await connection.run("ROLLBACK", logger: logger) }
        }
        try await saveAfterLosingTheLock(save, held: held)
    }

    /// Ends the locked transaction with what it saved: committed, or, its
    /// connection lost before or during the COMMIT, the last save made
    /// again without the lock (``saveAfterLosingTheLock(_:held:)``).
    ///
    /// Out of reach of the caller's cancellation: `body` has run, and may
    /// have saved a refresh's rotated token, whose predecessor the provider
    /// has spent (RFC 9700 §4.14.2). In the caller's task, the cancellation
    /// closed the connection under the COMMIT, which then often undid the
    /// save; and a cancelled caller's timeout ended the replay at once.
    private func endKeepingTheSave(_ held: HeldLock) async throws {
        let (connection, logger) = (held.connection, logger)
        try await Task { [self] in
            guard !held.isLost else {
                // Ended by the database, the connection may not be closed
                // yet: closed before it goes back to the pool, where the
                // next refresh's BEGIN would find it dead.
                try? await connection.close()
                // A save made without the lock cleared its account's: what
                // is left is another account's, made again; with none left,
                // done if anything was saved that way, else nothing was kept.
                guard let save = held.lastSave.current else {
                    if held.savedWithoutTheLock.current { return }
                    throw Self.closedLock
                }
                try await saveAfterLosingTheLock(save, held: held)
                return
            }
            do {
                try await withOperationTimeout { try await connection.run("COMMIT", logger: logger) }
            } catch {
                try? await connection.close()
                guard let save = held.lastSave.current else { throw error }
                try await saveAfterLosingTheLock(save, held: held)
            }
        }.value
    }

    /// A statement inside the lock timed out and its connection was closed,
    /// or the database closed it: the transaction ended with it, uncommitted.
    static let closedLock = AuthKitError.store(
        path: "the refresh lock",
        reason: .init(
            .inaccessible,
            "its connection was closed (a statement timed out, or the database restarted), so nothing done under it was committed; retry when the database answers"
        ))

    /// 64 bits of SHA-256 over the key: the advisory lock's number.
    static func lockNumber(for key: CredentialKey) -> Int64 {
        let digest = Array(SHA256.hash(data: Data("authkit-refresh\u{0}\(key.providerID)\u{0}\(key.label ?? "")".utf8)))
        return digest.prefix(8).reduce(Int64(0)) { ($0 << 8) | Int64($1) }
    }

    static func binding(_ key: CredentialKey) -> String {
        "authkit_credentials\u{0}\(key.providerID)\u{0}\(key.label ?? "")"
    }

    /// Expired rows of `table` (an hour past expiry, by the database's
    /// clock), at most ``sweptPerInsert`` of them, skipping rows another
    /// instance's sweep holds. One unbounded DELETE after a flood of
    /// started, never finished sign-ins (hundreds of thousands of rows)
    /// passed the operation timeout, failed the insert, and every insert
    /// meanwhile ran the same DELETE, blocked on the same rows, each holding
    /// a pooled connection. Bounded, the backlog goes with the inserts that follow.
    static func sweep(_ table: SweptTable) -> PostgresQuery {
        // Written out whole: no table name is ever spliced into SQL.
        switch table {
        case .attempts:
            """
            DELETE FROM authkit_sign_in_attempts WHERE id IN (
                SELECT id FROM authkit_sign_in_attempts WHERE expires_at < now() - interval '1 hour'
                LIMIT \(sweptPerInsert) FOR UPDATE SKIP LOCKED)
            """
        case .sessions:
            """
            DELETE FROM authkit_sessions WHERE id IN (
                SELECT id FROM authkit_sessions WHERE expires_at < now() - interval '1 hour'
                LIMIT \(sweptPerInsert) FOR UPDATE SKIP LOCKED)
            """
        }
    }

    enum SweptTable { case attempts, sessions }

    /// Removes, a batch at a time, the attempts that expire first beyond
    /// the newest `limit`: the expiry of the row at position `limit` is found
    /// by the expiry index (no row locked: `OFFSET` under `FOR UPDATE` locks
    /// every row it skips, live sign-ins among them), then rows at or before
    /// it go, skipping those a callback or another trim holds.
    static func trim(toNewest limit: Int) -> PostgresQuery {
        """
        DELETE FROM authkit_sign_in_attempts WHERE id IN (
            SELECT id FROM authkit_sign_in_attempts
            WHERE expires_at <= (
                SELECT expires_at FROM authkit_sign_in_attempts ORDER BY expires_at DESC OFFSET \(limit) LIMIT 1)
            ORDER BY expires_at LIMIT \(trimmedPerPass) FOR UPDATE SKIP LOCKED)
        """
    }

    /// Rows a trim removes at most: ten times what the inserts between two
    /// trims add, so a flood cannot outrun it.
    static let trimmedPerPass = 1000

    /// Inserts between two trims of one instance: a trim reads up to `limit`
    /// index entries, so not at every insert; a tenth of a small limit, so
    /// it holds.
    static func trimInterval(for limit: Int) -> Int { min(100, max(1, limit / 10)) }

    /// Expired rows removed by each insert: more than one, so a backlog shrinks.
    static let sweptPerInsert = 100

    // MARK: - WebSignInStore: sign-in attempts

    public func insert(_ attempt: SignInAttempt, id: String) async throws {
        let (keyID, sealed) = try seal(attempt, binding: "authkit_sign_in_attempts\u{0}" + id)
        try await mapped { [self] in
            // Expired attempts go as new ones come: the table holds what is
            // pending. An hour past expiry, by the database's clock: an
            // attempt's expiry is written by the instance's clock, and one
            // an instance a few minutes behind wrote would be swept before
            // its callback came (expiry itself is judged when read).
            try await run(Self.sweep(.attempts))
            try await run(
                """
                INSERT INTO authkit_sign_in_attempts (id, key_id, sealed, expires_at)
                VALUES (\(id), \(keyID), \(sealed), \(attempt.expiresAt))
                """)
        }
        let limit = pendingSignInLimit
        let due = insertsSinceTrim.withLock { count in
            count += 1
            guard count >= Self.trimInterval(for: limit) else { return false }
            count = 0
            return true
        }
        guard due else { return }
        // The attempt is saved: a trim that fails does not fail its sign-in
        // (the next one tries again).
        do {
            try await mapped { [self] in try await run(Self.trim(toNewest: limit)) }
        } catch {
            logger.warning("Could not trim the pending sign-ins in \(display) to \(limit): \(error)")
        }
    }

    /// `DELETE … RETURNING`: of two callbacks at once, one gets the row.
    public func takeAttempt(id: String, now: Date) async throws -> SignInAttempt? {
        try await mapped { [self] in
            try await attempt(
                in: try await query("DELETE FROM authkit_sign_in_attempts WHERE id = \(id) RETURNING key_id, sealed"),
                id: id, now: now)
        }
    }

    /// Read in place (a callback is checked before its attempt is taken).
    public func attempt(id: String, now: Date) async throws -> SignInAttempt? {
        try await mapped { [self] in
            try await attempt(
                in: try await query("SELECT key_id, sealed FROM authkit_sign_in_attempts WHERE id = \(id)"),
                id: id, now: now)
        }
    }

    /// The attempt a row of `rows` seals, unless it expired before `now`.
    private func attempt(in rows: ReadRows, id: String, now: Date) async throws -> SignInAttempt? {
        for (keyID, sealed) in try rows.decode((String, Data).self) {
            guard
                let attempt = try opened(
                    SignInAttempt.self, sealed, keyID: keyID, binding: "authkit_sign_in_attempts\u{0}" + id)
            else { return nil }
            return attempt.expiresAt > now ? attempt : nil
        }
        return nil
    }

    // MARK: - WebSignInStore: sessions

    public func insert(_ session: WebSession, id: String) async throws {
        let (keyID, sealed) = try seal(session, binding: "authkit_sessions\u{0}" + id)
        try await mapped { [self] in
            // As for attempts: an hour's margin between the instances' clocks and the database's.
            try await run(Self.sweep(.sessions))
            try await run(
                """
                INSERT INTO authkit_sessions (id, key_id, sealed, expires_at, user_digest)
                VALUES (\(id), \(keyID), \(sealed), \(session.expiresAt), \(Self.digest(of: session.user)))
                """)
        }
        // The user's sessions past the newest `sessionsPerUser` (by the owner
        // index: a few rows, not the table). The session is saved: a trim
        // that fails does not fail its sign-in (the next one tries again).
        // Rows another trim or a sign-out everywhere holds are skipped (it
        // deletes them, or they stay for the next trim): locked in no order,
        // two such deletes deadlocked (40P01), and the sign-out failed.
        do {
            try await mapped { [self] in
                try await run(
                    """
                    DELETE FROM authkit_sessions WHERE id IN (
                        SELECT id FROM authkit_sessions WHERE user_digest = \(Self.digest(of: session.user))
                        ORDER BY expires_at DESC, id OFFSET \(sessionsPerUser) FOR UPDATE SKIP LOCKED)
                    """)
            }
        } catch {
            logger.warning("Could not trim a user's sessions in \(display) to \(sessionsPerUser): \(error)")
        }
    }

    public func session(id: String, now: Date) async throws -> WebSession? {
        try await mapped { [self] in
            let rows = try await query(
                "SELECT key_id, sealed FROM authkit_sessions WHERE id = \(id)")
            for (keyID, sealed) in try rows.decode((String, Data).self) {
                guard
                    let session = try opened(
                        WebSession.self, sealed, keyID: keyID, binding: "authkit_sessions\u{0}" + id)
                else { return nil }
                return session.expiresAt > now ? session : nil
            }
            return nil
        }
    }

    public func removeSession(id: String) async throws {
        try await mapped { [self] in
            try await run("DELETE FROM authkit_sessions WHERE id = \(id)")
        }
    }

    public func removeSessions(of user: SignedInUser) async throws {
        try await mapped { [self] in
            try await run("DELETE FROM authkit_sessions WHERE user_digest = \(Self.digest(of: user))")
        }
    }

    /// Whose a session is, as its row says: SHA-256 of the user's credential
    /// key (no provider's user id in the clear beside the sealed value).
    static func digest(of user: SignedInUser) -> String {
        Hex.encode(SHA256.hash(data: Data(binding(user.credentialKey).utf8)))
    }

    // MARK: - Key rotation

    /// Seals again, under the current key (``TokenEncryption/currentKeyID``),
    /// every credential, pending sign-in and session stored under one of
    /// this store's older keys: the step of a rotation after which they can
    /// be dropped. Saving alone never got there: a credential is sealed
    /// anew only when it is refreshed (one that never is, never), a
    /// session never.
    ///
    /// Rotating: give every instance the new key first and the old ones
    /// after it; run this once (`authkit-web-example --reseal`); when
    /// ``rowsPerKey()`` names no older key, drop them.
    ///
    /// It runs beside a live site: rows are read a batch at a time in key
    /// order, and each is written only if it is still what was read (a
    /// refresh or sign-in that saved it meanwhile sealed it itself). Each
    /// value is opened and sealed again as it is, never decoded. Sign-ins
    /// and sessions past their expiry are left to the sweeps.
    /// - Returns: how many rows were sealed again.
    /// - Throws: ``AuthKitError``, after every other row
    ///   is done: `invalidContents` when a credential does not open (sealed
    ///   under a key this process was not given, or altered; those rows are
    ///   left as they are); `busy` when rows were left under an older key: a
    ///   credential whose refresh lock another holds (its refresh finds the
    ///   row by the bytes it read, when its connection is lost), or rows
    ///   sealed under an older key while it ran (an instance not yet given
    ///   the new key first): run it again. A session or sign-in that does
    ///   not open already reads as absent (``session(id:now:)``) and is left
    ///   to expire.
    @discardableResult
    public func reseal() async throws -> Int {
        var pass = ResealPass()
        try await resealCredentials(&pass)
        try await resealExpiring(.attempts, &pass)
        try await resealExpiring(.sessions, &pass)
        let current = encryption.currentKeyID
        let resealed = Self.rows(pass.resealed)
        logger.info("Sealed \(resealed) of \(display) again under the key '\(current)'.")
        if !pass.unopenedCredentials.isEmpty {
            let named = pass.unopenedCredentials.sorted { $0.key < $1.key }.map { keyID, count in
                encryption.holds(keyID)
                    ? "\(count) under '\(keyID)' altered or moved (they do not open with it)"
                    : "\(count) under '\(keyID)', which this process was not given (add it after the current key and run again)"
            }
            let unopened = pass.unopenedCredentials.values.reduce(0, +)
            throw AuthKitError.store(
                path: display,
                reason: .init(
                    .invalidContents,
                    "\(resealed) sealed again under '\(current)', but \(unopened) credential\(unopened == 1 ? "" : "s") did not open and \(unopened == 1 ? "is" : "are") left as \(unopened == 1 ? "it is" : "they are"): \(named.joined(separator: "; ")) (SELECT provider_id, label FROM authkit_credentials WHERE key_id = …)"
                ))
        }
        // Rows under an older key now, beyond those that do not open: written while this ran.
        let older = Set(encryption.olderKeyIDs)
        let left = try await rowsPerKey().filter { older.contains($0.key) }.map { keyID, count in
            (keyID, count - pass.unopened(under: keyID))
        }.filter { $0.1 > 0 }.sorted { $0.0 < $1.0 }
        if !left.isEmpty {
            throw AuthKitError.store(
                path: display,
                reason: .init(
                    .busy,
                    "\(resealed) sealed again under '\(current)', but \(left.map { "\($0.1) under '\($0.0)'" }.joined(separator: ", ")) still: held by a refresh under way, or sealed while this ran by an instance not yet given '\(current)' first. Run this again (once every instance has '\(current)' first)"
                ))
        }
        return pass.resealed
    }

    /// How many rows each key id seals: every credential, and the sign-ins
    /// and sessions the sweeps have not yet removed. A key no row names can
    /// be dropped (``reseal()``).
    public func rowsPerKey() async throws -> [String: Int] {
        try await mapped { [self] in
            let rows = try await query(
                """
                SELECT key_id, count(*) FROM (
                    SELECT key_id FROM authkit_credentials
                    UNION ALL SELECT key_id FROM authkit_sign_in_attempts WHERE expires_at > now() - interval '1 hour'
                    UNION ALL SELECT key_id FROM authkit_sessions WHERE expires_at > now() - interval '1 hour'
                ) AS sealed GROUP BY key_id
                """)
            var counts = [String: Int]()
            for (keyID, count) in try rows.decode((String, Int).self) { counts[keyID] = count }
            return counts
        }
    }

    /// What ``reseal()`` has done so far.
    struct ResealPass {
        var resealed = 0
        /// Credentials that do not open, by the key id their row names.
        var unopenedCredentials: [String: Int] = [:]
        /// Sign-ins and sessions under a key this store holds that do not open with it.
        var unopenedOthers: [String: Int] = [:]

        func unopened(under keyID: String) -> Int {
            unopenedCredentials[keyID, default: 0] + unopenedOthers[keyID, default: 0]
        }
    }

    /// "1 row", "2 rows".
    static func rows(_ count: Int) -> String { count == 1 ? "1 row" : "\(count) rows" }

    /// Rows read, and written, per statement.
    static let resealBatch = 100

    private func resealCredentials(_ pass: inout ResealPass) async throws {
        let current = encryption.currentKeyID
        var after: (provider: String, label: String)?
        while true {
            let batch = try await mapped { [self, after] () -> [(String, String, String, Data)] in
                let rows =
                    if let after {
                        try await query(
                            """
                            SELECT provider_id, label, key_id, sealed FROM authkit_credentials
                            WHERE key_id <> \(current) AND (provider_id, label) > (\(after.provider), \(after.label))
                            ORDER BY provider_id, label LIMIT \(Self.resealBatch)
                            """)
                    } else {
                        try await query(
                            """
                            SELECT provider_id, label, key_id, sealed FROM authkit_credentials
                            WHERE key_id <> \(current) ORDER BY provider_id, label LIMIT \(Self.resealBatch)
                            """)
                    }
                return try rows.decode((String, String, String, Data).self)
            }
            guard let last = batch.last else { return }
            after = (last.0, last.1)
            var (providers, labels, read, written) = ([String](), [String](), [ByteBuffer](), [ByteBuffer]())
            var locks = [Int64]()
            for (provider, label, keyID, sealed) in batch {
                let binding = Self.binding(CredentialKey(providerID: provider, label: label))
                guard let fresh = try? encryption.resealed(sealed, keyID: keyID, binding: binding) else {
                    pass.unopenedCredentials[keyID, default: 0] += 1
                    continue
                }
                providers.append(provider)
                labels.append(label)
                locks.append(Self.lockNumber(for: CredentialKey(providerID: provider, label: label)))
                read.append(ByteBuffer(bytes: sealed))
                written.append(ByteBuffer(bytes: fresh))
            }
            guard !providers.isEmpty else { continue }
            // `updated_at` stays: it says when the credential was saved. A
            // row whose refresh lock another holds is left for a later pass
            // (said as `busy`): that refresh read the sealed bytes, and its
            // save after a lost connection finds the row by them; sealed
            // anew meanwhile, the rotated refresh token it carries was refused.
            pass.resealed += try await mapped { [self, providers, labels, locks, read, written] in
                count(
                    try await query(
                        """
                        UPDATE authkit_credentials AS row SET key_id = \(current), sealed = fresh.sealed
                        FROM unnest(\(providers), \(labels), \(locks), \(read), \(written))
                            AS fresh(provider_id, label, lock, read, sealed)
                        WHERE row.provider_id = fresh.provider_id AND row.label = fresh.label AND row.sealed = fresh.read
                            AND pg_try_advisory_xact_lock(fresh.lock)
                        RETURNING 1
                        """))
            }
        }
    }

    /// Sign-ins or sessions, as ``resealCredentials(_:)`` does credentials;
    /// one that does not open is left (it reads as absent already).
    private func resealExpiring(_ table: SweptTable, _ pass: inout ResealPass) async throws {
        let current = encryption.currentKeyID
        var after = ""
        while true {
            let batch = try await mapped { [self, after] () -> [(String, String, Data)] in
                // Written out whole, as the sweeps are: no table name is spliced into SQL.
                let rows =
                    switch table {
                    case .attempts:
                        try await query(
                            """
                            SELECT id, key_id, sealed FROM authkit_sign_in_attempts
                            WHERE key_id <> \(current) AND expires_at > now() - interval '1 hour' AND id > \(after)
                            ORDER BY id LIMIT \(Self.resealBatch)
                            """)
                    case .sessions:
                        try await query(
                            """
                            SELECT id, key_id, sealed FROM authkit_sessions
                            WHERE key_id <> \(current) AND expires_at > now() - interval '1 hour' AND id > \(after)
                            ORDER BY id LIMIT \(Self.resealBatch)
                            """)
                    }
                return try rows.decode((String, String, Data).self)
            }
            guard let last = batch.last else { return }
            after = last.0
            var (ids, read, written) = ([String](), [ByteBuffer](), [ByteBuffer]())
            for (id, keyID, sealed) in batch {
                let binding = (table == .attempts ? "authkit_sign_in_attempts\u{0}" : "authkit_sessions\u{0}") + id
                guard let fresh = try? encryption.resealed(sealed, keyID: keyID, binding: binding) else {
                    if encryption.holds(keyID) { pass.unopenedOthers[keyID, default: 0] += 1 }
                    continue
                }
                ids.append(id)
                read.append(ByteBuffer(bytes: sealed))
                written.append(ByteBuffer(bytes: fresh))
            }
            guard !ids.isEmpty else { continue }
            pass.resealed += try await mapped { [self, ids, read, written] in
                switch table {
                case .attempts:
                    count(
                        try await query(
                            """
                            UPDATE authkit_sign_in_attempts AS row SET key_id = \(current), sealed = fresh.sealed
                            FROM unnest(\(ids), \(read), \(written)) AS fresh(id, read, sealed)
                            WHERE row.id = fresh.id AND row.sealed = fresh.read
                            RETURNING 1
                            """))
                case .sessions:
                    count(
                        try await query(
                            """
                            UPDATE authkit_sessions AS row SET key_id = \(current), sealed = fresh.sealed
                            FROM unnest(\(ids), \(read), \(written)) AS fresh(id, read, sealed)
                            WHERE row.id = fresh.id AND row.sealed = fresh.read
                            RETURNING 1
                            """))
                }
            }
        }
    }

    /// The rows a statement returned, counted.
    private func count(_ rows: ReadRows) -> Int { rows.rows.count }

    // MARK: - Sealing, and errors

    private func seal(_ value: some Encodable, binding: String) throws -> (keyID: String, sealed: Data) {
        try encryption.seal(try JSONEncoder().encode(value), binding: binding)
    }

    /// A session or a sign-in attempt, or `nil` (with a warning) for one
    /// that does not open: sealed with a key no longer configured (the keys
    /// rotated sooner than sessions last), or altered. Such a row signs
    /// nobody in; answered as an error, it made every request of that
    /// browser fail until the row expired, sign-out included. It is left
    /// in place (it goes when it expires): a deployment that lost a key by
    /// mistake gets its sessions back with the key. Credentials are not
    /// read this way: a credential that does not open is an error to see.
    private func opened<Value: Decodable>(_ type: Value.Type, _ sealed: Data, keyID: String, binding: String) throws
        -> Value?
    {
        do {
            return try open(type, sealed, keyID: keyID, binding: binding)
        } catch let error as AuthKitError where error.code == .storeInvalidContents {
            guard case .store(_, let reason) = error.reason else { throw error }
            logger.warning(
                "A \(type == WebSession.self ? "session" : "sign-in attempt") in \(display) does not open (\(reason.detail)); taken as absent."
            )
            return nil
        }
    }

    private func open<Value: Decodable>(_ type: Value.Type, _ sealed: Data, keyID: String, binding: String) throws
        -> Value
    {
        do {
            return try JSONDecoder().decode(type, from: try encryption.open(sealed, keyID: keyID, binding: binding))
        } catch let error as AuthKitError {
            throw AuthKitError.store(path: display, reason: .init(.invalidContents, "\(error)"))
        } catch {
            throw AuthKitError.store(path: display, reason: .init(.invalidContents, "a stored value is not readable"))
        }
    }

    /// `body` on a pooled connection leased within `waiting`.
    ///
    /// PostgresNIO's pool queues a lease with no deadline: while the
    /// database was away, a sign-in's save (which asks nothing of it before
    /// its transaction) waited until the pool's circuit breaker tripped, a
    /// minute, and then failed with the pool's own error. Past `waiting`,
    /// the lease is cancelled and the caller told; once leased, `body` runs
    /// to its end. An error before the lease is the pool's, said as the
    /// store's; `body`'s pass through.
    private func withLeasedConnection<Result: Sendable>(
        waiting: Duration, _ body: @Sendable (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        // Decided once, under a lock: the lease came first (and `body`
        // runs), or the deadline did (and `body` never does, should the
        // connection come a moment later: it goes back to the pool).
        let lease = LockedValue(LeaseState.waiting)
        let display = self.display
        let noConnection = AuthKitError.store(
            path: display,
            reason: .init(
                .inaccessible,
                "no connection to the database came within \(waiting.spoken): none was free or could be opened; is it running, or are all of the pool's connections in use? Retry when it is back"
            ))
        do {
            // The group awaits both children before it returns: `body` is
            // not kept past this call.
            return try await withoutActuallyEscaping(body) { body in
                try await withThrowingTaskGroup(of: Result?.self) { [client] group in
                    group.addTask {
                        try await client.withConnection { connection in
                            let first = lease.withLock { state -> Bool in
                                guard state == .waiting else { return false }
                                state = .leased
                                return true
                            }
                            guard first else { throw noConnection }
                            return try await body(connection)
                        }
                    }
                    group.addTask {
                        try await Task.sleep(for: waiting)
                        let late = lease.withLock { state -> Bool in
                            guard state == .waiting else { return false }
                            state = .givenUp
                            return true
                        }
                        // Leased in time: `body` is under way, and ends by itself.
                        if late { throw noConnection }
                        return nil
                    }
                    defer { group.cancelAll() }
                    while let next = try await group.next() {
                        if let next { return next }
                    }
                    throw CancellationError()
                }
            }
        } catch {
            // After the lease, `body`'s own error.
            if lease.current == .leased || error is AuthKitError { throw error }
            if Task.isCancelled || error is CancellationError { throw CancellationError() }
            throw AuthKitError.store(
                path: display,
                reason: .init(
                    .inaccessible,
                    "no connection to the database (\(type(of: error))); is it running? Retry when it is back"))
        }
    }

    /// Where ``withLeasedConnection(waiting:_:)``'s lease stands.
    private enum LeaseState { case waiting, leased, givenUp }

    /// PostgresNIO's errors as AuthKit's: the database named (never its
    /// password), what went wrong, and nothing of the query's values.
    private func mapped<Result: Sendable>(
        extra: Duration = .zero, _ body: @escaping @Sendable () async throws -> Result
    ) async throws -> Result {
        do {
            return try await withOperationTimeout(extra: extra, body)
        } catch let error as AuthKitError {
            throw error
        } catch let error as PSQLError {
            throw AuthKitError.store(path: display, reason: Self.reason(error))
        } catch let error as PostgresTransactionError {
            throw Self.underlying(error).map { AuthKitError.store(path: display, reason: Self.reason($0)) }
                ?? AuthKitError.store(path: display, reason: .init(.inaccessible, "a transaction failed"))
        } catch let error as PostgresDecodingError {
            throw invalidRow(error)
        } catch is CancellationError {
            throw AuthKitError.cancelled
        } catch {
            throw AuthKitError.store(
                path: display, reason: .init(.inaccessible, "the database did not answer (\(type(of: error)))"))
        }
    }

    /// A row of another shape than AuthKit wrote (a column changed by
    /// hand): the data's problem, not an outage to retry. Named by column
    /// and types only; the value may be a sealed secret (PostgresNIO's own
    /// description of the error carries it).
    private func invalidRow(_ error: PostgresDecodingError) -> AuthKitError {
        AuthKitError.store(
            path: display,
            reason: .init(
                .invalidContents,
                "a row's \(error.columnName) (\(error.postgresType)) does not read as the \(error.targetType) AuthKit writes there: the table was changed outside AuthKit"
            ))
    }

    /// As ``mapped(_:)`` without the operation timeout (`body` is the
    /// refresh, a request to the provider), and a lock wait that timed out
    /// (SQLSTATE 55P03) says so. Errors of `body` pass through.
    private func mapped<Result>(lockOf key: CredentialKey, timeout: Duration, _ body: () async throws -> Result)
        async throws -> Result
    {
        func refusal(_ psql: PSQLError) -> AuthKitError {
            // 55P03: `lock_timeout` passed. 57014: a `statement_timeout` the
            // database's administrator set passed first, in the same wait.
            guard let state = psql.serverInfo?[.sqlState], state == "55P03" || state == "57014" else {
                return .store(path: display, reason: Self.reason(psql))
            }
            if state == "57014" {
                return .store(
                    path: "the refresh of \(key)",
                    reason: .init(
                        .busy,
                        "the wait for it (another instance holds it) was ended by the database's statement_timeout, or cancelled there; try again."
                    ))
            }
            return .store(
                path: "the refresh of \(key)",
                reason: .init(.busy, "another instance has held it for more than \(timeout); try again."))
        }
        do {
            return try await body()
        } catch let error as PostgresTransactionError {
            if let closure = error.closureError, !(closure is PSQLError) { throw closure }
            guard let psql = Self.underlying(error) else {
                throw AuthKitError.store(path: display, reason: .init(.inaccessible, "a transaction failed"))
            }
            throw refusal(psql)
        } catch let error as PSQLError {
            throw refusal(error)
        } catch let error as PostgresDecodingError {
            // A sign-in's read of the stored row (saveSignIn), in the lock's transaction.
            throw invalidRow(error)
        } catch is CancellationError {
            throw AuthKitError.cancelled
        }
    }

    /// The PostgreSQL error inside a failed transaction.
    static func underlying(_ error: PostgresTransactionError) -> PSQLError? {
        [error.beginError, error.closureError, error.commitError, error.rollbackError].lazy.compactMap {
            $0 as? PSQLError
        }.first
    }

    /// `body`, or an error once ``operationTimeout`` has passed.
    ///
    /// At the deadline the caller is answered at once and `body` is let go
    /// (cancelled, to end when its statement does): PostgresNIO's statements
    /// do not stop when cancelled, and a task group waits for every child,
    /// so a database that stopped answering without closing its connections
    /// (a partition, a failover that moved its address) held the caller
    /// until TCP gave up, a quarter of an hour.
    private func withOperationTimeout<Result: Sendable>(
        extra: Duration = .zero, _ body: @escaping @Sendable () async throws -> Result
    ) async throws -> Result {
        let timeout = operationTimeout + extra
        let display = self.display
        // Inside a refresh lock, the statement runs on the lock's connection.
        // Let go there, it could run after the lock's transaction ended (on
        // a connection back in the pool), and the transaction's rollback
        // would wait behind it: so that connection is closed, which ends the
        // statement, the transaction and the lock with it.
        let held = Self.heldLock.flatMap { $0.store == ObjectIdentifier(self) ? $0.connection : nil }
        let outcome = FirstOutcome<Result>()
        // Outside a lock, each statement leases a connection of its own: the
        // one under way when the time is up is closed too (see `query`).
        let lease = StatementLease()
        let workEnded = LockedValue(false)
        let work = Task {
            // Ended before the outcome is settled: the caller, woken by it,
            // then sees it ended and stops the timer (set after, its check
            // read false, and a timer slept out every statement's timeout).
            let result: Swift.Result<Result, any Error>
            do {
                result = .success(try await Self.$statementLease.withValue(lease) { try await body() })
            } catch {
                result = .failure(error)
            }
            workEnded.withLock { $0 = true }
            outcome.settle(with: result)
        }
        // The lock's connection is closed before the caller hears of the
        // timeout: its transaction then sends ROLLBACK to a closed connection,
        // which fails at once. Sent to one still closing, PostgresNIO 1.x
        // never answered it, and the caller waited for ever (seen one run in
        // four of PostgresStoreTests.aSilentDatabaseIsReportedWithinTheTimeout).
        let closeHeld: @Sendable () async -> Void = {
            if let held { try? await held.close() }
            if let leased = lease.timeOut() { try? await leased.close() }
        }
        let timer = Task {
            try await Task.sleep(for: timeout)
            let first = await outcome.settle(
                with: .failure(
                    AuthKitError.store(
                        path: display,
                        reason: .init(
                            .inaccessible,
                            "the database did not answer within \(timeout); is it running? Retry when it is back"))),
                after: closeHeld)
            // The caller went first (cancelled): a statement still under way
            // has its connection closed all the same.
            if !first, let leased = lease.timeOut() { try? await leased.close() }
        }
        // A statement sent as the database ended the session (its FATAL
        // error on the way) is never answered by PostgresNIO 1.x either,
        // though the connection is then seen closed within milliseconds: a
        // COMMIT waited the whole timeout before its save was made again
        // (PostgresStoreTests.aSaveRacingTheEndOfTheLocksSessionIsKept).
        let watcher = Task {
            guard let held else { return }
            while !held.isClosed { try await Task.sleep(for: .milliseconds(20)) }
            // A statement that was answered just before the close (a COMMIT,
            // then a restart) settles first: its answer is the outcome.
            try await Task.sleep(for: .milliseconds(200))
            outcome.settle(with: .failure(Self.closedLock))
        }
        defer {
            work.cancel()
            // A caller that went (cancelled) before its statement ended
            // leaves the timer running: a statement the database never
            // answers still has its connection closed at the deadline
            // (PostgresNIO does not stop one when its task is cancelled).
            if held != nil || workEnded.current { timer.cancel() }
            watcher.cancel()
        }
        return try await withTaskCancellationHandler {
            try await outcome.value
        } onCancel: {
            if held == nil {
                outcome.settle(with: .failure(CancellationError()))
            } else {
                Task { await outcome.settle(with: .failure(CancellationError()), after: closeHeld) }
            }
        }
    }

    static func reason(_ error: PSQLError) -> AuthKitError.StoreProblem {
        if let state = error.serverInfo?[.sqlState], let message = error.serverInfo?[.message] {
            return .init(.inaccessible, "PostgreSQL refused: \(message) (SQLSTATE \(state))")
        }
        return .init(
            .inaccessible, "the database is unreachable or closed the connection (\(error.code)); retry when it is back"
        )
    }
}

/// A statement run to its end. PostgresNIO's `query` returns as soon as the
/// server describes the result, before the statement has finished (an
/// advisory lock may still be waited for, an insert not yet done, an error
/// not yet sent): every statement whose rows are not read goes through this.
extension PostgresClient {
    func run(_ query: PostgresQuery, logger: Logger) async throws {
        for try await _ in try await self.query(query, logger: logger) {}
    }
}

extension PostgresConnection {
    func run(_ query: PostgresQuery, logger: Logger) async throws {
        for try await _ in try await self.query(query, logger: logger) {}
    }
}

/// The first of several outcomes, handed to whoever awaits it: the others
/// are dropped. Awaited once.
final class FirstOutcome<Value: Sendable>: Sendable {
    private let state = LockedValue<
        (result: Result<Value, any Error>?, waiter: CheckedContinuation<Value, any Error>?, claimed: Bool)
    >(
        (nil, nil, false))

    /// Keeps `result` unless one came first; resumes the waiter.
    /// - Returns: whether this was the first.
    @discardableResult
    func settle(with result: Result<Value, any Error>) -> Bool {
        guard claim() else { return false }
        resume(with: result)
        return true
    }

    /// ``settle(with:)``, running `prepare` once this is known to be the
    /// first and before the waiter hears of it: no other outcome can come
    /// in between.
    @discardableResult
    func settle(with result: Result<Value, any Error>, after prepare: @Sendable () async -> Void) async -> Bool {
        guard claim() else { return false }
        await prepare()
        resume(with: result)
        return true
    }

    /// Whether this outcome is the first: once claimed, no other can be.
    private func claim() -> Bool {
        state.withLock { state in
            guard state.result == nil, !state.claimed else { return false }
            state.claimed = true
            return true
        }
    }

    private func resume(with result: Result<Value, any Error>) {
        let waiter = state.withLock { state -> CheckedContinuation<Value, any Error>? in
            state.result = result
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(with: result)
    }

    var value: Value {
        get async throws {
            try await withCheckedThrowingContinuation { continuation in
                let ready = state.withLock { state -> Result<Value, any Error>? in
                    if let result = state.result { return result }
                    state.waiter = continuation
                    return nil
                }
                if let ready { continuation.resume(with: ready) }
            }
        }
    }
}
