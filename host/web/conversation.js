// The conversation region: heading, transcript and composer. A child view
// has no Stop control; its composer is replaced by a read-only notice while
// the exact parent is not live (web-host §4.4).

import { t, describeError } from './i18n.js';
import { el, errorContent } from './dom.js';
import { BlockType, ChunkType, EventType, SourceKind } from './vocabulary.js';
import { outcomeOf, outcomeState } from './states.js';

export class ConversationView {
  // root holds the region's elements (see index.html); onSend(text)
  // resolves to an RPC result; onLoadOlder() pages back; onOpenParent()
  // opens the parent of the child shown read-only.
  // onStop() asks the running top-level turn to stop and resolves to an
  // RPC result; onRetry(text) sends text again after a failed turn.
  constructor(root, { onSend, onLoadOlder, onOpenParent, onStop, onRetry }) {
    this.path = root.querySelector('#conversation-path');
    this.heading = root.querySelector('#conversation-title');
    this.status = root.querySelector('#conversation-status');
    this.scroller = root.querySelector('#transcript');
    this.list = root.querySelector('#messages');
    this.older = root.querySelector('#load-older');
    this.empty = root.querySelector('#transcript-empty');
    this.damage = root.querySelector('#damage-notice');
    this.form = root.querySelector('#composer-form');
    this.textarea = root.querySelector('#composer-input');
    this.sendButton = root.querySelector('#composer-send');
    this.stopButton = root.querySelector('#composer-stop');
    this.onStop = onStop;
    this.onRetry = onRetry;
    this.alert = root.querySelector('#composer-alert');
    this.readonly = root.querySelector('#composer-readonly');
    this.offline = root.querySelector('#composer-offline');
    this.startHint = root.querySelector('#start-hint');
    this.drafts = new Map(); // conversation key → unsent text
    this.draftKey = null;
    this.onOpenParent = onOpenParent;
    this.announcer = root.querySelector('#announcer');
    // seenSeq: per conversation key, the last event seq this page showed.
    this.seenSeq = new Map();
    this.foundSeq = null; // the seq a search hit opened the conversation at
    this.onSend = onSend;
    this.older.textContent = t('transcript.loadOlder');
    this.older.addEventListener('click', onLoadOlder);
    this.setupComposer();
  }

  setupComposer() {
    this.textarea.placeholder = t('composer.placeholder');
    this.textarea.setAttribute('aria-label', t('composer.placeholder'));
    this.sendButton.textContent = t('composer.send');
    this.stopButton.textContent = t('composer.stop');
    this.stopButton.addEventListener('click', async () => {
      const result = await this.onStop();
      if (!result.ok) this.showAlert(result.error);
    });
    this.openParentButton = el('button', { type: 'button', class: 'link open-parent' }, t('readonly.openParent'));
    this.openParentButton.addEventListener('click', () => this.onOpenParent());
    this.offline.textContent = t('composer.offline');
    this.startHint.replaceChildren(startHint());
    this.form.addEventListener('submit', (event) => {
      event.preventDefault();
      this.submit();
    });
    this.textarea.addEventListener('keydown', (event) => {
      if (event.key !== 'Enter' || event.shiftKey || event.isComposing || event.repeat) return;
      event.preventDefault();
      this.submit();
    });
  }

  // switchDraft keeps the unsent text of the conversation being left and
  // brings back the one of the conversation key (a draft stays with the
  // conversation it was typed in).
  switchDraft(key) {
    if (key === this.draftKey) return;
    if (this.draftKey !== null) this.drafts.set(this.draftKey, this.textarea.value);
    this.draftKey = key;
    this.textarea.value = this.drafts.get(key) ?? '';
    this.drafts.delete(key);
  }

