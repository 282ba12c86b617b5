package main

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log"
	"net/url"
	"sync"
	"time"

	_ "github.com/lib/pq"
)

// schema is AuthKitPostgres's version 2 (PostgresStore.version1 and
// version2), table for table, column for column and index for index, so
// both apps do the same database work on the same tables. The harness
// gives each app a database of its own.
var schema = []string{
	`CREATE TABLE IF NOT EXISTS authkit_credentials (
		provider_id text NOT NULL, label text NOT NULL,
		key_id text NOT NULL, sealed bytea NOT NULL, updated_at timestamptz NOT NULL DEFAULT now(),
		PRIMARY KEY (provider_id, label))`,
	`CREATE TABLE IF NOT EXISTS authkit_sign_in_attempts (
		id text PRIMARY KEY, key_id text NOT NULL, sealed bytea NOT NULL, expires_at timestamptz NOT NULL)`,
	`CREATE TABLE IF NOT EXISTS authkit_sessions (
		id text PRIMARY KEY, key_id text NOT NULL, sealed bytea NOT NULL, expires_at timestamptz NOT NULL,
		user_digest text)`,
	`CREATE INDEX IF NOT EXISTS authkit_sessions_user ON authkit_sessions (user_digest)`,
	`CREATE INDEX IF NOT EXISTS authkit_sessions_expiry ON authkit_sessions (expires_at)`,
	`CREATE INDEX IF NOT EXISTS authkit_sign_in_attempts_expiry ON authkit_sign_in_attempts (expires_at)`,
}

// The statements' bounds, PostgresStore's: each insert sweeps at most 100
// rows an hour past their expiry; every 100th attempt insert trims the
// pending sign-ins to the newest 100,000; a user keeps at most 100 sessions.
const (
	sweptPerInsert     = 100
	pendingSignInLimit = 100000
	trimInterval       = 100
	trimmedPerPass     = 1000
	sessionsPerUser    = 100
)

// postgresStore is PostgresStore's work in database/sql and lib/pq: the
// same statements, values sealed the same way.
type postgresStore struct {
	db    *sql.DB
	keys  *sealer
	locks keyedLocks
	// attempt inserts since the last trim (PostgresStore.insertsSinceTrim)
	insertsMu        sync.Mutex
	insertsSinceTrim int
}

// openPostgres connects and creates the tables if they are missing.
//
// binary_parameters=yes sends a statement with parameters in one round
// trip (Parse, Bind, Execute together), as PostgresNIO does; without it
// lib/pq prepares first and waits for the answer, a second round trip per
// statement. The pool is PostgresNIO's default size (at most 20
// connections, idle ones kept a minute); database/sql's own default keeps
// only 2 idle, so it would reconnect under load.
func openPostgres(ctx context.Context, databaseURL string, keys *sealer) (*postgresStore, error) {
	u, err := url.Parse(databaseURL)
	if err != nil {
		return nil, err
	}
	q := u.Query()
	if q.Get("sslmode") == "" && (u.Hostname() == "127.0.0.1" || u.Hostname() == "localhost") {
		q.Set("sslmode", "disable") // as the example app: no TLS on loopback
	}
	q.Set("binary_parameters", "yes")
	u.RawQuery = q.Encode()
	db, err := sql.Open("postgres", u.String())
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(20)
	db.SetMaxIdleConns(20)
	db.SetConnMaxIdleTime(time.Minute)
	for _, statement := range schema {
		if _, err := db.ExecContext(ctx, statement); err != nil {
			db.Close()
			return nil, err
		}
	}
	return &postgresStore{db: db, keys: keys}, nil
}

// sealJSON encodes v as JSON and seals it, bound to binding.
func (p *postgresStore) sealJSON(v interface{}, binding string) (string, []byte, error) {
	plaintext, err := json.Marshal(v)
	if err != nil {
		return "", nil, err
	}
	return p.keys.seal(plaintext, binding)
}

// openJSON opens a sealed value and decodes it into v.
func (p *postgresStore) openJSON(sealed []byte, keyID, binding string, v interface{}) error {
	plaintext, err := p.keys.open(sealed, keyID, binding)
	if err != nil {
		return err
	}
	return json.Unmarshal(plaintext, v)
}

func (p *postgresStore) insertAttempt(ctx context.Context, id string, a *signInAttempt) error {
	keyID, sealed, err := p.sealJSON(a, "authkit_sign_in_attempts\x00"+id)
	if err != nil {
		return err
	}
	// Expired attempts go as new ones come, a batch at a time (PostgresStore.sweep).
	if _, err := p.db.ExecContext(ctx, `DELETE FROM authkit_sign_in_attempts WHERE id IN (
		SELECT id FROM authkit_sign_in_attempts WHERE expires_at < now() - interval '1 hour'
		LIMIT $1 FOR UPDATE SKIP LOCKED)`, sweptPerInsert); err != nil {
		return err
	}
	if _, err := p.db.ExecContext(ctx,
		"INSERT INTO authkit_sign_in_attempts (id, key_id, sealed, expires_at) VALUES ($1, $2, $3, $4)",
		id, keyID, sealed, a.ExpiresAt); err != nil {
		return err
	}
	p.insertsMu.Lock()
	p.insertsSinceTrim++
	due := p.insertsSinceTrim >= trimInterval
	if due {
		p.insertsSinceTrim = 0
	}
	p.insertsMu.Unlock()
	if due { // PostgresStore.trim(toNewest:): a failure is logged, the attempt stays saved
		if _, err := p.db.ExecContext(ctx, `DELETE FROM authkit_sign_in_attempts WHERE id IN (
			SELECT id FROM authkit_sign_in_attempts
			WHERE expires_at <= (
				SELECT expires_at FROM authkit_sign_in_attempts ORDER BY expires_at DESC OFFSET $1 LIMIT 1)
			ORDER BY expires_at LIMIT $2 FOR UPDATE SKIP LOCKED)`, pendingSignInLimit, trimmedPerPass); err != nil {
			log.Printf("could not trim the pending sign-ins: %v", err)
		}
	}
	return nil
}

