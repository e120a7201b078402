// Package logpath is the layout of a JSONL session root: where a
// session's log lives,
//
//	<root>/<project key of cwd | _no-cwd>/<EncodeSegment(id)>/session.jsonl
//
// (session.jsonl.zstd in a compressed root), and the files of the leases.
// It is the one definition the session store writes by and the readers
// beside it (the derived index, the Postgres export, the generators of
// the benchmarks) find logs by; it is internal so that the layout stays
// off session's exported surface. Nothing here blocks or touches the disk.
package logpath

import (
	"errors"
	"path/filepath"
	"strings"
	"unicode/utf16"
)

// FileName is the transcript file inside a session's folder of an
// uncompressed store (FileName + ".zstd" in a compressed one).
const FileName = "session.jsonl"

// LeaseRecordName is the file in a session's folder that stands for its
// lease while a process holds it: a hard link to the holder's owner file.
const LeaseRecordName = "session.lease"

// ownerPrefix begins the name of every owner file.
const ownerPrefix = ".session-owner."

// oldLeaseFile is the single lease file of earlier versions, whose
// byte-range locks were the leases.
const oldLeaseFile = ".session-leases"

// OwnerFileName is the name of the owner file of one open store, directly
// in a JSONL root: ".session-owner." and token. The store holds a lock on
// its byte 0 for as long as it is open, and the kernel drops that lock
// when the process dies; the store's lease records are hard links to it,
// so a record whose file is unlocked was left by a store that is gone.
// Locks work between processes of one machine on a local file system,
// not over NFS.
func OwnerFileName(token string) string { return ownerPrefix + token }

// IsLeaseFile reports whether name (a file name in a JSONL root or in a
// session folder) belongs to the leases, of this version or of an
// earlier one, rather than to the sessions' data.
func IsLeaseFile(name string) bool {
	return name == LeaseRecordName || name == oldLeaseFile || strings.HasPrefix(name, ownerPrefix)
}

// ErrInvalid matches every error of this package: an id or cwd that
// cannot name a path. Package session exports it as session.ErrInvalid.
var ErrInvalid = errors.New("invalid session input")

// invalid is an error matching ErrInvalid.
type invalid string

func (e invalid) Error() string        { return string(e) }
func (e invalid) Is(target error) bool { return target == ErrInvalid }

// noCwdDir is the project folder of sessions whose header has no cwd.
const noCwdDir = "_no-cwd"

const upperHex = "0123456789ABCDEF"

func isSafeUnit(u uint16) bool {
	return (u >= 'A' && u <= 'Z') || (u >= 'a' && u <= 'z') || (u >= '0' && u <= '9') ||
		u == '.' || u == '_' || u == '-'
}

func appendUnitEscape(buf []byte, u uint16) []byte {
	return append(buf, '~', upperHex[u>>12], upperHex[u>>8&0xF], upperHex[u>>4&0xF], upperHex[u&0xF])
}

// EncodeSegment maps a session id injectively to one safe path segment,
// over UTF-16 code units as the original does: [A-Za-z0-9._-] stay, every
// other unit (including '~') becomes ~XXXX (uppercase hex); "." and ".."
// are escaped whole. The empty id is an error.
func EncodeSegment(id string) (string, error) {
	switch id {
	case "":
		return "", invalid("cannot encode an empty path segment")
	case ".":
		return "~002E", nil
	case "..":
		return "~002E~002E", nil
	}
	units := utf16.Encode([]rune(id))
	out := make([]byte, 0, len(units))
	for _, u := range units {
		if isSafeUnit(u) {
			out = append(out, byte(u))
		} else {
			out = appendUnitEscape(out, u)
		}
	}
	return string(out), nil
}

// projectKey maps a cwd to its project folder name: runs of '/', '\' and
// ':' become one '-', safe units stay, others become ~XXXX; leading '-' are
// stripped (nothing left gives "root"), the slug is cut to 251 characters
// and wrapped as --slug--. The mapping is lossy by design.
func projectKey(cwd string) (string, error) {
	if cwd == "" {
		return "", invalid("cannot encode an empty project path")
	}
	readable := make([]byte, 0, len(cwd))
	separatorRun := false
	for _, u := range utf16.Encode([]rune(cwd)) {
		switch {
		case u == '/' || u == '\\' || u == ':':
			if !separatorRun {
				readable = append(readable, '-')
			}
			separatorRun = true
		case isSafeUnit(u):
			readable = append(readable, byte(u))
			separatorRun = false
		default:
			readable = appendUnitEscape(readable, u)
			separatorRun = false
		}
	}
	slug := trimLeadingDashes(readable)
	if len(slug) == 0 {
		slug = []byte("root")
	}
	if len(slug) > 251 {
		slug = slug[:251]
	}
	return "--" + string(slug) + "--", nil
}

func trimLeadingDashes(b []byte) []byte {
	for len(b) > 0 && b[0] == '-' {
		b = b[1:]
	}
	return b
}

// ProjectDir is the project folder for cwd under root (_no-cwd when cwd
// is empty).
func ProjectDir(root, cwd string) (string, error) {
	if cwd == "" {
		return filepath.Join(root, noCwdDir), nil
	}
	key, err := projectKey(cwd)
	if err != nil {
		return "", err
	}
	return filepath.Join(root, key), nil
}

// Path is the transcript path of session id with cwd under root:
// <root>/<project key of cwd|_no-cwd>/<EncodeSegment(id)>/session.jsonl.
func Path(root, cwd, id string) (string, error) {
	dir, err := ProjectDir(root, cwd)
	if err != nil {
		return "", err
	}
	seg, err := EncodeSegment(id)
	if err != nil {
		return "", errors.Join(errors.New("header id cannot name a storage path"), err)
	}
	return filepath.Join(dir, seg, FileName), nil
}