  // submit clears the draft optimistically and restores it (if the box is
  // still empty) when the send fails, showing the error; a failure that
  // arrives after the user moved to another conversation restores the draft
  // there, unseen until they come back.
  async submit() {
    const text = this.textarea.value;
    if (!text.trim() || this.textarea.disabled) return;
    const key = this.draftKey;
    this.textarea.value = '';
    this.showAlert(null);
    const result = await this.onSend(text);
    if (result.ok) return;
    if (key !== this.draftKey) {
      if (!this.drafts.get(key)) this.drafts.set(key, text);
      return;
    }
    if (this.textarea.value === '') this.textarea.value = text;
    this.showAlert(result.error);
  }

  // showAlert shows an RPC error (its text in the page's language, the
  // server's code and message as a detail), or hides the alert for null.
  showAlert(error) {
    this.alert.hidden = !error;
    this.alert.replaceChildren(...(error ? errorContent(describeError(error)) : []));
  }

  // renderPath shows the chain of parents above a child's heading, root
  // first, each a button that opens it; [] hides it.
  renderPath(ancestors) {
    this.path.hidden = ancestors.length === 0;
    this.path.setAttribute('aria-label', t('path.label'));
    const items = ancestors.flatMap(({ label, open }, i) => {
      const button = el('button', { type: 'button', class: 'link' }, label);
      button.addEventListener('click', open);
      return i === 0 ? [button] : [el('span', { class: 'sep', 'aria-hidden': 'true' }, '/'), button];
    });
    this.path.replaceChildren(...items);
  }

  // showStartHint shows or hides how to start (an empty page).
  showStartHint(shown) {
    this.startHint.hidden = !shown;
  }

  // renderHeader shows the conversation's title and state (a sessionState;
  // undefined hides it).
  renderHeader(title, state) {
    this.heading.textContent = title;
    this.status.hidden = state === undefined;
    this.status.dataset.state = state?.state ?? '';
    this.status.replaceChildren(...(state ? [
      el('span', { class: `dot ${state.tone}`, 'aria-hidden': 'true' }),
      el('span', { class: `state ${state.tone}` }, state.text),
    ] : []));
  }

  // showStop shows the Stop action (a running top-level turn only).
  showStop(shown) {
    this.stopButton.hidden = !shown;
  }

  // renderComposer: 'ordinary' (textarea + Send), 'readonly' (notice: the
  // parent is not live; 'readonly-nested' when that parent is a child
  // itself, which a message cannot wake directly), 'record' (notice: a child reached outside its
  // parent's catalog, which takes no follow-ups here), 'unreadable'
  // (notice: a continuable child its parent's catalog names as unreadable,
  // for reason), 'damaged' (notice: a top-level log damaged in its middle,
  // which no message can resume), 'offline' (disabled while the server is
  // unreachable, saying so; the draft stays) or 'unavailable' (disabled,
  // nothing selected).
  renderComposer(mode, reason) {
    const notice = ['readonly', 'readonly-nested', 'record', 'unreadable', 'damaged'].includes(mode);
    this.form.hidden = notice;
    this.readonly.hidden = !notice;
    const shown = `${mode}/${reason ?? ''}`;
    if (notice && this.readonly.dataset.mode !== shown) {
      this.readonly.dataset.mode = shown;
      const [title, body] = {
        record: ['oneshot.title', 'oneshot.body'],
        unreadable: ['unreadable.title', 'unreadable.body'],
        damaged: ['damaged.title', 'damaged.body'],
        readonly: ['readonly.title', 'readonly.body'],
        'readonly-nested': ['readonly.title', 'readonly.nested'],
      }[mode];
      const why = reason ? t(`diagnostic.${reason}`) : '';
      const parentLink = mode === 'damaged' ? [] : [this.openParentButton];
      this.readonly.replaceChildren(el('strong', {}, t(title)), el('p', {}, t(body, { why })), ...parentLink);
    }
    this.offline.hidden = mode !== 'offline';
    const disabled = mode !== 'ordinary';
    this.textarea.disabled = disabled;
    this.sendButton.disabled = disabled;
    this.textarea.placeholder = t(disabled && mode !== 'offline' ? 'composer.unavailable' : 'composer.placeholder');
    if (notice || mode === 'unavailable') this.showAlert(null);
  }

