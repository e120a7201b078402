// The header action "N subagents" and its dropdown: an ARIA tree of the
// current session's direct catalog, each branch loaded lazily when expanded.
// The tree is drawn as a window: every row has the same height, so a
// catalog of any size lays out as a list of offsets, and only the rows in
// view (and the one holding the tree's Tab stop) exist in the page. Each
// row says its level, its place in its catalog and that catalog's size.

import { t, countLabel, relativeTime, describeError } from './i18n.js';
import { el, errorContent } from './dom.js';
import { sessionState } from './states.js';

// ROW_PX is the height of every row (style.css sizes .tree-row alike); an
// error notice takes ERROR_ROWS rows. OVERSCAN rows are drawn beyond each
// edge of the view, so a scroll shows drawn rows before it redraws.
const ROW_PX = 52;
const ERROR_ROWS = 2;
const OVERSCAN = 8;
const INDENT_PX = 22;

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
    this.flat = []; // the open tree's rows in order: {kind, key, top, height, level, …}
    this.rowIndex = new Map(); // child id → its index in flat
    this.drawn = new Map(); // row key → {look, node}: the rows in the page, reused while their look holds
    this.trigger = el('button', { type: 'button', class: 'trigger', 'aria-haspopup': 'tree', 'aria-expanded': 'false' });
    this.tree = el('div', { role: 'tree', class: 'tree', 'aria-label': t('tree.aria') });
    this.menu = el('div', { class: 'menu', hidden: '' }, this.tree);
    root.append(this.trigger, this.menu);
    this.trigger.addEventListener('click', () => (this.open ? this.close() : this.openMenu()));
    this.menu.addEventListener('scroll', () => this.drawWindow());
    this.tree.addEventListener('focusin', (event) => {
      const item = event.target.closest('[role="treeitem"]');
      if (item) this.rove(item.dataset.id);
    });
    root.addEventListener('keydown', (event) => this.onKey(event));
    document.addEventListener('pointerdown', (event) => {
      if (this.open && !root.contains(event.target)) this.close();
    });
  }

  // setParent shows the catalog of session id (closing the menu on change).
  setParent(id) {
    if (id !== this.parentId) {
      this.close();
      this.drawn.clear();
      this.tree.replaceChildren();
      this.menu.scrollTop = 0;
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

  // renderBusy marks whether a shown catalog is being refetched, without
  // redrawing its rows.
  renderBusy() {
    if (this.renderQueued || !this.open) return;
    this.tree.setAttribute('aria-busy', String(this.busy()));
  }

  // busy reports whether any catalog the tree shows is loading.
  busy() {
    return [this.parentId, ...this.expanded.keys()].some((id) => this.catalogs.get(id)?.state === 'loading');
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

  // renderMenu lays the open tree out again and redraws the rows in view,
  // keeping focus on the row that had it.
  renderMenu() {
    const focusedId = this.tree.contains(document.activeElement)
      ? document.activeElement.closest('[role="treeitem"]')?.dataset.id
      : null;
    this.layout();
    this.tree.setAttribute('aria-busy', String(this.busy()));
    if (!this.rowIndex.has(this.activeId)) this.activeId = this.firstRow()?.entry.id ?? null;
    if (this.pendingFocus && this.firstRow()) {
      const rows = this.flat.filter((item) => item.kind === 'row');
      this.focusItem(this.pendingFocus === 'first' ? rows[0] : rows[rows.length - 1]);
      this.pendingFocus = null;
      return;
    }
    this.drawWindow();
    if (focusedId && !this.tree.contains(document.activeElement)) this.drawnNode(focusedId)?.focus({ preventScroll: true });
  }

  firstRow() {
    return this.flat.find((item) => item.kind === 'row');
  }

  // layout flattens the shown catalogs (the root's, and below each
  // expanded row its own) into rows with their offsets.
  layout() {
    const flat = [];
    let top = 0;
    const push = (item, rows = 1) => {
      flat.push({ ...item, top, height: rows * ROW_PX });
      top += rows * ROW_PX;
    };
    const level = (parentId, depth) => {
      const catalog = this.catalogs.get(parentId);
      if (!catalog) return;
      if (catalog.state === 'loading' && catalog.entries.length === 0) {
        push({ kind: 'loading', key: `loading\n${parentId}`, parentId, level: depth });
      }
      const size = catalog.entries.length;
      catalog.entries.forEach((entry, i) => {
        const kind = entry.kind === 'child' ? 'row' : 'diagnostic';
        push({ kind, key: `${parentId}\n${entry.id}`, entry, parentId, level: depth, position: i + 1, size });
        if (kind === 'row' && this.expanded.has(entry.id)) level(entry.id, depth + 1);
      });
      if (catalog.state === 'error') {
        push({ kind: 'error', key: `error\n${parentId}`, parentId, level: depth, error: catalog.error }, ERROR_ROWS);
      }
    };
    level(this.parentId, 1);
    this.flat = flat;
    this.rowIndex = new Map(flat.flatMap((item, i) => (item.kind === 'row' ? [[item.entry.id, i]] : [])));
    this.tree.style.height = `${top}px`;
  }

  // drawWindow puts in the page the rows in view (with OVERSCAN more on
  // each side) and the one holding the Tab stop, in tree order; rows that
  // stay are neither redrawn nor moved, so focus stays where it is.
  drawWindow() {
    if (!this.open) return;
    const from = this.menu.scrollTop - this.tree.offsetTop - OVERSCAN * ROW_PX;
    const to = this.menu.scrollTop - this.tree.offsetTop + this.menu.clientHeight + OVERSCAN * ROW_PX;
    const shown = [];
    for (let i = firstEndingAfter(this.flat, from); i < this.flat.length && this.flat[i].top < to; i++) shown.push(i);
    const active = this.rowIndex.get(this.activeId);
    if (active !== undefined && !shown.includes(active)) {
      shown.push(active);
      shown.sort((a, b) => a - b);
    }
    const drawing = new Map();
    const nodes = shown.map((i) => this.draw(this.flat[i], drawing));
    const keep = new Set(nodes);
    for (const child of [...this.tree.children]) if (!keep.has(child)) child.remove();
    let cursor = this.tree.firstElementChild;
    for (const node of nodes) {
      if (node === cursor) cursor = cursor.nextElementSibling;
      else this.tree.insertBefore(node, cursor);
    }
    this.drawn = drawing;
    this.rove(this.activeId);
  }

  // draw is item's node, kept from the last draw while nothing it shows
  // changed, placed at its offset.
  draw(item, drawing) {
    const look = this.lookOf(item);
    const kept = this.drawn.get(item.key);
    const node = kept?.look === look ? kept.node : this.node(item);
    node.style.top = `${item.top}px`;
    drawing.set(item.key, { look, node });
    return node;
  }

  lookOf(item) {
    if (item.kind !== 'row') return JSON.stringify([item.kind, item.entry, item.level, item.position, item.size, item.error]);
    const summary = this.summaryOf(item.entry.id);
    return JSON.stringify([item.entry, item.level, item.position, item.size, this.expanded.has(item.entry.id),
      this.isLeaf(item.entry.id), summary?.title, summary?.running, summary?.live, summary?.lastTurn,
      summary?.updatedAt && relativeTime(summary.updatedAt)]);
  }

  node(item) {
    let node;
    if (item.kind === 'row') node = this.row(item);
    else if (item.kind === 'diagnostic') node = diagnosticRow(item);
    else if (item.kind === 'error') node = this.errorNotice(item.error, item.parentId);
    else node = el('div', { class: 'notice' }, t('loading.label'));
    node.classList.add('tree-row');
    node.style.height = `${item.height}px`;
    node.style.setProperty('--indent', `${(item.level - 1) * INDENT_PX}px`);
    if (item.level > 1) node.classList.add('nested');
    return node;
  }

  // drawnNode is the node in the page of child id's row, if drawn.
  drawnNode(id) {
    const index = this.rowIndex.get(id);
    return index === undefined ? undefined : this.drawn.get(this.flat[index].key)?.node;
  }

  // rove gives the tree its one Tab stop: row id when it is shown, else the
  // first row; every other row is reached with the arrow keys.
  rove(id) {
    if (id !== undefined && this.rowIndex.has(id)) this.activeId = id;
    for (const { node } of this.drawn.values()) {
      if (node.getAttribute('role') === 'treeitem' && !node.hasAttribute('aria-disabled')) {
        node.tabIndex = node.dataset.id === this.activeId ? 0 : -1;
      }
    }
  }

  // focusItem scrolls the row item into view, draws it and focuses it.
  focusItem(item) {
    if (!item) return;
    this.activeId = item.entry.id;
    const top = item.top + this.tree.offsetTop;
    if (top < this.menu.scrollTop) this.menu.scrollTop = top;
    else if (top + item.height > this.menu.scrollTop + this.menu.clientHeight) {
      this.menu.scrollTop = top + item.height - this.menu.clientHeight;
    }
    this.drawWindow();
    this.drawnNode(item.entry.id)?.focus({ preventScroll: true });
  }

  isLeaf(id) {
    const own = this.catalogs.get(id);
    return own?.state === 'ready' && own.entries.length === 0;
  }

  row({ entry, parentId, level, position, size }) {
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
      'aria-posinset': String(position), 'aria-setsize': String(size),
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

  // onTreeKey moves focus over the tree's rows (drawn or not) or acts on
  // the focused row; false for keys it does not handle.
  onTreeKey(key, focused) {
    const rows = this.flat.filter((item) => item.kind === 'row');
    const row = focused?.closest?.('[role="treeitem"]');
    const index = row ? rows.findIndex((item) => item.entry.id === row.dataset.id) : -1;
    const focusAt = (i) => rows.length > 0 && this.focusItem(rows[(i + rows.length) % rows.length]);
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
        else if (row) this.focusItem(rows.find((item) => item.entry.id === row.dataset.parent));
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

// firstEndingAfter is the index of the first of rows (ordered by top) that
// ends below y.
function firstEndingAfter(rows, y) {
  let lo = 0;
  let hi = rows.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (rows[mid].top + rows[mid].height <= y) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function diagnosticRow({ entry, level, position, size }) {
  const reason = t(`diagnostic.${entry.reason}`);
  return el('div', {
    role: 'treeitem', class: 'row diagnostic', 'aria-disabled': 'true', 'aria-level': String(level),
    'aria-posinset': String(position), 'aria-setsize': String(size),
    'aria-label': `${entry.id} ${reason}`, title: reason, 'data-id': entry.id,
  },
  el('span', { class: 'spacer', 'aria-hidden': 'true' }),
  el('span', { class: 'dot error', 'aria-hidden': 'true' }),
  el('span', { class: 'text' }, el('span', { class: 'label' }, entry.id), el('span', { class: 'secondary' }, reason)));
}
