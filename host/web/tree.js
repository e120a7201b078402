// The header action "N subagents" and its dropdown: an ARIA tree of the
// current session's direct catalog, each branch loaded lazily when expanded
// (web-host §4.2–4.3).

import { t, countLabel, relativeTime, describeError } from './i18n.js';
import { el, errorContent } from './dom.js';
import { sessionState } from './states.js';

// PAGE_ROWS is how many rows of one catalog the tree shows at a time; a
// "show more" button brings the next page.
const PAGE_ROWS = 100;

export class CatalogAction {
  // root is the header element to render into; summaryOf(id) returns a
  // session.list row or undefined; onOpenChild(address, entry) opens a child.
  constructor({ root, catalogs, summaryOf, onOpenChild }) {
    this.root = root;
    this.catalogs = catalogs;
    this.summaryOf = summaryOf;
    this.onOpenChild = onOpenChild;
    this.parentId = null;
    this.open = false;
    this.expanded = new Map(); // expanded child id → its direct parent id
    this.pendingFocus = null; // 'first' | 'last' once the rows exist
    this.activeId = null; // the row holding the tree's one Tab stop (roving tabindex)
    this.shown = new Map(); // parent id → how many of its rows are shown (PAGE_ROWS at first)
    this.drawn = new Map(); // parent id + child id → {look, row}: the rows the menu shows, reused while their look holds
    this.drawing = this.drawn; // where a redraw under way keeps its rows (a page shown by 'more' joins drawn)
    this.trigger = el('button', { type: 'button', class: 'trigger', 'aria-haspopup': 'tree', 'aria-expanded': 'false' });
    this.menu = el('div', { class: 'menu', hidden: '' });
    root.append(this.trigger, this.menu);
    this.trigger.addEventListener('click', () => (this.open ? this.close() : this.openMenu()));
    root.addEventListener('keydown', (event) => this.onKey(event));
    document.addEventListener('pointerdown', (event) => {
      if (this.open && !root.contains(event.target)) this.close();
    });
  }

  // setParent shows the catalog of session id (closing the menu on change).
  setParent(id) {
    if (id !== this.parentId) {
      this.close();
      this.shown.clear();
      this.drawn.clear();
    }
    this.parentId = id;
    this.render();
  }

  // observes reports whether the catalog of id is shown right now.
  observes(id) {
    return this.open && (id === this.parentId || this.expanded.has(id));
  }

  openMenu() {
    this.open = true;
    this.catalogs.refresh(this.parentId);
    this.render();
  }

  // close hides the menu and releases every expanded branch's catalog (the
  // root stays observed as the current session's own catalog).
  close({ focusTrigger = false } = {}) {
    if (this.open) {
      this.open = false;
      for (const id of this.expanded.keys()) this.catalogs.release(id);
      this.expanded.clear();
      this.render();
    }
    if (focusTrigger) queueMicrotask(() => this.trigger.focus());
  }

  expand(id, parentId) {
    this.expanded.set(id, parentId);
    this.catalogs.refresh(id);
    this.render();
  }

  // collapse hides id's branch and every expanded branch below it.
  collapse(id) {
    const doomed = [...this.expanded.keys()].filter((x) => this.isWithin(x, id));
    for (const x of doomed) {
      this.expanded.delete(x);
      this.catalogs.release(x);
    }
    this.render();
  }

  isWithin(id, ancestor) {
    for (let x = id; x !== undefined; x = this.expanded.get(x)) {
      if (x === ancestor) return true;
    }
    return false;
  }

  // renderSoon coalesces the redraws asked for during one animation frame
  // (a burst of status and membership changes) into one, at its start.
  renderSoon() {
    if (this.renderQueued) return;
    this.renderQueued = true;
    requestAnimationFrame(() => {
      this.renderQueued = false;
      this.render();
    });
  }

  // renderBusy marks whether parentId's shown rows are being refetched,
  // without redrawing them.
  renderBusy(parentId) {
    if (this.renderQueued || !this.open) return;
    const container = this.menu.querySelector(`[data-catalog="${CSS.escape(parentId)}"]`);
    container?.setAttribute('aria-busy', String(this.catalogs.get(parentId)?.state === 'loading'));
  }

  render() {
    const catalog = this.parentId ? this.catalogs.get(this.parentId) : undefined;
    const visible = !!catalog && (catalog.entries.length > 0 || catalog.state === 'error');
    if (!visible && this.open) this.close();
    this.root.hidden = !visible;
    if (!visible) return;
    const healthy = catalog.entries.filter((e) => e.kind === 'child').length;
    this.trigger.textContent = countLabel(healthy);
    this.trigger.append(el('span', { class: 'chevron', 'aria-hidden': 'true' }));
    this.trigger.setAttribute('aria-expanded', String(this.open));
    this.menu.hidden = !this.open;
    if (this.open) this.renderMenu();
  }

