// The page: the sessions sidebar, the open conversation (a top-level
// session, or a continuable child addressed {parentSessionId,
// childSessionId} through subagent.* only), the header catalog tree, and
// the live frame stream that keeps them current.

import { rpc, streamEvents } from './client.js';
import { t, lang, relativeTime, describeError } from './i18n.js';
import { el, errorContent } from './dom.js';
import { Catalogs } from './catalogs.js';
import { CatalogAction } from './tree.js';
import { Transcript, PAGE_MESSAGES } from './transcript.js';
import { ConversationView } from './conversation.js';
import { SessionSearch } from './search.js';
import { BlockType, EventType, Frame } from './vocabulary.js';
import { sessionState, noteTurn } from './states.js';

const STORAGE_KEY = 'dsh.sessions.current';

const state = {
  // sessionId → session.list item {sessionId, updatedAt, running, blank,
  // parentSessionId?, cwd?, projections?} plus the page's own title (from
  // projections.values.title or the first user message seen in a frame).
  sessions: new Map(),
  current: null, // {sessionId, address: {parentSessionId, childSessionId} | null}
  transcript: null,
  connection: 'connecting', // the event stream: 'connecting' | 'connected' | 'reconnecting'
  parents: new Map(), // child session id → its direct parent's, as far as the page has seen
  restoredWithoutAddress: null, // the session id restored on load with no catalog address, until the sidebar loads
};

const $ = (selector) => document.querySelector(selector);

const catalogs = new Catalogs(rpc, onCatalogChange);
const action = new CatalogAction({
  root: $('#catalog-action'),
  catalogs,
  summaryOf: (id) => state.sessions.get(id),
  onOpenChild: (address) => openConversation(address.childSessionId, address, { focus: true }),
});
const view = new ConversationView($('#conversation'), {
  onSend: send,
  onRetry: send,
  onStop: () => rpc('session.cancel', { sessionId: state.current.sessionId }),
  onLoadOlder: () => state.transcript?.loadOlder(),
  onOpenParent: () => openSession(state.current.address?.parentSessionId ?? state.parents.get(state.current.sessionId)),
});

const search = new SessionSearch(document, {
  rpc,
  labelOf: (id) => (state.parents.has(id) ? labelOf(id) : titleOf(state.sessions.get(id))),
  onOpen: (id, seq) => openSession(id, seq),
  onToggle: (searching) => {
    $('#session-list').hidden = searching;
    renderSidebar();
  },
});

// openSession opens id; with seq, at that event (a search hit). Only a
// child its parent's catalog lists is addressed (subagent.* routes); any
// other session, one with a parent included, opens through session.*
// (read-only when it has a parent). The parent's catalog is read again
// first when the one the page holds does not name the child (it may be
// older than the child).
async function openSession(id, seq) {
  openConversation(id, await catalogAddress(id), { focus: true, seq });
}

// catalogAddress is the subagent address of id when its parent's catalog
// lists it, else null; the catalog is read again first when the one the
// page holds does not name id.
async function catalogAddress(id) {
  const parentSessionId = state.parents.get(id) ?? state.sessions.get(id)?.parentSessionId;
  if (parentSessionId && !catalogs.get(parentSessionId)?.entries.some((e) => e.id === id)) {
    await catalogs.refresh(parentSessionId, { membership: true });
  }
  return parentSessionId && catalogs.entry(parentSessionId, id) ? { parentSessionId, childSessionId: id } : null;
}

// ancestorsOf is the chain of known parents of id, root first.
function ancestorsOf(id) {
  const chain = [];
  for (let x = state.parents.get(id); x && !chain.includes(x); x = state.parents.get(x)) chain.unshift(x);
  return chain;
}

// labelOf names session id as the sidebar or the tree does: a child by its
// label in its parent's catalog, else its title, else its id; a top-level
// session by its title (titleOf).
function labelOf(id) {
  const parent = state.parents.get(id);
  if (!parent) return titleOf(state.sessions.get(id));
  return catalogs.entry(parent, id)?.label || state.sessions.get(id)?.title || id;
}

