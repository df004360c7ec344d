// One event in the detail pane: its payload and envelope with long content put back, its cause
// as a link, and the blobs its `evidenceRefs` name, each fetched in turn.
import { api, el, longText, sentence } from "./dom.js";

/**
 * Shows `event` in `pane`, after `notice` (a line saying why it is shown as stored, or null).
 * `causeText(eventId)`: the words for its cause; `select(eventId)`: follows the cause's link.
 */
export async function showEvent(pane, event, notice, { causeText, select }) {
  const parts = [
    notice,
    el("h3", {}, sentence`#${event.commitCursor} ${event.type}`),
    el(
      "p",
      { className: "muted" },
      sentence`${event.recordedAt} · run ${event.runId} seq ${event.seq} · ${event.eventId}`,
    ),
  ];
  if (event.causedByEventId) {
    const link = el("a", { href: "#" }, causeText(event.causedByEventId));
    link.addEventListener("click", (clickEvent) => {
      clickEvent.preventDefault();
      select(event.causedByEventId);
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
  pane.replaceChildren(...parts.filter(Boolean));
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
        el(
          "code",
          {},
          sentence`${ref} · ${blob.size} bytes${blob.truncated ? " (truncated)" : ""}`,
        ),
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
