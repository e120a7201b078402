package host

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/stretchr/testify/require"
)

// chromiumPath finds Debian's chromium with lookPath (exec.LookPath).
// Without it the browser test is skipped, except under CI=true (which
// .ci/run exports) where it fails.
func chromiumPath(t testing.TB, lookPath func(string) (string, error)) string {
	t.Helper()
	for _, name := range []string{"/usr/bin/chromium", "chromium", "chromium-browser"} {
		if path, err := lookPath(name); err == nil {
			return path
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("chromium is required when CI=true (apt-get install chromium fonts-noto-cjk)")
		return ""
	}
	t.Skip("chromium is not installed; apt-get install chromium fonts-noto-cjk to run the browser test")
	return ""
}

// outcomeTB records what chromiumPath would end the test with.
type outcomeTB struct {
	testing.TB
	fatal, skip string
}

func (o *outcomeTB) Helper()           {}
func (o *outcomeTB) Fatal(args ...any) { o.fatal = fmt.Sprint(args...) }
func (o *outcomeTB) Skip(args ...any)  { o.skip = fmt.Sprint(args...) }

// TestMissingChromiumFailsUnderCI: without chromium the browser test skips
// on a developer's machine but fails under CI=true, so CI cannot pass
// without having run it.
func TestMissingChromiumFailsUnderCI(t *testing.T) {
	nowhere := func(string) (string, error) { return "", exec.ErrNotFound }
	for _, tc := range []struct {
		ci          string
		fails, skip bool
	}{{"true", true, false}, {"", false, true}, {"false", false, true}} {
		t.Setenv("CI", tc.ci)
		var o outcomeTB
		require.Empty(t, chromiumPath(&o, nowhere))
		require.Equal(t, tc.fails, o.fatal != "", "CI=%q", tc.ci)
		require.Equal(t, tc.skip, o.skip != "", "CI=%q", tc.ci)
	}
	found := func(name string) (string, error) { return "/opt/" + name, nil }
	require.Equal(t, "/opt//usr/bin/chromium", chromiumPath(&outcomeTB{}, found))
}

// browserPage drives one chromium tab and saves a screenshot per step.
type browserPage struct {
	t     testing.TB
	ctx   context.Context
	shots string
	step  int
}

func openPage(t testing.TB, chromium string) *browserPage {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.WindowSize(1280, 800),
		chromedp.Env("TMPDIR="+browserTemp(t)))
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(allocCtx)
	ctx, cancelTime := context.WithTimeout(ctx, 4*time.Minute)
	t.Cleanup(func() { cancelTime(); cancelTab(); cancelAlloc() })
	shots := t.TempDir()
	if tt, ok := t.(*testing.T); ok {
		shots = artifactDir(tt)
	}
	t.Logf("browser screenshots: %s", shots)
	return &browserPage{t: t, ctx: ctx, shots: shots}
}

// browserTemp is a folder for chromium's TMPDIR, where it leaves its
// singleton folder (org.chromium.Chromium.*), removed once the test and
// its browser are done. It is not t.TempDir: a socket path in a folder
// named after a long test exceeds the 108 bytes a Unix socket may have.
func browserTemp(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "chromium-")
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, os.RemoveAll(dir)) })
	return dir
}

// do runs actions and fails the test on error.
func (p *browserPage) do(actions ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	require.NoError(p.t, chromedp.Do(p.ctx, actions...))
}

// eval evaluates a JavaScript expression (with chromedp.EvalAwaitPromise,
// the value its promise resolves to; the promise must settle by itself).
func eval[T any](p *browserPage, expression string, opts ...chromedp.EvaluateOption) T {
	p.t.Helper()
	v, err := chromedp.Run(p.ctx, chromedp.Evaluate[T](expression, opts...))
	require.NoError(p.t, err, expression)
	return v
}

// until waits until the JavaScript expression is truthy.
func (p *browserPage) until(expression string) {
	p.t.Helper()
	_, err := chromedp.Run(p.ctx, chromedp.Poll[bool](expression, chromedp.WithPollingTimeout(time.Minute)))
	require.NoError(p.t, err, "waiting for %s", expression)
}