  renderMenu() {
    const focusedId = this.menu.contains(document.activeElement)
      ? document.activeElement.closest('[role="treeitem"]')?.dataset.id
      : null;
    const tree = el('div', { role: 'tree', 'aria-label': t('tree.aria') });
    tree.addEventListener('focusin', (event) => {
      const item = event.target.closest('[role="treeitem"]');
      if (item) this.rove(item.dataset.id);
    });
    this.drawing = new Map();
    this.renderLevel(tree, this.parentId, 1);
    this.menu.replaceChildren(tree);
    this.drawn = this.drawing;
    this.rove(this.activeId);
    this.restoreFocus(focusedId);
  }

  // rove gives the tree its one Tab stop: row id when it is shown, else the
  // first row; every other row is reached with the arrow keys.
  rove(id) {
    const items = this.items();
    const active = items.find((item) => item.dataset.id === id) ?? items[0];
    for (const item of items) item.tabIndex = item === active ? 0 : -1;
    this.activeId = active?.dataset.id ?? null;
  }

  restoreFocus(focusedId) {
    const items = this.items();
    if (this.pendingFocus && items.length > 0) {
      (this.pendingFocus === 'first' ? items[0] : items[items.length - 1]).focus();
      this.pendingFocus = null;
      return;
    }
    if (focusedId) items.find((item) => item.dataset.id === focusedId)?.focus();
  }

  renderLevel(container, parentId, level) {
    const catalog = this.catalogs.get(parentId);
    if (!catalog) return;
    container.dataset.catalog = parentId;
    container.setAttribute('aria-busy', String(catalog.state === 'loading')); // rows shown may be refreshing
    if (catalog.state === 'loading' && catalog.entries.length === 0) {
      container.append(el('div', { class: 'notice' }, t('loading.label')));
    }
    const shown = Math.min(catalog.entries.length, this.shown.get(parentId) ?? PAGE_ROWS);
    for (const entry of catalog.entries.slice(0, shown)) container.append(this.node(entry, parentId, level));
    if (shown < catalog.entries.length) container.append(this.moreButton(parentId, level, shown, catalog.entries.length));
    if (catalog.state === 'error') container.append(this.errorNotice(catalog.error, parentId));
  }

  // moreButton adds the next page of parentId's rows (those from shown on)
  // in its place, without redrawing the rows shown, and focuses the first
  // of them.
  moreButton(parentId, level, shown, total) {
    const more = el('button', { type: 'button', class: 'link more' },
      t('tree.more', { count: Math.min(total - shown, PAGE_ROWS), left: total - shown }));
    more.addEventListener('click', () => {
      const entries = this.catalogs.get(parentId)?.entries ?? [];
      const upTo = Math.min(entries.length, shown + PAGE_ROWS);
      this.shown.set(parentId, upTo);
      const nodes = entries.slice(shown, upTo).map((entry) => this.node(entry, parentId, level));
      more.replaceWith(...nodes, ...(upTo < entries.length ? [this.moreButton(parentId, level, upTo, entries.length)] : []));
      this.rove(this.activeId);
      nodes[0]?.querySelector('[role="treeitem"]:not([aria-disabled="true"])')?.focus();
    });
    return more;
  }

  node(entry, parentId, level) {
    if (entry.kind !== 'child') return el('div', { class: 'node' }, diagnosticRow(entry, level));
    const node = el('div', { class: 'node' }, this.reusedRow(entry, parentId, level));
    if (this.expanded.has(entry.id)) {
      const group = el('div', { role: 'group' });
      this.renderLevel(group, entry.id, level + 1);
      node.append(group);
    }
    return node;
  }

  isLeaf(id) {
    const own = this.catalogs.get(id);
    return own?.state === 'ready' && own.entries.length === 0;
  }

  // reusedRow is the row the menu shows for entry, kept from the last
  // redraw when nothing it shows changed, else drawn anew.
  reusedRow(entry, parentId, level) {
    const summary = this.summaryOf(entry.id);
    const look = JSON.stringify([entry, level, this.expanded.has(entry.id), this.isLeaf(entry.id), summary?.title,
      summary?.running, summary?.live, summary?.lastTurn, summary?.updatedAt && relativeTime(summary.updatedAt)]);
    const key = `${parentId}\n${entry.id}`;
    const kept = this.drawn.get(key);
    const row = kept?.look === look ? kept.row : this.row(entry, parentId, level);
    this.drawing.set(key, { look, row });
    return row;
  }

