package auth

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// A sealed value is a cookie only a holder of the key can read or make:
// AES-256-GCM over JSON, with a purpose bound in as associated data so a
// login cookie can never pass for a session. Nothing is kept on the
// server, so every replica with the same key accepts what another sealed,
// and a restart logs nobody out.

// Purposes of sealed values.
const (
	purposeSession = "queuewatch-session-v1"
	purposeLogin   = "queuewatch-login-v1"
)

var errBadSeal = errors.New("not a valid sealed value for this key")

// sealer seals and opens values with one key.
type sealer struct {
	aead cipher.AEAD
}

func newSealer(key []byte) (*sealer, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("session key: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("session key: %w", err)
	}
	return &sealer{aead: aead}, nil
}

// seal encrypts and authenticates v (JSON) for purpose.
func (s *sealer) seal(purpose string, v any) (string, error) {
	plain, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	nonce := make([]byte, s.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(s.aead.Seal(nonce, nonce, plain, []byte(purpose))), nil
}

// open reverses seal: a value sealed with another key, for another
// purpose, or changed by one bit is errBadSeal.
func (s *sealer) open(purpose, sealed string, v any) error {
	raw, err := base64.RawURLEncoding.DecodeString(sealed)
	n := s.aead.NonceSize()
	if err != nil || len(raw) < n+s.aead.Overhead() {
		return errBadSeal
	}
	plain, err := s.aead.Open(nil, raw[:n], raw[n:], []byte(purpose))
	if err != nil {
		return errBadSeal
	}
	if err := json.Unmarshal(plain, v); err != nil {
		return errBadSeal
	}
	return nil
}

// Session is what the session cookie holds: who logged in, the groups of
// theirs that map to a role (the role is worked out per request, so a
// changed group_roles applies at once), and when the login ends.
type Session struct {
	Name    string   `json:"n"`
	Subject string   `json:"s"`
	Groups  []string `json:"g,omitempty"`
	Expires int64    `json:"e"`
}

func (s Session) expired(now time.Time) bool { return now.Unix() >= s.Expires }

// loginState is what the short-lived login cookie holds between the
// redirect to the provider and the callback: the state, nonce and PKCE
// verifier the callback checks, and where to go afterwards.
type loginState struct {
	State    string `json:"st"`
	Nonce    string `json:"no"`
	Verifier string `json:"v"`
	Next     string `json:"nx"`
	Expires  int64  `json:"e"`
}
