package session

import "context"

// logBinder is a Store that gives a live session a direct handle on its
// log (JSONL): the session's writes then skip the lookup by id and the
// second check of payloads it has already checked, and its release needs
// no lookup either.
type logBinder interface {
	// bindLog returns the handle of id's log, or nil when the store does
	// not hold it (the session then writes through Store.Append).
	bindLog(id string) boundLog
}

// boundLog is one log's handle held by its live session.
type boundLog interface {
	// append is Store.Append (uncancellable; Fenced.AppendFenced when
	// epoch is not 0) of events whose payloads were checked by
	// Live.Append.
	append(epoch Epoch, events []Event) error
	// release is Store.releaseLog.
	release()
	// releaseLease is Fenced.Release of this log's lease epoch.
	releaseLease(epoch Epoch) error
}

// bindLog hands a live session the log's state itself: a *logState is
// JSONL's boundLog, so the session's writes reach it with no handle object
// in between.
func (s *JSONL) bindLog(id string) boundLog {
	st := s.existingState(id)
	if st == nil {
		return nil
	}
	return st
}

// append encodes events and appends them to the log (uncancellable)
// under epoch (0: unfenced).
func (st *logState) append(epoch Epoch, events []Event) error {
	if len(events) == 0 {
		return nil
	}
	s := st.store
	if err := s.checkOpen(); err != nil {
		return err
	}
	data := make([]byte, 0, 128*len(events))
	for _, e := range events {
		data = append(appendEvent(data, e, false), '\n')
	}
	return s.appendEncoded(context.Background(), st, events, data, epoch)
}

// release is JSONL.releaseLog of this log.
func (st *logState) release() { st.store.releaseState(st) }

// releaseLease is JSONL.Release of this log's lease epoch.
func (st *logState) releaseLease(epoch Epoch) error { return st.store.releaseLease(st, epoch) }