  row(entry, parentId, level) {
    const label = entry.label || entry.id;
    const summary = this.summaryOf(entry.id);
    // The catalog's activity says live (status frames keep it current);
    // the session row says whether a turn runs and how the last one ended.
    const listed = entry.activity === 'running';
    const state = sessionState({
      running: listed && (summary?.running ?? true), live: listed || !!summary?.live, lastTurn: summary?.lastTurn,
    });
    const secondary = [summary?.title, t('mode.continuable'), state.text].filter(Boolean).join(' · ');
    const time = summary?.updatedAt ? relativeTime(summary.updatedAt) : '';
    const row = el('div', {
      role: 'treeitem', tabindex: '-1', class: 'row', 'aria-level': String(level),
      'aria-label': [label, secondary, time].filter(Boolean).join(' '), 'data-id': entry.id, 'data-parent': parentId,
      'data-state': state.state,
    });
    const expanded = this.expanded.has(entry.id);
    if (!this.isLeaf(entry.id)) row.setAttribute('aria-expanded', String(expanded));
    row.append(
      this.disclosure(entry, parentId, label, expanded),
      el('span', { class: `dot ${state.tone}`, 'aria-hidden': 'true' }),
      el('span', { class: 'text' }, el('span', { class: 'label' }, label), el('span', { class: 'secondary' },
        el('span', { class: 'sub' }, [summary?.title, t('mode.continuable')].filter(Boolean).join(' · ')),
        el('span', { class: `state ${state.tone}` }, `· ${state.text}`))),
      el('span', { class: 'time' }, time),
    );
    row.addEventListener('click', () => this.activate(row));
    return row;
  }

  disclosure(entry, parentId, label, expanded) {
    if (this.isLeaf(entry.id)) return el('span', { class: 'spacer', 'aria-hidden': 'true' });
    const button = el('button', {
      type: 'button', tabindex: '-1', class: `disclosure${expanded ? ' open' : ''}`,
      'aria-label': t(expanded ? 'branch.collapse' : 'branch.expand', { label }),
    });
    button.addEventListener('click', (event) => {
      event.stopPropagation();
      if (expanded) this.collapse(entry.id);
      else this.expand(entry.id, parentId);
    });
    return button;
  }

  errorNotice(error, parentId) {
    const retry = el('button', { type: 'button', class: 'retry' }, t('retry'));
    retry.addEventListener('click', () => this.catalogs.refresh(parentId));
    return el('div', { class: 'notice error' },
      el('span', {}, el('strong', {}, t('load.error')), ' ', ...errorContent(describeError(error))), retry);
  }

  // activate opens the child a row stands for, addressed through the row's
  // own direct parent, and closes the menu.
  activate(row) {
    const address = { parentSessionId: row.dataset.parent, childSessionId: row.dataset.id };
    const entry = this.catalogs.entry(address.parentSessionId, address.childSessionId);
    this.close();
    this.onOpenChild(address, entry);
  }

  items() {
    return [...this.menu.querySelectorAll('[role="treeitem"]:not([aria-disabled="true"])')];
  }

  onKey(event) {
    if (event.target === this.trigger) {
      this.onTriggerKey(event);
      return;
    }
    if (!this.open || !this.onTreeKey(event.key, document.activeElement)) return;
    event.preventDefault();
    event.stopPropagation();
  }

  onTriggerKey(event) {
    if (event.key === 'ArrowDown') {
      event.preventDefault();
      this.pendingFocus = 'first';
      if (this.open) this.render();
      else this.openMenu();
    } else if (event.key === 'Escape' && this.open) {
      event.preventDefault();
      this.close({ focusTrigger: true });
    }
  }

  // onTreeKey moves focus or acts on the focused row; false for keys it
  // does not handle.
  onTreeKey(key, focused) {
    const items = this.items();
    const index = items.indexOf(focused);
    const row = index >= 0 ? items[index] : null;
    const focusAt = (i) => items.length > 0 && items[(i + items.length) % items.length].focus();
    switch (key) {
      case 'ArrowDown': focusAt(index < 0 ? 0 : index + 1); return true;
      case 'ArrowUp': focusAt(index < 0 ? -1 : index - 1); return true;
      case 'Home': focusAt(0); return true;
      case 'End': focusAt(-1); return true;
      case 'ArrowRight':
        if (row?.getAttribute('aria-expanded') === 'false') this.expand(row.dataset.id, row.dataset.parent);
        return true;
      case 'ArrowLeft':
        if (row?.getAttribute('aria-expanded') === 'true') this.collapse(row.dataset.id);
        else if (row) items.find((item) => item.dataset.id === row.dataset.parent)?.focus();
        return true;
      case 'Enter':
      case ' ':
        if (row) this.activate(row);
        return true;
      case 'Escape': this.close({ focusTrigger: true }); return true;
      default: return false;
    }
  }
}

function diagnosticRow(entry, level) {
  const reason = t(`diagnostic.${entry.reason}`);
  return el('div', {
    role: 'treeitem', class: 'row diagnostic', 'aria-disabled': 'true', 'aria-level': String(level),
    'aria-label': `${entry.id} ${reason}`, title: reason, 'data-id': entry.id,
  },
  el('span', { class: 'spacer', 'aria-hidden': 'true' }),
  el('span', { class: 'dot error', 'aria-hidden': 'true' }),
  el('span', { class: 'text' }, el('span', { class: 'label' }, entry.id), el('span', { class: 'secondary' }, reason)));
}
