// One session's page: the decision boxes and the run tree from the latest inspection, and the
// session's events by commit cursor, a window at a time (event-window.js). The inspection is
// made again only when the session grew, no more often than it takes to make.
import {
  renderNotIntact,
  renderOpenRuns,
  renderPaused,
  renderUnresolved,
} from "./decision-boxes.js";
import { api, el, sentence, value } from "./dom.js";
import { showEvent } from "./event-detail.js";
import { briefOf, causeWords } from "./event-list.js";
import { EventWindow, FIRST_EVENTS } from "./event-window.js";
import { attemptKey, counted, duration, tokens } from "./format.js";
import { flattenRuns, pausedAbove, shownStatus, treeRows } from "./run-tree.js";

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
    this.events = new EventWindow(
      sessionId,
      (eventId) => this.select(eventId),
      () => this,
    );
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
          this.events.list.table,
          this.events.more,
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
      await Promise.all([this.events.load(FIRST_EVENTS), this.refresh()]);
      if (this.waiting) {
        this.waiting = false;
        this.events.render();
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
    this.events.render();
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
    if (this.inspection === null || this.events.list.events.length === 0) {
      await this.firstLoad();
      return;
    }
    // New events join the list while it holds the last one (and is not long already).
    if (this.events.followsLive()) await this.events.load(FIRST_EVENTS);
    await this.refresh();
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
    const said = `${counted(inspection.eventCount, "event")}, ${counted(runs.length, "run")}, ${unresolved.length} unresolved`;
    if (this.announce && this.announce.textContent !== said) this.announce.textContent = said;

    const counts = { running: 0, paused: 0, completed: 0, failed: 0, cancelled: 0 };
    for (const { run } of runs) counts[shownStatus(run, pausedRunOf)]++;
    this.header.replaceChildren(
      el("h1", {}, sentence`Session ${inspection.sessionId}`),
      el(
        "p",
        { className: "muted" },
        document.createTextNode(
          `${counted(inspection.eventCount, "event")} · ${counted(runs.length, "run")} (${counts.completed} completed, ${counts.running} running, ${counts.paused} paused, ${counts.failed} failed, ${counts.cancelled} cancelled) · ${duration(t1 - t0)} · `,
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
    this.events.render();
  }

  renderTree() {
    // Gathered one at a time: spread as the arguments of one call, the 130,000 rows of a chain
    // of 65,000 child runs overflowed the call stack.
    const rows = document.createDocumentFragment();
    for (const row of treeRows(this.inspection, this.treeView)) rows.append(row);
    this.tree.replaceChildren(rows);
  }

  // The words for a cause: from the event when the list holds it, else from what the
  // inspection says of it (the cause of a run or a request, or a request itself).
  causeText(eventId) {
    const listed = this.events.list.byId.get(eventId);
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
      this.events.list.byId.get(eventId)?.commitCursor ??
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
    this.events.list.highlight(eventId);
    // The page's address names the event, to send to a colleague: replaced, not pushed, so the
    // page is not drawn again (no hashchange) and Back leaves the session, as before.
    history.replaceState(
      history.state,
      "",
      `#/session/${encodeURIComponent(this.sessionId)}/event/${encodeURIComponent(eventId)}`,
    );
    // The list holds events as stored; the pane shows this one with its content put back.
    const listed = this.events.list.byId.get(eventId);
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
