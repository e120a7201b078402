package dsh

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/dsh-actors/dsh-actors/internal/faultfs"
	"github.com/dsh-actors/dsh-actors/internal/sessionfs"
	"github.com/dsh-actors/dsh-actors/internal/strhash"
	"github.com/dsh-actors/dsh-actors/internal/testkit"
	"github.com/dsh-actors/dsh-actors/session"
)

// userTexts are the raw data of id's user/message events.
func userTexts(t *testing.T, rt *Runtime, id string) string {
	t.Helper()
	log, err := rt.query.ReadSession(bg, id)
	require.NoError(t, err)
	var texts []string
	for _, e := range log.Events {
		if e.Type == "user/message" {
			texts = append(texts, string(e.Data))
		}
	}
	return strings.Join(texts, "\n")
}

// idle waits until the agent live under id has run what it accepted.
func idle(t *testing.T, rt *Runtime, id string) {
	t.Helper()
	h, ok := rt.Agent(id)
	require.True(t, ok, "%s is live", id)
	require.NoError(t, h.WhenIdle(bg))
}

// OpenSession starts a session in a folder it makes, joins it when live,
// resumes it when stored and asked to, and refuses another cwd and a
// child's session by code.
func TestOpenSessionStartsJoinsResumesAndFences(t *testing.T) {
	dir, cwd := t.TempDir(), t.TempDir()+"/made/here"
	rt := open(t, Options{Dir: dir})
	require.NoError(t, rt.OpenSession(bg, SessionSpec{ID: "s", Cwd: cwd}))
	require.DirExists(t, cwd)
	require.NoError(t, rt.OpenSession(bg, SessionSpec{ID: "s", Cwd: cwd}), "the live agent is joined")
	require.ErrorIs(t, rt.OpenSession(bg, SessionSpec{ID: "s", Cwd: "/elsewhere"}), fault.CwdConflict)
	h, _ := rt.Agent("s")
	child, err := rt.Spawn(bg, h, "w", event.Text("reply ok"))
	require.NoError(t, err)
	_, _, err = rt.WaitChild(bg, child)
	require.NoError(t, err)
	require.ErrorIs(t, rt.OpenSession(bg, SessionSpec{ID: child, Cwd: cwd, Resume: true}), fault.OwnedBySubagent)
	require.NoError(t, rt.Close())

	again := open(t, Options{Dir: dir})
	require.ErrorIs(t, again.OpenSession(bg, SessionSpec{ID: "s", Cwd: "/elsewhere", Resume: true}), fault.CwdConflict)
	_, live := again.Agent("s")
	require.False(t, live, "a cwd conflict resumes nothing")
	require.ErrorIs(t, again.OpenSession(bg, SessionSpec{ID: "s", Cwd: cwd}), fault.AgentStartFailed, "a stored id is not started again")
	require.NoError(t, again.OpenSession(bg, SessionSpec{ID: "s", Cwd: cwd, Resume: true}))
	_, live = again.Agent("s")
	require.True(t, live)
}

// PromptSession resumes a stored session and runs the prompt; it refuses
// an unknown id and a child's session by code. CancelTurn ends a running
// turn aborted; a session no agent is live under here, stored or unknown,
// is fault.AgentNotFound and stays asleep; a live child's is refused.
func TestPromptSessionResumesAndCancelTurnAborts(t *testing.T) {
	dir := t.TempDir()
	rt := open(t, Options{Dir: dir})
	require.NoError(t, rt.OpenSession(bg, SessionSpec{ID: "s", Cwd: t.TempDir()}))
	require.NoError(t, rt.Close())

	again := open(t, Options{Dir: dir})
	require.ErrorIs(t, again.CancelTurn(bg, "s", false), fault.AgentNotFound)
	require.EqualError(t, again.CancelTurn(bg, "s", false), `dsh: session "s" not found (not attached)`)
	_, live := again.Agent("s")
	require.False(t, live, "cancelling a stored session does not wake it")
	_, err := again.PromptSession(bg, "s", event.Text("reply back"), event.Source{Kind: "user", RPCID: "r1"})
	require.NoError(t, err)
	idle(t, again, "s")
	require.Contains(t, userTexts(t, again, "s"), `"rpcId":"r1"`)
	reply, err := mustAgent(t, again, "s").LastReply()
	require.NoError(t, err)
	require.Equal(t, "back", reply)

	_, err = again.PromptSession(bg, "s", event.Text("sleep 10m"), user)
	require.NoError(t, err)
	require.NoError(t, again.CancelTurn(bg, "s", false))
	idle(t, again, "s")

	_, err = again.PromptSession(bg, "ghost", event.Text("hi"), user)
	require.ErrorIs(t, err, fault.QuerySessionNotFound)
	require.ErrorIs(t, again.CancelTurn(bg, "ghost", false), fault.AgentNotFound)
	child, err := again.Spawn(bg, mustAgent(t, again, "s"), "w", event.Text("sleep 10m"))
	require.NoError(t, err)
	_, err = again.PromptSession(bg, child, event.Text("hi"), user)
	require.ErrorIs(t, err, fault.OwnedBySubagent)
	require.ErrorIs(t, again.CancelTurn(bg, child, false), fault.OwnedBySubagent)
}

