// agent-ledger viewer. Read-only, no dependencies, no build step.
// Every value from the ledger is put into the page with textContent (never innerHTML): a
// payload holding <script> or HTML is shown as text and never runs or renders as markup.

const token = new URLSearchParams(location.search).get("token");
const main = document.getElementById("main");
const live = document.getElementById("live");
let pollMs = 1000;
let view = { stop() {} };

function el(tag, options = {}, ...children) {
  const node = document.createElement(tag);
  if (options.className) node.className = options.className;
  if (options.text !== undefined) node.textContent = String(options.text);
  if (options.title) node.title = String(options.title);
  if (options.href) node.href = options.href;
  if (options.testId) node.dataset.testid = options.testId;
  for (const child of children) if (child) node.append(child);
  return node;
}

async function api(path) {
  const headers = token ? { "X-Agent-Ledger-Token": token } : {};
  const response = await fetch(path, { headers, cache: "no-store" });
  const body = await response.json();
  if (!response.ok) throw new Error(body.error || `HTTP ${response.status}`);
  return body;
}

function duration(ms) {
  if (ms === undefined || ms === null || !Number.isFinite(ms)) return "";
  if (ms < 1000) return `${Math.max(0, Math.round(ms))} ms`;
  if (ms < 60000) return `${(ms / 1000).toFixed(1)} s`;
  const seconds = Math.round(ms / 1000);
  return `${Math.floor(seconds / 60)} m ${String(seconds % 60).padStart(2, "0")} s`;
}

