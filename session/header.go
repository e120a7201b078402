package session

import (
	"fmt"
	"math"
	"path/filepath"
	"strconv"

	"github.com/dsh-actors/dsh-actors/internal/logpath"
)

// headerLine is a first line parsed leniently, before any strictness level
// (listing, reading, resuming) is applied.
type headerLine struct {
	header     Header
	object     bool   // the line is one JSON object
	version    []byte // raw version when it is a JSON number
	idText     string // id as String() prints it, for messages
	listable   bool   // passes the listing guard
	required   int    // bits of the required keys seen
	seedLength int
	emptyCwd   bool // "cwd":"" (it names no project folder)
	retired    bool // carries the retired sandboxMode or approvalPolicy key
	// lone is the key, and loneText the JSON text, of the first of id,
	// cwd and parentSession that holds a lone UTF-16 surrogate escape.
	lone, loneText string
}

// Bits of the keys a header must have.
const (
	hasType = 1 << iota
	hasID
	hasCreatedAt
	hasDepth
	requiredKeys = hasType | hasID | hasCreatedAt | hasDepth
)

// member implements the per-key parse of a header object.
func (hl *headerLine) member(key, value []byte) {
	h := &hl.header
	switch string(key) {
	case "type":
		hl.required |= hasType
		hl.listable = hl.listable && string(value) == `"session"`
	case "version":
		hl.version = value
	case "id":
		hl.required |= hasID
		hl.idText = jsString(value)
		h.ID, hl.listable = hl.stringField(value, true)
		hl.noteLone(key, value)
	case "createdAt":
		hl.required |= hasCreatedAt
		h.CreatedAt = hl.countField(value)
	case "delegationDepth":
		hl.required |= hasDepth
		h.DelegationDepth = int(hl.countField(value))
	case "seedLength":
		hl.seedLength = int(hl.countField(value))
		h.SeedLength = &hl.seedLength
	case "cwd":
		h.Cwd, hl.listable = hl.stringField(value, true)
		hl.emptyCwd = h.Cwd == "" && isJSONString(value)
		hl.noteLone(key, value)
	case "parentSession":
		h.ParentSession, hl.listable = hl.stringField(value, true)
		hl.noteLone(key, value)
	case "origin":
		hl.listable = hl.listable && string(value) == `"subagent"`
		h.Origin = "subagent"
	case "agentPreset":
		h.AgentPreset, hl.listable = hl.stringField(value, true)
	case "sandboxMode", "approvalPolicy":
		hl.retired = true
	}
}

// stringField decodes a string member; an empty string is allowed only
// when emptyOK.
func (hl *headerLine) stringField(value []byte, emptyOK bool) (string, bool) {
	s, ok := decodeString(value)
	return s, hl.listable && ok && (emptyOK || s != "")
}

// noteLone records the first of the naming members (id, cwd,
// parentSession) whose string holds a lone UTF-16 surrogate: the
// original's JavaScript string keeps it (its folder encodes it as ~D800),
// a Go string cannot (it reads as U+FFFD, which names another session and
// another folder), so such a header is refused rather than read as a
// different one (unrepresentable).
func (hl *headerLine) noteLone(key, value []byte) {
	if hl.lone == "" && hasLoneSurrogate(value) {
		hl.lone, hl.loneText = string(key), string(value)
	}
}

// unrepresentable is the refusal of a header line, read from path, that
// holds a lone surrogate (noteLone), or nil.
func (hl *headerLine) unrepresentable(path string) error {
	if hl.lone == "" {
		return nil
	}
	msg := fmt.Sprintf("session header %s %s holds a lone UTF-16 surrogate, which this build cannot represent; "+
		"the session is neither listed nor read", hl.lone, hl.loneText)
	if path != "" {
		msg += " (raw log: " + path + ")"
	}
	return &unsupportedError{ID: hl.idText, Path: path, Msg: msg}
}

// countField decodes a non-negative safe integer that must not be -0.
func (hl *headerLine) countField(value []byte) int64 {
	n, negZero, ok := parseSafeInt(value)
	hl.listable = hl.listable && ok && !negZero && n >= 0
	return n
}

// parseHeaderLine parses a first line (without its LF). It reports false
// when the line is not valid JSON.
func parseHeaderLine(line []byte) (headerLine, bool) {
	hl := headerLine{listable: true, idText: "undefined"}
	object, valid := forEachMember(line, hl.member)
	hl.object = object
	version, numeric := jsonNumber(hl.version)
	hl.header.Version = int(version) // a fractional version is refused at load anyway
	hl.listable = hl.listable && object && numeric && hl.required == requiredKeys
	return hl, valid
}

