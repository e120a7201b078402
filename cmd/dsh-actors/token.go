package main

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// tokenEnv is the environment variable that gives serve its bearer token
// when --token does not.
const tokenEnv = "DSH_ACTORS_TOKEN"

// tokenFileName is the file in a JSONL store root that keeps the token
// serve generated at its first start there.
const tokenFileName = ".serve-token"

// minTokenLength is the shortest token serve accepts.
const minTokenLength = 16

// checkToken refuses a token given by --token or tokenEnv that is too
// short to guess badly, or that has characters other than visible ASCII
// (it travels in a header and in the page's address).
func checkToken(token, from string) error {
	if len(token) < minTokenLength {
		return fmt.Errorf("%s must be at least %d characters", from, minTokenLength)
	}
	for i := 0; i < len(token); i++ {
		if c := token[i]; c <= ' ' || c > '~' || c == '#' || c == '&' {
			return fmt.Errorf("%s must be visible ASCII without spaces, '#' or '&'", from)
		}
	}
	return nil
}

// givenToken is --token when set, else tokenEnv's value ("" for none),
// checked.
func givenToken(flagValue string, flagSet bool) (string, error) {
	if flagSet {
		return flagValue, checkToken(flagValue, "--token")
	}
	if env, ok := os.LookupEnv(tokenEnv); ok {
		return env, checkToken(env, tokenEnv)
	}
	return "", nil
}

// storeToken is the token kept in a JSONL store root, made (random, in a
// file only its owner reads) at the first start there; a Postgres store
// keeps none, so each start there makes a new one (give --token or
// tokenEnv for a lasting one, the same on every node).
func storeToken(store string) (string, error) {
	if isPostgres(store) {
		return newToken()
	}
	path := filepath.Join(store, tokenFileName)
	if kept, err := os.ReadFile(path); err == nil {
		token := strings.TrimSpace(string(kept))
		return token, checkToken(token, path)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("cannot read the token: %w", err)
	}
	token, err := newToken()
	if err != nil {
		return "", err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) { // another serve made it first
		return storeToken(store)
	} else if err != nil {
		return "", fmt.Errorf("cannot keep the token: %w", err)
	}
	_, err = f.WriteString(token + "\n")
	if err = errors.Join(err, f.Sync(), f.Close()); err != nil {
		return "", fmt.Errorf("cannot keep the token: %w", err)
	}
	return token, nil
}

// newToken is 32 random characters of the URL-safe base64 alphabet
// (192 bits).
func newToken() (string, error) {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return "", err
	}
	for i, b := range raw {
		raw[i] = alphabet[b&63]
	}
	return string(raw), nil
}
