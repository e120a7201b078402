// The catalog store: one direct catalog per parent session, fetched through
// subagent.list single-flight, refreshed by a debounced timer on membership
// frames (a membership change during a fetch queues exactly one more), and
// patched in place by status frames (no refetch; a flip during a fetch is
// replayed over its answer). onChange(parentId, rowsChanged) says whether
// the rows shown may differ; false when only the loading state moved (a
// refetch that began over ready rows, or one that answered the same rows).

const MEMBERSHIP_DEBOUNCE_MS = 50;

export class Catalogs {
  constructor(rpc, onChange) {
    this.rpc = rpc;
    this.onChange = onChange;
    this.byParent = new Map();
    this.timers = new Map(); // parentId → pending membership refresh
  }

  // get returns the catalog of parentId: {entries, parentAvailable, state:
  // 'loading'|'ready'|'error', error}, or undefined before the first fetch.
  get(parentId) {
    return this.byParent.get(parentId);
  }

  // refresh fetches parentId's catalog; a call while one is in flight
  // returns that same promise, which then also covers one more fetch when
  // membership says the one in flight may have missed a member. Previous
  // rows stay visible while loading and on failure.
  refresh(parentId, { membership = false } = {}) {
    const previous = this.byParent.get(parentId);
    if (previous?.inflight) {
      if (membership) previous.stale = true;
      return previous.inflight;
    }
    const catalog = {
      settled: previous?.state === 'ready', // ready rows stay shown while this fetch runs
      entries: previous?.entries ?? [],
      parentAvailable: previous?.parentAvailable ?? false,
      state: 'loading',
      error: null,
      stale: false, // membership changed while a fetch was in flight
      flips: new Map(), // child id → activity seen while a fetch was in flight
    };
    catalog.inflight = this.fetch(parentId, catalog);
    this.byParent.set(parentId, catalog);
    this.onChange(parentId, !catalog.settled);
    return catalog.inflight;
  }

  // fetch reads the catalog until no membership change arrived during the
  // read: a change while one is in flight costs exactly one more read.
  async fetch(parentId, catalog) {
    let result;
    do {
      catalog.stale = false;
      catalog.flips.clear();
      result = await this.rpc('subagent.list', { parentSessionId: parentId });
    } while (catalog.stale);
    catalog.inflight = null;
    this.onChange(parentId, result.ok ? this.settle(catalog, result.value) : this.fail(catalog, result.error));
  }

  // settle takes a fetch's answer over the catalog's rows, replaying the
  // flips seen meanwhile; it reports whether the rows changed.
  settle(catalog, { entries, parentAvailable }) {
    for (const entry of entries) {
      if (entry.kind === 'child' && catalog.flips.has(entry.id)) entry.activity = catalog.flips.get(entry.id);
    }
    const same = catalog.settled && parentAvailable === catalog.parentAvailable &&
      JSON.stringify(entries) === JSON.stringify(catalog.entries);
    if (!same) catalog.entries = entries;
    catalog.parentAvailable = parentAvailable;
    catalog.state = 'ready';
    return !same;
  }

  // fail records a failed fetch; the rows shown stay, with the error.
  fail(catalog, error) {
    catalog.state = 'error';
    catalog.error = error;
    return true;
  }

  // scheduleRefresh coalesces membership frames for parentId into one
  // refresh 50 ms after the first of them.
  scheduleRefresh(parentId) {
    if (!this.byParent.has(parentId)) {
      this.refresh(parentId);
      return;
    }
    if (this.timers.has(parentId)) return;
    this.timers.set(parentId, setTimeout(() => {
      this.timers.delete(parentId);
      this.refresh(parentId, { membership: true });
    }, MEMBERSHIP_DEBOUNCE_MS));
  }

  // release stops a pending membership refresh of a catalog nobody observes.
  release(parentId) {
    clearTimeout(this.timers.get(parentId));
    this.timers.delete(parentId);
  }

  // flipActivity sets the activity of every loaded row for childId from a
  // host/session-status frame; it reports whether anything changed.
  flipActivity(childId, running) {
    const activity = running ? 'running' : 'inactive';
    let changed = false;
    for (const catalog of this.byParent.values()) {
      if (catalog.inflight) catalog.flips.set(childId, activity);
      for (const entry of catalog.entries) {
        if (entry.kind === 'child' && entry.id === childId && entry.activity !== activity) {
          entry.activity = activity;
          changed = true;
        }
      }
    }
    return changed;
  }

  // markParentOffline records that parentId left the runtime, so its
  // children become read-only at once (subagent.prompt stays authoritative).
  markParentOffline(parentId) {
    const catalog = this.byParent.get(parentId);
    if (catalog && catalog.parentAvailable) {
      catalog.parentAvailable = false;
      this.onChange(parentId, false);
    }
  }

  // entry finds the healthy row childId in parentId's catalog, through an
  // index of its rows by id made once per answer (the sidebar asks for
  // every child it lists).
  entry(parentId, childId) {
    const catalog = this.byParent.get(parentId);
    if (!catalog) return undefined;
    if (catalog.indexed !== catalog.entries) {
      catalog.index = new Map(catalog.entries.map((e) => [e.id, e]));
      catalog.indexed = catalog.entries;
    }
    const found = catalog.index.get(childId);
    return found?.kind === 'child' ? found : undefined;
  }
}
