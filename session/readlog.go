package session

// ReadLog reads a stored log kept as lines somewhere other than a file of
// this store (the Postgres store's rows): its header line and its event
// lines in seq order, one record each (an event, or a packed chunk row).
// It applies the checks every read of the JSONL store applies, through
// the same code: the header at load strictness and naming id, each line
// decoded as the scanner decodes it, seqs contiguous from 0, then the
// retired vocabulary refused, pre-identity messages upgraded in memory, a type this build
// does not know refused unless ignorable, message shapes and event
// envelopes checked. Unlike a file, such lines have no torn tail: any bad
// line fails the read. Errors name the log as where (" (raw log:
// <where>)") and are the JSONL store's: damage matches ErrCorrupt, with
// ReadablePrefix giving the events before it.
func ReadLog(id, where, header string, lines []string) (*Log, error) {
	h, err := parseStoredHeader([]byte(header), where)
	if err != nil {
		return nil, err
	}
	if h.ID != id {
		return nil, otherSession(where, id, h.ID)
	}
	size := 0
	for _, line := range lines {
		size += len(line) + 1
	}
	s := newScanner(where, h, 0, size)
	for _, line := range lines {
		if err := s.consume([]byte(line), 0); err != nil {
			return nil, withReadable(err, s.out.events)
		}
	}
	if s.issue != nil {
		return nil, withReadable(s.issue, s.out.events)
	}
	if err := checkEvents(id, s.out, where); err != nil {
		return nil, err
	}
	return &Log{Header: h, Events: s.out.events}, nil
}
