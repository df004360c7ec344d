// The session's events in commit order, as the page pages them in (every event once, a window
// of them at a time), and the words for a cause (`caused by tool.requested research (#3,
// run-1:2)`).
import { el, selectable, sentence } from "./dom.js";
import { preview } from "./format.js";

// Each type of the envelope's spec (DESIGN.md §3) styles its row by a class of its own; the
// store takes no other type than those and custom ones (`x.` and any text the application
// chose), which get one class for all: their text could add any class to the row.
function typeClass(type) {
  return type.startsWith("x.") ? "type-custom" : `type-${type.replace(".", "-")}`;
}

/** An event as a cause is named: `{ type, name, commitCursor, runId, seq }`. */
export function briefOf(event) {
  const name = event.payload && typeof event.payload === "object" && event.payload.name;
  return {
    type: event.type,
    name: typeof name === "string" ? name : undefined,
    commitCursor: event.commitCursor,
    runId: event.runId,
    seq: event.seq,
  };
}

/** The words for a cause (its brief; nodes, its values isolated). */
export function causeWords(brief) {
  const run = brief.runId.slice(0, 14);
  return brief.name
    ? sentence`caused by ${brief.type} ${brief.name} (#${brief.commitCursor}, ${run}:${brief.seq})`
    : sentence`caused by ${brief.type} (#${brief.commitCursor}, ${run}:${brief.seq})`;
}

export class EventList {
  /** `select(eventId)`: shows an event (a click on its row). */
  constructor(select) {
    this.select = select;
    this.events = [];
    this.byId = new Map();
    this.body = el("tbody");
    this.table = el(
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
      this.body,
    );
  }

  add(event) {
    this.events.push(event);
    this.byId.set(event.eventId, event);
    this.body.append(this.#row(event));
  }

  /** Marks the row of `eventId` as selected. */
  highlight(eventId) {
    for (const row of this.body.children)
      row.classList.toggle("selected", row.dataset.eventId === eventId);
  }

  #row(event) {
    const payload = event.payload && typeof event.payload === "object" ? event.payload : {};
    const summary =
      payload.name ||
      (event.type === "input.received" ? preview(payload.input) : "") ||
      payload.error?.message ||
      payload.reason ||
      "";
    const row = el(
      "tr",
      { className: `event-row ${typeClass(event.type)}` },
      el("td", { text: event.commitCursor, className: "num" }),
      el("td", { text: event.recordedAt.slice(11, 23) }),
      el("td", { title: event.runId }, sentence`${event.runId.slice(0, 14)}:${event.seq}`),
      el("td", { text: event.type }),
      el("td", { text: preview(summary, 60) }),
    );
    row.dataset.eventId = event.eventId;
    const named = preview(summary, 60);
    selectable(
      row,
      `event #${event.commitCursor} ${event.type}${named ? ` ${named}` : ""}, run ${event.runId.slice(0, 14)}:${event.seq}`,
      () => this.select(event.eventId),
    );
    return row;
  }
}
