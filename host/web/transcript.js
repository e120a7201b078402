// Transcript: the raw events of one open conversation, pulled in
// message-aligned pages and stitched with live session/event frames by seq
// (web-host §2): frames at or below the tail are dropped, a gap re-pulls the
// tail page through the same route. Live frames are taken in batches, one
// per animation frame, and reported as appended events (the page draws
// only those); anything else is reported as a change of the whole.

export const PAGE_MESSAGES = 50;

// readable is what a history answer holds to show: {page: {events,
// hasMore}, damage}. A damaged log's answer is an error that still carries
// the page of what could be read, with the damaged line (damage {line,
// damage}); any other error holds nothing (null).
function readable(result) {
  if (result.ok) return { page: result.value, damage: null };
  if (result.error?.code !== 'session-log-corrupt') return null;
  const { line, damage, events, hasMore } = result.error.details;
  return { page: { events, hasMore }, damage: { line, damage } };
}

export class Transcript {
  // history(beforeSeq?) resolves to a history RPC result for this
  // conversation; onChange(change) is called after every visible change:
  // {appended: events} when live events were added at the tail, else
  // {prepended} (prepended: older events were added before the held ones).
  constructor(history, onChange) {
    this.history = history;
    this.onChange = onChange;
    this.events = [];
    this.hasMore = false;
    this.loaded = false;
    this.error = null;
    this.damage = null; // {line, damage} when the log is damaged past the events held
    this.pulling = null;
    this.repull = false;
    this.buffer = [];
    this.flushQueued = false;
    this.closed = false;
  }

  lastSeq() {
    return this.events.length ? this.events[this.events.length - 1].seq : -1;
  }

  // pullTail (re)loads the tail page; calls during a pull coalesce into one
  // more pull after it.
  pullTail() {
    if (this.pulling) {
      this.repull = true;
      return this.pulling;
    }
    this.pulling = (async () => {
      do {
        this.repull = false;
        const result = await this.history();
        if (this.closed) return;
        const read = readable(result);
        if (read) {
          this.installTail(read.page);
          this.damage = read.damage;
        } else {
          this.error = result.error;
        }
      } while (this.repull);
      this.pulling = null;
      this.loaded = true;
      this.drainBuffer();
      this.onChange({ prepended: false });
    })();
    return this.pulling;
  }

  // installTail merges a tail page: it extends the held events when it
  // overlaps or touches them, else replaces them.
  installTail(page) {
    const events = page.events.map((entry) => entry.event);
    this.error = null;
    if (events.length === 0) {
      if (this.events.length === 0) this.hasMore = page.hasMore;
      return;
    }
    const first = events[0].seq;
    if (this.events.length === 0 || first > this.lastSeq() + 1 || first < this.events[0].seq) {
      this.events = events;
      this.hasMore = page.hasMore;
      return;
    }
    this.events = this.events.filter((e) => e.seq < first).concat(events);
  }

  // loadOlder prepends the page before the first held event; a page that
  // does not end right before it is discarded and ends paging.
  async loadOlder() {
    if (!this.hasMore || this.events.length === 0) return;
    const baseSeq = this.events[0].seq;
    const result = await this.history(baseSeq);
    if (this.closed || this.events.length === 0 || this.events[0].seq !== baseSeq) return;
    const read = readable(result);
    if (!read) {
      this.error = result.error;
    } else {
      const older = read.page.events.map((entry) => entry.event);
      const continuous = older.length > 0 && older[older.length - 1].seq + 1 === baseSeq;
      this.events = continuous ? older.concat(this.events) : this.events;
      this.hasMore = continuous && read.page.hasMore;
    }
    this.onChange({ prepended: true });
  }

  // accept takes one live event of this session; the events taken during
  // one animation frame are added together at its start.
  accept(event) {
    this.buffer.push(event);
    if (this.flushQueued) return;
    this.flushQueued = true;
    requestAnimationFrame(() => this.flush());
  }

  flush() {
    this.flushQueued = false;
    if (this.closed || this.pulling || !this.loaded) return; // the pull drains the buffer
    const appended = this.drainBuffer();
    if (appended.length > 0) this.onChange({ appended });
  }

  // drainBuffer adds the buffered events that continue the held ones and
  // returns them; a gap re-pulls the tail instead.
  drainBuffer() {
    const pending = this.buffer.sort((a, b) => a.seq - b.seq);
    this.buffer = [];
    const appended = [];
    for (const event of pending) {
      if (event.seq <= this.lastSeq()) continue;
      if (event.seq !== this.lastSeq() + 1) {
        this.pullTail();
        return appended;
      }
      this.events.push(event);
      appended.push(event);
    }
    return appended;
  }

  close() {
    this.closed = true;
  }
}
