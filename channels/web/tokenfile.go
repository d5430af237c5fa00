package web

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// minTokenLen is the shortest token LoadToken accepts from its file: an
// operator may write one of their own, but not a guessable one.
const minTokenLen = 16

// LoadToken returns the access token kept in the file at path (one line),
// making it first when there is none: 32 random bytes, base64url, in a
// file of mode 0600 written whole (a temporary file renamed). made says a
// new token was made: there was no file, it held no usable token (empty,
// shorter than 16 characters), or other users could read it (it may have
// leaked: the file is replaced). The directory must exist; it should be
// private (the gateway's data directory is 0700). A symbolic link is not
// followed: it is an error.
func LoadToken(path string) (token string, made bool, err error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return "", false, fmt.Errorf("web token: %w", err)
	default:
		st, err := f.Stat()
		var b []byte
		if err == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o077 == 0 {
			b, err = io.ReadAll(io.LimitReader(f, 4<<10))
		}
		f.Close()
		if err != nil {
			return "", false, fmt.Errorf("web token: %w", err)
		}
		if !st.Mode().IsRegular() {
			return "", false, fmt.Errorf("web token: %s is not a regular file", path)
		}
		if tok := strings.TrimSpace(string(b)); len(tok) >= minTokenLen && !strings.ContainsAny(tok, " \t\r\n") {
			return tok, false, nil
		}
	}
	tok := NewToken()
	tmp, err := os.CreateTemp(filepath.Dir(path), ".web-token-*")
	if err != nil {
		return "", false, fmt.Errorf("web token: %w", err)
	}
	defer os.Remove(tmp.Name()) // fails once renamed
	_, err = tmp.WriteString(tok + "\n")
	if err == nil {
		err = tmp.Chmod(0o600) // CreateTemp's mode, whatever the umask
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return "", false, fmt.Errorf("web token: %w", err)
	}
	return tok, true, nil
}

// NewToken returns a new random access token: 32 bytes from crypto/rand,
// base64url without padding (43 characters).
func NewToken() string {
	var b [32]byte
	rand.Read(b[:]) // never fails (crypto/rand)
	return base64.RawURLEncoding.EncodeToString(b[:])
}