func mustAgent(t *testing.T, rt *Runtime, id string) *Handle {
	t.Helper()
	h, ok := rt.Agent(id)
	require.True(t, ok, "%s is live", id)
	return h
}

// SendFrom from a handle whose agent left the runtime is
// fault.ParentNotLive (still fault.Unauthorized); from the live one it
// logs the given source. AgentElsewhere finds nothing on a JSONL store.
func TestSendFromAStaleParentIsParentNotLive(t *testing.T) {
	rt := open(t, Options{Dir: t.TempDir()})
	p, err := rt.StartAgent(bg, "p")
	require.NoError(t, err)
	child, err := rt.Spawn(bg, p, "w", event.Text("reply ok"))
	require.NoError(t, err)
	_, _, err = rt.WaitChild(bg, child)
	require.NoError(t, err)
	_, err = rt.SendFrom(bg, p, child, event.Text("reply again"), event.Source{Kind: "user", RPCID: "r2"})
	require.NoError(t, err)
	_, _, err = rt.WaitChild(bg, child)
	require.NoError(t, err)
	require.Contains(t, userTexts(t, rt, child), `"rpcId":"r2"`)

	require.NoError(t, p.h.Dispose(bg))
	_, err = rt.SendFrom(bg, p, child, event.Text("reply late"), user)
	require.ErrorIs(t, err, fault.ParentNotLive)
	require.ErrorIs(t, err, fault.Unauthorized)
	_, ok, err := rt.AgentElsewhere(bg, "p")
	require.NoError(t, err)
	require.False(t, ok)
}

// Once a full disk failed a session's log, PromptSession refuses (nothing
// is acknowledged that could not be logged) and the failed agent leaves
// the runtime; while the disk has no room a prompt is refused again
// without resuming it; when it has room again, the next prompt resumes
// the session from its log and is logged.
func TestPromptSessionRefusesWhileTheDiskIsFull(t *testing.T) {
	faults := faultfs.New(nil)
	rt, err := openWith(Options{Dir: t.TempDir()}, session.WithFS(faults))
	require.NoError(t, err)
	t.Cleanup(func() { _ = rt.Close() }) // the failed log's release fails
	require.NoError(t, rt.OpenSession(bg, SessionSpec{ID: "full-1", Cwd: t.TempDir()}))
	_, err = rt.PromptSession(bg, "full-1", event.Text("reply kept"), user)
	require.NoError(t, err)
	idle(t, rt, "full-1")
	durable, err := rt.actors.Sessions().Flush(bg, rt.actors.Sessions().Get("full-1"))
	require.NoError(t, err)
	require.True(t, durable, "reply kept is on disk before it fills up")

	faults.SetFull(true)
	_, err = rt.PromptSession(bg, "full-1", event.Text("reply lost to the disk"), user)
	require.NoError(t, err, "the log has not failed yet")
	idle(t, rt, "full-1")
	_, err = rt.actors.Sessions().Flush(bg, rt.actors.Sessions().Get("full-1"))
	require.ErrorIs(t, err, session.ErrLogFailed, "the full disk failed the log")
	_, err = rt.PromptSession(bg, "full-1", event.Text("reply refused"), user)
	require.ErrorIs(t, err, syscall.ENOSPC)
	_, live := rt.Agent("full-1")
	require.False(t, live, "the failed agent left the runtime")
	room := false
	rt.roomOnDisk = func() bool { return room }
	_, err = rt.PromptSession(bg, "full-1", event.Text("reply refused again"), user)
	require.ErrorIs(t, err, syscall.ENOSPC)
	_, live = rt.Agent("full-1")
	require.False(t, live, "not resumed while the disk has no room")
	room = true

	faults.SetFull(false)
	_, err = rt.PromptSession(bg, "full-1", event.Text("reply after room came back"), user)
	require.NoError(t, err)
	idle(t, rt, "full-1")
	texts := userTexts(t, rt, "full-1")
	require.Contains(t, texts, "reply kept")
	require.Contains(t, texts, "reply after room came back")
	require.NotContains(t, texts, "reply refused")
}

func TestFullLogSetCountsEachSessionOnce(t *testing.T) {
	var s fullLogSet
	require.False(t, s.has("a"))
	s.add("a")
	s.add("a")
	s.add("b")
	require.True(t, s.has("a"))
	s.remove("a")
	require.False(t, s.has("a"), "one remove takes out an id added twice")
	require.True(t, s.has("b"), "the others stay")
	s.remove("b")
	s.remove("b")
	require.Equal(t, int32(0), s.n.Load(), "an empty set is seen empty without its lock")
}

