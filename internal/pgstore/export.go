package pgstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/dsh-actors/dsh-actors/internal/logpath"
	"github.com/dsh-actors/dsh-actors/session"
	"github.com/jackc/pgx/v5"
)

// ImportReport is what one Import did.
type ImportReport struct {
	Imported int // logs copied
	Present  int // sessions stored already, left as they are
	// Damaged holds, in listing order, each log that could not be read
	// (its error names the file); it was skipped.
	Damaged []DamagedLog
	// Cut holds, in listing order, each log copied without the torn tail
	// a read leaves out (its error names the file and the bytes, in
	// check's words).
	Cut []DamagedLog
}

// DamagedLog is one log Import skipped, or copied without its torn tail.
type DamagedLog struct {
	ID  string
	Err error
}

// Import copies every log of the JSONL store src into s, in src's listing
// order, and reports what it did. Each log is read with Inspect and
// stored with its header line and event lines exactly as they are in the
// file when the file is an uncompressed log whose lines are its events
// (so Export gives the same bytes back); otherwise (a Zstandard log,
// packed chunk rows, a torn tail) the lines are written as the JSONL
// store writes them. A log that cannot be read is skipped and reported; a
// session stored in s already is left as it is and counted, so running
// Import again copies only what is missing. Each log is one transaction.
// It fails when src cannot be listed, when ctx ends, or when s refuses a
// write; the logs copied before stay.
func (s *Store) Import(ctx context.Context, src *session.JSONL) (ImportReport, error) {
	var report ImportReport
	headers, err := src.List(ctx)
	if err != nil {
		return report, err
	}
	enc, err := src.Compression()
	if err != nil {
		return report, err
	}
	for _, h := range headers {
		log, cut, size, err := src.InspectTail(ctx, h.ID)
		if ctx.Err() != nil {
			return report, ctx.Err()
		}
		if err != nil {
			report.Damaged = append(report.Damaged, DamagedLog{ID: h.ID, Err: err})
			continue
		}
		header, lines, err := storedLines(src.Root(), enc, log)
		if err != nil {
			return report, err
		}
		err = s.insertLog(ctx, log, header, lines)
		switch {
		case errors.Is(err, session.ErrExists):
			report.Present++
		case err != nil:
			return report, err
		default:
			report.Imported++
			if cut < size {
				report.Cut = append(report.Cut, DamagedLog{ID: h.ID, Err: tornTail(src.Root(), enc, log.Header, cut, size)})
			}
		}
	}
	return report, nil
}

// tornTail describes the bytes of a log Import left out, in check's words.
func tornTail(root string, enc session.Compression, h session.Header, cut, size int) error {
	path, err := logpath.Path(root, h.Cwd, h.ID)
	if err != nil {
		return err
	}
	if enc == session.CompressionZstd {
		path += ".zstd"
	}
	return fmt.Errorf("%s: %d bytes from byte %d on are torn or damaged", path, size-cut, cut)
}

// storedLines returns the header line and event lines of log: the file's
// own when it holds exactly those lines, else encoded.
func storedLines(root string, enc session.Compression, log *session.Log) (string, []string, error) {
	if enc == session.CompressionNone {
		path, err := logpath.Path(root, log.Header.Cwd, log.Header.ID)
		if err != nil {
			return "", nil, err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return "", nil, err
		}
		if lines := bytes.Split(data, []byte{'\n'}); len(lines) == len(log.Events)+2 && len(lines[len(lines)-1]) == 0 {
			out := make([]string, len(log.Events))
			for i := range out {
				out[i] = string(lines[i+1])
			}
			return string(lines[0]), out, nil
		}
	}
	header, err := log.Header.MarshalJSON()
	if err != nil {
		return "", nil, err
	}
	out := make([]string, len(log.Events))
	for i, e := range log.Events {
		line, err := e.MarshalJSON()
		if err != nil {
			return "", nil, fmt.Errorf(`pgstore: import session "%s" event %d: %w`, log.Header.ID, i, err)
		}
		out[i] = string(line)
	}
	return string(header), out, nil
}

// insertLog stores one imported log (no lease, epoch 0) in one
// transaction.
func (s *Store) insertLog(ctx context.Context, log *session.Log, header string, lines []string) error {
	h := log.Header
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `INSERT INTO sessions (id, header_line, parent_id, created_at, origin, delegation_depth, next_seq)
			VALUES ($1, $2, NULLIF($3, ''), $4, NULLIF($5, ''), $6, $7) ON CONFLICT (id) DO NOTHING`,
			h.ID, header, h.ParentSession, h.CreatedAt, h.Origin, h.DelegationDepth, len(lines))
		if err != nil {
			return fmt.Errorf(`pgstore: import session "%s": %w`, h.ID, err)
		}
		if tag.RowsAffected() == 0 {
			return fmt.Errorf(`pgstore: import session "%s": it is stored already: %w`, h.ID, session.ErrExists)
		}
		if len(lines) == 0 {
			return nil
		}
		b := batch{seqs: make([]int64, len(lines)), types: make([]string, len(lines)), times: make([]int64, len(lines)), lines: lines}
		for i, e := range log.Events {
			b.seqs[i], b.types[i], b.times[i] = e.Seq, e.Type, e.Time
		}
		_, err = tx.Exec(ctx, `INSERT INTO events (session_id, seq, epoch, type, time, line)
			SELECT $1, e.seq, 0, e.type, e.time, e.line FROM unnest($2::bigint[], $3::text[], $4::bigint[], $5::text[]) AS e(seq, type, time, line)`,
			h.ID, b.seqs, b.types, b.times, b.lines)
		return err
	})
}

// Export writes every session of s into the documented JSONL layout under
// root (uncompressed: <project>/<encoded id>/session.jsonl, made with
// mode 0700 folders and 0600 files, each file fsynced), its header line
// and event lines verbatim, and returns how many it wrote. A log that
// exists already under root fails the export naming it; the logs written
// before it stay.
func (s *Store) Export(ctx context.Context, root string) (int, error) {
	headers, err := s.List(ctx)
	if err != nil {
		return 0, err
	}
	for i, h := range headers {
		header, lines, err := s.readLines(ctx, h.ID)
		if err != nil {
			return i, err
		}
		path, err := logpath.Path(root, h.Cwd, h.ID)
		if err != nil {
			return i, err
		}
		if err := writeLog(path, header, lines); err != nil {
			return i, fmt.Errorf(`pgstore: export session "%s": %w`, h.ID, err)
		}
	}
	return len(headers), nil
}

// writeLog creates path (never replacing a file) holding the lines, each
// ending in LF, and fsyncs it.
func writeLog(path, header string, lines []string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	var buf bytes.Buffer
	buf.WriteString(header)
	buf.WriteByte('\n')
	for _, l := range lines {
		buf.WriteString(l)
		buf.WriteByte('\n')
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(buf.Bytes())
	if err == nil {
		err = f.Sync()
	}
	return errors.Join(err, f.Close())
}