// jsonNumber returns the value of a raw JSON number (any number, as
// typeof version === "number" in the original), and whether raw is one.
func jsonNumber(raw []byte) (float64, bool) {
	if !isJSONNumber(raw) {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	return f, err == nil || math.IsInf(f, 0)
}

// parseListedHeader applies the listing guard: any numeric version is
// accepted; anything else that is not a valid header reports false. A
// header that passes the guard but still cannot be listed (an empty cwd,
// a retired key) is refused by the lister, not here.
func parseListedHeader(line []byte) (Header, bool) {
	hl, _ := parseHeaderLine(line)
	return hl.header, hl.listable
}

// listingError is the error the original's listing throws for a header
// line that passes the guard but cannot be listed: a retired policy key,
// or an empty cwd, which names no storage path (path is the log's).
func (hl *headerLine) listingError(path string) error {
	switch {
	case !hl.listable:
		return nil
	case hl.retired:
		return corruptNamed(path, "session header uses retired policy baseline fields")
	case hl.emptyCwd:
		return corruptNamed(path, `corrupt session log "%s": header id cannot name a storage path`, path)
	}
	return nil
}

// parseStoredHeader applies the load/inspect level to the first line of
// the log at path: a foreign version is an *unsupportedError (checked
// before the shape), a damaged line a *corruptError. A relative cwd is not
// refused here: the original harness inspects such a log (the snapshot
// logs it commits carry "{{cwd}}") and refuses it only when it builds a
// Session from it, which checkResumable does for Load.
func parseStoredHeader(line []byte, path string) (Header, error) {
	hl, valid := parseHeaderLine(line)
	version, numeric := jsonNumber(hl.version)
	switch {
	case !valid:
		return Header{}, corruptf(path, 0, "corrupt session log: header line is not valid JSON")
	case hl.object && numeric && version != 0:
		return Header{}, foreignVersion(hl.idText, version, path)
	case !hl.listable:
		return Header{}, corruptf(path, 0, "corrupt session log: first line is not a session header")
	case hl.listingError(path) != nil:
		return Header{}, hl.listingError(path)
	case hl.unrepresentable(path) != nil:
		return Header{}, hl.unrepresentable(path)
	}
	return hl.header, nil
}

// checkResumable applies the checks the original makes when it builds a
// Session from a stored log (the repairing load, not inspection): the
// header's cwd, when present, must be an absolute path, and the events
// must keep the surface rules (checkSurface).
func checkResumable(h Header, events []Event, path string) error {
	if h.Cwd != "" && !filepath.IsAbs(h.Cwd) {
		return corruptf(path, 0, `stored session "%s" failed validation: header cwd "%s" is not an absolute path`,
			h.ID, h.Cwd)
	}
	return checkSurface(h.ID, events, path)
}

func foreignVersion(id string, f float64, path string) *unsupportedError {
	v := strconv.FormatFloat(f, 'f', -1, 64)
	msg := fmt.Sprintf(`session "%s" uses log format v%s, but this harness reads only v0: `+
		"the log was written by a newer harness — upgrade the harness to open it", id, v)
	if f < 0 {
		msg = fmt.Sprintf(`session "%s" uses log format v%s, older than the supported v0, `+
			"and this build ships no upgrade path for it", id, v)
	}
	return &unsupportedError{ID: id, Path: path, Msg: msg + " (raw log: " + path + ")"}
}

// validateNewHeader checks a header before Create writes it.
func validateNewHeader(h Header) error {
	switch {
	case h.Version != formatVersion:
		return invalidf(`session "%s": header version %d is not the supported v%d`, h.ID, h.Version, formatVersion)
	case h.CreatedAt < 0 || h.CreatedAt > maxSafeInteger:
		return invalidf("session metadata createdAt must be a non-negative safe integer")
	case h.DelegationDepth < 0:
		return invalidf(`session "%s": delegationDepth must be a non-negative integer`, h.ID)
	case h.SeedLength != nil && *h.SeedLength < 0:
		return invalidf(`session "%s": seedLength must be a non-negative integer`, h.ID)
	case h.Cwd != "" && !filepath.IsAbs(h.Cwd):
		return invalidf(`session "%s": cwd "%s" must be an absolute path`, h.ID, h.Cwd)
	case h.Origin != "" && h.Origin != "subagent":
		return invalidf(`session "%s": origin must be "subagent" when set`, h.ID)
	}
	_, err := logpath.EncodeSegment(h.ID)
	return err
}