func TestStripedLockHashesIdsWithFNV1a(t *testing.T) {
	var l stripedLock
	m := l.lock("session-1")
	require.Same(t, m, &l[strhash.FNV1a("session-1")%64])
	require.False(t, m.TryLock(), "the stripe is held until its unlock")
	m.Unlock()
}

// Prompts racing the one that finds its agent's log failed by a full disk
// all fail with ENOSPC and none resumes the session: a prompt to a live
// agent takes no lock, but the failed agent leaves the runtime under the
// session's prompt lock, so a prompt that no longer finds it waits for
// the full disk to be recorded before it would resume. Run with -race.
func TestPromptsRacingAFailedLogNeverResumeItOnAFullDisk(t *testing.T) {
	faults := faultfs.New(nil)
	rt, err := openWith(Options{Dir: t.TempDir()}, session.WithFS(faults))
	require.NoError(t, err)
	t.Cleanup(func() { _ = rt.Close() }) // the failed logs' releases fail
	rt.roomOnDisk = func() bool { return false }
	cwd := t.TempDir()
	for round := range 10 {
		id := fmt.Sprint("racing-full-", round)
		faults.SetFull(false)
		require.NoError(t, rt.OpenSession(bg, SessionSpec{ID: id, Cwd: cwd}))
		durable, err := rt.actors.Sessions().Flush(bg, rt.actors.Sessions().Get(id))
		require.NoError(t, err)
		require.True(t, durable, "%s is on disk before it fills up", id)
		faults.SetFull(true)
		_, err = rt.PromptSession(bg, id, event.Text("reply lost to the disk"), user)
		require.NoError(t, err, "the log has not failed yet")
		idle(t, rt, id)
		_, err = rt.actors.Sessions().Flush(bg, rt.actors.Sessions().Get(id))
		require.ErrorIs(t, err, session.ErrLogFailed, "the full disk failed the log")

		errs := make(chan error, 8)
		for range cap(errs) {
			go func() {
				_, err := rt.PromptSession(bg, id, event.Text("reply refused"), user)
				errs <- err
			}()
		}
		for range cap(errs) {
			err := testkit.Receive(t, errs, "a racing prompt's outcome")
			require.ErrorIs(t, err, syscall.ENOSPC, "round %d", round)
		}
		_, live := rt.Agent(id)
		require.False(t, live, "round %d: the failed agent left and was not resumed", round)
	}
}

// readCountingFS counts the reads of session logs (a whole-file read, or
// an open for reading only).
type readCountingFS struct {
	sessionfs.OSFS
	reads atomic.Int32
}

func (f *readCountingFS) count(name string) {
	if strings.HasPrefix(filepath.Base(name), "session.jsonl") {
		f.reads.Add(1)
	}
}

func (f *readCountingFS) ReadFile(name string) ([]byte, error) {
	f.count(name)
	return f.OSFS.ReadFile(name)
}

func (f *readCountingFS) OpenFile(name string, flag int, perm fs.FileMode) (sessionfs.File, error) {
	if flag&(os.O_WRONLY|os.O_RDWR) == 0 {
		f.count(name)
	}
	return f.OSFS.OpenFile(name, flag, perm)
}

// OpenSession of a stored session reads its log once to check it and
// once to resume it; with Existing, an unknown id is refused, and
// nothing is made for it.
func TestOpenSessionOfAnExistingSessionReadsItsLogTwice(t *testing.T) {
	dir, cwd := t.TempDir(), t.TempDir()
	rt := open(t, Options{Dir: dir})
	require.NoError(t, rt.OpenSession(bg, SessionSpec{ID: "s", Cwd: cwd}))
	require.NoError(t, rt.Close())

	var fsys readCountingFS
	again, err := openWith(Options{Dir: dir}, session.WithFS(&fsys))
	require.NoError(t, err)
	defer func() { require.NoError(t, again.Close()) }()
	unknown := filepath.Join(t.TempDir(), "unknown")
	err = again.OpenSession(bg, SessionSpec{ID: "nobody", Cwd: unknown, Resume: true, Existing: true})
	require.ErrorIs(t, err, fault.QuerySessionNotFound)
	require.NoDirExists(t, unknown, "nothing is made for an unknown id")
	require.NoError(t, again.OpenSession(bg, SessionSpec{ID: "s", Cwd: cwd, Resume: true, Existing: true}))
	_, err = again.History(bg, "s")
	require.NoError(t, err)
	require.EqualValues(t, 2, fsys.reads.Load(), "reads of the log: one to check it, one to resume it")
	_, err = again.History(bg, "nobody")
	require.ErrorIs(t, err, fault.QuerySessionNotFound, "no session was made for it")
}