// onCatalogChange redraws the tree when parentId's rows changed, else only
// says whether they are loading; and the chrome when it reads that catalog.
function onCatalogChange(parentId, rowsChanged) {
  if (rowsChanged) action.renderSoon();
  else action.renderBusy();
  const current = state.current;
  if (current && [current.sessionId, current.address?.parentSessionId, state.parents.get(current.sessionId)].includes(parentId)) {
    renderChrome();
  }
}

// --- sidebar ---------------------------------------------------------------

let sidebarQueued = false;

// renderSidebarSoon coalesces the many per-event redraws into one, at the
// next animation frame.
function renderSidebarSoon() {
  if (sidebarQueued) return;
  sidebarQueued = true;
  requestAnimationFrame(() => {
    sidebarQueued = false;
    renderSidebar();
  });
}

function titleOf(summary) {
  return summary?.title || t('app.untitled');
}

const MAX_DEPTH = 16;

// renderSidebar lists top-level sessions, newest activity first; with
// "show child sessions" each is followed by its children (one-shot, forks
// and continuable ones alike), indented. Rows whose titles are the same
// also show the start of their ids.
function renderSidebar() {
  const all = [...state.sessions.values()]
    .sort((a, b) => b.updatedAt - a.updatedAt || (a.sessionId < b.sessionId ? -1 : 1));
  const showChildren = $('#show-children').checked;
  const children = new Map();
  for (const s of all) {
    if (s.parentSessionId) children.set(s.parentSessionId, [...(children.get(s.parentSessionId) ?? []), s]);
  }
  const rows = [];
  const add = (summary, depth) => {
    rows.push({ summary, depth });
    if (!showChildren || depth >= MAX_DEPTH) return;
    for (const child of children.get(summary.sessionId) ?? []) add(child, depth + 1);
  };
  for (const s of all) {
    if (!s.parentSessionId) add(s, 0);
    else if (showChildren && !state.sessions.has(s.parentSessionId)) add(s, 1); // its parent is not listed
  }
  const titles = new Map();
  for (const { summary } of rows) titles.set(rowTitle(summary), (titles.get(rowTitle(summary)) ?? 0) + 1);
  $('#session-list').replaceChildren(...rows.map(({ summary, depth }) =>
    sessionRow(summary, depth, titles.get(rowTitle(summary)) > 1)));
  $('#sessions-empty').hidden = rows.length > 0 || !$('#search-panel').hidden;
  search.relabel();
}

function rowTitle(summary) {
  return summary.parentSessionId ? labelOf(summary.sessionId) : titleOf(summary);
}

// shortId is the start of a session id that tells it from others alike.
function shortId(id) {
  return id.replace(/^session-/, '').slice(0, 8);
}

function sessionRow(summary, depth, ambiguous) {
  const shown = sessionState(summary);
  const title = el('span', { class: 'session-title' }, el('span', { class: 'title-text' }, rowTitle(summary)));
  if (ambiguous) title.append(el('span', { class: 'session-id' }, `#${shortId(summary.sessionId)}`));
  const button = el('button', { type: 'button', class: depth > 0 ? 'session child' : 'session',
    'data-id': summary.sessionId, 'data-state': shown.state }, title,
  el('span', { class: 'session-meta' },
    el('span', { class: `dot ${shown.tone}`, 'aria-hidden': 'true' }),
    el('span', { class: `state ${shown.tone}` }, shown.text),
    el('span', { class: 'when' }, `· ${relativeTime(summary.updatedAt)}`)));
  if (depth > 0) button.style.paddingLeft = `${12 + 14 * depth}px`;
  if (summary.sessionId === state.current?.sessionId) button.setAttribute('aria-current', 'page');
  button.addEventListener('click', () => (depth > 0 ? openSession(summary.sessionId)
    : openConversation(summary.sessionId, null, { focus: true })));
  return el('li', {}, button);
}