  // renderTranscript redraws the messages, keeping the view pinned to the
  // bottom when it was there, and the same messages in view when older ones
  // were prepended.
  renderTranscript(transcript, prepended = false) {
    const fromBottom = this.scroller.scrollHeight - this.scroller.scrollTop;
    const pinned = this.isPinned();
    // A tool call the reader unfolded stays unfolded across redraws.
    const unfolded = new Set([...this.list.querySelectorAll('.message.tool details[open]')]
      .map((details) => details.parentElement.dataset.call));
    const fragment = document.createDocumentFragment();
    this.items = new TranscriptItems(fragment, transcript);
    for (const event of transcript?.events ?? []) this.items.add(event);
    for (const item of fragment.querySelectorAll('.message.tool')) {
      if (unfolded.has(item.dataset.call)) item.querySelector('details').open = true;
    }
    this.list.replaceChildren(fragment);
    this.items.root = this.list;
    this.markFound();
    this.older.hidden = !transcript?.hasMore;
    this.renderDamage(transcript?.damage);
    this.renderEmpty(transcript);
    if (prepended) this.scroller.scrollTop = this.scroller.scrollHeight - fromBottom;
    else if (pinned) this.scroller.scrollTop = this.scroller.scrollHeight;
    this.placeRetry(transcript);
    this.announceReply(transcript);
  }

  // placeRetry offers to send again the message of a top-level
  // conversation's last turn when that turn failed and nothing came after.
  placeRetry(transcript) {
    this.list.querySelector('.retry-turn')?.remove();
    if (!transcript || transcript.isChild) return;
    const items = this.list.querySelectorAll(':scope > .message.user, :scope > .message.assistant, :scope > .message.outcome');
    const last = items[items.length - 1];
    if (!last?.classList.contains('failed')) return;
    const prompt = [...items].findLast((item) => item.classList.contains('user'));
    if (!prompt) return;
    const text = prompt.querySelector('.body').textContent;
    const retry = el('button', { type: 'button', class: 'retry-turn' }, t('outcome.retry'));
    retry.addEventListener('click', async () => {
      retry.disabled = true;
      const result = await this.onRetry(text);
      retry.disabled = false;
      if (!result.ok) this.showAlert(result.error);
    });
    last.append(retry);
  }

  // appendEvents draws events just added at the transcript's tail: new
  // items are appended and the items they complete are patched in place.
  appendEvents(transcript, events) {
    if (!this.items || this.items.transcript !== transcript) {
      this.renderTranscript(transcript);
      return;
    }
    const pinned = this.isPinned();
    for (const event of events) this.items.add(event);
    this.renderEmpty(transcript);
    if (pinned) this.scroller.scrollTop = this.scroller.scrollHeight;
    this.placeRetry(transcript);
    this.announceReply(transcript);
  }

  // renderDamage says where a damaged log stops being readable (null:
  // nothing to say): at an event line, or (line 0: a message refused
  // whole, which the damage names) right after the events shown.
  renderDamage(damage) {
    this.damage.hidden = !damage;
    const body = damage?.line > 0 ? 'damage.body' : 'damage.bodyAfter';
    this.damage.replaceChildren(...(damage
      ? [el('strong', {}, t('damage.title')), el('p', {}, t(body, { line: damage.line, damage: damage.damage }))]
      : []));
  }

  isPinned() {
    return this.scroller.scrollHeight - this.scroller.scrollTop - this.scroller.clientHeight < 40;
  }

  renderEmpty(transcript) {
    this.empty.hidden = !transcript?.loaded || this.list.childElementCount > 0;
    this.empty.replaceChildren(...(transcript?.error ? errorContent(describeError(transcript.error)) : [t('transcript.empty')]));
  }

