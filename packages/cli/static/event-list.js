// The session's events in commit order, as the page pages them in (every event once), and the
// words for a cause (`caused by tool.requested research (#3, run-1:2)`).
import { el } from "./dom.js";
import { preview } from "./format.js";

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

  causeText(eventId) {
    const cause = this.byId.get(eventId);
    if (!cause) return `caused by ${eventId}`;
    const name = cause.payload && typeof cause.payload === "object" && cause.payload.name;
    return `caused by ${cause.type}${name ? ` ${name}` : ""} (#${cause.commitCursor}, ${cause.runId.slice(0, 14)}:${cause.seq})`;
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
}