// shot saves the viewport as NN-name.png.
func (p *browserPage) shot(name string) {
	p.t.Helper()
	p.step++
	buf, err := chromedp.Run(p.ctx, chromedp.CaptureScreenshot())
	require.NoError(p.t, err)
	require.NoError(p.t, os.WriteFile(filepath.Join(p.shots, fmt.Sprintf("%02d-%s.png", p.step, name)), buf, 0o644))
}

// send types text into the composer and presses Enter.
func (p *browserPage) send(text string) {
	p.t.Helper()
	p.do(chromedp.SetValue(chromedp.ID("composer-input"), text), chromedp.Focus(chromedp.ID("composer-input")), pressEnter)
}

// pressEnter is a bare Enter key press: chromedp's KeyEvent would also send
// a char event, which types a newline even when keydown was cancelled.
var pressEnter = chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
	for _, typ := range []input.DispatchKeyEventType{input.DispatchKeyEventTypeRawKeyDown, input.DispatchKeyEventTypeKeyUp} {
		_, err := cdp.Call(ctx, t, input.DispatchKeyEvent, input.DispatchKeyEventParams{
			Type: typ, Key: "Enter", Code: "Enter", WindowsVirtualKeyCode: 13, NativeVirtualKeyCode: 13})
		if err != nil {
			return err
		}
	}
	return nil
})

// key presses one key on the focused element.
func (p *browserPage) key(k string) {
	p.t.Helper()
	p.do(chromedp.KeyEvent(k))
}

func (p *browserPage) focusedID() string {
	return eval[string](p, `document.activeElement?.dataset?.id ?? (document.activeElement?.className || '')`)
}