  // announceReply reads out, through the polite live region, the newest
  // assistant message this page had not yet shown for the conversation: one
  // that arrived live, or while the conversation was closed or reloading
  // (a reply can come in the first page of a reopened conversation). The
  // first page of a conversation never opened before announces nothing.
  announceReply(transcript) {
    if (!transcript?.loaded) return;
    const seen = this.seenSeq.get(transcript.key);
    if (seen !== undefined) {
      const reply = transcript.events.findLast((e) => e.seq > seen && e.type === EventType.assistantMessage);
      if (reply) this.announcer.textContent = textOf(reply.data?.message?.content ?? reply.data?.content);
    }
    this.seenSeq.set(transcript.key, Math.max(seen ?? -1, transcript.events.at(-1)?.seq ?? -1));
  }

  // showFound marks the transcript item holding event seq (a search hit;
  // null for none) and scrolls it into view; the mark survives redraws.
  showFound(seq) {
    this.foundSeq = seq;
    this.markFound()?.scrollIntoView({ block: 'center' });
  }

  // markFound marks the item of foundSeq: the one that holds that event,
  // else the last one before it. It returns the item, if any.
  markFound() {
    const items = [...this.list.children];
    for (const item of items) item.classList.remove('found');
    if (this.foundSeq === null) return null;
    const seq = String(this.foundSeq);
    const item = items.find((i) => i.dataset.seq === seq || i.dataset.resultSeq === seq) ??
      items.findLast((i) => Number(i.dataset.seq) <= this.foundSeq);
    item?.classList.add('found');
    return item ?? null;
  }

  focusHeading() {
    this.heading.focus();
  }
}

function textOf(content) {
  return (Array.isArray(content) ? content : [])
    .filter((block) => block?.type === BlockType.text)
    .map((block) => block.text)
    .join('\n');
}

// parentWrittenSeq is the seq of a child's first own prompt, which its
// parent wrote (its source is {kind:"user"} all the same), when the
// transcript holds the child's whole log; otherwise -1. A fork child's log
// opens with the turns it inherited, which keep their own authors; the
// child's own log starts at its subagent/descriptor (the last one: an
// inherited ancestor's comes before it).
function parentWrittenSeq(transcript) {
  if (!transcript?.isChild || transcript.hasMore) return -1;
  const own = transcript.events.findLastIndex((e) => e.type === EventType.subagentDescriptor);
  return transcript.events.slice(own + 1).find((e) => e.type === EventType.userMessage)?.seq ?? -1;
}

// startHint tells how to start: the scripted agent's commands, or plain
// language when a model is configured.
function startHint() {
  const example = (command, what) => el('li', {}, el('code', {}, command), ' — ', what);
  return el('div', {},
    el('strong', {}, t('start.title')),
    el('p', {}, t('start.body')),
    el('ul', {}, example('spawn researcher: reply hello', t('start.spawn')), example('reply hi', t('start.reply'))),
    el('p', {}, t('start.model')));
}

function bubble(kind, author, text, seq) {
  return el('li', { class: `message ${kind}`, 'data-seq': String(seq) },
    el('span', { class: 'author' }, author), el('div', { class: 'body' }, text));
}

// TranscriptItems folds raw events, one at a time, into the items of a
// list: a model step's streamed text shows as it arrives until its
// assistant message replaces it, and each tool call is one folded item that
// its result completes.
class TranscriptItems {
  constructor(root, transcript) {
    this.root = root;
    this.transcript = transcript;
    this.streaming = new Map(); // "turn/step" -> {item, text}
    this.calls = new Map(); // callId -> the call's item
    this.parentWritten = parentWrittenSeq(transcript);
    // A child whose whole log is held and has no parent-written prompt
    // yet: its next user message is that prompt.
    this.parentPending = this.parentWritten < 0 && !!transcript?.isChild && !transcript.hasMore;
  }

