// The session's events in its page, by commit cursor, a window at a time. A long session is
// never read whole into the page (100k events were a blank page for minutes, a million nodes and
// 3 GB): the first events show at once, more on request; a live session's new events join the
// list while it holds the last one.
import { api, el } from "./dom.js";
import { EventList } from "./event-list.js";
import { countText } from "./format.js";

/** Events the list shows first, and how many more each "show the next" asks for. */
export const FIRST_EVENTS = 500;
const NEXT_EVENTS = 2000;
/** While the list holds the last event, new events join it up to this many rows; then on request. */
const LIVE_ROWS = 5000;

/**
 * The list of a session's events (`list`, an EventList whose rows `select(eventId)`) and the
 * line under it (`more`): how many it holds, and the control for the next. `page()` answers the
 * session page's state the line depends on: `{ inspection, waiting, selected, stopped }`.
 */
export class EventWindow {
  constructor(sessionId, select, page) {
    this.sessionId = sessionId;
    this.page = page;
    // The last event in the list, and whether it was the session's last when the list was read.
    this.cursor = 0;
    this.listAtEnd = false;
    this.loading = null;
    this.list = new EventList(select);
    this.more = el("div", { className: "more-events", testId: "more-events" });
  }

  /** Whether new events join the list by themselves: it holds the last, and is not long already. */
  followsLive() {
    return this.listAtEnd && this.list.events.length < LIVE_ROWS;
  }

  /**
   * Adds up to `count` events after the list's last to it, by commit cursor (every event once,
   * in commit order), as stored: long content stays a blob reference until its event is
   * selected (a long conversation resolved is gigabytes: each model request holds all of it).
   * One load at a time; answers how many were added.
   */
  async load(count) {
    if (this.loading) return this.loading.then(() => 0);
    const load = async () => {
      let added = 0;
      while (added < count) {
        const limit = Math.min(NEXT_EVENTS, count - added);
        const path = `/api/session/events?id=${encodeURIComponent(this.sessionId)}&after=${this.cursor}&limit=${limit}&raw=1`;
        const page = await api(path);
        if (this.page().stopped) return added;
        for (const event of page.events) {
          if (event.commitCursor <= this.cursor) continue;
          this.cursor = event.commitCursor;
          this.list.add(event);
          added++;
        }
        // A page stops short of its limit at the end of the session, or past a byte bound.
        this.listAtEnd = page.events.length < limit && !page.truncated;
        if (this.listAtEnd || page.events.length === 0) break;
      }
      return added;
    };
    this.loading = load();
    try {
      return await this.loading;
    } finally {
      this.loading = null;
      this.render();
    }
  }

  // Under the list: how many of the session's events it holds, and the control for the next.
  render() {
    const { waiting, inspection, selected } = this.page();
    if (waiting) return this.more.replaceChildren();
    const shown = this.list.events.length;
    const total = inspection?.eventCount;
    const behind = inspection ? this.cursor < inspection.lastCursor : !this.listAtEnd;
    const count =
      total === undefined || total === shown
        ? `${countText(shown)} events`
        : `${countText(shown)} of ${countText(total)} events`;
    const parts = [el("span", { className: "muted", text: `${count} ` })];
    if (behind) {
      const next = el("button", {
        text: `show the next ${countText(NEXT_EVENTS)}`,
        testId: "next-events",
      });
      next.disabled = this.loading !== null;
      next.addEventListener("click", async () => {
        next.disabled = true;
        try {
          await this.load(NEXT_EVENTS);
        } catch (error) {
          // Said where the person clicked; the control stays, to try again.
          this.more.append(
            el("p", { className: "bad", text: `Could not fetch more events: ${error.message}` }),
          );
          next.disabled = false;
        }
      });
      parts.push(next);
    }
    this.more.replaceChildren(...parts);
    if (selected) this.list.highlight(selected);
  }
}