func js(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func rowSelector(id string) string { return fmt.Sprintf(`[role="treeitem"][data-id=%s]`, js(id)) }

// clickRow clicks the part (".label", ".disclosure") of the tree row id once
// the tree is not refreshing, finding and clicking it in one script: the
// tree redraws whole on every catalog change, so a node looked up in one
// step may be gone by the next (a mouse click by node id then fails).
func clickRow(p *browserPage, id, part string) {
	p.t.Helper()
	target := js(rowSelector(id) + " ." + part)
	p.until(fmt.Sprintf(`document.querySelector(%s) !== null && document.querySelector('[role="tree"][aria-busy="true"], [role="tree"] [aria-busy="true"]') === null`, target))
	require.True(p.t, eval[bool](p, fmt.Sprintf(`(() => { const e = document.querySelector(%s); e?.click(); return !!e; })()`, target)))
}

// TestBrowserSubagentConversations drives the page in headless chromium
// against the real handler, runtime and subagent service.
func TestBrowserSubagentConversations(t *testing.T) {
	chromium := chromiumPath(t, exec.LookPath)
	s := newRuntimeStack(t)
	p := openPage(t, chromium)

	parentID := createTopLevelSession(t, s, p)
	researcher, reviewer := spawnChildren(t, s, p, parentID)
	editor := expandLazily(t, s, p, parentID, researcher, reviewer)
	navigateWithTheKeyboard(t, p, researcher, editor, reviewer)
	watchARowFlipWithoutRefetch(t, s, p, parentID)
	openChildAndFollowUp(t, s, p, parentID, researcher)
	announceAReplyThatCameWhileAway(t, s, p, parentID, researcher)
	reconnectAndLoadOlder(t, s, p, parentID, researcher)
	failASendAndRestoreTheDraft(t, s, p, parentID)
	disposeTheParent(t, s, p, parentID)
	checkEnglishAndDark(t, p)
	showAnUnreadableSession(t, s, p)
}

func createTopLevelSession(t *testing.T, s *runtimeStack, p *browserPage) string {
	p.do(chromedp.Navigate(s.url + "/?lang=zh"))
	p.until(`document.querySelector('#connection').dataset.state === 'connected'`)
	require.False(t, eval[bool](p, `document.querySelector('#start-hint').hidden`), "an empty page tells how to start")
	require.Contains(t, eval[string](p, `document.querySelector('#start-hint').textContent`), "spawn researcher: reply hello")
	require.Contains(t, eval[string](p, `document.querySelector('#start-hint').textContent`), "脚本智能体")
	p.shot("empty")
	p.do(chromedp.Click(chromedp.ID("new-session")))
	p.until(`document.querySelector('.session[aria-current="page"]') !== null`)
	p.until(`!document.querySelector('#start-hint').hidden && !document.querySelector('#composer-input').disabled`)
	parentID := eval[string](p, `JSON.parse(localStorage.getItem('dsh.sessions.current')).sessionId`)
	require.Equal(t, 1, s.recorder.count("session.create", nil))
	require.True(t, isLive(s.rt, parentID), "session.create starts a live top-level agent")
	p.shot("created")
	return parentID
}

// spawnChildren prompts the parent with spawn commands and waits for the
// header action to count both healthy children.
func spawnChildren(t *testing.T, s *runtimeStack, p *browserPage, parentID string) (researcher, reviewer string) {
	p.send("spawn researcher: spawn editor: reply edited\nspawn reviewer: reply reviewed\nreply spawned two")
	p.until(`document.querySelector('.trigger')?.textContent === '2 个子代理'`)
	require.Equal(t, 1, s.recorder.count("session.prompt", map[string]any{"sessionId": parentID, "mode": "queue"}))
	p.until(`[...document.querySelectorAll('.message.assistant')].some((m) => m.textContent.includes('spawned two'))`)
	require.True(t, eval[bool](p, `document.querySelector('#start-hint').hidden`), "the hint leaves once the session has messages")
	p.shot("spawned")
	children := s.settled(t, parentID, 2)
	require.Equal(t, "researcher", children[0].Label)
	require.Equal(t, "reviewer", children[1].Label)
	return children[0].ID, children[1].ID
}

// expandLazily opens the tree (a corrupt stored child shows as a disabled
// diagnostic) and expands a child and a grandchild branch, each loading
// only its own direct catalog.
func expandLazily(t *testing.T, s *runtimeStack, p *browserPage, parentID, researcher, reviewer string) string {
	corrupt := s.plantCorruptChild(t, parentID)
	p.do(chromedp.Click(chromedp.CSS(".trigger")))
	p.until(fmt.Sprintf(`document.querySelector(%s) !== null`, js(rowSelector(corrupt))))
	require.Equal(t, "2 个子代理", eval[string](p, `document.querySelector('.trigger').textContent`), "diagnostics are not counted")
	require.Equal(t, 3, eval[int](p, `document.querySelectorAll('[role="tree"] > [role="treeitem"][aria-level="1"][aria-setsize="3"]').length`))
	require.Equal(t, "true", eval[string](p, fmt.Sprintf(`document.querySelector(%s).getAttribute('aria-disabled')`, js(rowSelector(corrupt)))))
	require.Contains(t, eval[string](p, fmt.Sprintf(`document.querySelector(%s).textContent`, js(rowSelector(corrupt)))), "会话记录损坏")
	label := eval[string](p, fmt.Sprintf(`document.querySelector(%s).getAttribute('aria-label')`, js(rowSelector(reviewer))))
	require.Contains(t, label, "reviewer")
	require.Contains(t, label, "可继续 · 已完成")
	require.Contains(t, label, "刚刚")
	require.Zero(t, s.recorder.count("subagent.list", map[string]any{"parentSessionId": researcher}), "no recursive prefetch")
	p.shot("tree")

	clickRow(p, researcher, "disclosure")
	p.until(`document.querySelector('[role="treeitem"][aria-level="2"]') !== null`)
	require.Equal(t, 1, s.recorder.count("subagent.list", map[string]any{"parentSessionId": researcher}))
	editor := eval[string](p, `document.querySelector('[role="treeitem"][aria-level="2"]').dataset.id`)
	require.Zero(t, s.recorder.count("subagent.list", map[string]any{"parentSessionId": editor}))
	clickRow(p, editor, "disclosure")
	p.until(fmt.Sprintf(`!document.querySelector(%s).hasAttribute('aria-expanded')`, js(rowSelector(editor))))
	require.Equal(t, 1, s.recorder.count("subagent.list", map[string]any{"parentSessionId": editor}), "the grandchild's own catalog, once")
	p.shot("expanded")
	return editor
}

func navigateWithTheKeyboard(t *testing.T, p *browserPage, researcher, editor, reviewer string) {
	p.do(chromedp.Focus(chromedp.CSS(".trigger")))
	p.key(kb.ArrowDown)
	require.Equal(t, researcher, p.focusedID())
	p.key(kb.End)
	require.Equal(t, reviewer, p.focusedID(), "End skips the disabled diagnostic")
	p.key(kb.Home)
	require.Equal(t, researcher, p.focusedID())
	p.key(kb.ArrowUp)
	require.Equal(t, reviewer, p.focusedID(), "ArrowUp wraps")
	p.key(kb.ArrowDown)
	require.Equal(t, researcher, p.focusedID(), "ArrowDown wraps")
	p.key(kb.ArrowDown)
	require.Equal(t, editor, p.focusedID())
	require.Equal(t, []string{editor}, eval[[]string](p, `[...document.querySelectorAll('[role="tree"] [tabindex="0"]')].map((e) => e.dataset.id)`),
		"one Tab stop for the tree: the focused row")
	p.key(kb.ArrowLeft)
	require.Equal(t, researcher, p.focusedID(), "ArrowLeft on a child row moves to its parent")
	require.Equal(t, []string{researcher}, eval[[]string](p, `[...document.querySelectorAll('[role="tree"] [tabindex="0"]')].map((e) => e.dataset.id)`))
	p.key(kb.ArrowLeft)
	p.until(`document.querySelector('[role="treeitem"][aria-level="2"]') === null`)
	require.Equal(t, researcher, p.focusedID(), "collapsing keeps focus on the row")
	p.key(kb.ArrowRight)
	p.until(`document.querySelector('[role="treeitem"][aria-level="2"]') !== null`)
	p.shot("keyboard")
	p.key(kb.Escape)
	p.until(`document.querySelector('.menu').hidden && document.activeElement === document.querySelector('.trigger')`)
	require.Equal(t, "false", eval[string](p, `document.querySelector('.trigger').getAttribute('aria-expanded')`))
}

// watchARowFlipWithoutRefetch spawns a slow child while the tree is open:
// one debounced refetch brings its row in, running; its status frame then
// flips it to inactive with no further subagent.list.
func watchARowFlipWithoutRefetch(t *testing.T, s *runtimeStack, p *browserPage, parentID string) {
	// Opening shows the cached rows at once and refetches them (held back
	// here, as on a slow network): the baseline is taken once that
	// refetch is in, which the tree shows by leaving aria-busy.
	opened := s.recorder.count("subagent.list", map[string]any{"parentSessionId": parentID})
	s.recorder.delay("subagent.list", 300*time.Millisecond)
	p.do(chromedp.Click(chromedp.CSS(".trigger")))
	p.until(`document.querySelectorAll('[role="tree"] [role="treeitem"]').length > 0`)
	p.until(`document.querySelector('[role="tree"]').getAttribute('aria-busy') === 'false'`)
	s.recorder.delay("subagent.list", 0)
	before := s.recorder.count("subagent.list", map[string]any{"parentSessionId": parentID})
	require.Equal(t, opened+1, before, "opening the tree refetches its catalog once")
	p.send("spawn slowpoke: sleep 3s")
	p.until(`[...document.querySelectorAll('[role="treeitem"]')].some((r) => r.textContent.includes('slowpoke') && r.textContent.includes('正在处理'))`)
	require.Equal(t, before+1, s.recorder.count("subagent.list", map[string]any{"parentSessionId": parentID}),
		"one debounced refetch for the new member")
	p.shot("row-running")
	p.until(`[...document.querySelectorAll('[role="treeitem"]')].some((r) => r.textContent.includes('slowpoke') && r.textContent.includes('已完成'))`)
	require.Equal(t, before+1, s.recorder.count("subagent.list", map[string]any{"parentSessionId": parentID}),
		"the status frame flips the row in place")
	p.shot("row-inactive")
	s.settled(t, parentID, 3)
}

// openChildAndFollowUp opens a settled child from the tree (history only,
// nothing activated), then sends a follow-up and sees its turn arrive live.
func openChildAndFollowUp(t *testing.T, s *runtimeStack, p *browserPage, parentID, researcher string) {
	clickRow(p, researcher, "label")
	p.until(`document.querySelector('#conversation-title').textContent === 'researcher'`)
	p.until(`document.querySelector('#messages').textContent.includes('spawn editor: reply edited')`)
	p.until(`!document.querySelector('#composer-input').disabled`)
	address := map[string]any{"parentSessionId": parentID, "childSessionId": researcher}
	require.Equal(t, 1, s.recorder.count("subagent.history", map[string]any{"parentSessionId": parentID, "childSessionId": researcher, "maxMessages": 50}))
	require.Zero(t, s.recorder.count("session.history", map[string]any{"sessionId": researcher}))
	require.False(t, isLive(s.rt, researcher), "reading a child's history activates nothing")
	require.Equal(t, "父代理", eval[string](p, `document.querySelector('.message.user .author').textContent`),
		"the first prompt was written by the parent")
	p.shot("child")
	followThePathAndKeepDrafts(t, p, researcher)

	p.send("reply followed up")
	p.until(`[...document.querySelectorAll('.message.assistant')].some((m) => m.textContent.includes('followed up'))`)
	// A live reply is announced (by the render that holds it, which may
	// come after the one that first drew it).
	p.until(`document.querySelector('#announcer').textContent === 'followed up'`)
	require.Equal(t, 1, s.recorder.count("subagent.prompt", address))
	require.Zero(t, s.recorder.count("session.prompt", map[string]any{"sessionId": researcher}))
	require.Equal(t, 1, eval[int](p, `[...document.querySelectorAll('.message.assistant')].filter((m) => m.textContent.includes('followed up')).length`),
		"no duplicate event across the cold resume")
	require.Equal(t, 1, eval[int](p, `[...document.querySelectorAll('.message.user')].filter((m) => m.textContent.includes('reply followed up')).length`))
	require.Equal(t, "你", eval[string](p, `[...document.querySelectorAll('.message.user')].find((m) => m.textContent.includes('reply followed up')).querySelector('.author').textContent`))
	require.False(t, eval[bool](p, `document.body.innerText.includes('停止生成') || document.body.innerText.includes('Stop generating')`), "no Stop in a child view")
	p.shot("follow-up")
	s.settled(t, parentID, 3)
}

// announceAReplyThatCameWhileAway leaves the child for its parent, has
// another client follow the child up, and reopens the child once its turn
// has settled: the reply arrives in the reopened conversation's first page,
// and is announced all the same, since this page had not shown it.
func announceAReplyThatCameWhileAway(t *testing.T, s *runtimeStack, p *browserPage, parentID, researcher string) {
	p.do(chromedp.Click(chromedp.CSS("#conversation-path button")))
	p.until(`document.querySelector('#conversation-title').textContent === 'spawn researcher: spawn editor: reply edited'`)
	prompt := fmt.Sprintf(`fetch('/api/subagent.prompt', {method: 'POST', headers: {'content-type': 'application/json'}, body: JSON.stringify(`+
		`{type: 'client-request', rpcId: 'away', method: 'subagent.prompt', payload: {parentSessionId: %s, childSessionId: %s, content: [{type: 'text', text: 'reply while away'}]}})}).then((r) => r.status)`,
		js(parentID), js(researcher))
	status, err := chromedp.Run(p.ctx, chromedp.Evaluate[int](prompt, chromedp.EvalAwaitPromise))
	require.NoError(t, err)
	require.Equal(t, 200, status)
	s.settled(t, parentID, 3)
	p.do(chromedp.Click(chromedp.CSS(".trigger")))
	clickRow(p, researcher, "label")
	p.until(`document.querySelector('#conversation-title').textContent === 'researcher'`)
	p.until(`document.querySelector('#announcer').textContent === 'while away'`)
}

// reconnectAndLoadOlder cuts the event stream (the page reconnects with
// backoff and re-pulls what it shows), sends a long script whose turn arrives
// live over the new stream, then reloads: the child reopens on its tail page
// and "load older" pages back with beforeSeq.
func reconnectAndLoadOlder(t *testing.T, s *runtimeStack, p *browserPage, parentID, researcher string) {
	lists := s.recorder.count("session.list", nil)
	s.recorder.dropStreams()
	p.until(`document.querySelector('#connection').dataset.state === 'reconnecting' && document.querySelector('#composer-input').disabled && ` +
		`document.querySelector('#composer-offline').textContent === '与服务器的连接已断开，恢复连接后才能发送消息。' && !document.querySelector('#composer-offline').hidden`)
	p.until(`document.querySelector('#connection').dataset.state === 'connected'`)
	require.Eventually(t, func() bool { return s.recorder.count("session.list", nil) > lists }, time.Minute, 10*time.Millisecond,
		"a reconnect re-pulls the sessions")

	var script strings.Builder
	for i := 1; i <= 60; i++ {
		fmt.Fprintf(&script, "reply line %d\n", i)
	}
	p.send(script.String())
	p.until(`[...document.querySelectorAll('.message.assistant')].some((m) => m.textContent.endsWith('line 60'))`)
	s.settled(t, parentID, 3)

	p.do(chromedp.Reload())
	p.until(`document.querySelector('#conversation-title').textContent === 'researcher' && !document.querySelector('#load-older').hidden`)
	// The sidebar is rebuilt from session.list's items alone: top-level rows
	// only, titled from projections.values.title.
	p.until(`[...document.querySelectorAll('#session-list .session-title')].map((e) => e.textContent).join('|') === 'spawn researcher: spawn editor: reply edited'`)
	require.Equal(t, 50, eval[int](p, `document.querySelectorAll('.message.user, .message.assistant').length`), "the tail page holds 50 messages")
	first := eval[int](p, `Number(document.querySelector('#messages .message').dataset.seq)`)
	p.shot("tail-page")
	p.do(chromedp.Click(chromedp.ID("load-older")))
	p.until(`document.querySelector('#load-older').hidden`)
	require.Equal(t, 67, eval[int](p, `document.querySelectorAll('.message.user, .message.assistant').length`))
	require.Equal(t, 1, s.recorder.count("subagent.history",
		map[string]any{"parentSessionId": parentID, "childSessionId": researcher, "maxMessages": 50, "beforeSeq": first}))
	p.shot("load-older")
}

// failASendAndRestoreTheDraft drains the parent's continuable descendants
// (the parent stays live), so the next follow-up is refused: the draft comes
// back and the alert shows "message (code)".
func failASendAndRestoreTheDraft(t *testing.T, s *runtimeStack, p *browserPage, parentID string) {
	h, ok := s.rt.Agent(parentID)
	require.True(t, ok, "the parent is live")
	require.NoError(t, s.rt.Drain(context.Background(), h))
	p.send("reply lost")
	p.until(`document.querySelector('#composer-alert .error-text')?.textContent === '消息没有送达子代理'`)
	require.Equal(t, "subagent-not-delivered: message was not delivered", eval[string](p, `document.querySelector('#composer-alert .error-detail').textContent`),
		"the code and the server's words stay as a detail")
	require.Equal(t, "reply lost", eval[string](p, `document.querySelector('#composer-input').value`))
	p.shot("failed-send")
}

// disposeTheParent disposes the parent agent: the open child becomes
// read-only and stays readable.
func disposeTheParent(t *testing.T, s *runtimeStack, p *browserPage, parentID string) {
	require.NoError(t, s.rt.Release(context.Background(), parentID))
	p.until(`!document.querySelector('#composer-readonly').hidden`)
	require.Equal(t, "此子代理暂时只读只有父会话正在运行时才能给它的子代理发消息。让父会话重新运行（例如给它发一条消息）后即可在这里继续。打开父会话",
		eval[string](p, `document.querySelector('#composer-readonly').textContent`))
	require.Equal(t, "status", eval[string](p, `document.querySelector('#composer-readonly').getAttribute('role')`))
	require.True(t, eval[bool](p, `document.querySelector('#composer-form').hidden`))
	require.True(t, eval[bool](p, `document.querySelector('#messages').textContent.includes('followed up')`))
	p.shot("read-only")
}

// checkEnglishAndDark reloads the page in English (the child selection is
// restored through subagent.history) and in the dark theme.
func checkEnglishAndDark(t *testing.T, p *browserPage) {
	p.do(chromedp.Navigate(strings.Replace(eval[string](p, `location.href`), "lang=zh", "lang=en", 1)))
	p.until(`document.querySelector('#composer-readonly').textContent.startsWith('This subagent is read-only for now')`)
	p.until(`document.querySelector('.trigger')?.textContent === '1 subagent'`)
	require.Equal(t, "Parent sessions", eval[string](p, `document.querySelector('#conversation-path').getAttribute('aria-label')`))
	p.shot("english")
	_, err := chromedp.Call(p.ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
		Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "dark"}}})
	require.NoError(t, err)
	require.Equal(t, "rgb(21, 23, 27)", eval[string](p, `getComputedStyle(document.documentElement).backgroundColor`))
	p.do(chromedp.Click(chromedp.CSS(".trigger")))
	p.until(`document.querySelectorAll('[role="treeitem"]').length > 0`)
	p.shot("dark")
}

