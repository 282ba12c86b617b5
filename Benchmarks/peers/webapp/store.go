package main

import (
	"context"
	"sync"
	"time"
)

// signInAttempt is a sign-in between its two requests, kept server-side
// (AuthKitServer's SignInAttempt with its PendingAuthorization): the PKCE
// verifier, the state, the redirect URI, where to return, and the SHA-256
// of the binding cookie set on the browser that started it.
type signInAttempt struct {
	ProviderID     string    `json:"providerID"`
	State          string    `json:"state"`
	CodeVerifier   string    `json:"codeVerifier"`
	RedirectURI    string    `json:"redirectURI"`
	Scopes         []string  `json:"scopes"`
	CreatedAt      time.Time `json:"createdAt"`
	ReturnTo       string    `json:"returnTo"`
	BrowserBinding string    `json:"browserBinding"`
	ExpiresAt      time.Time `json:"expiresAt"`
}

// signedInUser is who a session belongs to (AuthKitServer's SignedInUser).
type signedInUser struct {
	ProviderID      string `json:"providerID"`
	Subject         string `json:"subject"`
	DisplayName     string `json:"displayName,omitempty"`
	CredentialLabel string `json:"credentialLabel"`
}

// webSession is a signed-in browser (AuthKitServer's WebSession).
type webSession struct {
	User      signedInUser `json:"user"`
	CSRFToken string       `json:"csrfToken"`
	CreatedAt time.Time    `json:"createdAt"`
	ExpiresAt time.Time    `json:"expiresAt"`
}

// credential is the user's token as AuthKit's Credential keeps it.
type credential struct {
	ProviderID   string            `json:"providerID"`
	Label        string            `json:"label"`
	Kind         string            `json:"kind"`
	AccessToken  string            `json:"accessToken"`
	TokenType    string            `json:"tokenType"`
	RefreshToken string            `json:"refreshToken,omitempty"`
	ExpiresAt    time.Time         `json:"expiresAt"`
	Scopes       []string          `json:"scopes"`
	ObtainedAt   time.Time         `json:"obtainedAt"`
	RawFields    map[string]string `json:"rawFields"`
}

// store is the three stores WebSignIn uses (credentials, attempts,
// sessions), in memory or in PostgreSQL. Ids are SHA-256 digests of the
// values browsers hold, never those values.
type store interface {
	insertAttempt(ctx context.Context, id string, a *signInAttempt) error
	// readAttempt is the attempt, left in place; nil when there is none or
	// it expired before now (WebSignIn checks a callback before it takes).
	readAttempt(ctx context.Context, id string, now time.Time) (*signInAttempt, error)
	// takeAttempt removes and returns the attempt, once; nil when there is
	// none or it expired before now.
	takeAttempt(ctx context.Context, id string, now time.Time) (*signInAttempt, error)
	// saveSignIn stores a new sign-in's credential under the account's
	// refresh lock (AuthKit's CredentialStore.saveSignIn), so that a
	// refresh of the account's earlier credential under way cannot save
	// over it.
	saveSignIn(ctx context.Context, c *credential) error
	insertSession(ctx context.Context, id string, s *webSession) error
	// session is the session under id, or nil when there is none or it
	// expired before now.
	session(ctx context.Context, id string, now time.Time) (*webSession, error)
}

// The memory stores' bounds, AuthKit's: at most 10,000 attempts (expired
// ones dropped first, then the oldest); expired sessions swept once there
// are 10,000, then at twice what the last sweep left (a pass over every
// session at each insert past 10,000 live ones would slow this peer, not
// AuthKit, which doubles too); at most sessionsPerUser (postgres.go) a user.
const (
	attemptLimit = 10000
	sessionSweep = 10000
)

// memoryStore keeps everything in this process's memory, one mutex per
// store as AuthKit's in-memory stores are one actor each.
type memoryStore struct {
	attemptsMu sync.Mutex
	attempts   map[string]signInAttempt

	credentialsMu sync.Mutex
	credentials   map[[2]string]credential

	sessionsMu sync.Mutex
	sessions   map[string]webSession
	sweepAt    int
	// each user's session ids (AuthKit's byUser), for the bound per user
	byUser map[string]map[string]struct{}

	locks keyedLocks
}

func newMemoryStore() *memoryStore {
	return &memoryStore{
		attempts:    map[string]signInAttempt{},
		credentials: map[[2]string]credential{},
		sessions:    map[string]webSession{},
		sweepAt:     sessionSweep,
		byUser:      map[string]map[string]struct{}{},
	}
}