// readAttempt is the attempt, left in place (PostgresStore.attempt(id:now:)):
// WebSignIn checks a callback against it before it takes it.
func (p *postgresStore) readAttempt(ctx context.Context, id string, now time.Time) (*signInAttempt, error) {
	return p.attempt(ctx, "SELECT key_id, sealed FROM authkit_sign_in_attempts WHERE id = $1", id, now)
}

// takeAttempt is DELETE … RETURNING: of two callbacks at once, one gets the row.
func (p *postgresStore) takeAttempt(ctx context.Context, id string, now time.Time) (*signInAttempt, error) {
	return p.attempt(ctx, "DELETE FROM authkit_sign_in_attempts WHERE id = $1 RETURNING key_id, sealed", id, now)
}

// attempt is the attempt the row `query` returns seals, unless it expired
// before now (PostgresStore's attempt(in:id:now:)).
func (p *postgresStore) attempt(ctx context.Context, query, id string, now time.Time) (*signInAttempt, error) {
	var keyID string
	var sealed []byte
	err := p.db.QueryRowContext(ctx, query, id).Scan(&keyID, &sealed)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var a signInAttempt
	if err := p.openJSON(sealed, keyID, "authkit_sign_in_attempts\x00"+id, &a); err != nil {
		return nil, err
	}
	if !a.ExpiresAt.After(now) {
		return nil, nil
	}
	return &a, nil
}

// saveSignIn is PostgresStore.withRefreshLock around save: the account's
// lock in this process, then a transaction holding the account's advisory lock
// (pg_advisory_xact_lock, with a lock_timeout) while the credential is
// upserted. PostgresStore upserts on another pooled connection while the
// transaction holds the lock; here the upsert is inside the transaction:
// the same statements, one connection fewer.
func (p *postgresStore) saveSignIn(ctx context.Context, c *credential) error {
	keyID, sealed, err := p.sealJSON(c, "authkit_credentials\x00"+c.ProviderID+"\x00"+c.Label)
	if err != nil {
		return err
	}
	unlock := p.locks.lock(c.ProviderID + "\x00" + c.Label)
	defer unlock()
	tx, err := p.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, "SELECT set_config('lock_timeout', $1, true)", "60000ms"); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock($1)", lockNumber(c.ProviderID, c.Label)); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO authkit_credentials (provider_id, label, key_id, sealed, updated_at)
		VALUES ($1, $2, $3, $4, now())
		ON CONFLICT (provider_id, label)
		DO UPDATE SET key_id = EXCLUDED.key_id, sealed = EXCLUDED.sealed, updated_at = now()`,
		c.ProviderID, c.Label, keyID, sealed); err != nil {
		return err
	}
	return tx.Commit()
}

// lockNumber is the advisory lock's number: 64 bits of SHA-256 over the
// account's key (PostgresStore.lockNumber).
func lockNumber(provider, label string) int64 {
	sum := sha256.Sum256([]byte("authkit-refresh\x00" + provider + "\x00" + label))
	return int64(binary.BigEndian.Uint64(sum[:8]))
}

func (p *postgresStore) insertSession(ctx context.Context, id string, s *webSession) error {
	keyID, sealed, err := p.sealJSON(s, "authkit_sessions\x00"+id)
	if err != nil {
		return err
	}
	if _, err := p.db.ExecContext(ctx, `DELETE FROM authkit_sessions WHERE id IN (
		SELECT id FROM authkit_sessions WHERE expires_at < now() - interval '1 hour'
		LIMIT $1 FOR UPDATE SKIP LOCKED)`, sweptPerInsert); err != nil {
		return err
	}
	// The user's credential key, digested (PostgresStore.digest(of:)).
	owner := sha256.Sum256([]byte("authkit_credentials\x00" + s.User.ProviderID + "\x00" + s.User.CredentialLabel))
	userDigest := hex.EncodeToString(owner[:])
	if _, err := p.db.ExecContext(ctx,
		"INSERT INTO authkit_sessions (id, key_id, sealed, expires_at, user_digest) VALUES ($1, $2, $3, $4, $5)",
		id, keyID, sealed, s.ExpiresAt, userDigest); err != nil {
		return err
	}
	// A failure is logged, the session stays saved (PostgresStore.insert).
	if _, err := p.db.ExecContext(ctx, `DELETE FROM authkit_sessions WHERE id IN (
		SELECT id FROM authkit_sessions WHERE user_digest = $1
		ORDER BY expires_at DESC, id OFFSET $2)`, userDigest, sessionsPerUser); err != nil {
		log.Printf("could not trim a user's sessions: %v", err)
	}
	return nil
}

func (p *postgresStore) session(ctx context.Context, id string, now time.Time) (*webSession, error) {
	var keyID string
	var sealed []byte
	err := p.db.QueryRowContext(ctx, "SELECT key_id, sealed FROM authkit_sessions WHERE id = $1", id).
		Scan(&keyID, &sealed)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var s webSession
	if err := p.openJSON(sealed, keyID, "authkit_sessions\x00"+id, &s); err != nil {
		return nil, err
	}
	if !s.ExpiresAt.After(now) {
		return nil, nil
	}
	return &s, nil
}