// reloadSessions re-pulls the sidebar; on failure the rows shown stay and
// the error is shown above them.
async function reloadSessions() {
  const result = await rpc('session.list', {});
  $('#sessions-error').hidden = result.ok;
  if (!result.ok) {
    $('#sessions-error').replaceChildren(el('strong', {}, t('sessions.error')), ' ', ...errorContent(describeError(result.error)));
    return;
  }
  for (const item of result.value.items) {
    if (item.parentSessionId) state.parents.set(item.sessionId, item.parentSessionId);
  }
  const previous = state.sessions;
  state.sessions = new Map(result.value.items.map((item) => [item.sessionId, {
    ...item, title: item.projections?.values?.title || previous.get(item.sessionId)?.title || '',
  }]));
  renderSidebar();
  action.render();
  renderChrome();
  addressRestored();
}

// addressRestored gives the selection restored without a catalog address,
// once the sidebar has loaded, the address opening it from the sidebar
// would: a continuable child is reopened through subagent.*, and
// the catalog read marks a damaged one as unreadable.
async function addressRestored() {
  const id = state.restoredWithoutAddress;
  state.restoredWithoutAddress = null;
  if (!id || !state.parents.has(id)) return;
  const address = await catalogAddress(id);
  if (address && state.current?.sessionId === id && !state.current.address) openConversation(id, address);
}

async function createSession() {
  const result = await rpc('session.create', {});
  if (!result.ok) {
    view.showAlert(result.error);
    return;
  }
  const { sessionId } = result.value;
  if (!state.sessions.has(sessionId)) {
    state.sessions.set(sessionId, { sessionId, updatedAt: Date.now(), running: false, blank: true, title: '' });
  }
  renderSidebar();
  openConversation(sessionId, null);
  $('#composer-input').focus();
}

// --- conversation ------------------------------------------------------------

function historyRoute(sessionId, address) {
  return (beforeSeq) => {
    const page = { maxMessages: PAGE_MESSAGES, ...(beforeSeq === undefined ? {} : { beforeSeq }) };
    return address ? rpc('subagent.history', { ...address, ...page }) : rpc('session.history', { sessionId, ...page });
  };
}

// conversationKey names a conversation as the page keeps its draft and
// what it has shown: a child by its address, a top-level session by its id.
function conversationKey(sessionId, address) {
  return address ? `${address.parentSessionId}/${sessionId}` : sessionId;
}

// openConversation shows sessionId; a catalog-discovered child carries its
// address, and its transcript and prompts then use subagent.* only. With
// seq (a search hit) it pages back until that event is held and marks it.
function openConversation(sessionId, address, { focus = false, seq } = {}) {
  state.transcript?.close();
  state.current = { sessionId, address };
  if (address) state.parents.set(sessionId, address.parentSessionId);
  localStorage.setItem(STORAGE_KEY, JSON.stringify({ sessionId, subagentAddress: address }));
  const transcript = new Transcript(historyRoute(sessionId, address), (change) => {
    if (state.transcript !== transcript) return;
    if (change.appended) view.appendEvents(transcript, change.appended);
    else view.renderTranscript(transcript, change.prepended);
    if (change.appended) renderStartHint();
    else renderChrome(); // a damaged log takes no messages
  });
  transcript.key = conversationKey(sessionId, address);
  transcript.isChild = !!address || state.parents.has(sessionId);
  state.transcript = transcript;
  view.switchDraft(transcript.key);
  view.showFound(null);
  view.showAlert(null);
  action.setParent(sessionId);
  catalogs.refresh(sessionId);
  if (address) catalogs.refresh(address.parentSessionId);
  renderChrome();
  renderSidebar();
  view.renderTranscript(transcript);
  const pulled = transcript.pullTail();
  if (focus) view.focusHeading();
  if (seq !== undefined) revealSeq(transcript, pulled, seq);
}

