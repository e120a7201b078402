// Package durable holds what both session stores (the JSONL store and the
// Postgres store) and the manager share about durable admission and
// leases: the message id a user/message event claims and the two lease
// errors both stores return. The capabilities themselves
// (session.DurableInbox, session.Waker, …) are interfaces of package
// session that a store implements.
package durable

import (
	"encoding/json"
	"fmt"

	"github.com/dsh-actors/dsh-actors/fault"
)

// MessageID is the id in a user/message event's data ("" when it has
// none or does not parse). Appending the event claims the durable inbox
// message of that id.
func MessageID(data json.RawMessage) string {
	var m struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal(data, &m)
	return m.ID
}

// LeaseHeld is the fault.LeaseHeld error of an Acquire of id refused
// because holder (a description) holds its lease; both stores return it.
func LeaseHeld(id, holder string) error {
	return fault.New(fault.LeaseHeld, fmt.Sprintf(`session "%s": lease is held by %s`, id, holder), nil)
}

// Fenced is the fault.Fenced error of an append to id under epoch, which
// is no longer the current lease; both stores return it.
func Fenced(id string, epoch int64) error {
	return fault.New(fault.Fenced, fmt.Sprintf(`session "%s": epoch %d is no longer the current lease; nothing was written`, id, epoch), nil)
}