// clickNow clicks the element selector names as it is in the page now, in
// one step: a node the page redraws between a lookup and a mouse event
// cannot swallow the click.
func clickNow(p *browserPage, selector string) {
	p.t.Helper()
	require.True(p.t, eval[bool](p, fmt.Sprintf(`(() => { const e = document.querySelector(%s); e?.click(); return e !== null; })()`, js(selector))),
		"%s is in the page", selector)
}

// followThePathAndKeepDrafts: a child shows its parent path; clicking the
// parent opens it, and a draft stays with the conversation it was typed in.
func followThePathAndKeepDrafts(t *testing.T, p *browserPage, researcher string) {
	require.Equal(t, "spawn researcher: spawn editor: reply edited", eval[string](p, `document.querySelector('#conversation-path').textContent`))
	p.do(chromedp.SetValue(chromedp.ID("composer-input"), "draft for the child"))
	clickNow(p, "#conversation-path button")
	p.until(`document.querySelector('#conversation-title').textContent === 'spawn researcher: spawn editor: reply edited'`)
	require.True(t, eval[bool](p, `document.querySelector('#conversation-path').hidden`), "a top-level session has no parent path")
	require.Equal(t, "", eval[string](p, `document.querySelector('#composer-input').value`), "the child's draft stays with the child")
	p.do(chromedp.SetValue(chromedp.ID("composer-input"), "draft for the parent"))
	clickNow(p, ".trigger")
	p.until(fmt.Sprintf(`document.querySelector(%s) !== null`, js(rowSelector(researcher))))
	clickRow(p, researcher, "label")
	p.until(`document.querySelector('#conversation-title').textContent === 'researcher'`)
	require.Equal(t, "draft for the child", eval[string](p, `document.querySelector('#composer-input').value`))
	clickNow(p, "#conversation-path button")
	p.until(`document.querySelector('#composer-input').value === 'draft for the parent'`)
	eval[string](p, `document.querySelector('#composer-input').value = ''`)
	clickNow(p, ".trigger")
	p.until(fmt.Sprintf(`document.querySelector(%s) !== null`, js(rowSelector(researcher))))
	clickRow(p, researcher, "label")
	p.until(`document.querySelector('#conversation-title').textContent === 'researcher' && !document.querySelector('#composer-input').disabled`)
	eval[string](p, `document.querySelector('#composer-input').value = ''`)
}

// showAnUnreadableSession plants a stored session folder whose header names
// another session: the next session.list fails naming its file, and the
// sidebar says so above the rows it already shows.
func showAnUnreadableSession(t *testing.T, s *runtimeStack, p *browserPage) {
	path := plantUnreadableLog(t, s.root, "broken-log")
	rows := eval[int](p, `document.querySelectorAll('#session-list .session').length`)
	s.recorder.dropStreams()
	p.until(`!document.querySelector('#sessions-error').hidden`)
	text := eval[string](p, `document.querySelector('#sessions-error').textContent`)
	require.Contains(t, text, "Unable to load the sessions")
	require.Contains(t, text, `session list failed: corrupt session log "`+path+`"`)
	require.Equal(t, rows, eval[int](p, `document.querySelectorAll('#session-list .session').length`), "the rows shown stay")
	p.shot("unreadable-session")
}