// revealSeq waits for the tail page, loads older pages until the event seq
// is held (or nothing older is left), then marks it in view.
async function revealSeq(transcript, pulled, seq) {
  await pulled;
  while (state.transcript === transcript && transcript.hasMore && transcript.events[0]?.seq > seq) {
    const before = transcript.events[0].seq;
    await transcript.loadOlder();
    if (transcript.events[0]?.seq === before) break;
  }
  if (state.transcript === transcript) view.showFound(seq);
}

// renderStartHint shows how to start while nothing is selected or the open
// top-level session is empty.
function renderStartHint() {
  const transcript = state.transcript;
  view.showStartHint(!state.current ||
    (!transcript.isChild && transcript.loaded && !transcript.error && transcript.events.length === 0));
}

// renderChrome draws the heading and the parent path and picks the
// composer for the current conversation.
function renderChrome() {
  const current = state.current;
  renderStartHint();
  if (!current) {
    view.renderHeader(t('app.pick'), undefined);
    view.renderPath([]);
    view.renderComposer('unavailable');
    return;
  }
  view.renderPath(ancestorsOf(current.sessionId).map((id) => ({ label: labelOf(id), open: () => openSession(id) })));
  const summary = state.sessions.get(current.sessionId);
  const address = current.address;
  const entry = address && catalogs.entry(address.parentSessionId, address.childSessionId);
  const listed = entry?.activity === 'running';
  const shown = summary
    ? sessionState(summary)
    : entry && sessionState({ running: listed, live: listed, lastTurn: null });
  view.renderHeader(entry?.label || summary?.title || (address ? current.sessionId : t('app.untitled')), shown || undefined);
  // Stop: a running top-level turn only; never in a child's view.
  const topLevel = !address && !summary?.parentSessionId && !state.parents.has(current.sessionId);
  view.showStop(topLevel && state.connection === 'connected' && summary?.running === true);
  if (state.connection !== 'connected') {
    view.renderComposer('offline');
    return;
  }
  if (!address) {
    const diagnostic = !topLevel && diagnosticOf(current.sessionId);
    if (topLevel) view.renderComposer(state.transcript?.damage ? 'damaged' : 'ordinary');
    else view.renderComposer(diagnostic ? 'unreadable' : 'record', diagnostic?.reason);
    return;
  }
  const parentAvailable = catalogs.get(address.parentSessionId)?.parentAvailable === true;
  const nested = ancestorsOf(current.sessionId).length >= 2;
  view.renderComposer(parentAvailable ? 'ordinary' : nested ? 'readonly-nested' : 'readonly');
}

// diagnosticOf is the row that names child id in its parent's catalog as
// a continuable child whose record cannot be read, if the page holds one.
function diagnosticOf(id) {
  const parent = state.parents.get(id) ?? state.sessions.get(id)?.parentSessionId;
  return parent ? catalogs.get(parent)?.entries.find((e) => e.kind !== 'child' && e.id === id) : undefined;
}

function send(text) {
  const content = [{ type: BlockType.text, text }];
  const { sessionId, address } = state.current;
  return address
    ? rpc('subagent.prompt', { ...address, content })
    : rpc('session.prompt', { sessionId, mode: 'queue', content });
}

// --- live frames -------------------------------------------------------------

function onFrame(frame) {
  switch (frame.type) {
    case Frame.sessionAdded: return onSessionAdded(frame);
    case Frame.sessionStatus: return onSessionStatus(frame);
    case Frame.sessionRemoved: return onSessionRemoved(frame);
    case Frame.sessionEvent: return onSessionEvent(frame);
    default: return undefined;
  }
}

