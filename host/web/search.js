// The sidebar's session search: a phrase typed in the box is sent to
// session.search (debounced; Enter searches at once), the hits replace the
// session list until the box is cleared (Escape clears it), and choosing a
// hit opens its conversation at the hit's seq. Arrow keys move between
// the box and the hits.

import { t, describeError } from './i18n.js';
import { el, errorContent } from './dom.js';
import { EventType } from './vocabulary.js';

const DEBOUNCE_MS = 250;
const PAGE_HITS = 20;

export class SessionSearch {
  // root holds #search-form, #search-input, #search-panel, #search-status,
  // #search-results and #search-more; rpc(method, payload) resolves to a
  // result; labelOf(sessionId) names a session; onOpen(sessionId, seq)
  // opens a hit; onToggle(searching) says whether hits replace the list.
  constructor(root, { rpc, labelOf, onOpen, onToggle }) {
    this.form = root.querySelector('#search-form');
    this.input = root.querySelector('#search-input');
    this.panel = root.querySelector('#search-panel');
    this.status = root.querySelector('#search-status');
    this.results = root.querySelector('#search-results');
    this.more = root.querySelector('#search-more');
    Object.assign(this, { rpc, labelOf, onOpen, onToggle });
    this.query = '';
    this.hits = [];
    this.generation = 0; // answers of an older search are dropped
    this.timer = null;
    this.setup();
  }

  setup() {
    this.setState('idle');
    this.input.placeholder = t('search.placeholder');
    this.input.setAttribute('aria-label', t('search.label'));
    this.form.setAttribute('aria-label', t('search.label'));
    this.results.setAttribute('aria-label', t('search.results'));
    this.more.textContent = t('search.more');
    this.form.addEventListener('submit', (event) => {
      event.preventDefault();
      this.searchNow();
    });
    this.input.addEventListener('input', () => {
      clearTimeout(this.timer);
      this.setState('pending');
      this.timer = setTimeout(() => this.searchNow(), DEBOUNCE_MS);
    });
    this.input.addEventListener('keydown', (event) => {
      if (event.key === 'Escape') {
        event.preventDefault();
        this.clear();
      } else if (event.key === 'ArrowDown' && this.hits.length > 0) {
        event.preventDefault();
        this.results.querySelector('button')?.focus();
      }
    });
    this.results.addEventListener('keydown', (event) => this.moveFocus(event));
    this.more.addEventListener('click', () => this.loadMore());
  }

  // searchNow searches for the box's text from the first hit; a blank box
  // ends the search.
  searchNow() {
    clearTimeout(this.timer);
    this.timer = null;
    const query = this.input.value.trim().split(/\s+/).join(' ');
    if (query === '') {
      this.end();
      return;
    }
    this.query = query;
    this.hits = [];
    this.fetch(0);
  }

  loadMore() {
    this.fetch(this.hits.length);
  }

  // setState records on the form whether a search is 'pending' (typed,
  // not sent yet), 'searching' (sent) or 'idle' (answered or ended), and
  // marks the hits busy meanwhile.
  setState(state) {
    this.form.dataset.state = state;
    this.results.setAttribute('aria-busy', String(state !== 'idle'));
  }

  async fetch(offset) {
    const generation = ++this.generation;
    this.panel.hidden = false;
    this.onToggle(true);
    this.setState('searching');
    this.status.textContent = t('search.searching');
    this.more.hidden = true;
    const result = await this.rpc('session.search', { query: this.query, limit: PAGE_HITS, offset });
    if (generation !== this.generation) return;
    this.setState(this.timer === null ? 'idle' : 'pending'); // more typed meanwhile
    if (!result.ok) {
      this.status.replaceChildren(el('strong', {}, t('search.error')), ' ', ...errorContent(describeError(result.error)));
      return;
    }
    const firstNew = this.hits.length;
    this.hits = this.hits.concat(result.value.hits);
    this.render(result.value.hasMore);
    if (offset > 0) this.results.querySelectorAll('button')[firstNew]?.focus();
  }

  render(hasMore) {
    this.status.textContent = this.hits.length === 0
      ? t('search.none', { query: this.query })
      : t(hasMore ? 'search.some' : `search.count.${this.hits.length === 1 ? 'one' : 'other'}`, { count: this.hits.length });
    this.results.replaceChildren(...this.hits.map((hit) => this.hitRow(hit)));
    this.more.hidden = !hasMore;
  }

  hitRow(hit) {
    const button = el('button', { type: 'button', class: 'hit', 'data-id': hit.sessionId, 'data-seq': String(hit.seq) },
      el('span', { class: 'hit-title' }, this.labelOf(hit.sessionId)),
      el('span', { class: 'hit-meta' }, kindOf(hit.type)),
      el('span', { class: 'hit-snippet' }, ...highlighted(hit.snippet, this.query)));
    button.addEventListener('click', () => this.onOpen(hit.sessionId, hit.seq));
    return el('li', {}, button);
  }

  // moveFocus: ArrowUp/ArrowDown step through the hits (ArrowUp from the
  // first goes back to the box), Home/End jump, Escape clears.
  moveFocus(event) {
    const buttons = [...this.results.querySelectorAll('button')];
    const at = buttons.indexOf(document.activeElement);
    if (at < 0) return;
    const to = { ArrowDown: at + 1, ArrowUp: at - 1, Home: 0, End: buttons.length - 1 }[event.key];
    if (event.key === 'Escape') {
      event.preventDefault();
      this.clear();
      return;
    }
    if (to === undefined) return;
    event.preventDefault();
    if (to < 0) this.input.focus();
    else buttons[Math.min(to, buttons.length - 1)].focus();
  }

  // clear empties the box and ends the search, focus back in the box.
  clear() {
    this.input.value = '';
    this.end();
    this.input.focus();
  }

  end() {
    clearTimeout(this.timer);
    this.timer = null;
    this.generation++;
    this.setState('idle');
    this.query = '';
    this.hits = [];
    this.results.replaceChildren();
    this.panel.hidden = true;
    this.onToggle(false);
  }

  // relabel redraws the hits' session names (titles arrive later).
  relabel() {
    for (const title of this.results.querySelectorAll('.hit')) {
      title.querySelector('.hit-title').textContent = this.labelOf(title.dataset.id);
    }
  }
}

// kindOf names who wrote the event a hit is in.
function kindOf(type) {
  switch (type) {
    case EventType.userMessage:
    case EventType.steeringMessage: return t('transcript.you');
    case EventType.assistantMessage: return t('transcript.agent');
    case EventType.toolCall:
    case EventType.toolResult: return t('search.tool');
    default: return t('search.turn');
  }
}

// highlighted marks the phrase's occurrences in the snippet (case folded).
function highlighted(snippet, query) {
  const parts = [];
  const hay = snippet.toLowerCase();
  const needle = hay.length === snippet.length ? query.toLowerCase() : ''; // folding kept the offsets
  let from = 0;
  for (let at = hay.indexOf(needle); needle && at >= 0; at = hay.indexOf(needle, at + needle.length)) {
    parts.push(snippet.slice(from, at), el('mark', {}, snippet.slice(at, at + needle.length)));
    from = at + needle.length;
  }
  parts.push(snippet.slice(from));
  return parts;
}