function preview(value, max = 80) {
  if (value === undefined || value === null) return "";
  // Long content as the list holds it (stored): a blob reference, read when selected.
  if (typeof value === "object" && typeof value.$ledger === "string" && "ref" in value)
    return `[${value.$ledger} in the blob store: select the event]`;
  const text = (typeof value === "string" ? value : JSON.stringify(value)).replace(/\s+/g, " ");
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

// A fork copies attemptIds into another run: an attempt is named by its run and its id.
function attemptKey(attempt) {
  return `${attempt.runId}\n${attempt.attemptId}`;
}

// Why a run stopped, in a line (render-inspection's resultText).
function runResultText(result) {
  if (typeof result !== "object" || result === null) return result;
  if (typeof result.error === "object" && result.error !== null)
    return `${result.error.name ?? "Error"}: ${result.error.message ?? ""}`;
  if (typeof result.reason === "string") return result.reason;
  return result;
}

// What a call that did not complete left: its error's message, or the outcome itself.
function outcomeText(outcome) {
  return typeof outcome === "object" && outcome !== null && "message" in outcome
    ? outcome.message
    : outcome;
}

// A failure reason beside a run or an attempt, cut to a line; all of it on hover.
function reasonSpan(value) {
  const text = preview(value, 100);
  return text
    ? el("span", { className: "reason", text: ` ${text}`, title: preview(value, 2000) })
    : null;
}

// Laying out megabytes of text holds the tab for seconds (30 MB: 15 s): a huge payload shows
// its start, and all of it when asked.
const SHOWN_CHARS = 256 * 1024;

function longText(className, text) {
  if (text.length <= SHOWN_CHARS) return el("pre", { className, text });
  const pre = el("pre", { className, text: text.slice(0, SHOWN_CHARS) });
  const showAll = el("button", {
    text: `show all ${text.length.toLocaleString("en-US")} characters`,
  });
  showAll.addEventListener("click", () => {
    pre.textContent = text;
    note.remove();
  });
  const note = el(
    "p",
    { className: "muted" },
    document.createTextNode(`The first ${SHOWN_CHARS.toLocaleString("en-US")} characters. `),
    showAll,
  );
  return el("div", {}, note, pre);
}

// What the person checks before deciding, as inspect prints it: whether the call writes, and
// what it was asked to do.
function attemptFacts(attempt) {
  const effect = attempt.effect;
  const facts =
    typeof effect === "object" && effect !== null
      ? [
          `effect: ${effect.kind ?? "unknown"}, ${effect.idempotent === true ? "idempotent" : "not idempotent"}`,
        ]
      : [];
  facts.push(`request: ${preview(attempt.request, 100)}`);
  return facts.join(" · ");
}

function nextStepText(attempt, step) {
  if (step.action === "check-by-hand")
    return `Run ${attempt.runId} is ${step.runStatus}: it takes no more events and will not be resumed; check the effect by hand.`;
  if (step.action === "decide-inner-first")
    return "This agent call waits on a call in flight inside its child run: decide that call first.";
  if (step.action === "awaiting-decision")
    return `Nothing to resolve: run ${step.runId} is paused at an approval that this call waits on; decide it in the app that runs the agent.`;
  return "The next resume makes this call again by itself: nothing to decide.";
}

function sessionHref(sessionId) {
  return `#/session/${encodeURIComponent(sessionId)}`;
}

// ---------------------------------------------------------------- sessions list

function sessionRow(session) {
  return el(
    "tr",
    {},
    el(
      "td",
      {},
      el("a", {
        text: session.sessionId,
        href: sessionHref(session.sessionId),
        className: "session-link",
      }),
    ),
    el("td", { text: session.eventCount, className: "num" }),
    el("td", { text: session.createdAt }),
    el("td", { text: session.updatedAt }),
  );
}

// The list comes a page at a time (by session id); "more sessions" fetches the next one.
async function showSessions(isCurrent) {
  const first = await api("/api/sessions");
  if (!isCurrent()) return;
  const table = el("table", { className: "grid", testId: "sessions" });
  table.append(
    el(
      "thead",
      {},
      el(
        "tr",
        {},
        el("th", { text: "session" }),
        el("th", { text: "events" }),
        el("th", { text: "created" }),
        el("th", { text: "updated" }),
      ),
    ),
  );
  const body = el("tbody");
  for (const session of first.sessions) body.append(sessionRow(session));
  table.append(body);
  const more = el("button", { text: "more sessions", testId: "more-sessions" });
  let next = first.nextCursor;
  more.hidden = next === undefined;
  const failure = el("p", { className: "bad", testId: "more-sessions-error" });
  more.addEventListener("click", async () => {
    more.disabled = true;
    try {
      const page = await api(`/api/sessions?after=${encodeURIComponent(next)}`);
      for (const session of page.sessions) body.append(sessionRow(session));
      next = page.nextCursor;
      more.hidden = next === undefined;
      failure.remove();
    } catch (error) {
      // Said where the person clicked; the button stays, to try again.
      failure.textContent = `Could not fetch more sessions: ${error.message}`;
      more.after(failure);
    } finally {
      more.disabled = false;
    }
  });
  main.replaceChildren(
    el("h1", { text: "Sessions" }),
    first.sessions.length === 0
      ? el("p", { className: "muted", text: "No sessions in this store." })
      : table,
    more,
  );
}

// ---------------------------------------------------------------- one session

function flattenRuns(runs, depth = 0, out = []) {
  for (const run of runs) {
    out.push({ run, depth });
    flattenRuns(run.children, depth + 1, out);
  }
  return out;
}

class SessionView {
  constructor(sessionId) {
    this.sessionId = sessionId;
    this.events = [];
    this.byId = new Map();
    this.cursor = 0;
    this.inspection = null;
    this.inspectionBehind = false;
    this.selected = null;
    this.timer = null;
    this.stopped = false;
    this.header = el("section", { className: "session-head" });
    this.unresolved = el("section", { className: "unresolved-box", testId: "unresolved" });
    this.tree = el("section", { className: "tree", testId: "runs" });
    this.eventsBody = el("tbody");
    this.detail = el("section", { className: "detail", testId: "event-detail" });
    const eventsTable = el(
      "table",
      { className: "grid events", testId: "events" },
      el(
        "thead",
        {},
        el(
          "tr",
          {},
          el("th", { text: "#" }),
          el("th", { text: "time" }),
          el("th", { text: "run:seq" }),
          el("th", { text: "type" }),
          el("th", { text: "summary" }),
        ),
      ),
      this.eventsBody,
    );
    main.replaceChildren(
      el("p", {}, el("a", { href: "#/", text: "← sessions" })),
      this.header,
      this.unresolved,
      el("h2", { text: "Runs, steps and causes" }),
      this.tree,
      el(
        "div",
        { className: "split" },
        el("div", { className: "events-pane" }, el("h2", { text: "Events" }), eventsTable),
        el("div", { className: "detail-pane" }, el("h2", { text: "Event" }), this.detail),
      ),
    );
    this.detail.append(el("p", { className: "muted", text: "Select an event or an attempt." }));
  }

  async start() {
    const config = await api("/api/config").catch(() => ({ pollMs: 1000 }));
    pollMs = config.pollMs || 1000;
    await this.poll(true);
    if (this.stopped) return;
    live.hidden = false;
    const tick = async () => {
      if (this.stopped) return;
      try {
        await this.poll(false);
        live.classList.remove("stale");
      } catch {
        live.classList.add("stale");
      }
      if (!this.stopped) this.timer = setTimeout(tick, pollMs);
    };
    this.timer = setTimeout(tick, pollMs);
  }

  stop() {
    this.stopped = true;
    clearTimeout(this.timer);
    live.hidden = true;
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
        this.events.push(event);
        this.byId.set(event.eventId, event);
        this.eventsBody.append(this.eventRow(event));
        fresh++;
      }
      if (page.events.length < 500) break;
    }
    if (first && this.events.length === 0) throw new Error(`unknown session ${this.sessionId}`);
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

  eventRow(event) {
    const payload = event.payload && typeof event.payload === "object" ? event.payload : {};
    const summary =
      payload.name ||
      (event.type === "input.received" ? preview(payload.input) : "") ||
      payload.error?.message ||
      payload.reason ||
      "";
    const row = el(
      "tr",
      { className: `event-row type-${event.type.replace(/\./g, "-")}` },
      el("td", { text: event.commitCursor, className: "num" }),
      el("td", { text: event.recordedAt.slice(11, 23) }),
      el("td", { text: `${event.runId.slice(0, 14)}:${event.seq}`, title: event.runId }),
      el("td", { text: event.type }),
      el("td", { text: preview(summary, 60) }),
    );
    row.dataset.eventId = event.eventId;
    row.addEventListener("click", () => this.select(event.eventId));
    return row;
  }

  causeText(eventId) {
    const cause = this.byId.get(eventId);
    if (!cause) return `caused by ${eventId}`;
    const name = cause.payload && typeof cause.payload === "object" && cause.payload.name;
    return `caused by ${cause.type}${name ? ` ${name}` : ""} (#${cause.commitCursor}, ${cause.runId.slice(0, 14)}:${cause.seq})`;
  }

  render() {
    const inspection = this.inspection;
    const runs = flattenRuns(inspection.runs);
    const unresolvedIds = new Set(inspection.unresolved.map(attemptKey));
    const first = this.events[0];
    const last = this.events[this.events.length - 1];
    const t0 = first ? Date.parse(first.recordedAt) : 0;
    const t1 = Math.max(last ? Date.parse(last.recordedAt) : 0, t0 + 1);
    const span = t1 - t0;

    const counts = { running: 0, completed: 0, failed: 0, cancelled: 0 };
    for (const { run } of runs) counts[run.status]++;
    this.header.replaceChildren(
      el("h1", { text: `Session ${inspection.sessionId}` }),
      el(
        "p",
        { className: "muted" },
        document.createTextNode(
          `${inspection.eventCount} events · ${runs.length} runs (${counts.completed} completed, ${counts.running} running, ${counts.failed} failed, ${counts.cancelled} cancelled) · ${duration(span)} · `,
        ),
        el("span", {
          text: `${inspection.unresolved.length} unresolved`,
          className: inspection.unresolved.length ? "bad" : "",
        }),
      ),
    );
    // A run paused at an approval is decided in the app, as inspect says (paused-runs.ts).
    for (const paused of inspection.paused || [])
      this.header.append(
        el("p", {
          className: "bad",
          testId: "paused-run",
          text: `⏸ Run ${paused.runId} is ${paused.text}.`,
        }),
      );
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

    if (inspection.unresolved.length === 0) {
      this.unresolved.hidden = true;
    } else {
      this.unresolved.hidden = false;
      const list = el("ul");
      // The server decides each next step as `agent-ledger inspect` does (next-steps.ts).
      inspection.unresolved.forEach((attempt, index) => {
        const step = inspection.nextSteps[index];
        const next =
          step.action === "resolve"
            ? el("code", { text: step.command })
            : el("span", { className: "muted", text: nextStepText(attempt, step) });
        const item = el(
          "li",
          {},
          el("strong", { text: `${attempt.kind} ${attempt.name || ""}` }),
          document.createTextNode(
            ` requested ${attempt.requestedAt} on run ${attempt.runId} (seq ${attempt.requestSeq}), no outcome recorded. `,
          ),
          next,
          // As inspect says it: the command shows the store URL's password as ***.
          step.passwordLeftOut
            ? el("div", {
                className: "muted",
                testId: "password-left-out",
                text: "The store URL's password is left out, shown as ***: put it back, or set AGENT_LEDGER_STORE to the URL and drop --store.",
              })
            : null,
          el("div", { className: "muted", text: attemptFacts(attempt) }),
        );
        item.addEventListener("click", () => this.select(attempt.requestEventId));
        list.append(item);
      });
      this.unresolved.replaceChildren(
        el("h2", {
          text: `⚠ ${inspection.unresolved.length} unresolved attempt(s): in flight, or lost in a crash`,
        }),
        list,
      );
    }

    const bar = (start, end, className) => {
      const track = el("div", { className: "track" });
      const fill = el("div", { className: `bar ${className}` });
      const from = (Date.parse(start) - t0) / span;
      const to = ((end ? Date.parse(end) : t1) - t0) / span;
      fill.style.left = `${(Math.max(0, from) * 100).toFixed(2)}%`;
      fill.style.width = `${Math.max(0.4, (to - from) * 100).toFixed(2)}%`;
      track.append(fill);
      return track;
    };

    const rows = [];
    const renderRun = (run, depth) => {
      rows.push(
        el(
          "div",
          { className: `row run-row status-${run.status}`, testId: "run-row" },
          el(
            "div",
            { className: "label" },
            el("span", { className: "indent", text: "  ".repeat(depth) + (depth ? "└ " : "") }),
            el("strong", { text: run.actor ? run.actor.id : run.runId }),
            el("span", { className: `badge ${run.status}`, text: run.status }),
            el("span", { className: "muted", text: ` ${duration(run.durationMs)} · ${run.runId}` }),
            run.status !== "running" && run.status !== "completed" && run.result !== undefined
              ? reasonSpan(runResultText(run.result))
              : null,
            run.causedByEventId
              ? el("span", {
                  className: "cause",
                  text: ` ← ${this.causeText(run.causedByEventId)}`,
                })
              : null,
          ),
          bar(run.startedAt, run.endedAt, run.status),
        ),
      );
      // A child run sits under the call that caused it (by cause, as render-inspection.ts
      // places them: a scan of every child for every attempt was quadratic); the others after.
      const byCause = new Map();
      for (const child of run.children) {
        const key = child.causedByEventId;
        if (key === undefined) continue;
        if (!byCause.has(key)) byCause.set(key, []);
        byCause.get(key).push(child);
      }
      const placed = new Set();
      for (const step of run.steps) {
        step.attempts.forEach((attempt, index) => {
          rows.push(this.attemptRow(attempt, index, depth, unresolvedIds, bar));
          for (const child of byCause.get(attempt.requestEventId) ?? []) {
            placed.add(child);
            renderRun(child, depth + 1);
          }
          byCause.delete(attempt.requestEventId);
        });
      }
      for (const child of run.children) if (!placed.has(child)) renderRun(child, depth + 1);
    };
    for (const run of inspection.runs) renderRun(run, 0);
    this.tree.replaceChildren(...rows);
    if (this.selected) this.highlight();
  }

  attemptRow(attempt, index, depth, unresolvedIds, bar) {
    const unresolved = unresolvedIds.has(attemptKey(attempt));
    const status = unresolved
      ? "unresolved"
      : attempt.status === "requested"
        ? "retried"
        : attempt.status;
    const requested = this.byId.get(attempt.requestEventId);
    const label = el(
      "div",
      { className: "label" },
      el("span", {
        className: "indent",
        text: `${"  ".repeat(depth + 1)}${index > 0 ? "↻ " : "· "}`,
      }),
      el("span", {
        text: `${attempt.kind} ${attempt.name || ""}${attempt.toolCallId ? ` [${attempt.toolCallId}]` : ""}`,
      }),
      el("span", { className: `badge ${status}`, text: unresolved ? "UNRESOLVED" : status }),
      el("span", { className: "muted", text: ` ${duration(attempt.durationMs)}` }),
      !unresolved && attempt.status !== "requested" && attempt.status !== "completed"
        ? reasonSpan(outcomeText(attempt.outcome))
        : null,
      requested?.causedByEventId
        ? el("span", {
            className: "cause",
            text: ` ← ${this.causeText(requested.causedByEventId)}`,
          })
        : null,
    );
    const row = el(
      "div",
      {
        className: `row attempt-row status-${status}${unresolved ? " unresolved" : ""}`,
        testId: "attempt-row",
      },
      label,
      bar(attempt.requestedAt, attempt.resolvedAt, status),
    );
    row.dataset.attemptId = attempt.attemptId;
    row.addEventListener("click", () => this.select(attempt.requestEventId));
    return row;
  }

  highlight() {
    for (const row of this.eventsBody.children)
      row.classList.toggle("selected", row.dataset.eventId === this.selected);
  }

  async select(eventId) {
    const listed = this.byId.get(eventId);
    if (!listed) return;
    this.selected = eventId;
    this.highlight();
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
    const parts = [
      notice,
      el("h3", { text: `#${event.commitCursor} ${event.type}` }),
      el("p", {
        className: "muted",
        text: `${event.recordedAt} · run ${event.runId} seq ${event.seq} · ${event.eventId}`,
      }),
    ];
    if (event.causedByEventId) {
      const link = el("a", { href: "#", text: this.causeText(event.causedByEventId) });
      link.addEventListener("click", (clickEvent) => {
        clickEvent.preventDefault();
        this.select(event.causedByEventId);
      });
      parts.push(el("p", {}, link));
    }
    parts.push(
      el("h4", { text: "payload" }),
      longText("payload", JSON.stringify(event.payload, null, 2)),
    );
    const envelope = { ...event };
    delete envelope.payload;
    parts.push(
      el("h4", { text: "envelope" }),
      el("pre", { className: "envelope", text: JSON.stringify(envelope, null, 2) }),
    );
    const blobs = el("div", { className: "blobs" });
    if (event.evidenceRefs && event.evidenceRefs.length > 0)
      parts.push(el("h4", { text: "evidence (blobs)" }), blobs);
    this.detail.replaceChildren(...parts.filter(Boolean));
    for (const ref of event.evidenceRefs || []) {
      const holder = el(
        "div",
        {},
        el("code", { text: ref }),
        el("p", { className: "muted", text: "loading…" }),
      );
      blobs.append(holder);
      try {
        const blob = await api(`/api/blobs/${encodeURIComponent(ref)}`);
        holder.replaceChildren(
          el("code", {
            text: `${ref} · ${blob.size} bytes${blob.truncated ? " (truncated)" : ""}`,
          }),
          el("pre", { className: "blob", text: blob.text }),
        );
      } catch (error) {
        holder.replaceChildren(
          el("code", { text: ref }),
          el("p", { className: "bad", text: String(error.message) }),
        );
      }
    }
  }
}

// ---------------------------------------------------------------- routing

// Each navigation has a number: a page that answers after the person moved on draws nothing.
let navigation = 0;

async function route() {
  const current = ++navigation;
  const isCurrent = () => current === navigation;
  view.stop();
  view = { stop() {} };
  const match = /^#\/session\/(.+)$/.exec(location.hash);
  try {
    if (match) {
      const session = new SessionView(decodeURIComponent(match[1]));
      view = session;
      await session.start();
    } else {
      await showSessions(isCurrent);
    }
  } catch (error) {
    if (!isCurrent()) return;
    main.replaceChildren(
      el("h1", { text: "Error" }),
      el("p", { className: "bad", text: String(error.message) }),
    );
  }
}

async function init() {
  try {
    const config = await api("/api/config");
    document.getElementById("store-info").textContent =
      `${config.store.kind}${config.store.location ? ` · ${config.store.location}` : ""}`;
  } catch {
    // Shown by the route below.
  }
  window.addEventListener("hashchange", route);
  await route();
}

init();
