// Transcript: the raw events of one open conversation, pulled in
// message-aligned pages and stitched with live session/event frames by seq
// (web-host §2): frames at or below the tail are dropped, a gap re-pulls the
// tail page through the same route.

export const PAGE_MESSAGES = 50;

export class Transcript {
  // history(beforeSeq?) resolves to a history RPC result for this
  // conversation; onChange(prepended) is called after every visible change
  // (prepended: older events were added before the held ones).
  constructor(history, onChange) {
    this.history = history;
    this.onChange = onChange;
    this.events = [];
    this.hasMore = false;
    this.loaded = false;
    this.error = null;
    this.pulling = null;
    this.repull = false;
    this.buffer = [];
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
        if (result.ok) this.installTail(result.value);
        else this.error = result.error;
      } while (this.repull);
      this.pulling = null;
      this.loaded = true;
      this.drainBuffer();
      this.onChange();
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
    if (!result.ok) {
      this.error = result.error;
    } else {
      const older = result.value.events.map((entry) => entry.event);
      const continuous = older.length > 0 && older[older.length - 1].seq + 1 === baseSeq;
      this.events = continuous ? older.concat(this.events) : this.events;
      this.hasMore = continuous && result.value.hasMore;
    }
    this.onChange(true);
  }

  // accept takes one live event of this session.
  accept(event) {
    if (this.pulling || !this.loaded) {
      this.buffer.push(event);
      return;
    }
    this.buffer.push(event);
    this.drainBuffer();
    this.onChange();
  }

  drainBuffer() {
    const pending = this.buffer.sort((a, b) => a.seq - b.seq);
    this.buffer = [];
    for (const event of pending) {
      if (event.seq <= this.lastSeq()) continue;
      if (event.seq !== this.lastSeq() + 1) {
        this.pullTail();
        return;
      }
      this.events.push(event);
    }
  }

  close() {
    this.closed = true;
  }
}
