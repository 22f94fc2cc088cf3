package server

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// TokenFile is the name of the file, in labmate's data directory, that holds the server's
// bearer token.
const TokenFile = "token"

// LoadToken returns the bearer token stored in the file at path, or makes a new one there
// (256 random bits, hex-encoded, in a file of mode 0600) when there is none, so that a
// restarted server keeps its clients' token. created says it was made now. A file that is
// not a regular file of this user, or that other users may read or write, is refused:
// whoever can read it holds the token.
func LoadToken(path string) (token string, created bool, err error) {
	token, err = readToken(path)
	if !errors.Is(err, fs.ErrNotExist) {
		return token, false, err
	}
	b := make([]byte, 32)
	rand.Read(b) // never fails (crypto/rand)
	token = hex.EncodeToString(b)
	f, err := os.CreateTemp(filepath.Dir(path), ".token-*") // mode 0600
	if err != nil {
		return "", false, fmt.Errorf("server: making the token file: %w", err)
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	_, err = f.WriteString(token + "\n")
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", false, fmt.Errorf("server: writing the token file: %w", err)
	}
	// Linking never replaces a file: when another server made one meanwhile, its token wins.
	if err := os.Link(tmp, path); errors.Is(err, fs.ErrExist) {
		token, err = readToken(path)
		return token, false, err
	} else if err != nil {
		return "", false, fmt.Errorf("server: writing the token file: %w", err)
	}
	return token, true, nil
}

func readToken(path string) (string, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if errors.Is(err, syscall.ELOOP) {
		return "", fmt.Errorf("server: token file %s is a symbolic link: refusing it; remove it for a new token", path)
	}
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		return "", fmt.Errorf("server: token file: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("server: token file: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("server: token file %s is not a regular file (%s): remove it for a new token", path, fi.Mode().Type())
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return "", fmt.Errorf("server: token file %s may be read or written by other users (mode %04o), so the token may have leaked: "+
			"remove the file for a new token (or chmod 600 it to keep this one)", path, perm)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
		return "", fmt.Errorf("server: token file %s belongs to uid %d, not to this user (uid %d): remove it for a new token", path, st.Uid, os.Geteuid())
	}
	b, err := io.ReadAll(io.LimitReader(f, 4096))
	if err != nil {
		return "", fmt.Errorf("server: token file: %w", err)
	}
	token := strings.TrimSpace(string(b))
	if len(token) < 16 {
		return "", fmt.Errorf("server: token file %s holds %d characters: want at least 16 (a random one has 64); remove it for a new token", path, len(token))
	}
	if err := CheckToken(token); err != nil {
		return "", fmt.Errorf("server: token file %s: %w; remove it for a new token", path, err)
	}
	return token, nil
}

// CheckToken says what is wrong with a bearer token: it must be printable ASCII without
// spaces (it travels in an HTTP header).
func CheckToken(token string) error {
	if token == "" {
		return errors.New("the token is empty")
	}
	for i := 0; i < len(token); i++ {
		if c := token[i]; c <= ' ' || c > '~' {
			return fmt.Errorf("the token has a character (byte %d) that is not printable ASCII or is a space", i)
		}
	}
	return nil
}
