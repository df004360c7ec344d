// One session's page: the decision boxes and the run tree from the latest inspection, and the
// session's events by commit cursor, a window at a time. A long session is never read whole
// into the page (100k events were a blank page for minutes, a million nodes and 3 GB): the first
// events show at once, more on request; a live session's new events join the list while it
// holds the last one, and the inspection is made again only when the session grew, no more
// often than it takes to make.
import {
  renderNotIntact,
  renderOpenRuns,
  renderPaused,
  renderUnresolved,
} from "./decision-boxes.js";
import { api, el, sentence, value } from "./dom.js";
import { showEvent } from "./event-detail.js";
import { briefOf, causeWords, EventList } from "./event-list.js";
import { attemptKey, countText, duration, tokens } from "./format.js";
import { flattenRuns, pausedAbove, shownStatus, treeRows } from "./run-tree.js";

/** Events the list shows first, and how many more each "show the next" asks for. */
const FIRST_EVENTS = 500;
const NEXT_EVENTS = 2000;
/** While the list holds the last event, new events join it up to this many rows; then on request. */
const LIVE_ROWS = 5000;

export class SessionView {
  /**
   * Draws into `main`; `live` is the header's "live" mark, shown while the page polls;
   * `announce`, the polite status line a screen reader reads when the session changes;
   * `eventId`, the event a link to the page names (shown once the session is).
   */
  constructor(sessionId, { main, live, announce, eventId }) {
    this.sessionId = sessionId;
    this.linkedEventId = eventId;
    this.live = live;
    this.announce = announce;
    this.pollMs = 1000;
    // How long the last inspection took to come (ms): the page asks again no sooner.
    this.inspectionMs = 0;
    // The last event in the list, and whether it was the session's last when the list was read.
    this.cursor = 0;
    this.listAtEnd = false;
    this.loadingEvents = null;
    this.inspection = null;
    // What the tree says of causes and requests, from the inspection: by eventId.
    this.briefs = new Map();
    this.requests = new Map();
    // What the person opened of the tree and of the unresolved list: kept across redraws.
    this.shown = { steps: new Map(), attempts: new Set(), unresolved: false };
    this.treeView = null;
    this.selected = null;
    this.timer = null;
    this.stopped = false;
    // True while the session has no events: the page waits for them.
    this.waiting = false;
    this.header = el("section", { className: "session-head" });
    this.notIntact = el("section", { className: "not-intact-box", testId: "not-intact" });
    this.notIntact.hidden = true;
    this.paused = el("section", { className: "paused-box", testId: "paused" });
    this.unresolved = el("section", { className: "unresolved-box", testId: "unresolved" });
    this.openRuns = el("section", { className: "open-runs-box", testId: "open-runs" });
    this.openRuns.hidden = true;
    this.tree = el(
      "section",
      { className: "tree", testId: "runs" },
      el("p", { className: "muted", text: "Inspecting the session…" }),
    );
    this.eventList = new EventList((eventId) => this.select(eventId));
    this.moreEvents = el("div", { className: "more-events", testId: "more-events" });
    this.detail = el("section", { className: "detail", testId: "event-detail" });
    main.replaceChildren(
      el("p", {}, el("a", { href: "#/", text: "← sessions" })),
      this.header,
      this.notIntact,
      this.paused,
      this.unresolved,
      this.openRuns,
      el("h2", { text: "Runs, steps and causes" }),
      this.tree,
      el(
        "div",
        { className: "split" },
        el(
          "div",
          { className: "events-pane" },
          el("h2", { text: "Events" }),
          this.eventList.table,
          this.moreEvents,
        ),
        el("div", { className: "detail-pane" }, el("h2", { text: "Event" }), this.detail),
      ),
    );
    this.detail.append(el("p", { className: "muted", text: "Select an event or an attempt." }));
  }