  add(event) {
    const data = event.data ?? {};
    const step = `${data.turn}/${data.step}`;
    switch (event.type) {
      case EventType.assistantChunk: {
        if (data.chunk?.type !== ChunkType.textDelta) break;
        let open = this.streaming.get(step);
        if (!open) {
          open = { item: bubble('assistant streaming', t('transcript.agent'), '', event.seq), text: '' };
          this.streaming.set(step, open);
          this.root.append(open.item);
        }
        open.text += data.chunk.text ?? '';
        open.item.querySelector('.body').textContent = open.text;
        break;
      }
      case EventType.assistantMessage: {
        const open = this.streaming.get(step);
        const empty = textOf(data.message?.content ?? data.content) === '';
        this.streaming.delete(step);
        if (open && empty) open.item.remove();
        else if (open) open.item.replaceWith(renderEvent(event, this.parentWritten));
        else if (!empty) this.root.append(renderEvent(event, this.parentWritten));
        break;
      }
      case EventType.toolCall: {
        const item = toolItem(data, event.seq);
        this.calls.set(data.callId, item);
        this.root.append(item);
        break;
      }
      case EventType.toolResult: {
        const block = data.message?.content?.[0];
        const item = this.calls.get(block?.toolCallId);
        if (item) completeTool(item, block, event.seq);
        break;
      }
      default: {
        if (event.type === EventType.userMessage && this.parentPending) {
          this.parentPending = false;
          this.parentWritten = event.seq;
        }
        const item = renderEvent(event, this.parentWritten);
        if (item) this.root.append(item);
      }
    }
  }
}

// outcomeItem tells how a turn that did not complete ended: failed (red,
// with the failure's message and code), stopped or cut off (amber, with
// why); null for a completed turn.
function outcomeItem(outcome, seq) {
  const state = outcomeState(outcome);
  if (!state) return null;
  const why = t(`cut.${outcome.kind}`) === `cut.${outcome.kind}` ? outcome.kind : t(`cut.${outcome.kind}`);
  const item = el('li', { class: `message outcome ${state}`, 'data-seq': String(seq), role: 'note' },
    el('strong', { class: 'outcome-title' }, t(`outcome.${state}`, { why })));
  if (outcome.message) item.append(el('div', { class: 'outcome-message' }, outcome.message));
  if (outcome.code) item.append(el('small', { class: 'outcome-code' }, outcome.code));
  return item;
}

// toolItem is a folded tool call: its name, expandable to its arguments
// and (once logged) its result.
function toolItem(call, seq) {
  const status = el('span', { class: 'tool-status' }, t('transcript.toolRunning'));
  const summary = el('summary', {}, t('transcript.tool', { name: call.name ?? '' }), ' ', status);
  return el('li', { class: 'message tool', 'data-call': call.callId ?? '', 'data-seq': String(seq) },
    el('details', {}, summary, el('pre', { class: 'tool-args' }, call.arguments ?? '')));
}

// completeTool adds a result (event seq) to its call's item.
function completeTool(item, block, seq) {
  const failed = block.isError === true;
  item.dataset.resultSeq = String(seq);
  item.classList.toggle('failed', failed);
  item.querySelector('.tool-status').textContent = t(failed ? 'transcript.toolFailed' : 'transcript.toolDone');
  item.querySelector('details').append(el('pre', { class: 'tool-result' }, textOf(block.content)));
}

// renderEvent folds one raw event into a transcript item, or null for
// events the transcript does not show.
function renderEvent(event, parentWritten) {
  const data = event.data ?? {};
  switch (event.type) {
    case EventType.userMessage: {
      const byParent = data.source?.kind === SourceKind.coordinator || event.seq === parentWritten;
      const author = byParent ? t('transcript.parent') : t('transcript.you');
      return bubble('user', author, textOf(data.content), event.seq);
    }
    case EventType.assistantMessage:
      return bubble('assistant', t('transcript.agent'), textOf(data.message?.content ?? data.content), event.seq);
    case EventType.turnEnd:
      return outcomeItem(outcomeOf(data), event.seq);
    case EventType.llmRetry: {
      // A failed model call about to be retried as a new turn.
      const vars = { n: data.retry, max: data.maxRetries, ms: Math.round(data.delayMs ?? 0), why: data.failure?.message ?? '' };
      const key = typeof data.maxRetries === 'number' ? 'transcript.retrying' : 'transcript.retryingUnbounded';
      return el('li', { class: 'message note retry', 'data-seq': String(event.seq) }, t(key, vars));
    }
    default:
      return null;
  }
}