func (m *memoryStore) insertAttempt(_ context.Context, id string, a *signInAttempt) error {
	m.attemptsMu.Lock()
	defer m.attemptsMu.Unlock()
	if len(m.attempts) >= attemptLimit {
		now := time.Now()
		for k, v := range m.attempts {
			if !v.ExpiresAt.After(now) {
				delete(m.attempts, k)
			}
		}
		for len(m.attempts) >= attemptLimit {
			oldest, first := "", true
			var at time.Time
			for k, v := range m.attempts {
				if first || v.ExpiresAt.Before(at) {
					oldest, at, first = k, v.ExpiresAt, false
				}
			}
			delete(m.attempts, oldest)
		}
	}
	m.attempts[id] = *a
	return nil
}

func (m *memoryStore) readAttempt(_ context.Context, id string, now time.Time) (*signInAttempt, error) {
	m.attemptsMu.Lock()
	a, ok := m.attempts[id]
	m.attemptsMu.Unlock()
	if !ok || !a.ExpiresAt.After(now) {
		return nil, nil
	}
	return &a, nil
}

func (m *memoryStore) takeAttempt(_ context.Context, id string, now time.Time) (*signInAttempt, error) {
	m.attemptsMu.Lock()
	a, ok := m.attempts[id]
	delete(m.attempts, id)
	m.attemptsMu.Unlock()
	if !ok || !a.ExpiresAt.After(now) {
		return nil, nil
	}
	return &a, nil
}

func (m *memoryStore) saveSignIn(_ context.Context, c *credential) error {
	unlock := m.locks.lock(c.ProviderID + "\x00" + c.Label)
	defer unlock()
	m.credentialsMu.Lock()
	m.credentials[[2]string{c.ProviderID, c.Label}] = *c
	m.credentialsMu.Unlock()
	return nil
}

func (m *memoryStore) insertSession(_ context.Context, id string, s *webSession) error {
	m.sessionsMu.Lock()
	defer m.sessionsMu.Unlock()
	if len(m.sessions) >= m.sweepAt {
		now := time.Now()
		for k, v := range m.sessions {
			if !v.ExpiresAt.After(now) {
				m.forget(k, v.User.CredentialLabel)
			}
		}
		m.sweepAt = 2 * len(m.sessions)
		if m.sweepAt < sessionSweep {
			m.sweepAt = sessionSweep
		}
	}
	if old, ok := m.sessions[id]; ok {
		m.forget(id, old.User.CredentialLabel)
	}
	m.sessions[id] = *s
	user := s.User.CredentialLabel
	ids := m.byUser[user]
	if ids == nil {
		ids = map[string]struct{}{}
		m.byUser[user] = ids
	}
	ids[id] = struct{}{}
	// At most sessionsPerUser a user: the one that expires first goes.
	if len(ids) > sessionsPerUser {
		first, at := "", time.Time{}
		for k := range ids {
			if e := m.sessions[k].ExpiresAt; first == "" || e.Before(at) {
				first, at = k, e
			}
		}
		m.forget(first, user)
	}
	return nil
}

// forget removes a session and its place in its user's index.
func (m *memoryStore) forget(id, user string) {
	delete(m.sessions, id)
	if ids := m.byUser[user]; ids != nil {
		delete(ids, id)
		if len(ids) == 0 {
			delete(m.byUser, user)
		}
	}
}

func (m *memoryStore) session(_ context.Context, id string, now time.Time) (*webSession, error) {
	m.sessionsMu.Lock()
	defer m.sessionsMu.Unlock()
	s, ok := m.sessions[id]
	if !ok {
		return nil, nil
	}
	if !s.ExpiresAt.After(now) {
		m.forget(id, s.User.CredentialLabel)
		return nil, nil
	}
	return &s, nil
}

// keyedLocks excludes the tasks of this process per key (an account), as
// AuthKit's KeyedAsyncLock does for refreshes and sign-ins. A waiter
// blocks on the key's mutex; an entry goes when its last user leaves.
type keyedLocks struct {
	mu   sync.Mutex
	held map[string]*keyedLock
}

type keyedLock struct {
	sync.Mutex
	users int
}

// lock waits for key and returns the function that releases it.
func (k *keyedLocks) lock(key string) func() {
	k.mu.Lock()
	if k.held == nil {
		k.held = map[string]*keyedLock{}
	}
	l := k.held[key]
	if l == nil {
		l = &keyedLock{}
		k.held[key] = l
	}
	l.users++
	k.mu.Unlock()
	l.Lock()
	return func() {
		l.Unlock()
		k.mu.Lock()
		if l.users--; l.users == 0 {
			delete(k.held, key)
		}
		k.mu.Unlock()
	}
}
