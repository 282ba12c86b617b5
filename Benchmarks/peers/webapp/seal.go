package main

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
)

// sealer keeps values at rest as AuthKitPostgres's TokenEncryption does:
// AES-256-GCM under named keys (the first seals; any named one opens),
// each value bound to its row by the associated data (table and id), and
// stored as swift-crypto's combined box: nonce (12 bytes) ‖ ciphertext ‖ tag.
type sealer struct {
	current string
	keys    map[string]cipher.AEAD
}

// parseKeys reads id:BASE64[,id:BASE64…] (32-byte keys, the first current),
// the format of AUTHKIT_WEB_KEYS.
func parseKeys(text string) (*sealer, error) {
	s := &sealer{keys: map[string]cipher.AEAD{}}
	for _, part := range strings.Split(text, ",") {
		if part == "" {
			continue
		}
		id, encoded, ok := strings.Cut(part, ":")
		if !ok || id == "" {
			return nil, errors.New("the keys are not written as id:BASE64[,id:BASE64…]")
		}
		key, err := base64.StdEncoding.DecodeString(encoded)
		if err != nil {
			return nil, errors.New("the keys are not written as id:BASE64[,id:BASE64…]")
		}
		if len(key) != 32 {
			return nil, fmt.Errorf("the key %q has %d bits; AES-256-GCM takes 256", id, len(key)*8)
		}
		block, err := aes.NewCipher(key)
		if err != nil {
			return nil, err
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, err
		}
		if s.current == "" {
			s.current = id
		}
		if _, seen := s.keys[id]; !seen {
			s.keys[id] = aead
		}
	}
	if s.current == "" {
		return nil, errors.New("no encryption key was given; tokens are never stored in the clear")
	}
	return s, nil
}

// seal encrypts plaintext under the current key, bound to binding.
func (s *sealer) seal(plaintext []byte, binding string) (string, []byte, error) {
	aead := s.keys[s.current]
	nonce := make([]byte, aead.NonceSize(), aead.NonceSize()+len(plaintext)+aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return "", nil, err
	}
	return s.current, aead.Seal(nonce, nonce, plaintext, []byte(binding)), nil
}

// open decrypts a sealed value with the key its row names.
func (s *sealer) open(sealed []byte, keyID, binding string) ([]byte, error) {
	aead, ok := s.keys[keyID]
	if !ok {
		return nil, fmt.Errorf("a stored value is sealed under the key %q, which this process was not given", keyID)
	}
	if len(sealed) < aead.NonceSize()+aead.Overhead() {
		return nil, fmt.Errorf("a stored value does not open with the key %q", keyID)
	}
	plaintext, err := aead.Open(nil, sealed[:aead.NonceSize()], sealed[aead.NonceSize():], []byte(binding))
	if err != nil {
		return nil, fmt.Errorf("a stored value does not open with the key %q", keyID)
	}
	return plaintext, nil
}