// onSessionAdded merges the new row and, when a shown catalog gained a
// member, schedules one debounced refetch of that catalog.
function onSessionAdded(frame) {
  const now = Date.now();
  const previous = state.sessions.get(frame.sessionId);
  state.sessions.set(frame.sessionId, {
    ...previous, sessionId: frame.sessionId, updatedAt: previous?.updatedAt ?? now,
    running: previous?.running ?? false, blank: frame.blank, title: previous?.title ?? '',
    parentSessionId: frame.parentSessionId, cwd: frame.cwd, live: true,
  });
  if (frame.parentSessionId) state.parents.set(frame.sessionId, frame.parentSessionId);
  const parent = frame.parentSessionId;
  if (parent && (parent === state.current?.sessionId || action.observes(parent))) catalogs.scheduleRefresh(parent);
  if (frame.sessionId === state.current?.address?.parentSessionId) catalogs.scheduleRefresh(frame.sessionId);
  if (frame.sessionId === state.current?.sessionId) state.transcript.pullTail();
  renderSidebarSoon();
}

// onSessionStatus flips the running state in place: the sidebar row, every
// loaded catalog row for that child, the open heading. No refetch.
function onSessionStatus(frame) {
  const summary = state.sessions.get(frame.sessionId);
  if (summary) summary.running = frame.running;
  catalogs.flipActivity(frame.sessionId, frame.running);
  action.renderSoon(); // the row's state reads the session's too
  if (frame.sessionId === state.current?.sessionId) renderChrome();
  renderSidebarSoon();
}

function onSessionRemoved(frame) {
  const summary = state.sessions.get(frame.sessionId);
  if (summary) Object.assign(summary, { running: false, live: false });
  catalogs.flipActivity(frame.sessionId, false);
  action.renderSoon(); // no longer live
  catalogs.markParentOffline(frame.sessionId);
  if (frame.sessionId === state.current?.sessionId) renderChrome();
  renderSidebarSoon();
}

function onSessionEvent(frame) {
  const summary = state.sessions.get(frame.sessionId);
  const type = frame.event.type;
  const titled = !!summary && !summary.title && type === EventType.userMessage;
  if (summary) {
    summary.updatedAt = Math.max(summary.updatedAt ?? 0, frame.event.time);
    if (titled) summary.title = firstLine(frame.event.data?.content);
    noteTurn(summary, frame.event);
    renderSidebarSoon();
  }
  if (frame.sessionId !== state.current?.sessionId) return;
  state.transcript.accept(frame.event);
  // The heading shows the title and the state of the last turn.
  if (titled || type === EventType.turnStart || type === EventType.turnEnd) renderChrome();
}

function firstLine(content) {
  const text = (Array.isArray(content) ? content : []).find((b) => b?.type === BlockType.text)?.text ?? '';
  return text.split('\n')[0].slice(0, 80);
}

// onConnection re-pulls everything shown each time the stream (re)opens.
function onConnection(connection) {
  $('#connection').textContent = t(`conn.${connection}`);
  $('#connection').dataset.state = connection;
  state.connection = connection;
  renderChrome();
  if (connection !== 'connected') return;
  reloadSessions();
  const current = state.current;
  if (!current) return;
  catalogs.refresh(current.sessionId);
  if (current.address) catalogs.refresh(current.address.parentSessionId);
  for (const id of action.expanded.keys()) catalogs.refresh(id);
  state.transcript.pullTail();
}

// --- boot --------------------------------------------------------------------

function restoreSelection() {
  try {
    const saved = JSON.parse(localStorage.getItem(STORAGE_KEY) ?? 'null');
    if (!saved?.sessionId) return;
    openConversation(saved.sessionId, saved.subagentAddress ?? null);
    if (!saved.subagentAddress) state.restoredWithoutAddress = saved.sessionId;
  } catch {
    localStorage.removeItem(STORAGE_KEY);
  }
}

function boot() {
  document.documentElement.lang = lang === 'zh' ? 'zh-CN' : 'en';
  $('#sessions-heading').textContent = t('app.sessions');
  $('#sessions-empty').textContent = t('app.noSessions');
  $('#new-session').textContent = t('app.newSession');
  $('#new-session').addEventListener('click', createSession);
  $('#show-children-label').textContent = t('sidebar.children');
  $('#show-children').addEventListener('change', renderSidebar);
  renderChrome();
  restoreSelection();
  onConnection('connecting');
  streamEvents(onFrame, onConnection);
}

boot();
