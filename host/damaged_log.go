package host

import (
	"errors"

	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/dsh-actors/dsh-actors/session"
)

// codeSessionLogCorrupt: a stored session's log is damaged; the error
// carries what could still be read.
const codeSessionLogCorrupt fault.Code = "session-log-corrupt"

// damageDetails are session-log-corrupt's {sessionId, line, damage,
// events, hasMore}: the event line the damage starts at (from 1 after the
// header; 0 when the damage is not in one line, a header say), the store's
// words naming the file, and the page of the readable prefix asked for
// (paged as session.history pages, empty when nothing is readable).
type damageDetails struct {
	SessionID string         `json:"sessionId"`
	Line      int            `json:"line"`
	Damage    string         `json:"damage"`
	Events    []historyEntry `json:"events"`
	HasMore   bool           `json:"hasMore"`
}

// isDamagedLog reports whether err is a read refused for a damaged log.
func isDamagedLog(err error) bool { return errors.Is(err, session.ErrCorrupt) }

// damagedLogError is session.history's answer for a damaged log: the
// page of its readable prefix before beforeSeq (nil: the tail page),
// with the line and the damage.
func damagedLogError(id string, err error, beforeSeq *int64, maxMessages int) *rpcError {
	readable, line, _ := session.ReadablePrefix(err)
	value := toHistoryValue(paginate(readable, beforeSeq, maxMessages))
	return newError(codeSessionLogCorrupt, "session "+quote(id)+" log is damaged: "+damageText(err),
		damageDetails{SessionID: id, Line: line, Damage: damageText(err), Events: value.Events, HasMore: value.HasMore})
}

// damageText is the store's own words about the damage (the innermost
// error's message, which names the file).
func damageText(err error) string {
	for {
		next := errors.Unwrap(err)
		if next == nil || !errors.Is(next, session.ErrCorrupt) {
			return err.Error()
		}
		err = next
	}
}

// damagedPromptError is session.prompt's answer for a damaged stored log,
// which no message can resume: the line and the damage, with no events.
func damagedPromptError(id string, err error) *rpcError {
	_, line, _ := session.ReadablePrefix(err)
	return newError(codeSessionLogCorrupt, "session "+quote(id)+" log is damaged, so no message can resume it: "+damageText(err),
		damageDetails{SessionID: id, Line: line, Damage: damageText(err), Events: []historyEntry{}})
}