  async start() {
    const config = await api("/api/config").catch(() => ({ pollMs: 1000 }));
    this.pollMs = config.pollMs || 1000;
    const found = await this.firstLoad();
    if (this.stopped) return;
    // A session not written yet (`serve --session` before the agent starts) has no events: the
    // page says it waits for them and polls until they come. It threw "unknown session" once
    // and never asked again.
    if (!found) this.showWaiting();
    this.live.hidden = false;
    const tick = async () => {
      if (this.stopped) return;
      try {
        await this.poll();
        this.live.classList.remove("stale");
      } catch {
        this.live.classList.add("stale");
      }
      if (!this.stopped) this.timer = setTimeout(tick, Math.max(this.pollMs, this.inspectionMs));
    };
    this.timer = setTimeout(tick, Math.max(this.pollMs, this.inspectionMs));
  }

  stop() {
    this.stopped = true;
    clearTimeout(this.timer);
    this.live.hidden = true;
  }

  /**
   * The session's first events and its inspection, both at once: the first events show while a
   * long session is inspected. False while the session has no events (the API's not-found).
   */
  async firstLoad() {
    try {
      await Promise.all([this.loadEvents(FIRST_EVENTS), this.refresh()]);
      if (this.waiting) {
        this.waiting = false;
        this.renderMoreEvents();
      }
      // The event a link names, once: a failed fetch says so in the detail pane.
      if (this.linkedEventId !== undefined && !this.stopped) {
        const eventId = this.linkedEventId;
        this.linkedEventId = undefined;
        this.select(eventId);
      }
      return true;
    } catch (error) {
      if (error.code === "not-found") return false;
      throw error;
    }
  }

  // In place of the header and the tree until the session has an event.
  showWaiting() {
    this.waiting = true;
    this.renderMoreEvents();
    this.header.replaceChildren(
      el("h1", {}, sentence`Session ${this.sessionId}`),
      el(
        "p",
        { className: "muted", testId: "waiting-for-events" },
        "No events yet: waiting for its first events, asked for every poll interval (a misspelt session id waits too: the sessions list has the ones the store holds).",
      ),
    );
    this.tree.replaceChildren(el("p", { className: "muted", text: "No runs yet." }));
  }

  async poll() {
    // Until the session has an event: asked for again, the page showing it once it comes.
    if (this.inspection === null || this.eventList.events.length === 0) {
      await this.firstLoad();
      return;
    }
    // New events join the list while it holds the last one (and is not long already).
    if (this.listAtEnd && this.eventList.events.length < LIVE_ROWS)
      await this.loadEvents(FIRST_EVENTS);
    await this.refresh();
  }

  /**
   * Adds up to `count` events after the list's last to it, by commit cursor (every event once,
   * in commit order), as stored: long content stays a blob reference until its event is
   * selected (a long conversation resolved is gigabytes: each model request holds all of it).
   * One load at a time; answers how many were added.
   */
  async loadEvents(count) {
    if (this.loadingEvents) return this.loadingEvents.then(() => 0);
    const load = async () => {
      let added = 0;
      while (added < count) {
        const limit = Math.min(NEXT_EVENTS, count - added);
        const path = `/api/session/events?id=${encodeURIComponent(this.sessionId)}&after=${this.cursor}&limit=${limit}&raw=1`;
        const page = await api(path);
        if (this.stopped) return added;
        for (const event of page.events) {
          if (event.commitCursor <= this.cursor) continue;
          this.cursor = event.commitCursor;
          this.eventList.add(event);
          added++;
        }
        // A page stops short of its limit at the end of the session, or past a byte bound.
        this.listAtEnd = page.events.length < limit && !page.truncated;
        if (this.listAtEnd || page.events.length === 0) break;
      }
      return added;
    };
    this.loadingEvents = load();
    try {
      return await this.loadingEvents;
    } finally {
      this.loadingEvents = null;
      this.renderMoreEvents();
    }
  }

