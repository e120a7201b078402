// The conversation region: heading, transcript and composer. A child view
// has no Stop control; its composer is replaced by a read-only notice while
// the exact parent is not live (web-host §4.4).

import { t } from './i18n.js';
import { el } from './dom.js';

export class ConversationView {
  // root holds the region's elements (see index.html); onSend(text)
  // resolves to an RPC result; onLoadOlder() pages back.
  constructor(root, { onSend, onLoadOlder }) {
    this.heading = root.querySelector('#conversation-title');
    this.status = root.querySelector('#conversation-status');
    this.scroller = root.querySelector('#transcript');
    this.list = root.querySelector('#messages');
    this.older = root.querySelector('#load-older');
    this.empty = root.querySelector('#transcript-empty');
    this.form = root.querySelector('#composer-form');
    this.textarea = root.querySelector('#composer-input');
    this.sendButton = root.querySelector('#composer-send');
    this.alert = root.querySelector('#composer-alert');
    this.readonly = root.querySelector('#composer-readonly');
    this.announcer = root.querySelector('#announcer');
    this.announced = { transcript: null, seq: -1 };
    this.onSend = onSend;
    this.older.textContent = t('transcript.loadOlder');
    this.older.addEventListener('click', onLoadOlder);
    this.setupComposer();
  }

  setupComposer() {
    this.textarea.placeholder = t('composer.placeholder');
    this.textarea.setAttribute('aria-label', t('composer.placeholder'));
    this.sendButton.textContent = t('composer.send');
    this.readonly.replaceChildren(el('strong', {}, t('readonly.title')), el('p', {}, t('readonly.body')));
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

  // submit clears the draft optimistically and restores it (if the box is
  // still empty) when the send fails, showing "message (code)".
  async submit() {
    const text = this.textarea.value;
    if (!text.trim() || this.textarea.disabled) return;
    this.textarea.value = '';
    this.showAlert(null);
    const result = await this.onSend(text);
    if (result.ok) return;
    if (this.textarea.value === '') this.textarea.value = text;
    this.showAlert(`${result.error.message} (${result.error.code})`);
  }

  showAlert(text) {
    this.alert.hidden = !text;
    this.alert.textContent = text ?? '';
  }

  // renderHeader shows the conversation's title and running state.
  renderHeader(title, running) {
    this.heading.textContent = title;
    this.status.hidden = running === undefined;
    this.status.replaceChildren(
      el('span', { class: `dot ${running ? 'running' : 'inactive'}`, 'aria-hidden': 'true' }),
      t(running ? 'activity.running' : 'activity.inactive'),
    );
  }

  // renderComposer: 'ordinary' (textarea + Send), 'readonly' (notice) or
  // 'unavailable' (disabled, nothing selected).
  renderComposer(mode) {
    this.form.hidden = mode === 'readonly';
    this.readonly.hidden = mode !== 'readonly';
    const disabled = mode !== 'ordinary';
    this.textarea.disabled = disabled;
    this.sendButton.disabled = disabled;
    this.textarea.placeholder = t(disabled ? 'composer.unavailable' : 'composer.placeholder');
    if (mode !== 'ordinary') this.showAlert(null);
  }

  // renderTranscript redraws the messages, keeping the view pinned to the
  // bottom when it was there, and the same messages in view when older ones
  // were prepended.
  renderTranscript(transcript, prepended = false) {
    const fromBottom = this.scroller.scrollHeight - this.scroller.scrollTop;
    const pinned = fromBottom - this.scroller.clientHeight < 40;
    const items = transcript ? transcript.events.map(renderEvent).filter(Boolean) : [];
    this.list.replaceChildren(...items);
    this.older.hidden = !transcript?.hasMore;
    this.empty.hidden = !transcript?.loaded || items.length > 0;
    this.empty.textContent = transcript?.error ? `${transcript.error.message} (${transcript.error.code})` : t('transcript.empty');
    if (prepended) this.scroller.scrollTop = this.scroller.scrollHeight - fromBottom;
    else if (pinned) this.scroller.scrollTop = this.scroller.scrollHeight;
    this.announceReply(transcript);
  }

  // announceReply reads out an assistant message that arrived live (not
  // the ones a history page brought) through the polite live region.
  announceReply(transcript) {
    if (!transcript?.loaded) return;
    if (this.announced.transcript === transcript) {
      const reply = transcript.events.findLast((e) => e.seq > this.announced.seq && e.type === 'assistant/message');
      if (reply) this.announcer.textContent = textOf(reply.data?.message?.content ?? reply.data?.content);
    }
    this.announced = { transcript, seq: transcript.events.at(-1)?.seq ?? -1 };
  }

  focusHeading() {
    this.heading.focus();
  }
}

function textOf(content) {
  return (Array.isArray(content) ? content : [])
    .filter((block) => block?.type === 'text')
    .map((block) => block.text)
    .join('\n');
}

function bubble(kind, author, text, seq) {
  return el('li', { class: `message ${kind}`, 'data-seq': String(seq) },
    el('span', { class: 'author' }, author), el('div', { class: 'body' }, text));
}

// renderEvent folds one raw event into a transcript item, or null for
// events the transcript does not show.
function renderEvent(event) {
  const data = event.data ?? {};
  switch (event.type) {
    case 'user/message': {
      const author = data.source?.kind === 'coordinator' ? t('transcript.parent') : t('transcript.you');
      return bubble('user', author, textOf(data.content), event.seq);
    }
    case 'assistant/message':
      return bubble('assistant', t('transcript.agent'), textOf(data.message?.content ?? data.content), event.seq);
    case 'turn/end': {
      // An error reason is the seed-era loop's {step, message, code?} or
      // {step, failure}, or the later {error:{message, code}} (which this
      // runtime wrote before); an aborted one may carry {reason:{kind}}.
      const kind = data.reason?.kind;
      if (!kind || kind === 'completed') return null;
      const failure = typeof data.reason.message === 'string' ? data.reason : data.reason.failure ?? data.reason.error;
      const detail = failure?.message ?? data.reason.reason?.kind ?? '';
      return el('li', { class: 'message note', 'data-seq': String(event.seq) },
        t('transcript.turnEnded', { kind: detail ? `${kind} — ${detail}` : kind }));
    }
    default:
      return null;
  }
}
