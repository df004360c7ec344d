// One session's page: it pages the events in by commit cursor while the session grows, and
// draws the decision boxes, the run tree and the events from the latest inspection.
import { renderPaused, renderUnresolved } from "./decision-boxes.js";
import { api, el } from "./dom.js";
import { showEvent } from "./event-detail.js";
import { EventList } from "./event-list.js";
import { attemptKey, duration } from "./format.js";
import { flattenRuns, pausedAbove, shownStatus, treeRows } from "./run-tree.js";

export class SessionView {
  /** Draws into `main`; `live` is the header's "live" mark, shown while the page polls. */
  constructor(sessionId, { main, live }) {
    this.sessionId = sessionId;
    this.live = live;
    this.pollMs = 1000;
    this.cursor = 0;
    this.inspection = null;
    this.inspectionBehind = false;
    this.selected = null;
    this.timer = null;
    this.stopped = false;
    this.header = el("section", { className: "session-head" });
    this.paused = el("section", { className: "paused-box", testId: "paused" });
    this.unresolved = el("section", { className: "unresolved-box", testId: "unresolved" });
    this.tree = el("section", { className: "tree", testId: "runs" });
    this.eventList = new EventList((eventId) => this.select(eventId));
    this.detail = el("section", { className: "detail", testId: "event-detail" });
    main.replaceChildren(
      el("p", {}, el("a", { href: "#/", text: "← sessions" })),
      this.header,
      this.paused,
      this.unresolved,
      el("h2", { text: "Runs, steps and causes" }),
      this.tree,
      el(
        "div",
        { className: "split" },
        el("div", { className: "events-pane" }, el("h2", { text: "Events" }), this.eventList.table),
        el("div", { className: "detail-pane" }, el("h2", { text: "Event" }), this.detail),
      ),
    );
    this.detail.append(el("p", { className: "muted", text: "Select an event or an attempt." }));
  }

  async start() {
    const config = await api("/api/config").catch(() => ({ pollMs: 1000 }));
    this.pollMs = config.pollMs || 1000;
    await this.poll(true);
    if (this.stopped) return;
    this.live.hidden = false;
    const tick = async () => {
      if (this.stopped) return;
      try {
        await this.poll(false);
        this.live.classList.remove("stale");
      } catch {
        this.live.classList.add("stale");
      }
      if (!this.stopped) this.timer = setTimeout(tick, this.pollMs);
    };
    this.timer = setTimeout(tick, this.pollMs);
  }

  stop() {
    this.stopped = true;
    clearTimeout(this.timer);
    this.live.hidden = true;
  }

  // Pages by commit cursor: every event exactly once, in commit order.
  async poll(first) {
    let fresh = 0;
    for (;;) {
      // As stored: long content stays a blob reference until its event is selected (a long
      // conversation resolved is gigabytes: each model request holds all of it).
      const path = `/api/session/events?id=${encodeURIComponent(this.sessionId)}&after=${this.cursor}&limit=500&raw=1`;
      const page = await api(path);
      for (const event of page.events) {
        if (event.commitCursor <= this.cursor) continue;
        this.cursor = event.commitCursor;
        this.eventList.add(event);
        fresh++;
      }
      if (page.events.length < 500) break;
    }
    const events = this.eventList.events;
    if (first && events.length === 0) throw new Error(`unknown session ${this.sessionId}`);
    // Until an inspection as new as the events is shown: a refresh that failed is made again
    // on the next poll, not only when more events come (a crashed run sends none).
    if (fresh > 0) this.inspectionBehind = true;
    if (this.inspectionBehind || first) {
      // By query, not path: a browser folds a session id "." or ".." out of a URL path.
      this.inspection = await api(`/api/session?id=${encodeURIComponent(this.sessionId)}`);
      this.inspectionBehind = false;
      this.render();
    }
  }

  render() {
    const inspection = this.inspection;
    const events = this.eventList.events;
    const runs = flattenRuns(inspection.runs);
    // A run paused awaiting a decision is not a crash: neither it, the runs under it nor the
    // calls its pause keeps open (next step "awaiting-decision") are shown as such.
    const pausedRunOf = pausedAbove(inspection.runs);
    const pauses = inspection.paused || [];
    const steps = inspection.unresolved.map((attempt, index) => ({
      attempt,
      step: inspection.nextSteps[index],
    }));
    const waiting = steps.filter(({ step }) => step.action === "awaiting-decision");
    const unresolved = steps.filter(({ step }) => step.action !== "awaiting-decision");
    const first = events[0];
    const last = events[events.length - 1];
    const t0 = first ? Date.parse(first.recordedAt) : 0;
    const t1 = Math.max(last ? Date.parse(last.recordedAt) : 0, t0 + 1);

    const counts = { running: 0, paused: 0, completed: 0, failed: 0, cancelled: 0 };
    for (const { run } of runs) counts[shownStatus(run, pausedRunOf)]++;
    this.header.replaceChildren(
      el("h1", { text: `Session ${inspection.sessionId}` }),
      el(
        "p",
        { className: "muted" },
        document.createTextNode(
          `${inspection.eventCount} events · ${runs.length} runs (${counts.completed} completed, ${counts.running} running, ${counts.paused} paused, ${counts.failed} failed, ${counts.cancelled} cancelled) · ${duration(t1 - t0)} · `,
        ),
        el("span", {
          text: `${unresolved.length} unresolved`,
          className: unresolved.length ? "bad" : "",
        }),
      ),
    );
    renderPaused(this.paused, pauses, waiting);
    // A lost blob does not hide the session: its marker stands where its content was.
    const missing = inspection.missingBlobs || [];
    if (missing.length > 0)
      this.header.append(
        el("p", {
          className: "bad",
          testId: "missing-blobs",
          text: `⚠ ${missing.length} blob(s) named by events are not in the store, shown as their references: ${missing.join(", ")}`,
        }),
      );
    renderUnresolved(this.unresolved, unresolved, (eventId) => this.select(eventId));

    const rows = treeRows(inspection, {
      t0,
      t1,
      unresolvedIds: new Set(unresolved.map(({ attempt }) => attemptKey(attempt))),
      waitingIds: new Set(waiting.map(({ attempt }) => attemptKey(attempt))),
      pausedRunOf,
      pauseText: new Map(pauses.map((paused) => [paused.runId, paused.text])),
      requestOf: (eventId) => this.eventList.byId.get(eventId),
      causeText: (eventId) => this.eventList.causeText(eventId),
      select: (eventId) => this.select(eventId),
    });
    this.tree.replaceChildren(...rows);
    if (this.selected) this.eventList.highlight(this.selected);
  }

  async select(eventId) {
    const listed = this.eventList.byId.get(eventId);
    if (!listed) return;
    this.selected = eventId;
    this.eventList.highlight(eventId);
    // The list holds events as stored; the pane shows this one with its content put back.
    let event = listed;
    let notice = null;
    try {
      const path = `/api/session/events?id=${encodeURIComponent(this.sessionId)}&after=${listed.commitCursor - 1}&limit=1`;
      event = (await api(path)).events[0] ?? listed;
    } catch (error) {
      notice = el("p", {
        className: "bad",
        text: `Shown as stored (blob references kept): ${error.message}`,
      });
    }
    if (this.selected !== eventId) return; // another event was selected meanwhile
    await showEvent(this.detail, event, notice, {
      causeText: (id) => this.eventList.causeText(id),
      select: (id) => this.select(id),
    });
  }
}