  // The inspection, made again when the session grew since the one shown (the server answers
  // `unchanged` otherwise). A failed one is asked for again on the next poll.
  async refresh() {
    const started = performance.now();
    const since = this.inspection ? `&after=${this.inspection.lastCursor}` : "";
    // By query, not path: a browser folds a session id "." or ".." out of a URL path.
    let answer;
    try {
      answer = await api(`/api/session?id=${encodeURIComponent(this.sessionId)}${since}`);
    } finally {
      if (!answer?.unchanged) this.inspectionMs = performance.now() - started;
    }
    if (answer.unchanged || this.stopped) return;
    this.inspection = answer;
    this.render();
  }

  render() {
    const inspection = this.inspection;
    const runs = flattenRuns(inspection.runs);
    this.briefs = new Map(Object.entries(inspection.causes || {}));
    this.requests = new Map();
    for (const { run } of runs)
      for (const step of run.steps)
        for (const attempt of step.attempts) this.requests.set(attempt.requestEventId, attempt);
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
    const t0 = inspection.firstAt ? Date.parse(inspection.firstAt) : 0;
    const t1 = Math.max(inspection.lastAt ? Date.parse(inspection.lastAt) : 0, t0 + 1);

    // Said politely when it changed: a screen reader reads it when idle, the focus stays put.
    const said = `${inspection.eventCount} events, ${runs.length} run${runs.length === 1 ? "" : "s"}, ${unresolved.length} unresolved`;
    if (this.announce && this.announce.textContent !== said) this.announce.textContent = said;

    const counts = { running: 0, paused: 0, completed: 0, failed: 0, cancelled: 0 };
    for (const { run } of runs) counts[shownStatus(run, pausedRunOf)]++;
    this.header.replaceChildren(
      el("h1", {}, sentence`Session ${inspection.sessionId}`),
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
        inspection.usage
          ? el("span", { className: "tokens", text: ` · ${tokens(inspection.usage)}` })
          : null,
      ),
    );
    // First: a run with events missing shows what was not recorded (a completed payment as
    // unresolved), as `inspect` warns before anything it prints of the run.
    const notIntact = inspection.notIntact || [];
    renderNotIntact(this.notIntact, notIntact);
    renderPaused(this.paused, pauses, inspection.pausedHeading, waiting);
    // A lost blob does not hide the session: its marker stands where its content was.
    const missing = inspection.missingBlobs || [];
    if (missing.length > 0)
      this.header.append(
        el(
          "p",
          { className: "bad", testId: "missing-blobs" },
          `⚠ ${missing.length} blob(s) named by events are not in the store, shown as their references: `,
          ...missing.flatMap((ref, index) => [index > 0 ? ", " : "", value(ref)]),
        ),
      );
    renderOpenRuns(this.openRuns, inspection.openRuns || [], inspection.openRunsHeading);
    renderUnresolved(this.unresolved, unresolved, (eventId) => this.select(eventId), {
      all: this.shown.unresolved,
      showAll: () => {
        this.shown.unresolved = true;
        this.render();
      },
    });
    this.treeView = {
      t0,
      t1,
      unresolvedIds: new Set(unresolved.map(({ attempt }) => attemptKey(attempt))),
      waitingIds: new Set(waiting.map(({ attempt }) => attemptKey(attempt))),
      pausedRunOf,
      pauseText: new Map(pauses.map((paused) => [paused.runId, paused.text])),
      notIntact: new Map(notIntact.map((gap) => [gap.runId, gap])),
      causeText: (eventId) => this.causeText(eventId),
      select: (eventId) => this.select(eventId),
      shown: this.shown,
      redraw: () => this.renderTree(),
    };
    this.renderTree();
    this.renderMoreEvents();
  }

  renderTree() {
    // Gathered one at a time: spread as the arguments of one call, the 130,000 rows of a chain
    // of 65,000 child runs overflowed the call stack.
    const rows = document.createDocumentFragment();
    for (const row of treeRows(this.inspection, this.treeView)) rows.append(row);
    this.tree.replaceChildren(rows);
  }

  // Under the list: how many of the session's events it holds, and the control for the next.
  renderMoreEvents() {
    if (this.waiting) return this.moreEvents.replaceChildren();
    const shown = this.eventList.events.length;
    const total = this.inspection?.eventCount;
    const behind = this.inspection ? this.cursor < this.inspection.lastCursor : !this.listAtEnd;
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
      next.disabled = this.loadingEvents !== null;
      next.addEventListener("click", async () => {
        next.disabled = true;
        try {
          await this.loadEvents(NEXT_EVENTS);
        } catch (error) {
          // Said where the person clicked; the control stays, to try again.
          this.moreEvents.append(
            el("p", { className: "bad", text: `Could not fetch more events: ${error.message}` }),
          );
          next.disabled = false;
        }
      });
      parts.push(next);
    }
    this.moreEvents.replaceChildren(...parts);
    if (this.selected) this.eventList.highlight(this.selected);
  }

  // The words for a cause: from the event when the list holds it, else from what the
  // inspection says of it (the cause of a run or a request, or a request itself).
  causeText(eventId) {
    const listed = this.eventList.byId.get(eventId);
    const request = this.requests.get(eventId);
    const brief = listed
      ? briefOf(listed)
      : (this.briefs.get(eventId) ??
        (request?.requestCursor === undefined
          ? undefined
          : {
              type: `${request.kind}.requested`,
              name: request.kind === "tool" ? request.name : undefined,
              commitCursor: request.requestCursor,
              runId: request.runId,
              seq: request.requestSeq,
            }));
    return brief ? causeWords(brief) : sentence`caused by ${eventId}`;
  }

  /** The event with its content put back: by its cursor when known, else by its id. */
  async fetchEvent(eventId) {
    const cursor =
      this.eventList.byId.get(eventId)?.commitCursor ??
      this.requests.get(eventId)?.requestCursor ??
      this.briefs.get(eventId)?.commitCursor;
    const session = encodeURIComponent(this.sessionId);
    if (cursor !== undefined) {
      const page = await api(`/api/session/events?id=${session}&after=${cursor - 1}&limit=1`);
      if (page.events[0]?.eventId === eventId) return page.events[0];
    }
    return (await api(`/api/session/event?id=${session}&eventId=${encodeURIComponent(eventId)}`))
      .event;
  }

  async select(eventId) {
    this.selected = eventId;
    this.eventList.highlight(eventId);
    // The page's address names the event, to send to a colleague: replaced, not pushed, so the
    // page is not drawn again (no hashchange) and Back leaves the session, as before.
    history.replaceState(
      history.state,
      "",
      `#/session/${encodeURIComponent(this.sessionId)}/event/${encodeURIComponent(eventId)}`,
    );
    // The list holds events as stored; the pane shows this one with its content put back.
    const listed = this.eventList.byId.get(eventId);
    let event = listed;
    let notice = null;
    try {
      event = await this.fetchEvent(eventId);
    } catch (error) {
      if (this.selected !== eventId) return;
      if (!listed)
        return this.detail.replaceChildren(
          el("p", { className: "bad", text: `Could not fetch event ${eventId}: ${error.message}` }),
        );
      notice = el("p", {
        className: "bad",
        text: `Shown as stored (blob references kept): ${error.message}`,
      });
    }
    if (this.selected !== eventId) return; // another event was selected meanwhile
    const shown = showEvent(this.detail, event, notice, {
      causeText: (id) => this.causeText(id),
      select: (id) => this.select(id),
    });
    // In a long session the pane is screens below the unresolved box and the tree: it is
    // brought into view when its top is out of sight (the focus stays where it was).
    const top = this.detail.getBoundingClientRect().top;
    if (top < 0 || top > window.innerHeight - 48) this.detail.scrollIntoView({ block: "start" });
    await shown;
  }
}
